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

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Values up to 2^39 ns (549 s): past the 100 s the contract promises. */
#define HIST_TOP_BIT 38
#define HIST_BUCKETS (2 * HIST_SUB + (HIST_TOP_BIT - HIST_SUB_BITS) * HIST_SUB)
#define HIST_MAX_NS ((1ULL << (HIST_TOP_BIT + 1)) - 1)

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
void hist_merge(struct hist *dst, const struct hist *src);

/* Bucket index of a value, and the range [lo, hi] a bucket covers. */
unsigned int hist_index(uint64_t ns);
void hist_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi);

double hist_mean(const struct hist *h);
double hist_stddev(const struct hist *h);
/*
 * Nearest-rank percentile (p in [0, 100]) in ns; 0 for an empty
 * histogram. p = 0 gives min, p = 100 gives max exactly.
 */
double hist_percentile(const struct hist *h, double p);

#endif
