# Servers netstage did not write (sourced by run.sh): memcached and socat
# from Debian, driven by --raw and watched by `netstage observe`. Counts
# are checked against the server's own counters.

MC_STATS="python3 $PWD/tests/func/mc_stats.py"
PROM_CHECK="python3 $PWD/tests/func/prom_check.py"

# start_memcached [udp]: memcached on DPORT (TCP), and with "udp" on
# CPORT (UDP) too; MC_PID; killed when the test's subshell exits.
start_memcached() {
	local udp=0

	command -v memcached > /dev/null ||
		{ echo "no memcached"; exit "$SKIP"; }
	next_ports
	[ "${1:-}" != udp ] || udp=$CPORT
	memcached -u nobody -l 127.0.0.1 -p "$DPORT" -U "$udp" \
		-t "${MC_THREADS:-1}" &
	MC_PID=$!
	trap 'kill $MC_PID 2>/dev/null; wait $MC_PID 2>/dev/null' EXIT
	wait_port "$DPORT"
	printf 'set k 0 0 5\r\nhello\r\nquit\r\n' |
		socat -t 2 - "TCP:127.0.0.1:$DPORT" | grep -q STORED
}

# start_observer ARGS...: `netstage observe --port DPORT` in the
# background (obs.out, obs.err), once its programs are attached.
start_observer() {
	ns observe --port "$DPORT" --logtostderr "$@" > obs.out 2> obs.err &
	for i in $(seq 100); do
		grep -q 'observing pid' obs.err 2>/dev/null && return 0
		sleep 0.05
	done
	fail "observe never started"
}

# load_memcached ARGS...: --raw gets of k in the background (load.out),
# back once its connections are established.
load_memcached() {
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		--response-end 'END\r\n' -q "$@" > load.out &
	LOAD_PID=$!
	for i in $(seq 100); do
		ss -Htn state established "dport = :$DPORT" | grep -q . &&
			return 0
		sleep 0.05
	done
	fail "the load never connected"
}

# stop_load: end a load started for longer than the test needs it (an
# observer's start takes what the machine's load decides).
stop_load() {
	pkill -TERM -P "$LOAD_PID" 2>/dev/null || true
	wait "$LOAD_PID" 2>/dev/null || true
}

# mc_stat NAME: memcached's own counter NAME.
mc_stat() {
	printf 'stats\r\nquit\r\n' | socat -t 2 - "TCP:127.0.0.1:$DPORT" |
		tr -d '\r' | awk -v k="$1" '$2 == k { print $3 }'
}

# The response to "get k": VALUE line, data, END.
GET_K='get k\r\n'
GET_K_SIZE=25

# Every get the client saw answered was memcached's, and at most one
# per request in flight more (sent as the test ended).
check_gets() {
	local out=$1 inflight=$2 gets=$3 hits=$4 c

	c=$(key "$out" num_transactions)
	expect_gt "$c" 0 "client transactions"
	expect_le "$c" "$gets" "client <= memcached's cmd_get"
	expect_le "$gets" $((c + inflight)) "cmd_get <= client + in flight"
	expect_eq "$hits" "$gets" "get_hits = cmd_get"
	expect_eq "$(key "$out" raw_unexpected_bytes)" 0 "unexpected bytes"
	expect_eq "$(key "$out" raw_closed_flows)" 0 "flows closed"
	expect_eq "$(key "$out" raw_silent_flows)" 0 "silent flows"
	# A netstage server's keys are absent, not zero.
	! grep -q '^remote_' "$out" || fail "remote_ keys with --raw"
	! grep -q '^num_mismatched=' "$out" || fail "num_mismatched with --raw"
}

t_raw_client_drives_memcached() {
	local g0 h0 spec

	start_memcached
	# Terminated responses, sized responses checked against their end,
	# pipelined requests, and a connection per request.
	for spec in "tcp_rr -F 2 --response-end END\r\n:2" \
		    "tcp_rr -R $GET_K_SIZE --response-end END\r\n:1" \
		    "tcp_rr -F 2 -T 2 --burst 8 --response-end END\r\n:16" \
		    "tcp_crr -F 2 --response-end END\r\n:2"; do
		g0=$(mc_stat cmd_get)
		h0=$(mc_stat get_hits)
		# shellcheck disable=SC2086
		ns ${spec%:*} --raw -H 127.0.0.1 -P "$DPORT" \
			--request-data "$GET_K" -l 1 -q > out
		check_gets out "${spec##*:}" $(($(mc_stat cmd_get) - g0)) \
			$(($(mc_stat get_hits) - h0))
	done
	expect_eq "$(key out workload)" tcp_crr "last workload"
	grep -q '^raw_bad_end_responses=' out && fail "bad_end without -R"
	# Open loop, repeated tests and the output files of any client.
	g0=$(mc_stat cmd_get)
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		--response-end 'END\r\n' --rate 2000 -F 2 -l 1 -i 2,2 -q \
		--json r.json -Asamples.csv > out 2> err
	expect_eq "$(key out iterations_run)" 2 "iterations"
	expect_le "$(key out rate_behind)" 0 "open loop kept up"
	python3 - r.json samples.csv <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))["results"]
