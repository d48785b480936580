-- check-src-addr.lua: stop if a datagram comes from an unexpected address.
--
-- Shows: a server_recvmsg hook reading with recvfrom() into the buffer of
-- the msghdr it was given, and comparing in_addr values; the socket hook
-- sees the address family. IPv4 only.
--
--   EXPECT_SRC=127.0.0.1 netstage udp_stream -4 \
--       --script examples/check-src-addr.lua
--   netstage udp_stream -4 -c -H 127.0.0.1 -L 127.0.0.2   # is refused
--
-- A datagram from elsewhere prints "Wrong source address! Expected A, but
-- got B" and ends the server with status 1.

local expected = os.getenv("EXPECT_SRC") or "127.0.0.1"

server_socket(function(fd, ai)
  if ai.ai_family ~= AF_INET then
    print("This script works only with IPv4! Please use -4 option.")
    os.exit(1)
  end
end)

server_recvmsg(function(fd, msg, flags)
  local want = in_addr(expected)
  local iov = msg.msg_iov[0]
  local from = sockaddr_in()
  local n, err = recvfrom(fd, iov.iov_base, iov.iov_len, flags, from)

  assert(n, tostring(err))
  if from.sin_addr ~= want then
    print("Wrong source address! Expected " .. tostring(want) ..
          ", but got " .. tostring(from.sin_addr))
    io.stdout:flush()
    os.exit(1)
  end
  return n
end)
