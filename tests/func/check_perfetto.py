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
Which records are in it is checked against --perfetto-every's rule.
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

seen, last_end, written = 0, {}, set()
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
    # A client's transaction starts at APP_SEND, tcp_crr's at CONNECT,
    # an open-loop one's (--rate) when it was due.
    first = (r.get("INTENDED") or r["CONNECT"] or r["APP_SEND"]
             if side == "client" else None)
    if first:
        assert zero + ns(t["ts"]) == int(first), (key, t)
    track = (t["pid"], t["tid"])
    assert ns(t["ts"]) >= last_end.get(track, 0), ("overlap", key)
    last_end[track] = ns(t["ts"]) + ns(t["dur"])
    seen += 1
    written.add(key)
    i += 1 + len(names)

# What the file holds of the records (--perfetto-every): all with 1;
# else each side's above its p99 and its slowest kept, every N-th of
# each flow by number (a tcp_crr server's connections one flow), and
# the server's half of every client transaction written.
every = doc["otherData"]["every"]
assert doc["otherData"]["written"] == seen, (doc["otherData"], seen)
assert doc["otherData"]["kept"] == len(recs), (doc["otherData"], len(recs))
if every == 1:
    assert seen == len(recs), (seen, len(recs))
for side in stages:
    mine = {k: r for k, r in recs.items() if k[0] == side}
    span = {k: sum(int(r[s] or 0) for s in stages[side]) for k, r in mine.items()}
    order = sorted(span.values())
    p99 = order[-(-len(order) * 99 // 100) - 1]
    for k, r in mine.items():
        if span[k] > p99 or r["kept"] == "slowest":
            assert k in written, ("tail", k, span[k], p99)
    crr_server = side == "server" and any(
        r.get("ACCEPT_RET") for r in mine.values())
    flows = {}
    for k in sorted(mine, key=lambda k: (0 if crr_server else k[1], k[2])):
        flows.setdefault(0 if crr_server else k[1], []).append(k)
    for ks in flows.values():
        for j, k in enumerate(ks):
            if j % every == 0:
                assert k in written, ("every", k, j)
server = {}
for k, r in recs.items():
    if k[0] == "server":
        server.setdefault((r["port"], k[2]), []).append(k)
halves = 0
for k, r in recs.items():
    if doc["otherData"]["halves"] and k[0] == "client" and k in written:
        s = server.get((r["port"], k[2]), [])
        if len(s) == 1:
            assert s[0] in written, ("half", k, s)
            halves += 1
print("perfetto: %d of %d transactions (1 in %d and the tails; %d "
      "servers' halves) on %d tracks" % (seen, len(recs), every, halves,
                                         len(last_end)))
