# Tests across two network namespaces of our own joined by a veth pair
# (sourced by run.sh). Root only; TEST-NET-1 addresses.

INCOMPLETE_LUA=$PWD/tests/func/incomplete.lua

# make_veth A B: namespaces A (192.0.2.1) and B (192.0.2.2), removed when
# the test's subshell exits.
make_veth() {
	local a=$1 b=$2

	ip netns add "$a"
	ip netns add "$b"
	trap 'ip netns del '"$a"' 2>/dev/null; ip netns del '"$b"' 2>/dev/null' EXIT
	ip link add "v$a" netns "$a" type veth peer name "v$b" netns "$b"
	ip -n "$a" addr add 192.0.2.1/24 dev "v$a"
	ip -n "$b" addr add 192.0.2.2/24 dev "v$b"
	ip -n "$a" link set "v$a" up
	ip -n "$b" link set "v$b" up
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
}

# udp_over_veth A B ARGS...: a udp_rr server in B (UDP_SRV_OPTS), and a
# client in A for 3 s with a 10 ms timeout and ARGS; srv.* and cli.*.
udp_over_veth() {
	local a=$1 b=$2 srv

	shift 2
	ip netns exec "$b" timeout 60 "$NETSTAGE" udp_rr -L 192.0.2.2 -q \
		$UDP_SRV_OPTS > srv.out 2> srv.err &
	srv=$!
	wait_port 12866 192.0.2.2 "$b"
	ip netns exec "$a" timeout 60 "$NETSTAGE" udp_rr -c -H 192.0.2.2 \
		-l 3 -q --rr-timeout=10 "$@" > cli.out 2> cli.err
	wait "$srv"
}

t_udp_rr_counts_a_known_share_of_loss() {
	need_root
	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }
	local a=uc$$ b=us$$ c s lost pct

	make_veth "$a" "$b"
	# The server's host drops one request in ten, at random.
	ip netns exec "$b" nft add table inet t
	ip netns exec "$b" nft add chain inet t in \
		'{ type filter hook input priority 0; }'
	ip netns exec "$b" nft add rule inet t in udp dport 12867 \
		numgen random mod 10 0 drop
	UDP_SRV_OPTS="--trace --trace-records=srv.csv" udp_over_veth "$a" "$b" \
		--trace --trace-records=cli.csv
	# Traced, the client prints both ends (the server sent its results).
	c=$(key cli.out client.num_transactions)
	s=$(key srv.out num_transactions)
	lost=$(key cli.out client.num_lost)
	late=$(key cli.out client.num_late)
	# Dropped requests never reached the server: it answered what the
	# client received in time, plus what came too late (a response
	# delayed past 10 ms by scheduling), give or take the one in flight.
	expect_le $((c + late)) "$s" "client + late <= server"
	expect_le "$s" $((c + late + 1)) "server <= client + late + 1"
	expect_gt "$lost" 0 "lost requests"
	# 10% of some hundreds of requests: within 5..15% (over 3 sigma).
	pct=$(key cli.out client.loss_percent)
	python3 -c 'import sys; p = float(sys.argv[1]); assert 5 <= p <= 15, p' \
		"$pct"
	echo "loss_percent=$pct of $((c + lost)) requests"
	# Traced, a lost request's stamps stay its own: the next request's
	# transaction is whole. A response too late for its request costs
	# the transaction in flight then (counted incomplete). The sides
	# number requests differently (the server never saw the lost ones),
	# so their records are checked apart.
	cp cli.out out
	check_trace_counts out client udp_rx 5
	check_trace_counts out server udp_rx 5
	$CHECK_TRACE cli.csv
	$CHECK_TRACE srv.csv
	# Eight in flight: each lost request is timed out on its own, and
	# the rest of the window goes on.
	UDP_SRV_OPTS= udp_over_veth "$a" "$b" --burst 8
	c=$(key cli.out num_transactions)
	s=$(key srv.out num_transactions)
	late=$(key cli.out num_late)
	expect_le $((c + late)) "$s" "burst: client + late <= server"
	expect_le "$s" $((c + late + 8)) "burst: server <= client + late + 8"
	pct=$(key cli.out loss_percent)
	python3 -c 'import sys; p = float(sys.argv[1]); assert 5 <= p <= 15, p' \
		"$pct"
	echo "burst 8: loss_percent=$pct of $((c + $(key cli.out num_lost))) requests"
}

