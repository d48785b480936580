# Two hosts, one waterfall (issue 42): a standalone client and server,
# each in a network namespace of its own over veth, traced; the server
# sends its results to the client, which joins both ends. Namespaces
# share the host's clock, so the truth is known: one clock, or one made
# wrong on purpose (NETSTAGE_TEST_CLOCK_SKEW on the server).

CHECK_CLOCKS="python3 $(pwd)/tests/func/check_clocks.py"

# two_hosts NAME [SKEW] -- CLIENT ARGS: NAME.out (the client's, both
# ends), NAME.cli.csv and NAME.srv.csv (each end's records); the
# workload is TH_WL's (tcp_rr).
two_hosts() {
	local name=$1 skew=$2 srv wl=${TH_WL:-tcp_rr}
	shift 2
	ip netns exec "$NS_B" env ${skew:+NETSTAGE_TEST_CLOCK_SKEW=$skew} \
		timeout 60 "$NETSTAGE" "$wl" -L 192.0.2.2 -q --trace \
		--trace-records="$name.srv.csv" > "$name.srv.out" \
		2> "$name.srv.err" &
	srv=$!
	wait_port 12866 192.0.2.2 "$NS_B"
	ip netns exec "$NS_A" timeout 60 "$NETSTAGE" "$wl" -c -H 192.0.2.2 \
		-l 3 -q --trace --trace-records="$name.cli.csv" \
		--output-format kv "$@" > "$name.out" 2> "$name.err"
	wait "$srv"
	grep -q '^waterfall.transactions=' "$name.out" ||
		fail "$name: no waterfall: $(grep -v '^ ' "$name.err")"
}

two_namespaces() {
	need_root
	NS_A=hc$$ NS_B=hs$$
	make_veth "$NS_A" "$NS_B"
}

# One clock: the waterfall joins as it is, the fit shown as a check
# (within its causal bound of the truth, 0); the client's waterfall is
# the join of the two records files; and a join that takes the clocks
# for two moves each row by no more than the fitted line does over the
# run: the offset, and the drift for the test's 3 s and one to spare.
t_two_hosts_one_clock() {
	two_namespaces
	two_hosts one ""
	expect_eq "$(key one.out waterfall.clock_aligned)" 0 "one clock"
	expect_eq "$(key one.out waterfall.clock_negative_legs)" 0 \
		"legs below zero"
	expect_eq "$(key one.out server.trace_status)" records \
		"the server's results came"
	# What they cost: about a record's wire size for each it kept.
	python3 -c "
b, n = $(key one.out client.peer_results_bytes), $(key one.out server.trace_records_kept)
print('results frame', b, 'bytes,', n, 'records,', round(b / n), 'a record')
assert 150 * n <= b <= 512 * n + (64 << 20), (b, n)"
	grep -q '^  clocks: one; ' one.err || fail "the clocks line"
	python3 - one.out <<'PY'
import sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
off = float(kv["waterfall.clock_offset_us"])
causal = float(kv["waterfall.clock_causal_bound_us"])
print(f"one clock: fitted {off:+.3f} us, causal bound {causal:.3f}, "
      f"bound {kv['waterfall.clock_bound_us']}")
assert abs(off) <= causal, (off, causal)
PY
	ns join one.cli.csv server=one.srv.csv > join.out 2> join.err
	expect_eq "$(key join.out join_clock_aligned)" 0 "auto: one clock"
	$CHECK_CLOCKS rows one.out join.out 0
	ns join one.cli.csv server=one.srv.csv --clocks two > two.out 2> err
	expect_eq "$(key two.out join_clock_aligned)" 1 "--clocks two"
	tol=$(python3 -c "print(abs($(key two.out join_clock_offset_us)) +
		4 * abs($(key two.out join_clock_drift_ppm)) + 0.01)")
	$CHECK_CLOCKS rows two.out join.out "$tol" join_ join_
}

# A clock 5 ms ahead that gains 40 ppm: the fit finds both (the offset
# within the causal bound it states), the waterfall moves the server's
# stamps onto the client's clock and equals, within 0.5 us at p50 per
# row, the join of the same records with the skew taken out exactly;
# and a join of the files finds the two clocks by itself.
t_two_hosts_skewed_clock() {
	two_namespaces
	two_hosts sk 5000000,40 --perfetto sk.pf.json
	grep -q "^  clocks: the server's aligned, " sk.err ||
		fail "the clocks line"
	# The Perfetto file says whose clock the server's slices are on,
	# with the fit's figures the keys give.
	python3 - sk.pf.json sk.out <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["otherData"]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]) if "=" in l)
