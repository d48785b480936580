#include <math.h>
#include <string.h>

#include "stats/hist.h"

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi)
{
	unsigned int octave, shift;
	uint64_t mant;

	if (idx < 2 * HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	octave = (idx - 2 * HIST_SUB) / HIST_SUB;
	mant = HIST_SUB + (idx - 2 * HIST_SUB) % HIST_SUB;
	shift = octave + 1;
	*lo = mant << shift;
	*hi = ((mant + 1) << shift) - 1;
}

void hist_add_n(struct hist *h, uint64_t ns, uint64_t n)
{
	double v = (double)ns;

	if (!n)
		return;
	h->bucket[hist_index(ns)] += n;
	h->count += n;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->sum += v * (double)n;
	h->sumsq += v * v * (double)n;
}

void hist_add(struct hist *h, uint64_t ns)
{
	hist_add_n(h, ns, 1);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned int i;

	if (!src->count)
		return;
	for (i = 0; i < HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

void hist_add_buckets(struct hist *h, const uint32_t *bucket)
{
	uint64_t lo, hi;
	unsigned int i;
	double mid;

	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!bucket[i])
			continue;
		hist_bucket_range(i, &lo, &hi);
		mid = ((double)lo + (double)hi) / 2;
		h->bucket[i] += bucket[i];
		h->count += bucket[i];
		h->sum += mid * bucket[i];
		h->sumsq += mid * mid * bucket[i];
		if (lo < h->min)
			h->min = lo;
		if (hi > h->max)
			h->max = hi;
	}
}

double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / h->count : 0.0;
}

double hist_stddev(const struct hist *h)
{
	double mean, var;

	if (h->count < 2)
		return 0.0;
	mean = h->sum / h->count;
	var = h->sumsq / h->count - mean * mean;
	return var > 0 ? sqrt(var) : 0.0;
}

static double clamp(double v, const struct hist *h)
{
	if (v < (double)h->min)
		return h->min;
	if (v > (double)h->max)
		return h->max;
	return v;
}

double hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi;
	unsigned int i;

	if (!h->count)
		return 0.0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return h->max;
	hist_bucket_range(i, &lo, &hi);
	return clamp(((double)lo + (double)hi) / 2.0, h);
}
