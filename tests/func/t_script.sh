# --script: every example against a real loopback client and server, and
# the error paths (sourced by run.sh). Example output is checked against
# netstage's own result keys where the two must agree.

EX=$PWD/examples
COUNT_HOOKS=$PWD/tests/func/count-hooks.lua
RESULTS_API=$PWD/tests/func/results-api.lua
LUA_FIELDS=$PWD/tests/func/lua-fields.lua
CHECK_LUA_FIELDS=$PWD/tests/func/check_lua_fields.py

t_script_time_script_run() {
	ns tcp_rr --local -l 2 -q -o throughput \
		--script "$EX/time-script-run.lua" > out 2> err
	grep -q '^client.throughput=' out
	# os.time() counts whole seconds: a 2 s test reads as 2 or 3.
	grep -Eq '^Script ran for [23] seconds\.$' err ||
		fail "no run time line: $(cat err)"
}

t_script_collect_values_one_per_worker() {
	start_server tcp_stream -T 3 --script "$EX/collect-values.lua"
	ns tcp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -T 3 -F 3 \
		--script "$EX/collect-values.lua" > out
	wait "$SRV_PID"
	# The client's workers each own one flow: three sockets, in order.
	opened=$(grep '^socket of a worker:' out | awk '{print $5}' | xargs)
	expect_eq "$(echo "$opened" | wc -w)" 3 "client sockets"
	expect_eq "$(grep '^collected:' out | cut -d' ' -f2-)" "$opened" \
		"client values, worker order"
	# Every server worker saw the one listener.
	l=$(grep -m1 '^socket of a worker:' "$SRV_OUT" | awk '{print $5}')
	expect_eq "$(grep '^collected:' "$SRV_OUT" | cut -d' ' -f2-)" \
		"$l $l $l" "server values"
}

t_script_drop_count_counts_every_datagram() {
	start_server udp_stream -T 2 --script "$EX/drop-count.lua"
	ns udp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -T 2 -F 2 -B 64 \
		> out
	wait "$SRV_PID"
	grep -q '^worker 1 ' "$SRV_OUT"
	grep -q '^worker 2 ' "$SRV_OUT"
	rows=$(awk '/^worker [0-9]+ /{s += $3} END {print s}' "$SRV_OUT")
	total=$(awk '/^total /{print $2}' "$SRV_OUT")
	expect_eq "$total" "$rows" "total of the rows"
	# The hook's count is the server's own datagram count.
	expect_eq "$total" "$(key "$SRV_OUT" num_transactions)" \
		"received = server transactions"
	expect_gt "$total" 0 "datagrams received"
}

t_script_check_src_addr() {
	export EXPECT_SRC=127.0.0.1
	start_server udp_stream -4 --script "$EX/check-src-addr.lua"
	ns udp_stream -4 -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > good.out
	wait "$SRV_PID"
	! grep -q 'Wrong source' "$SRV_OUT"
	expect_gt "$(key "$SRV_OUT" num_transactions)" 0 "datagrams checked"
	# From 127.0.0.2 the server stops at the first datagram.
	start_server udp_stream -4 --script "$EX/check-src-addr.lua"
	ns udp_stream -4 -c -H 127.0.0.1 -L 127.0.0.2 -C "$CPORT" -l 2 -q \
		> bad.out 2>&1 || true
	rc=0
	wait "$SRV_PID" || rc=$?
	expect_eq "$rc" 1 "server status"
	grep -qx 'Wrong source address! Expected 127.0.0.1, but got 127.0.0.2' \
		"$SRV_OUT"
}

# A bind-to-device server in namespace $1, bound to its veth; SRV set.
# --foreground: killed, timeout would follow SIGTERM with a SIGCONT to
# the server, and a SIGCONT discards the SIGSTOP with which a sanitized
# server's exiting LeakSanitizer stops it: both then wait for ever.
bound_server() {
	IFNAME=v$1 ip netns exec "$1" timeout --foreground 30 "$NETSTAGE" \
		tcp_stream -q \
		--script "$EX/bind-to-device.lua" > "$2" 2> "$2.err" &
	SRV=$!
	wait_port 12866 "" "$1"
}

