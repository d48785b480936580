-- A client whose receive buffer holds less than a response: the server's
-- send() returns while TCP still waits for the window to send it, so
-- responses are held back past their send()'s return (docs/stages.md).
client_socket(function(fd)
  local ok, err = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 4096)
  assert(ok, tostring(err))
end)
