#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "stats/interval.h"

void intervals_init(struct intervals *iv, int nworkers, int is_rr,
		    int has_latency, int quiet, double interval_s,
		    const char *label)
{
	int i;

	memset(iv, 0, sizeof(*iv));
	pthread_mutex_init(&iv->mu, NULL);
	iv->nworkers = nworkers;
	iv->is_rr = is_rr;
	iv->has_latency = has_latency;
	iv->quiet = quiet;
	iv->interval_s = interval_s;
	iv->label = label;
	for (i = 0; i < INTERVAL_SLOTS; i++)
		iv->slot[i].k = -1;
}

static void keep(struct intervals *iv, const struct interval_sum *sum)
{
	if (iv->no_history)
		return;
	if (iv->nsums == iv->cap) {
		iv->cap = iv->cap ? 2 * iv->cap : 64;
		iv->sums = xrealloc(iv->sums, iv->cap, sizeof(*iv->sums));
	}
	iv->sums[iv->nsums++] = *sum;
}

static void summarise(struct intervals *iv, struct interval_slot *s)
{
	struct interval_sum sum = {
		.t_end = (s->k + 1) * iv->interval_s,
		.transactions = s->transactions,
		.bytes = s->bytes,
		.rate = s->transactions / iv->interval_s,
		.mbps = s->bytes * 8.0 / 1e6 / iv->interval_s,
	};

	if (iv->has_latency) {
		sum.p50_us = hist_percentile(&s->lat, 50) / 1e3;
		sum.p90_us = hist_percentile(&s->lat, 90) / 1e3;
		sum.p99_us = hist_percentile(&s->lat, 99) / 1e3;
	}
	keep(iv, &sum);
	if (iv->quiet)
		return;
	if (iv->has_latency)
		fprintf(stderr,
			"netstage %s: [%7.1f s] %10.0f trans/s  p50 %8.1f us  p99 %8.1f us\n",
			iv->label, sum.t_end, sum.rate, sum.p50_us, sum.p99_us);
	else if (iv->is_rr)
		fprintf(stderr, "netstage %s: [%7.1f s] %10.0f trans/s\n",
			iv->label, sum.t_end, sum.rate);
	else
		fprintf(stderr, "netstage %s: [%7.1f s] %10.1f Mbps\n",
			iv->label, sum.t_end, sum.mbps);
}

void intervals_report(struct intervals *iv, long k, uint64_t transactions,
		      uint64_t bytes, const struct hist *lat)
{
	struct interval_slot *s = &iv->slot[k % INTERVAL_SLOTS];

	pthread_mutex_lock(&iv->mu);
	if (s->k != k) {
		/* A slot INTERVAL_SLOTS behind that never completed is dropped. */
		s->k = k;
		s->reported = 0;
		s->transactions = s->bytes = 0;
		hist_reset(&s->lat);
	}
	s->transactions += transactions;
	s->bytes += bytes;
	if (lat)
		hist_merge(&s->lat, lat);
	if (++s->reported == iv->nworkers)
		summarise(iv, s);
	pthread_mutex_unlock(&iv->mu);
}

void intervals_free(struct intervals *iv)
{
	pthread_mutex_destroy(&iv->mu);
	free(iv->sums);
	iv->sums = NULL;
}
