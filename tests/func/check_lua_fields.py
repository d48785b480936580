#!/usr/bin/env python3
"""
check_lua_fields.py OUT JSON: every "F path value" line lua-fields.lua
printed (the script's r = run() and r.peer) against the JSON document
of the same run, at the JSON's precision: the same figure, not a
figure printed and parsed back. Exits 1 naming each that differs, and
each documented field the JSON has that Lua did not give.
"""
import json
import sys

out, doc = sys.argv[1], json.load(open(sys.argv[2]))
lua = {}
for line in open(out):
    if line.startswith("F "):
        path, _, value = line[2:].rstrip("\n").partition(" ")
        lua[path] = value
bad = []


def num(path, want, places):
    """Lua's figure printed as the JSON prints it (places decimals)."""
    if path not in lua:
        bad.append(f"{path}: missing in Lua (JSON {want})")
        return
    got = float(lua[path])
    if places is None:
        ok = got == float(want)
    else:
        ok = f"{got:.{places}f}" == f"{float(want):.{places}f}"
    if not ok:
        bad.append(f"{path}: Lua {lua[path]}, JSON {want}")


def text(path, want):
    if lua.get(path) != str(want):
        bad.append(f"{path}: Lua {lua.get(path)}, JSON {want}")


def hist(path, h):
    num(path + ".count", h["count"], None)
    for k in ("mean_us", "p50_us", "p90_us", "p99_us", "p99.9_us", "max_us"):
        num(f"{path}.{k}", h[k], 3)
    for i, (lo, hi, n) in enumerate(h["buckets"], 1):
        got = lua.get(f"{path}.buckets.{i}", "").split(",")
        if len(got) != 3 or (f"{float(got[0]):.3f}", f"{float(got[1]):.3f}",
                             int(got[2])) != (f"{lo:.3f}", f"{hi:.3f}", n):
            bad.append(f"{path}.buckets.{i}: Lua {got}, JSON {[lo, hi, n]}")
    if f"{path}.buckets.{len(h['buckets']) + 1}" in lua:
        bad.append(f"{path}.buckets: Lua has more than the JSON's")


def side(name, d):
    res = d["results"]
    text(f"{name}.role", d["netstage"]["role"])
    text(f"{name}.workload", d["netstage"]["workload"])
    for k, v in res.items():
        if v is None:	# not a number (nan): null in JSON
            if lua.get(f"{name}.results.{k}") not in ("nan", "-nan"):
                bad.append(f"{name}.results.{k}: Lua "
                           f"{lua.get(f'{name}.results.{k}')}, JSON null")
        elif isinstance(v, str):
            text(f"{name}.results.{k}", v)
        else:
            num(f"{name}.results.{k}", v, None)
    # The printed key rounds it to two decimals; the peer's is that key.
    tput = res.get("throughput", res.get("throughput_Mbps"))
    num(f"{name}.throughput", tput, 2)
    num(f"{name}.transactions", res["num_transactions"], None)
    if "latency" in d:
        hist(f"{name}.latency", d["latency"])
    # r.peer has the server's intervals as r has the client's: each the
    # JSON document's, and no more of them.
    ivs = d.get("intervals", [])
    extra = f"{name}.intervals.{len(ivs) + 1}.t_end"
    if extra in lua:
        bad.append(f"{extra}: Lua has more intervals than the JSON")
    for i, iv in enumerate(ivs, 1):
        p = f"{name}.intervals.{i}"
        num(p + ".t_end", iv["end"], 3)
        num(p + ".transactions", iv["transactions"], None)
        num(p + ".bytes", iv["bytes"], None)
        num(p + ".rate", iv["rate"], 2)
        num(p + ".mbps", iv["mbps"], 3)
        for q in ("p50", "p90", "p99"):
            if q + "_us" in iv:
                num(f"{p}.{q}", iv[q + "_us"], 3)
    if "trace_status" in res:
        text(f"{name}.trace.status", res["trace_status"])
    for f in ("transactions", "incomplete", "lost", "retransmits",
              "retransmitted", "records_kept"):
        if "trace_" + f in res:
            num(f"{name}.trace.{f}", res["trace_" + f], None)
    for st, h in d.get("stages", {}).items():
        hist(f"{name}.stages.{st}", h)


side("client", doc["client"])
if "server" in doc:
    side("server", doc["server"])
for b in bad:
    print(b)
print(f"{len(lua)} Lua fields, {len(bad)} differ from the JSON")
sys.exit(1 if bad else 0)
