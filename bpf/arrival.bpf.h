/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packet arrivals: when each packet entered the stack
 * (netif_receive_skb), kept by sequence number or skb, and found again
 * where TCP or UDP has the socket.
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_ARRIVAL_BPF_H
#define NETSTAGE_ARRIVAL_BPF_H

/*
 * Arrivals: when each packet entered the stack (netif_receive_skb). The
 * kernel's own receive stamp is no such thing on loopback and veth: a
 * TCP packet still carries its sender's departure time there, and is
 * stamped anew only in ip_local_deliver_finish(), after IP receive and
 * netfilter.
 *
 * A TCP packet's arrival is kept by the number after its last byte
 * (TCP's end_seq) and its ports, not by its skb: TCP appends segments
 * to the skb before them (in the receive queue, tcp_try_coalesce(); in
 * the socket's backlog, tcp_add_backlog(), a request onto a pure ACK
 * say) and frees theirs, while the bytes keep their numbers. The
 * segment TCP just queued ends the receive queue's tail, so the copy it
 * took is the last packet to end there, whatever copies of its bytes
 * came before: a copy dropped after netif_receive_skb (netfilter), or
 * one whose bytes a retransmission that began earlier (collapsed with
 * the segment before it) brought again. An entry is two words with the
 * number in both: the low 32 bits of the time (4.3 s, which the reader
 * completes from its own clock) in one, the sequence space the packet
 * took (payload, and its FIN) in the other. The writer stores the
 * length first, the reader loads the time first: a pair torn by another
 * packet's write has two numbers. A UDP datagram stays one skb to the socket:
 * its arrival is kept by the skb's address (the verifier lets a program
 * read only the low 32 bits of a pointer).
 *
 * A packet's entry lasts until others take its place. A TCP packet has
 * a set of four entries in one cache line, by its end and ports: it
 * takes the oldest, and the wake-up that looks for it reads the line
 * the arrival just wrote. The table's sets are as many as the run
 * needs (arrival_set_bits, user space's choice from its flows): a
 * line of a larger table is less often cached, and each packet pays
 * for one (0.1 us more a packet at 1 MiB than at 64 KiB here). The
 * table is mapped (BPF_F_MMAPABLE) only so that the kernel puts its
 * first set at a page's start, every set in one line.
 */
#define ARRIVAL_WAYS 4
#define ARRIVAL_SETS_MAX (1 << NS_ARRIVAL_SET_BITS_MAX)
#define UDP_ARRIVAL_SLOTS (1 << 16)

struct arrival {
	__u64 t;	/* seq << 32 | the time's low 32 bits */
	__u64 len;	/* seq << 32 | payload bytes */
};

struct arrival_set {
	struct arrival e[ARRIVAL_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ARRIVAL_SETS_MAX);	/* 1 << arrival_set_bits */
	__type(key, __u32);
	__type(value, struct arrival_set);
} arrivals SEC(".maps");

/* UDP's, by skb: one entry a datagram. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UDP_ARRIVAL_SLOTS);
	__type(key, __u32);
	__type(value, struct arrival);
} udp_arrivals SEC(".maps");

/*
 * A 32-bit move of a pointer: clang would zero-extend it with shifts,
 * which the verifier refuses on a pointer.
 */
static __always_inline __u32 low32(const void *p)
{
	__u32 w;

	asm volatile("%0 = %1" : "=w"(w) : "w"((__u32)(__u64)p));
	return w;
}

/*
 * A TCP packet's set, by its end and ports in network order, as the
 * packet has them (its source the peer): it is lost only if four
 * packets that came in after it took the set's four entries.
 */
static __always_inline struct arrival_set *arrival_set(__u32 end, __u16 peer,
						       __u16 local)
{
	__u32 x = end ^ ((__u32)peer << 16 | local);

	x = (x * 0x9e3779b1u) >> (32 - arrival_set_bits);
	return bpf_map_lookup_elem(&arrivals, &x);
}

