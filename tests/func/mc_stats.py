#!/usr/bin/python3
"""memcached's cmd_get over time, against observe's intervals.

  mc_stats.py sample PORT SECONDS > stats.txt
      asks memcached for its stats over and over on one connection, and
      prints "time rtt cmd_get" a line (time: CLOCK_MONOTONIC, the clock
      of observe's samples.csv, at the middle of the round trip).
  mc_stats.py check stats.txt samples.csv INTERVAL MAX_ERROR
      memcached's gets in each of observe's intervals, interpolated at
      the intervals' ends, and the stats requests of this sampler in
      it (observe counts them too), against observe's count: prints
      each and fails if one differs by more than MAX_ERROR (a fraction).
"""
import bisect
import socket
import sys
import time


def sample(port, seconds):
    s = socket.create_connection(("127.0.0.1", port))
    end = time.monotonic() + seconds
    buf = b""
    while time.monotonic() < end:
        t0 = time.monotonic()
        s.sendall(b"stats\r\n")
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
        t1 = time.monotonic()
        for line in buf.split(b"\r\n"):
            if line.startswith(b"STAT cmd_get "):
                print("%.9f %.9f %s" % ((t0 + t1) / 2, t1 - t0,
                                        line.split()[2].decode()))
        buf = b""


def gets_at(stats, t):
    """cmd_get at time t, between the two samples around it: the last
    answered before t, the first asked after it (a round trip apart)."""
    i = bisect.bisect_left([s[0] for s in stats], t)
    if i == 0 or i == len(stats):
        sys.exit("mc_stats: no sample of memcached around %.3f" % t)
    (ta, _, ga), (tb, _, gb) = stats[i - 1], stats[i]
    return ga + (gb - ga) * (t - ta) / (tb - ta)


def check(stats_file, samples_file, interval, max_err):
    stats = [tuple(float(x) for x in line.split())
             for line in open(stats_file)]
    rows = [line.split(",") for line in open(samples_file)]
    col = rows[0].index("transactions")
    ends = [(float(r[0]), int(r[col])) for r in rows[1:]]
    t, prev = ends[0][0] - interval, 0
    worst = 0
    for end, count in ends:
        mc = gets_at(stats, end) - gets_at(stats, t)
        mc += sum(1 for s in stats if t <= s[0] < end)
        obs = count - prev
        err = abs(obs - mc) / mc if mc else float(obs != 0)
        worst = max(worst, err)
        print("interval ending %.3f: observe %d, memcached %.1f, %+.4f%%" %
              (end, obs, mc, 100 * (obs - mc) / mc if mc else 0))
        t, prev = end, count
    if worst > max_err:
        sys.exit("mc_stats: an interval is %.4f%% off memcached's count" %
                 (100 * worst))


if sys.argv[1] == "sample":
    sample(int(sys.argv[2]), float(sys.argv[3]))
else:
    check(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
