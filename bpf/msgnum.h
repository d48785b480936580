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

/* --trace-control: a flow's messages go in windows of this many. */
#define NS_CONTROL_WINDOW 64

/*
 * Is message m timed? --trace-sample: one in `sample` (0, 1: all).
 * --trace-control (without it): all but the last window of every
 * `control` (0, 1: none left out), a control group for the in-run
 * cost. By its number, so BPF and the worker agree on every message
 * without telling each other.
 */
NS_INLINE int ns_timed(unsigned int m, unsigned int sample,
		       unsigned int control)
{
	if (sample > 1)
		return m % sample == 0;
	return control <= 1 ||
	       (m / NS_CONTROL_WINDOW) % control != control - 1;
}

NS_INLINE int ns_sampled(unsigned int m, unsigned int sample)
{
	return ns_timed(m, sample, 0);
}

/* a - b, for sequence (and message) numbers that wrap. */
NS_INLINE int ns_diff(unsigned int a, unsigned int b)
{
	return (int)(a - b);
}

/*
 * The messages that start in the stream bytes [off, off + len): *first
 * and the count (at most cap, the most that can be in flight, which is
 * at most NS_SLOTS).
 */
NS_INLINE unsigned int ns_starts(unsigned long long off, unsigned int len,
				 unsigned int size, unsigned int cap,
				 unsigned long long *first)
{
	unsigned long long m = (off + size - 1) / size, n;

	*first = m;
	if (!len || m * size >= off + len)
		return 0;
	n = (off + len - 1 - m * size) / size + 1;
	return n < cap ? n : cap;
}

/*
 * TCP receive: the stream's bytes [0, end) are readable. The messages
 * from `from` on that start before end: *first and the count (at most
 * cap, the latest: no more can be in flight; cap <= NS_SLOTS).
 */
NS_INLINE unsigned int ns_readable(unsigned long long end, unsigned int size,
				   unsigned int from, unsigned int cap,
				   unsigned int *first)
{
	unsigned long long last;
	unsigned int n;

	if (!end || !size)
		return 0;
	last = (end - 1) / size;
	n = (unsigned int)last + 1 - from;
	if ((int)n <= 0)
		return 0;
	if (n > cap) {
		from += n - cap;
		n = cap;
	}
	*first = from;
	return n;
}

/*
 * The sequence number of message m's first byte, m being one of the
 * NS_SLOTS messages before readable byte end, which is rcv_nxt.
 */
NS_INLINE unsigned int ns_first_seq(unsigned long long end,
				    unsigned int rcv_nxt, unsigned int size,
				    unsigned int m)
{
	unsigned long long last = (end - 1) / size;
	unsigned long long start = (last - ((unsigned int)last - m)) * size;

	return rcv_nxt - (unsigned int)(end - start);
}

/* Does a segment [seq, end_seq) carry sequence number s? */
NS_INLINE int ns_carries(unsigned int seq, unsigned int end_seq,
			 unsigned int s)
{
	return ns_diff(s, seq) >= 0 && ns_diff(s, end_seq) < 0;
}

/*
 * observe's transmit: messages [from, begun) have entered TCP, message
 * m's first byte as sequence number tx_seq[NS_SLOT(m)], and wait, in
 * order, for the device hand-off of the packet carrying it. For a
 * packet [seq, seq + len): the messages it carries are [*first, return
 * value); those in [from, *first) went by in packets not seen. The
 * return value is the first message still waiting. Retransmissions and
 * ACKs carry none of them. ns_xmit_step() is one message of the walk
 * (BPF runs it under bpf_loop()): 1 when m is still waiting.
 */
NS_INLINE int ns_xmit_step(const unsigned int *tx_seq, unsigned int m,
			    unsigned int seq, unsigned int len,
			    unsigned int *first)
{
	unsigned int start = tx_seq[NS_SLOT(m)];

	if (ns_diff(start, seq) >= 0 && start - seq >= len)
		return 1;
	if (ns_diff(start, seq) < 0)
		*first = m + 1;
	return 0;
}

NS_INLINE unsigned int ns_xmit(const unsigned int *tx_seq, unsigned int from,
			       unsigned int begun, unsigned int seq,
			       unsigned int len, unsigned int *first)
{
	unsigned int m = from, i;

	*first = from;
	for (i = 0; i < NS_SLOTS && m != begun; i++, m++)
		if (ns_xmit_step(tx_seq, m, seq, len, first))
			break;
	return m;
}

#endif
