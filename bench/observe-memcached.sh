#!/bin/bash
# What watching a server costs it: memcached on loopback loaded by the
# --raw client (gets of one key), with and without `netstage observe
# --port` watching it, alternating run by run in one invocation. Prints
# every run, the medians, the ratio observed/unobserved and the
# nanoseconds each request gained; then what the observer itself
# counted, against what memcached's own cmd_get counted. Then the
# highest rate observe follows with no loss: memcached -t 2 under 2 to
# 32 flows on 2 threads, as fast as they go, observe unpinned.
#
#   [NETSTAGE=path] bench/observe-memcached.sh [-r REPS] [-l SECONDS]
#                   [-F FLOWS] [-m pinned|unpinned|both] [-n]
#                   [-t "TRACEPOINT..."] (root)
#
# Pinned (memcached and client on CPU 0): unpinned loopback pays
# cross-CPU wake-ups and moves by 10x between runs. The observer runs
# twice per pinned round: on CPU 1 (what its BPF programs cost the
# server's CPU) and on CPU 0 (that, and its own reading and merging of
# records on the same CPU). -m both (the default) alternates pinned and
# unpinned rounds. -n: no rate ladder. Pinned rounds also run the
# client beside empty programs on observe's hooks: the floor no
# observer on those hooks goes below on this machine (-t: the floor of
# these tracepoints instead, sys_exit alone, say).
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=5
LEN=3
MODE=both
LADDER=1
FLOWS=1
PORT=$((22000 + RANDOM % 1000))
FLOOR_TPS=""
while getopts "r:l:F:m:nt:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	F) FLOWS=$OPTARG ;;
	m) MODE=$OPTARG ;;
	n) LADDER=0 ;;
	t) FLOOR_TPS=$OPTARG ;;
	*) exit 2 ;;
	esac
done
case $MODE in
pinned|unpinned|both) ;;
*) echo "bench: -m pinned, unpinned or both, not '$MODE'" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "bench: observe needs root" >&2; exit 1; }
command -v memcached > /dev/null || scripts/install-deps.sh
# NETSTAGE=path measures another build (an earlier one, for a before/after).
NS=${NETSTAGE:-build/netstage}
[ -x "$NS" ] || make -s || exit 1
make -s bench-tools || exit 1
. bench/lib.sh
OUT=$(mktemp -d /tmp/netstage-observe.XXXXXX)
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$OUT"' EXIT

ALL_CPUS=0-$(($(nproc) - 1))

# start_memcached PORT THREADS: memcached with key k set; its pid in MC.
start_memcached() {
	memcached -u nobody -l 127.0.0.1 -p "$1" -U 0 -t "$2" &
	MC=$!
	for _ in $(seq 100); do
		ss -ltn "sport = :$1" | grep -q LISTEN && break
		sleep 0.02
	done
	printf 'set k 0 0 5\r\nhello\r\nquit\r\n' |
		socat -t 2 - "TCP:127.0.0.1:$1" > /dev/null
}

stat() {
	printf 'stats\r\nquit\r\n' | socat -t 2 - TCP:127.0.0.1:$PORT |
		tr -d '\r' | awk -v k="$1" '$2 == k { print $3 }'
}

client() {		# pinning [options]
	local pin=$1

	shift
	$pin $NS tcp_rr --raw -H 127.0.0.1 -P $PORT -F "$FLOWS" -q \
		-l "$LEN" --request-data 'get k\r\n' -R 25 \
		--response-end 'END\r\n' -o num_transactions,throughput "$@" \
		> "$OUT/cli.out" 2> /dev/null
}

record() {
	echo "$1 $2" >> "$OUT/figures"
	printf '  %-24s %12.1f\n' "$1" "$2"
}

# start_observer LENGTH PINNING: observe --port PORT in the background.
start_observer() {
	$2 $NS observe --port $PORT -l "$1" -q --logtostderr \
		> "$OUT/obs.out" 2> "$OUT/obs.err" &
	OBS=$!
	for _ in $(seq 200); do
		grep -q 'observing pid' "$OUT/obs.err" && break
		sleep 0.02
	done
}

obs_key() {
	grep -m1 "^$1=" "$OUT/obs.out" | cut -d= -f2
}

observed() {		# name client-pinning observer-pinning
	local g0

	g0=$(stat cmd_get)
	start_observer $((LEN + 2)) "$3"
	client "$2"
	record "$1" "$(grep -m1 '^throughput=' "$OUT/cli.out" | cut -d= -f2)"
	wait $OBS
	echo "    observer counted $(obs_key num_transactions)," \
		"memcached $(($(stat cmd_get) - g0)) gets," \
		"incomplete $(obs_key trace_incomplete), lost $(obs_key trace_lost)"
}

