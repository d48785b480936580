-- tcp-ack-interval.lua: how far apart the ACKs of a TCP sender come.
--
-- Shows: SO_TIMESTAMPING with ACK timestamps set from client_socket
-- (bit.bor as LuaJIT scripts write it), a client_recverr hook reading
-- the error queue, iterating control messages with msg:cmsgs() and
-- reading scm_timestamping; a log2 histogram per worker, collected, and
-- table.maxn.
--
--   netstage tcp_stream --local -l 3 -q --script examples/tcp-ack-interval.lua
--
-- Prints, per worker and summed, rows "lo -> hi : count |bar|" of
-- intervals between consecutive ACK timestamps in microseconds.

local hist = collect({})
local last_us = {}

client_socket(function(fd)
  local ok, err = setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING,
                             bit.bor(SOF_TIMESTAMPING_SOFTWARE,
                                     SOF_TIMESTAMPING_TX_ACK,
                                     SOF_TIMESTAMPING_OPT_TSONLY))
  assert(ok, tostring(err))
end)

client_recverr(function(fd, msg, flags)
  local n, err = recvmsg(fd, msg, flags)
  if not n then return -1 end
  for _, cmsg in msg:cmsgs() do
    if cmsg.cmsg_level == SOL_SOCKET and cmsg.cmsg_type == SCM_TIMESTAMPING then
      local ts = scm_timestamping_ptr(cmsg.cmsg_data).ts[0]
      local us = ts.sec * 1000000 + ts.nsec // 1000
      if last_us[fd] then
        local upper = 1
        while us - last_us[fd] >= upper do upper = upper * 2 end
        hist[upper] = (hist[upper] or 0) + 1
      end
      last_us[fd] = us
    end
  end
  return n
end)

run()

local function show(h)
  local max = 0
  for _, v in pairs(h) do max = math.max(max, v) end
  print(string.format("%10s -> %-10s: %-10s %s", ">= us", "< us", "count",
                      "distribution"))
  local lo, hi = 0, 1
  while lo < table.maxn(h) do
    local c = h[hi] or 0
    local bar = max > 0 and string.rep("=", math.ceil(40 * c / max)) or ""
    print(string.format("%10d -> %-10d: %-10d |%-40s|", lo, hi, c, bar))
    lo, hi = hi, hi * 2
  end
  print()
end

local sum = {}
for i, h in ipairs(hist) do
  print("worker " .. i)
  show(h)
  for k, v in pairs(h) do sum[k] = (sum[k] or 0) + v end
end
print("all workers")
show(sum)
