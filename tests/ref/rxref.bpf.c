// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' own timer of the receive stages, independent of netstage's
 * BPF: its own programs, and TCP receive taken at the tcp_probe
 * tracepoint (the start of tcp_rcv_established), not from TCP's clock
 * cache. softirq_rx is netif_receive_skb to tcp_probe, tcp_rx tcp_probe
 * to sk_data_ready, for segments with payload on connections of `port`.
 *
 * A program on a tracepoint delays what runs after it there: the
 * kernel's next step, and other programs (netstage's). So the first two
 * read their clock last, as they hand back: a boundary is where the
 * kernel, or the next program, goes on; the wake-up's reads it first
 * and does no more than keep it. A packet's receive runs on one CPU
 * from netif_receive_skb to the wake-up call, so the stamps wait in
 * per-CPU slots; the stages are booked when the reader's recv()
 * returns (sock_recv_length), out of every stage. A receive that moved
 * CPU (the socket's backlog) is not counted.
 *
 * UDP (udp_rr): udp_rx from netif_receive_skb to the wake-up call. A
 * datagram goes from the one to the other in one call chain on one
 * CPU, with no other packet in between: its arrival is the CPU's last.
 *
 * tcp_tx: a segment's departure time, which TCP gives it as it sends
 * it, to two events around netstage's hand-off to the driver (below).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define RING 8		/* packets a CPU may have between the two hooks */
#define BUCKETS 2000	/* 10 ns each */

const volatile __u16 port;	/* host order */

struct pcpu {
	__u64 skb[RING], t[RING];
	__u32 next;
	int side;		/* of the segment at tcp_probe: -1 none */
	__u64 arrival, probe;
	/* a wake-up's stamps, until recv() returns */
	int bside;
	__u64 barrival, bprobe, bready;
	/* a segment between net_dev_queue and net_dev_xmit: 0, none */
	__u64 txskb, txstamp;
	int txside;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pcpu);
} cpus SEC(".maps");

/*
 * [stage * 2 + side][bucket]: side 0 client, 1 server; stage 0
 * softirq_rx, 1 tcp_rx, 2 udp_rx, 3 tcp_tx to net_dev_queue, 4 to
 * net_dev_xmit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 10 * BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline struct pcpu *mine(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&cpus, &k);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(ref_netif, struct sk_buff *skb)
{
	struct pcpu *c = mine();
	__u32 i;

	if (!c)
		return 0;
	i = c->next++ % RING;
	c->skb[i] = (__u64)skb;
	c->t[i] = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(ref_probe, struct sock *sk, struct sk_buff *skb)
{
	struct pcpu *c = mine();
	const struct tcphdr *th;
	int i, side;

	if (!c)
		return 0;
	c->side = -1;
	if (sk->__sk_common.skc_num == port)
		side = 1;
	else if (sk->__sk_common.skc_dport == __builtin_bswap16(port))
		side = 0;
	else
		return 0;
	th = (const struct tcphdr *)skb->data;
	if (skb->len <= BPF_CORE_READ_BITFIELD_PROBED(th, doff) * 4)
		return 0;
	/* The newest: a freed skb's memory comes back for a later packet. */
	c->arrival = 0;
	for (i = 0; i < RING; i++)
		if (c->skb[i] == (__u64)skb && c->t[i] > c->arrival)
			c->arrival = c->t[i];
	c->side = side;
	c->probe = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void book(int side, int stage, __u64 d)
{
	__u32 k;
	__u64 *n;

	d /= 10;
	if (d >= BUCKETS)
		d = BUCKETS - 1;
	k = (stage * 2 + side) * BUCKETS + d;
	n = bpf_map_lookup_elem(&hist, &k);
	if (n)
		(*n)++;
}

#define ETH_P_IP 0x0800
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

