#!/bin/bash
# netstage against its peers on loopback, alternating run by run so that
# every ratio compares figures taken side by side in one invocation; the
# order of the tools rotates by round.
#
#   bench/peers.sh [-r REPS] [-l SECONDS] [-u UNPINNED_REPS]
#                  [-n NETPERF_BIN_DIR] [-s SECTIONS] [-c CONGESTION]
#
# SECTIONS, comma-separated (default all): rr (tcp_rr pinned and
# unpinned), busy (unpinned tcp_rr of the modes that never sleep, with
# the CPU each transaction costs), stream (tcp_stream at 16 KiB and
# 128 KiB writes, pinned and unpinned, the epoll engine and
# --io-mode=blocking).
#
# -c CONGESTION: the stream section runs under that TCP congestion
# control, made the system's (net.ipv4.tcp_congestion_control, root) for
# the section and restored after; loopback bulk moves by 2x between BBR
# and cubic here. Not each tool's own option: iperf3 3.12's -C sets it
# after connect(), when the system's BBR has already turned pacing on
# for good, so its connections would stay paced and the others not.
#
# Pinned (server and client on CPU 0 with taskset) is the headline:
# loopback figures on 2-core machines are bimodal otherwise. Unpinned
# runs are repeated more often so both modes show: -r rounds pinned, -u
# unpinned, in every section. Prints every run, then
# medians and netstage/peer ratios: of the medians, and the median of
# the rounds' own ratios with an interval that says whether netstage is
# ahead, level or behind (bench/paired.py; five rounds or more for an
# interval that tells). Needs sockperf, qperf, iperf3 and
# iperf 2 (EXTRA_PKGS="sockperf qperf iperf3 iperf" scripts/install-deps.sh);
# netperf is not a Debian package: build it from its source outside the
# tree and give -n the directory holding netperf and netserver.
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=3
UREPS=6
LEN=3
NETPERF=
SECTIONS=rr,busy,stream
CC=
while getopts "r:l:u:n:s:c:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	u) UREPS=$OPTARG ;;
	n) NETPERF=$OPTARG ;;
	s) SECTIONS=$OPTARG ;;
	c) CC=$OPTARG ;;
	*) exit 2 ;;
	esac
done

NS=build/netstage
for t in sockperf qperf iperf3 iperf taskset; do
	command -v $t > /dev/null || { echo "bench: $t is missing" >&2; exit 1; }
done
if [ -n "$NETPERF" ] && [ ! -x "$NETPERF/netperf" ]; then
	echo "bench: no netperf in $NETPERF" >&2
	exit 1
fi
[ -x $NS ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-bench.XXXXXX)
SYS_CC=
# -c: the system's congestion control back as it was, however the run ends.
trap 'pkill -P $$; rm -rf "$OUT"
	[ -z "$SYS_CC" ] || sysctl -qw net.ipv4.tcp_congestion_control="$SYS_CC"' EXIT
PORT=$((30000 + RANDOM % 10000))
NCPU=$(nproc)

section() {
	[[ ",$SECTIONS," == *",$1,"* ]]
}

# The CPU window of the busy section is a run's last LEN - 1 s.
if section busy && [ "$LEN" -lt 2 ]; then
	echo "bench: the busy section needs -l 2 or more" >&2
	exit 2
fi

# Every figure is appended as "name value round" to $OUT/figures; the
# round pairs it with the peers' figures taken beside it
# (bench/paired.py). A run that gave no figure (a peer that failed to
# start) is left out, and said so, rather than counted as 0.
ROUND=0
record() {
	# No tool that ran measures 0: a 0 is a run that failed (iperf (2)
	# printed one), and kept it would pull its tool's median down.
	if ! [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
	   [[ "$2" =~ ^0+(\.0+)?$ ]]; then
		printf '  %-34s %12s\n' "$1" "no figure"
		return
	fi
	echo "$1 $2 $ROUND" >> "$OUT/figures"
	printf '  %-34s %12.1f\n' "$1" "$2"
}

# The machine's busy jiffies and all jiffies, from /proc/stat.
jiffies() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i;
		print t - $5 - $6, t }' /proc/stat
}

# In the background through a run: the machine's jiffies every 0.1 s,
# with the uptime they were read at, to $OUT/cpu.log.
cpu_sampler() {
	local up rest

	while :; do
		read -r up rest < /proc/uptime
		echo "$up $(jiffies)"
		sleep 0.1
	done > "$OUT/cpu.log"
}

