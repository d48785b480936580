/*
 * Sequence numbers carried in rr messages: the first min(8, request,
 * response size) bytes, little-endian. The client writes one into each
 * request, the server echoes it, and the client checks each response
 * answers the request it takes it for. Shared by tcp and udp rr.
 */
#ifndef NETSTAGE_SEQ_H
#define NETSTAGE_SEQ_H

#include <stddef.h>
#include <stdint.h>

static inline size_t seq_width(size_t request, size_t response)
{
	size_t n = request < response ? request : response;

	return n < 8 ? n : 8;
}

/* The part of seq that n bytes carry. */
static inline uint64_t seq_trunc(uint64_t seq, size_t n)
{
	return n >= 8 ? seq : seq & ((1ULL << (8 * n)) - 1);
}

static inline void seq_put(void *buf, size_t n, uint64_t seq)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seq >> (8 * i));
}

/*
 * Fold the sequence bytes among len bytes read at message offset off
 * into *seq (a message can arrive in pieces); off 0 starts afresh.
 */
static inline void seq_take(uint64_t *seq, size_t n, const void *buf,
			    size_t off, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	if (off == 0)
		*seq = 0;
	for (i = off; i < n && i < off + len; i++)
		*seq |= (uint64_t)p[i - off] << (8 * i);
}

/*
 * The whole sequence whose low n bytes are low, nearest to last (the
 * one before it from the same sender): right while fewer than half of
 * the 2^(8n) numbers between them went unseen.
 */
static inline uint64_t seq_unwrap(uint64_t last, uint64_t low, size_t n)
{
	uint64_t m, s;

	if (n >= 8)
		return low;
	m = 1ULL << (8 * n);
	s = (last & ~(m - 1)) | low;
	if (s + m / 2 < last)
		s += m;
	else if (s > last + m / 2 && s >= m)
		s -= m;
	return s;
}

#endif