assert r["raw_unexpected_bytes"] == 0 and "remote_num_transactions" not in r, r
rows = list(csv.DictReader(open(sys.argv[2])))
# A row per flow and interval; the last interval's counts are cumulative.
assert sorted({x["flow_id"] for x in rows}) == ["0", "1"], rows
last = [x for x in rows if x["time"] == rows[-1]["time"]]
assert 0 < sum(int(x["transactions"]) for x in last) <= r["num_transactions"]
PY
	# The first test's gets reached memcached too.
	expect_gt $(($(mc_stat cmd_get) - g0)) \
		$(($(key out num_transactions) + 1000)) "both tests' gets"
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R 24 --response-end 'END\r\n' -l 1 -q > out 2> err || true
	# One byte short: responses misframed, each seen not to end in END.
	expect_gt "$(key out raw_bad_end_responses)" 0 "misframed responses"
	grep -q 'did not end with --response-end' err
}

t_raw_udp_client_drives_memcached_udp() {
	local g0 d c

	start_memcached udp
	g0=$(mc_stat cmd_get)
	# memcached's UDP frame: an 8-byte header, then the command.
	ns udp_rr --raw -H 127.0.0.1 -P "$CPORT" -l 1 -q \
		--request-data '\x00\x01\x00\x00\x00\x01\x00\x00get k\r\n' \
		> out
	d=$(($(mc_stat cmd_get) - g0))
	c=$(key out num_transactions)
	expect_gt "$c" 0 "udp transactions"
	expect_le "$c" "$d" "client <= memcached's cmd_get"
	expect_le "$d" $((c + $(key out num_lost) + $(key out num_late) + 1)) \
		"cmd_get <= answered + lost + late + in flight"
	expect_eq "$(key out raw_unexpected_bytes)" 0 "unexpected bytes"
}

t_raw_bad_servers_are_named() {
	local p rc

	next_ports
	p=$DPORT
	# Answers each request with two lines where one was asked for;
	# reads and never answers; closes at once.
	printf '#!/bin/sh\nwhile read -r l; do printf "a\\nb\\n"; done\n' \
		> two.sh
	printf '#!/bin/sh\ncat > /dev/null\n' > mute.sh
	printf '#!/bin/sh\nexit 0\n' > close.sh
	chmod +x two.sh mute.sh close.sh
	socat TCP-LISTEN:$p,reuseaddr,fork EXEC:./two.sh &
	trap 'kill %1 %2 %3 2>/dev/null' EXIT
	socat TCP-LISTEN:$((p + 2)),reuseaddr,fork EXEC:./mute.sh &
	socat TCP-LISTEN:$((p + 4)),reuseaddr,fork EXEC:./close.sh &
	wait_port $p
	wait_port $((p + 2))
	wait_port $((p + 4))
	ns tcp_rr --raw -H 127.0.0.1 -P $p --request-data 'x\n' \
		--response-end '\n' -l 1 -q > out 2> err
	expect_gt "$(key out num_transactions)" 0 "answered transactions"
	expect_eq "$(key out raw_unexpected_bytes)" \
		$((2 * $(key out num_transactions))) "the second line's bytes"
	grep -q 'bytes no request asked for' err
	# -R alone: the second line, there before the next request is
	# sent, is not that request's response.
	ns tcp_rr --raw -H 127.0.0.1 -P $p --request-data 'x\n' -R 2 -l 1 -q \
		> out 2> err
	expect_gt "$(key out num_transactions)" 0 "answered transactions, -R"
	expect_eq "$(key out raw_unexpected_bytes)" \
		$((2 * $(key out num_transactions))) "the second line's bytes, -R"
	grep -q 'bytes no request asked for' err
	# Silent: counted and named, the run bounded by -l, status 1.
	rc=0
	ns tcp_rr --raw -H 127.0.0.1 -P $((p + 2)) --request-data 'x' -R 1 \
		--rr-timeout 200 -l 1 -q > out 2> err || rc=$?
	expect_eq "$rc" 1 "exit status, silent server"
	expect_eq "$(key out raw_silent_flows)" 1 "silent flows"
	expect_eq "$(key out error)" "the server answered no request" "error"
	grep -q 'went silent on 1 of 1 flows' err
	# A terminator that never comes: silent, counted, bounded.
	rc=0
	ns tcp_rr --raw -H 127.0.0.1 -P $p --request-data 'x\n' \
		--response-end 'zzz' --rr-timeout 200 -l 1 -q > out 2> err ||
		rc=$?
	expect_eq "$rc" 1 "exit status, no terminator"
	expect_eq "$(key out raw_silent_flows)" 1 "silent flows, no terminator"
	rc=0
	ns tcp_rr --raw -H 127.0.0.1 -P $((p + 4)) --request-data 'x' -R 1 \
		-l 1 -q > out 2> err || rc=$?
	expect_eq "$rc" 1 "exit status, closing server"
	expect_eq "$(key out raw_closed_flows)" 1 "closed flows"
	grep -q 'closed 1 of 1 flows' err
}

