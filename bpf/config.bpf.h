/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What user space sets in the object: before load (const volatile, frozen
 * with the rest, so the verifier prunes what a run does not use) and
 * while it runs (volatile).
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_CONFIG_BPF_H
#define NETSTAGE_CONFIG_BPF_H

/*
 * A kernel object read with plain loads, which the JIT guards against
 * faults (Linux 6.2): cheaper than a bpf_probe_read_kernel() call each.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define ro_cast(p, type) \
	((const type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)))

#define MSG_PEEK 2

/* Set by user space before load. */
const volatile __u32 rx_size[2];	/* [side]: bytes of an inbound message */
const volatile __u32 tx_size[2];	/* [side]: bytes of an outbound one */
const volatile __u8 side;		/* enum ns_side of this process */
/*
 * --local: this one object serves the client (side) and its server
 * (side | 1), whose process inherits it: every event runs one program,
 * not one per end.
 */
const volatile __u8 both_ends;

/* Does this object serve that end of the connections (0 client, 1 server)? */
static __always_inline int serves(int server)
{
	return both_ends || NS_IS_SERVER(side) == server;
}

const volatile __u8 hist_mode;		/* --trace=hist: no records */
/* The arrivals table has 1 << arrival_set_bits sets (arrival.bpf.h). */
const volatile __u32 arrival_set_bits = NS_ARRIVAL_SET_BITS_MAX;
/*
 * --trace-sample: TCP messages whose number is a multiple of `sample`
 * are timed, the rest leave each program after the storage lookup. A
 * socket has at most `inflight` messages in flight each way, fewer than
 * `sample`: a sampled message starts after the one before it is done.
 */
const volatile __u32 sample;
const volatile __u32 inflight;
/*
 * The most messages one wake-up or one hand-off can begin: `inflight`
 * where user space knows its peer's, else NS_SLOTS. The verifier knows
 * it too, so it checks a message loop that many times, not NS_SLOTS
 * (50 ms of a tcp_rr start-up).
 */
const volatile __u32 batch = NS_SLOTS;
/* --trace-control: windows of messages left untimed (msgnum.h) */
const volatile __u32 control;
/*
 * tcp_rr without the recv and send length hooks, which then are not
 * attached (four program runs a transaction fewer): messages are
 * numbered by their place in the stream at the wake-up and the device
 * hand-off, and RECV_RET (hist: SEND_RET too) is the worker's own
 * stamp. Records: a client's goes at its response's DATA_READY, a
 * server's at its response's DEV_XMIT. Hist: the worker's stamps come
 * through `wstamps`. Not with --trace-sched (a record takes the
 * reader's wake-up, which comes after DATA_READY) or an open-loop
 * hist client (it need not send after each response it reads).
 */
const volatile __u8 lean;
/* Lean records: a flow's slots in `krecs` - 1 (0: records go by ring). */
const volatile __u32 krec_mask;
const volatile __u32 observe_tgid;	/* observe: the server's process */
/* observe: its network namespace; tracepoints see every namespace's */
const volatile __u32 observe_netns;
/*
 * observe: set by user space once every program is attached. Programs
 * attach one by one; a connection met before that would miss the
 * stamps of those not attached yet.
 */
volatile __u8 obs_ready;
/* observe: the server has sent a request on (obs_forward) at least once */
volatile __u8 forwarding;
/*
 * Count the transactions each end completes (`done`) while user space
 * measures what tracing costs (src/trace/cost.h): the number of
 * measurements under way, one per side.
 */
volatile __u32 counting;
/* The server's data port: set by user space once it is known. */
volatile __u16 data_port;
/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC, set by user space: skb receive
 * stamps are on the first clock, bpf_ktime_get_ns() reads the second.
 */
volatile __s64 real_offset;
/*
 * The netif_receive_skb program is attached: arrivals are its stamps.
 * Otherwise (a kernel without the tracepoint) the kernel's own receive
 * stamp, which loopback and veth take only after IP receive and
 * netfilter (docs/stages.md).
 */
const volatile __u8 arrival_hook;
/* --trace-sched: the scheduler's wake-up of each worker thread. */
const volatile __u8 sched;
/*
 * bench/overhead.sh only: every program returns at once, to measure what
 * entering them costs. Frozen with the rest: the verifier prunes it.
 */
const volatile __u8 empty;

#endif
