"""Check a --perfetto trace against the --trace-records it came from.

python3 check_perfetto.py TRACE.json CLIENT.csv [SERVER.csv]

The Trace Event Format (the JSON ui.perfetto.dev and chrome://tracing
load): metadata naming each process (side) and thread (flow track),
complete events ("X") with ts and dur in us. Each record of the CSV is
one "transaction" slice followed by a slice per stage of its side:
the stages tile the transaction exactly, each one's duration is the
record's stage to the ns, its start is the record's boundary on the
shared clock, and on one track no two transactions overlap (so slices
nest as the viewers need). A stage of 0 ns has no slice: a viewer
sorting slices of one start by length would nest it in the next stage.
"""
import csv
import json
import sys

doc = json.load(open(sys.argv[1]))
zero = doc["otherData"]["zero_ns"]
assert doc["otherData"]["clock"] == "CLOCK_MONOTONIC"
ev = doc["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]) for e in ev
           if e["ph"] == "M" and e["name"] == "thread_name"}
assert all(e["ph"] in ("M", "X") for e in ev)


def ns(us):
    return round(us * 1000)


# Records by (side, flow, seq), with the stage columns of each file.
recs, stages = {}, {}
for path in sys.argv[2:]:
    rows = list(csv.DictReader(open(path)))
    cols = list(rows[0].keys())
    side = rows[0]["side"]
    # side, worker, flow_id, seq, the boundaries (upper case), stages.
    first = next(i for i, c in enumerate(cols) if i > 3 and not c.isupper())
    stages[side] = cols[first:cols.index("SW_TX")]
    for r in rows:
        recs[(side, int(r["flow_id"]), int(r["seq"]))] = r
assert sorted(procs.values()) == sorted(stages), (procs, stages)

seen, last_end = 0, {}
x = [e for e in ev if e["ph"] == "X"]
i = 0
while i < len(x):
    t = x[i]
    assert t["name"] == "transaction", t
    side = procs[t["pid"]]
    assert (t["pid"], t["tid"]) in threads, t
    key = (side, t["args"]["flow"], t["args"]["seq"])
    r = recs[key]
    names = [s for s in stages[side] if int(r[s]) != 0]
    parts = x[i + 1:i + 1 + len(names)]
    assert [p["name"] for p in parts] == names, (parts, names)
    at = ns(t["ts"])
    for p, name in zip(parts, names):
        assert (p["pid"], p["tid"]) == (t["pid"], t["tid"])
        assert ns(p["ts"]) == at, (p, at)
        assert ns(p["dur"]) == int(r[name]), (key, name, p, r[name])
        at += ns(p["dur"])
    assert at == ns(t["ts"]) + ns(t["dur"]), (key, at, t)
    # A client's transaction starts at APP_SEND, tcp_crr's at CONNECT.
    first = r["CONNECT"] or r["APP_SEND"] if side == "client" else None
    if first:
        assert zero + ns(t["ts"]) == int(first), (key, t)
    track = (t["pid"], t["tid"])
    assert ns(t["ts"]) >= last_end.get(track, 0), ("overlap", key)
    last_end[track] = ns(t["ts"]) + ns(t["dur"])
    seen += 1
    i += 1 + len(names)
assert seen == len(recs), (seen, len(recs))
print("perfetto: %d transactions on %d tracks" % (seen, len(last_end)))
