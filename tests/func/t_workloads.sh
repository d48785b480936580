# The workloads' counts (sourced by run.sh): what each side moved and
# counted agrees with the other side, for every workload and mode.

t_tcp_rr_local_prints_both_sides() {
	ns tcp_rr --local -l 2 -q > out
	check_result_keys out
	check_rr_counts out 1
	grep -q '^client.throughput=' out
	grep -q '^server.throughput=' out
	grep -q '^client.latency_p99_us=' out
	expect_eq "$(key out client.num_samples)" 2 "samples of a 2 s test"
	# Options come first, once per side, with the workload.
	expect_eq "$(key out client.workload)" tcp_rr "client workload"
	expect_eq "$(key out server.workload)" tcp_rr "server workload"
	expect_eq "$(grep -c '^client.num_flows=' out)" 1 "one num_flows"
	# Nothing unprefixed: the two sides cannot be confused.
	expect_eq "$(grep -vc '^\(client\|server\)\.' out)" 0 "unprefixed"
}

t_tcp_rr_threads_and_flows() {
	local spec f t

	for spec in 4:2 5:2 3:3 8:1; do
		f=${spec%:*}
		t=${spec#*:}
		ns tcp_rr --local -l 1 -q -F "$f" -T "$t" > out
		check_rr_counts out "$f"
	done
}

# Flows share their worker's latency histograms unless -A needs one per
# flow: either way every transaction is counted once.
t_tcp_rr_latency_counts_every_transaction() {
	local a

	for a in "" "-Asamples_lat.csv"; do
		ns tcp_rr --local -l 1 -q -F 6 -T 2 $a --output-format json \
			> lat.json
		python3 - lat.json <<'PY' || fail "latency count with '$a'"
import json, sys
c = json.load(open(sys.argv[1]))["client"]
assert c["latency"]["count"] == c["results"]["num_transactions"], (
    c["latency"]["count"], c["results"]["num_transactions"])
assert c["latency"]["count"] > 0
PY
	done
	# -A: each flow's own latencies, in its rows.
	expect_eq "$(awk -F, 'NR > 1 && $7 > 0' samples_lat.csv | cut -d, -f3 |
		sort -u | wc -l)" 6 "flows with latencies in samples"
}

# A flow costs a socket and a few hundred bytes, not a histogram: the
# client's peak RSS grows by less than 2 KiB a flow (it was 66.5 KiB,
# neper's is 9). ASan's shadow and quarantine make RSS meaningless.
t_tcp_rr_memory_per_flow() {
	local one many

	if ldd "$NETSTAGE" | grep -q libasan; then
		echo "a sanitizer build's RSS says nothing of netstage's"
		exit "$SKIP"
	fi
	ns tcp_rr --local -l 1 -q -F 1 -o maxrss_end > out
	one=$(key out client.maxrss_end)
	ns tcp_rr --local -l 1 -q -F 2000 -T 2 -o maxrss_end > out
	many=$(key out client.maxrss_end)
	expect_le $(((many - one) * 1024 / 1999)) 2048 "bytes per flow"
}

# A flow is a descriptor: each side raises its soft limit to what -F
# needs, and where the hard limit is too low (and may not be raised:
# no CAP_SYS_RESOURCE) refuses the test in one line, status 1.
t_flows_raise_the_descriptor_limit() {
	local rc=0

	prlimit --nofile=100:1000 "$NETSTAGE" tcp_rr --local -l 1 -q -F 300 \
		-o flows > out
	expect_eq "$(key out client.flows)" 300 "client flows"
	expect_eq "$(key out server.flows)" 300 "server flows"
	setpriv --inh-caps=-sys_resource --bounding-set=-sys_resource \
		prlimit --nofile=200:200 "$NETSTAGE" tcp_rr --local -l 1 -q \
		-F 300 -o flows > out 2> err || rc=$?
	expect_eq "$rc" 1 "status past the hard limit"
	grep -q "300 flows need 364 file descriptors; the hard limit is 200" err
}

