// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel side of netstage --trace: stamp each registered socket's
 * transaction at the kernel boundaries of bpf/stages.h and hand one
 * record per transaction to the worker that owns the socket.
 *
 * Only sockets user space registered in `socks` are traced: every other
 * socket costs one failed storage lookup. Receive starts before a packet
 * has a socket, so netif_receive_skb remembers when payload for each
 * connection of the data port first arrived, and tcp_probe (which has
 * the socket) takes it by the socket's addresses. Keyed by connection,
 * not skb: the socket backlog coalesces skbs, GRO merges them. A UDP
 * datagram stays one skb from the device to the socket queue: its
 * arrival is kept by skb until the socket is woken for it (udp_ready).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "hist_layout.h"
#include "stages.h"

char LICENSE[] SEC("license") = "GPL";

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define MSG_PEEK 2

/* Set by user space before load. */
const volatile __u32 rx_size[2];	/* [side]: bytes of an inbound message */
const volatile __u32 tx_size[2];	/* [side]: bytes of an outbound one */
const volatile __u16 data_port;		/* packets to or from it are ours */
const volatile __u8 side;		/* enum ns_side of this process */
const volatile __u8 hist_mode;		/* --trace=hist: no records */

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ns_sk);
} socks SEC(".maps");

/* One ring per worker, so each worker reads only its own records. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, NS_MAX_RINGS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, NS_RING_BYTES);
	});
} rings SEC(".maps");

/*
 * A connection as a packet to it names it, and as its socket does.
 * Addresses are folded to 32 bits (IPv6: the XOR of its words): a short
 * key hashes fast, and two connections between the same ports whose
 * folded addresses collide are not a case loopback or a test bed meets.
 */
struct conn {
	__u32 raddr;
	__u32 laddr;
	__u16 rport;		/* network order */
	__u16 lport;		/* network order */
};

static __always_inline __u32 fold(const __u32 *a)
{
	return a[0] ^ a[1] ^ a[2] ^ a[3];
}

/*
 * When payload for a connection first arrived that TCP has not taken
 * yet. One entry per connection for good: after the first packet,
 * marking and taking are lookups, not inserts and deletes.
 */
struct arrival {
	__u64 time;
	__u64 taken;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct conn);
	__type(value, struct arrival);
} rx_first SEC(".maps");

/*
 * UDP: when each datagram of the data port arrived, by skb, in a
 * direct-mapped table: a store, where a hash map's insert and delete
 * cost a few hundred ns a datagram. Two datagrams in flight at once in
 * one slot lose the first's arrival: its transaction is incomplete.
 */
#define UDP_RX_SLOTS 4096

struct udp_arrival {
	__u64 skb;
	__u64 time;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UDP_RX_SLOTS);
	__type(key, __u32);
	__type(value, struct udp_arrival);
} udp_rx SEC(".maps");

static __always_inline struct udp_arrival *udp_slot(__u64 skb)
{
	__u32 i = (__u32)((skb >> 8) ^ (skb >> 20)) & (UDP_RX_SLOTS - 1);

	return bpf_map_lookup_elem(&udp_rx, &i);
}

/* --trace=hist: a histogram per kernel stage of this side. */
struct khist {
	__u32 b[HIST_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NS_MAX_KSTAGES);
	__type(key, __u32);
	__type(value, struct khist);
} khists SEC(".maps");

/* --trace=hist: [0] transactions timed, [1] incomplete. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} kcounts SEC(".maps");

/* Records that found their ring full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline struct ns_sk *lookup(const struct sock *sk)
{
	return bpf_sk_storage_get(&socks, (struct sock *)sk, 0, 0);
}

static __always_inline void stamp_once(struct ns_sk *st, int b, __u64 now)
{
	if (!st->t[b])
		st->t[b] = now;
}

struct kstage {
	__u8 side, from, to;
};

#define KDEF(s, name, f, t) { NS_##s, NS_B_##f, NS_B_##t },
static const struct kstage kstages[] = { NS_KSTAGES(KDEF) };
#undef KDEF

static __always_inline void count(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&kcounts, &which);

	if (n)
		(*n)++;
}

/*
 * --trace=hist: time the kernel stages here. A reader faster than its
 * wake-up call saw the data by RECV_RET at the latest.
 */
