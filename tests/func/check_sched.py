"""Check --trace-sched's split of wakeup in --trace-records files.

python3 check_sched.py END [--slept] FILE.csv ...

END is where the side's wait ends: EPOLL_RET (netstage's sides) or
POLL_RET (netstage observe). In every record busy, wake_call, runq and
to_user add up to DATA_READY..END; either the reader was running (busy
alone, nothing held its CPU) or it slept (busy 0, woken after its data,
and the task it took the CPU from named). With --slept, some record of
each file slept: a one-request ping-pong's reader waits for each
response, and a record whose wake-up never matched would show none.
"""
import csv
import sys

args = sys.argv[1:]
end = args.pop(0)
want_slept = args and args[0] == "--slept"
if want_slept:
    args.pop(0)
for path in args:
    rows = list(csv.DictReader(open(path)))
    if rows and "busy" not in rows[0]:
        # A tcp_crr server has no wakeup to split (its to_epoll).
        assert "wakeup" not in rows[0], f"{path}: wakeup not split"
        print(f"{path}: no wakeup stage")
        continue
    slept = 0
    for r in rows:
        parts = [int(r[s]) for s in ("busy", "wake_call", "runq", "to_user")]
        assert sum(parts) == int(r[end]) - int(r["DATA_READY"]), r
        if parts[0]:
            assert parts[1:] == [0, 0, 0] and not r["held_comm"], r
        if r["held_comm"]:
            slept += 1
            assert parts[0] == 0, r
            assert int(r["WOKEN"]) >= int(r["DATA_READY"]), r
            assert r["held_pid"].isdigit() and r["held_cpu"].isdigit(), r
    assert slept or not want_slept, f"{path}: no reader slept"
    print(f"{path}: {slept} slept")
