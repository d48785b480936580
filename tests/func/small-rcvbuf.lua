-- A client whose receive buffer holds less than a response: the server's
-- send() returns while TCP still waits for the window to send it, so
-- responses are held back past their send()'s return (docs/stages.md).
-- Prints what a script sees of them at the server (under --local):
-- "held_back COUNT P50 MAX" (us).
client_socket(function(fd)
  local ok, err = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 4096)
  assert(ok, tostring(err))
end)

local h = run().peer.trace.held_back
print(string.format("held_back %d %.3f %.3f", h.count, h:percentile(50),
                    h.max))
