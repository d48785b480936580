# --script failures: one message naming the script and line, a non-zero
# status, and no process left running on either side (sourced by run.sh).

# script_fails STATUS PATTERN: the script in s.lua, run with --local,
# ends with STATUS and stderr matching PATTERN.
script_fails() {
	local rc=0

	ns tcp_rr --local -l 2 -q --script s.lua > out 2> err || rc=$?
	expect_eq "$rc" "$1" "exit status"
	grep -Eq "$2" err || fail "stderr lacks /$2/: $(cat err)"
}

t_script_syntax_error() {
	printf 'local x = = 1\n' > s.lua
	script_fails 2 "^netstage: --script: s\.lua:1: unexpected symbol"
	# Nothing ran: no results printed.
	expect_eq "$(wc -c < out)" 0 "stdout"
}

t_script_runtime_error_in_main() {
	printf 'local t = nil\nprint(t.x)\n' > s.lua
	script_fails 1 "^netstage: script error: s\.lua:2: attempt to index"
	grep -q 'stack traceback' err
}

t_script_error_in_hook_stops_both_sides() {
	printf 'client_recvmsg(function(fd, msg, flags)\n  error("boom")\nend)\n' \
		> s.lua
	script_fails 1 "hook client_recvmsg: s\.lua:2: boom"
	grep -q "in function <s.lua:1>" err
	[ -z "$(ours "netstage tcp_rr --local -l 2 -q --script s.lua")" ] ||
		fail "a process is left: $(ps -f -p "$(ours "--script s.lua" |
			paste -sd,)")"
}

t_script_error_in_server_hook() {
	printf 'server_recvmsg(function(fd, msg, flags)\n  error("bad")\nend)\n' \
		> s.lua
	script_fails 1 "script error \(server\): hook server_recvmsg: s\.lua:2: bad"
}

t_script_hook_returns_wrong_type() {
	printf 'client_sendmsg(function(fd, msg, flags)\n  return "x"\nend)\n' \
		> s.lua
	script_fails 1 "hook client_sendmsg: s\.lua:1: the hook returned a string"
}

# A receive hook claiming more bytes than its buffer holds is an error
# of the hook, not a million bytes read.
t_script_hook_returns_more_bytes_than_given() {
	printf 'client_recvmsg(function(fd, msg, flags)\n  return 1000001\nend)\n' \
		> s.lua
	script_fails 1 "hook client_recvmsg: s\.lua:1: the hook returned 1000001 bytes, more than the [0-9]+ it was given"
	[ "$(key out client.bytes_read)" -lt 1000001 ]
}

# A hook that never returns is stopped by the watchdog, which names the
# hook, the file and the line (issue 13).
t_script_hook_that_never_returns_is_stopped() {
	local rc=0

	printf 'client_sendmsg(function(fd, msg, flags)\n  while true do end\nend)\n' \
		> s.lua
	ns tcp_rr --local -l 30 -q --script s.lua --hook-timeout 300 \
		> out 2> err || rc=$?
	expect_eq "$rc" 1 "exit status"
	grep -q "hook client_sendmsg: s\.lua:2: the hook ran longer than 300 ms (--hook-timeout)" err ||
		fail "no watchdog message: $(cat err)"
	expect_eq "$(key out client.error)" "stopped by a script error" "error"
}

t_script_run_twice() {
	printf 'run()\nrun()\n' > s.lua
	script_fails 1 "s\.lua:2: run\(\) was already called"
	# The first run() ran the test.
	grep -q '^client.throughput=' out
}

t_script_collect_cannot_copy() {
	printf 'local co = collect(coroutine.create(print))\n%s\n' \
		'client_socket(function(fd) co = fd end)' > s.lua
	script_fails 1 "s\.lua:2: hook client_socket, upvalue 'co': a coroutine cannot be copied"
}

t_script_missing_file() {
	local rc=0

	ns tcp_rr --local -l 1 -q --script nosuch.lua > out 2> err || rc=$?
	expect_eq "$rc" 2 "exit status"
	grep -q "^netstage: --script: cannot open nosuch.lua" err
}

# A loop in the analysis after run() stops at SIGTERM (or SIGINT), as
# the test does: a script error, status 1, no hang.
t_script_loop_after_run_stops_at_a_signal() {
	local rc=0 i

	printf 'run()\nio.open("ran", "w"):close()\nwhile true do end\n' \
		> loop.lua
	ns tcp_rr --local -l 1 -q --script loop.lua > out 2> err &
	for i in $(seq 200); do
		[ -e ran ] && break
		sleep 0.05
	done
	[ -e ran ] || fail "run() never returned"
	# As a terminal's Ctrl-C or systemd: every process of the run (a
	# background job's subshell would not pass it on). Not timeout's,
	# which kills what has not exited 5 s after it: once in a make
	# check SANITIZE=1 the error was out and the exit not yet (137).
	pkill -TERM -f -- "^$NETSTAGE .*--script loop.lua" ||
		fail "no netstage of this test to signal"
	wait $! || rc=$?
	expect_eq "$rc" 1 "status"
	expect_eq "$(head -1 err)" "netstage: script error: stopped by a signal" "error"
}

# A script from a pipe (process substitution) runs, a first line of
# '#' skipped with line numbers kept; a fifo nobody writes to is an
# empty script, not a wait.
t_script_from_a_pipe_or_a_fifo() {
	ns tcp_rr --local -l 1 -q --script <(printf '#!/usr/bin/env netstage\nrun()\nerror("at 3")\n') \
		> out 2> err && fail "no error"
	grep -q ':3: at 3$' err || fail "$(cat err)"
	mkfifo sf
	ns tcp_rr --local -l 1 -q --script sf > out 2> err ||
		fail "an empty fifo: $(cat err)"
	expect_gt "$(key out client.num_transactions)" 0 "the test ran"
}