t_raw_bad_input_exits_2() {
	local args rc

	for args in "--raw -H 127.0.0.1 --request-data x" \
		    "--raw -H 127.0.0.1 -R 1" \
		    "--raw -H 127.0.0.1 --request-data x\\q -R 1" \
		    "--raw -H 127.0.0.1 --request-file /nonexistent -R 1" \
		    "-c -H 127.0.0.1 --request-data x -R 1" \
		    "--raw --local --request-data x -R 1" \
		    "--raw -H 127.0.0.1 --request-data x --response-end y --trace"; do
		rc=0
		# shellcheck disable=SC2086
		ns tcp_rr $args > out 2> err || rc=$?
		expect_eq "$rc" 2 "exit status of: $args"
		expect_eq "$(wc -l < err)" 1 "one line for: $args"
	done
	grep -q 'give -R' err
	# Files that would block a reader: refused or bounded, never a hang.
	mkfifo ff
	expect_usage_error "option --request-file: ff: empty" \
		tcp_rr --raw -H 127.0.0.1 --request-file ff -R 1
	expect_usage_error "option --auth-key: ff: shorter than 16 bytes" \
		tcp_rr -c -H 127.0.0.1 --auth-key ff
	sleep 30 > ff &
	expect_usage_error "option --request-file: ff: nothing written to it for 5 s" \
		tcp_rr --raw -H 127.0.0.1 --request-file ff -R 1
	kill %1
	expect_usage_error "option --request-file: /dev/zero: larger than 64 MiB" \
		tcp_rr --raw -H 127.0.0.1 --request-file /dev/zero -R 1
}

t_observe_memcached_agrees_with_its_stats() {
	need_root
	local g0 h0 o d

	start_memcached
	g0=$(mc_stat cmd_get)
	h0=$(mc_stat get_hits)
	start_observer -l 4 --trace-records obs.csv
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R "$GET_K_SIZE" --response-end 'END\r\n' -F 2 -l 1 -q \
		--trace > out 2> err
	wait %2
	o=$(key obs.out num_transactions)
	d=$(($(mc_stat cmd_get) - g0))
	check_gets out 2 "$d" $(($(mc_stat get_hits) - h0))
	# The observer saw every get memcached served, and nothing else.
	expect_eq "$o" "$d" "observed = memcached's cmd_get"
	expect_eq "$(key obs.out observed_pid)" "$MC_PID" "observed pid"
	expect_eq "$(key obs.out trace_incomplete)" 0 "incomplete"
	expect_eq "$(key obs.out trace_transactions)" "$o" "traced"
	expect_eq "$(key out trace_incomplete)" 0 "client incomplete"
	# Stages add up to the server's span, record by record.
	python3 - obs.csv "$o" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
stages = ["softirq_rx", "tcp_rx", "wakeup", "recv_call", "app", "tcp_tx",
          "send_return"]
for r in rows:
    span = int(r["SEND_RET"]) - int(r["NETIF_RX"])
    assert sum(int(r[s]) for s in stages) == span, r
    assert r["side"] == "observe", r["side"]
EOF
}

# Also: observe, which cannot know how many requests its server keeps
# in flight, loads its own hand-off program (its walk a bpf_loop()) and
# the plain wake-up one, never the many_ ones of a --rate side.
t_observe_picks_up_connections_already_open() {
	need_root
	local o progs

	start_memcached
	load_memcached -F 2 -l 50
	ns observe --port "$DPORT" -l 1 > obs.out 2> obs.err &
	progs=$(loaded_progs $! "^$NETSTAGE observe --port $DPORT")
	wait $!
	stop_load
	expect_eq "$(echo "$progs" |
		grep -x 'sk_data_ready\|[a-z]*_net_dev_start_xmit' | tr '\n' ' ')" \
		"obs_net_dev_start_xmit sk_data_ready " \
		"observe's wake-up and hand-off programs (of $(echo $progs))"
	o=$(key obs.out num_transactions)
	expect_gt "$o" 0 "observed transactions"
	# Met mid-stream, each connection is timed from its next request.
	expect_eq "$(key obs.out trace_incomplete)" 0 "incomplete"
}

