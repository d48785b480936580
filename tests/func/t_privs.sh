# Privileges (sourced by run.sh): a traced run holds root's rights only
# while it loads its BPF programs (docs/usage.md, "Privileges"). What
# each process holds is read from /proc while the test runs.

ORPHANS="python3 $PWD/tests/func/orphans.py"

CAP_NONE=0000000000000000
CAP_SYS_ADMIN=0000000000200000
CAP_BPF_PERFMON=000000c000000000	# CAP_BPF (39) and CAP_PERFMON (38)

# task_rights PID: "comm uid CapPrm CapEff NoNewPrivs" for each thread
# still there as it is read (one may end between the listing and the
# read: it has no rights left to check).
task_rights() {
	local t comm st

	for t in /proc/"$1"/task/*; do
		comm=$(cat "$t/comm" 2> /dev/null) || continue
		st=$(awk '$1 == "Uid:" || $1 == "CapPrm:" || $1 == "CapEff:" ||
			$1 == "NoNewPrivs:" { printf "%s ", $2 }' \
			"$t/status" 2> /dev/null) || continue
		echo "$comm $st"
	done
}

# main_pid PATTERN: the netstage process whose command line matches
# (not its stats helper, a fork with the same command line).
main_pid() {
	local p

	for p in $(pgrep -f "$1"); do
		[ "$(cat /proc/"$p"/comm 2> /dev/null)" != netstage ] ||
			echo "$p"
	done
}

# poll CMD...: CMD's output once it has any (a process that is starting),
# within 5 s.
poll() {
	local i out

	for i in $(seq 100); do
		out=$("$@") || true
		[ -z "$out" ] || { echo "$out"; return 0; }
		sleep 0.05
	done
	fail "nothing from: $*"
}

# wait_threads PID N: until process PID runs N threads (its workers).
wait_threads() {
	local i

	for i in $(seq 100); do
		[ "$(ls /proc/"$1"/task 2>/dev/null | wc -l)" -ge "$2" ] &&
			return 0
		sleep 0.05
	done
	fail "process $1 never ran $2 threads"
}

# expect_rights PID UID CAPS: every thread of PID runs as UID with
# exactly CAPS permitted and effective, and no new privileges.
expect_rights() {
	local line

	task_rights "$1" > rights
	[ -s rights ] || fail "no process $1"
	while read -r line; do
		expect_eq "${line#* }" "$2 $3 $3 1" "rights of pid $1"
	done < rights
}

# Under sudo (SUDO_UID/SUDO_GID), both sides of --local run as that
# user with no capability once BPF is loaded; the helper alone keeps
# CAP_SYS_ADMIN, for the trace-cost window; files are the user's.
t_privileges_dropped_once_bpf_is_loaded() {
	local tpid cli srv helper

	need_root
	chmod 777 .
	SUDO_UID=65534 SUDO_GID=65534 timeout -k 5 "$BOUND" "$NETSTAGE" \
		tcp_rr --local -l 3 -q --trace --json priv.json \
		> out 2> err &
	tpid=$!
	cli=$(poll pgrep -P "$tpid" -x netstage)
	wait_threads "$cli" 2
	srv=$(pgrep -P "$cli" -x netstage)
	helper=$(pgrep -P "$cli" -x netstage-stats)
	wait_threads "$srv" 2
	expect_rights "$cli" 65534 $CAP_NONE
	expect_rights "$srv" 65534 $CAP_NONE
	expect_rights "$helper" 0 $CAP_SYS_ADMIN
	wait "$tpid"
	expect_eq "$(stat -c %u priv.json)" 65534 "owner of the json file"
	expect_eq "$(key out client.trace_status)" records "client trace"
	expect_eq "$(key out server.trace_status)" records "server trace"
	# The helper's stats descriptor measured the cost on both sides.
	expect_gt "$(key out client.trace_cost_ns)" 0 "client trace cost"
	expect_gt "$(key out server.trace_cost_ns)" 0 "server trace cost"
	! grep -q trace_cost_error out || fail "$(grep trace_cost_error out)"
}

# A standalone traced server loads BPF again for every test, and a
# traced client again for each of its --iterations: they keep CAP_BPF
# and CAP_PERFMON, nothing else, and trace every test.
t_privileges_of_a_server_that_loads_per_test() {
	local cpid cli srv

	need_root
	start_server tcp_rr --trace
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -P "$DPORT" -l 2 -q --trace \
		--iterations 2,2 > cli.out 2> cli.err &
	cpid=$!
	cli=$(poll main_pid "^$NETSTAGE tcp_rr -c -H 127.0.0.1 -C $CPORT")
	srv=$(main_pid "^$NETSTAGE tcp_rr --trace -C $CPORT")
	wait_threads "$cli" 2
	wait_threads "$srv" 2
	expect_rights "$cli" 0 $CAP_BPF_PERFMON
	expect_rights "$srv" 0 $CAP_BPF_PERFMON
	wait "$cpid"
	stop_server
	# Traced, the client prints both ends (the server's model came).
	expect_eq "$(key cli.out client.iterations_run)" 2 "tests"
	expect_eq "$(key cli.out client.trace_status)" records \
		"client trace, test 2"
	expect_eq "$(key cli.out server.trace_status)" records \
		"server's model, test 2"
	expect_eq "$(key "$SRV_OUT" trace_status)" records \
		"server trace, test 2"
	expect_gt "$(key "$SRV_OUT" trace_transactions)" 0 \
		"server traced, test 2"
}

# What a script runs (os.execute) gets no rights, before run() and
# after, even as root: no capability, and none regained by exec.
t_privileges_of_what_a_script_runs() {
	need_root
	cat > caps.lua <<'EOF'
os.execute("grep -E '^Cap(Prm|Eff)' /proc/self/status > before_run.txt")
run()
os.execute("grep -E '^Cap(Prm|Eff)' /proc/self/status > after_run.txt")
EOF
	ns tcp_rr --local -l 1 -q --trace --script caps.lua > out 2> err
	expect_eq "$(key out client.trace_status)" records "trace"
	expect_eq "$(cat before_run.txt after_run.txt | awk '{ print $2 }' |
		sort -u)" $CAP_NONE "capabilities of os.execute's shell"
}

# SUDO_UID is a decimal id or the run stops; 0 (root ran sudo) keeps
# uid 0 and runs.
t_privileges_sudo_uid_read_strictly() {
	need_root
	SUDO_UID=x ns tcp_rr --local -l 1 -q > out 2> err && fail "ran as root"
	grep -q '^netstage: SUDO_UID/SUDO_GID: not a user and group id' err
	SUDO_UID=0 SUDO_GID=0 ns tcp_rr --local -l 1 -q > out 2> err
	expect_gt "$(key out client.num_transactions)" 0 "ran as SUDO_UID 0"
}

# netstage observe, once attached, holds nothing: it only reads rings.
t_privileges_of_observe() {
	local opid

	need_root
	start_memcached
	start_observer -l 3
	opid=$(main_pid "^$NETSTAGE observe --port $DPORT")
	ns tcp_rr --raw -H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		-R "$GET_K_SIZE" --response-end 'END\r\n' -l 1 -q > out
	expect_rights "$opid" 0 $CAP_NONE
	wait %2
	expect_gt "$(key obs.out num_transactions)" 0 "observed gets"
}

# netstage join loads nothing: under sudo it holds no right at all, and
# what it writes is the invoking user's.
t_privileges_of_join() {
	need_root
	chmod 777 .
	ns tcp_rr --local -l 1 -q --trace --trace-records=tr.csv > out 2> err
	rm -f joined.csv
	SUDO_UID=65534 SUDO_GID=65534 ns join tr.csv server=tr.server.csv \
		--records joined.csv > jout 2> jerr
	expect_eq "$(stat -c %u joined.csv)" 65534 "owner of joined.csv"
	expect_gt "$(wc -l < joined.csv)" 1 "joined records"
}

# The stats helper (netstage-stats) is reaped by the process that made
# it: left to end after netstage, it became a zombie under a container
# init that reaps no orphans.
t_no_process_is_left_behind() {
	need_root
	$ORPHANS "$NETSTAGE" tcp_rr --local -l 1 --trace > out ||
		fail "$(cat out)"
}