/*
 * The clock read of the packet netif_receive_skb is handing the
 * programs now, one map shared by every netstage object on the host
 * (tracer.c gives a later one the oldest's). Each object runs its own
 * program on every packet, one after the other: without it, the later
 * one stamps the arrival after the earlier one's run (0.2-0.35 us
 * here). A packet is known by its skb, its device and its number (a
 * datagram: its ports, one way, and length): a new TCP packet at a
 * freed one's address is another number, the same skb forwarded into
 * another namespace another device. A datagram has no number: udp_rr's
 * response takes its request's freed skb and length, but its ports run
 * the other way; and the next request of that way comes a round trip
 * later, past RX_CLOCK_SAME_NS, which two programs of one packet are
 * well within. A socket's wake-up call shares the slot the same way
 * (ready_id()).
 */
struct rx_clock {
	__u64 id;	/* rx_id() */
	__u64 t;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_clock);
} NS_RX_CLOCK SEC(".maps");

#define RX_CLOCK_SAME_NS 5000

static __always_inline __u64 rx_id(const struct sk_buff *skb, __u32 n)
{
	return (__u64)low32(skb) << 32 |
	       (n ^ low32(ro_cast(skb, struct sk_buff)->dev));
}

/* This packet's first clock read on this CPU, now's if this is it. */
static __always_inline __u64 first_clock(__u64 id, __u64 now)
{
	struct rx_clock *c;
	__u32 k = 0;

	c = bpf_map_lookup_elem(&NS_RX_CLOCK, &k);
	if (!c)
		return now;
	if (c->id == id && now - c->t < RX_CLOCK_SAME_NS)
		return c->t;
	c->id = id;
	c->t = now;
	return now;
}

/*
 * The UDP datagram this CPU's softirq is taking to its socket: its
 * skb's address and its destination port (network order). From
 * netif_receive_skb to the wake-up call that follows its queueing is
 * one call chain on one CPU (a batch of packets received as a list
 * excepted: there this is the batch's last).
 */
struct udp_cpu {
	__u32 w;	/* low32(skb); 0: taken by a wake-up call */
	__u16 dport;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct udp_cpu);
} udp_cpu SEC(".maps");

#define TCPHDR_FIN 0x01
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

/*
 * The entry of set for a packet ending at `end`: an earlier copy's of
 * that end, or the one written longest ago.
 */
static __always_inline struct arrival *oldest(struct arrival_set *set,
					      __u32 end, __u32 now)
{
	struct arrival *e = &set->e[0];
	__u32 age = 0, a;
	int i;

	for (i = 0; i < ARRIVAL_WAYS; i++) {
		if (set->e[i].t >> 32 == end)
			return &set->e[i];
		a = now - (__u32)set->e[i].t;
		/*
		 * Another CPU's, whose clock read came after ours (less
		 * than 1 ms in the future): new, not 4.3 s old.
		 */
		if (a > (__u32)-1000000)
			a = 0;
		if (a >= age) {
			age = a;
			e = &set->e[i];
		}
	}
	return e;
}

/*
 * The arrival of the packet ending at `end` into its set. Two CPUs may
 * choose the same entry at once: each claims it by a compare-and-swap
 * of its time word, and the one that fails chooses again, among the
 * others (one packet of 100,000 lost its entry so at 1,000 flows).
 * The time is written before the length: a reader, which loads the time
 * first, finds two numbers in a pair torn by another packet's write.
 */
static __always_inline void put_arrival(struct arrival_set *set, __u32 end,
					__u32 len, __u64 now)
{
	__u64 v = (__u64)end << 32 | (__u32)now, old;
	struct arrival *e;
	int try;

	for (try = 0; try < 2; try++) {
		e = oldest(set, end, (__u32)now);
		old = e->t;
		if (__sync_val_compare_and_swap(&e->t, old, v) == old) {
			e->len = (__u64)end << 32 | len;
			return;
		}
	}
}

/*
 * Does this object look up arrivals of packets from that port to that
 * one (network order)? A server's come to the data port, a client's
 * from it; every packet while the port is not known yet. Other traffic
 * then costs no entry and takes none of ours.
 */
static __always_inline int receives(__u16 source, __u16 dest)
{
	return !data_port || (serves(1) && dest == bpf_htons(data_port)) ||
	       (serves(0) && source == bpf_htons(data_port));
}

