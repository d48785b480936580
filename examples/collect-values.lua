-- collect-values.lua: hand a value from every worker to the main script.
--
-- Shows: collect(v) marks a local for collection; hooks run in the
-- workers and assign it; after run() it is a table with one value per
-- worker (thread), in worker order.
--
--   netstage tcp_stream --local -l 2 -q -T 3 -F 3 \
--       --script examples/collect-values.lua
--
-- Prints each socket as a worker opens it, then the values collected:
--   socket of a worker: 6
--   ...
--   collected: 6 7 8

local fd_of_worker = collect(-1)

local function remember(fd)
  fd_of_worker = fd
  print("socket of a worker: " .. fd)
end

client_socket(remember)
server_socket(remember)

run()

local seen = {}
for i = 1, #fd_of_worker do
  seen[#seen + 1] = tostring(fd_of_worker[i])
end
print("collected: " .. table.concat(seen, " "))