assert o["server_clock"].startswith("aligned"), o
for k in ("clock_offset_us", "clock_bound_us", "clock_causal_bound_us"):
    assert abs(o[k] - float(kv["waterfall." + k])) <= 0.001, (k, o[k])
print(f"perfetto: server clock {o['server_clock']}, offset {o['clock_offset_us']} us")
PY
	$CHECK_CLOCKS skew sk.out sk.cli.csv sk.srv.csv 5000000 40
	ns join sk.cli.csv server=sk.srv.csv.true > truth.out 2> err
	expect_eq "$(key truth.out join_clock_aligned)" 0 "unskewed: one"
	$CHECK_CLOCKS rows sk.out truth.out 0.5
	ns join sk.cli.csv server=sk.srv.csv > auto.out 2> err
	expect_eq "$(key auto.out join_clock_aligned)" 1 "auto: two clocks"
	$CHECK_CLOCKS rows sk.out auto.out 0
	# Test-only, and bad values are one line and status 2.
	rc=0
	NETSTAGE_TEST_CLOCK_SKEW=5ms,40 "$NETSTAGE" tcp_rr -c -H 127.0.0.1 -l 1 \
		> out 2> err || rc=$?
	expect_eq "$rc" 2 "bad skew: status"
	expect_eq "$(wc -l < err)" 1 "one line"
	grep -q 'NETSTAGE_TEST_CLOCK_SKEW=5ms,40: not OFFSET_NS,PPM' err
}

# An asymmetry the fit cannot see (docs/stages.md, Two hosts): the
# request's leg 200 us longer than the response's, made in the records
# as a one-way delay makes it (sch_netem is not in every kernel; this
# one has none). On one clock the request's wire leg shows it whole;
# taken for two clocks, the fit puts half of it into the offset, which
# the causal bound covers and the symmetric bound does not, and the
# two legs come out split evenly.
t_two_hosts_asymmetry_is_halved() {
	two_namespaces
	two_hosts as ""
	$CHECK_CLOCKS asym as.cli.csv as.srv.csv 200000
	ns join as.cli.csv.asym server=as.srv.csv.asym --clocks one \
		> one.out 2> err
	ns join as.cli.csv.asym server=as.srv.csv.asym --clocks two \
		> two.out 2> err
	python3 - one.out two.out <<'PY'
import sys
def kv(p):
    return {k: float(v) for k, v in (l.rstrip("\n").split("=", 1)
            for l in open(p) if "=" in l) if v.replace(".", "").lstrip("-").isdigit()}
one, two = kv(sys.argv[1]), kv(sys.argv[2])
fwd, back = one["join_wire_to_server_p50_us"], one["join_wire_to_client_p50_us"]
off = two["join_clock_offset_us"]
print(f"one clock: wire legs {fwd:.3f} and {back:.3f} us; as two: offset "
      f"{off:.3f} us, legs {two['join_wire_to_server_p50_us']:.3f} and "
      f"{two['join_wire_to_client_p50_us']:.3f}; bound "
      f"{two['join_clock_bound_us']:.3f}, causal "
      f"{two['join_clock_causal_bound_us']:.3f}")
assert fwd - back >= 199, (fwd, back)
# Half the 200 us, to the legs' own difference at their minima.
assert abs(off - 100) <= 1 + abs(fwd - back - 200), off
assert off > two["join_clock_bound_us"], "the symmetric bound sees it"
assert off <= two["join_clock_causal_bound_us"], "the causal bound holds"
PY
}

