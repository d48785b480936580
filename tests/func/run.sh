#!/bin/bash
# Functional tests: real servers and clients on loopback, bounded in time.
# Each test runs in its own subshell with set -e; the last line is
# "N passed, M failed".
#
#   tests/func/run.sh ["t_a t_b ..."]
#
# JOBS=N (make check: the machine's CPUs) runs the tests that may share
# the machine in N lanes at once, then those declared solo (their
# figures are timings, costs or the machine's own state) one at a time.
cd "$(dirname "$0")/../.." || exit 1
. tests/func/lib.sh
USAGE_MD=$(pwd)/docs/usage.md
FLOOD=$(pwd)/tests/func/flood.py

# Each tests/func/t_AREA.sh holds the tests of one area; run.sh runs
# them all (or those named), in name order.

for f in tests/func/t_*.sh; do
	. "$f"
done

# lane QUEUE: take tests from QUEUE's next line on, one at a time, until
# none is left; other lanes take from the same queue. A test whose
# exclusive lock another lane holds goes back to the end once, marked
# '!' (then it waits for the lock). The counts go to QUEUE.N for the
# parent.
lane() {
	local queue=$1 n t

	while :; do
		exec 9>> "$queue.lock"
		flock 9
		n=$(($(cat "$queue.next") + 1))
		echo "$n" > "$queue.next"
		exec 9>&-
		t=$(sed -n "${n}p" "$queue")
		[ -n "$t" ] || break
		if [ "${t#!}" != "$t" ]; then
			run_test "${t#!}"
			continue
		fi
		RUN_DEFERRABLE=1 run_test "$t"
		if [ $? -eq "$DEFER" ]; then
			exec 9>> "$queue.lock"
			flock 9
			echo "!$t" >> "$queue"
			exec 9>&-
		fi
	done
	echo "$PASSED $FAILED $SKIPPED ${FAILED_NAMES[*]}" > "$queue.$BASHPID"
}

# in_lanes TESTS...: TESTS in JOBS lanes; their counts added to ours.
in_lanes() {
	local queue=$TMP/.queue i p f n s
	local -a pids=()

	printf '%s\n' "$@" > "$queue"
	echo 0 > "$queue.next"
	for i in $(seq "$JOBS"); do
		# A process of its own: its own TMP, its own $$.
		JOBS=1 RUN_QUEUE=$queue tests/func/run.sh &
		pids+=("$!")
	done
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
	local total=0
	for f in "$queue".[0-9]*; do
		[ -e "$f" ] || continue
		read -r p f2 s n < "$f"
		PASSED=$((PASSED + p))
		FAILED=$((FAILED + f2))
		SKIPPED=$((SKIPPED + s))
		total=$((total + p + f2 + s))
		# shellcheck disable=SC2206
		FAILED_NAMES+=($n)
	done
	# A lane that died took its counts with it: that fails, not passes.
	if [ "$total" -ne "$#" ]; then
		echo "not ok - lanes: $total of $# tests reported"
		FAILED=$((FAILED + 1))
		FAILED_NAMES+=(lanes)
	fi
}

if [ -n "${RUN_QUEUE:-}" ]; then
	lane "$RUN_QUEUE"
	exit 0
fi

TESTS=${1:-$(declare -F | awk '{print $3}' | grep '^t_')}
# Every test's ports below the ephemeral range (lib.sh, PORT_ROOT).
if [ $((24000 + ($(declare -F | grep -c ' t_') + 1) * PORT_STRIDE)) \
	-gt 32768 ]; then
	echo "run.sh: too many tests for PORT_STRIDE $PORT_STRIDE below port 32768"
	exit 1
fi
if [ "${JOBS:-1}" -gt 1 ]; then
	shared=$(printf '%s\n' $TESTS | grep -vxF -f <(printf '%s\n' $SOLO))
	# The longest first, so that no lane is left with one at the end.
	in_lanes $(printf '%s\n' $shared | grep -xF -f <(printf '%s\n' $LONG)) \
		$(printf '%s\n' $shared | grep -vxF -f <(printf '%s\n' $LONG))
	TESTS=$(printf '%s\n' $TESTS | grep -xF -f <(printf '%s\n' $SOLO))
fi
for t in $TESTS; do
	run_test "$t"
done
finish
