#!/bin/bash
# What tracing costs: tcp_rr transactions/s without --trace, with it
# (lean records), with the recv and send length hooks kept (full), with
# --trace-sched besides, with --trace=hist, sampled (--trace-sample
# N, default 100), and with the same programs attached but returning at
# once (the floor: entering them; ten, and lean records' six), and
# untraced beside empty programs another process holds on lean
# records' three tracepoints, with and without the kernel's receive
# stamps (bare, bare_stamps: the kernel's part of the floor,
# bench/bare-hooks.c),
# alternating run by run in one invocation, at 1 flow and at -F 4 -T 2,
# against bpftrace counting four tracepoints of the stage model as a
# reference; and the client's p50 latency traced against untraced.
#
#   bench/overhead.sh [-r REPS] [-l SECONDS] [-P] [-w udp_rr] [-b N]
#                     [-s N] (root)
#
# -w udp_rr measures udp_rr instead (no bpftrace reference: its four
# tracepoints are TCP's). -b N keeps N requests in flight per flow
# (tcp_rr --burst N) in every run.
# Pinned (server and client on CPU 0) by default: unpinned loopback is
# bimodal on 2 cores. -P runs unpinned. Prints every run, medians, the
# ratio traced/untraced and the added nanoseconds per transaction, the
# same ratios and p50 deltas paired by round with their intervals
# (bench/paired.py), what each traced run says it cost (trace_cost_ns,
# trace_cost_user_ns); then BPF start-up time and per-program run time
# from bpf_stats.
set -u
cd "$(dirname "$0")/.." || exit 1

REPS=5
LEN=3
PIN="taskset -c 0"
WL=tcp_rr
BURST=""
SAMPLE=100
while getopts "r:l:Pw:b:s:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	l) LEN=$OPTARG ;;
	P) PIN="" ;;
	w) WL=$OPTARG ;;
	b) BURST="--burst $OPTARG" ;;
	s) SAMPLE=$OPTARG ;;
	*) exit 2 ;;
	esac
done
. bench/lib.sh
bench_netstage
make -s bench-tools || exit 1
OUT=$(mktemp -d /tmp/netstage-overhead.XXXXXX)
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$OUT"' EXIT

have_bpftrace=1
command -v bpftrace > /dev/null || have_bpftrace=0
# bpftrace's tracepoints need tracefs, which a fresh machine lacks.
if [ $have_bpftrace = 1 ] && ! [ -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null ||
		have_bpftrace=0
fi

# Figures are "name value round": the round pairs a traced run with the
# untraced one beside it (bench/paired.py).
ROUND=0
record() {		# name trans/s [p50 us]
	echo "$1 $2 $ROUND" >> "$OUT/figures"
	[ -n "${3:-}" ] && echo "$1 $3 $ROUND" >> "$OUT/p50"
	printf '  %-28s %12.1f %8s\n' "$1" "$2" "${3:-}"
}

run() {			# name args...
	local name=$1

	shift
	$PIN $NS $WL --local -q -l "$LEN" $BURST "$@" > "$OUT/ns.out" \
		2> /dev/null
	record "$name" "$(grep -m1 '^client.throughput=' "$OUT/ns.out" |
		cut -d= -f2)" "$(grep -m1 '^client.latency_p50_us=' \
		"$OUT/ns.out" | cut -d= -f2)"
	grep -m1 '^client.trace_setup_ms=' "$OUT/ns.out" |
		cut -d= -f2 >> "$OUT/setup_ms"
	# What the run says it cost, each end (src/trace/cost.h).
	sed -n 's/^\(client\|server\)\.trace_cost_\(ns\|user_ns\)=/\1.\2 /p' \
		"$OUT/ns.out" | grep -E ' [0-9.]+$' | sed "s/^/$name./" \
		>> "$OUT/self"
}

# The kernel's part of the floor: an untraced run while another process
# (bench/bare-hooks.c) holds empty programs on lean records' three
# tracepoints (src/trace/tracer_hooks.c); with -s the kernel's
# receive stamps as well, which --trace turned on before 2026-11-27.
bare() {		# name [-s] args...
	local name=$1 stamps=""

	shift
	[ "${1:-}" = -s ] && { stamps=-s; shift; }
	bench_bare "$OUT/bare.out" "$name" $stamps netif_receive_skb \
		sk_data_ready net_dev_start_xmit -- run "$name" "$@"
}

