#!/bin/bash
# Functional tests: real servers and clients on loopback, bounded in time.
# Each test runs in its own subshell with set -e; the last line is
# "N passed, M failed".
cd "$(dirname "$0")/../.." || exit 1
. tests/func/lib.sh
USAGE_MD=$(pwd)/docs/usage.md
FLOOD=$(pwd)/tests/func/flood.py

RESULT_KEYS="time_start utime_start utime_end stime_start stime_end
maxrss_start maxrss_end minflt_start minflt_end majflt_start majflt_end
nvcsw_start nvcsw_end nivcsw_start nivcsw_end num_transactions start_index
end_index num_samples correlation_coefficient time_end"

# Counts of an rr run agree: the server finishes at most the requests
# in flight per flow (1, or --burst) that the client did not see
# complete, and no response answered another request than the client
# took it for.
check_rr_counts() {
	local out=$1 flows=$2 inflight=${3:-1} c s m

	c=$(key "$out" client.num_transactions)
	s=$(key "$out" server.num_transactions)
	expect_gt "$c" 0 "client transactions"
	expect_le "$c" "$s" "client <= server transactions"
	expect_le "$s" $((c + flows * inflight)) "server <= client + in flight"
	m=$(key "$out" client.num_mismatched)
	[ -z "$m" ] || expect_eq "$m" 0 "responses matched to another request"
	expect_eq "$(key "$out" client.remote_num_transactions)" "$s" \
		"client's copy of the server count"
	expect_eq "$(key "$out" server.remote_num_transactions)" "$c" \
		"server's copy of the client count"
	expect_eq "$(key "$out" client.flows)" "$flows" "client flows"
	expect_eq "$(key "$out" server.flows)" "$flows" "server flows"
}

# Every transaction moved one request and one response, whole.
check_rr_bytes() {
	local out=$1 q r c s

	q=$(key "$out" client.request_size)
	r=$(key "$out" client.response_size)
	c=$(key "$out" client.num_transactions)
	s=$(key "$out" server.num_transactions)
	expect_eq "$(key "$out" client.bytes_written)" $((c * q)) "client sent"
	expect_eq "$(key "$out" client.bytes_read)" $((c * r)) "client read"
	expect_eq "$(key "$out" server.bytes_read)" $((s * q)) "server read"
	expect_eq "$(key "$out" server.bytes_written)" $((s * r)) \
		"server sent"
}

check_result_keys() {
	local out=$1 side k

	for side in client server; do
		for k in $RESULT_KEYS; do
			grep -q "^$side.$k=" "$out" || fail "no $side.$k"
		done
	done
}

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

t_tcp_rr_io_modes() {
	local m

	# The blocking server stops as soon as the client did (it used to
	# wait 2 s in recv() and report two empty intervals more).
	for m in blocking spin; do
		ns tcp_rr --local -l 2 -q -F 2 -T 2 --io-mode=$m > out
		check_rr_counts out 2
		expect_eq "$(key out server.num_samples)" 2 "$m: server samples"
		expect_eq "$(key out client.num_samples)" 2 "$m: client samples"
	done
	# Blocking, messages of many calls and sequence numbers of a few
	# bytes: every byte counted on both sides. With -B as large as a
	# message the plain loop (rr_plain.c) asks for it in one call and
	# hands the short reads on to the general one.
	for a in "-Q 100000 -R 300000 -B 4096" "-Q 100000 -R 300000 -B 300000" \
		 "-Q 8 -R 3"; do
		ns tcp_rr --local -l 1 -q -F 2 -T 2 --io-mode=blocking $a > out
		check_rr_counts out 2
		check_rr_bytes out
	done
	ns tcp_rr --local -l 1 -q -F 3 -E > out
	check_rr_counts out 3
	# Edge-triggered, messages of many reads: each read to EAGAIN.
	ns tcp_rr --local -l 1 -q -E -Q 100000 -R 300000 -B 4096 > out
	check_rr_counts out 1
	ns tcp_rr --local -l 1 -q -E --burst 4 -Q 20000 -R 70000 -B 8192 > out
	check_rr_counts out 1 4
	ns tcp_rr --local -l 1 -q --nonblocking > out
	check_rr_counts out 1
	expect_eq "$(key out client.io_mode)" epoll "io_mode key"
}

