/*
 * Which records a run keeps: each worker accounts its complete
 * transactions into a bounded store by priority (a hash that both ends
 * compute alike, so their samples join) and the longest apart; at the
 * end the workers' stores become one uniform sample and the slowest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "trace/keep.h"

/*
 * Not the port alone for observe: a connection's requests would all
 * tie, and the sample would be the connections whose port hashes
 * lowest, each whole. Offsets are taken mod 2^32, as BPF keeps them.
 * udp_rr: the client's port and its number of the request, which a
 * server's record carries too (udp_rr.c).
 */
uint64_t trace_rec_priority(enum ns_side side, uint32_t flow_id,
			    uint64_t seq, uint16_t port, int64_t off)
{
	uint64_t x;

	if (NS_IS_CRR(side))
		x = port;
	else if (off >= 0)
		x = (1ULL << 48) | ((uint64_t)port << 32) | (uint32_t)off;
	else if (NS_IS_UDP(side))
		x = (2ULL << 48) | ((uint64_t)port << 32) | (uint32_t)seq;
	else
		x = ((uint64_t)flow_id << 40) ^ seq;

	/* splitmix64's finaliser */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * The slowest kept have a heap of slots, the largest key first: the
 * record to give up when a better one comes.
 */
static void swap_slots(struct trace_slot *a, struct trace_slot *b)
{
	struct trace_slot t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(struct trace_slot *h, long n, long i)
{
	long c;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && h[c + 1].key > h[c].key)
			c++;
		if (h[i].key >= h[c].key)
			break;
		swap_slots(&h[i], &h[c]);
	}
}

static void sift_up(struct trace_slot *h, long i)
{
	for (; i > 0 && h[(i - 1) / 2].key < h[i].key; i = (i - 1) / 2)
		swap_slots(&h[i], &h[(i - 1) / 2]);
}

/*
 * Put rec among `max` records heaped by `key`, of which `*n` are there:
 * in a new place while there is room, else in that of the largest key
 * (the caller knows it is larger than rec's).
 */
static void heap_put(struct trace_rec *recs, struct trace_slot *h, long *n,
		     long max, const struct trace_rec *rec, uint64_t key)
{
	long at;

	if (*n < max) {
		at = *n;
		h[*n] = (struct trace_slot){ key, at };
		sift_up(h, (*n)++);
	} else {
		at = h[0].at;
		h[0].key = key;
		sift_down(h, *n, 0);
	}
	recs[at] = *rec;
}

/* Keep rec among the max_slow longest so far (the shortest goes first). */
static void keep_slow(struct trace_worker *tw, const struct trace_rec *rec)
{
	if (!tw->slow) {
		tw->slow = xcalloc(tw->max_slow, sizeof(*tw->slow));
		tw->sheap = xcalloc(tw->max_slow, sizeof(*tw->sheap));
	}
	heap_put(tw->slow, tw->sheap, &tw->nslow, tw->max_slow, rec,
		 ~rec->span);
}

/* The record of a transaction merged as m, of priority p. */
static void fill_rec(struct trace_rec *rec, const struct trace_worker *tw,
		     const struct merged *m, uint32_t flow_id, uint64_t seq,
		     uint16_t port, uint64_t p)
{
	memset(rec, 0, sizeof(*rec));
	rec->flow_id = flow_id;
	rec->worker = tw->id;
	rec->seq = seq;
	rec->port = port;
	rec->next_port = tw->next_port;
	memcpy(rec->b, m->b, sizeof(rec->b));
	rec->sw_tx = m->sw_tx;
	rec->sw_rx = m->sw_rx;
	rec->prio = p;
	rec->span = m->total;
	rec->held_pid = m->held_pid;
	rec->held_cpu = m->held_cpu;
	memcpy(rec->held_comm, m->held_comm, sizeof(rec->held_comm));
}