t_observe_bad_input() {
	need_root
	local rc sleeper

	next_ports
	rc=0
	ns observe --port "$DPORT" -l 1 > out 2> err || rc=$?
	expect_eq "$rc" 1 "nothing listens: status"
	grep -q "nothing listens on TCP port $DPORT" err
	expect_eq "$(wc -l < err)" 1 "one line"
	[ ! -s out ] || fail "output of a run that never started: $(head -3 out)"
	rc=0
	ns observe -l 1 > out 2> err || rc=$?
	expect_eq "$rc" 2 "no --port: status"
	# A process that exits mid-run: what was measured, error=, status 1.
	start_memcached
	sleep 2 &
	sleeper=$!
	rc=0
	ns observe --port "$DPORT" --pid "$sleeper" -l 10 > out 2> err ||
		rc=$?
	expect_eq "$rc" 1 "pid exits: status"
	expect_eq "$(key out error)" "the observed process exited" "error"
	grep -q '^trace_transactions=' out
	# Not root: one line, status 1.
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$NETSTAGE" observe --port "$DPORT" -l 1 > out 2> err || rc=$?
	expect_eq "$rc" 1 "not root: status"
	grep -q 'needs root' err
	# --listen: not an address (status 2), or one taken (status 1).
	rc=0
	ns observe --port "$DPORT" --listen 127.0.0.1 > out 2> err || rc=$?
	expect_eq "$rc" 2 "--listen ADDR: status"
	expect_eq "$(cat err)" "netstage: option --listen: '127.0.0.1' is not ADDR:PORT ([ADDR]:PORT for IPv6, PORT 1-65535)" "--listen ADDR"
	rc=0
	ns observe --port "$DPORT" --listen "127.0.0.1:$DPORT" -l 1 > out \
		2> err || rc=$?
	expect_eq "$rc" 1 "--listen taken: status"
	expect_eq "$(grep -v '^libbpf' err)" "netstage observe: --listen 127.0.0.1:$DPORT: Address already in use" "--listen taken"
	[ ! -s out ] || fail "output of a refused --listen: $(head -3 out)"
}

t_observe_outputs_every_side_has() {
	need_root
	local o

	start_memcached
	load_memcached -l 50
	# Every record kept, whatever the rate: the script counts them all.
	ns observe --port "$DPORT" -l 2 -Asamples.csv --json obs.json \
		--script "$EX/stage-report.lua" --trace-max-records 1000000 \
		> obs.out 2> obs.err
	ns observe --port "$DPORT" -l 1 -q \
		-o num_transactions,stage_wakeup_p99_us,trace_cost_user_ns \
		> sel.out
	# The summary names observe once, and no flows it does not have;
	# ten records kept of many are a sample, the slowest only if any.
	ns observe --port "$DPORT" -l 1 --output-format human \
		--trace-records few.csv --trace-max-records 10 > hum.out 2> hum.err
	stop_load
	grep -q '^netstage observe: [0-9]* transactions, [0-9.]* s$' hum.out ||
		fail "summary: $(head -1 hum.out)"
	grep -q -e ': a uniform sample of them (' \
		-e ': the [1-9][0-9]* slowest and a uniform sample of the rest (' \
		hum.err || fail "records: $(grep -- --trace-max-records hum.err)"
	o=$(key obs.out num_transactions)
	expect_gt "$o" 0 "observed"
	expect_eq "$(wc -l < sel.out)" 3 "-o: three keys"
	grep -q '^stage_wakeup_p99_us=' sel.out
	# Its merging of records is timed: a cost in user space.
	expect_gt "$(key sel.out trace_cost_user_ns)" 0 "merge cost"
	# The script saw the observer's results and every record.
	grep -q "^observe side, $o traced transactions" obs.out
	grep -q "stages add up: $o of $o records" obs.out
	python3 - samples.csv obs.json "$o" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, len(rows)
assert int(rows[-1]["transactions"]) == int(sys.argv[3]), rows[-1]
assert "stage_wakeup_mean" in rows[0]
assert rows[-1]["trace_lost"] == "0", rows[-1]
d = json.load(open(sys.argv[2]))
assert d["netstage"].pop("version"), d
assert d["netstage"] == {"workload": "observe", "role": "observe"}, d
r = d["results"]
assert r["num_transactions"] == int(sys.argv[3]), r
assert r["stage_app_count"] == r["trace_transactions"], r
assert sum(i["transactions"] for i in d["intervals"]) == int(sys.argv[3])
PY
}