# fd_tables WANT WORKLOAD ARGS...: wait (5 s at most) until every worker
# thread of both sides' processes has its own fd table (WANT=own) or
# shares its process's (WANT=shared), as kcmp(2) compares them.
fd_tables() {
	local want=$1 pid

	shift
	ns "$@" --local -q -l 2 > /dev/null 2> err &
	pid=$!
	python3 - "$want" "$pid" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
SYS_kcmp = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)
KCMP_FILES = 2
want, root = sys.argv[1], int(sys.argv[2])
me = os.getpid()
if not SYS_kcmp or libc.syscall(SYS_kcmp, me, me, KCMP_FILES, 0, 0) != 0:
    print("kcmp(2) cannot compare fd tables here")
    sys.exit(77)

def parent(p):
    try:
        return int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return 0

def workers():
    procs, more = [], [root]
    while more:
        procs += more
        more = [int(p) for p in os.listdir("/proc") if p.isdigit() and
                parent(p) in more]
    for p in procs:
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            if int(t) != p:
                yield p, int(t)

seen = ""
for _ in range(50):
    time.sleep(0.1)
    got = [(p, t, libc.syscall(SYS_kcmp, p, t, KCMP_FILES, 0, 0) != 0)
           for p, t in workers()]
    seen = " ".join(f"{p}/{t}:{'own' if o else 'shared'}"
                    for p, t, o in got) or seen
    if len({p for p, _, _ in got}) == 2 and \
            all(o == (want == "own") for _, _, o in got):
        sys.exit(0)
sys.exit(f"workers' fd tables: {seen or 'no workers'}, wanted all {want}")
PY
	local rc=$?
	wait $pid
	return $rc
}

# A worker that opens no file of its own runs on its own copy of the
# fd table (the kernel lends it each socket for a syscall); tcp_crr's
# workers accept and connect sockets that their side closes, and share.
t_workers_own_their_fd_table() {
	fd_tables own tcp_rr || return $?
	fd_tables own tcp_rr --io-mode=blocking -F 2 -T 2 || return $?
	fd_tables shared tcp_crr || return $?
}

# sleeps FILE SIDE: the voluntary context switches of SIDE's process.
sleeps() {
	echo $(($(key "$1" "$2.nvcsw_end") - $(key "$1" "$2.nvcsw_start")))
}

# A side that never sleeps switches out only for its main thread's
# snapshots, a few times in a 1 s test; one that waits for each answer
# sleeps about once a transaction (8,000-16,000 times a second here,
# still hundreds on a machine so loaded that spinners crawl).
check_never_slept() {
	local out=$1 what=$2 side

	for side in client server; do
		expect_gt "$(key "$out" $side.num_transactions)" 0 \
			"$what: $side's work"
		expect_le "$(sleeps "$out" $side)" 100 "$what: $side's sleeps"
	done
}