# A server of its own (untraced) and a client traced with ARGS: what one
# of two hosts pays, where --local traces both ends on this one.
split() {		# name args...
	local name=$1 i

	shift
	$PIN $NS $WL -q -C 23866 -P 23867 > /dev/null 2>&1 &
	for i in $(seq 100); do
		ss -ltn 'sport = :23866' | grep -q LISTEN && break
		sleep 0.02
	done
	$PIN $NS $WL -c -H 127.0.0.1 -C 23866 -P 23867 -q -l "$LEN" $BURST \
		"$@" > "$OUT/ns.out" 2> /dev/null
	wait
	# A client with its server's results names its own keys client.*.
	record "$name" "$(grep -m1 -E '^(client\.)?throughput=' "$OUT/ns.out" |
		cut -d= -f2)"
}

# bpftrace counting four tracepoints of the stage model, system-wide.
with_bpftrace() {
	local name=$1 pid i

	shift
	bpftrace -e 'tracepoint:tcp:tcp_probe,
		tracepoint:sock:sk_data_ready,
		tracepoint:sock:sock_recv_length,
		tracepoint:net:net_dev_start_xmit { @[probe] = count(); }' \
		> "$OUT/bpftrace.out" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		grep -q Attaching "$OUT/bpftrace.out" && break
		sleep 0.1
	done
	sleep 0.5
	run "$name" "$@"
	# A SIGINT can come before bpftrace takes it, and is lost: it then
	# waits for ever (seen once). Ask again, then end it.
	for i in $(seq 50); do
		kill -INT $pid 2> /dev/null || break
		sleep 0.1
	done
	kill -KILL $pid 2> /dev/null
	wait $pid 2> /dev/null
}

for flows in 1 4; do
	args=""
	[ $flows = 4 ] && args="-F 4 -T 2"
	echo "== $WL $args $BURST ${PIN:+pinned to CPU 0} (trans/s)"
	for ROUND in $(seq "$REPS"); do
		run "F$flows.untraced" $args
		run "F$flows.traced" $args --trace
		# tcp_rr records with the recv and send length hooks (lean
		# records go without them: docs/stages.md).
		[ "$WL" = tcp_rr ] && NETSTAGE_BENCH_FULL_HOOKS=1 \
			run "F$flows.full" $args --trace
		run "F$flows.hist" $args --trace=hist
		run "F$flows.sched" $args --trace --trace-sched
		[ "$WL" = tcp_rr ] &&
			run "F$flows.sampled" $args --trace \
				--trace-sample "$SAMPLE"
		# The floor: the same programs attached, each returning at
		# once; tcp_rr's eight of full records (hist runs lean's four).
		NETSTAGE_BENCH_EMPTY_BPF=1 NETSTAGE_BENCH_FULL_HOOKS=1 \
			run "F$flows.empty" $args --trace=hist
		# ... and the four of lean records.
		[ "$WL" = tcp_rr ] && NETSTAGE_BENCH_EMPTY_BPF=1 \
			run "F$flows.empty_lean" $args --trace
		if [ "$WL" = tcp_rr ]; then
			bare "F$flows.bare" $args
			bare "F$flows.bare_stamps" -s $args
		fi
		[ $have_bpftrace = 1 ] && [ $flows = 1 ] && [ $WL = tcp_rr ] &&
			with_bpftrace "F$flows.bpftrace" $args
		if [ $flows = 1 ]; then
			split "F1.split_untraced"
			split "F1.split_client_traced" --trace
		fi
	done
done

echo "== bpf_stats: run time per program (one 1-flow run, --trace-sched)"
sysctl -qw kernel.bpf_stats_enabled=1
$PIN $NS $WL --local -q -l "$LEN" --trace --trace-sched > "$OUT/stats.out" \
	2> /dev/null &
stats=$!
# The programs go with the run, and a look at a fixed time into it found
# none counting on a slower machine: look until the run ends. The last
# looks fall in its teardown, with some programs gone, so the summary
# takes the look that counted the most runs.
mkdir -p "$OUT/looks"
n=0
while kill -0 "$stats" 2> /dev/null; do
	bpftool prog show -j > "$OUT/looks/$n.json" 2> /dev/null
	n=$((n + 1))
	sleep 0.2
done
wait "$stats"
sysctl -qw kernel.bpf_stats_enabled=0

echo
python3 - "$OUT" <<'EOF'
import json, os, statistics, sys
sys.path.insert(0, "bench")
import paired
out = sys.argv[1]
MODES = ("traced", "full", "sched", "hist", "sampled", "empty", "empty_lean",
         "bare", "bare_stamps", "bpftrace")


def read_runs(path):
    """name -> every figure recorded for it, in order."""
    runs = {}
    for line in open(path):
        k, v = line.split()[:2]
        runs.setdefault(k, []).append(float(v))
    return runs


runs = read_runs(f"{out}/figures")
med = {k: statistics.median(v) for k, v in runs.items()}
print("== medians (min..max)")
for k, v in runs.items():
    print(f"  {k:28} {med[k]:12.1f}  ({min(v):.1f}..{max(v):.1f}, n={len(v)})")