# Sixteen flows' records come faster than observe merges them, and the
# ring never empties: observe reads it in batches between looks at the
# clock, so it ends on time, within one interval, every interval said.
t_observe_keeps_its_length_under_load() {
	need_root
	MC_THREADS=2 start_memcached
	load_memcached -F 16 -T 2 -l 9
	# On memcached's and the load's CPUs: the reader falls behind.
	taskset -a -pc 0 "$MC_PID" > /dev/null
	taskset -c 0 timeout -k 5 "$BOUND" "$NETSTAGE" observe --port "$DPORT" \
		-l 4 > obs.out 2> obs.err
	wait %2
	expect_eq "$(grep -c ' trans/s ' obs.err)" 4 "interval lines"
	awk -F= '$1 == "duration_s" && $2 < 5 { ok = 1 } END { exit !ok }' \
		obs.out || fail "observe -l 4 took $(key obs.out duration_s) s"
}

# memcached -t 2 under 16 flows of gets on 2 threads (70,000 a second
# here): observe loses nothing, and its count of every interval is
# memcached's own within 0.1%: cmd_get, which the test asks for over
# and over, bounded at each interval's end by the last answer before
# it and the first question after it (about 90 gets apart), and the
# test's stats requests, which observe counts too.
t_observe_counts_each_interval_as_memcached_does() {
	need_root

	MC_THREADS=2 start_memcached
	load_memcached -F 16 -T 2 -l 12
	# The sampler runs until observe is done: observe's 6 s start
	# when its programs are loaded, which under this load has taken
	# longer than 2.7 s, and twice left its last interval past a
	# sampler of a set length (12 s, then 16 s). After the load
	# memcached's count stands still, as observe's does.
	$MC_STATS sample "$DPORT" 60 > stats &
	local sampler=$! i
	# Its first answer before observe's first interval: under this
	# load the sampler took longer than 0.3 s to start.
	for i in $(seq 200); do
		[ -s stats ] && break
		sleep 0.05
	done
	timeout -k 5 "$BOUND" "$NETSTAGE" observe --port "$DPORT" -l 6 \
		--all-samples=s.csv > obs.out 2> obs.err
	sleep 0.2
	kill -TERM "$sampler"
	wait %2 %3
	expect_eq "$(key obs.out trace_lost)" 0 "lost"
	expect_eq "$(grep -c 'events lost in BPF' obs.err)" 0 "intervals that lost"
	$MC_STATS check stats s.csv 1 0.001 > check.out ||
		fail "$(cat check.out)"
	expect_eq "$(grep -c '^interval ending' check.out)" 6 "intervals"
	expect_eq "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
				       if ($i == "trace_lost") c = i }
			     NR > 1 { print $c }' s.csv | sort -u)" 0 \
		"trace_lost column"
}

# observe --listen as a service, scraped by the real Prometheus (1 s):
# once it holds the run's every transaction, histogram_quantile(0.99)
# of each stage is observe's own p99 within one bucket, and each
# stage's count is observe's traced transactions.
t_observe_serves_metrics_to_prometheus() {
	need_root
	command -v prometheus > /dev/null || { echo "no prometheus"; exit "$SKIP"; }
	local mc mport pport prom i total at

	start_memcached
	mc=$DPORT
	next_ports
	mport=$CPORT
	pport=$DPORT
	DPORT=$mc
	start_observer --listen "127.0.0.1:$mport" -q --json obs.json
	printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n' > prom.yml
	printf '  - job_name: netstage_observe\n    static_configs:\n' >> prom.yml
	printf "      - targets: ['127.0.0.1:%s']\n" "$mport" >> prom.yml
	timeout -k 5 "$BOUND" prometheus --config.file=prom.yml \
		--storage.tsdb.path=tsdb --web.listen-address="127.0.0.1:$pport" \
		--log.level=warn > prom.log 2>&1 &
	prom=$!
	# Expanded now: the trap runs after the function's locals are gone
	# (with $prom empty it waited out Prometheus's 60 s bound).
	trap "kill $MC_PID $prom 2>/dev/null; wait" EXIT
	for i in $(seq 100); do
		$PROM_CHECK up "127.0.0.1:$pport" 2> /dev/null && break
		sleep 0.2
	done
	$PROM_CHECK up "127.0.0.1:$pport" || fail "Prometheus never scraped"
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R "$GET_K_SIZE" --response-end 'END\r\n' -F 4 -l 2 -q > out
	# No more traffic: what observe serves now is what it will print.
	total=$(python3 -c "import urllib.request as u; print([l.split()[-1]
		for l in u.urlopen('http://127.0.0.1:$mport/metrics').read()
		.decode().splitlines() if l.startswith(
		'netstage_observe_transactions_total')][0])")
	expect_gt "$total" 0 "transactions served"
	for i in $(seq 50); do
		$PROM_CHECK total "127.0.0.1:$pport" "$total" && break
		sleep 0.2
	done
	# The queries below ask as of now, while observe still serves.
	at=$(date +%s.%N)
	# As systemd stops a service (a background job ignores SIGINT).
	pkill -TERM -f "netstage observe --port $DPORT --logtostderr --listen"
	wait %2 || fail "observe exited with status $?"
	expect_eq "$(key obs.out num_transactions)" "$total" "observe's count"
	$PROM_CHECK p99 "127.0.0.1:$pport" obs.out "$at" > check.out ||
		fail "$(cat check.out)"
	cat check.out
	# Until stopped, it keeps no per-interval history: Prometheus does.
	python3 -c "import json, sys
