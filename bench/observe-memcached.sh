#!/bin/bash
# What watching a server costs it: memcached on loopback loaded by the
# --raw client (gets of one key), with and without `netstage observe
# --port` watching it, alternating run by run in one invocation. Prints
# every run, the medians, the ratio observed/unobserved and the
# nanoseconds each request gained; then what the observer itself
# counted, against what memcached's own cmd_get counted.
#
#   [NETSTAGE=path] bench/observe-memcached.sh [-r REPS] [-l SECONDS] [-P]
#                   [-F FLOWS] (root)
#
# Pinned by default (memcached and client on CPU 0): unpinned loopback
# pays cross-CPU wake-ups and moves by 10x between runs. The observer
# runs twice per round: on CPU 1 (what its BPF programs cost the server's
# CPU) and on CPU 0 (that, and its own reading and merging of records
# on the same CPU). -P runs all unpinned.
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=5
LEN=3
PIN="taskset -c 0"
FLOWS=1
PORT=$((22000 + RANDOM % 1000))
while getopts "r:l:PF:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	P) PIN="" ;;
	F) FLOWS=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench: observe needs root" >&2; exit 1; }
command -v memcached > /dev/null || scripts/install-deps.sh
# NETSTAGE=path measures another build (an earlier one, for a before/after).
NS=${NETSTAGE:-build/netstage}
[ -x "$NS" ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-observe.XXXXXX)
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$OUT"' EXIT

$PIN memcached -u nobody -l 127.0.0.1 -p $PORT -U 0 -t 1 &
for _ in $(seq 100); do
	ss -ltn "sport = :$PORT" | grep -q LISTEN && break
	sleep 0.02
done
printf 'set k 0 0 5\r\nhello\r\nquit\r\n' | socat -t 2 - TCP:127.0.0.1:$PORT \
	> /dev/null

stat() {
	printf 'stats\r\nquit\r\n' | socat -t 2 - TCP:127.0.0.1:$PORT |
		tr -d '\r' | awk -v k="$1" '$2 == k { print $3 }'
}

client() {
	$PIN $NS tcp_rr --raw -H 127.0.0.1 -P $PORT -F "$FLOWS" -q -l "$LEN" \
		--request-data 'get k\r\n' -R 25 --response-end 'END\r\n' \
		-o num_transactions,throughput > "$OUT/cli.out" 2> /dev/null
}

record() {
	echo "$1 $2" >> "$OUT/figures"
	printf '  %-24s %12.1f\n' "$1" "$2"
}

observed() {		# name cpu-pinning
	local g0

	g0=$(stat cmd_get)
	$2 $NS observe --port $PORT -l $((LEN + 2)) -q --logtostderr \
		> "$OUT/obs.out" 2> "$OUT/obs.err" &
	for _ in $(seq 200); do
		grep -q 'observing pid' "$OUT/obs.err" && break
		sleep 0.02
	done
	client
	record "$1" "$(grep -m1 '^throughput=' "$OUT/cli.out" | cut -d= -f2)"
	wait $!
	echo "    observer counted $(grep -m1 '^num_transactions=' \
		"$OUT/obs.out" | cut -d= -f2), memcached $(($(stat cmd_get) - g0)) gets," \
		"incomplete $(grep -m1 '^trace_incomplete=' "$OUT/obs.out" |
		cut -d= -f2)"
}

echo "memcached gets, $FLOWS flow(s), ${LEN}s runs, ${PIN:-unpinned}"
for i in $(seq "$REPS"); do
	client
	record plain "$(grep -m1 '^throughput=' "$OUT/cli.out" | cut -d= -f2)"
	observed observed_cpu1 "${PIN:+taskset -c 1}"
	observed observed_cpu0 "$PIN"
done

median() {
	awk -v k="$1" '$1 == k { print $2 }' "$OUT/figures" | sort -g |
		awk '{ v[NR] = $1 }
		     END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'
}

p=$(median plain)
for o in observed_cpu1 observed_cpu0; do
	awk -v p="$p" -v o="$(median $o)" -v n=$o 'BEGIN {
		printf "%s: median %.1f requests/s against %.1f plain: " \
		       "ratio %.3f, %.0f ns added per request\n",
		       n, o, p, o / p, 1e9 / o - 1e9 / p }'
done
