# The benches' paired comparison (bench/paired.py), on figures whose
# answer is known (sourced by run.sh).

PAIRED="python3 $PWD/bench/paired.py"

# figures NAME VALUE ROUND ...: lines of a figures file, three at a time.
figures() {
	while [ $# -ge 3 ]; do
		echo "$1 $2 $3"
		shift 3
	done
}

# against_100 A...: a figure A in round i for each A, b's 100 beside it.
against_100() {
	local i=0 r

	for r in "$@"; do
		i=$((i + 1))
		figures a "$r" $i b 100 $i
	done
}

t_paired_ratio_interval_and_verdict() {
	# Nine rounds, the peer at 100: ratios 0.95..1.05, median 1.00.
	# Nine draws hold the median between their 2nd and 8th with
	# probability 1 - 2 * 10/512 = 96.1%.
	against_100 95 97 98 99 100 101 102 103 105 > level
	expect_eq "$($PAIRED level a b)" \
		"a / b = 1.000 [0.970..1.030] (96.1%, 9 rounds) level" "level"
	# All above: the 2nd lowest ratio, 1.02, is still above 1.
	against_100 101 102 103 104 105 106 107 108 109 > ahead
	expect_eq "$($PAIRED ahead a b)" \
		"a / b = 1.050 [1.020..1.080] (96.1%, 9 rounds) ahead" "ahead"
	expect_eq "$($PAIRED ahead b a)" \
		"b / a = 0.952 [0.926..0.980] (96.1%, 9 rounds) behind" "behind"
}

t_paired_ratios_pair_rounds_not_positions() {
	# The machine doubles its speed every other round; a is 2% faster
	# than b in every round. Its figures come in another order, and a
	# round b has no figure for pairs with nothing.
	figures b 100 1 b 200 2 b 100 3 b 200 4 b 100 5 b 200 6 b 100 7 \
		a 204 6 a 102 1 a 204 2 a 102 7 a 102 3 a 204 4 a 102 5 \
		a 999 8 > drift
	expect_eq "$($PAIRED drift a b)" \
		"a / b = 1.020 [1.020..1.020] (98.4%, 7 rounds) ahead" "pairs"
	# Seven draws are too few for 95% between any but the extremes;
	# three hold the median between theirs with 75%, too little to
	# tell ahead (all three ratios are 2 or more) from level.
	figures a 2 1 b 1 1 a 3 2 b 1 2 a 4 3 b 1 3 > three
	expect_eq "$($PAIRED three a b)" \
		"a / b = 3.000 [2.000..4.000] (75.0%, 3 rounds) too few rounds to tell" \
		"three"
	figures a 1 1 b 1 1 > one
	expect_eq "$($PAIRED one a b)" "a / b = too few rounds" "one round"
}

# bare_links: the tracepoints bench/bare-hooks's empty programs (named
# "bare") are linked to now, sorted.
bare_links() {
	python3 - <<'EOF2'
import json, subprocess


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out or "[]")


bare = {p["id"] for p in bpftool("prog", "show") if p.get("name") == "bare"}
print(" ".join(sorted(l.get("tp_name", "") for l in bpftool("link", "show")
                      if l.get("prog_id") in bare)))
EOF2
}

# bench/overhead.sh's kernel floor (bench/bare-hooks.c, built beside
# netstage by `make bench-tools`): an empty program on each tracepoint
# it is named, held until a signal; a name the kernel lacks, refused.
t_bare_hooks_attach_what_they_are_named() {
	local bare obj pid i

	need_root
	bare=$(dirname "$NETSTAGE")/bench/bare-hooks
	obj=$bare.bpf.o
	# Bounded, and ended with the test: a check that fails exits it.
	timeout --preserve-status $BOUND "$bare" "$obj" -s sk_data_ready \
		net_dev_start_xmit > out 2> err &
	pid=$!
	# Expanded now: the trap runs after the function's locals are gone.
	trap "kill $pid 2> /dev/null || true" EXIT
	for i in $(seq 100); do
		grep -q attached out && break
		sleep 0.05
	done
	expect_eq "$(cat out)" attached "says when its hooks are on"
	expect_eq "$(bare_links)" "net_dev_start_xmit sk_data_ready" \
		"one link per tracepoint"
	kill -TERM $pid
	wait $pid || fail "exit status $? on SIGTERM"
	expect_eq "$(bare_links)" "" "links gone with it"
	if "$bare" "$obj" sk_data_ready no_such_tracepoint > out 2> err; then
		fail "a missing tracepoint was not refused"
	fi
	expect_eq "$(wc -l < err)" 1 "one line"
	grep -q 'no tracepoint no_such_tracepoint' err ||
		fail "the error does not name the tracepoint: $(cat err)"
	expect_eq "$(bare_links)" "" "nothing left linked"
}

# bpftool lists every program of the machine, another test's too.
solo t_bare_hooks_attach_what_they_are_named