t_busy_io_modes_never_sleep() {
	local m

	for m in busy spin; do
		ns tcp_rr --local -l 1 -q --io-mode=$m > out 2> err
		check_rr_counts out 1
		[ "$(nproc)" -lt 2 ] ||
			expect_eq "$(cat err)" "" "$m: a CPU for each spinner"
		expect_eq "$(key out client.io_mode)" $m "io_mode key"
		check_never_slept out "tcp_rr $m"
	done
	# Busy epoll serves any workload and several flows a thread.
	ns udp_rr --local -l 1 -q --io-mode=busy -F 2 > out
	check_rr_counts out 2
	check_never_slept out "udp_rr busy"
	ns tcp_stream --local -l 1 -q --io-mode=busy > out
	check_never_slept out "tcp_stream busy"
	ns tcp_rr --local -l 1 -q -F 2 -T 2 --io-mode=spin > out
	check_rr_counts out 2
	# Two spinners on one CPU: said, and still a (slow) result.
	timeout -k 5 "$BOUND" taskset -c 0 "$NETSTAGE" tcp_rr --local -l 1 -q \
		--io-mode=spin > out 2> err
	check_rr_counts out 1
	grep -q -- "--io-mode=spin: 2 spinning threads on 1 CPU" err ||
		fail "no word of spinners sharing a CPU: $(cat err)"
	expect_usage_error "'spin' is only for tcp_rr" \
		udp_rr --io-mode=spin
	expect_usage_error "'spin' needs --num-threads >= --num-flows" \
		tcp_rr -c -H 127.0.0.1 -F 2 --io-mode=spin
	expect_usage_error "is none of 'epoll', 'blocking', 'busy', 'spin'" \
		tcp_rr --io-mode=poll
}

# --busy-poll sets SO_BUSY_POLL on every data socket and busy polling
# on every worker's epoll set (loopback has no NAPI device: nothing gets
# faster here). A kernel without EPIOCSPARAMS (before 6.9): said once a
# side, and the test runs.
t_busy_poll_sets_sockets_and_epoll_sets() {
	local side

	ns tcp_rr --local -l 1 -q -F 3 -T 2 --busy-poll=50 > out 2> err
	check_rr_counts out 3
	for side in client server; do
		expect_eq "$(key out $side.busy_poll_sockets)" 3 "$side sockets"
		expect_eq "$(key out $side.busy_poll_epolls)" 2 "$side epolls"
	done
	expect_eq "$(cat err)" "" "nothing refused"
	NETSTAGE_PRETEND_ENOSYS=EPIOCSPARAMS ns tcp_rr --local -l 1 -q -F 3 \
		-T 2 --busy-poll=50 > out 2> err
	check_rr_counts out 3
	for side in client server; do
		expect_eq "$(key out $side.busy_poll_sockets)" 3 "$side sockets"
		expect_eq "$(key out $side.busy_poll_epolls)" 0 "$side epolls"
	done
	expect_eq "$(grep -c 'epoll busy polling refused: Inappropriate ioctl for device (EPIOCSPARAMS needs Linux 6.9)$' err)" \
		2 "one refusal a side"
	expect_usage_error "no result key 'busy_poll_sockets'" \
		tcp_rr -o busy_poll_sockets
	expect_usage_error "--busy-poll: 1000001 is out of range" \
		tcp_rr --busy-poll=1000001
}

t_congestion_control_is_set_and_read_back() {
	local sys want side

	sys=$(sysctl -n net.ipv4.tcp_congestion_control)
	# One the system would not give: reno is always built in.
	want=reno
	[ "$sys" != reno ] || want=cubic
	ns tcp_stream --local -l 1 -q --congestion "$want" > out 2> err
	for side in client server; do
		expect_eq "$(key out $side.tcp_congestion)" "$want" "$side"
	done
	ns tcp_crr --local -l 1 -q > out 2> err
	expect_eq "$(key out client.tcp_congestion)" "$sys" "the system's"
	expect_usage_error "option --congestion: 'nosuch': no such algorithm in this kernel" \
		tcp_stream --local --congestion nosuch
	expect_usage_error "'abcdefghijklmnop' is longer than the kernel's 15 characters" \
		tcp_rr --congestion abcdefghijklmnop
	expect_usage_error "unknown option '--congestion'" \
		udp_rr --congestion reno
}

