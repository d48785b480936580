/*
 * Which message of a TCP stream a kernel event belongs to: the
 * arithmetic of docs/stages.md's attribution rules, shared by the BPF
 * program and the unit tests (tests/unit/t_msgnum.c), which replay
 * synthetic packet streams through it. Pure: no maps, no helpers.
 *
 * Messages have a fixed size and are numbered from the stream's first
 * byte; message m starts at offset m * size. Sequence numbers are the
 * stream's, modulo 2^32.
 */
#ifndef NETSTAGE_MSGNUM_H
#define NETSTAGE_MSGNUM_H

#include "stages.h"

#ifdef __bpf__
#define NS_INLINE static __always_inline
#else
#define NS_INLINE static inline
#endif

#define NS_SLOT(m) ((m) & (NS_SLOTS - 1))

/* a - b, for sequence (and message) numbers that wrap. */
NS_INLINE int ns_diff(unsigned int a, unsigned int b)
{
	return (int)(a - b);
}

/*
 * The messages that start in the stream bytes [off, off + len): *first
 * and the count (at most NS_SLOTS: no more can be in flight).
 */
NS_INLINE unsigned int ns_starts(unsigned long long off, unsigned int len,
				 unsigned int size, unsigned long long *first)
{
	unsigned long long m = (off + size - 1) / size, n;

	*first = m;
	if (!len || m * size >= off + len)
		return 0;
	n = (off + len - 1 - m * size) / size + 1;
	return n < NS_SLOTS ? n : NS_SLOTS;
}

/*
 * Where the next message of a stream starts, for events that see
 * packets but not the socket's own counts: the sequence number of the
 * next start expected and its message number.
 */
struct ns_track {
	unsigned int next;
	unsigned int idx;
	unsigned int armed;
};

/* From here, message idx starts at sequence number next. */
NS_INLINE void ns_arm(struct ns_track *t, unsigned int next,
		      unsigned int idx)
{
	t->next = next;
	t->idx = idx;
	t->armed = 1;
}

/*
 * A packet [seq, seq + len) went by: the message starts it carries,
 * *first and the count, and the track moves past them. Starts that went
 * by in packets not seen (a hole, a packet reordered ahead) are stepped
 * over: those messages are not counted. Bytes sent again before the
 * next start carry none.
 */
NS_INLINE unsigned int ns_track(struct ns_track *t, unsigned int size,
				unsigned int seq, unsigned int len,
				unsigned int *first)
{
	unsigned int next = t->next, skip, n = 0;

	if (!size || !t->armed)
		return 0;
	if (ns_diff(next, seq) < 0) {
		skip = (seq - next + size - 1) / size;
		next += skip * size;
		t->idx += skip;
	}
	*first = t->idx;
	while (n < NS_SLOTS && next - seq < len) {
		next += size;
		n++;
	}
	t->next = next;
	t->idx += n;
	return n;
}

/*
 * Per connection, seen before TCP matches packets to a socket: the
 * receive track and when the packet carrying each message start arrived,
 * tagged by the start's sequence number; the transmit track serves a
 * kernel without the tcp_sendmsg_locked tracepoint.
 */
struct ns_arrivals {
	struct ns_track rx, tx;
	unsigned int tag[NS_SLOTS];	/* start sequence number by slot */
	unsigned long long time[NS_SLOTS];
};

/*
 * A packet carrying bytes before the track's next start came again (a
 * retransmission, or a copy after one dropped on its way to TCP): the
 * starts it carries take this copy's arrival. TCP has not taken them
 * yet, or this copy is the one it takes: a copy netfilter or a full
 * backlog dropped after netif_receive_skb must not time its message.
 * Once TCP has taken a start, its arrival was read then, so a later
 * duplicate changes nothing that counts. At most NS_SLOTS starts back.
 */
NS_INLINE void ns_rearrived(struct ns_arrivals *a, unsigned int size,
			    unsigned int seq, unsigned int len,
			    unsigned long long now)
{
	unsigned int back = a->rx.next - seq, k, s, m;

	if (!size || !a->rx.armed || ns_diff(a->rx.next, seq) <= 0)
		return;
	for (k = 1; k <= NS_SLOTS && k * size <= back; k++) {
		s = a->rx.next - k * size;
		if (s - seq >= len)
			continue;
		m = a->rx.idx - k;
		a->tag[NS_SLOT(m)] = s;
		a->time[NS_SLOT(m)] = now;
	}
}

/* A packet [seq, seq + len) arrived at `now`: note its message starts. */
NS_INLINE void ns_arrived(struct ns_arrivals *a, unsigned int size,
			  unsigned int seq, unsigned int len,
			  unsigned long long now)
{
	unsigned int first = 0, n, start, i;

	ns_rearrived(a, size, seq, len, now);
	n = ns_track(&a->rx, size, seq, len, &first);
	start = a->rx.next - n * size;

	for (i = 0; i < NS_SLOTS && i < n; i++) {
		a->tag[NS_SLOT(first + i)] = start + i * size;
		a->time[NS_SLOT(first + i)] = now;
	}
}

/*
 * Messages of no fixed size (observe): the receive track names the one
 * start expected next, armed as the response before it begins. Every
 * packet carrying that byte notes its arrival, so a copy dropped before
 * TCP took it (netfilter, a full backlog) is superseded by the copy TCP
 * takes, which disarms the track (ns_turn_taken).
 */
NS_INLINE void ns_arrived_turn(struct ns_arrivals *a, unsigned int seq,
			       unsigned int len, unsigned long long now)
{
	unsigned int s = NS_SLOT(a->rx.idx);

	if (!a->rx.armed || a->rx.next - seq >= len)
		return;
	a->tag[s] = a->rx.next;
	a->time[s] = now;
}

/* TCP took the expected start: no later copy of it is an arrival. */
NS_INLINE void ns_turn_taken(struct ns_arrivals *a)
{
	a->rx.armed = 0;
}

/* When message m, first byte at sequence number sb, arrived; 0: unseen. */
NS_INLINE unsigned long long ns_arrival_of(const struct ns_arrivals *a,
					   unsigned int m, unsigned int sb)
{
	if (a->tag[NS_SLOT(m)] != sb)
		return 0;
	return a->time[NS_SLOT(m)];
}

/*
 * Transmit: messages [from, begun) have entered TCP, message m's first
 * byte as sequence number tx_seq[NS_SLOT(m)], and wait, in order, for
 * the device hand-off of the packet carrying it. For a packet
 * [seq, seq + len): the messages it carries are [*first, return value);
 * those in [from, *first) went by in packets not seen. The return value
 * is the first message still waiting. Retransmissions and ACKs carry
 * none of them.
 */
NS_INLINE unsigned int ns_xmit(const unsigned int *tx_seq, unsigned int from,
			       unsigned int begun, unsigned int seq,
			       unsigned int len, unsigned int *first)
{
	unsigned int m = from, i, start;

	*first = from;
	for (i = 0; i < NS_SLOTS && m != begun; i++, m++) {
		start = tx_seq[NS_SLOT(m)];
		if (ns_diff(start, seq) >= 0 && start - seq >= len)
			break;
		if (ns_diff(start, seq) < 0)
			*first = m + 1;
	}
	return m;
}

#endif