t_script_bind_to_device() {
	need_root
	local a=ba$$ b=bb$$ rc

	make_veth "$a" "$b"
	# Bound to the veth: a client on the other side gets through...
	bound_server "$b" srv.out
	ip netns exec "$a" timeout 30 "$NETSTAGE" tcp_stream -c -H 192.0.2.2 \
		-l 1 -q > cli.out
	wait "$SRV"
	expect_gt "$(key srv.out num_transactions)" 0 "data over the veth"
	# ...and one over lo is refused (to the veth's own address it would
	# not be: local delivery counts as arriving on the address's device).
	bound_server "$b" srv2.out
	rc=0
	ip netns exec "$b" timeout 30 "$NETSTAGE" tcp_stream -c -H 127.0.0.1 \
		-l 1 -q > cli2.out 2> cli2.err || rc=$?
	expect_eq "$rc" 1 "client status over lo"
	grep -q 'connect to 127.0.0.1:12867: Connection refused' cli2.err
	kill "$SRV" 2>/dev/null || true
	wait "$SRV" || true
}

# r.throughput is the figure the run measured: Mbit/s for a stream
# (a tcp_stream script read 0: it looked up the rr key), and not the
# printed key's two decimals; the server's (r.peer) as it printed it.
t_script_throughput_is_the_measured_figure() {
	local wl key

	printf '%s\n' 'local r = run()' \
		'print(string.format("lua %.6f %s %.6f", r.throughput,' \
		'  r.keys.throughput or r.keys.throughput_Mbps,' \
		'  r.peer.throughput))' > tput.lua
	for wl in tcp_stream tcp_rr udp_rr; do
		key=throughput
		[ $wl = tcp_stream ] && key=throughput_Mbps
		ns $wl --local -l 1 -q --script tput.lua > out 2> err ||
			fail "$wl: $(cat err)"
		python3 - "$wl" "$(grep '^lua ' out)" \
			"$(key out server.$key)" <<'PY' || fail "$wl: $(cat out)"
import sys
wl, line, server = sys.argv[1], sys.argv[2].split(), float(sys.argv[3])
lua, printed, peer = float(line[1]), float(line[2]), float(line[3])
assert lua > 0, line
# The printed key is the figure to two decimals; Lua's is the figure,
# the server's too (its model came whole, not as printed text).
assert abs(lua - printed) <= 0.005 + 1e-9, line
assert abs(peer - server) <= 0.005 + 1e-9, (peer, server)
assert peer != round(peer, 2), (peer, "rounded as printed")
print(wl, "r.throughput", lua, "printed", printed)
PY
	done
}

# Every documented field of r = run() and r.peer is the figure the JSON
# document of the same run holds (at the JSON's precision), workload by
# workload: one results model read by both, nothing printed and parsed
# back on the way. Traced where the workload traces.
t_script_fields_equal_the_json() {
	local wl trace

	for wl in tcp_rr udp_rr tcp_crr tcp_stream udp_stream; do
		trace=
		case $wl in *_rr) trace=--trace ;; esac
		ns $wl --local -l 1 -q $trace --script "$LUA_FIELDS" \
			--json doc.json --output-format kv > out 2> err ||
			fail "$wl: $(cat err)"
		python3 "$CHECK_LUA_FIELDS" out doc.json > check.out ||
			fail "$wl: $(cat check.out)"
		echo "$wl: $(tail -1 check.out)"
	done
}

