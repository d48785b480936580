#include <math.h>
#include <string.h>

#include "hist.h"

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned int hist_index(uint64_t ns)
{
	unsigned int msb, shift;

	if (ns > HIST_MAX_NS)
		ns = HIST_MAX_NS;
	if (ns < 2 * HIST_SUB)
		return ns;
	msb = 63 - __builtin_clzll(ns);
	shift = msb - HIST_SUB_BITS;
	/* (ns >> shift) is in [HIST_SUB, 2 * HIST_SUB). */
	return 2 * HIST_SUB + (msb - HIST_SUB_BITS - 1) * HIST_SUB +
	       (unsigned int)((ns >> shift) - HIST_SUB);
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

void hist_add(struct hist *h, uint64_t ns)
{
	double v = (double)ns;

	h->bucket[hist_index(ns)]++;
	h->count++;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->sum += v;
	h->sumsq += v * v;
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