# A connection starts its congestion control as it is established, and
# BBR turns on pacing then, which a later change of algorithm leaves on:
# --congestion cubic set after connect() ran at 0.4 of the system's
# cubic here. So each data socket takes it before connect() or listen()
# (an accepted one inherits the listener's) and never after (strace).
t_congestion_control_precedes_the_connection() {
	local wl

	for wl in tcp_stream tcp_crr; do
		under_strace -f -qq -o trace.$wl \
			-e trace=socket,setsockopt,connect,listen \
			"$NETSTAGE" $wl --local -l 1 -q --congestion reno \
			> out 2> err
		python3 - trace.$wl > order <<'EOF'
import re, sys
cc = {}
counts = {"connect": 0, "listen": 0, "late": 0}
for line in open(sys.argv[1]):
    m = re.match(r"(\d+) +(\w+)\((\d+)?.*\) += (-?\d+)", line)
    if not m:
        continue
    pid, call, fd, ret = m.groups()
    if call == "socket":
        cc[pid, ret] = None     # made: no algorithm, no connection
    elif call == "setsockopt" and "TCP_CONGESTION" in line:
        if cc.get((pid, fd), "connected") is not None:
            counts["late"] += 1
        cc[pid, fd] = "set"
    elif call in ("connect", "listen") and (pid, fd) in cc:
        if cc[pid, fd] == "set":
            counts[call] += 1
        cc[pid, fd] = "connected"
print(" ".join(f"{k}={v}" for k, v in counts.items()))
EOF
		expect_eq "$(sed 's/connect=[0-9]*/connect=N/' order)" \
			"connect=N listen=1 late=0" "$wl: $(cat order)"
		grep -q 'connect=[1-9]' order ||
			fail "$wl: no data connection took it first"
	done
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
	expect_usage_error "is not MIN,MAX" tcp_rr -i 5,3
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
	ns tcp_rr --local -l 1 -q > out 2> err
	expect_eq "$(wc -c < err)" 0 "nothing on stderr with --quiet"
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
	ns --version | grep -Eq '^netstage [0-9a-z.-]+$'
	expect_eq "$(key out version)" "$(ns --version | cut -d' ' -f2)" \
		"version key"
}

# docs/usage.md has a row for every option --help lists, of every
# workload: the option table and the docs stay in step.
t_docs_list_every_option() {
	local w o n missing=""

	for w in tcp_rr tcp_crr udp_rr tcp_stream udp_stream observe; do
		for o in $(ns $w --help |
			   sed -nE 's/^ +(-[a-zA-Z0-9], )?--([a-z0-9-]+).*/\2/p'); do
			n=$(echo "$o" | tr - _)
			[ "$n" = help ] && continue
			grep -Eq "^\| ($n|$n / [a-z0-9_]+|[a-z0-9_]+ / $n) \|" \
				"$USAGE_MD" || missing="$missing $n"
		done
	done
	expect_eq "$missing" "" "options without a row in docs/usage.md"
}

# Bad input: one line on stderr naming the problem, status 2, no output.
expect_usage_error() {
	local needle=$1 rc=0

	shift
	ns "$@" > out 2> err || rc=$?
	expect_eq "$rc" 2 "exit status of: $*"
	expect_eq "$(wc -l < err)" 1 "stderr lines of: $*"
	grep -q -- "$needle" err || fail "'$(cat err)' lacks '$needle'"
	expect_eq "$(wc -c < out)" 0 "stdout of: $*"
}