# drop_in NS RULE: drop one in 50 of the packets RULE matches on NS's
# input, at random, after netif_receive_skb saw them (netfilter).
drop_in() {
	ip netns exec "$1" nft add table inet t
	ip netns exec "$1" nft add chain inet t in \
		'{ type filter hook input priority 0; }'
	ip netns exec "$1" nft add rule inet t in "$2" \
		${DROP_WHICH:-numgen random mod 50 0} drop
}

# A copy of a packet that netfilter dropped after netif_receive_skb saw
# it must not time its message: the retransmission TCP takes is the
# arrival, so the wait for it lands in the client's remote, never in a
# receive stage of either side.
drop_data_both_ways() {
	drop_in "$2" 'tcp dport 12867 tcp flags & (syn | fin | rst) == 0'
	drop_in "$1" 'tcp sport 12867 tcp flags & (syn | fin | rst) == 0'
}

# receive_stages_clean SIDE=CSV...: no record's softirq_rx or tcp_rx
# holds a retransmission's wait (5 ms or more; a tail loss probe comes
# after 10 ms at the least here). Given both ends, a wait that long
# with no retransmission of that message by the peer within it is no
# retransmission's: the machine stalled (a guest's vCPUs held by its
# host, here once in about 15 runs under load: a whole 8-10 ms with no
# stamp on either side), or the segment waited in the socket's backlog
# while the reader's own send held the socket (a server's send once
# took 15 ms to return; the peer resent the next request meanwhile,
# which is not this one's wait). It is shown, not failed.
receive_stages_clean() {
	python3 - "$@" <<'PY'
import csv, sys
SPAN = {"softirq_rx": ("NETIF_RX", "TCP_RX"),
        "tcp_rx": ("TCP_RX", "DATA_READY")}
sides = [a.split("=", 1) for a in sys.argv[1:]]
rows = {side: list(csv.DictReader(open(path))) for side, path in sides}
# When each side began resending each message, by connection and number.
resent = {side: {} for side in rows}
for side, rs in rows.items():
    for r in rs:
        if r.get("RETRANS"):
            resent[side][(r["port"], r["seq"])] = int(r["RETRANS"])
for side, rs in rows.items():
    peer = [p for p in rows if p != side] if len(rows) == 2 else []
    for stage, (a, b) in SPAN.items():
        for r in rs:
            if int(r[stage]) < 5e6:
                continue
            t0, t1 = int(r[a]), int(r[b])
            hit = [resent[p][(r["port"], r["seq"])] for p in peer
                   if t0 <= resent[p].get((r["port"], r["seq"]), -1) <= t1]
            what = f"{side} {stage} {int(r[stage])} ns (seq {r['seq']})"
            assert peer, what
            assert not hit, f"{what}: the peer resent within it, at {hit}"
            print(f"{side} {stage} {int(r[stage])} ns (seq {r['seq']}):"
                  " the peer did not resend it within it")
PY
}

