-- raw-framing.lua: a --raw client whose script decides where a response
-- ends, for protocols a fixed size or a terminator cannot frame.
--
-- Shows: a client_recvmsg hook that reads the server's bytes itself,
-- keeps what it has per socket, and tells the data path "response
-- complete" by returning the -R byte count (1 here) once its own rule
-- says the response is whole; until then it reads until EAGAIN and
-- returns -1, so the flow waits for more. The rule below is memcached's
-- text protocol: a get's answer ends with END\r\n, and a VALUE line says
-- how many data bytes follow (so "END\r\n" inside a value is no end).
--
--   memcached -u nobody -p 11211 &
--   printf 'set k 0 0 5\r\nhello\r\n' | socat - TCP:127.0.0.1:11211
--   netstage tcp_rr --raw -H 127.0.0.1 -P 11211 --request-data 'get k\r\n' \
--       -R 1 -l 5 --script examples/raw-framing.lua
--
-- After the test it prints the responses each worker framed and the
-- bytes they held.

local framed = collect({ responses = 0, bytes = 0 })
local pending = {}      -- per socket: bytes of the response so far

-- Where the response that begins `s` ends (an index), or nil if it is
-- not whole yet.
local function response_end(s)
  local pos = 1
  while true do
    if s:sub(pos, pos + 4) == "END\r\n" then
      return pos + 4
    end
    local eol = s:find("\r\n", pos, true)
    if not eol then return nil end
    local n = s:sub(pos, eol - 1):match("^VALUE %S+ %d+ (%d+)")
    if not n then return nil end       -- not a get's answer yet
    pos = eol + 2 + tonumber(n) + 2    -- the data and its \r\n
    if pos > #s + 1 then return nil end
  end
end

client_recvmsg(function(fd, msg, flags)
  local have = pending[fd] or ""
  while true do
    local chunk, err = recv(fd, 65536, MSG_DONTWAIT)
    if not chunk then
      if err.errno ~= EAGAIN then return -1 end
      break
    end
    if #chunk == 0 then return 0 end    -- the server closed
    have = have .. chunk
  end
  local e = response_end(have)
  if not e then
    pending[fd] = have
    return -1                           -- EAGAIN: wait for more
  end
  -- One request in flight: nothing may follow its response.
  assert(e == #have, "bytes after the response")
  pending[fd] = ""
  framed.responses = framed.responses + 1
  framed.bytes = framed.bytes + #have
  return 1                              -- -R 1: the response is whole
end)

local r = run()

local n, b = 0, 0
for i, w in ipairs(framed) do
  print(string.format("worker %d: %d responses, %d bytes", i,
                      w.responses, w.bytes))
  n, b = n + w.responses, b + w.bytes
end
print(string.format("framed %d responses; netstage counted %s",
                    n, r.transactions))
