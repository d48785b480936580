#!/usr/bin/env python3
"""Check --trace-records files of one run against the rules of
docs/stages.md and against each other.

usage: check_trace.py CLIENT_CSV [SERVER_CSV] [--results KEYVALUE_FILE]
                      [--apart]

For every record of a side: its boundaries follow the side's stage chain
in time order (a record merged from the wrong kernel events shows up
here), and its stage columns are those of consecutive boundaries. Per
flow (a udp_rr server's: per flow and client port), the sequence
numbers only grow. With both sides (one host, one clock), the
server's transaction from the request's arrival to its response's hand-off
(NETIF_RX to DEV_XMIT) lies inside the client's `remote` stage of the same
flow and sequence number (udp_rr: client port and sequence number; tcp_crr:
of the same connection, by its client port); its whole span does not (its send_return holds
the client's receive softirq on loopback). Nearly every client record has its
server record: all but 1%, and with --results all but the transactions the
server counted incomplete besides. With --results, the client's records
average to the latency_mean_us (open loop: from the intended send, as
their `queue` stage begins) the worker reported from its own
histogram, when every transaction was traced: the stages add up to the
latency the worker measured, checked against a figure the records did
not make. With --apart (a closed loop, every transaction traced), a
client's request starts after the tracer's work for the one before it:
its APP_SEND comes after the previous one's APP_DONE, where one clock
read would give both (rr.c, next_start()).
"""
import bisect
import csv
import sys

CHAINS = {
    "client": ["APP_SEND", "TCP_SEND", "DEV_XMIT", "NETIF_RX", "TCP_RX",
               "DATA_READY", "EPOLL_RET", "RECV_RET", "APP_DONE"],
    "server": ["NETIF_RX", "TCP_RX", "DATA_READY", "EPOLL_RET", "RECV_RET",
               "APP_SEND", "TCP_SEND", "DEV_XMIT", "APP_DONE"],
}
# udp_rr: the same without TCP's boundaries (its files have a udp_rx stage).
UDP_CHAINS = {side: [b for b in chain if not b.startswith("TCP_")]
              for side, chain in CHAINS.items()}
# tcp_crr: the client's from its connect; the server's from the
# handshake's end, without the request's arrival (docs/stages.md).
CRR_CHAINS = {
    "client": ["CONNECT", "SYN_SENT", "ESTABLISHED"] + CHAINS["client"],
    "server": ["ESTABLISHED", "ACCEPT_RET", "EPOLL_RET", "RECV_RET",
               "APP_SEND", "TCP_SEND", "DEV_XMIT", "APP_DONE"],
}


# --trace-sched: the wake-up between DATA_READY and EPOLL_RET, split.
SCHED = ["BUSY_END", "WOKEN", "ON_CPU"]


def chain_of(row):
    if "handshake" in row or "accept_wait" in row:
        chain = CRR_CHAINS[row["side"]]
    else:
        chain = (UDP_CHAINS if "udp_rx" in row else CHAINS)[row["side"]]
    if "busy" in row and "DATA_READY" in chain:
        i = chain.index("DATA_READY") + 1
        chain = chain[:i] + SCHED + chain[i:]
    # --rate: an open-loop client's transaction starts when it was due.
    if "queue" in row:
        chain = ["INTENDED"] + chain
    return chain


def fail(msg):
    sys.exit("check_trace: " + msg)


def load(path):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        fail(f"{path}: no records")
    return rows


def check_side(path):
    rows = load(path)
    side = rows[0]["side"]
    chain = chain_of(rows[0])
    cols = list(rows[0].keys())
    # side, worker, flow_id, seq, then the boundaries (upper case).
    nb = next(i for i, c in enumerate(cols[4:]) if not c.isupper())
    stages = cols[4 + nb:4 + nb + len(chain) - 1]
    if len(stages) != len(chain) - 1:
        fail(f"{path}: {len(stages)} stage columns for {len(chain)} boundaries")
    last_seq = {}
    udp_server = side == "server" and "udp_rx" in rows[0]
    for r in rows:
        t = [int(r[b]) for b in chain]
        for a, b, name in zip(t, t[1:], chain[1:]):
            if b < a:
                fail(f"{side} flow {r['flow_id']} seq {r['seq']}: {name} before the boundary ahead of it")
        total = sum(int(r[s]) for s in stages)
        if total != t[-1] - t[0]:
            fail(f"{side} seq {r['seq']}: stages add up to {total}, span is {t[-1] - t[0]}")
        # A udp_rr server's socket serves many clients' flows: each
        # record carries its client's port and number of the request.
        f, s = (r["flow_id"], r["port"] if udp_server else ""), int(r["seq"])
        if f in last_seq and s <= last_seq[f]:
            fail(f"{side} flow {f}: seq {s} after {last_seq[f]}")
        last_seq[f] = s
    return side, rows


def inside(c, s):
    return (int(c["DEV_XMIT"]) <= int(s["NETIF_RX"]) and
            int(s["DEV_XMIT"]) <= int(c["NETIF_RX"]))


def crr_pairs(client, server):
    """tcp_crr: a connection per transaction, named on both ends by its
    client port (ports are reused: the one server record of that port
    inside the client's remote is its own)."""
    by_port = {}
    for r in server:
        by_port.setdefault(r["port"], []).append(r)
    for c in client:
        fits = [s for s in by_port.get(c["port"], []) if inside(c, s)]
        if len(fits) > 1:
            fail(f"port {c['port']}: {len(fits)} server records fit one client record")
        yield c, fits[0] if fits else None


