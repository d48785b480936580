#!/bin/bash
# What Lua packet hooks cost: tcp_rr transactions/s with no script, with
# a script that registers no packet hook, and with pass-through
# client_recvmsg and client_sendmsg hooks (bench/passthrough.lua),
# alternating run by run in one invocation.
#
#   bench/script-hooks.sh [-r REPS] [-l SECONDS] [-P]
#
# Pinned (server and client on CPU 0) by default: unpinned loopback is
# bimodal on 2 cores. -P runs unpinned. Prints every run, the medians and
# each mode's ratio to the no-script runs (the issue's target for the
# pass-through hooks: >= 0.85), and the added nanoseconds per transaction.
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=5
LEN=3
PIN="taskset -c 0"
while getopts "r:l:P" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	P) PIN="" ;;
	*) exit 2 ;;
	esac
done
NS=build/netstage
[ -x $NS ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-hooks.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
: > "$OUT/empty.lua"

run() {			# name args...
	local name=$1 v

	shift
	$PIN $NS tcp_rr --local -q -l "$LEN" "$@" > "$OUT/ns.out" 2> /dev/null
	v=$(grep -m1 '^client.throughput=' "$OUT/ns.out" | cut -d= -f2)
	echo "$name $v" >> "$OUT/figures"
	printf '  %-12s %12.1f\n' "$name" "$v"
}

echo "== tcp_rr, 1 flow, ${PIN:+pinned to CPU 0, }$LEN s runs (trans/s)"
for i in $(seq "$REPS"); do
	run none
	run no-hooks --script "$OUT/empty.lua"
	run passthrough --script bench/passthrough.lua
done

python3 - "$OUT/figures" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
med = {k: statistics.median(v) for k, v in runs.items()}
print("== medians (min..max)")
for k, v in runs.items():
    print(f"  {k:12} {med[k]:12.1f}  ({min(v):.1f}..{max(v):.1f}, n={len(v)})")
base = med["none"]
print("== against the no-script runs of this invocation")
for k in ("no-hooks", "passthrough"):
    print(f"  {k:12} ratio {med[k] / base:5.3f}  "
          f"added {1e9 / med[k] - 1e9 / base:6.0f} ns per transaction")
PY
