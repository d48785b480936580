#!/bin/bash
# How long tracing takes to start (trace_setup_ms: the hooks the kernel
# has, the object's load and verifying, attaching, the entry's
# calibration), by mode, pinned, run by run alternating the modes (and
# another build's, with -o) in one invocation; medians and ranges.
# `observe` watches a port a listener of the bench's own holds.
#
#   bench/startup.sh [-r ROUNDS] [-o OTHER] [-P] (root)
#
# -o OTHER: another build's binary, each mode with both (a change
# against its parent). -P: unpinned.
set -u
cd "$(dirname "$0")/.." || exit 1

ROUNDS=6
PIN="taskset -c 0"
OTHER=
while getopts "r:o:P" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	o) OTHER=$OPTARG ;;
	P) PIN="" ;;
	*) exit 2 ;;
	esac
done
. bench/lib.sh
bench_netstage
bench_other "$OTHER"
MODES=("tcp_rr" "udp_rr" "tcp_crr" "tcp_rr --trace-sched"
       "tcp_rr --rate 5000" "observe")
OUT=$(mktemp /tmp/netstage-startup.XXXXXX)
OBS_PORT=11397
python3 -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
time.sleep(3600)' $OBS_PORT &
LISTENER=$!
trap 'kill $LISTENER 2> /dev/null; rm -f "$OUT"' EXIT
sleep 0.5

# setup BIN MODE: one run's trace_setup_ms.
setup() {
	if [ "$2" = observe ]; then
		$PIN "$1" observe --port $OBS_PORT -l 1 2>&1 |
			sed -n 's/^trace_setup_ms=//p'
		return
	fi
	# shellcheck disable=SC2086
	$PIN "$1" $2 --local -l 1 --trace 2>&1 |
		sed -n 's/^client.trace_setup_ms=//p'
}

for r in $(seq "$ROUNDS"); do
	for bin in $NS $OTHER; do
		for m in "${MODES[@]}"; do
			echo "$bin|$m|$(setup "$bin" "$m")" >> "$OUT"
		done
	done
done

python3 - "$OUT" "$NS" "$OTHER" <<'PY'
import collections, statistics, sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, m, v = line.rstrip("\n").split("|")
    if v:
        runs[(m, b)].append(float(v))
bins = [b for b in sys.argv[2:] if b]
print("trace_setup_ms, medians [least-most] of each mode's runs")
print("%-24s" % "mode" + "".join("%26s" % b for b in bins))
for m in dict.fromkeys(m for m, _ in runs):
    cells = []
    for b in bins:
        v = runs.get((m, b))
        cells.append("%26s" % ("%.1f [%.0f-%.0f]" % (
            statistics.median(v), min(v), max(v)) if v else "-"))
    print("%-24s" % m + "".join(cells))
PY
