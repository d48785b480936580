-- A pass-through pair of client packet hooks, for bench/script-hooks.sh:
-- each does what the data path would have done without it.
client_recvmsg(function(fd, msg, flags)
  local n, err = recvmsg(fd, msg, flags)
  if not n then return -1 end
  return n
end)

client_sendmsg(function(fd, msg, flags)
  local n, err = sendmsg(fd, msg, flags)
  if not n then return -1 end
  return n
end)