def against_untraced(figures, line):
    """line(base, traced) for each mode measured beside its untraced runs."""
    for f in ("F1", "F4"):
        base = figures.get(f"{f}.untraced")
        for mode in MODES:
            m = figures.get(f"{f}.{mode}")
            if base and m:
                print(f"  {f} {mode:11} " + line(base, m))


print("== cost against untraced runs of the same invocation")
against_untraced(med, lambda b, m: f"ratio {m / b:5.3f}  "
                 f"added {1e9 / m - 1e9 / b:7.0f} ns per transaction")
for f in ("F1", "F4"):
    t, s = med.get(f"{f}.traced"), med.get(f"{f}.sched")
    if t and s:
        print(f"  {f} --trace-sched against --trace: ratio {s / t:5.3f}  "
              f"added {1e9 / s - 1e9 / t:7.0f} ns per transaction")
base, m = med.get("F1.split_untraced"), med.get("F1.split_client_traced")
if base and m:
    print(f"  F1 client only traced (own server) ratio {m / base:5.3f}  "
          f"added {1e9 / m - 1e9 / base:7.0f} ns per transaction")
p50 = {k: statistics.median(v)
       for k, v in read_runs(f"{out}/p50").items()}


def bucket_ns(us):
    """Width of the latency histogram's bucket at us (src/stats/hist.h)."""
    ns = int(us * 1000)
    return 1 if ns < 256 else 1 << (ns.bit_length() - 8)


print("== client p50 latency, median of runs, against untraced (us)")
if p50.get("F1.untraced"):
    print(f"  (each p50 is a bucket's midpoint: buckets "
          f"{bucket_ns(p50['F1.untraced'])} ns wide at F1's untraced p50)")
against_untraced(p50, lambda b, t: f"p50 {t:7.2f} vs {b:7.2f}  "
                 f"delta {t - b:+6.2f}")
print("== paired by round: the median of the rounds' traced/untraced "
      "ratios and p50 deltas (us), each with its interval (coverage, rounds)")
rounds = paired.read_rounds(f"{out}/figures")
p50r = paired.read_rounds(f"{out}/p50")
for f in ("F1", "F4"):
    for mode in MODES:
        r = paired.line(rounds, f"{f}.{mode}", f"{f}.untraced",
                        words=("", "", ""))
        d = paired.line(p50r, f"{f}.{mode}", f"{f}.untraced",
                        lambda t, b: t - b, 0, "+5.2f", ("", "", ""))
        if r:
            print(f"  {f} {mode:11} ratio {r}")
        if d:
            print(f"  {f} {mode:11} p50   {d}")
r = paired.line(rounds, "F1.split_client_traced", "F1.split_untraced",
                words=("", "", ""))
if r:
    print(f"  F1 client only traced (own server) ratio {r}")
setup = [float(l) for l in open(f"{out}/setup_ms") if l.strip()]
if setup:
    print(f"== BPF open+load+attach: median {statistics.median(setup):.1f} ms "
          f"({min(setup):.1f}..{max(setup):.1f}, n={len(setup)}, each side)")
# A run's own statement of its cost: the total, and its merges alone,
# which lie in the client's wait at a server pinned beside it.
self = {k: statistics.median(v)
        for k, v in read_runs(f"{out}/self").items()} \
    if os.path.exists(f"{out}/self") else {}
if self:
    print("== what each run says tracing cost it (trace_cost_ns, and "
          "trace_cost_user_ns: merging and keeping records), medians, ns "
          "per transaction")
for f in ("F1", "F4"):
    for mode in MODES:
        k = f"{f}.{mode}"
        if f"{k}.client.ns" in self:
            print(f"  {f} {mode:11} client {self[k + '.client.ns']:6.0f} "
                  f"(user {self.get(k + '.client.user_ns', 0):4.0f})  "
                  f"server {self.get(k + '.server.ns', 0):6.0f} "
                  f"(user {self.get(k + '.server.user_ns', 0):4.0f})")
def counted(path):
    try:
        return [p for p in json.load(open(path)) if p.get("run_cnt")]
    except ValueError:          # a look cut short as the run ended
        return []
looks = [counted(f"{out}/looks/{f}") for f in os.listdir(f"{out}/looks")]
progs = max(looks, key=lambda l: sum(p["run_cnt"] for p in l), default=[])
names = {}
for p in progs:
    n = names.setdefault(p["name"], [0, 0])
    n[0] += p["run_cnt"]
    n[1] += p["run_time_ns"]
print("== bpf_stats (both sides' programs; includes bpf_stats' own cost)")
if not progs:
    print("  none seen counting: the run ended before bpftool found them")
for name, (cnt, ns) in sorted(names.items(), key=lambda x: -x[1][1]):
    print(f"  {name:22} {ns / cnt:7.1f} ns/run  {cnt:9} runs")
EOF
