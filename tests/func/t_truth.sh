# Stages held against something that is not netstage: the tests' own
# reference timer (tests/ref/), its programs on other events than
# netstage's, run beside a traced run and compared stage by stage.

RXREF=$(dirname "$NETSTAGE")/tests/ref/rxref
# How far netstage's p50 of a stage may be from the reference's, in us:
# each timer's programs run at the other's hooks and delay its stamps
# (docs/stages.md, "Checked against a reference").
REF_TOLERANCE_US=0.3
# The receive stages' alone (softirq_rx, tcp_rx, udp_rx: one reference
# event each end), where a test holds a bias smaller than that.
REF_RX_TOLERANCE_US=
# And of its p90: a tail moves more with the other's program runs.
REF_TOLERANCE_P90_US=0.5

# ref_start PORT: the reference timer, attached, on connections of PORT;
# with REF_SAMPLE, the worker's stages of the messages --trace-sample
# REF_SAMPLE times only (a sampled message pays for its tracing, so the
# others are no measure of it).
ref_start() {
	local i

	[ -x "$RXREF" ] || fail "no $RXREF (make ref-tools)"
	# Bounded: a test that fails before ref_compare leaves it behind,
	# and its programs would run on every packet of later tests.
	timeout -s INT "$BOUND" "$RXREF" "$1" ${REF_SAMPLE:-} > ref.out \
		2> ref.err &
	REF_PID=$!
	for i in $(seq 100); do
		grep -q attached ref.out && break
		sleep 0.05
	done
	grep -q attached ref.out || fail "reference: $(cat ref.err)"
}

# The worker's stages, bounded by its own clock reads: held between two
# reference events each (tests/ref/rxref.bpf.c), where the worker's
# system calls are the reference's to follow (tcp_rr, one flow, one
# request in flight).
REF_WORKER_STAGES="wakeup recv_call send_call"

# ref_compare MODE SIDE OUT: stop the reference; SIDE's softirq_rx,
# tcp_rx and tcp_tx (REF_STAGES: others; netstage's keys in OUT), with
# REF_WORKER set the worker's stages too (and a server's send_return),
# within REF_TOLERANCE_US of it at p50 and REF_TOLERANCE_P90_US at p90
# (tcp_tx and the worker's: of the two reference events around their
# end), or fail naming the mode, side, stage and percentile.
ref_compare() {
	local stages=${REF_STAGES:-softirq_rx tcp_rx tcp_tx}

	kill -INT "$REF_PID"
	wait "$REF_PID"
	[ -z "${REF_WORKER:-}" ] || stages="$stages $REF_WORKER_STAGES"
	[ -z "${REF_WORKER:-}" ] || [ "$2" != server ] ||
		stages="$stages send_return"
	# udp_rr's RECV_RET is the kernel's: its (to_)app is a stage too.
	[ -z "${REF_WORKER:-}" ] || [ "${REF_WL:-}" != udp_rr ] ||
		stages="$stages $([ "$2" = server ] && echo app || echo to_app)"
	python3 - "$REF_TOLERANCE_US" "${REF_RX_TOLERANCE_US:-$REF_TOLERANCE_US}" \
		"$REF_TOLERANCE_P90_US" "$stages" "$@" <<'PY'
import sys
tol, rx_tol, tol90 = (float(a) for a in sys.argv[1:4])
stages = sys.argv[4].split()
mode, side, out = sys.argv[5] or "tcp_rr", sys.argv[6], sys.argv[7]
def keys(path):
    return dict(l.rstrip("\n").split("=", 1) for l in open(path) if "=" in l)
def own(kv):
    # A traced client prints both ends, its own keys as "client.".
    return {k[7:] if k.startswith("client.") else k: v
            for k, v in kv.items()}
ref, ns = keys("ref.out"), own(keys(out))
bad = []
def within(stage, q, a, lo, hi, t):
    """netstage's a against the reference's [lo, hi], t either side."""
    if a < lo - t or a > hi + t:
        ref = f"{lo:.3f}" if lo == hi else f"{lo:.3f} to {hi:.3f}"
        bad.append(f"{side} {stage} {q}: netstage {a:.3f} us, "
                   f"reference {ref} us")
for stage in stages:
    # tcp_tx ends between two reference events, the worker's stages
    # between two more: both bound it.
    ends = {"tcp_tx": ("_queued", "_sent"), "softirq_rx": ("", ""),
            "tcp_rx": ("", ""), "udp_rx": ("", "")}.get(stage, ("_lo", "_hi"))
    n = int(ref[f"{side}.{stage}{ends[0]}_count"])
    if n < 1000:
        bad.append(f"{side} {stage}: the reference timed {n}")
        continue
    a = float(ns[f"stage_{stage}_p50_us"])
    a90 = float(ns[f"stage_{stage}_p90_us"])
    lo, hi = (float(ref[f"{side}.{stage}{e}_p50_us"]) for e in ends)
    lo90, hi90 = (float(ref[f"{side}.{stage}{e}_p90_us"]) for e in ends)
    print(f"{mode}: {side} {stage} p50 netstage {a:.3f} reference {lo:.3f}"
          + (f" to {hi:.3f}" if hi != lo else "")
          + f" (p90 {a90:.3f}, {lo90:.3f}"
          + (f" to {hi90:.3f}" if hi90 != lo90 else "") + ")")
    within(stage, "p50", a, lo, hi, rx_tol if ends == ("", "") else tol)
    within(stage, "p90", a90, lo90, hi90, tol90)
for b in bad:
    print(f"    {mode}: {b}")
sys.exit(1 if bad else 0)
PY
}

