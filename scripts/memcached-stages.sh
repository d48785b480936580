#!/bin/bash
# Seed 004 with netstage: memcached's request latency by kernel stage.
# Starts memcached on loopback (Debian's), sets a key, watches it with
# `netstage observe --port`, loads it with `--raw` gets of that key
# (traced), and joins the two records on one clock: the observer's
# stage table, the client's, and the joined path.
#
#   scripts/memcached-stages.sh [-l SECONDS] [-t MEMCACHED_THREADS]
#                                [CLIENT OPTIONS...]        (root)
#
# Files (records, outputs) go to $OUT, a new directory under /tmp by
# default. memcached is stopped on exit.
set -euo pipefail
# Run by sudo, netstage would become the invoking user (docs/usage.md,
# "Privileges"), who cannot write the root-owned directories used here.
unset SUDO_UID SUDO_GID SUDO_USER

NETSTAGE=${NETSTAGE:-$(dirname "$0")/../build/netstage}
NETSTAGE=$(readlink -f "$NETSTAGE")
PORT=${PORT:-21211}
LEN=5
THREADS=4
while getopts "l:t:" opt; do
	case $opt in
	l) LEN=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "$(id -u)" -eq 0 ] || { echo "memcached-stages: observe needs root" >&2; exit 1; }
command -v memcached > /dev/null ||
	{ echo "memcached-stages: install memcached (scripts/install-deps.sh)" >&2; exit 1; }
OUT=${OUT:-$(mktemp -d /tmp/netstage-memcached.XXXXXX)}
mkdir -p "$OUT"

memcached -u nobody -l 127.0.0.1 -p "$PORT" -U 0 -t "$THREADS" &
MC=$!
trap 'kill $MC 2> /dev/null' EXIT
for _ in $(seq 100); do
	ss -ltn "sport = :$PORT" | grep -q LISTEN && break
	sleep 0.05
done
printf 'set k 0 0 5\r\nhello\r\nquit\r\n' | socat -t 2 - "TCP:127.0.0.1:$PORT" \
	> /dev/null

"$NETSTAGE" observe --port "$PORT" -l $((LEN + 2)) -q --logtostderr \
	--trace-records "$OUT/memcached.csv" > "$OUT/observe.out" \
	2> "$OUT/observe.err" &
OBS=$!
for _ in $(seq 200); do
	grep -q 'observing pid' "$OUT/observe.err" && break
	sleep 0.05
done
# "VALUE k 0 5\r\nhello\r\nEND\r\n": 25 bytes, checked against its end.
"$NETSTAGE" tcp_rr --raw -H 127.0.0.1 -P "$PORT" -l "$LEN" -q \
	--request-data 'get k\r\n' -R 25 --response-end 'END\r\n' \
	--trace --trace-records "$OUT/client.csv" "$@" > "$OUT/client.out"
wait $OBS
grep -v '^libbpf\|observing pid' "$OUT/observe.err" >&2 || true
grep -E '^(num_transactions|throughput|trace_incomplete)=' "$OUT/observe.out" |
	sed 's/^/observe: /'
printf 'stats\r\nquit\r\n' | socat -t 2 - "TCP:127.0.0.1:$PORT" |
	tr -d '\r' | awk '$2 == "cmd_get" || $2 == "get_hits" {
		print "memcached: " $2 "=" $3 }'
"$NETSTAGE" join "$OUT/client.csv" memcached="$OUT/memcached.csv" \
	> "$OUT/join.out"
echo "memcached-stages: files in $OUT" >&2