# A datagram's arrival on loopback follows its send by about a
# microsecond; a CPU held up (a busy host) delays it, by 15 us in one
# run whose wake-up calls a test program held 5 us each.
ARRIVAL_AFTER_SEND_NS = 1000000


def moved_from(client, srv):
    """udp_rr: is server record s of client record c stamped with the
    arrival of another request (another client's, or the flow's one
    before), sent before it, whose own server record went without it:
    none, outside its window, or with c's request's arrival instead (the
    two swapped)? Stamps a late wake-up call moves, never copies
    (docs/stages.md, udp_rr)."""
    sent = sorted((int(r["DEV_XMIT"]), i) for i, r in enumerate(client))
    starts = [x[0] for x in sent]

    def after_send(t, c):
        return 0 <= t - int(c["DEV_XMIT"]) <= ARRIVAL_AFTER_SEND_NS

    def check(c, s):
        t = int(s["NETIF_RX"])
        i = bisect.bisect_right(starts, t)
        j = bisect.bisect_left(starts, t - ARRIVAL_AFTER_SEND_NS)
        for _, k in sent[j:i]:
            c2 = client[k]
            s2 = srv.get((c2["port"], c2["seq"]))
            if c2 is not c and (
                    not s2 or not inside(c2, s2) or
                    after_send(int(s2["NETIF_RX"]), c)):
                return True
        return False
    return check


def check_pair(client, server, crr, untimed=0):
    # Flows are numbered alike on both ends, but a udp_rr server's
    # socket is many clients' flows: there the client's port names it.
    flow = "port" if "udp_rx" in client[0] else "flow_id"
    srv = {(r[flow], r["seq"]): r for r in server}
    both = swapped = 0
    pairs = (crr_pairs(client, server) if crr else
             ((c, srv.get((c[flow], c["seq"]))) for c in client))
    moved = moved_from(client, srv) if flow == "port" else None
    for c, s in pairs:
        if not s:
            continue
        both += 1
        if inside(c, s):
            continue
        # udp_rr: a server socket's reader can take a datagram before
        # its wake-up call has run, and a late call's stamps go to the
        # datagram read next (docs/stages.md, udp_rr): its arrival is
        # then another client's request's, outside this one's remote.
        # Anything else, or more than 1 in 2,000, is a mis-merge.
        swapped += 1
        if (not moved or not moved(c, s) or
                swapped > 1 + len(client) // 2000):
            fail(f"flow {c['flow_id']} seq {c['seq']}: the server's transaction "
                 f"is not inside the client's remote stage ({swapped} so far)")
    if swapped:
        print(f"check_trace: {swapped} udp_rr server records with another "
              "datagram's stamps")
    # A transaction the server counted incomplete (untimed, from
    # --results: a response held back, say) has no server record.
    if both < len(client) * 0.99 - untimed:
        fail(f"only {both} of {len(client)} client records have a server "
             f"record ({untimed} incomplete at the server)")
    return both


def check_apart(rows):
    """The client's consecutive transactions of a flow, strictly apart."""
    done = {(r["flow_id"], int(r["seq"])): int(r["APP_DONE"]) for r in rows}
    pairs = 0
    for r in rows:
        prev = done.get((r["flow_id"], int(r["seq"]) - 1))
        if prev is None:
            continue
        pairs += 1
        if int(r["APP_SEND"]) <= prev:
            fail(f"flow {r['flow_id']} seq {r['seq']}: APP_SEND at the "
                 "previous APP_DONE: the tracer's work is in its latency")
    if pairs < len(rows) // 2:
        fail(f"only {pairs} of {len(rows)} client records follow their flow's previous one")
    print(f"check_trace: {pairs} client requests start after the tracer's work")


def main():
    args = sys.argv[1:]
    results = None
    apart = "--apart" in args
    if apart:
        args.remove("--apart")
    if "--results" in args:
        i = args.index("--results")
        results = dict(l.rstrip("\n").split("=", 1) for l in open(args[i + 1]))
        del args[i:i + 2]
    sides = dict(check_side(p) for p in args)
    crr = any("handshake" in rows[0] for rows in sides.values())
    if "client" in sides and "server" in sides:
        untimed = int(results.get("server.trace_incomplete", 0)) if results else 0
        both = check_pair(sides["client"], sides["server"], crr, untimed)
        print(f"check_trace: {both} transactions on both sides")
    if apart:
        check_apart(sides["client"])
    if results and "client" in sides:
        rows = sides["client"]
        traced = int(results["client.trace_transactions"])
        if (int(results["client.trace_incomplete"]) == 0 and
                traced == int(results["client.num_transactions"]) and
                len(rows) == traced):
            first = chain_of(rows[0])[0]
            mean = sum(int(r["APP_DONE"]) - int(r[first]) for r in rows) / len(rows) / 1e3
            # Open loop: a record runs from the intended send, as the
            # worker's latency does (its uncorrected one from the
            # actual send).
            want = float(results["client.latency_mean_us"])
            if abs(mean - want) > 0.0015:
                fail(f"records average {mean:.4f} us, the worker measured {want} us")
            print(f"check_trace: records average {mean:.3f} us = latency_mean_us")
    for side, rows in sides.items():
        print(f"check_trace: {side}: {len(rows)} records in order, stages add up")


main()