# rx_against_ref TRACE-OPTS TRAFFIC-ARGS...: tcp_rr (TRAFFIC-ARGS on
# the client; TRACE-OPTS, such as --trace-sample, on the traced side),
# server and client apart, both pinned to CPU 0 (the reference follows
# a packet on one CPU), the reference attached first; once with the
# server traced, once with the client, each compared by ref_compare.
# REF_WL names another workload (udp_rr, tcp_crr), REF_STAGES the
# stages compared (udp_rr: udp_rx), REF_SIDES the sides traced.
# One side traced at a time, or with REF_BOTH the server traced
# throughout (each run compares the one side). With REF_NS_SRV and
# REF_NS_CLI set, the two run in those namespaces (make_veth's), the
# server at 192.0.2.2, and REF_MODE names the run.
rx_against_ref() {
	local srv side sopt copt out rc=0 topts=$1 host=127.0.0.1 sx= cx= i
	local wl=${REF_WL:-tcp_rr}

	shift
	if [ -n "${REF_NS_SRV:-}" ]; then
		sx="ip netns exec $REF_NS_SRV" cx="ip netns exec $REF_NS_CLI"
		host=192.0.2.2
	fi
	for side in ${REF_SIDES:-server client}; do
		sopt="--trace $topts" copt=
		[ $side = client ] && sopt= copt="--trace $topts"
		[ -z "${REF_BOTH:-}" ] || sopt="--trace $topts"
		next_ports
		ref_start "$DPORT"
		# Bounded: a client that fails leaves its server waiting.
		$sx taskset -c 0 timeout -k 5 "$BOUND" "$NETSTAGE" $wl \
			-C "$CPORT" -P "$DPORT" -q $sopt > srv.out 2> srv.err &
		srv=$!
		for i in $(seq 100); do
			$sx ss -ltn | grep -q ":$CPORT " && break
			sleep 0.05
		done
		$cx taskset -c 0 timeout -k 5 "$BOUND" "$NETSTAGE" $wl -c \
			-H $host -C "$CPORT" -l 2 -q $copt "$@" \
			> cli.out 2> cli.err
		wait "$srv"
		[ $side = client ] && out=cli.out || out=srv.out
		ref_compare "${REF_MODE:-$wl $topts $*}" $side $out || rc=1
	done
	return $rc
}

t_rx_stages_agree_with_a_reference_timer() {
	REF_WORKER=1 rx_against_ref ""
}

# A standalone server and its client, both traced: two objects, each
# with its own program on every packet and every wake-up call. The
# later one used to stamp after the earlier one's run, its softirq_rx
# short by it (0.2-0.35 us here) and its tcp_rx or udp_rx long (0.15-
# 0.25 us); they share the first program's clock read now. udp_rr too:
# a response takes its request's freed skb, and must not take its clock.
t_rx_stages_agree_with_a_reference_timer_both_traced() {
	local rc=0

	# Tighter: the bias this holds (the other's run, 0.15-0.25 us at
	# p50 of a receive stage) is within the usual tolerance.
	local REF_RX_TOLERANCE_US=0.15
	REF_BOTH=1 REF_WORKER=1 rx_against_ref "" || rc=1
	REF_BOTH=1 REF_WL=udp_rr REF_STAGES=udp_rx rx_against_ref "" || rc=1
	return $rc
}

t_rx_stages_agree_with_a_reference_timer_burst() {
	rx_against_ref "" --burst 8
}

t_rx_stages_agree_with_a_reference_timer_rate() {
	rx_against_ref "" --rate 5000
}

t_rx_stages_agree_with_a_reference_timer_sampled() {
	REF_SAMPLE=10 REF_WORKER=1 rx_against_ref "--trace-sample 10"
}

