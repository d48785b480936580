/*
 * The tail explained, from the kept records (tail.h): a record's
 * stages are consecutive, so their durations add up to its latency
 * (span) and the shares to 1.
 */
#include <math.h>
#include <stdlib.h>

#include "core/common.h"
#include "trace/merge.h"
#include "trace/tail.h"

const char *const tail_names[TAIL_QUANTILES] = { "p99", "p99.9" };
static const double tail_q[TAIL_QUANTILES] = { 0.99, 0.999 };
/* Records a quantile needs: 100 for 1 above the p99. */
static const long tail_min[TAIL_QUANTILES] = { 100, 1000 };

static int by_value(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The uniform sample's spans, sorted; how many. */
static long spans(struct trace_worker *const *tw, int n, uint64_t **out)
{
	long k = 0, r, cap = 0;
	int i;

	for (i = 0; i < n; i++)
		cap += tw[i] ? tw[i]->nrecs : 0;
	*out = xcalloc(cap ? cap : 1, sizeof(**out));
	for (i = 0; i < n; i++)
		for (r = 0; tw[i] && r < tw[i]->nrecs; r++)
			if (!tw[i]->recs[r].slowest)
				(*out)[k++] = tw[i]->recs[r].span;
	qsort(*out, k, sizeof(**out), by_value);
	return k;
}

/* Part t: the records slower than `above`, stage by stage. */
static void part(struct tail_part *t, enum ns_side side,
		 const struct hist *stage, struct trace_worker *const *tw,
		 int n)
{
	const struct stage_def *d = stage_defs(side);
	int ns = stage_count(side), i, j;
	double sum[NS_MAX_STAGES] = { 0 }, all = 0;
	long r;

	t->n = 0;
	for (i = 0; i < n; i++)
		for (r = 0; tw[i] && r < tw[i]->nrecs; r++) {
			const struct trace_rec *x = &tw[i]->recs[r];

			if (x->slowest || (double)x->span <= t->above_ns)
				continue;
			t->n++;
			all += (double)x->span;
			for (j = 0; j < ns; j++)
				sum[j] += (double)(x->b[d[j].to] -
						   x->b[d[j].from]);
		}
	for (j = 0; t->n && j < ns; j++) {
		t->share[j] = all > 0 ? sum[j] / all : 0;
		t->excess_ns[j] = sum[j] / (double)t->n -
				  hist_percentile(&stage[j], 50);
	}
}

void tail_explain(struct tail_part part_of[TAIL_QUANTILES], enum ns_side side,
		  const struct hist *stage, struct trace_worker *const *tw,
		  int n)
{
	uint64_t *v;
	long k = spans(tw, n, &v), at;
	int q;

	for (q = 0; q < TAIL_QUANTILES; q++) {
		struct tail_part *t = &part_of[q];

		t->n = 0;
		if (k < tail_min[q])
			continue;
		/* Nearest rank, as the histograms' percentiles. */
		at = (long)ceil(tail_q[q] * (double)k) - 1;
		t->above_ns = (double)v[at];
		part(t, side, stage, tw, n);
	}
	free(v);
}

int tail_top(const struct tail_part *t, enum ns_side side)
{
	int j, top = 0;

	for (j = 1; j < stage_count(side); j++)
		if (t->share[j] > t->share[top])
			top = j;
	return top;
}

void tail_kv(const struct tail_part part[TAIL_QUANTILES], enum ns_side side,
	     struct kv_list *out)
{
	const struct stage_def *d = stage_defs(side);
	char key[96];
	int q, j;

	for (q = 0; q < TAIL_QUANTILES; q++) {
		const struct tail_part *t = &part[q];

		if (!t->n)
			continue;
		snprintf(key, sizeof(key), "tail_%s_count", tail_names[q]);
		kv_uint(out, key, t->n);
		snprintf(key, sizeof(key), "tail_%s_above_us", tail_names[q]);
		kv_num(out, key, t->above_ns / 1e3, 3);
		snprintf(key, sizeof(key), "tail_%s_top", tail_names[q]);
		kv_str(out, key, d[tail_top(t, side)].name);
		for (j = 0; j < stage_count(side); j++) {
			snprintf(key, sizeof(key), "tail_%s_%s_share",
				 tail_names[q], d[j].name);
			kv_num(out, key, t->share[j], 4);
			snprintf(key, sizeof(key), "tail_%s_%s_excess_us",
				 tail_names[q], d[j].name);
			kv_num(out, key, t->excess_ns[j] / 1e3, 3);
		}
	}
}

void tail_line(const struct tail_part *t, enum ns_side side, FILE *f)
{
	const struct stage_def *d = stage_defs(side);
	int used[NS_MAX_STAGES] = { 0 }, i, j, best;

	if (!t->n)
		return;
	fprintf(f, "  the tail, the %llu above p99 (%.1f us):",
		(unsigned long long)t->n, t->above_ns / 1e3);
	for (i = 0; i < 3 && i < stage_count(side); i++) {
		best = -1;
		for (j = 0; j < stage_count(side); j++)
			if (!used[j] && (best < 0 ||
					 t->share[j] > t->share[best]))
				best = j;
		used[best] = 1;
		fprintf(f, "%s %s %.0f%% (%+.1f us over its p50)", i ? "," : "",
			d[best].name, 100 * t->share[best],
			t->excess_ns[best] / 1e3);
	}
	fputc('\n', f);
}