# With a sampler running (its pid in `cost`), record NAME.us_per_trans
# too: the machine's CPU time per transaction (netperf's service demand,
# both sides together). Every tool here ends its run right after its
# timed part, so the window is the timed part's last LEN - 1 s (warm-up
# and setup, which each tool spends differently, left out).
cost=
record_rr() {
	local end rest

	record "$1" "$2"
	[ -n "$cost" ] || return 0
	read -r end rest < /proc/uptime
	kill "$cost"
	wait "$cost" 2> /dev/null
	record "$1.us_per_trans" "$(awk -v e="$end" -v l="$LEN" -v n="$NCPU" \
		-v r="$2" '$1 >= e - l + 0.7 && $1 <= e - 0.3 {
			if (!t0) { t0 = $1; b0 = $2; a0 = $3 }
			b1 = $2; a1 = $3
		} END { print n * (b1 - b0) / (a1 - a0) * 1e6 / r }' \
		"$OUT/cpu.log")"
}

# ns_run PIN WORKLOAD ARGS...: a --local run, its results in $OUT/ns.out.
ns_run() {
	local pin=$1 wl=$2

	shift 2
	$pin $NS "$wl" --local -q -l "$LEN" "$@" > "$OUT/ns.out"
}

# The client's transactions over its run, as the peers count theirs:
# netstage's own throughput, a fit to its 1 s snapshots, is the same
# figure on average, but with three of them it moves by 2% run to run,
# which widened every ratio's interval.
ns_rr() {
	local name=$1 pin=$2

	shift 2
	ns_run "$pin" tcp_rr "$@"
	record_rr "$name" "$(awk -F= '
		$1 == "client.num_transactions" { n = $2 }
		$1 == "client.time_start" { t0 = $2 }
		$1 == "client.time_end" { t1 = $2 }
		END { if (n && t1 > t0) printf "%.1f\n", n / (t1 - t0) }' \
		"$OUT/ns.out")"
}

ns_stream() {
	local name=$1 pin=$2

	shift 2
	record "$name" \
		"$(ns_run "$pin" tcp_stream "$@" &&
		   grep -m1 '^server.throughput_Mbps=' "$OUT/ns.out" | cut -d= -f2)"
}

# sockperf_pp NAME PIN [IOMUX...]: ping-pong of 14-byte messages (its
# least); an I/O multiplexer (-F) needs the address in a feed file.
sockperf_pp() {
	local name=$1 pin=$2 line srv

	shift 2
	PORT=$((PORT + 1))
	echo "T:127.0.0.1:$PORT" > "$OUT/feed"
	$pin sockperf sr -f "$OUT/feed" "$@" > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	line=$($pin sockperf pp -f "$OUT/feed" -m 14 -t "$LEN" "$@" 2>&1 |
		grep 'Valid Duration')
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	# Each received message is one round trip.
	record_rr "$name" "$(echo "$line" | sed -E \
		's/.*RunTime=([0-9.]+) sec.*ReceivedMessages=([0-9]+).*/\2 \1/' |
		awk '{ print $1 / $2 }')"
}

qperf_lat() {
	local name=$1 pin=$2 lat srv

	$pin qperf > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	lat=$($pin qperf -t "$LEN" -m 1 127.0.0.1 tcp_lat |
		awk '/latency/ { v = $3; if ($4 == "ms") v *= 1000; print v }')
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	# qperf's latency is half a round trip.
	record "$name" "$(awk -v l="$lat" 'BEGIN { print 1e6 / (2 * l) }')"
}

# netperf_run NAME PIN TEST [TEST OPTIONS...]: netperf's throughput
# (trans/s for TCP_RR, 10^6 bits/s for TCP_STREAM).
netperf_run() {
	local name=$1 pin=$2 test=$3 v srv

	shift 3
	PORT=$((PORT + 1))
	$pin "$NETPERF/netserver" -D -p $PORT > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	v=$($pin "$NETPERF/netperf" -H 127.0.0.1 -p $PORT -t "$test" \
		-l "$LEN" -P 0 -- -o THROUGHPUT "$@" | tail -1)
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	if [ "$test" = TCP_RR ]; then
		record_rr "$name" "$v"
	else
		record "$name" "$v"
	fi
}

