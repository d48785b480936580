-- bind-to-device.lua: let the server take traffic from one interface only.
--
-- Shows: a server_socket hook configures the server's socket (the
-- listener for TCP, the data socket for UDP) with a string-valued option,
-- SO_BINDTODEVICE. Needs CAP_NET_RAW; without it the hook fails and the
-- server stops with the error and the script line.
--
--   IFNAME=veth0 netstage udp_stream --script examples/bind-to-device.lua
--   (then a client from another namespace, reaching veth0's address)
--
-- Connections arriving on another interface (loopback, say) find nothing
-- listening: a TCP client is refused, a UDP client's sends fail.

local ifname = os.getenv("IFNAME") or "veth0"

server_socket(function(fd)
  local ok, err = setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, #ifname)
  assert(ok, tostring(err))
end)
