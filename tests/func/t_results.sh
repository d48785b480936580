# What a run prints (sourced by run.sh): samples.csv, CPU figures,
# iterations, JSON and key=value agreeing, -o, the terminal summary,
# progress lines, the options the docs list.

t_samples_csv_columns_and_rows() {
	ns tcp_rr --local -l 2 -q -F 2 -T 2 --all-samples=run.csv \
		--percentiles=50,99 > out
	head -1 run.csv > header
	expect_eq "$(cat header)" "time,tid,flow_id,bytes_read,transactions,latency_min,latency_mean,latency_max,latency_stddev,latency_p50,latency_p99,utime,stime,maxrss,minflt,majflt,nvcsw,nivcsw" "header"
	python3 - run.csv "$(key out client.num_samples)" \
		"$(key out client.num_transactions)" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
samples, total = int(sys.argv[2]), int(sys.argv[3])
assert len(rows) == 2 * samples, (len(rows), samples)
last = {}
for r in rows:
    f, t = r["flow_id"], int(r["transactions"])
    assert t >= last.get(f, 0), "cumulative counts never go down"
    last[f] = t
    assert float(r["latency_min"]) <= float(r["latency_p50"]) \
        <= float(r["latency_p99"]) <= float(r["latency_max"]), r
assert sorted(last) == ["0", "1"]
assert sum(last.values()) <= total
EOF
	# In --local mode the server's samples go beside the client's; an
	# rr server has no latency to put in columns.
	head -1 run.server.csv |
		grep -q '^time,tid,flow_id,bytes_read,bytes_written,transactions,utime,'
}

t_cpu_utilisation_and_service_demand() {
	local wl unit

	for wl in tcp_rr tcp_stream; do
		ns $wl --local -l 1 -q > out
		expect_eq "$(key out client.num_cpus)" "$(nproc)" "num_cpus"
		python3 - out <<'PY'
import sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]))
for side, other in (("client", "server"), ("server", "client")):
    util = float(kv[f"{side}.local_cpu_util"])
    assert 0 < util <= 100, util
    assert float(kv[f"{side}.local_service_demand_us"]) > 0
    # What the other side reports for us is what we measured.
    for k in ("cpu_util", "service_demand_us"):
        mine = float(kv[f"{side}.local_{k}"])
        theirs = float(kv[f"{other}.remote_{k}"])
        assert abs(mine - theirs) <= 0.011, (side, k, mine, theirs)
PY
	done
}

t_iterations_until_confident() {
	# A wide interval: met after 2 or 3 tests.
	ns tcp_rr --local -l 1 -q -i 2,3 --confidence 99,60 > out 2> err
	n=$(key out client.iterations_run)
	[ "$n" = 2 ] || [ "$n" = 3 ] || fail "iterations_run=$n"
	python3 - out <<'PY'
import sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]))
w = float(kv["client.confidence_width_percent"])
assert kv["client.confidence_met"] == ("1" if w <= 60 else "0"), kv
assert float(kv["client.throughput_mean"]) > 0
PY
	# Each side prints its results once, for the last test.
	expect_eq "$(grep -c '^client.num_transactions=' out)" 1 "client results"
	expect_eq "$(grep -c '^server.num_transactions=' out)" 1 "server results"
	# A server serves as many tests as its client asks for, -i or not.
	start_server tcp_rr
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -i 3,3 > cli.out
	wait "$SRV_PID"
	expect_eq "$(key cli.out iterations_run)" 3 "tests run"
	expect_eq "$(grep -c '^num_transactions=' "$SRV_OUT")" 1 "server results"
	expect_usage_error "is not MIN,MAX" tcp_rr -i 5,31
	# netperf's MAX,MIN order: the same pair.
	ns tcp_rr --dry-run -i 5,3 > dry
	expect_eq "$(key dry iterations)" "3,5" "-i 5,3"
	expect_usage_error "LEVEL 95 or 99" tcp_rr --confidence 90,5
}

t_json_document_matches_key_values() {
	ns tcp_rr --local -l 2 -q --json run.json --percentiles=95 > out
	python3 - run.json out <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]))