d = json.load(open('obs.json'))
assert d['intervals'] == [], d['intervals'][:3]
assert d['results']['num_transactions'] == $total, d['results']"
}

# A connection open before observe started is timed from its second
# request on (the first skipped, and counted so); a response still open
# as it stops (no next read or close has ended it: here each
# connection's last) is sent by the walk over the sockets, and counts.
# Transactions and skipped add up to memcached's gets.
t_observe_counts_every_request() {
	need_root
	local g0 g1

	start_memcached
	g0=$(mc_stat cmd_get)
	python3 - "$NETSTAGE" "$DPORT" > late.out 2>&1 <<'PY' ||
import socket, subprocess, sys
netstage, port = sys.argv[1], int(sys.argv[2])
def get(s):
    s.sendall(b"get k\r\n")
    got = b""
    while not got.endswith(b"END\r\n"):
        got += s.recv(4096)
old = socket.create_connection(("127.0.0.1", port))
get(old)
p = subprocess.Popen([netstage, "observe", "--port", str(port), "-l", "2",
                      "-q", "--logtostderr"], stdout=open("obs.out", "w"),
                     stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    if "observing pid" in line:
        break
for _ in range(2):
    get(old)
new = socket.create_connection(("127.0.0.1", port))
for _ in range(3):
    get(new)
sys.exit(p.wait())
PY
		fail "$(cat late.out obs.out)"
	g1=$(mc_stat cmd_get)
	expect_eq "$(key obs.out num_transactions)" 4 "transactions"
	expect_eq "$(key obs.out trace_incomplete)" 0 "incomplete"
	expect_eq "$(key obs.out observed_requests_skipped)" 1 "skipped"
	expect_eq "$(key obs.out observed_responses_flushed)" 2 "flushed"
	expect_eq $((g1 - g0 - 1)) 5 "memcached's gets while observed"
}

# Clients that send a get and close at once, as a benchmark's client
# does at its end: the response meets a closed socket, whose RST
# resets memcached's connection inside the send. The transaction was
# served whole (memcached counted it, the response left), so it is
# timed, with the send's return.
t_observe_times_a_response_its_client_reset() {
	need_root
	local g0 g1

	start_memcached
	g0=$(mc_stat cmd_get)
	start_observer -l 2 --trace-records obs.csv
	python3 - "$DPORT" <<'PY' || fail "the closing clients"
import socket, sys
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"get k\r\n")
    s.close()
PY
	wait %2
	g1=$(mc_stat cmd_get)
	expect_eq $((g1 - g0)) 20 "memcached's gets"
	expect_eq "$(key obs.out num_transactions)" 20 "observed"
	expect_eq "$(key obs.out trace_incomplete)" 0 "incomplete"
	# Each record whole, to the send's return: stages add up to it.
	python3 - obs.csv <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 20, len(rows)
stages = ["softirq_rx", "tcp_rx", "wakeup", "recv_call", "app", "tcp_tx",
          "send_return"]
for r in rows:
    assert int(r["SEND_RET"]) > int(r["DEV_XMIT"]) > 0, r
    span = int(r["SEND_RET"]) - int(r["NETIF_RX"])
    assert sum(int(r[s]) for s in stages) == span, r
EOF
}