# -L with a list: flow i binds to address i mod n (each address has its
# own ephemeral ports), the server listens on the first.
t_local_host_list_spreads_flows() {
	local rc=0

	next_ports
	ns tcp_rr -C "$CPORT" -P "$DPORT" -L 127.0.0.1 -q > srv.out &
	wait_port "$CPORT"
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -P "$DPORT" -l 3 -q -F 6 \
		-L 127.0.0.1,127.0.0.2,127.0.0.3 > out &
	sleep 1.5
	ss -Htn state established "( dport = :$DPORT )" |
		awk '{ sub(/:[0-9]+$/, "", $3); print $3 }' | sort | uniq -c \
		> srcs
	wait
	expect_eq "$(awk '{ print $2 ":" $1 }' srcs | tr '\n' ' ')" \
		"127.0.0.1:2 127.0.0.2:2 127.0.0.3:2 " "flows per source address"
	expect_gt "$(key out num_transactions)" 0 "transactions"
	# Under --local the client connects to the first address.
	ns tcp_rr --local -l 1 -q -L 127.0.0.2,127.0.0.3 -F 2 > out
	check_rr_counts out 2
	ns tcp_rr --local -l 1 -q -L 127.0.0.1,,127.0.0.2 > out 2> err ||
		rc=$?
	expect_eq "$rc" 2 "empty address in -L"
	grep -q "local-host: address 2 of '127.0.0.1,,127.0.0.2' is empty" err
}

t_tcp_rr_ipv6() {
	ns tcp_rr --local -6 -l 1 -q -F 2 -T 2 > out
	check_rr_counts out 2
	expect_eq "$(key out client.host)" ::1 "client host"
}

t_tcp_rr_large_messages() {
	# Several send()/recv() calls per message.
	ns tcp_rr --local -l 1 -q -Q 100000 -R 300000 -B 4096 > out
	check_rr_counts out 1
	c=$(key out client.num_transactions)
	r=$(key out client.bytes_read)
	# Whole responses, and part of one still in flight at the end.
	expect_le $((c * 300000)) "$r" "client bytes read"
	expect_le "$r" $((c * 300000 + 299999)) "client bytes read"
}

t_tcp_rr_burst_keeps_requests_in_flight() {
	ns tcp_rr --local -l 1 -q --burst 8 -F 2 > out
	check_rr_counts out 2 8
	grep -q '^client.latency_p99_us=' out
	ns tcp_rr --local -l 1 -q --burst 4 -F 3 -T 2 -Q 20000 -R 70000 \
		-B 8192 > out
	check_rr_counts out 3 4
	c=$(key out client.num_transactions)
	r=$(key out client.bytes_read)
	# Whole responses, and parts of the ones still in flight.
	expect_le $((c * 70000)) "$r" "client bytes read"
	expect_le "$r" $(((c + 4 * 3) * 70000)) "client bytes read"
	expect_usage_error "--burst: not with --io-mode blocking" \
		tcp_rr --burst 2 --io-mode=blocking
}

t_tcp_rr_open_loop_rate() {
	local arrival

	for arrival in uniform poisson; do
		ns tcp_rr --local -l 2 -q --rate 2000 --arrival=$arrival \
			-F 2 > out 2> err
		check_rr_counts out 2 4096
		expect_eq "$(key out client.rate_behind)" 0 "requests skipped"
		expect_eq "$(wc -c < err)" 0 "no complaint at a modest rate"
		python3 - out "$arrival" <<'PY'
import sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]))
rate = float(kv["client.achieved_rate"])
# Uniform is a fixed schedule; Poisson's count over 2 s at 2000/s has a
# standard deviation of 1.6%: 10% is more than 6 of them.
tol = 0.03 if sys.argv[2] == "uniform" else 0.10
assert abs(rate - 2000) <= 2000 * tol, rate
# From the intended send, never less than from the actual one.
for p in ("p50", "p99"):
    assert float(kv[f"client.latency_{p}_us"]) >= \
        float(kv[f"client.latency_uncorrected_{p}_us"]), p
PY
	done
	# Far more than loopback can answer: said, counted, still a result.
	ns tcp_rr --local -l 1 -q --rate 2000000 > out 2> err
	expect_gt "$(key out client.rate_behind)" 0 "requests skipped"
	grep -q 'could not keep up' err
	expect_usage_error "--rate: not with --burst" tcp_rr --rate 10 --burst 2
	expect_usage_error "neither poisson nor uniform" tcp_rr --arrival=pareto
}

t_separate_server_and_client_with_other_threads() {
	start_server tcp_rr -T 1
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -F 6 -T 3 > cli.out
	wait "$SRV_PID"
	c=$(key cli.out num_transactions)
	s=$(key "$SRV_OUT" num_transactions)
	expect_le "$c" "$s" "client <= server"
	expect_le "$s" $((c + 6)) "server <= client + 6"
	# The server took the flow count from the client.
	expect_eq "$(key "$SRV_OUT" flows)" 6 "server flows"
	expect_eq "$(key "$SRV_OUT" num_threads)" 1 "server threads"
}

