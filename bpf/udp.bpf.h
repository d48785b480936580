/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UDP's stamps: a socket's queue of its datagrams' arrivals and wake-up
 * calls, in the order recv takes them, and a datagram's hand-off.
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_UDP_BPF_H
#define NETSTAGE_UDP_BPF_H

/* A UDP stamp slot: 0 is not written yet; NO_ARRIVAL, arrival unseen. */
#define NO_ARRIVAL (~0ULL)
#define UDP_SLOT(i) ((i) & (NS_UDP_QUEUE - 1))

/* recvs that went without stamps, whose wake-up calls are yet to come */
#define UDP_LATE_MAX 4

static __always_inline void udp_late_add(struct ns_sk *st)
{
	if (st->udp_late < UDP_LATE_MAX)
		__sync_fetch_and_add(&st->udp_late, 1);
}

/* Is a wake-up call whose datagram a recv has already taken late? */
static __always_inline int udp_late_take(struct ns_sk *st)
{
	if (!st->udp_late)
		return 0;
	if (__sync_fetch_and_sub(&st->udp_late, 1))
		return 1;
	__sync_fetch_and_add(&st->udp_late, 1);
	return 0;
}

/*
 * UDP wakes its socket once per datagram queued, right after queueing
 * it: the queue's tail is that datagram. Its arrival and this wake-up
 * join the socket's queue of stamps. A call that finds its datagram
 * already taken is late if a recv went without stamps (held up, on a
 * busy host): its stamps go, not to the next datagram read. Else it is
 * the recv's that has taken it and is on its way to its tracepoint.
 */
static __always_inline int udp_ready(const struct sock *sk, struct ns_sk *st,
				     __u64 now)
{
	__u32 i, w;
	int gone;
	__u64 arrival = udp_arrival(sk, now, &w, &gone);

	if (gone && udp_late_take(st))
		return 0;
	if (!arrival)
		arrival = NO_ARRIVAL;
	if (st->udp_overflow)
		return 0;
	i = __sync_fetch_and_add(&st->udp_tail, 1);
	if (i - st->udp_head >= NS_UDP_QUEUE) {
		st->udp_overflow = 1;
		return 0;
	}
	st->udp_w[UDP_SLOT(i)] = w;
	st->udp_q[UDP_SLOT(i)][1] = now;
	st->udp_q[UDP_SLOT(i)][0] = arrival;
	return 0;
}

/* Datagrams a UDP socket still has queued for recv. */
static __always_inline __u32 udp_queued(const struct sock *sk)
{
	return sk->sk_receive_queue.qlen +
	       BPF_CORE_READ((struct udp_sock *)sk, reader_queue.qlen);
}

#define UDP_UNSWAP 4

/* Stamps j1 to j2 of the socket's queue: j2's now j1's, and the rest one on. */
static __always_inline void udp_rotate(struct ns_sk *st, __u32 j1, __u32 j2)
{
	__u64 a = st->udp_q[UDP_SLOT(j2)][0], d = st->udp_q[UDP_SLOT(j2)][1];
	__u32 w = st->udp_w[UDP_SLOT(j2)], j;
	int i;

	for (i = 0; i < UDP_UNSWAP; i++) {
		j = j2 - i;
		if (j == j1)
			break;
		st->udp_q[UDP_SLOT(j)][0] = st->udp_q[UDP_SLOT(j - 1)][0];
		st->udp_q[UDP_SLOT(j)][1] = st->udp_q[UDP_SLOT(j - 1)][1];
		st->udp_w[UDP_SLOT(j)] = st->udp_w[UDP_SLOT(j - 1)];
	}
	st->udp_q[UDP_SLOT(j1)][0] = a;
	st->udp_q[UDP_SLOT(j1)][1] = d;
	st->udp_w[UDP_SLOT(j1)] = w;
}

/*
 * Senders' wake-up calls on several CPUs can run in the other order
 * than their datagrams queued: the oldest stamps are then those of a
 * datagram still queued, and this recv's come later. Put back here,
 * where the queue shows it, not at the wake-up, which cannot know
 * whether a datagram queued ahead of its own is yet to wake the socket.
 * 0: the oldest stamps are not of a datagram still queued, or this
 * recv's are among the next UDP_UNSWAP and now the oldest; 1: they are
 * not there yet (their wake-up call is late).
 */
static __always_inline int udp_unswap(const struct sock *sk,
				      struct ns_sk *st)
{
	__u32 h = st->udp_head, w = st->udp_w[UDP_SLOT(h)];
	int i;

	if (!w || !udp_still_queued(sk, w))
		return 0;
	for (i = 1; i < UDP_UNSWAP; i++) {
		if (h + i == st->udp_tail)
			return 1;
		if (!udp_still_queued(sk, st->udp_w[UDP_SLOT(h + i)])) {
			udp_rotate(st, h, h + i);
			return 0;
		}
	}
	return 1;
}

/*
 * UDP: recv took the oldest datagram; its stamps are this message's.
 * A reader on another CPU can take a datagram before its wake-up ran:
 * that transaction goes without, and so do the stamps the call adds
 * late (udp_ready()), or they are found stale here, as more than the
 * datagrams left can account for.
 */
static __always_inline void udp_read(const struct sock *sk, struct ns_sk *st)
{
	__u32 left = udp_queued(sk), n;
	__u64 *sl = slot(st, rx_msg(st)), *q;

	sl[NS_K_NETIF_RX] = sl[NS_K_DATA_READY] = 0;
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
	if (st->udp_tail == st->udp_head || (left && udp_unswap(sk, st))) {
		udp_late_add(st);
		return;
	}
	q = st->udp_q[UDP_SLOT(st->udp_head)];
	if (q[0] && q[0] != NO_ARRIVAL) {
		sl[NS_K_NETIF_RX] = q[0];
		sl[NS_K_DATA_READY] = q[1];
	}
	q[0] = q[1] = 0;
	st->udp_head++;
}

/*
 * UDP: the datagram's first hand-off (a fragmented one has several). A
 * slot whose send had returned is a lost request's: start it afresh.
 */
static __always_inline void udp_xmit(struct ns_sk *st, __u64 now)
{
	__u64 *sl = slot(st, tx_msg(st));
	int i;

	/* --trace-sample: a message not timed leaves no stamp to go stale. */
	if (!sampled(tx_msg(st)))
		return;
	if (sl[NS_K_SEND_RET])
		for (i = 0; i < NS_K_COUNT; i++)
			sl[i] = 0;
	stamp_once(sl, NS_K_DEV_XMIT, now);
}

#endif