# /metrics with every place taken by silent peers from one address
# (64, as many as it serves at once): a scrape from another address is
# still answered, and the silent ones get no more than their share.
t_observe_metrics_answer_past_idle_peers() {
	need_root
	local mport

	start_memcached
	mport=$((DPORT + 1))
	start_observer --listen "127.0.0.1:$mport" -q -l 5
	python3 - "$mport" > scrape.out 2>&1 <<'PY' || fail "$(cat scrape.out)"
import socket, sys, time, urllib.request
port = int(sys.argv[1])
idle = []
for _ in range(64):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    idle.append(s)
for s in idle:
    s.setblocking(False)

def still_held(s):
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except ConnectionError:
        return False

# Until observe's loop has taken each from the listen queue.
for _ in range(50):
    idle = [s for s in idle if still_held(s)]
    if len(idle) <= 4:
        break
    time.sleep(0.1)
held = len(idle)
body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                              timeout=3).read().decode()
assert "netstage_observe_transactions_total" in body, body[:200]
print("silent peers held: %d of 64" % held)
assert held == 4, held
PY
	cat scrape.out
	wait %2 || fail "observe exited with status $?"
}

t_raw_framing_by_a_lua_hook() {
	local g0 h0 n

	start_memcached
	g0=$(mc_stat cmd_get)
	h0=$(mc_stat get_hits)
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R 1 -F 2 -T 2 -l 1 -q \
		--script "$EX/raw-framing.lua" > out
	n=$(key out num_transactions)
	grep -q "^framed $n responses; netstage counted $n$" out
	check_gets out 2 $(($(mc_stat cmd_get) - g0)) \
		$(($(mc_stat get_hits) - h0))
	# Each response held exactly the 25 bytes of memcached's answer.
	expect_eq "$(awk '/^worker/ { r += $3; b += $5 } END { print b - 25 * r }' out)" \
		0 "bytes per response"
}

# check_join OUT JOINED.csv CLIENT.out: every client transaction joined,
# and each joined row's stretches add up to that transaction's latency.
check_join() {
	local out=$1 joined=$2 cli=$3

	expect_eq "$(key "$out" join_transactions)" \
		"$(key "$cli" trace_transactions)" "joined = client traced"
	expect_eq "$(key "$out" join_transactions)" \
		"$(key "$cli" num_transactions)" "joined = client transactions"
	expect_eq "$(key "$out" join_latency_mean_us)" \
		"$(key "$cli" latency_mean_us)" "joined mean = client latency"
	python3 - "$joined" "$(key "$out" join_transactions)" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
for r in rows:
    parts = [int(v) for k, v in r.items() if k not in ("port", "latency")]
    assert all(p >= 0 for p in parts), r
    assert sum(parts) == int(r["latency"]), r
PY
}

t_join_raw_client_with_observed_memcached() {
	need_root

	start_memcached
	start_observer -l 4 -q --trace-records obs.csv
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R "$GET_K_SIZE" -F 2 -l 1 -q --trace --trace-records cli.csv \
		> cli.out 2> cli.err
	wait %2
	ns join cli.csv memcached=obs.csv --records joined.csv > out 2> err
	check_join out joined.csv cli.out
	grep -q '^join_memcached_app_p50_us=' out
	grep -q 'wire to memcached' err
}

# join's output: key=value lines piped (the table on stderr), the same
# keys as one JSON object, or on a terminal (--output-format human) the
# table alone, no key lines before it (issue 44).
t_join_output_formats() {
	need_root
	local rc=0

	ns tcp_rr --local -l 1 -q --trace --trace-records tr.csv > /dev/null
	ns join tr.csv server=tr.server.csv > kv 2> kv.err
	grep -q '^join_server_app_p50_us=' kv
	grep -q '= client latency' kv.err
	ns join tr.csv server=tr.server.csv --output-format json > j 2> j.err
	python3 - j kv <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["join"]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]))
assert set(d) == set(kv), set(d) ^ set(kv)
for k, v in kv.items():
    assert str(d[k]) == v or abs(float(d[k]) - float(v)) < 1e-9, (k, d[k], v)
print(f"join: {len(d)} keys alike in JSON")
PY
	ns join tr.csv server=tr.server.csv --output-format human > h 2> h.err
	grep -q '= client latency' h || fail "no table on stdout"
	! grep -q '=[0-9]' h || fail "key lines beside the table"
	expect_usage_error "--output-format yaml: kv, json, human or auto" \
		join tr.csv tr.server.csv --output-format yaml
}