t_script_tcp_ack_interval() {
	ns tcp_stream --local -l 1 -q -F 2 -T 2 -o throughput_Mbps \
		--script "$EX/tcp-ack-interval.lua" > out
	# collect() brings one histogram per worker back, and each worker's
	# recverr hook read ACK timestamps off its own error queue.
	expect_eq "$(grep -c '^worker [0-9]' out)" 2 "worker sections"
	for k in 1 2; do
		n=$(awk -v k="worker $k" '$0 == k {f=1; next} /^(worker|all)/ {f=0}
			f && /->/ {s += $5} END {print s + 0}' out)
		expect_gt "$n" 0 "ACK intervals of worker $k"
	done
}

t_script_stage_report_adds_up() {
	need_root
	ns tcp_rr --local -l 1 -q --trace --trace-max-records 10000000 \
		--script "$EX/stage-report.lua" \
		> out 2> err
	n=$(key out client.trace_transactions)
	expect_gt "$n" 0 "traced transactions"
	grep -qx "stages add up: $n of $n records" out ||
		fail "$(grep 'add up' out), expected $n of $n"
	grep -qx "client side, $n traced transactions" out
	# Every stage row counts every traced transaction.
	for s in send_call tcp_tx remote softirq_rx tcp_rx wakeup recv_call \
		 to_app; do
		expect_eq "$(awk -v s=$s '$1 == s {print $2}' out)" "$n" "$s count"
	done
}

t_script_stage_hist_and_tail() {
	need_root
	STAGE=wakeup ns tcp_rr --local -l 1 -q --trace \
		--script "$EX/stage-hist.lua" > hist.out 2> err
	n=$(key hist.out client.trace_transactions)
	grep -qx "wakeup ($n transactions)" hist.out
	grep -qx "  total $n" hist.out
	ns tcp_rr --local -l 1 -q --trace --trace-max-records 10000000 \
		--script "$EX/tail-stage.lua" \
		> tail.out 2> err
	n=$(key tail.out client.trace_transactions)
	grep -Eq "^p99 of the latency: [0-9.]+ us \([0-9]+ of $n records\)$" \
		tail.out || fail "$(grep '^p99' tail.out), expected of $n"
	stage=$(awk '/^dominant:/{print $2}' tail.out)
	grep -q "^$stage " tail.out || fail "dominant stage '$stage' not listed"
	# The threshold is the run's p99 (every transaction), as printed.
	python3 - tail.out <<'PY'
import re, sys
text = open(sys.argv[1]).read()
cut = float(re.search(r"^p99 of the latency: ([0-9.]+) us", text, re.M).group(1))
key = float(re.search(r"^client.latency_p99_us=([0-9.]+)$", text, re.M).group(1))
k, n = map(int, re.search(r"\(([0-9]+) of ([0-9]+) records\)", text).groups())
assert abs(cut - key) <= 0.006, (cut, key)
assert 0 < k <= n, (k, n)
PY
}

t_script_per_flow_sums_to_records() {
	need_root
	ns tcp_rr --local -l 1 -q -F 4 -T 2 --trace \
		--trace-max-records 10000000 --trace-records=tr.csv \
		--script "$EX/per-flow.lua" > out 2> err
	n=$(key out client.trace_transactions)
	grep -qx "flows: 4, records: $n" out ||
		fail "$(grep '^flows:' out), expected 4 flows, $n records"
	# The script takes the records over only after the CSV has them.
	expect_eq $(($(wc -l < tr.csv) - 1)) "$n" "records in the CSV"
	rows=$(awk '$1 ~ /^[0-9]+$/ {s += $3} END {print s}' out)
	expect_eq "$rows" "$n" "rows add up"
	# Flow i runs on thread i % 2.
	expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1 % 2 == $2}' out | sort -u)" \
		1 "flow threads"
}

# hooked SIDE_OUT: "key=value" pairs of the hooks line, one per line.
hooked() {
	grep '^hooks ' "$1" | tr ' ' '\n' | grep =
}

