"""Check a two-hosts waterfall against the truth (issue 42).

python3 check_clocks.py skew OUT CLI.csv SRV.csv OFFSET_NS PPM
    OUT is a client's output whose server skewed its clock by
    NETSTAGE_TEST_CLOCK_SKEW=OFFSET_NS,PPM (results/clock_id.h): the
    fitted offset and drift recover it, the offset within the causal
    bound it states; SRV.csv is written back unskewed as SRV.csv.true
    for a join on one clock, the truth.
python3 check_clocks.py rows A B TOL_US [PREFIX_A PREFIX_B]
    every p50 row both outputs have differs by at most TOL_US.
python3 check_clocks.py asym CLI.csv SRV.csv DELAY_NS
    the records of a request leg made DELAY_NS longer, as a one-way
    delay would make them: every stamp from the server's arrival on
    (the server's all, the client's from its response's arrival) moves
    by DELAY_NS. Written as CLI.csv.asym and SRV.csv.asym.
"""
import csv
import math
import sys


def keys(path):
    kv = dict(l.rstrip("\n").split("=", 1) for l in open(path) if "=" in l)
    return {k: v for k, v in kv.items()}


def rows(path, prefix):
    return {k[len(prefix):]: float(v) for k, v in keys(path).items()
            if k.startswith(prefix) and k.endswith("_p50_us")}


def records(path):
    with open(path) as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def write(path, names, recs):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, names, lineterminator="\n")
        w.writeheader()
        w.writerows(recs)


def stamps(names):
    """The columns that are clock readings: the boundaries, SW_TX, SW_RX."""
    return [n for n in names if n.isupper()]


def llround(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def unskew(t, off, ppm):
    """The t whose skew, t + off + llround(t * ppm * 1e-6), is the stamp."""
    x = round((t - off) / (1 + ppm * 1e-6))
    for d in (0, -1, 1, -2, 2):
        if x + d + off + llround(float(x + d) * ppm * 1e-6) == t:
            return x + d
    raise AssertionError(("no unskewed stamp", t))


def skew(out, cli, srv, off, ppm):
    off, ppm = int(off), float(ppm)
    kv = keys(out)
    assert kv["waterfall.clock_aligned"] == "1", kv.get("waterfall.clock_aligned")
    names, s = records(srv)
    for r in s:
        for k in stamps(names):
            if r.get(k):
                r[k] = str(unskew(int(r[k]), off, ppm))
    write(srv + ".true", names, s)
    # The fit gives the offset at its first exchange's client DEV_XMIT.
    # tcp_crr's ends number apart: a connection is its client port.
    names, c = records(cli)
    name = (lambda r: r["port"]) if "handshake" in names else \
        (lambda r: (r["port"], r["seq"]))
    pairs = {name(r) for r in s if r["NETIF_RX"] and r["DEV_XMIT"]}
    t0 = min(int(r["DEV_XMIT"]) for r in c
             if r["kept"] == "sample" and r["DEV_XMIT"] and r["NETIF_RX"]
             and name(r) in pairs)
    truth_us = (off + t0 * ppm * 1e-6) / 1e3
    got = float(kv["waterfall.clock_offset_us"])
    drift = float(kv["waterfall.clock_drift_ppm"])
    causal = float(kv["waterfall.clock_causal_bound_us"])
    bound = float(kv["waterfall.clock_bound_us"])
    print(f"offset {got:.3f} us, truth {truth_us:.3f} us (error "
          f"{got - truth_us:+.3f}); drift {drift:.3f} ppm, truth {ppm}; "
          f"bound {bound:.3f} us, causal {causal:.3f} us")
    assert abs(got - truth_us) <= causal, (got, truth_us, causal)
    assert abs(drift - ppm) < 1, (drift, ppm)
    assert kv["waterfall.clock_negative_legs"] == "0", kv


def compare(a, b, tol, pa="waterfall.", pb="join_"):
    ra, rb = rows(a, pa), rows(b, pb)
    common = sorted(set(ra) & set(rb))
    assert "wire_to_server_p50_us" in common, (sorted(ra), sorted(rb))
    worst = max(common, key=lambda k: abs(ra[k] - rb[k]))
    print(f"{len(common)} rows; the farthest apart: {worst} "
          f"{ra[worst]:.3f} against {rb[worst]:.3f} us")
    for k in common:
        assert abs(ra[k] - rb[k]) <= float(tol) + 5e-4, (k, ra[k], rb[k])


def asym(cli, srv, delay):
    delay = int(delay)
    names, s = records(srv)
    for r in s:
        for k in stamps(names):
            if r.get(k):
                r[k] = str(int(r[k]) + delay)
    write(srv + ".asym", names, s)
    names, c = records(cli)
    for r in c:
        rx = int(r["NETIF_RX"] or 0)
        for k in stamps(names):
            # After the response's arrival, and the arrival itself.
            if r.get(k) and rx and int(r[k]) >= rx:
                r[k] = str(int(r[k]) + delay)
    write(cli + ".asym", names, c)


if sys.argv[1] == "skew":
    skew(*sys.argv[2:7])
elif sys.argv[1] == "rows":
    compare(*sys.argv[2:])
else:
    asym(*sys.argv[2:5])