/* A kernel stage's duration, or 0 if a boundary is missing or misordered. */
static __always_inline __u64 kspan(const struct ns_sk *st, __u32 i,
				   int *bad)
{
	__u32 f = kstages[i].from, t = kstages[i].to;
	__u64 from, to;

	if (f >= NS_B_COUNT || t >= NS_B_COUNT) {
		*bad = 1;
		return 0;
	}
	from = st->t[f];
	to = st->t[t];
	if (!from || !to || to < from)
		*bad = 1;
	return to - from;
}

/*
 * A global function: the verifier checks it once, on its own, instead
 * of once per path of every program that ends a transaction.
 */
__noinline int account(struct ns_sk *st)
{
	__u32 i, k = 0;
	int bad = 0;

	if (!st)
		return 0;
	if (!st->t[NS_B_DATA_READY] ||
	    st->t[NS_B_DATA_READY] > st->t[NS_B_RECV_RET])
		st->t[NS_B_DATA_READY] = st->t[NS_B_RECV_RET];
	for (i = 0; i < sizeof(kstages) / sizeof(kstages[0]); i++)
		if (kstages[i].side == st->side)
			kspan(st, i, &bad);
	/* Stamps parked for the next request that surfaced a request late. */
	if (NS_IS_SERVER(st->side)) {
		if (st->prev_xmit && st->t[NS_B_NETIF_RX] < st->prev_xmit)
			bad = 1;
		st->prev_xmit = st->t[NS_B_DEV_XMIT];
	}
	if (bad) {
		count(1);
		return 0;
	}
	for (i = 0; i < sizeof(kstages) / sizeof(kstages[0]); i++) {
		struct khist *h;
		__u32 b;

		if (kstages[i].side != st->side)
			continue;
		h = bpf_map_lookup_elem(&khists, &k);
		k++;
		b = hist_index(kspan(st, i, &bad));
		if (h && b < HIST_BUCKETS)
			h->b[b]++;
	}
	count(0);
	return 0;
}

/* Hand the transaction to its worker and start the next one. */
static __always_inline void emit(struct ns_sk *st)
{
	__u32 worker = st->worker, zero = 0;
	struct ns_krecord *r;
	void *ring;
	__u64 *n;
	int i;

	if (hist_mode) {
		account(st);
		goto next;
	}
	ring = bpf_map_lookup_elem(&rings, &worker);
	r = ring ? bpf_ringbuf_reserve(ring, sizeof(*r), 0) : NULL;
	if (r) {
		r->flow_id = st->flow_id;
		r->side = st->side;
		r->seq = st->seq;
		for (i = 0; i < NS_B_COUNT; i++)
			r->t[i] = st->t[i];
		/* The worker polls its ring after each transaction: no wake-up. */
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	} else {
		n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			(*n)++;
	}
next:
	st->seq++;
	for (i = 0; i < NS_B_COUNT; i++) {
		st->t[i] = st->next[i];
		st->next[i] = 0;
	}
}

/*
 * Where receive stamps go: this transaction's, or once its inbound
 * message is complete, the next one's.
 */
static __always_inline __u64 *rx_slots(struct ns_sk *st)
{
	return st->t[NS_B_RECV_RET] ? st->next : st->t;
}

/* Bytes of L3 and L4 header ours() needs at most: IPv6 (40) + TCP (13). */
#define HDR_BYTES 64

/* ours(): what a packet of the data port carries. */
enum { NOT_OURS, TCP_PAYLOAD, UDP_PAYLOAD };

/*
 * Is this packet TCP payload (or, tracing UDP, a datagram) to or from
 * the data port? If so, fill in the connection it is for. skb->data is
 * at L3; one read takes both headers. Pure ACKs are no message.
 */