# Pass-through hooks carry every byte the side counts, on each side.
check_hook_bytes() {
	local out=$1

	expect_eq "$(key <(hooked "$out") bytes_in)" "$(key "$out" bytes_read)" \
		"$out: bytes through recv hooks"
	expect_eq "$(key <(hooked "$out") bytes_out)" \
		"$(key "$out" bytes_written)" "$out: bytes through send hooks"
	expect_gt $(($(key "$out" bytes_read) + $(key "$out" bytes_written))) 0 \
		"$out: bytes"
}

t_script_hooks_carry_every_byte() {
	local w

	for w in tcp_rr udp_rr tcp_stream udp_stream; do
		start_server $w -T 2 --script "$COUNT_HOOKS"
		ns $w -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -F 2 -T 2 \
			--script "$COUNT_HOOKS" > $w.out
		wait "$SRV_PID"
		cp "$SRV_OUT" $w.srv
		check_hook_bytes $w.out
		check_hook_bytes $w.srv
		# One state per worker; sockets hooked and closed in pairs.
		expect_eq "$(key <(hooked $w.out) workers)" 2 "$w client workers"
		expect_eq "$(key <(hooked $w.out) socket)" 2 "$w client sockets"
		expect_eq "$(key <(hooked $w.out) close)" 2 "$w client closes"
		expect_eq "$(key <(hooked $w.srv) socket)" 2 "$w server sockets"
		expect_eq "$(key <(hooked $w.srv) close)" 2 "$w server closes"
	done
}

t_script_tcp_crr_hooks_every_connection() {
	start_server tcp_crr --script "$COUNT_HOOKS"
	ns tcp_crr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -F 2 \
		--script "$COUNT_HOOKS" > out
	wait "$SRV_PID"
	s=$(key <(hooked out) socket)
	expect_eq "$(key <(hooked out) close)" "$s" "every socket closed"
	expect_le "$(key out num_transactions)" "$s" "a socket per transaction"
	check_hook_bytes out
	check_hook_bytes "$SRV_OUT"
}

# run()'s result: the server's keys under --local (r.peer), the
# intervals, a histogram of the script's own, record times from the
# start, and errors that name what was wrong (issue 12).
t_script_results_api() {
	need_root
	# Every record kept: the script holds each to be a sample's (a fast
	# run traces past the default --trace-max-records, and then some
	# are the slowest).
	ns tcp_rr --local -l 2 -q --trace --script "$RESULTS_API" \
		--trace-max-records 10000000 --output-format kv > out 2> err ||
		fail "$(cat err)"
	expect_eq "$(grep '^peer server ' out)" \
		"peer server $(key out server.num_transactions) integer" "peer"
	expect_eq "$(grep '^peer trace ' out)" \
		"peer trace $(key out server.trace_transactions) $(key out server.stage_app_count) $(key out server.trace_records_kept)" \
		"peer trace"
	expect_eq "$(grep '^intervals ' out)" \
		"intervals $(key out client.num_samples)" "intervals"
	expect_eq "$(grep '^hist ' out)" "hist 4 5.0 7.0 7.0" "histogram"
	grep -q "^bad add false .*h:add: a value is 0 or more us" out
	grep -q "^bad stamp false .*rec:stamp: no boundary 'FOO' (one of APP_SEND, TCP_SEND, " out
	python3 - out <<'PY'
import re, sys
text = open(sys.argv[1]).read()
n, first, last = re.search(r"^records (\d+) from ([0-9.]+) to ([0-9.]+) s$",
                           text, re.M).groups()
kept = re.search(r"^client.trace_records_kept=(\d+)$", text, re.M).group(1)
assert n == kept, (n, kept)
# From the test's start, not the epoch or the boot: a sample of the
# whole run spans most of its 2 s (how close to either end depends on
# the machine's load, not on this).
assert 0 <= float(first) < 0.5 and 1.5 < float(last) < 2.5, (first, last)
PY
}
