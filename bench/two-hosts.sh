#!/bin/bash
# Two hosts on one (issue 42): how tight the clock fit gets, and what
# the server's results cost the control connection. A traced tcp_rr
# (or -w's) server in one network namespace, its clock made 5 ms ahead
# and 40 ppm fast (NETSTAGE_TEST_CLOCK_SKEW, test only), a traced
# client in another over veth; for each run length and request rate,
# the fit's stated bounds beside its real error (the truth is known:
# the namespaces share one clock), and the server's results frame
# (bytes, bytes a record, the client's wait for it).
#
#   bench/two-hosts.sh [-l "1 3 10"] [-r "0 20000 2000"] [-n REPS]
#                      [-w tcp_rr|udp_rr|tcp_crr] (root)
#
# -r 0 is as fast as one flow goes; other rates are --rate's, per flow
# (tcp_rr's alone). -w: udp_rr's ends pair by the client's number as
# tcp_rr's do, tcp_crr's by port once the clocks are fitted from the
# pairs of a port that agree (docs/stages.md, Two hosts).
set -u
cd "$(dirname "$0")/.." || exit 1

LENS="1 3 10"
RATES="0 20000 2000"
REPS=2
WL=tcp_rr
while getopts "l:r:n:w:" opt; do
	case $opt in
	l) LENS=$OPTARG ;;
	r) RATES=$OPTARG ;;
	n) REPS=$OPTARG ;;
	w) WL=$OPTARG ;;
	*) exit 2 ;;
	esac
done
. bench/lib.sh
bench_netstage
NS=$PWD/$NS
A=bthc$$ B=bths$$
OUT=$(mktemp -d /tmp/netstage-two-hosts.XXXXXX)
trap 'ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null; rm -rf "$OUT"' EXIT
ip netns add $A
ip netns add $B
ip link add v$A netns $A type veth peer name v$B netns $B
ip -n $A addr add 192.0.2.1/24 dev v$A
ip -n $B addr add 192.0.2.2/24 dev v$B
for n in $A $B; do
	ip -n $n link set v$n up
	ip -n $n link set lo up
done
cd "$OUT" || exit 1

one() {			# len rate
	local rate=()

	[ "$2" = 0 ] || rate=(--rate "$2")
	ip netns exec $B env NETSTAGE_TEST_CLOCK_SKEW=5000000,40 \
		timeout $(($1 + 60)) "$NS" $WL -L 192.0.2.2 -q --trace \
		--trace-records=srv.csv > srv.out 2> srv.err &
	for _ in $(seq 100); do
		ip netns exec $B ss -ltn | grep -q 192.0.2.2:12866 && break
		sleep 0.05
	done
	ip netns exec $A timeout $(($1 + 60)) "$NS" $WL -c -H 192.0.2.2 \
		-l "$1" -q --trace --trace-records=cli.csv \
		--trace-max-records=10000000 --output-format kv "${rate[@]}" \
		> cli.out 2> cli.err
	wait
	python3 "$OLDPWD/tests/func/check_clocks.py" skew cli.out cli.csv \
		srv.csv 5000000 40 > fit.txt 2>&1 || echo "(past the bound)"
	python3 - "$1" "$2" cli.out fit.txt <<'PY'
import re, sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[3]) if "=" in l)
fit = open(sys.argv[4]).read()
m = re.search(r"error ([-+][0-9.]+)\); drift ([-0-9.]+) ppm", fit)
err, drift = (float(m.group(1)), float(m.group(2))) if m else (float("nan"),) * 2
n = int(kv.get("server.trace_records_kept", 0))
b = int(kv.get("client.peer_results_bytes", 0))
print(f"{sys.argv[1]:>4} {sys.argv[2]:>6} {int(kv['waterfall.transactions']):>9} "
      f"{float(kv['waterfall.clock_bound_us']):>8.3f} "
      f"{float(kv['waterfall.clock_causal_bound_us']):>8.3f} {abs(err):>8.3f} "
      f"{abs(drift - 40):>8.4f} {b / 1e6:>8.2f} {b / max(n, 1):>7.0f} "
      f"{float(kv['client.peer_results_ms']):>8.1f}")
PY
}

echo "two-hosts, $WL: server clock +5 ms, +40 ppm; veth between two namespaces"
echo "   s   rate    joined  bound_us causal_us error_us drift_err      MB  B/rec  wait_ms"
for len in $LENS; do
	for rate in $RATES; do
		[ "$rate" = 0 ] || [ "$WL" = tcp_rr ] || continue
		for _ in $(seq "$REPS"); do
			one "$len" "$rate"
		done
	done
done
