#!/bin/bash
# What each BPF program costs a run, by the size of the arrivals table
# (bpf/arrival.bpf.h): a traced tcp_rr (-w: another workload), pinned,
# one flow, run by run
# alternating the table's sets (2^bits; NETSTAGE_BENCH_ARRIVAL_SET_BITS)
# in one invocation. Each run's programs are read from bpf_stats over
# one second in its middle: run_time_ns / run_cnt per program, and all
# programs together; medians over the rounds, and each variant's
# throughput as a ratio to the first's.
#
#   bench/program-cost.sh [-r ROUNDS] [-b "BITS BITS ..."] [-o OTHER] [-P]
#                         [-a "ARGS"] [-w WORKLOAD]
#
# Default bits "14 10 6": the most (1 MiB, a server's or observe's),
# 64 KiB, one page (a one-flow run's own choice). -o runs another build
# of netstage too (OTHER: its binary), each of the bits with both, so
# that a change's cost is measured against its parent side by side.
# -P runs unpinned. -a adds netstage arguments to every run (say
# "--rate 5000", whose 31 messages in flight load the many_ programs).
# As root.
set -u
cd "$(dirname "$0")/.." || exit 1

ROUNDS=6
BITS="14 10 6"
PIN="taskset -c 0"
OTHER=
ARGS=
WL=tcp_rr
while getopts "r:b:o:Pa:w:" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	b) BITS=$OPTARG ;;
	o) OTHER=$OPTARG ;;
	P) PIN="" ;;
	a) ARGS=$OPTARG ;;
	w) WL=$OPTARG ;;
	*) exit 2 ;;
	esac
done
. bench/lib.sh
bench_netstage
bench_other "$OTHER"
# Variants: bits, and o<bits> for the other build.
VARIANTS=$BITS
[ -z "$OTHER" ] || for b in $BITS; do VARIANTS="$VARIANTS o$b"; done
command -v bpftool > /dev/null || { echo "bench: needs bpftool" >&2; exit 1; }
OUT=$(mktemp -d /tmp/netstage-progcost.XXXXXX)
before=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $(jobs -p) 2> /dev/null; sysctl -qw kernel.bpf_stats_enabled=$before;
      rm -rf "$OUT"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# run VARIANT ROUND: one traced run, two looks at its programs 1 s apart.
run() {
	local pid base="$OUT/b$1.r$2" bin=$NS bits=$1

	case $1 in o*) bin=$OTHER bits=${1#o} ;; esac
	NETSTAGE_BENCH_ARRIVAL_SET_BITS=$bits $PIN $bin "$WL" --local -l 3 \
		--trace $ARGS -o throughput > "$base.out" 2> /dev/null &
	pid=$!
	sleep 1
	bpftool prog show -j > "$base.a.json"
	sleep 1
	bpftool prog show -j > "$base.b.json"
	wait $pid
}

for r in $(seq "$ROUNDS"); do
	for b in $VARIANTS; do
		run "$b" "$r"
	done
done

python3 - "$OUT" $VARIANTS <<'PY'
import glob, json, os, statistics, sys

out, bits = sys.argv[1], sys.argv[2:]

def progs(base):
    a = {p["id"]: p for p in json.load(open(base + ".a.json"))}
    ns = {}
    for p in json.load(open(base + ".b.json")):
        o = a.get(p["id"])
        if not o or "run_cnt" not in p:
            continue
        c = p["run_cnt"] - o.get("run_cnt", 0)
        t = p["run_time_ns"] - o.get("run_time_ns", 0)
        if c > 0:
            ns.setdefault(p["name"], [0, 0])
            ns[p["name"]][0] += t
            ns[p["name"]][1] += c
    return ns

def tput(base):
    for l in open(base + ".out"):
        if "throughput=" in l:
            return float(l.split("=", 1)[1])
    return None

rows = {}
for b in bits:
    per, alls, tps = {}, [], []
    for base in sorted(glob.glob(os.path.join(out, "b%s.r*.a.json" % b))):
        base = base[:-len(".a.json")]
        ns = progs(base)
        for name, (t, c) in ns.items():
            per.setdefault(name, []).append(t / c)
        tt = sum(t for t, c in ns.values())
        cc = sum(c for t, c in ns.values())
        if cc:
            alls.append(tt / cc)
        if tput(base):
            tps.append(tput(base))
    rows[b] = (per, alls, tps)

names = sorted({n for per, _, _ in rows.values() for n in per})
print("ns a run, medians of %d rounds (bpf_stats)" % len(rows[bits[0]][1]))
print("%-22s" % "program" + "".join(
    "%12s" % ("other " + b[1:] if b[0] == "o" else "bits " + b)
    for b in bits))
for n in names:
    print("%-22s" % n + "".join(
        "%12.1f" % statistics.median(rows[b][0][n]) if n in rows[b][0]
        else "%12s" % "-" for b in bits))
print("%-22s" % "all programs" + "".join(
    "%12.1f" % statistics.median(rows[b][1]) for b in bits))
base_tp = statistics.median(rows[bits[0]][2])
print("%-22s" % "throughput ratio" + "".join(
    "%12.3f" % (statistics.median(rows[b][2]) / base_tp) for b in bits))
PY