/* A datagram: kept by its skb, and left for this CPU's wake-up call. */
static __always_inline void note_udp(const struct sk_buff *skb,
				     const struct tcphdr *th, __u64 now)
{
	struct arrival *e;
	struct udp_cpu *u;
	__u32 k;

	now = first_clock(rx_id(skb, skb->len ^ ((__u32)th->source << 16 |
						 th->dest)), now);
	if (!receives(th->source, th->dest))
		return;
	k = (low32(skb) >> 8) % UDP_ARRIVAL_SLOTS;
	e = bpf_map_lookup_elem(&udp_arrivals, &k);
	if (e)
		e->t = (__u64)low32(skb) << 32 | (__u32)now;
	k = 0;
	u = bpf_map_lookup_elem(&udp_cpu, &k);
	if (u) {
		u->w = low32(skb);
		u->dport = th->dest;
	}
}

/* A TCP segment of payload: kept by its end and ports. */
static __always_inline void note_tcp(const struct sk_buff *skb,
				     const struct tcphdr *th, __u32 off,
				     __u64 now)
{
	__s64 len = (__s64)skb->len - off - th->doff * 4;
	struct arrival_set *set;
	__u32 end;

	/*
	 * A pure ACK carries no message, and its number is that of the
	 * next byte its sender will send: it must not take that byte's
	 * entry.
	 */
	if (len <= 0)
		return;
	/* TCP's end_seq counts a FIN (byte 13: the flags). */
	len += ((const __u8 *)th)[13] & TCPHDR_FIN;
	end = bpf_ntohl(th->seq) + (__u32)len;
	/* Shared before the filter: another object may time this packet. */
	now = first_clock(rx_id(skb, end), now);
	if (!receives(th->source, th->dest))
		return;
	set = arrival_set(end, th->source, th->dest);
	if (!set)
		return;
	put_arrival(set, end, len, now);
}

/*
 * A packet entering the stack. The tracepoint fires before
 * __netif_receive_skb_core() resets the network header, so the IP
 * header is where skb->data points (the link header pulled), not
 * necessarily at network_header.
 */
static __always_inline void note_arrival(const struct sk_buff *skb, __u64 now)
{
	__u64 net = (__u64)skb->data;
	const struct tcphdr *th;
	__u32 off, proto;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		const struct iphdr *ip = ro_cast((void *)net, struct iphdr);

		/* A fragment's first bytes are not the segment's. */
		if (ip->frag_off & bpf_htons(0x3fff))
			return;
		proto = ip->protocol;
		off = ip->ihl * 4;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		proto = ro_cast((void *)net, struct ipv6hdr)->nexthdr;
		off = sizeof(struct ipv6hdr);
	} else {
		return;
	}
	if (proto != IPPROTO_UDP && proto != IPPROTO_TCP)
		return;
	/* A UDP header's ports are where TCP's are. */
	th = ro_cast((void *)(net + off), struct tcphdr);
	if (counting && (th->dest == bpf_htons(data_port) ||
			 th->source == bpf_htons(data_port)))
		own(NS_P_ARRIVAL);
	if (proto == IPPROTO_UDP)
		note_udp(skb, th, now);
	else
		note_tcp(skb, th, off, now);
}

/* Entry e's time if it is the packet that ends at `end`; 0 if not. */
static __always_inline __u64 arrival_of(const struct arrival *e, __u32 end,
					__u64 now, __u32 *len)
{
	__u64 v = e->t, l;

	barrier();
	l = e->len;
	if (v >> 32 != end || l >> 32 != end)
		return 0;
	*len = (__u32)l;
	return now - (__u32)(now - v);
}

/* The arrival of the last packet to end at `end`, and its length. */
static __always_inline __u64 ended(__u32 end, __u16 peer, __u16 local,
				   __u64 now, __u32 *len)
{
	struct arrival_set *set = arrival_set(end, peer, local);
	__u64 t = 0;
	int i;

	for (i = 0; set && i < ARRIVAL_WAYS && !t; i++)
		t = arrival_of(&set->e[i], end, now, len);
	return t;
}

/*
 * Packets a wake-up looks back through from the segment just queued:
 * those TCP took at once, merged in the socket's backlog while the
 * reader held it.
 */
#define ARRIVAL_WALK 8

/*
 * When the byte of number `first` entered the stack, in the copy TCP
 * took, on the connection of those ports (peer's high): the segment
 * just queued ends at `at`, and the last packet to end there is the
 * copy taken. If the byte is before it, TCP took the packets together,
 * merged in the backlog, each ending where the next began. 0: not
 * known (later packets took an entry, or more than ARRIVAL_WALK
 * packets were merged). A global function: the verifier checks the
 * walk once, on its own, not once for each message of a wake-up (the
 * setup's time here, 0.4 s against 1.9 s inlined).
 */