t_bad_input_exits_2_with_one_line() {
	expect_usage_error "unknown workload 'tcp_foo'" tcp_foo
	expect_usage_error "unknown option '--bogus'" tcp_rr --bogus
	expect_usage_error "--num-flows: 'x' is not an integer" tcp_rr -F x
	expect_usage_error "--test-length: 0 is out of range" tcp_rr -l 0
	expect_usage_error "cannot resolve 'no-such-host.invalid'" \
		tcp_rr -c -H no-such-host.invalid
	expect_usage_error "--host: needed with --client" tcp_rr -c
	expect_usage_error "exclude each other" tcp_stream -4 -6
	expect_usage_error "unexpected argument" udp_stream oops
	# Decimal only, overflow refused, no empty items (issue 13).
	# 010 is ten, as -D 010 is: no octal.
	ns tcp_rr -l 010 --dry-run > out
	expect_eq "$(key out test_length)" 10 "-l 010"
	expect_usage_error "--num-flows: '0x2' is not an integer" tcp_rr -F 0x2
	expect_usage_error "--iterations: '4294967297,5' is not" \
		tcp_rr --iterations 4294967297,5
	expect_usage_error "--num-flows: '99999999999999999999' is not" \
		tcp_rr -F 99999999999999999999
	expect_usage_error "--percentiles: ',' is not" tcp_rr -p ,
	expect_usage_error "--percentiles: '50,,99' is not" tcp_rr -p 50,,99
	expect_usage_error "--interval: '0x1p-2' is not" tcp_rr -I 0x1p-2
	expect_usage_error "--delay: '0x10' is not" tcp_rr -D 0x10
	expect_usage_error "--output: an empty key in ','" tcp_rr -o ,
	expect_usage_error "--host: not with --local" tcp_rr --local -H ::1
	ns > out 2> err || rc=$?
	expect_eq "$rc" 2 "no workload"
}

t_runtime_failures_exit_1() {
	local rc=0

	next_ports
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > out 2> err || rc=$?
	expect_eq "$rc" 1 "connection refused"
	grep -q 'control connection: connect to 127.0.0.1:.*refused' err
	expect_eq "$(wc -l < err)" 1 "one line"
	# Port in use.
	start_server tcp_rr
	rc=0
	ns tcp_rr -C "$CPORT" -P "$((CPORT + 100))" -q > out 2> err || rc=$?
	expect_eq "$rc" 1 "port in use"
	grep -q 'Address already in use' err
	stop_server
	# An output file that cannot be written fails before the test.
	rc=0
	ns tcp_rr --local -l 30 -q --json no/such/dir/x.json > out 2> err ||
		rc=$?
	expect_eq "$rc" 1 "unwritable --json"
	grep -q "cannot write 'no/such/dir/x.json'" err
}

# Valgrind 3.19 (Debian 12's) has no epoll_pwait2: ENOSYS, as on kernels
# before 5.11 or under a seccomp filter. The engine waits with
# epoll_wait instead, and says nothing of it.
t_epoll_pwait2_refused_falls_back_to_epoll_wait() {
	if ldd "$NETSTAGE" | grep -q libasan; then
		echo "valgrind cannot run a sanitizer build"
		exit "$SKIP"
	fi
	valgrind -q --error-exitcode=9 "$NETSTAGE" tcp_rr --local -l 2 -q \
		> out 2> err
	check_rr_counts out 1
	grep -q 'unhandled amd64-linux syscall: 441' err ||
		echo "valgrind knows epoll_pwait2 now: the fallback went untried"
	# netstage itself says nothing (valgrind's lines start --PID--).
	expect_eq "$(grep -vc '^--[0-9]*--' err)" 0 "netstage on stderr"
	# The same fallback where the test plays the refusal.
	NETSTAGE_PRETEND_ENOSYS=epoll_pwait2 ns udp_rr --local -l 1 -q > out
	check_rr_counts out 1
}

# A server that never sends its results (stopped, hung, hostile): the
# client says so in error= and exits 1, not 0.
t_client_without_server_results_fails() {
	local rc=0 srv

	start_server tcp_rr
	# SRV_PID runs timeout, which runs netstage.
	srv=$(pgrep -P "$(pgrep -P "$SRV_PID" | head -1)" | head -1)
	( sleep 1.5; kill -STOP "$srv" ) &
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -P "$DPORT" -l 2 -q \
		> out 2> err || rc=$?
	kill -CONT "$srv" || true
	stop_server
	expect_eq "$rc" 1 "exit status"
	expect_eq "$(key out error)" "no results from the server" "error key"
	grep -q 'no results from the server' err
}

