#!/bin/bash
# Client memory per flow: netstage against neper, tcp_rr on loopback.
#
#   bench/memory.sh [-n NEPER_TCP_RR] [-l SECONDS] [-s FLOWS]
#
# Each client runs against its own server for a few seconds; its peak
# resident size (GNU time's %M, KiB) at 1 flow and at F flows gives the
# memory one flow costs: (rss(F) - rss(1)) / (F - 1). neper is built
# from its source outside the tree (-n path/to/neper/tcp_rr); without
# it only netstage's figures print. Flows are spread over four loopback
# source addresses (-L) so that 10,000 connections do not exhaust one
# address's ephemeral ports; neper gets the same list.
#
# -s FLOWS: netstage alone, FLOWS flows open at once, -T 2, split over
# as many client/server pairs as the descriptor limit makes each take
# (a process holds its flows and 64 more): every client's peak RSS,
# their sum, and what a flow cost against a 1-flow client.
set -u
cd "$(dirname "$0")/.." || exit 1

NEPER=
LEN=2
SCALE=0
while getopts "n:l:s:" opt; do
	case $opt in
	n) NEPER=$OPTARG ;;
	l) LEN=$OPTARG ;;
	s) SCALE=$OPTARG ;;
	*) exit 2 ;;
	esac
done

NS=build/netstage
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (Debian time)" >&2; exit 1; }
[ -x $NS ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-bench.XXXXXX)
trap 'pkill -P $$; rm -rf "$OUT"' EXIT
PORT=$((30000 + RANDOM % 10000))
# neper wants at least as many flows as addresses.
locals() { [ "$1" -ge 4 ] && echo "-L 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4"; }

# client_rss TOOL FLOWS THREADS: the client's peak RSS (KiB) into
# $OUT/TOOL.FLOWS, against a server of its own kind.
client_rss() {
	local f=$2 t=$3 cmd=("$NS" tcp_rr -q)

	[ "$1" = neper ] && cmd=("$NEPER" --nolog)
	PORT=$((PORT + 2))
	"${cmd[@]}" -P $PORT -C $((PORT + 1)) -F "$f" -T "$t" \
		-l $((LEN + 30)) > /dev/null 2>&1 &
	sleep 0.3
	/usr/bin/time -o "$OUT/time" -f %M "${cmd[@]}" -c -H 127.0.0.1 \
		-P $PORT -C $((PORT + 1)) $(locals "$f") -l "$LEN" -F "$f" \
		-T "$t" > "$OUT/out" 2>&1 || cat "$OUT/out" >&2
	kill %1 2> /dev/null
	wait 2> /dev/null
	cat "$OUT/time" > "$OUT/$1.$f"
}

# scale FLOWS: FLOWS flows at once over as many pairs as the limit needs.
scale() {
	local total=$1 per pairs p port left f sum=0 base clients=

	per=$(( $(ulimit -Hn) - 2 * 64 ))
	per=$(( per * 5 / 6 ))	# and room for the server's accepts
	pairs=$(( (total + per - 1) / per ))
	client_rss netstage 1 1
	base=$(cat "$OUT/netstage.1")
	echo "== $total flows at once: $pairs client/server pairs, -T 2 each"
	left=$total
	for p in $(seq "$pairs"); do
		f=$(( left / (pairs - p + 1) ))
		left=$(( left - f ))
		port=$(( PORT + 10 * p ))
		$NS tcp_rr -q -P $port -C $((port + 1)) -F "$f" -T 2 \
			-l $((LEN + 60)) > /dev/null 2>&1 &
		echo "$f" > "$OUT/flows.$p"
	done
	sleep 0.5
	for p in $(seq "$pairs"); do
		port=$(( PORT + 10 * p ))
		/usr/bin/time -o "$OUT/time.$p" -f %M $NS tcp_rr -c \
			-H 127.0.0.1 -P $port -C $((port + 1)) $(locals 4) \
			-F "$(cat "$OUT/flows.$p")" -T 2 -l "$LEN" -q \
			> "$OUT/out.$p" 2>&1 &
		clients="$clients $!"
	done
	# The clients end; their servers run on until killed.
	wait $clients
	printf '%6s %8s %10s %10s\n' pair flows rss_KiB flows_ok
	for p in $(seq "$pairs"); do
		f=$(cat "$OUT/flows.$p")
		rss=$(cat "$OUT/time.$p")
		sum=$(( sum + rss ))
		printf '%6d %8d %10d %10s\n' "$p" "$f" "$rss" \
			"$(grep -m1 '^num_flows=' "$OUT/out.$p" | cut -d= -f2)"
		grep -q '^io_errors=0$' "$OUT/out.$p" ||
			echo "pair $p: $(grep -m1 -i error "$OUT/out.$p")" >&2
	done
	echo "clients' RSS: $sum KiB for $total flows; 1-flow client $base KiB"
	echo "KiB per flow beyond a 1-flow client each: $(echo \
		"($sum - $pairs * $base) / $total" | bc -l | cut -c1-5)"
	kill $(jobs -p) 2> /dev/null
	wait 2> /dev/null
}

if [ "$SCALE" -gt 0 ]; then
	scale "$SCALE"
	exit 0
fi

tools=netstage
[ -n "$NEPER" ] && tools="netstage neper"
printf '%-10s %8s %8s %10s %12s\n' tool flows threads rss_KiB KiB_per_flow
for tool in $tools; do
	client_rss $tool 1 1
	base=$(cat "$OUT/$tool.1")
	printf '%-10s %8d %8d %10d %12s\n' $tool 1 1 "$base" -
	for ft in 1000:1 10000:2; do
		f=${ft%:*}
		client_rss $tool "$f" "${ft#*:}"
		rss=$(cat "$OUT/$tool.$f")
		printf '%-10s %8d %8d %10d %12.2f\n' $tool "$f" "${ft#*:}" \
			"$rss" "$(echo "($rss - $base) / ($f - 1)" | bc -l)"
		echo "$tool $f $(echo "($rss - $base) / ($f - 1)" | bc -l)" \
			>> "$OUT/per_flow"
	done
done
[ -n "$NEPER" ] || exit 0
echo "== netstage / neper, KiB per flow"
awk '{ v[$1 "." $2] = $3 }
     END { for (f in v) if (f ~ /^netstage/) { n = f; sub(/^netstage/, "neper", n);
	   printf "  %6s flows  %.3f\n", substr(f, 10), v[f] / v[n] } }' \
	"$OUT/per_flow"