__noinline __u64 arrival_walk(__u32 at, __u32 first, __u32 ports, __u64 now)
{
	__u32 len = 0;
	__u64 t;
	int i;

	for (i = 0; i < ARRIVAL_WALK; i++) {
		t = ended(at, ports >> 16, ports, now, &len);
		if (!t)
			return 0;
		if (at - first <= len)
			return t;
		at -= len;
	}
	return 0;
}

/*
 * The arrival of message byte `first` on connection sk (arrival_walk);
 * without the hook, the kernel's receive stamp of the tail skb, kept
 * on while a socket of user space asks.
 */
static __always_inline __u64 tcp_arrival(const struct sock *sk,
					 const struct sk_buff *tail,
					 __u32 first, __u32 end_seq, __u64 now)
{
	__u16 peer = sk->__sk_common.skc_dport;
	__u16 local = bpf_htons(sk->__sk_common.skc_num);
	__s64 ts;

	if (!arrival_hook) {
		ts = tail->tstamp;
		return ts > real_offset ? ts - real_offset : 0;
	}
	return arrival_walk(end_seq, first, (__u32)peer << 16 | local, now);
}

/* The arrival of the UDP datagram whose skb's address is w; 0: not known. */
static __always_inline __u64 udp_arrival_of(__u32 w, __u64 now)
{
	__u32 k = (w >> 8) % UDP_ARRIVAL_SLOTS;
	struct arrival *e;
	__u64 v;

	e = bpf_map_lookup_elem(&udp_arrivals, &k);
	if (!e)
		return 0;
	v = e->t;
	if (v >> 32 != w)
		return 0;
	return now - (__u32)(now - v);
}

/*
 * Is the datagram w queued on q, within ARRIVAL_WALK of its tail?
 * Another CPU's sender may have queued its own behind it.
 */
static __always_inline int udp_in_queue(const struct sk_buff_head *q,
					__u32 w)
{
	const struct sk_buff *skb = q->prev;
	__u32 head = low32(q);
	int i;

	for (i = 0; i < ARRIVAL_WALK && skb; i++) {
		if (low32(skb) == head)
			return 0;
		if (low32(skb) == w)
			return 1;
		skb = skb->prev;
	}
	return 0;
}

/* Is datagram w queued on UDP socket sk, for recv or behind what it reads? */
static __always_inline int udp_still_queued(const struct sock *sk, __u32 w)
{
	const struct udp_sock *up = ro_cast(sk, struct udp_sock);

	return udp_in_queue(&up->inet.sk.sk_receive_queue, w) ||
	       udp_in_queue(&up->reader_queue, w);
}

/*
 * The arrival of the datagram a wake-up call of UDP socket sk follows;
 * 0: not known. It is this CPU's datagram (struct udp_cpu) if that was
 * sent to the socket's port and is still queued (on the socket, or on
 * the queue a reader moved it to, UDP's reader_queue), or the socket's
 * queue is empty (a reader took the datagram before this call); else
 * the queue's tail (a batch received as a list, where every arrival
 * comes before the first delivery). *w: the datagram's skb (low 32
 * bits of its address), 0 not known; *gone: it is on neither queue, a
 * recv has it. Without the arrival hook, the tail's own receive stamp.
 */
static __always_inline __u64 udp_arrival(const struct sock *sk, __u64 now,
					 __u32 *w, int *gone)
{
	const struct sk_buff *tail =
		ro_cast(sk, struct sock)->sk_receive_queue.prev;
	struct udp_cpu *u;
	__u32 k = 0;
	int queued;
	__s64 s;

	*w = sk->sk_receive_queue.qlen ? low32(tail) : 0;
	*gone = 0;
	if (!arrival_hook) {
		s = tail->tstamp;
		return s > real_offset ? s - real_offset : 0;
	}
	u = bpf_map_lookup_elem(&udp_cpu, &k);
	if (u && u->w && u->dport == bpf_htons(sk->__sk_common.skc_num)) {
		queued = udp_still_queued(sk, u->w);
		if (queued || !sk->sk_receive_queue.qlen) {
			*w = u->w;
			*gone = !queued;
			u->w = 0;
			return udp_arrival_of(*w, now);
		}
	}
	return udp_arrival_of(low32(tail), now);
}

#endif