# met_losses CSV [SERVER-CSV]: at least MIN_LOSSES (3) client records
# waited 5 ms or more; given the server's records, each such wait is in
# the client's remote stage, unless neither side resent anything within
# the transaction: then the machine stood still (receive_stages_clean),
# and it is shown, not failed, if such stalls are a few (at most half the
# losses).
met_losses() {
	MIN_LOSSES=${MIN_LOSSES:-3} python3 - "$@" <<'PY'
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
slow = [r for r in rows if int(r["APP_DONE"]) - int(r["APP_SEND"]) > 5e6]
print(f"{len(slow)} of {len(rows)} transactions met a loss")
assert len(slow) >= int(os.environ["MIN_LOSSES"]), \
    f"only {len(slow)} transactions met a loss"
resent = {}
for path in sys.argv[1:]:
    for r in csv.DictReader(open(path)):
        if r["RETRANS"]:
            resent.setdefault(r["port"], []).append(int(r["RETRANS"]))
stalls = 0
for r in slow if len(sys.argv) > 2 else ():
    if int(r["remote"]) > 5e6:
        continue
    t0, t1 = int(r["APP_SEND"]), int(r["APP_DONE"])
    hit = [t for t in resent.get(r["port"], []) if t0 <= t <= t1]
    assert not hit, f"resent at {hit}, the wait not in remote: {r}"
    print(f"seq {r['seq']}: {t1 - t0} ns, no retransmission within it")
    stalls += 1
# A few (a busy machine stalls more), or a loss's wait BPF put elsewhere.
losses = len(slow) - stalls
assert stalls <= max(1, losses // 2), f"{stalls} stalls, {losses} losses"
PY
}

t_trace_a_dropped_packet_lands_in_remote() {
	need_root
	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }

	SRV_OPTS=--trace-max-records=1000000 VETH_SETUP=drop_data_both_ways \
		trace_over_veth -l 3 --trace-max-records=1000000
	met_losses cli.csv srv.csv
	receive_stages_clean client=cli.csv server=srv.csv
	# The slowest line names where the time was: the retransmission's
	# wait, in remote.
	grep '^  slowest kept:' cli.err | grep -q '^  slowest kept: [0-9.]* us (remote ' ||
		fail "slowest line: $(grep 'slowest kept' cli.err)"
	retransmits_named nc$$ client cli.csv
	retransmits_named ns$$ server srv.csv
	every_loss_marked cli.csv srv.csv > marked
	cat marked
	slowest_line_marks cli.err cli.csv
	# The waterfall of the two files counts the same transactions.
	ns join cli.csv server=srv.csv > join.out 2> join.err
	expect_eq "$(key join.out join_retransmitted)" \
		"$(awk '{ print $4 }' marked)" "join_retransmitted"
}

# retransmits_named NETNS SIDE CSV: the side's count of segments TCP
# resent agrees with the kernel's own counter in its namespace, which
# holds nothing else that loses packets. The kernel's may be higher by
# what was resent after the run's programs detached: a flow's message
# in flight as the run ended, each copy of it lost again (1 in 50).
# Its count of transactions is that of the records marked RETRANS, but
# for that message.
retransmits_named() {
	local kernel bpf txn marked

	kernel=$(ip netns exec "$1" nstat -saz TcpRetransSegs |
		 awk '$1 == "TcpRetransSegs" { print $2 }')
	bpf=$(key out "$2.trace_retransmits")
	txn=$(key out "$2.trace_retransmitted")
	marked=$(python3 -c 'import csv, sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["RETRANS"]))' "$3")
	echo "$2: kernel TcpRetransSegs=$kernel, trace_retransmits=$bpf," \
		"trace_retransmitted=$txn, records marked=$marked"
	expect_gt "$bpf" 0 "$2 retransmits"
	[ "$bpf" -le "$kernel" ] && [ "$kernel" -le $((bpf + 2)) ] ||
		fail "$2: $bpf segments resent, the kernel counted $kernel"
	[ "$marked" -le "$txn" ] && [ "$txn" -le $((marked + 1)) ] ||
		fail "$2: $txn transactions resent, $marked records marked"
}

# slowest_line_marks ERR CSV: each transaction of the slowest line says
# "retransmitted" exactly when its record is marked (found by its span).
slowest_line_marks() {
	python3 - "$@" <<'PY'
import csv, re, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("  slowest kept:"))
rows = list(csv.DictReader(open(sys.argv[2])))
for span, said in re.findall(r"([0-9.]+) us \(([^)]*)\)", line):
    recs = [r for r in rows if "%.1f" % ((int(r["APP_DONE"]) - int(r["APP_SEND"])) / 1e3) == span]
    assert recs, f"no record of {span} us"
    assert any(bool(r["RETRANS"]) == ("retransmitted" in said) for r in recs), (span, said)
