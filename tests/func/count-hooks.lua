-- Pass-through hooks of every kind that count what they see, for the
-- functional tests: the counts must match netstage's own result keys.
local c = collect({ socket = 0, close = 0, send = 0, recv = 0,
                    bytes_in = 0, bytes_out = 0 })

local function on_socket() c.socket = c.socket + 1 end
local function on_close() c.close = c.close + 1 end

local function pass_recv(fd, msg, flags)
  local n = recvmsg(fd, msg, flags)
  if not n then return -1 end
  c.recv = c.recv + 1
  c.bytes_in = c.bytes_in + n
  return n
end

local function pass_send(fd, msg, flags)
  local n = sendmsg(fd, msg, flags)
  if not n then return -1 end
  c.send = c.send + 1
  c.bytes_out = c.bytes_out + n
  return n
end

client_socket(on_socket)
server_socket(on_socket)
client_close(on_close)
server_close(on_close)
client_recvmsg(pass_recv)
server_recvmsg(pass_recv)
client_sendmsg(pass_send)
server_sendmsg(pass_send)

run()

local sum = {}
for _, w in ipairs(c) do
  for k, v in pairs(w) do sum[k] = (sum[k] or 0) + v end
end
print(string.format("hooks workers=%d socket=%d close=%d send=%d recv=%d " ..
                    "bytes_in=%d bytes_out=%d", #c, sum.socket, sum.close,
                    sum.send, sum.recv, sum.bytes_in, sum.bytes_out))
