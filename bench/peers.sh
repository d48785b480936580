#!/bin/bash
# netstage against its peers on loopback, alternating run by run so that
# every ratio compares figures taken side by side in one invocation.
#
#   bench/peers.sh [-r REPS] [-l SECONDS] [-u UNPINNED_REPS]
#
# Pinned (server and client on CPU 0 with taskset) is the headline:
# loopback figures on 2-core machines are bimodal otherwise. Unpinned
# runs are repeated more often so both modes show. Prints every run, then
# medians and netstage/peer ratios. Needs sockperf, qperf and iperf3
# (EXTRA_PKGS="sockperf qperf iperf3" scripts/install-deps.sh).
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=3
UREPS=6
LEN=3
while getopts "r:l:u:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	u) UREPS=$OPTARG ;;
	*) exit 2 ;;
	esac
done

NS=build/netstage
for t in sockperf qperf iperf3 taskset; do
	command -v $t > /dev/null || { echo "bench: $t is missing" >&2; exit 1; }
done
[ -x $NS ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-bench.XXXXXX)
trap 'pkill -P $$; rm -rf "$OUT"' EXIT
PORT=$((30000 + RANDOM % 10000))

# Every figure is appended as "name value" to $OUT/figures.
record() {
	echo "$1 $2" >> "$OUT/figures"
	printf '  %-34s %12.1f\n' "$1" "$2"
}

# ns_run NAME PIN KEY WORKLOAD ARGS...: record netstage's result KEY.
ns_run() {
	local name=$1 pin=$2 key=$3 wl=$4

	shift 4
	$pin $NS "$wl" --local -q -l "$LEN" "$@" > "$OUT/ns.out"
	record "$name" "$(grep -m1 "^$key=" "$OUT/ns.out" | cut -d= -f2)"
}

ns_rr() {
	local name=$1 pin=$2

	shift 2
	ns_run "$name" "$pin" client.throughput tcp_rr "$@"
}

ns_stream() {
	local name=$1 pin=$2

	shift 2
	ns_run "$name" "$pin" server.throughput_Mbps tcp_stream "$@"
}

sockperf_pp() {
	local name=$1 pin=$2 line

	PORT=$((PORT + 1))
	$pin sockperf sr --tcp -p $PORT > /dev/null 2>&1 &
	sleep 0.3
	line=$($pin sockperf pp --tcp -i 127.0.0.1 -p $PORT -m 14 -t "$LEN" \
		2>&1 | grep 'Valid Duration')
	kill %1 2> /dev/null
	wait 2> /dev/null
	# Each received message is one round trip.
	record "$name" "$(echo "$line" | sed -E \
		's/.*RunTime=([0-9.]+) sec.*ReceivedMessages=([0-9]+).*/\2 \1/' |
		awk '{ print $1 / $2 }')"
}

qperf_lat() {
	local name=$1 pin=$2 lat

	$pin qperf > /dev/null 2>&1 &
	sleep 0.3
	lat=$($pin qperf -t "$LEN" -m 1 127.0.0.1 tcp_lat |
		awk '/latency/ { v = $3; if ($4 == "ms") v *= 1000; print v }')
	kill %1 2> /dev/null
	wait 2> /dev/null
	# qperf's latency is half a round trip.
	record "$name" "$(awk -v l="$lat" 'BEGIN { print 1e6 / (2 * l) }')"
}

iperf3_stream() {
	local name=$1 pin=$2

	shift 2
	PORT=$((PORT + 1))
	$pin iperf3 -s -1 -p $PORT > /dev/null 2>&1 &
	sleep 0.3
	$pin iperf3 -c 127.0.0.1 -p $PORT -t "$LEN" -J "$@" > "$OUT/iperf.json"
	wait 2> /dev/null
	record "$name" "$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6)' \
		"$OUT/iperf.json")"
}

PIN="taskset -c 0"
echo "== tcp_rr, 1 flow, 1-byte messages, pinned to CPU 0 (trans/s)"
for i in $(seq "$REPS"); do
	ns_rr pinned.netstage_epoll "$PIN"
	ns_rr pinned.netstage_blocking "$PIN" --io-mode=blocking
	sockperf_pp pinned.sockperf "$PIN"
	qperf_lat pinned.qperf "$PIN"
done
echo "== tcp_rr, 1 flow, unpinned (trans/s)"
for i in $(seq "$UREPS"); do
	ns_rr unpinned.netstage_epoll ""
	ns_rr unpinned.netstage_blocking "" --io-mode=blocking
	sockperf_pp unpinned.sockperf ""
	qperf_lat unpinned.qperf ""
done
echo "== tcp_rr -F 4 -T 2 (trans/s)"
for i in $(seq "$REPS"); do
	ns_rr pinned.netstage_F4T2 "$PIN" -F 4 -T 2
	ns_rr unpinned.netstage_F4T2 "" -F 4 -T 2
done
# Same bytes per send() on both sides: 16 KiB is netstage's (and
# neper's) default, 128 KiB iperf3's.
echo "== tcp_stream, 1 flow (Mbps)"
for i in $(seq "$REPS"); do
	for pin in "$PIN" ""; do
		mode=$([ -n "$pin" ] && echo pinned || echo unpinned)
		ns_stream $mode.netstage_stream_16k "$pin"
		iperf3_stream $mode.iperf3_16k "$pin" -l 16K
		ns_stream $mode.netstage_stream_128k "$pin" -B 131072
		iperf3_stream $mode.iperf3_128k "$pin"
	done
done

echo
echo "== medians (min..max), and ratios netstage/peer of medians"
python3 - "$OUT/figures" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in runs.items():
    print(f"  {k:34} {med[k]:12.1f}  ({min(v):.1f}..{max(v):.1f}, n={len(v)})")
print()
for mode in ("pinned", "unpinned"):
    for ns in ("netstage_epoll", "netstage_blocking"):
        for peer in ("sockperf", "qperf"):
            a, b = med.get(f"{mode}.{ns}"), med.get(f"{mode}.{peer}")
            if a and b:
                print(f"  {mode:8} {ns:18} / {peer:9} = {a / b:5.2f}")
    for sz in ("16k", "128k"):
        a = med.get(f"{mode}.netstage_stream_{sz}")
        b = med.get(f"{mode}.iperf3_{sz}")
        if a and b:
            print(f"  {mode:8} {'netstage_stream_' + sz:18} / {'iperf3_' + sz:9} = {a / b:5.2f}")
EOF