t_rx_stages_agree_with_a_reference_timer_sched() {
	rx_against_ref --trace-sched
}

# slow_input NS RULES: an input chain in NS whose RULES rules all miss, so
# that netfilter takes a few us of each packet's receive, between
# netif_receive_skb and TCP: where softirq_rx must see it.
slow_input() {
	local i

	{
		echo "table inet slow { chain in {"
		echo "type filter hook input priority 0;"
		for i in $(seq "$2"); do
			echo "tcp dport 9 tcp sport $i counter"
		done
		echo "}"
		echo "}"
	} > slow.nft
	ip netns exec "$1" nft -f slow.nft
}

t_rx_stages_agree_with_a_reference_timer_across_netfilter() {
	local a=nsa$$ b=nsb$$

	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }
	make_veth "$a" "$b"
	slow_input "$a" 400
	slow_input "$b" 400
	REF_NS_SRV=$b REF_NS_CLI=$a REF_MODE="veth, 400 netfilter rules" \
		REF_WORKER=1 rx_against_ref ""
}

t_rx_stages_agree_with_a_reference_timer_udp_rr() {
	REF_WORKER=1 REF_WL=udp_rr REF_STAGES=udp_rx rx_against_ref ""
}

# tcp_crr: a connection per transaction. The server's chain starts at
# the handshake's end and has no receive stages (docs/stages.md): the
# client's are compared.
t_rx_stages_agree_with_a_reference_timer_tcp_crr() {
	REF_WL=tcp_crr REF_SIDES=client rx_against_ref ""
}

# observe: memcached's receive stages as the observer times them, memcached
# and its client pinned to CPU 0 (the reference follows a packet on one
# CPU), the observer wherever it runs. The client's traffic lies inside
# the observer's time: the reference counts every packet it sees, and
# those before the observer's programs were attached are faster.
t_rx_stages_agree_with_a_reference_timer_observe_memcached() {
	need_root
	start_memcached
	taskset -a -pc 0 "$MC_PID" > /dev/null
	ref_start "$DPORT"
	local obs
	start_observer -l 4 -q
	obs=$!
	taskset -c 0 timeout -k 5 "$BOUND" "$NETSTAGE" tcp_rr --raw \
		-H 127.0.0.1 -P "$DPORT" --request-data "$GET_K" \
		--response-end 'END\r\n' -l 3 -q > cli.out 2> cli.err
	wait "$obs"
	# Its TCP_SEND is the response's first tcp_sendmsg_locked, before
	# the copy: its tcp_tx begins before the reference's.
	REF_STAGES="softirq_rx tcp_rx" \
		ref_compare "observe memcached" server obs.out
}

# A veth pair losing 1 in 100 data packets on each side's input, after
# netif_receive_skb saw them: the copy TCP took is the arrival, on both
# timers; four flows, so that enough go on while others wait out a
# retransmission timeout.
t_rx_stages_agree_with_a_reference_timer_with_loss() {
	local a=nla$$ b=nlb$$ ns rule

	command -v nft > /dev/null || { echo "no nft (nftables)"; exit "$SKIP"; }
	make_veth "$a" "$b"
	for ns in "$a" "$b"; do
		ip netns exec "$ns" nft add table inet t
		ip netns exec "$ns" nft add chain inet t in \
			'{ type filter hook input priority 0; }'
		ip netns exec "$ns" nft add rule inet t in \
			'meta l4proto tcp tcp flags & (syn | fin | rst) == 0' \
			numgen random mod 100 0 drop
	done
	REF_NS_SRV=$b REF_NS_CLI=$a REF_MODE="veth, 1 in 100 lost" \
		rx_against_ref "" -F 4
	# It did lose: the client (traced last) resent requests.
	expect_gt "$(key cli.out client.trace_retransmits)" 0 \
		"client retransmits"
}

# A reference timer's figures against netstage's: the machine to
# themselves.
solo t_rx_stages_agree_with_a_reference_timer \
	t_rx_stages_agree_with_a_reference_timer_both_traced \
	t_rx_stages_agree_with_a_reference_timer_burst \
	t_rx_stages_agree_with_a_reference_timer_rate \
	t_rx_stages_agree_with_a_reference_timer_sampled \
	t_rx_stages_agree_with_a_reference_timer_sched \
	t_rx_stages_agree_with_a_reference_timer_across_netfilter \
	t_rx_stages_agree_with_a_reference_timer_udp_rr \
	t_rx_stages_agree_with_a_reference_timer_tcp_crr \
	t_rx_stages_agree_with_a_reference_timer_observe_memcached \
	t_rx_stages_agree_with_a_reference_timer_with_loss
