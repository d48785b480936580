#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/common.h"
#include "trace/bottomk.h"
#include "trace/rec.h"

/* Room past k for the highest kept bucket's records. */
static long capacity(long k)
{
	return k + k / 8 + 64;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/*
 * What is committed ahead, in huge pages: the default limit's store (26
 * MB) whole, and no more of a larger one (a limit of 10,000,000 would
 * be 2.6 GB before the first transaction). Past it, 4 KiB pages come
 * as records fill them.
 */
#define AHEAD_MAX (32UL << 20)

static size_t ahead(size_t bytes)
{
	return bytes < AHEAD_MAX ? bytes : AHEAD_MAX;
}

/*
 * The array never moves (a record kept costs no copy of the others).
 * Slots are reused in no order once buckets drop, so a take lands on a
 * random page of a store of tens of MB: in 2 MiB pages where the
 * kernel allows them, each take is a cache miss at most, not also a
 * page walk. Advice refused changes nothing but speed.
 */
static void reserve(struct bottomk *s, long k)
{
	size_t bytes = (size_t)capacity(k) * sizeof(*s->rec);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		log_err("out of memory: %ld trace records", k);
		abort();
	}
	madvise(p, ahead(bytes), MADV_HUGEPAGE);
	/* Faulted in a huge page at a time, a take would wait milliseconds. */
	madvise(p, ahead(bytes), MADV_POPULATE_WRITE);
	s->rec = p;
	s->next = xcalloc(capacity(k), sizeof(*s->next));
	s->k = k;
	s->cap = capacity(k);
}

void bottomk_reserve(struct bottomk *s, long k)
{
	if (k > 0 && !s->rec)
		reserve(s, k);
}

/* The highest bucket kept. */
static int top(const struct bottomk *s)
{
	return BK_BUCKETS - 1 - s->dropped;
}

/* The highest kept bucket goes: its slots are free for the next. */
static void drop_top(struct bottomk *s)
{
	int b = top(s);

	if (s->head[b]) {
		s->next[s->tail[b] - 1] = s->free;
		s->free = s->head[b];
	}
	s->live -= s->count[b];
	s->head[b] = s->tail[b] = s->count[b] = 0;
	s->dropped++;
}

/*
 * Full, the highest bucket holding more than the room past k (ties):
 * the slot of its highest record, the latest of equals, out of it if p
 * is lower; else 0.
 */
static uint32_t evict(struct bottomk *s, uint64_t p)
{
	int b = top(s);
	uint32_t i, prev = 0, max = s->head[b], before = 0;

	for (i = s->head[b]; i; prev = i, i = s->next[i - 1])
		if (s->rec[i - 1].prio > s->rec[max - 1].prio) {
			max = i;
			before = prev;
		}
	if (!max || p >= s->rec[max - 1].prio)
		return 0;
	if (before)
		s->next[before - 1] = s->next[max - 1];
	else
		s->head[b] = s->next[max - 1];
	if (s->tail[b] == max)
		s->tail[b] = before;
	s->count[b]--;
	s->live--;
	return max;
}

/* A free slot + 1, 0 if p cannot have one. */
static uint32_t slot_for(struct bottomk *s, uint64_t p)
{
	uint32_t i = s->free;

	if (i) {
		s->free = s->next[i - 1];
		return i;
	}
	if (s->used < s->cap)
		return ++s->used;
	return evict(s, p);
}

/*
 * Into the cache now, the slot the next take pops: its link and its
 * record would each be a miss then, in the client's wait when this is
 * a server. Always inlined: GCC 12 dropped the call of a static
 * function holding nothing but prefetches.
 */
static inline __attribute__((always_inline)) void
prefetch_next(const struct bottomk *s)
{
	const char *r;
	size_t off;

	if (!s->free)
		return;
	__builtin_prefetch(&s->next[s->free - 1]);
	r = (const char *)&s->rec[s->free - 1];
	for (off = 0; off < sizeof(*s->rec); off += 64)
		__builtin_prefetch(r + off, 1);
	__builtin_prefetch(r + sizeof(*s->rec) - 1, 1);
}

struct trace_rec *bottomk_take(struct bottomk *s, long k, uint64_t p)
{
	int b = bottomk_bucket(p);
	uint32_t i;

	if (k <= 0 || b > top(s))
		return NULL;
	if (!s->rec)
		reserve(s, k);
	i = slot_for(s, p);
	if (!i)
		return NULL;
	/* Newest first, so that the list is linked where it starts. */
	s->next[i - 1] = s->head[b];
	if (!s->head[b])
		s->tail[b] = i;
	s->head[b] = i;
	s->count[b]++;
	s->live++;
	s->rec[i - 1].prio = p;
	/* k below the highest bucket: none of its records can be wanted. */
	while (s->dropped < BK_BUCKETS - 1 &&
	       s->live - (long)s->count[top(s)] >= s->k)
		drop_top(s);
	prefetch_next(s);
	return b <= top(s) ? &s->rec[i - 1] : NULL;
}

static int by_prio_flow_seq(const void *pa, const void *pb)
{
	const struct trace_rec *a = pa, *b = pb;

	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	if (a->flow_id != b->flow_id)
		return a->flow_id < b->flow_id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct trace_rec *bottomk_finish(struct bottomk *s, long *n)
{
	struct trace_rec *out = NULL;
	long m = 0, below;
	uint32_t i;
	int b;

	if (s->live)
		out = xcalloc(s->live, sizeof(*out));
	for (b = 0; b <= top(s) && s->rec; b++)
		for (i = s->head[b]; i; i = s->next[i - 1])
			out[m++] = s->rec[i - 1];
	/*
	 * Those below the highest bucket are fewer than k: of its own,
	 * the lowest, the lower flows and numbers of equals.
	 */
	if (m > s->k) {
		below = m - s->count[top(s)];
		qsort(out + below, m - below, sizeof(*out), by_prio_flow_seq);
		m = s->k;
	}
	*n = m;
	bottomk_free(s);
	return out;
}

void bottomk_free(struct bottomk *s)
{
	if (s->rec)
		munmap(s->rec, (size_t)s->cap * sizeof(*s->rec));
	free(s->next);
	memset(s, 0, sizeof(*s));
}