iperf3_stream() {
	local name=$1 pin=$2 srv

	shift 2
	PORT=$((PORT + 1))
	$pin iperf3 -s -1 -p $PORT > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	$pin iperf3 -c 127.0.0.1 -p $PORT -t "$LEN" -J "$@" > "$OUT/iperf.json"
	wait $srv 2> /dev/null
	record "$name" "$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6)' \
		"$OUT/iperf.json")"
}

# iperf (2): blocking reads and writes in a thread per connection, a
# second bulk reference beside iperf3's select() loop. Its server reads
# -l bytes a call as well.
iperf2_stream() {
	local name=$1 pin=$2 len=$3 srv

	shift 3
	PORT=$((PORT + 1))
	$pin iperf -s -p $PORT -l "$len" > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	# -y C: CSV, bits per second last.
	record "$name" "$($pin iperf -c 127.0.0.1 -p $PORT -t "$LEN" \
		-l "$len" -y C "$@" | awk -F, 'END { print $NF / 1e6 }')"
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
}

# rotate CMD...: run the commands (evaluated here) in turn, starting at
# the ROUND-th, so that no tool runs after the same one in every round:
# a run can inherit the state the one before it left (socket memory,
# caches, where the scheduler put things), and a fixed order gives
# that to one tool only.
rotate() {
	local i k

	for ((i = 0; i < $#; i++)); do
		k=$(((ROUND + i) % $# + 1))
		eval "${!k}"
	done
}

# rr_round MODE PIN: one run of every tool's 1-flow tcp_rr.
rr_round() {
	local mode=$1 pin=$2

	rotate 'ns_rr "$mode.netstage_epoll" "$pin"' \
		'ns_rr "$mode.netstage_blocking" "$pin" --io-mode=blocking' \
		'sockperf_pp "$mode.sockperf" "$pin"' \
		'qperf_lat "$mode.qperf" "$pin"' \
		'[ -z "$NETPERF" ] || netperf_run "$mode.netperf" "$pin" TCP_RR'
}

PIN="taskset -c 0"
if section rr; then
	echo "== tcp_rr, 1 flow, 1-byte messages, pinned to CPU 0 (trans/s)"
	for ROUND in $(seq "$REPS"); do
		rr_round pinned "$PIN"
	done
	echo "== tcp_rr, 1 flow, unpinned (trans/s)"
	for ROUND in $(seq "$UREPS"); do
		rr_round unpinned ""
	done
	echo "== tcp_rr -F 4 -T 2 (trans/s)"
	for ROUND in $(seq "$REPS"); do
		ns_rr pinned.netstage_F4T2 "$PIN" -F 4 -T 2
		ns_rr unpinned.netstage_F4T2 "" -F 4 -T 2
	done
fi
# Spinning pays off only with a CPU for each spinner: unpinned, the
# client and the server on a CPU each. Every tool's best setting:
# sockperf's epoll with a zero timeout and its non-blocking recvfrom
# loop; netperf has no mode that does not sleep.
if section busy; then
	echo "== tcp_rr, 1 flow, unpinned, never sleeping (trans/s; CPU us a transaction)"
	for ROUND in $(seq "$UREPS"); do
		for m in epoll busy spin; do
			cpu_sampler & cost=$!
			ns_rr busy.netstage_$m "" --io-mode=$m
		done
		cpu_sampler & cost=$!
		sockperf_pp busy.sockperf_epoll ""
		cpu_sampler & cost=$!
		sockperf_pp busy.sockperf_busy "" -F e --timeout 0
		cpu_sampler & cost=$!
		sockperf_pp busy.sockperf_spin "" -F r --nonblocked
		if [ -n "$NETPERF" ]; then
			cpu_sampler & cost=$!
			netperf_run busy.netperf "" TCP_RR
		fi
		cost=
	done
fi
# Same bytes per send() on both sides: 16 KiB is netstage's (and
# neper's) default, 128 KiB iperf3's (and netperf's here: -m). And the
# same bytes per recv(): iperf3 and iperf read -l, netperf its socket
# buffer's size (128 KiB here), so against netperf at 16 KiB netstage
# reads 128 KiB too (--read-size).
if section stream; then
	cc="$(sysctl -n net.ipv4.tcp_congestion_control), the system default"
	if [ -n "$CC" ]; then
		SYS_CC=$(sysctl -n net.ipv4.tcp_congestion_control)
		sysctl -qw net.ipv4.tcp_congestion_control="$CC" || {
			echo "bench: -c $CC: cannot make it the system's" >&2
			exit 1
		}
		cc="$CC, made the system's for this section"
	fi
	echo "== tcp_stream, 1 flow (Mbps), congestion control: $cc"
	# Pinned and unpinned share each round while both have rounds left.
	for ROUND in $(seq $((REPS > UREPS ? REPS : UREPS))); do
		for pin in "$PIN" ""; do
			[ -n "$pin" ] && [ "$ROUND" -gt "$REPS" ] && continue
			[ -z "$pin" ] && [ "$ROUND" -gt "$UREPS" ] && continue
			mode=$([ -n "$pin" ] && echo pinned || echo unpinned)
			rotate 'ns_stream $mode.netstage_stream_16k "$pin"' \
				'ns_stream $mode.netstage_blocking_16k "$pin" \
					--io-mode=blocking' \
				'iperf3_stream $mode.iperf3_16k "$pin" -l 16K' \
				'iperf2_stream $mode.iperf2_16k "$pin" 16K' \
				'[ -z "$NETPERF" ] ||
					ns_stream $mode.netstage_blocking_16k_r128k \
						"$pin" --io-mode=blocking \
						--read-size 131072' \
				'[ -z "$NETPERF" ] ||
					netperf_run $mode.netperf_16k "$pin" \
						TCP_STREAM -m 16384'
			rotate 'ns_stream $mode.netstage_stream_128k "$pin" \
					-B 131072' \
				'ns_stream $mode.netstage_blocking_128k "$pin" \
					-B 131072 --io-mode=blocking' \
				'iperf3_stream $mode.iperf3_128k "$pin"' \
				'iperf2_stream $mode.iperf2_128k "$pin" 128K' \
				'[ -z "$NETPERF" ] ||
					netperf_run $mode.netperf_128k "$pin" \
						TCP_STREAM -m 131072'
		done
	done
	[ -z "$SYS_CC" ] ||
		sysctl -qw net.ipv4.tcp_congestion_control="$SYS_CC"
	SYS_CC=
fi

echo
echo "== medians (min..max); netstage/peer: ratio of medians, then the"
echo "   median of the rounds' ratios with its interval (coverage, rounds)"
echo "   and whether netstage is ahead, level or behind by it"
python3 - "$OUT/figures" <<'EOF'
import statistics, sys
sys.path.insert(0, "bench")
import paired
rounds = paired.read_rounds(sys.argv[1])
runs = {k: list(v.values()) for k, v in rounds.items()}
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in runs.items():
    print(f"  {k:34} {med[k]:12.1f}  ({min(v):.1f}..{max(v):.1f}, n={len(v)})")
print()

def ratio(a, b, words=("ahead", "level", "behind")):
    if med.get(a) and med.get(b):
        print(f"  {a:30} / {b:26} = {med[a] / med[b]:5.2f}  "
              f"{paired.line(rounds, a, b, words=words) or ''}")

for mode in ("pinned", "unpinned"):
    for ns in ("netstage_epoll", "netstage_blocking"):
        for peer in ("sockperf", "qperf", "netperf"):
            ratio(f"{mode}.{ns}", f"{mode}.{peer}")
    for ns in ("stream", "blocking"):
        for sz in ("16k", "128k"):
            ratio(f"{mode}.netstage_{ns}_{sz}", f"{mode}.iperf3_{sz}")
            ratio(f"{mode}.netstage_{ns}_{sz}", f"{mode}.iperf2_{sz}")
        ratio(f"{mode}.netstage_{ns}_128k", f"{mode}.netperf_128k")
    # netperf's reader asks for its socket buffer's size (128 KiB
    # here) whatever -m is: against it, netstage reads as much.
    ratio(f"{mode}.netstage_blocking_16k_r128k", f"{mode}.netperf_16k")
for ns in ("busy", "spin"):
    for peer in ("netstage_epoll", "sockperf_busy", "sockperf_spin",
                 "netperf"):
        ratio(f"busy.netstage_{ns}", f"busy.{peer}")
        ratio(f"busy.netstage_{ns}.us_per_trans",
              f"busy.{peer}.us_per_trans",
              ("more CPU", "level", "less CPU"))
EOF