# The forwarder seed: client, forwarder and server in three namespaces;
# the hops of every transaction add up to the client's latency.
forwarder_path() {
	need_root
	command -v "$1" > /dev/null || { echo "no $1"; exit "$SKIP"; }
	FWD=$1 OUT=$PWD/fw NETSTAGE=$NETSTAGE NS_TAG=t$$ \
		timeout 120 "$OLDPWD/scripts/forwarder-topology.sh" run -l 1 \
		-F 2 > fw.out 2> fw.err
	# Shown if the join falls short: which hop had fewer records.
	for f in cli fwd srv; do
		echo "$f: $(grep -E '^(trace_transactions|trace_incomplete|trace_lost)=' \
			"fw/$f.out" | tr '\n' ' ')records $(($(wc -l < "fw/$f.csv") - 1))"
	done
	# The traced client printed both ends (its server sent its
	# results over the forwarded control connection): its own keys.
	sed -n 's/^client\.//p' fw/cli.out > fw/cli.own
	check_join fw.out fw/joined.csv fw/cli.own
	grep -q '^join_fwd_in_p50_us=' fw.out
	grep -q '^join_server_wakeup_p50_us=' fw.out
	# Everything it made is gone (another lane's run may be on).
	! ip netns list | grep -qE "^nsfw-[a-z]+t$$( |$)" ||
		fail "namespaces left behind"
}

t_forwarder_socat_hops_add_up() {
	forwarder_path socat
}

t_forwarder_haproxy_hops_add_up() {
	forwarder_path haproxy
}

t_join_bad_input() {
	local rc

	rc=0
	ns join only.csv > out 2> err || rc=$?
	expect_eq "$rc" 2 "one file: status"
	expect_eq "$(wc -l < err)" 1 "one line"
	echo "a,b" > notrecords.csv
	rc=0
	ns join notrecords.csv notrecords.csv > out 2> err || rc=$?
	expect_eq "$rc" 1 "not a records file: status"
	grep -q 'notrecords.csv is no --trace-records file' err
	rc=0
	ns join missing.csv notrecords.csv > out 2> err || rc=$?
	expect_eq "$rc" 1 "missing file: status"
	grep -q 'missing.csv: No such file' err
	# A fifo nobody writes to is empty, not a wait.
	mkfifo jf
	rc=0
	ns join jf notrecords.csv > out 2> err || rc=$?
	expect_eq "$rc" 1 "a fifo with no writer: status"
	expect_eq "$(cat err)" "netstage: join: jf is empty" "a fifo with no writer"
}

# A kernel without some tracepoints: without sys_exit observe goes on
# without POLL_RET and says so; without tcp_sendmsg_locked (before 6.15)
# it cannot tell a request's end and says why.
t_observe_on_kernels_that_lack_a_tracepoint() {
	need_root
	local rc

	start_memcached
	load_memcached -l 50
	NETSTAGE_TRACE_PRETEND_MISSING=sys_exit ns observe --port "$DPORT" \
		-l 1 -q > obs.out 2> obs.err
	grep -q 'no sys_exit tracepoint: POLL_RET is not stamped' obs.err
	grep -q '^trace_hooks=.*,sys_exit:none' obs.out
	expect_gt "$(key obs.out trace_transactions)" 0 "observed"
	expect_eq "$(key obs.out trace_incomplete)" 0 "incomplete"
	expect_eq "$(key obs.out stage_wakeup_max_us)" 0.000 "wakeup"
	rc=0
	NETSTAGE_TRACE_PRETEND_MISSING=tcp_sendmsg_locked ns observe \
		--port "$DPORT" -l 1 -q > obs.out 2> obs.err || rc=$?
	expect_eq "$rc" 1 "status without tcp_sendmsg_locked"
	grep -q 'no tcp_sendmsg_locked tracepoint' obs.err
	stop_load
}

# --trace-sched on a server netstage did not write: memcached's wakeup
# (DATA_READY to POLL_RET) split like netstage's own (issue 15).
t_observe_sched_splits_memcached_wakeup() {
	need_root
	local o

	start_memcached
	start_observer -l 4 --trace-sched --trace-records obs.csv
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R "$GET_K_SIZE" --response-end 'END\r\n' -l 1 -q > out 2> err
	wait %2
	o=$(key obs.out trace_transactions)
	expect_gt "$o" 0 "observed"
	grep -q '^trace_hooks=.*sched_wakeup:tp_btf,sched_switch:tp_btf' obs.out
	python3 - obs.csv "$o" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
stages = ["softirq_rx", "tcp_rx", "busy", "wake_call", "runq", "to_user",
          "recv_call", "app", "tcp_tx", "send_return"]
for r in rows:
    span = int(r["SEND_RET"]) - int(r["NETIF_RX"])
    assert sum(int(r[s]) for s in stages) == span, r
PY
	# One get in flight on one connection: memcached's thread sleeps in
	# epoll_wait between requests, and names what held its CPU.
	$CHECK_SCHED POLL_RET --slept obs.csv > /dev/null ||
		fail "sched stages"
}

# A loss-free ring at the highest rate, a count per interval of time,
# and the scheduler's split of a wake-up: each needs the CPUs it pins.
solo t_observe_keeps_its_length_under_load \
	t_observe_counts_each_interval_as_memcached_does \
	t_observe_sched_splits_memcached_wakeup
