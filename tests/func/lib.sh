# Helpers for the functional tests: run netstage on loopback with a time
# bound, read keys from its output, and count what passed.

: "${NETSTAGE:=build/netstage}"
# Run by sudo, netstage would become the invoking user (docs/usage.md,
# "Privileges"), who cannot write the root-owned directories used here.
unset SUDO_UID SUDO_GID SUDO_USER
NETSTAGE=$(readlink -f "$NETSTAGE")
TMP=$(mktemp -d /tmp/netstage-func.XXXXXX)
PASSED=0
FAILED=0
SKIPPED=0
# A test that cannot run here exits with this, after saying why.
SKIP=77
# A lane's test that found its exclusive NAME taken: it goes back to the
# queue's end, uncounted (run.sh).
DEFER=75
FAILED_NAMES=()
# Every run of netstage is bounded: a hang fails the test, not CI.
BOUND=60

cleanup() {
	jobs -p | xargs -r kill -9 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# A free-looking port pair per test, away from the defaults.
next_ports() {
	PORT_BASE=$((PORT_BASE + 2))
	CPORT=$PORT_BASE
	DPORT=$((PORT_BASE + 1))
}
# Below the kernel's ephemeral range (32768-60999 by default): a port a
# test's client connections used can still be held (TIME_WAIT) when a
# later test's server binds it. Each test has PORT_STRIDE ports of its
# own from its place in the whole list, so tests running at once in
# other lanes never share one; the root moves between runs.
: "${PORT_ROOT:=$((20000 + RANDOM % 4000))}"
export PORT_ROOT
PORT_STRIDE=40

ns() {
	timeout -k 5 "$BOUND" "$NETSTAGE" "$@"
}

# key FILE NAME: the value of NAME=... in FILE (first match).
key() {
	grep -m1 "^$2=" "$1" | cut -d= -f2-
}

fail() {
	echo "    $*"
	return 1
}

expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# Integer comparisons with a message naming what was compared.
expect_le() {
	[ "$1" -le "$2" ] || fail "$3: expected $1 <= $2"
}

expect_gt() {
	[ "$1" -gt "$2" ] || fail "$3: expected $1 > $2"
}

# solo NAME...: tests that run alone, after the lanes (JOBS > 1): what
# they assert is a timing, a cost or the load of the machine, or they
# change what every process shares. long NAME...: tests of a minute or
# more, which the lanes take first.
SOLO=""
LONG=""
solo() {
	SOLO="$SOLO $*"
}
long() {
	LONG="$LONG $*"
}

# ours PATTERN: the processes whose command line matches and that run in
# this test's directory: another lane's test can run the same command.
ours() {
	local p

	for p in $(pgrep -f -- "$1"); do
		[ "$(readlink /proc/"$p"/cwd 2>/dev/null)" != "$PWD" ] ||
			echo "$p"
	done
}

# exclusive NAME: from here to its end, the test runs beside no other
# test that said NAME, in any lane. Taken the first time a lane tries
# (RUN_DEFERRABLE), the test ends with DEFER and its lane goes on with
# others (a fleet test waited 146 s for the other's lock); the second
# time, it waits.
exclusive() {
	exec 7> "${RUN_QUEUE:-$TMP/.queue}.$1.lock"
	if [ -n "${RUN_DEFERRABLE:-}" ] && ! flock -n 7; then
		exit "$DEFER"
	fi
	flock 7
}

# test_index NAME: NAME's place among every test of the tree.
test_index() {
	declare -F | awk '{ print $3 }' | grep '^t_' | grep -n -x -- "$1" |
		cut -d: -f1
}

run_test() {
	local name=$1 rc start=$SECONDS block=$TMP/.block

	# Ports of its own per test: a server another test left waiting
	# cannot answer this one's client.
	PORT_BASE=$((PORT_ROOT + $(test_index "$name") * PORT_STRIDE))
	touch "$TMP/.started"
	# Not in an if or && list: there bash would ignore set -e.
	(
		set -e
		cd "$TMP"
		"$name"
	) > "$TMP/$name.log" 2>&1
	rc=$?
	[ "$rc" -ne "$DEFER" ] || [ -z "${RUN_DEFERRABLE:-}" ] || return "$DEFER"
	# TEST_TIMES=FILE: where make check's time goes, a line a test.
	[ -z "${TEST_TIMES:-}" ] ||
		echo "$((SECONDS - start)) $name" >> "$TEST_TIMES"
	# A test's lines in one write: lanes share the terminal.
	report_test "$name" "$rc" > "$block"
	cat "$block"
}

report_test() {
	local name=$1 rc=$2

	if [ "$rc" -eq "$SKIP" ]; then
		SKIPPED=$((SKIPPED + 1))
		echo "skip - $name: $(tail -1 "$TMP/$name.log")"
	elif [ "$rc" -eq 0 ]; then
		PASSED=$((PASSED + 1))
		echo "ok - $name"
		# SHOW_LOG=1: what a passing test printed too (figures).
		[ -z "${SHOW_LOG:-}" ] || sed 's/^/    | /' "$TMP/$name.log"
	else
		FAILED=$((FAILED + 1))
		FAILED_NAMES+=("$name")
		echo "not ok - $name"
		sed 's/^/    | /' "$TMP/$name.log" | tail -25
		# netstage's own stderr, which this test kept in files.
		find "$TMP" -maxdepth 1 \( -name err -o -name '*.err' \) \
			-newer "$TMP/.started" -size +0 | while read -r e; do
			grep -vE '^  ' "$e" | tail -5 |
				sed "s|^|    $(basename "$e"): |"
		done
	fi
}

# Start a server in the background on fresh ports; SRV_PID, SRV_OUT.
start_server() {
	next_ports
	SRV_OUT=$TMP/server.$CPORT.out
	ns "$@" -C "$CPORT" -P "$DPORT" -q > "$SRV_OUT" 2> "$SRV_OUT.err" &
	SRV_PID=$!
	wait_port "$CPORT"
}

# Stop the server start_server began: SRV_PID is the subshell running
# ns(), so the signal goes to its child (timeout, which passes it on).
stop_server() {
	pkill -TERM -P "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" 2>/dev/null || true
}

# wait_port PORT [ADDR [NETNS]]: until something listens on PORT (at
# ADDR, in network namespace NETNS): a server started in the background
# is ready for its client.
wait_port() {
	local i filter="sport = :$1"

	[ -n "${2:-}" ] && filter="src $2:$1"
	for i in $(seq 100); do
		${3:+ip netns exec "$3"} ss -ltn "$filter" | grep -q LISTEN &&
			return 0
		sleep 0.05
	done
	fail "nothing listens on port $1${2:+ at $2}${3:+ in $3}"
}

# under_strace ARGS...: strace ARGS with LeakSanitizer off in a sanitizer
# build, since it cannot work under ptrace; the rest of ASan can.
under_strace() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace "$@"
}

# Tracing loads BPF: root only. Others skip, saying so.
need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "needs root to load BPF"
		exit "$SKIP"
	fi
}

finish() {
	[ "$FAILED" -eq 0 ] || echo "failed: ${FAILED_NAMES[*]}"
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
}

# Checks the test files share.

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