print("slowest line:", line.strip())
PY
}

# every_loss_marked CLIENT_CSV SERVER_CSV: each client transaction
# whose packets spent 5 ms or more on the wire (its remote less the
# server's time from the request's arrival to the response's hand-off:
# a slow server start is not a loss) had bytes resent: its request (the
# client's record is marked) or its response (the server's record of
# the same flow and number is, before the response arrived). A wait
# with no retransmission by either side within it was no loss's: the
# packets were held (the machine stood still, as receive_stages_clean
# says); it is shown, not failed, if such waits are a few (at most half
# the losses). BPF missing retransmissions is retransmits_named's to
# catch.
every_loss_marked() {
	python3 - "$@" <<'PY'
import csv, sys
cli = list(csv.DictReader(open(sys.argv[1])))
srv = {(r["flow_id"], r["seq"]): r for r in csv.DictReader(open(sys.argv[2]))}
resent = [int(r["RETRANS"]) for r in cli + list(srv.values()) if r["RETRANS"]]
n = m = held = 0
for r in cli:
    s = srv.get((r["flow_id"], r["seq"]))
    if not s:
        continue
    wire = int(r["remote"]) - (int(s["DEV_XMIT"]) - int(s["NETIF_RX"]))
    # A response resent after it arrived (its ACK lost with the next
    # request) held up nothing of this transaction.
    marked = r["RETRANS"] or (s["RETRANS"] and
                              int(s["RETRANS"]) < int(r["NETIF_RX"]))
    m += bool(marked)
    if wire >= 5e6 and not marked and not any(
            int(r["DEV_XMIT"]) <= t <= int(r["NETIF_RX"]) for t in resent):
        print(f"seq {r['seq']}: {wire} ns on the wire, nothing resent")
        held += 1
    elif wire >= 5e6:
        n += 1
        assert marked, f"unmarked: {r}"
    if r["RETRANS"]:
        assert int(r["APP_SEND"]) <= int(r["RETRANS"]) <= int(r["APP_DONE"]), r
    if s["RETRANS"]:
        assert int(s["DEV_XMIT"]) <= int(s["RETRANS"]), s
print(f"client transactions marked: {m} (waited 5 ms or more on the wire: {n})")
# A few, or retransmissions BPF never tied to their messages.
assert held <= max(1, n // 2), f"{held} long waits with nothing resent, {n} losses"
PY
}

# observe takes a request's arrival from the copy TCP took too: with 1
# in 50 data packets dropped both ways between a client and memcached
# in two namespaces, no retransmission's wait lands in a receive stage
# of the observed server, while the client did meet losses.
t_observe_a_dropped_packet_lands_in_no_receive_stage() {
	need_root
	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }
	command -v memcached > /dev/null || { echo "no memcached"; exit "$SKIP"; }
	local a=oc$$ b=os$$ port=11311 mc

	make_veth "$a" "$b"
	drop_in "$b" "tcp dport $port tcp flags & (syn | fin | rst) == 0"
	drop_in "$a" "tcp sport $port tcp flags & (syn | fin | rst) == 0"
	ip netns exec "$b" memcached -u nobody -l 192.0.2.2 -p $port -U 0 \
		-t 1 &
	mc=$!
	trap 'kill '"$mc"' 2>/dev/null; ip netns del '"$a"' 2>/dev/null;
	      ip netns del '"$b"' 2>/dev/null' EXIT
	wait_port "$port" 192.0.2.2 "$b"
	ip netns exec "$a" timeout 60 "$NETSTAGE" tcp_rr --raw -H 192.0.2.2 \
		-P $port --request-data 'get k\r\n' --response-end 'END\r\n' \
		-F 4 -q -l 4 > cli.out 2> cli.err &
	sleep 0.5
	ip netns exec "$b" timeout 60 "$NETSTAGE" observe --port $port -l 3 \
		-q --trace-records=obs.csv --trace-max-records 1000000 \
		> obs.out 2> obs.err
	wait %2
	expect_gt "$(key obs.out trace_transactions)" 100 "observed"
	# The client met losses: a wait of 5 ms or more.
	awk -v us="$(key cli.out latency_max_us)" 'BEGIN { exit !(us > 5000) }' ||
		fail "client latency max $(key cli.out latency_max_us) us"
	receive_stages_clean observed=obs.csv
	# The responses memcached resent while observed: no more than its
	# kernel counted over the longer run, each in a marked record or
	# one not kept.
	local kernel bpf marked
	kernel=$(ip netns exec "$b" nstat -saz TcpRetransSegs |
		 awk '$1 == "TcpRetransSegs" { print $2 }')
	bpf=$(key obs.out trace_retransmits)
	marked=$(python3 -c 'import csv, sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["RETRANS"]))' obs.csv)
	echo "kernel TcpRetransSegs=$kernel, trace_retransmits=$bpf," \
		"trace_retransmitted=$(key obs.out trace_retransmitted)," \
		"records marked=$marked"
	expect_gt "$bpf" 0 "observed retransmits"
	[ "$bpf" -le "$kernel" ] || fail "$bpf resent, the kernel counted $kernel"
	expect_gt "$marked" 0 "records marked"
	[ "$marked" -le "$(key obs.out trace_retransmitted)" ] ||
		fail "$marked marked"
}