# Strangers on the control port cannot hold up a real client: 1,000
# idle connections and 1,000 sending garbage, all held open, while a
# client runs its test to the end; and a client that sends its hello and
# vanishes leaves the server waiting for the next (issue 13).
t_idle_and_garbage_control_peers_do_not_block_a_client() {
	local i peers
	start_server tcp_rr
	python3 - "$CPORT" > peers.log 2>&1 <<'PY' &
import resource, socket, struct, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
held = []
# Closed with a reset, not into TIME_WAIT: these ports are ephemeral
# ones a later test's server may want to bind.
LINGER0 = struct.pack("ii", 1, 0)
# A valid hello (magic 42, tcp_rr, 1 flow); gone after the answer,
# with no flow: a set-up that fails.
hello = struct.pack(">IHHI", 0x4e535447, 1, 1, 72) + struct.pack(
    ">9Q", 42, 1, 1, 1, 1, 1, 65536, 2, 2)
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
s.sendall(hello)
s.recv(100)
s.close()
# A hello, then gone before the answer: dropped unanswered.
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
s.sendall(hello)
s.close()
for i in range(2000):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    held.append(s)
# Wait until the server has taken them all from its queue (it drops the
# oldest past its limit): each one is connected, then.
import select
pending, end = {s.fileno(): s for s in held}, time.time() + 10
while pending and time.time() < end:
    p = select.poll()
    for fd in pending:
        p.register(fd, select.POLLOUT)
    for fd, ev in p.poll(200):
        del pending[fd]
for s in held[1000:]:
    try:
        s.send(b"GET / HTTP/1.0\r\n\r\n")
    except OSError:
        pass
open("peers_ready", "w").write(str(len(held) - len(pending)))
time.sleep(8)
PY
	peers=$!
	for i in $(seq 150); do
		[ -s peers_ready ] && break
		sleep 0.1
	done
	[ -s peers_ready ] || fail "the strangers never connected: $(tail -2 peers.log)"
	expect_eq "$(cat peers_ready)" 2000 "strangers connected"
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 2 -q > out 2> err
	wait "$SRV_PID"
	# Gone before the next test binds: their ports are ephemeral ones.
	kill "$peers" 2> /dev/null || true
	wait "$peers" 2> /dev/null || true
	expect_gt "$(key out num_transactions)" 0 "client transactions"
	expect_eq "$(key "$SRV_OUT" remote_num_transactions)" \
		"$(key out num_transactions)" "the server's copy"
	# Those dropped are counted (past the limit of waiting ones, the
	# oldest go); those still waiting when the client came are closed.
	expect_gt "$(key "$SRV_OUT" invalid_secret_count)" 0 \
		"strangers counted"
	grep -q 'too many connections waiting' "$SRV_OUT.err" ||
		fail "the limit of waiting connections was never reached"
	grep -q 'a client went away during set-up: waiting for clients again' \
		"$SRV_OUT.err" || fail "no retry: $(head -3 "$SRV_OUT.err")"
	expect_le "$(grep -c 'dropped a control connection' "$SRV_OUT.err")" 5 \
		"lines about strangers"
}

# Failing socket calls are counted in io_errors and said on stderr
# with the last error, rather than left for the keys alone (issue 12).
t_failed_socket_calls_are_said() {
	local rc=0

	next_ports
	# Nothing listens on the port: every datagram is refused (ICMP).
	ns udp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data x -l 1 -q \
		> out 2> err || rc=$?
	expect_eq "$rc" 1 "status"
	expect_gt "$(key out io_errors)" 0 "io_errors"
	grep -q "^netstage: $(key out io_errors) socket calls failed (io_errors), the last with: Connection refused$" err ||
		fail "not said: $(cat err)"
}