struct trace_rec *trace_worker_account(struct trace_worker *tw,
				       enum merge_result r,
				       const struct merged *m,
				       uint32_t flow_id, uint64_t seq,
				       uint16_t port, int64_t off)
{
	int i, n = stage_count(tw->side), slow;
	struct trace_rec rec, *kept = NULL;
	uint64_t p;

	if (r != MERGE_OK)
		tw->bad_at[m->bad]++;
	if (r == MERGE_MISSING) {
		tw->missing++;
		return NULL;
	}
	if (r == MERGE_DISORDER) {
		uint64_t held = merge_held_back_ns(tw->side, r, m);

		tw->disorder++;
		if (held)
			hist_add(&tw->held, held);
		return NULL;
	}
	tw->complete++;
	for (i = 0; i < n; i++)
		hist_add(&tw->stage[i], m->stage[i]);
	/* Most transactions of a long run are passed over: decide first. */
	p = trace_rec_priority(tw->side, flow_id, seq, port, off);
	tw->offered++;
	slow = tw->max_slow &&
	       (tw->nslow < tw->max_slow || ~m->total < tw->sheap[0].key);
	if (bottomk_wants(&tw->keep, p))
		kept = bottomk_take(&tw->keep, tw->max_recs, p);
	if (!kept && !slow)
		return NULL;
	/* Built where it is kept: no copy of a sampled one. */
	fill_rec(kept ? kept : &rec, tw, m, flow_id, seq, port, p);
	if (slow)
		keep_slow(tw, kept ? kept : &rec);
	return kept;
}

static int by_flow_seq(const void *pa, const void *pb)
{
	const struct trace_rec *a = pa, *b = pb;

	if (a->flow_id != b->flow_id)
		return a->flow_id < b->flow_id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_prio(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* tw's records of priority up to `last`. */
static void trim(struct trace_worker *tw, uint64_t last)
{
	long i, k = 0;

	for (i = 0; i < tw->nrecs; i++)
		if (tw->recs[i].prio <= last)
			tw->recs[k++] = tw->recs[i];
	tw->nrecs = k;
}

static int by_span_desc(const void *pa, const void *pb)
{
	const struct trace_rec *a = *(struct trace_rec *const *)pa;
	const struct trace_rec *b = *(struct trace_rec *const *)pb;

	return a->span > b->span ? -1 : a->span < b->span;
}

/*
 * The run's `want` slowest, over every worker's own, join their
 * workers' records unless the sample has them already (priority up to
 * `last`).
 */
static void add_slowest(struct trace_worker **tw, int n, long want,
			uint64_t last)
{
	struct trace_rec **all;
	long total = 0, k = 0, j;
	int i;

	for (i = 0; i < n; i++)
		total += tw[i] ? tw[i]->nslow : 0;
	all = xcalloc(total ? total : 1, sizeof(*all));
	for (i = 0; i < n; i++)
		for (j = 0; tw[i] && j < tw[i]->nslow; j++)
			all[k++] = &tw[i]->slow[j];
	qsort(all, total, sizeof(*all), by_span_desc);
	for (j = 0; j < total && j < want; j++) {
		struct trace_worker *w = tw[all[j]->worker];

		if (all[j]->prio <= last)
			continue;
		if (w->nrecs == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 64;
			w->recs = xrealloc(w->recs, w->cap, sizeof(*w->recs));
		}
		w->recs[w->nrecs] = *all[j];
		w->recs[w->nrecs++].slowest = 1;
	}
	free(all);
}

/* The worker's records out of its store, if it kept any there. */
static void finish(struct trace_worker *tw)
{
	if (!tw->keep.rec)
		return;
	free(tw->recs);
	tw->recs = bottomk_finish(&tw->keep, &tw->nrecs);
	tw->cap = tw->nrecs;
}

uint64_t trace_keep(struct trace_worker **tw, int n, long max)
{
	uint64_t all = 0, last = UINT64_MAX, *p;
	long total = 0, k = 0, j, slowest = 0;
	int i;

	for (i = 0; i < n; i++)
		if (tw[i]) {
			finish(tw[i]);
			all += tw[i]->offered;
			total += tw[i]->nrecs;
		}
	/*
	 * The run's max lowest priorities, over every worker's own. Past
	 * `max` offered in all, the slowest are kept apart whatever the
	 * workers hold (one worker's store holds max exactly).
	 */
	if (all > (uint64_t)max && max > 0) {
		slowest = max * TRACE_SLOWEST_PCT / 100;
		p = xcalloc(total, sizeof(*p));
		for (i = 0; i < n; i++)
			for (j = 0; tw[i] && j < tw[i]->nrecs; j++)
				p[k++] = tw[i]->recs[j].prio;
		qsort(p, total, sizeof(*p), by_prio);
		last = max - slowest > 0 ? p[max - slowest - 1] : 0;
		free(p);
	} else if (max <= 0) {
		last = 0;
	}
	for (i = 0; i < n; i++)
		if (tw[i])
			trim(tw[i], last);
	if (slowest)
		add_slowest(tw, n, slowest, last);
	for (i = 0; i < n; i++)
		if (tw[i] && tw[i]->nrecs)
			qsort(tw[i]->recs, tw[i]->nrecs, sizeof(*tw[i]->recs),
			      by_flow_seq);
	return all;
}
