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
 * When the packets carrying a connection's message starts arrived, seen
 * before TCP matches them to a socket: the sequence number of the next
 * start expected, and (start, time) by message number.
 */
struct ns_arrivals {
	unsigned int next;	/* sequence number of the next message start */
	unsigned int idx;	/* its message number */
	unsigned int armed;
	unsigned int tag[NS_SLOTS];	/* start sequence number by slot */
	unsigned long long time[NS_SLOTS];
};

/* From here, message idx starts at sequence number next. */
NS_INLINE void ns_arm(struct ns_arrivals *a, unsigned int next,
		      unsigned int idx)
{
	a->next = next;
	a->idx = idx;
	a->armed = 1;
}

/*
 * A packet [seq, seq + len) arrived at `now`: note the message starts it
 * carries. Starts that went by in packets not seen (a hole, a packet
 * reordered ahead) are stepped over: those messages get no arrival.
 * Retransmitted bytes before the next start change nothing.
 */
NS_INLINE void ns_arrived(struct ns_arrivals *a, unsigned int size,
			  unsigned int seq, unsigned int len,
			  unsigned long long now)
{
	unsigned int next = a->next, skip, i;

	if (!size || !a->armed)
		return;
	if (ns_diff(next, seq) < 0) {
		skip = (seq - next + size - 1) / size;
		next += skip * size;
		a->idx += skip;
	}
	for (i = 0; i < NS_SLOTS; i++) {
		if (next - seq >= len)
			break;
		a->tag[NS_SLOT(a->idx)] = next;
		a->time[NS_SLOT(a->idx)] = now;
		next += size;
		a->idx++;
	}
	a->next = next;
}

/* When message m, whose first byte is sequence number sb, arrived; 0: unseen. */
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