# --auth-key: the server challenges each client; a wrong key, or none,
# is dropped and counted like a wrong magic, the client says why
# (status 1), and a client with the key still gets its test. A server
# without a key is no server for a client that wants to be checked.
t_auth_key_challenges_every_client() {
	local rc

	head -c 32 /dev/urandom | base64 > key1
	head -c 32 /dev/urandom | base64 > key2
	chmod 600 key1 key2
	start_server tcp_rr --auth-key key1
	rc=0
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q --auth-key key2 \
		> out 2> err || rc=$?
	expect_eq "$rc" 1 "client with the wrong key"
	grep -q "at its challenge: not its --auth-key?" err ||
		fail "wrong key: $(cat err)"
	rc=0
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > out 2> err || rc=$?
	expect_eq "$rc" 1 "client without a key"
	grep -q "the server asks for --auth-key" err ||
		fail "keyless client: $(cat err)"
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q --auth-key key1 > out
	wait "$SRV_PID"
	expect_gt "$(key out num_transactions)" 0 "the client with the key"
	expect_eq "$(key "$SRV_OUT" invalid_secret_count)" 2 "dropped"
	grep -q "dropped a control connection: wrong auth key" \
		"$SRV_OUT.err" || fail "server: $(cat "$SRV_OUT.err")"
	# --local: both sides read the same key, once; others may read it.
	cp key1 key3
	chmod 644 key3
	ns tcp_rr --local -l 1 -q --auth-key key3 > out 2> err
	check_rr_counts out 1
	expect_eq "$(cat err)" \
		"netstage: --auth-key: key3 can be read by others (chmod 600 it)" \
		"a key others can read"
	start_server tcp_rr -l 1
	rc=0
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q --auth-key key1 \
		> out 2> err || rc=$?
	expect_eq "$rc" 1 "client with a key, server without"
	grep -q -- "--auth-key: the server did not challenge" err ||
		fail "$(cat err)"
	stop_server
	printf 'fifteen bytes!!\n' > short
	expect_usage_error "option --auth-key: short: shorter than 16 bytes" \
		tcp_rr --auth-key short
	expect_usage_error "option --auth-key: nokey: No such file" \
		tcp_rr --auth-key nokey
}

# --auth-key under a flood of idle connections (5,000 a second from
# another process, each held 200 ms): a keyed client's hello and answer
# take round trips, and the flood used to push it out meanwhile (2 runs
# in 4 failed). A peer that has said nothing goes first now. A slow
# peer (its answer 400 ms away, as over a long path) is still held
# after the flood has gone past it; and real clients get their tests.
# The second round's flood comes from 1,000 addresses: the policy does
# not rest on telling one source from another.
t_auth_key_client_gets_through_an_idle_flood() {
	local i flood

	head -c 32 /dev/urandom | base64 > fkey
	chmod 600 fkey
	for i in 1 2; do
		rm -f flood_started flood_count
		start_server tcp_rr --auth-key fkey
		python3 "$FLOOD" "$CPORT" 5000 10 $((i == 2 ? 1000 : 0)) \
			> flood.log 2>&1 &
		flood=$!
		for _ in $(seq 100); do
			[ -s flood_started ] && break
			sleep 0.05
		done
		[ -s flood_started ] || fail "no flood: $(cat flood.log)"
		sleep 0.2	# past the greeter's limit
		[ "$i" = 2 ] || python3 - "$CPORT" > slow.out 2>&1 <<'PY' ||
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
# A valid hello (magic 42, tcp_rr, 1 flow), then its challenge.
s.sendall(struct.pack(">IHHI", 0x4e535447, 1, 1, 72) + struct.pack(
    ">9Q", 42, 1, 1, 1, 1, 1, 65536, 2, 2))
got, end = b"", time.time() + 5
s.settimeout(5)
while len(got) < 12 + 32 and time.time() < end:
    got += s.recv(100)
assert struct.unpack(">IHH", got[:8]) == (0x4e535447, 1, 8), got
time.sleep(0.4)
s.setblocking(False)
try:
    got = s.recv(1, socket.MSG_PEEK)
    sys.exit("dropped while its answer was on its way (%r)" % got)
except BlockingIOError:
    print("held")
except ConnectionResetError:
    sys.exit("reset while its answer was on its way")
PY
			fail "the slow peer: $(cat slow.out)"
		ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q --auth-key fkey \
			> out 2> err || fail "run $i: $(cat err)"
		kill -TERM "$flood"
		wait "$flood"
		wait "$SRV_PID"
		expect_gt "$(key out num_transactions)" 0 "run $i"
		expect_gt "$(cat flood_count)" 1000 "run $i: the flood's connections"
		grep -q 'too many connections waiting' "$SRV_OUT.err" ||
			fail "run $i: the limit of waiting connections was never reached"
	done
}