# With several requests in flight, a dropped segment leaves the ones
# after it out of order until its retransmission fills the hole, and
# TCP makes them readable all at once then. Their TCP_RX must not be
# that moment (they arrived long before: the retransmission's wait
# would land in softirq_rx): they count as incomplete instead.
t_trace_segments_out_of_order_are_not_timed() {
	need_root
	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }

	VETH_SETUP=drop_data_both_ways trace_over_veth -l 3 --burst 4 \
		--script "$INCOMPLETE_LUA"
	expect_gt "$(key out client.trace_incomplete)" 0 "client incomplete"
	expect_gt "$(key out server.trace_incomplete)" 0 "server incomplete"
	check_incomplete_reasons out client
	check_incomplete_reasons out server
	# A script sees the client's reasons as the keys say them.
	expect_eq "$(grep '^incomplete' cli.out | tr '\t' ' ')" \
		"incomplete $(for r in "" _missing _disorder _norecord; do
			printf ' %s' "$(key out "client.trace_incomplete$r")"
		done | cut -c2-)" "script's reasons"
	expect_eq "$(sed -n 's/^at //p' cli.out)" \
		"$(key out client.trace_incomplete_at | tr ',' '\n' | sort |
		   paste -sd,)" "script's boundaries"
	met_losses cli.csv
	receive_stages_clean client=cli.csv server=srv.csv
}

# Of every 50 data packets each way, the 1st, 3rd and 4th are dropped:
# with four in flight, the 2nd is held out of order, and TCP resends
# the 3rd and 4th in one segment (collapsed). The dropped copy of the
# 4th began its message: the copy TCP took, the resend, began before
# it, so the message's arrival is the resend's, and its wait lands in
# no receive stage.
t_trace_a_collapsed_retransmission_is_the_arrival() {
	need_root
	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }

	DROP_WHICH='numgen inc mod 50 { 0, 2, 3 }' \
		VETH_SETUP=drop_data_both_ways trace_over_veth -l 3 --burst 4
	expect_gt "$(key out client.trace_retransmits)" 0 "client resent"
	expect_gt "$(key out server.trace_retransmits)" 0 "server resent"
	# A fixed pattern can drop a segment's resends too, and its timer
	# backs off (0.2, 0.4, 0.8 s...): a run once met one loss alone.
	MIN_LOSSES=1 met_losses cli.csv
	receive_stages_clean client=cli.csv server=srv.csv
}
