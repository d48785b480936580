#!/bin/bash
# Client memory per flow: netstage against neper, tcp_rr on loopback.
#
#   bench/memory.sh [-n NEPER_TCP_RR] [-l SECONDS]
#
# Each client runs against its own server for a few seconds; its peak
# resident size (GNU time's %M, KiB) at 1 flow and at F flows gives the
# memory one flow costs: (rss(F) - rss(1)) / (F - 1). neper is built
# from its source outside the tree (-n path/to/neper/tcp_rr); without
# it only netstage's figures print. Flows are spread over four loopback
# source addresses (-L) so that 10,000 connections do not exhaust one
# address's ephemeral ports; neper gets the same list.
set -u
cd "$(dirname "$0")/.." || exit 1

NEPER=
LEN=2
while getopts "n:l:" opt; do
	case $opt in
	n) NEPER=$OPTARG ;;
	l) LEN=$OPTARG ;;
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
