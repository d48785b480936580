/*
 * Log-linear latency histogram (HdrHistogram's layout, fixed size).
 *
 * Values are nanoseconds. Below 2 * HIST_SUB they are counted exactly;
 * above, each power of two is split into HIST_SUB equal buckets, so a
 * bucket is at most 1/HIST_SUB of its value wide and a reported
 * percentile (the bucket's midpoint) is within 1/(2 * HIST_SUB) = 0.4%
 * of the true one. Values beyond HIST_MAX_NS land in the last bucket;
 * min and max stay exact. Two histograms merge by adding counts.
 */
#ifndef NETSTAGE_HIST_H
#define NETSTAGE_HIST_H

#include <stdint.h>

#include "hist_layout.h"	/* the bucket layout, shared with BPF */

struct hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum;
	double sumsq;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_reset(struct hist *h);
void hist_add(struct hist *h, uint64_t ns);
/* n values of ns at once (a script's counted values). */
void hist_add_n(struct hist *h, uint64_t ns, uint64_t n);
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * Add counts by bucket (from BPF): min, max, mean and stddev then come
 * from the buckets' midpoints, exact to the bucket's width.
 */
void hist_add_buckets(struct hist *h, const uint32_t *bucket);

/* The range [lo, hi] a bucket covers (hist_index() gives a value's). */
void hist_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi);

double hist_mean(const struct hist *h);
double hist_stddev(const struct hist *h);
/*
 * Nearest-rank percentile (p in [0, 100]) in ns; 0 for an empty
 * histogram. p = 0 gives min, p = 100 gives max exactly.
 */
double hist_percentile(const struct hist *h, double p);

#endif
