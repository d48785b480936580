#include <stdlib.h>

#include "core/common.h"
#include "trace/collect.h"
#include "trace/merge.h"
#include "trace/retrans.h"

/*
 * One message a retransmission touched, or one record (at >= 0), in
 * one order: by what names the transaction, then time.
 */
struct named {
	uint64_t key, seq, t;
	long at;		/* the record's index, or -1: a retransmission */
};

static int by_name_time(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* A record beginning at the very time comes first: it is its. */
	return (a->at < 0) - (b->at < 0);
}

static int of_side(const struct ns_retrans *e, enum ns_side side)
{
	return e->side == NS_BPF_SIDE(side);
}

/* What names a side's transactions besides their number. */
static uint64_t key_of(enum ns_side side, uint32_t flow_id, uint16_t port)
{
	return NS_IS_CRR(side) || NS_IS_OBS(side) ? (1ULL << 32) | port
						   : flow_id;
}

/* The log's messages of side, appended to v; how many. */
static long expand(const struct ns_retrans *log, uint32_t n,
		   enum ns_side side, int by_socket, struct named *v)
{
	long k = 0;
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		if (!of_side(&log[i], side))
			continue;
		for (j = 0; j < log[i].n; j++)
			v[k++] = (struct named){
				by_socket ? log[i].sk :
				key_of(side, log[i].flow_id, log[i].port),
				log[i].first + j, log[i].t, -1 };
	}
	return k;
}

static long messages(const struct ns_retrans *log, uint32_t n,
		     enum ns_side side)
{
	long k = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		k += of_side(&log[i], side) ? log[i].n : 0;
	return k;
}

uint64_t retrans_transactions(const struct ns_retrans *log, uint32_t n,
			      enum ns_side side)
{
	long k = messages(log, n, side), i;
	struct named *v = xcalloc(k ? k : 1, sizeof(*v));
	uint64_t count = 0;

	k = expand(log, n, side, 1, v);
	qsort(v, k, sizeof(*v), by_name_time);
	for (i = 0; i < k; i++)
		count += !i || v[i].key != v[i - 1].key ||
			 v[i].seq != v[i - 1].seq;
	free(v);
	return count;
}

long retrans_mark(struct trace_rec *recs, long nrecs, enum ns_side side,
		  const struct ns_retrans *log, uint32_t n)
{
	long k = messages(log, n, side), i, cur = -1, marked = 0;
	enum ns_boundary start = stage_defs(side)[0].from;
	struct named *v;

	if (!k)
		return 0;
	v = xcalloc(k + nrecs, sizeof(*v));
	k = expand(log, n, side, 0, v);
	for (i = 0; i < nrecs; i++)
		v[k++] = (struct named){
			key_of(side, recs[i].flow_id, recs[i].port),
			recs[i].seq, recs[i].b[start], i };
	qsort(v, k, sizeof(*v), by_name_time);
	for (i = 0; i < k; i++) {
		if (v[i].at >= 0) {
			cur = i;
			continue;
		}
		if (cur < 0 || v[cur].key != v[i].key ||
		    v[cur].seq != v[i].seq)
			continue;
		/* In time order: the first one stamps. */
		if (!recs[v[cur].at].b[NS_B_RETRANS]) {
			recs[v[cur].at].b[NS_B_RETRANS] = v[i].t;
			marked++;
		}
	}
	free(v);
	return marked;
}