for side in ("client", "server"):
    d = doc[side]
    assert d["netstage"]["role"] == side
    assert d["options"]["test_length"] == 2
    for k, v in d["results"].items():
        want = kv[side + "." + k]
        assert str(v) == want or (v is not None and float(v) == float(want)), (k, v, want)
    assert len(d["intervals"]) == d["results"]["num_samples"]
assert doc["client"]["results"]["latency_p95_us"] > 0
assert "p99_us" in doc["client"]["intervals"][0]
EOF
	# No temporary files left behind.
	expect_eq "$(ls | grep -c tmp)" 0 "temporary files"
}

t_output_selects_keys_and_format() {
	ns tcp_rr --local -l 1 -q -o latency_p99_us,throughput > out
	expect_eq "$(cut -d= -f1 out | tr '\n' ' ')" \
		"client.latency_p99_us client.throughput server.throughput " \
		"keys in the order asked, those a side has"
	# --local: one table, a row per side, empty where a side has no key.
	ns tcp_rr --local -l 1 -q -o throughput,latency_p50_us \
		--output-format=csv > out
	expect_eq "$(sed -n 1p out)" "side,throughput,latency_p50_us" \
		"csv header"
	expect_eq "$(sed -n 3p out | cut -d, -f1,3)" "server," "server row"
	python3 -c 'import sys; float(sys.argv[1].split(",")[2])' "$(sed -n 2p out)"
	expect_eq "$(wc -l < out)" 3 "csv lines"
	ns tcp_stream --local -l 1 -q -o throughput_Mbps --output-format=human \
		> out
	grep -Eq '^client.throughput_Mbps +[0-9.]+$' out
	expect_usage_error "no result key 'thruput' in tcp_rr" tcp_rr -o thruput
	expect_usage_error "'xml' is not kv, csv, human, json or auto" tcp_rr \
		--output-format=xml
	# -o as JSON: the keys with their types.
	ns tcp_rr --local -l 1 -q -o throughput --output-format=json > out
	python3 - out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"client", "server"}, d
assert isinstance(d["client"]["throughput"], float), d
EOF
}

# On a terminal the summary; piped, key=value; --output-format json and
# csv print one document or table for both sides (issue 12).
t_output_summary_on_a_terminal() {
	timeout -k 5 "$BOUND" script -qec "$NETSTAGE tcp_rr --local -l 1 -q" \
		/dev/null < /dev/null > out
	grep -q '^netstage tcp_rr client: [0-9]* transactions, 1 flow, ' out
	grep -Eq '^  throughput  [0-9]+ transactions/s' out
	grep -Eq '^  latency     mean [0-9.]+ p50 [0-9.]+ .* us' out
	grep -q '^netstage tcp_rr server: ' out
	! grep -q '=' out || fail "key=value lines on a terminal"
	# Asked for, kv on a terminal too.
	timeout -k 5 "$BOUND" script -qec \
		"$NETSTAGE tcp_rr --local -l 1 -q --output-format kv" \
		/dev/null < /dev/null > out
	grep -q '^client.throughput=' out
	ns tcp_stream --local -l 1 -q --output-format human > out
	grep -Eq '^  throughput  [0-9.]+ Mbps' out
	grep -Eq 'MB written, [0-9.]+ MB read, 1 flow' out
}

t_output_json_and_csv_on_stdout() {
	ns tcp_rr --local -l 1 -q --output-format json > out
	python3 - out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["client"]["netstage"]["role"] == "client", d.keys()
assert d["server"]["netstage"]["role"] == "server"
assert d["client"]["options"]["test_length"] == 1
assert d["client"]["results"]["num_transactions"] > 0
assert "waterfall" not in d
EOF
	ns tcp_rr --local -l 1 -q --output-format csv > out
	python3 - out <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["side"] for r in rows] == ["client", "server"], rows
assert int(rows[0]["num_transactions"]) > 0
assert rows[1]["latency_p50_us"] == "" and rows[0]["latency_p50_us"] != ""
EOF
}

