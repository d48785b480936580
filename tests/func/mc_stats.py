#!/usr/bin/python3
"""memcached's cmd_get over time, against observe's intervals.

  mc_stats.py sample PORT SECONDS > stats.txt
      asks memcached for its stats over and over on one connection, and
      prints "time rtt cmd_get" a line (time: CLOCK_MONOTONIC, the clock
      of observe's samples.csv, at the middle of the round trip), until
      SIGTERM (then after the round trip under way: the test stops it
      once observe is done, however late observe began) or SECONDS.
      Each line is written as it is known: the test starts observe
      once the first is there.
  mc_stats.py check stats.txt samples.csv INTERVAL MAX_ERROR
      memcached's gets in each of observe's intervals, bounded by the
      samples around the intervals' ends, and the stats requests of
      this sampler in it (observe counts them too), against observe's
      count: prints each and fails if one is further than MAX_ERROR (a
      fraction) outside the bounds.
"""
import bisect
import signal
import socket
import sys
import time

stopped = False


def stop(signum, frame):
    global stopped
    stopped = True


def sample(port, seconds):
    signal.signal(signal.SIGTERM, stop)
    s = socket.create_connection(("127.0.0.1", port))
    end = time.monotonic() + seconds
    buf = b""
    while time.monotonic() < end and not stopped:
        t0 = time.monotonic()
        s.sendall(b"stats\r\n")
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
        t1 = time.monotonic()
        for line in buf.split(b"\r\n"):
            if line.startswith(b"STAT cmd_get "):
                print("%.9f %.9f %s" % ((t0 + t1) / 2, t1 - t0,
                                        line.split()[2].decode()),
                      flush=True)
        buf = b""


class Gets:
    """memcached's cmd_get around any time t, from the samples."""

    def __init__(self, stats):
        # Answered by t: it was read before t. Asked after t: after.
        self.answered = sorted((t + rtt / 2, g) for t, rtt, g in stats)
        self.asked = sorted((t - rtt / 2, g) for t, rtt, g in stats)
        self.ta = [a[0] for a in self.answered]
        self.tq = [q[0] for q in self.asked]

    def bounds(self, t):
        """cmd_get at t lies in [lo, hi]."""
        i = bisect.bisect_left(self.ta, t)
        j = bisect.bisect_right(self.tq, t)
        if i == 0 or j == len(self.tq):
            sys.exit("mc_stats: no sample of memcached around %.3f (the "
                     "samples answered %.3f to %.3f, %d of them)"
                     % (t, self.ta[0], self.ta[-1], len(self.ta)))
        return self.answered[i - 1][1], self.asked[j][1]


def check(stats_file, samples_file, interval, max_err):
    """Each interval's count must be memcached's within max_err, for
    some count memcached's samples allow: the last read before the
    interval's end and the first asked after it bound cmd_get there."""
    stats = [tuple(float(x) for x in line.split())
             for line in open(stats_file)]
    gets = Gets(stats)
    mids = sorted(s[0] for s in stats)
    rows = [line.split(",") for line in open(samples_file)]
    col = rows[0].index("transactions")
    ends = [(float(r[0]), int(r[col])) for r in rows[1:]]
    t, prev, bad = ends[0][0] - interval, 0, 0
    for end, count in ends:
        (lo0, hi0), (lo1, hi1) = gets.bounds(t), gets.bounds(end)
        # This sampler's stats requests, which observe counts too.
        own = bisect.bisect_left(mids, end) - bisect.bisect_left(mids, t)
        lo, hi = lo1 - hi0 + own, hi1 - lo0 + own
        obs = count - prev
        off = max(lo - obs, obs - hi, 0) / lo if lo else float(obs != 0)
        bad += off > max_err
        print("interval ending %.3f: observe %d, memcached %d to %d, "
              "%.4f%% outside" % (end, obs, lo, hi, 100 * off))
        t, prev = end, count
    if bad:
        sys.exit("mc_stats: %d intervals are more than %g%% off "
                 "memcached's count" % (bad, 100 * max_err))


if sys.argv[1] == "sample":
    sample(int(sys.argv[2]), float(sys.argv[3]))
else:
    check(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