# --clock realtime or tai: the hosts' clocks taken to agree (PTP, say):
# the stamps are compared on that clock, not aligned, and the fit
# checks the claim. On one host it holds (within the causal bound of
# 0); a server clock made 5 ms wrong breaks it, and the client says so
# in one line instead of printing a waterfall of mis-pairs.
t_two_hosts_shared_clock() {
	two_namespaces
	two_hosts rt "" --clock realtime
	expect_eq "$(key rt.out waterfall.clock_source)" realtime "source"
	expect_eq "$(key rt.out waterfall.clock_aligned)" 0 "not aligned"
	! grep -q -- '--clock realtime:' rt.err || fail "$(grep -- --clock rt.err)"
	python3 -c "
off, causal = abs($(key rt.out waterfall.clock_offset_us)), $(key rt.out waterfall.clock_causal_bound_us)
print('realtime: fitted', off, 'us, causal bound', causal)
assert off <= causal, (off, causal)"
	ip netns exec "$NS_B" env NETSTAGE_TEST_CLOCK_SKEW=5000000,40 \
		timeout 60 "$NETSTAGE" tcp_rr -L 192.0.2.2 -q --trace \
		> tai.srv.out 2> tai.srv.err &
	wait_port 12866 192.0.2.2 "$NS_B"
	ip netns exec "$NS_A" timeout 60 "$NETSTAGE" tcp_rr -c -H 192.0.2.2 \
		-l 1 -q --trace --clock tai --output-format kv > tai.out 2> tai.err
	wait
	grep -q -- "--clock tai: the stamps put the two hosts' clocks [0-9]*\.[0-9]* us apart, more than causality allows" tai.err ||
		fail "no word of the broken clock: $(grep -v '^ ' tai.err)"
	! grep -q '^waterfall\.' tai.out || fail "a waterfall of mis-pairs"
}

# udp_rr and tcp_crr across two hosts. On one clock (as here) the
# client's transactions are joined (all but a rare one whose server
# record was traced incomplete), the fit a check within its causal
# bound of the truth (0), and `join` of the two records files pairs the
# same. With the server's clock 5 ms ahead and 40 ppm fast they still
# pair: udp_rr's by the client's port and number, which a server's
# record carries; tcp_crr's by port and time once the clocks are fitted
# from the pairs of a port that agree on their difference. The fit
# recovers the skew within its causal bound, and the rows are those of
# the same records joined with the skew taken out.
t_two_hosts_udp_rr_and_tcp_crr() {
	local wl

	two_namespaces
	for wl in udp_rr tcp_crr; do
		TH_WL=$wl two_hosts "$wl" ""
		joined_most "$wl.out" "$wl"
		expect_eq "$(key "$wl.out" waterfall.clock_aligned)" 0 \
			"$wl: one clock"
		expect_eq "$(key "$wl.out" waterfall.clock_negative_legs)" 0 \
			"$wl: legs below zero"
		python3 -c "import sys; o, c = map(float, sys.argv[1:])
assert abs(o) <= c, ('$wl', o, c)" \
			"$(key "$wl.out" waterfall.clock_offset_us)" \
			"$(key "$wl.out" waterfall.clock_causal_bound_us)"
		# The two files joined: the same pairs, the same rows.
		ns join "$wl.cli.csv" server="$wl.srv.csv" > "$wl.join" 2> err
		expect_eq "$(key "$wl.join" join_transactions)" \
			"$(key "$wl.out" waterfall.transactions)" "$wl: join"
		$CHECK_CLOCKS rows "$wl.out" "$wl.join" 0
		TH_WL=$wl two_hosts "$wl.sk" 5000000,40
		joined_most "$wl.sk.out" "$wl, two clocks"
		$CHECK_CLOCKS skew "$wl.sk.out" "$wl.sk.cli.csv" \
			"$wl.sk.srv.csv" 5000000 40
		ns join "$wl.sk.cli.csv" server="$wl.sk.srv.csv.true" \
			> "$wl.truth" 2> err
		expect_eq "$(key "$wl.truth" join_clock_aligned)" 0 \
			"$wl unskewed: one"
		$CHECK_CLOCKS rows "$wl.sk.out" "$wl.truth" 0.5
	done
	expect_eq "$(key udp_rr.sk.out waterfall.joined_by)" \
		connection_and_seq "udp_rr: joined by"
	# Records that cannot pair (another workload's server) taken for
	# two clocks: one line, status 1, no half-written records file.
	rc=0
	ns join udp_rr.cli.csv server=tcp_crr.srv.csv --clocks two \
		--records r.csv > out 2> err || rc=$?
	expect_eq "$rc" 1 "unpaired on two clocks: status"
	expect_eq "$(wc -l < err)" 1 "one line"
	grep -q 'too few of the records pair to align two clocks' err
	[ ! -e r.csv ] || fail "a records file of nothing"
}

# joined_most OUT WHAT: 99% or more of the client's records joined (a
# server record traced incomplete, rare, has no partner). Of its
# records, not of every transaction it traced: past
# --trace-max-records both ends keep a sample (a fast run: 99,019 of
# 100,267).
joined_most() {
	python3 -c "import sys; j, t = map(int, sys.argv[1:])
assert 100 * j >= 99 * t, ('$2 joined', j, t)" \
		"$(key "$1" waterfall.transactions)" \
		"$(key "$1" waterfall.client_transactions)"
}
