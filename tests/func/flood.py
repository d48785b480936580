#!/usr/bin/python3
"""flood.py PORT RATE SECONDS [SOURCES]: open RATE idle TCP connections
a second to 127.0.0.1:PORT, in bursts every 20 ms, for SECONDS at most
(or until SIGTERM); each burst is held 200 ms, then reset. With
SOURCES, the connections come from that many loopback addresses in
turn (127.0.1.1 on), as from as many hosts. Writes "flooding" to
./flood_started once the first burst is out, and the connections
opened to ./flood_count at the end."""
import signal
import socket
import struct
import sys
import time

port, rate, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
sources = int(sys.argv[4]) if len(sys.argv) > 4 else 0
# A reset, not TIME_WAIT: the ports are ephemeral ones a later test's
# server may want to bind.
LINGER0 = struct.pack("ii", 1, 0)
burst = max(1, rate // 50)
HOLD = 10	# bursts held open at once
bursts, opened, end = [], 0, time.time() + seconds
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
while time.time() < end and not stop:
    t0 = time.time()
    if len(bursts) == HOLD:
        for s in bursts.pop(0):
            s.close()
    held = []
    bursts.append(held)
    for _ in range(burst):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
        s.setblocking(False)
        try:
            if sources:
                n = opened % sources
                s.bind(("127.0.%d.%d" % (1 + n // 250, 1 + n % 250), 0))
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        held.append(s)
        opened += 1
    if len(bursts) == 1:
        open("flood_started", "w").write("flooding\n")
    time.sleep(max(0, 0.02 - (time.time() - t0)))
for held in bursts:
    for s in held:
        s.close()
open("flood_count", "w").write("%d\n" % opened)
