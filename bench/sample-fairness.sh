#!/bin/bash
# Is --trace-sample's sample fair? In one run, the latency of the timed
# transactions (their records: APP_SEND to APP_DONE) against the whole
# run's histogram, which counts every transaction: p50 and p90 of each
# and the difference, round by round, pinned (-P: unpinned), then the
# median difference. Issue 38 asks for p50 within 0.5 us and p90 within
# 1 us. Then each stage's p50 against a fully traced run's, the two
# alternated round by round (issue 38: within 0.3 us).
#
#   bench/sample-fairness.sh [-r ROUNDS] [-l SECONDS] [-n N] [-P]
#                            [-w tcp_rr|udp_rr] (root)
set -u
unset SUDO_UID SUDO_GID SUDO_USER
cd "$(dirname "$0")/.." || exit 1

ROUNDS=5
LEN=3
N=10
PIN="taskset -c 0"
WL=tcp_rr
while getopts "r:l:n:Pw:" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	n) N=$OPTARG ;;
	P) PIN="" ;;
	w) WL=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "sample-fairness: needs root" >&2; exit 1; }
NS=build/netstage
[ -x $NS ] || make -s || exit 1
OUT=$(mktemp -d /tmp/netstage-fair.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

for r in $(seq "$ROUNDS"); do
	$PIN $NS "$WL" --local -l "$LEN" -q --trace --trace-sample "$N" \
		--trace-records="$OUT/r$r.csv" --trace-max-records 1000000 \
		> "$OUT/r$r.out" 2> /dev/null || exit 1
	$PIN $NS "$WL" --local -l "$LEN" -q --trace > "$OUT/f$r.out" \
		2> /dev/null || exit 1
done
python3 - "$OUT" "$ROUNDS" "$N" "${PIN:-unpinned}" "$WL" <<'PY'
import csv, statistics, sys
out, rounds, n, pin, wl = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    sys.argv[4], sys.argv[5]
def pct(v, q):
    return v[int(q * (len(v) - 1))] / 1e3
d50, d90 = [], []
print(f"{wl} --trace-sample {n}, {pin}: timed transactions against the run (us)")
print("round  timed  p50    p90  |  run  p50    p90  |  diff p50   p90")
for r in range(1, rounds + 1):
    kv = dict(l.rstrip("\n").split("=", 1)
              for l in open(f"{out}/r{r}.out") if "=" in l)
    v = sorted(int(x["APP_DONE"]) - int(x["APP_SEND"])
               for x in csv.DictReader(open(f"{out}/r{r}.csv")))
    a50, a90 = pct(v, .5), pct(v, .9)
    b50 = float(kv["client.latency_p50_us"])
    b90 = float(kv["client.latency_p90_us"])
    d50.append(a50 - b50)
    d90.append(a90 - b90)
    print(f"{r:5}  {len(v):6} {a50:6.2f} {a90:6.2f} | {b50:10.2f} {b90:6.2f} |"
          f" {a50 - b50:+9.2f} {a90 - b90:+5.2f}")
print(f"median difference: p50 {statistics.median(d50):+.2f} us, "
      f"p90 {statistics.median(d90):+.2f} us")
import re
diffs = {}
for r in range(1, rounds + 1):
    kv = [dict(l.rstrip("\n").split("=", 1)
               for l in open(f"{out}/{x}{r}.out") if "=" in l)
          for x in ("r", "f")]
    for k, v in kv[0].items():
        m = re.fullmatch(r"(client|server)\.stage_(\w+)_p50_us", k)
        if m and k in kv[1]:
            diffs.setdefault(f"{m[1]} {m[2]}", []).append(
                float(v) - float(kv[1][k]))
print("each stage's p50, sampled less fully traced: median over rounds "
      "[least, most] (us)")
for name, d in diffs.items():
    print(f"  {name:22} {statistics.median(d):+.2f} [{min(d):+.2f}, "
          f"{max(d):+.2f}]")
PY