t_tcp_crr_new_connection_per_transaction() {
	local spec f t

	for spec in 1:1 4:2 3:1; do
		f=${spec%:*}
		t=${spec#*:}
		ns tcp_crr --local -l 1 -q -F "$f" -T "$t" > out
		check_rr_counts out "$f"
		expect_eq "$(key out client.io_errors)" 0 "client errors"
		expect_eq "$(key out server.io_errors)" 0 "server errors"
	done
	check_result_keys out
	ns tcp_crr --local -l 1 -q -6 -Q 100 -R 1000 > out
	check_rr_counts out 1
	c=$(key out client.num_transactions)
	expect_eq "$(key out client.bytes_read)" $((c * 1000)) "whole responses"
	# Every transaction was its own connection: in a namespace of its
	# own the kernel counts one active open per transaction, one for
	# the control connection, and at most one per flow still going.
	unshare -n bash -c 'ip link set lo up
		opens() { awk '\''/^Tcp:/ { if (!h) { h = 1
			for (i = 1; i <= NF; i++) if ($i == "ActiveOpens") c = i
			} else print $c }'\'' /proc/net/snmp; }
		a=$(opens); "$@" > out; echo $(($(opens) - a)) > opens' \
		- timeout -k 5 "$BOUND" "$NETSTAGE" tcp_crr --local -l 1 -q -F 3
	check_rr_counts out 3
	c=$(key out client.num_transactions)
	expect_le $((c + 1)) "$(cat opens)" "active opens"
	expect_le "$(cat opens)" $((c + 1 + 3)) "active opens"
}

t_udp_rr_counts_agree_without_loss() {
	local spec f t

	# A second of timeout: no scheduling stall passes for a loss.
	for spec in 1:1 4:2; do
		f=${spec%:*}
		t=${spec#*:}
		ns udp_rr --local -l 1 -q -F "$f" -T "$t" --rr-timeout=1000 > out
		check_rr_counts out "$f"
		expect_eq "$(key out client.num_lost)" 0 "lost on loopback"
		expect_eq "$(key out client.num_late)" 0 "late on loopback"
	done
	check_result_keys out
	ns udp_rr --local -6 -l 1 -q -Q 500 -R 1200 --rr-timeout=1000 > out
	check_rr_counts out 1
	c=$(key out client.num_transactions)
	expect_eq "$(key out client.bytes_read)" $((c * 1200)) "whole responses"
	expect_usage_error "datagrams" udp_rr -Q 70000
}

# --burst: several requests in flight per flow, each response matched by
# the sequence number it echoes. On loopback none is lost or late, the
# server answered every request the client saw answered, plus at most
# the ones in flight, and the window makes the flow faster than one
# request at a time would (the server answers each at once).
t_udp_rr_burst_keeps_requests_in_flight() {
	local one

	ns udp_rr --local -l 1 -q -F 2 --rr-timeout=1000 > out
	one=$(key out client.num_transactions)
	ns udp_rr --local -l 1 -q -F 2 --burst 8 --rr-timeout=1000 > out
	check_rr_counts out 2 8
	expect_eq "$(key out client.num_lost)" 0 "lost on loopback"
	expect_eq "$(key out client.num_late)" 0 "late on loopback"
	expect_gt "$(key out client.num_transactions)" "$one" "more with 8"
	c=$(key out client.num_transactions)
	expect_eq "$(key out client.bytes_read)" "$c" "one byte a response"
	expect_usage_error "udp_rr --trace times one request in flight" \
		udp_rr --local --burst 4 --trace
	expect_usage_error "no sequence number" udp_rr -c -H 127.0.0.1 \
		--raw --burst 4
	expect_usage_error "at most 128 with 1-byte messages" udp_rr \
		--local --burst 129
	expect_usage_error "at most 1024 requests in flight" udp_rr --local \
		--burst 1025 -Q 8 -R 8
}

t_tcp_stream_bytes_agree_exactly() {
	ns tcp_stream --local -l 1 -q -F 3 -T 2 > out
	w=$(key out client.bytes_written)
	expect_gt "$w" 0 "bytes written"
	expect_eq "$(key out server.bytes_read)" "$w" "server read all"
	grep -q '^client.throughput_Mbps=' out
	grep -q '^server.throughput_Mbps=' out
	check_result_keys out
	# Bidirectional: the client reads, so the server writes.
	ns tcp_stream --local -l 1 -q -r > out
	expect_gt "$(key out client.bytes_read)" 0 "client read"
	expect_eq "$(key out server.bytes_read)" \
		"$(key out client.bytes_written)" "server read all"
}

# A short recv does not end a stream reader's turn: it reads on to
# EAGAIN, since on a busy stream more has landed meanwhile. Slow 1000-byte
# writes against 65536-byte reads make every read short. strace -ff: a
# file per thread, so no call is split by another thread's.
t_stream_reader_reads_on_to_eagain() {
	local srv

	next_ports
	under_strace -ff -qq -o trace.srv \
		-e trace=recvfrom,epoll_pwait2,epoll_wait timeout -k 5 "$BOUND" \
		"$NETSTAGE" tcp_stream -C "$CPORT" -P "$DPORT" -q -B 65536 \
		> srv.out 2> srv.err &
	srv=$!
	wait_port "$CPORT"
	ns tcp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -B 1000 -D 1ms \
		> cli.out
	wait "$srv"
	python3 - trace.srv.* > turns <<'EOF'
import re, sys
short = stopped = 0
for name in sys.argv[1:]:
    after_short = False
    for line in open(name):
        m = re.match(r"(\w+)\(.*\) += (-?\d+)", line)
        if not m:
            continue
        call, ret = m.group(1), int(m.group(2))
        if call.startswith("epoll_"):
            stopped += after_short
            after_short = False
        elif ", 65536, MSG_DONTWAIT" in line:   # not the control's
            after_short = 0 < ret < 65536
            short += after_short
print(short, stopped)
EOF
	read -r short stopped < turns
	# Enough turns to see it: a slow machine under strace managed 99
	# short reads of the 1,000 writes once.
	expect_gt "$short" 50 "short reads"
	expect_eq "$stopped" 0 "short reads that ended a turn"
}

# --io-mode blocking on a stream: a thread per flow, each call waits in
# the kernel (netperf's and iperf3's way). Every send is whole, none asks
# not to wait, no thread of the client waits in epoll, and the server
# still reads to the end of what was sent.
t_tcp_stream_blocking_io_mode() {
	local srv rc=0 i

	# Each flow's server thread reads on after the stop, to the end of
	# file. Stopping at once left bytes unread in most runs of 4 flows.
	for i in 1 2 3; do
		ns tcp_stream --local -l 1 -q -F 4 -T 4 --io-mode=blocking > out
		w=$(key out client.bytes_written)
		expect_gt "$w" 0 "bytes written"
		expect_eq "$(key out server.bytes_read)" "$w" "server read all"
	done
	expect_eq "$(key out client.io_mode)" blocking "io_mode key"
	expect_eq "$(key out client.num_samples)" 1 "client samples"
	expect_eq "$(key out server.num_samples)" 1 "server samples"
	next_ports
	timeout -k 5 "$BOUND" "$NETSTAGE" tcp_stream -C "$CPORT" -P "$DPORT" \
		-q > srv.out 2> srv.err &
	srv=$!
	wait_port "$CPORT"
	under_strace -ff -qq -o trace.cli -e trace=sendto,epoll_pwait2,epoll_wait \
		timeout -k 5 "$BOUND" "$NETSTAGE" tcp_stream -c -H 127.0.0.1 \
		-C "$CPORT" -l 1 -q -B 65536 --io-mode=blocking > cli.out
	wait "$srv"
	python3 - trace.cli.* > calls <<'PY'
import re, sys
whole = other = epoll = 0
for name in sys.argv[1:]:
    lines = open(name).read().splitlines()
    data = [l for l in lines if re.match(r"sendto\(\d+, .*, 65536, ", l)]
    ok = sum(1 for l in data
             if l.endswith("= 65536") and "MSG_DONTWAIT" not in l)
    whole += ok
    other += len(data) - ok
    if data:
        epoll += sum(1 for l in lines if l.startswith("epoll_"))
print(whole, other, epoll)
PY
	read -r whole other epoll < calls
	expect_gt "$whole" 1000 "whole blocking sends"
	expect_eq "$other" 0 "sends short or not blocking"
	expect_eq "$epoll" 0 "epoll calls of the sending thread"
	expect_eq "$(key srv.out bytes_read)" "$(key cli.out bytes_written)" \
		"server read all"
	# A thread that waits in send() cannot read meanwhile.
	expect_usage_error "'blocking' moves a flow's data one way" \
		tcp_stream --local --io-mode=blocking -r
	expect_usage_error "'blocking' is only for tcp_rr and tcp_stream" \
		udp_stream --io-mode=blocking
	start_server tcp_stream --io-mode=blocking
	ns tcp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -r > bad.out \
		2> bad.err || rc=$?
	stop_server
	expect_eq "$rc" 1 "a reading client of a blocking server"
	grep -q "server refused the test: server --io-mode blocking moves a flow's data one way" bad.err ||
		fail "$(cat bad.err)"
}

# --read-size: the reader asks recv() for that many bytes whatever -B
# the writer sends (netperf's -M), in both engines; the length asked is
# exact, so strace reads it off every data call of the server.
t_tcp_stream_read_size() {
	local srv mode

	for mode in epoll blocking; do
		next_ports
		under_strace -f -qq -o trace.$mode -e trace=recvfrom \
			timeout -k 5 "$BOUND" "$NETSTAGE" tcp_stream \
			-C "$CPORT" -P "$DPORT" -q --read-size 131072 \
			--io-mode=$mode > srv.out 2> srv.err &
		srv=$!
		wait_port "$CPORT"
		ns tcp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -B 4096 \
			--io-mode=$mode > cli.out
		wait "$srv"
		expect_eq "$(key srv.out read_size)" 131072 "$mode: read_size key"
		expect_eq "$(key srv.out bytes_read)" \
			"$(key cli.out bytes_written)" "$mode: server read all"
		# The control connection's reads are the only others.
		big=$(grep -c ', 131072, ' trace.$mode)
		other=$(grep -v ', 131072, ' trace.$mode |
			grep -c -E 'recvfrom\([0-9]+, .*, (4096|16384), ' || true)
		expect_gt "$big" 10 "$mode: reads of --read-size bytes"
		expect_eq "$other" 0 "$mode: reads of -B bytes"
	done
	# The bytes a call asks for bound what it returns, -B or not.
	ns tcp_stream --local -l 1 -q --read-size 1000 > out
	expect_le "$(( $(key out server.bytes_read) / \
		$(key out server.num_transactions) ))" 1000 "bytes per read"
	expect_usage_error "unknown option '--read-size' for udp_stream (only tcp_stream takes it)" \
		udp_stream --read-size 100
}

t_tcp_stream_ipv6() {
	ns tcp_stream --local -6 -l 1 -q > out
	expect_eq "$(key out server.bytes_read)" \
		"$(key out client.bytes_written)" "server read all"
}

t_udp_stream_counts_datagrams() {
	ns udp_stream --local -l 1 -q -F 2 -T 2 -B 1000 > out
	w=$(key out client.bytes_written)
	r=$(key out server.bytes_read)
	expect_gt "$r" 0 "server read"
	expect_le "$r" "$w" "no more read than written"
	expect_eq $((r % 1000)) 0 "whole datagrams"
	expect_eq "$(key out server.num_transactions)" $((r / 1000)) \
		"one transaction per datagram"
}

# --work spins before each answer, in every engine that answers: each
# server record's app stage (RECV_RET to APP_SEND) holds all of it, and
# no client transaction is shorter. A floor, not a timing: the spin
# ends no earlier than its length.
t_server_work_is_in_every_answer() {
	need_root
	local a

	for a in "tcp_rr" "tcp_rr --io-mode=blocking" "tcp_crr"; do
		ns $a --local -l 1 -q --work 200us --trace \
			--trace-records=w.csv > out 2> err
		python3 - w.csv w.server.csv "$a" <<'PY'
import csv, sys
cli = list(csv.DictReader(open(sys.argv[1])))
srv = list(csv.DictReader(open(sys.argv[2])))
assert len(cli) > 100 and len(srv) > 100, (sys.argv[3], len(cli), len(srv))
app = min(int(r["app"]) for r in srv)
assert app >= 200000, (sys.argv[3], "server app", app)
lat = min(int(r["APP_DONE"]) - int(r["CONNECT"] or r["APP_SEND"])
          for r in cli)
assert lat >= 200000, (sys.argv[3], "client latency", lat)
print(f"{sys.argv[3]}: app >= {app / 1e3:.1f} us, latency >= {lat / 1e3:.1f} us")
PY
	done
}

# A rate kept on time.
solo t_tcp_rr_open_loop_rate
