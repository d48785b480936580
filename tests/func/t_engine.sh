# How the engine runs flows (sourced by run.sh): io modes, the
# workers' fd tables, busy polling, congestion control.

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

# Sleeps and context switches counted: another test's load adds them.
solo t_busy_io_modes_never_sleep
