/*
 * Bottom-k sampling of trace records: of all the records offered, keep
 * those of the k lowest priorities (a uniform sample of a run of any
 * length, priorities being hashes) at a constant cost a record, while
 * the benchmark runs: no heap to keep in order, no record moved once
 * stored, no memory grown by copying.
 *
 * Priorities fall in buckets of a log-linear scale, 16 to a power of
 * two. Each bucket lists its records; a bucket is dropped, its slots
 * free for the next records, as soon as the records below it number k,
 * for then none of its own can be among the k lowest. The store holds
 * the k lowest and about one bucket more (a sixteenth of k, uniform
 * priorities), and bottomk_finish() cuts it to exactly k.
 *
 * A zeroed struct bottomk is an empty store.
 */
#ifndef NETSTAGE_TRACE_BOTTOMK_H
#define NETSTAGE_TRACE_BOTTOMK_H

#include <stdint.h>

struct trace_rec;

#define BK_BUCKETS 976		/* 16 below 16, then 16 a power of two */

struct bottomk {
	struct trace_rec *rec;	/* cap slots, reserved ahead or by a take */
	uint32_t *next;		/* a slot's next in its bucket or free list, + 1 */
	long k, cap;
	long used;		/* slots ever taken: rec[0, used) */
	long live;		/* records in the buckets kept */
	uint32_t free;		/* first free slot + 1, 0: none */
	int dropped;		/* the highest buckets, dropped */
	uint32_t head[BK_BUCKETS];	/* each bucket's first slot + 1 */
	uint32_t tail[BK_BUCKETS];	/* and its last: a drop is O(1) */
	uint32_t count[BK_BUCKETS];
};

/* The bucket of priority p: monotonic in p. */
static inline int bottomk_bucket(uint64_t p)
{
	int e;

	if (p < 16)
		return (int)p;
	e = 63 - __builtin_clzll(p);
	return 16 * (e - 3) + (int)((p >> (e - 4)) & 15);
}

/* Could a record of priority p be kept now? Cheap: ask before building it. */
static inline int bottomk_wants(const struct bottomk *s, uint64_t p)
{
	return bottomk_bucket(p) < BK_BUCKETS - s->dropped;
}

/*
 * Reserve the store for k records (capacity about 1.13 k records of
 * struct trace_rec) and commit up to 32 MiB of it now, before the
 * benchmark runs. Optional: the first take does it otherwise, in that
 * transaction's time.
 */
void bottomk_reserve(struct bottomk *s, long k);
/*
 * A slot for a record of priority p, one of the k lowest so far, or
 * NULL (k is the first take's). Its prio is p; the caller fills the
 * rest before the next take.
 * A tie with the highest kept when the store is full is not taken: the
 * earlier stays.
 */
struct trace_rec *bottomk_take(struct bottomk *s, long k, uint64_t p);
/*
 * The run is over: the k lowest, of equal priorities those of lower
 * flow and sequence number, copied to an array of their own (*n of
 * them, in no order, NULL if none). The store is empty after.
 */
struct trace_rec *bottomk_finish(struct bottomk *s, long *n);
void bottomk_free(struct bottomk *s);

#endif