t_progress_lines_and_quiet() {
	ns tcp_rr --local -l 2 > out 2> err
	expect_eq "$(grep -c '^netstage client: \[.*trans/s.*p50.*p99' err)" 2 \
		"one progress line per interval"
	ns tcp_stream --local -l 1 > out 2> err
	grep -q 'Mbps' err
	# An rr server counts transactions too: trans/s, no latency.
	next_ports
	ns tcp_rr -C "$CPORT" -P "$DPORT" > srv.out 2> srv.err &
	wait_port "$CPORT"
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -P "$DPORT" -l 2 -q > out
	wait
	expect_le 1 "$(grep -c '^netstage server: \[.*[0-9] trans/s$' srv.err)" \
		"server progress in trans/s"
	! grep -q 'Mbps' srv.err
	# A server waiting for its client says so, first (issue 44).
	expect_eq "$(head -1 srv.err)" \
		"netstage server: waiting for 1 client on control port $CPORT" \
		"the waiting line"
	ns tcp_rr --local -l 1 -q > out 2> err
	expect_eq "$(wc -c < err)" 0 "nothing on stderr with --quiet"
	# The data port printed is the one the data went to: --local's
	# server takes an ephemeral one, and a client shows the server's.
	for wl in tcp_rr udp_rr tcp_crr; do
		ns $wl --local -l 1 -q > out
		expect_eq "$(key out client.port)" "$(key out server.port)" \
			"$wl: both sides' port"
		expect_gt "$(key out client.port)" 0 "$wl: a port"
		[ "$(key out client.port)" != 12867 ] || fail "$wl: the default"
	done
	next_ports
	ns tcp_rr -C "$CPORT" -P 0 -q > srv.out 2> srv.err &
	wait_port "$CPORT"
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > out
	wait
	expect_gt "$(key out port)" 0 "an ephemeral server's port, named"
	[ "$(key out port)" != 12867 ] || fail "the client's own default"
}

t_workload_from_program_name() {
	ln -s "$NETSTAGE" tcp_stream
	timeout 10 ./tcp_stream --dry-run > out
	expect_eq "$(key out workload)" tcp_stream "workload by argv[0]"
	expect_eq "$(key out buffer_size)" 16384 "stream default buffer"
	timeout 10 ./tcp_stream --help | grep -q -- '--enable-read'
	ns tcp_rr --help | grep -q -- '--request-size'
	ns --help | grep -q 'udp_stream'
	# What built it: --version, and a version key with the options.
	ns --version > version
	grep -Eq '^netstage [0-9a-z.-]+$' version
	expect_eq "$(key out version)" "$(head -1 version | cut -d' ' -f2)" \
		"version key"
	# What it runs with, and what this kernel offers tracing: every
	# hook's tracepoint named, a missing one said to be missing.
	expect_eq "$(sed -n 2p version | sed -E 's/[0-9.]+/N/g')" \
		"libbpf vN, Lua N" "libraries"
	grep -Eq '^kernel [^ ]+: (BTF; fentry (taken|refused|not known)|no BTF)' \
		version || fail "no kernel line: $(sed -n 3p version)"
	expect_eq "$(sed -n 4p version | wc -w)" 12 "tracepoints line"
	NETSTAGE_TRACE_PRETEND_MISSING=sched_switch ns --version |
		grep -q ' sched_switch (missing) ' ||
		fail "a missing tracepoint is not said to be"
}

# docs/usage.md has a row for every option --help lists, of every
# workload: the option table and the docs stay in step.
t_docs_list_every_option() {
	local w missing

	for w in tcp_rr tcp_crr udp_rr tcp_stream udp_stream observe; do
		ns $w --help |
			sed -nE 's/^ +(-[a-zA-Z0-9], )?--([a-z0-9-]+).*/\2/p'
	done | tr - _ | grep -vx help | sort -u > opts
	[ "$(wc -l < opts)" -gt 50 ] || fail "options in --help: $(cat opts)"
	# A row's first cell names the option, or two: "name / other".
	missing=$(python3 - "$USAGE_MD" opts <<'PY'
import re, sys
rows = set()
for line in open(sys.argv[1]):
    m = re.match(r"\| ([a-z0-9_]+)(?: / ([a-z0-9_]+))? \|", line)
    if m:
        rows.update(n for n in m.groups() if n)
print(" ".join(o for o in open(sys.argv[2]).read().split() if o not in rows))
PY
)
	expect_eq "$missing" "" "options without a row in docs/usage.md"
}

# CPU shares, and intervals that must narrow within a bounded run.
solo t_cpu_utilisation_and_service_demand t_iterations_until_confident
