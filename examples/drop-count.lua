-- drop-count.lua: datagrams received and dropped, per server socket.
--
-- Shows: a struct-free integer option (SO_RXQ_OVFL) set from a socket
-- hook; a server_recvmsg hook calling recvmsg() on its msghdr and reading
-- a control message as uint32; a table collected from every worker.
--
--   netstage udp_stream -T 4 --script examples/drop-count.lua
--   netstage udp_stream -c -F 4 -T 4 -B 64          # from another shell
--
-- After the test the server prints a table: one row per worker with the
-- datagrams it received and the socket's drop counter, and a total row.

local stats = collect({ received = 0, dropped = 0 })

server_socket(function(fd)
  local ok, err = setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, 1)
  assert(ok, tostring(err))
end)

server_recvmsg(function(fd, msg, flags)
  local n, err = recvmsg(fd, msg, flags)
  assert(n, tostring(err))
  stats.received = stats.received + 1
  for _, cmsg in msg:cmsgs() do
    if cmsg.cmsg_level == SOL_SOCKET and cmsg.cmsg_type == SO_RXQ_OVFL then
      -- The kernel's count of drops on this socket so far.
      stats.dropped = uint32_ptr(cmsg.cmsg_data)[0]
    end
  end
  return n
end)

run()

local total = { received = 0, dropped = 0 }
print(string.format("%-10s %12s %12s", "", "received", "dropped"))
for i, s in ipairs(stats) do
  print(string.format("%-10s %12d %12d", "worker " .. i, s.received,
                      s.dropped))
  total.received = total.received + s.received
  total.dropped = total.dropped + s.dropped
end
print(string.format("%-10s %12d %12d", "total", total.received,
                    total.dropped))