plain() {		# name client-pinning
	client "$2"
	record "$1" "$(grep -m1 '^throughput=' "$OUT/cli.out" | cut -d= -f2)"
}

# The floor under any observer on these hooks: an unobserved run while
# another process (bench/bare-hooks.c) holds empty programs on the
# tracepoints observe attaches (every hook but --trace-sched's two, as
# `netstage --version` lists them): what entering them costs, whatever
# the programs do.
floor() {		# name client-pinning
	local tps

	tps=${FLOOR_TPS:-$($NS --version | sed -n 's/^tracepoints: //p' |
		tr ' ' '\n' | grep -v '^sched_' | tr '\n' ' ')}
	# shellcheck disable=SC2086
	bench_bare "$OUT/bare.out" "$1" $tps -- plain "$1" "$2"
}

median() {
	awk -v k="$1" '$1 == k { print $2 }' "$OUT/figures" | sort -g |
		awk '{ v[NR] = $1 }
		     END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'
}

# ratio OBSERVED PLAIN: the medians' ratio, and the median of the
# rounds' own ratios (each observed run against its round's plain one).
ratio() {
	local p o r

	p=$(median "$2")
	o=$(median "$1")
	r=$(paste <(awk -v k="$1" '$1 == k { print $2 }' "$OUT/figures") \
		  <(awk -v k="$2" '$1 == k { print $2 }' "$OUT/figures") |
		awk '{ print $1 / $2 }' | sort -g |
		awk '{ v[NR] = $1 }
		     END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	awk -v p="$p" -v o="$o" -v r="$r" -v n="$1" 'BEGIN {
		printf "%s: median %.1f requests/s against %.1f plain: " \
		       "ratio %.3f (rounds: %.3f), %.0f ns added per request\n",
		       n, o, p, o / p, r, 1e9 / o - 1e9 / p }'
}

start_memcached $PORT 1
echo "memcached -t 1 gets, $FLOWS flow(s), ${LEN}s runs, $MODE"
for i in $(seq "$REPS"); do
	if [ "$MODE" != unpinned ]; then
		taskset -a -pc 0 $MC > /dev/null
		plain pinned_plain "taskset -c 0"
		observed pinned_observer_cpu1 "taskset -c 0" "taskset -c 1"
		observed pinned_observer_cpu0 "taskset -c 0" "taskset -c 0"
		floor pinned_hooks_floor "taskset -c 0"
	fi
	if [ "$MODE" != pinned ]; then
		taskset -a -pc "$ALL_CPUS" $MC > /dev/null
		plain unpinned_plain ""
		observed unpinned_observer "" ""
	fi
done
if [ "$MODE" != unpinned ]; then
	ratio pinned_observer_cpu1 pinned_plain
	ratio pinned_observer_cpu0 pinned_plain
	ratio pinned_hooks_floor pinned_plain
fi
[ "$MODE" = pinned ] || ratio unpinned_observer unpinned_plain
kill $MC
wait $MC 2> /dev/null
[ "$LADDER" = 1 ] || exit 0

# The rate ladder: more flows, closed loop (observe times one request
# in flight per connection: --rate would pipeline).
PORT=$((PORT + 1))
start_memcached $PORT 2
LEN=5
echo "memcached -t 2, ${LEN}s, client on 2 threads, all unpinned: the rate observe follows"
best=0
for FLOWS in 2 4 8 16 32; do
	g0=$(stat cmd_get)
	start_observer "$LEN" ""
	client "" -T 2 -l $((LEN + 1))
	wait $OBS
	lost=$(obs_key trace_lost)
	got=$(obs_key throughput)
	printf '  %2d flows: observe followed %9.1f gets/s, lost %s, incomplete %s (memcached: %.1f/s over the client'"'"'s %ss)\n' \
		"$FLOWS" "$got" "$lost" "$(obs_key trace_incomplete)" \
		"$(awk -v g=$(($(stat cmd_get) - g0)) -v l=$((LEN + 1)) \
			'BEGIN { print g / l }')" $((LEN + 1))
	[ "$lost" != 0 ] || best=$(awk -v a="$best" -v b="$got" \
		'BEGIN { print (b > a) ? b : a }')
done
echo "highest rate followed with no loss: $best gets/s"
