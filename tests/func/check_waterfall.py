"""Check --local's waterfall: python3 check_waterfall.py OUT ERR.

OUT holds the key=value results, ERR the tables. The waterfall's table
comes after both sides' stage tables; its top-level rows' means add up
to the latency's mean and the rows nested under `remote` to remote's
(means are sums over the same joined transactions, so exactly, to the
printed precision); the joined and the not joined make up the client's
kept records.
"""
import re
import sys

out, err = sys.argv[1], sys.argv[2]
kv = dict(l.split("=", 1) for l in open(out).read().splitlines() if "=" in l)
lines = open(err).read().splitlines()


def key(name):
    return float(kv["waterfall." + name])


heads = [i for i, l in enumerate(lines)
         if re.match(r"netstage (client|server): stages of", l)]
w = [i for i, l in enumerate(lines) if l.startswith("netstage waterfall:")]
assert len(w) == 1 and len(heads) == 2 and heads[1] < w[0], (heads, w)

# On one host the clocks are one; the fit, when made, is shown as a check.
head = w[0] + 1
if "waterfall.clock_offset_us" in kv:
    assert lines[head].startswith("  clocks: one; "), lines[head]
    head += 1
assert lines[head].lstrip().startswith("stretch"), lines[head]
rows = []
for l in lines[head + 1:]:
    m = re.match(r"^  ( *)(\S.*?)\s+-?\d+\.\d+\s", l)
    if not m or m.group(2).startswith("="):
        break
    rows.append((len(m.group(1)) // 2, m.group(2).replace(" ", "_")))
top = [n for d, n in rows if d == 0]
inner = [n for d, n in rows if d == 1]
assert "remote" in top and inner, rows
assert inner[0] == "wire_to_server" and inner[-1] == "wire_to_client", inner

# The slowest kept apart are no part of the sample the waterfall joins.
kept = (int(kv["client.trace_records_kept"]) -
        int(kv.get("waterfall.slowest_apart", 0)))
joined = int(kv["waterfall.transactions"])
not_joined = sum(int(kv["waterfall." + k])
                 for k in ("unmatched", "ambiguous", "disorder"))
assert int(kv["waterfall.client_transactions"]) == kept, (kept, kv)
assert joined + not_joined == kept, (joined, not_joined, kept)
assert joined * 100 >= kept * 99, (joined, kept)

tol = 0.001 * len(rows)
total = sum(key(n + "_mean_us") for n in top)
assert abs(total - key("latency_mean_us")) <= tol, (total, rows)
split = sum(key(n + "_mean_us") for n in inner)
assert abs(split - key("remote_mean_us")) <= tol, (split, rows)
print("waterfall: %d of %d joined, %d rows" % (joined, kept, len(rows)))