/* A UDP socket of `port`: its side, or -1. */
static __always_inline int udp_side(const struct sock *sk)
{
	if (sk->sk_protocol != IPPROTO_UDP)
		return -1;
	if (sk->__sk_common.skc_num == port)
		return 1;
	if (sk->__sk_common.skc_dport == __builtin_bswap16(port))
		return 0;
	return -1;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(ref_ready, struct sock *sk)
{
	__u64 now = bpf_ktime_get_ns();
	struct pcpu *c = mine();
	int side;

	if (!c)
		return 0;
	side = udp_side(sk);
	if (side >= 0) {
		/* udp_rx: 4 + side, booked apart from the TCP stages. */
		c->bside = side + 4;
		c->barrival = c->t[(c->next - 1) % RING];
		c->bready = now;
		return 0;
	}
	/* No segment of the port at tcp_probe (probe 0: none yet). */
	if (c->side < 0 || !c->probe)
		return 0;
	c->bside = c->side;
	c->barrival = c->arrival;
	c->bprobe = c->probe;
	c->bready = now;
	c->side = -1;
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ref_booked, struct sock *sk, int ret, int flags)
{
	struct pcpu *c = mine();

	if (!c || !c->bready)
		return 0;
	if (c->bside >= 4) {
		if (c->barrival && c->barrival < c->bready)
			book(c->bside - 4, 2, c->bready - c->barrival);
	} else {
		if (c->barrival && c->barrival < c->bprobe)
			book(c->bside, 0, c->bprobe - c->barrival);
		book(c->bside, 1, c->bready - c->bprobe);
	}
	c->bready = 0;
	return 0;
}

/*
 * tcp_tx: a TCP segment with payload of `port`, from the departure time
 * TCP gave it (skb->tstamp, its clock read as it sent the segment) to
 * two events around netstage's hand-off to the driver (DEV_XMIT, the
 * net_dev_start_xmit tracepoint): queued for the device (net_dev_queue,
 * in __dev_queue_xmit before the qdisc), and the driver's return
 * (net_dev_xmit). No tracepoint marks TCP's transmit and this kernel
 * refuses fentry, so the start is the stamp netstage reads too; the
 * ends, the segment's headers and the booking are the reference's own.
 * The two run in one call chain on one CPU: the stamp waits in the
 * CPU's slot, by the skb's address (compared, never read after).
 */
SEC("tp_btf/net_dev_queue")
int BPF_PROG(ref_dev_queue, struct sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns();
	__u16 th_off = skb->transport_header;
	struct pcpu *c = mine();
	struct tcphdr th;
	struct iphdr ip;
	__s64 len;
	int side;

	if (!c)
		return 0;
	c->txskb = 0;
	if (skb->protocol != __builtin_bswap16(ETH_P_IP) ||
	    bpf_probe_read_kernel(&ip, sizeof(ip),
				  skb->head + skb->network_header) ||
	    ip.protocol != IPPROTO_TCP ||
	    bpf_probe_read_kernel(&th, sizeof(th), skb->head + th_off))
		return 0;
	if (th.source == __builtin_bswap16(port))
		side = 1;
	else if (th.dest == __builtin_bswap16(port))
		side = 0;
	else
		return 0;
	len = (__s64)skb->len - (th_off - (skb->data - skb->head)) -
	      th.doff * 4;
	if (len <= 0 || skb->tstamp <= 0 || now <= (__u64)skb->tstamp)
		return 0;
	book(side, 3, now - skb->tstamp);
	c->txskb = (__u64)skb;
	c->txstamp = skb->tstamp;
	c->txside = side;
	return 0;
}

SEC("tp_btf/net_dev_xmit")
int BPF_PROG(ref_dev_xmit, struct sk_buff *skb, int rc)
{
	__u64 now = bpf_ktime_get_ns();
	struct pcpu *c = mine();

	if (!c || c->txskb != (__u64)skb)
		return 0;
	if (rc == 0)
		book(c->txside, 4, now - c->txstamp);
	c->txskb = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