static __always_inline int ours(const struct sk_buff *skb, struct conn *c)
{
	__u16 proto = bpf_ntohs(skb->protocol), iplen, sport, dport;
	__u8 h[HDR_BYTES], doff, l4 = NS_IS_UDP(side) ? IPPROTO_UDP
						      : IPPROTO_TCP;
	__u32 a6[4];
	unsigned int thoff;

	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return 0;
	if (bpf_probe_read_kernel(h, sizeof(h), skb->data))
		return 0;
	if (proto == ETH_P_IP) {
		if (h[9] != l4)
			return 0;
		thoff = (h[0] & 0xf) * 4;
		if (thoff < 20 || thoff > HDR_BYTES - 14)
			return 0;
		iplen = (h[2] << 8 | h[3]) - thoff;
		__builtin_memcpy(&c->raddr, h + 12, 4);
		__builtin_memcpy(&c->laddr, h + 16, 4);
	} else {
		if (h[6] != l4)
			return 0;
		thoff = 40;
		iplen = h[4] << 8 | h[5];
		__builtin_memcpy(a6, h + 8, 16);
		c->raddr = fold(a6);
		__builtin_memcpy(a6, h + 24, 16);
		c->laddr = fold(a6);
	}
	sport = h[thoff] << 8 | h[thoff + 1];
	dport = h[thoff + 2] << 8 | h[thoff + 3];
	doff = h[thoff + 12];
	/* Only packets to this side's sockets: to a server's data port,
	 * from it to a client. */
	if ((NS_IS_SERVER(side) ? dport : sport) != data_port)
		return 0;
	c->rport = bpf_htons(sport);
	c->lport = bpf_htons(dport);
	if (l4 == IPPROTO_UDP)
		return (h[thoff + 4] << 8 | h[thoff + 5]) > 8 ? UDP_PAYLOAD
							       : NOT_OURS;
	/* A length of 0 is a GSO packet too big for the field: payload. */
	return iplen == 0 || iplen > (doff >> 4) * 4 ? TCP_PAYLOAD : NOT_OURS;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(netif_receive_skb, struct sk_buff *skb)
{
	struct arrival *a, fresh = {};
	struct udp_arrival *u;
	struct conn c = {};
	__u64 key = (__u64)skb;

	switch (ours(skb, &c)) {
	case NOT_OURS:
		return 0;
	case UDP_PAYLOAD:
		u = udp_slot(key);
		if (u) {
			u->time = bpf_ktime_get_ns();
			u->skb = key;
		}
		return 0;
	}
	/* The earliest payload TCP has not taken yet: the message's first. */
	a = bpf_map_lookup_elem(&rx_first, &c);
	if (a && a->taken) {
		a->time = bpf_ktime_get_ns();
		a->taken = 0;
	} else if (!a) {
		fresh.time = bpf_ktime_get_ns();
		bpf_map_update_elem(&rx_first, &c, &fresh, BPF_NOEXIST);
	}
	return 0;
}

/* The connection of a socket, keyed as ours() keys its packets. */
static __always_inline void sock_conn(const struct sock *sk,
				      const struct sk_buff *skb,
				      struct conn *c)
{
	__u32 r[4], l[4];
	int i;

	/* tp_btf pointers: plain loads, relocated by CO-RE. */
	c->rport = sk->__sk_common.skc_dport;
	c->lport = bpf_htons(sk->__sk_common.skc_num);
	if (bpf_ntohs(skb->protocol) == ETH_P_IP) {
		c->raddr = sk->__sk_common.skc_daddr;
		c->laddr = sk->__sk_common.skc_rcv_saddr;
		return;
	}
	for (i = 0; i < 4; i++) {
		r[i] = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[i];
		l[i] = sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[i];
	}
	c->raddr = fold(r);
	c->laddr = fold(l);
}

/* TCP receive: in tcp_rcv_established; skb->data is at the TCP header. */
static __always_inline int tcp_rx(struct sock *sk, const struct sk_buff *skb)
{
	struct ns_sk *st = lookup(sk);
	__u64 netif = 0, *slots;
	struct arrival *a;
	struct conn c = {};
	__u8 doff;

	if (!st)
		return 0;
	if (bpf_probe_read_kernel(&doff, 1, skb->data + 12))
		return 0;
	/* Pure ACKs carry no message: they are no boundary. */
	if (skb->len <= (doff >> 4) * 4u)
		return 0;
	sock_conn(sk, skb, &c);
	a = bpf_map_lookup_elem(&rx_first, &c);
	if (a && !a->taken) {
		netif = a->time;
		a->taken = 1;
	}
	slots = rx_slots(st);
	if (!slots[NS_B_TCP_RX]) {
		slots[NS_B_TCP_RX] = bpf_ktime_get_ns();
		slots[NS_B_NETIF_RX] = netif;
	}
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(tcp_probe, struct sock *sk, const struct sk_buff *skb)
{
	return tcp_rx(sk, skb);
}

SEC("fentry/tcp_rcv_established")
int BPF_PROG(tcp_rcv_established, struct sock *sk, struct sk_buff *skb)
{
	return tcp_rx(sk, skb);
}

/* A UDP stamp slot: 0 is not written yet; NO_ARRIVAL, arrival unseen. */
#define NO_ARRIVAL (~0ULL)
#define UDP_SLOT(i) ((i) & (NS_UDP_QUEUE - 1))

/*
 * UDP wakes its socket once per datagram queued, right after queueing
 * it: the queue's tail is that datagram. Its arrival and this wake-up
 * join the socket's queue of stamps.
 */
static __always_inline int udp_ready(const struct sock *sk, struct ns_sk *st)
{
	__u64 key = (__u64)sk->sk_receive_queue.prev, arrival = NO_ARRIVAL;
	struct udp_arrival *u = udp_slot(key);
	__u32 i;

	if (u && u->skb == key) {
		arrival = u->time;
		u->skb = 0;	/* taken: the skb may be reused */
	}
	if (st->udp_overflow)
		return 0;
	i = __sync_fetch_and_add(&st->udp_tail, 1);
	if (i - st->udp_head >= NS_UDP_QUEUE) {
		st->udp_overflow = 1;
		return 0;
	}
	st->udp_q[UDP_SLOT(i)][1] = bpf_ktime_get_ns();
	st->udp_q[UDP_SLOT(i)][0] = arrival;
	return 0;
}

/* Datagrams a UDP socket still has queued for recv. */
static __always_inline __u32 udp_queued(const struct sock *sk)
{
	return sk->sk_receive_queue.qlen +
	       BPF_CORE_READ((struct udp_sock *)sk, reader_queue.qlen);
}

/*
 * UDP: recv took the oldest datagram; its stamps are this transaction's.
 * A reader on another CPU can take a datagram before its wake-up ran:
 * that transaction goes without, and the stamps added late are found
 * stale here, as more than the datagrams left can account for.
 */
static __always_inline void udp_read(const struct sock *sk, struct ns_sk *st)
{
	__u32 left = udp_queued(sk), n;
	__u64 *slot;

	st->t[NS_B_NETIF_RX] = st->t[NS_B_DATA_READY] = 0;
	if (st->udp_overflow) {
		if (!left) {
			st->udp_head = st->udp_tail;
			st->udp_overflow = 0;
		}
		return;
	}
	/* The oldest of more stamps than datagrams left are stale. */
	n = st->udp_tail - st->udp_head;
	if (n > left + 1)
		st->udp_head += n - (left + 1);
	if (st->udp_tail == st->udp_head)
		return;
	slot = st->udp_q[UDP_SLOT(st->udp_head)];
	if (slot[0] && slot[0] != NO_ARRIVAL) {
		st->t[NS_B_NETIF_RX] = slot[0];
		st->t[NS_B_DATA_READY] = slot[1];
	}
	slot[0] = slot[1] = 0;
	st->udp_head++;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(sk_data_ready, const struct sock *sk)
{
	struct ns_sk *st = lookup(sk);
	__u64 *slots;

	if (!st)
		return 0;
	if (NS_IS_UDP(st->side))
		return udp_ready(sk, st);
	slots = rx_slots(st);
	if (slots[NS_B_TCP_RX] && !slots[NS_B_DATA_READY])
		slots[NS_B_DATA_READY] = bpf_ktime_get_ns();
	return 0;
}

/*
 * A recv (rx) or send of ret bytes on the socket. The call that brings
 * the message to its size stamps RECV_RET or SEND_RET, and ends the
 * transaction of the side whose last call it is: a client's with the
 * response received, a server's with the response sent.
 */
static __always_inline int message_part(struct sock *sk, int ret, int rx)
{
	struct ns_sk *st = lookup(sk);
	__u32 side, *bytes, size;

	if (!st)
		return 0;
	side = st->side & 1;
	if (rx && NS_IS_UDP(st->side))
		udp_read(sk, st);
	bytes = rx ? &st->rx_bytes : &st->tx_bytes;
	size = rx ? rx_size[side] : tx_size[side];
	*bytes += ret;
	if (*bytes < size)
		return 0;
	*bytes = 0;
	st->t[rx ? NS_B_RECV_RET : NS_B_SEND_RET] = bpf_ktime_get_ns();
	if (side == (rx ? NS_CLIENT : NS_SERVER))
		emit(st);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sock_recv_length, struct sock *sk, int ret, int flags)
{
	if (ret <= 0 || (flags & MSG_PEEK))
		return 0;
	return message_part(sk, ret, 1);
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tcp_sendmsg_locked, const struct sock *sk, const struct msghdr *msg,
	     const struct sk_buff *skb, int size_goal)
{
	struct ns_sk *st = lookup(sk);

	if (st)
		stamp_once(st, NS_B_TCP_SEND, bpf_ktime_get_ns());
	return 0;
}

/* The first hand-off to a driver after the message entered TCP. */
static __always_inline int dev_xmit(const struct sk_buff *skb)
{
	/* Read directly: the verifier must see a socket, not a number. */
	struct sock *sk = skb->sk;
	struct ns_sk *st;

	if (!sk)
		return 0;
	st = lookup(sk);
	/* TCP: once the message entered TCP (not an ACK's hand-off). */
	if (st && (st->t[NS_B_TCP_SEND] || NS_IS_UDP(st->side)))
		stamp_once(st, NS_B_DEV_XMIT, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(net_dev_start_xmit, const struct sk_buff *skb,
	     const struct net_device *dev)
{
	return dev_xmit(skb);
}

SEC("fentry/dev_hard_start_xmit")
int BPF_PROG(dev_hard_start_xmit, struct sk_buff *first)
{
	return dev_xmit(first);
}

/*
 * tcp_crr: the connection's set-up. A client's socket is registered
 * before its connect(); a server's exists only as the handshake ends,
 * before accept(), so its storage is made here, by the data port, and
 * user space's registration after accept() keeps these stamps.
 */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(inet_sock_set_state, const struct sock *sk, const int oldstate,
	     const int newstate)
{
	struct ns_sk *st;

	if (newstate == TCP_SYN_SENT) {
		st = lookup(sk);
		if (st)
			stamp_once(st, NS_B_SYN_SENT, bpf_ktime_get_ns());
		return 0;
	}
	if (newstate != TCP_ESTABLISHED)
		return 0;
	st = lookup(sk);
	if (!st && NS_IS_SERVER(side) &&
	    sk->__sk_common.skc_num == data_port) {
		st = bpf_sk_storage_get(&socks, (struct sock *)sk, 0,
					BPF_SK_STORAGE_GET_F_CREATE);
		if (st)
			st->side = side;
	}
	if (st)
		stamp_once(st, NS_B_ESTABLISHED, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(sock_send_length, struct sock *sk, int ret, int flags)
{
	return ret > 0 ? message_part(sk, ret, 0) : 0;
}