t_garbage_and_wrong_magic_are_counted() {
	start_server tcp_rr
	# The server may drop it before the last byte is written: a reset
	# here is no failure of the test.
	printf 'GET / HTTP/1.0\r\n\r\n' > /dev/tcp/127.0.0.1/"$CPORT" || true
	# A netstage client with another secret is dropped too.
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -M 7 > bad.out \
		2> bad.err || true
	grep -q 'no answer from the server' bad.err
	# Another workload is refused with a reason, and not counted.
	rc=0
	ns tcp_stream -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > bad.out \
		2> bad.err || rc=$?
	expect_eq "$rc" 1 "wrong workload"
	grep -q 'server refused the test: this server runs tcp_rr' bad.err
	# The server still serves a real client.
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q > cli.out
	wait "$SRV_PID"
	expect_eq "$(key "$SRV_OUT" invalid_secret_count)" 2 "invalid count"
	expect_gt "$(key cli.out num_transactions)" 0 "real client ran"
}

t_client_vanishing_ends_the_server() {
	local start rc=0

	start_server tcp_rr
	# Not through ns: $! must be netstage itself. -l 30 bounds it.
	"$NETSTAGE" tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 30 -q > cli.out &
	sleep 1.5
	start=$SECONDS
	kill -KILL $!
	wait "$SRV_PID" || rc=$?
	expect_eq "$rc" 1 "server status"
	expect_le $((SECONDS - start)) 5 "seconds to notice"
	grep -q '^error=client went away' "$SRV_OUT"
	expect_gt "$(key "$SRV_OUT" num_transactions)" 0 "measured"
	grep -q '^time_end=' "$SRV_OUT"
}

t_interrupted_client_reports_and_writes_whole_files() {
	local rc=0

	start_server tcp_rr
	"$NETSTAGE" tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 30 -q --json c.json \
		> cli.out &
	pid=$!
	sleep 1.5
	kill -INT "$pid"
	wait "$pid" || rc=$?
	expect_eq "$rc" 1 "interrupted client status"
	grep -q '^error=interrupted' cli.out
	python3 -c 'import json,sys; json.load(open("c.json"))'
	wait "$SRV_PID" || true
}

t_server_waits_for_num_clients() {
	start_server tcp_rr --num-clients 2
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -F 2 > a.out &
	a=$!
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 1 -q -F 3 -T 2 > b.out
	wait "$a"
	wait "$SRV_PID"
	expect_eq "$(key "$SRV_OUT" flows)" 5 "flows of both clients"
	sa=$(key a.out num_transactions)
	sb=$(key b.out num_transactions)
	expect_eq "$(key "$SRV_OUT" remote_num_transactions)" $((sa + sb)) \
		"server's sum of client counts"
}

for f in tests/func/t_*.sh; do
	. "$f"
done

TESTS=$(declare -F | awk '{print $3}' | grep '^t_')
for t in ${1:-$TESTS}; do
	run_test "$t"
done
finish
