/*
 * Which stages make the tail: of a side's kept records, those slower
 * than the p99 (and the p99.9, with 1,000 records or more), each
 * stage's share of their latency and how far its mean among them
 * exceeds its own p50. The uniform sample only: the slowest kept
 * beside it would count the tail twice. A side's stages are
 * stage_defs(side) of trace/merge.h; the summary keeps the parts.
 */
#ifndef NETSTAGE_TRACE_TAIL_H
#define NETSTAGE_TRACE_TAIL_H

#include <stdint.h>
#include <stdio.h>

#include "core/kv.h"
#include "stats/hist.h"
#include "trace/collect.h"

#define TAIL_QUANTILES 2	/* p99; p99.9 with 1,000 records or more */
struct tail_part {
	uint64_t n;			/* 0: not made (too few records) */
	double above_ns;		/* the quantile they are slower than */
	double share[NS_MAX_STAGES];	/* of their summed latency */
	double excess_ns[NS_MAX_STAGES];	/* mean among them - p50 */
};

/* The quantiles of the parts, as keys name them ("p99", "p99.9"). */
extern const char *const tail_names[TAIL_QUANTILES];

/*
 * The parts of side from the workers' kept records; stage[j]: stage
 * j's histogram of every transaction, whose p50 the excess is over.
 */
void tail_explain(struct tail_part part[TAIL_QUANTILES], enum ns_side side,
		  const struct hist *stage, struct trace_worker *const *tw,
		  int n);
/* The stage with the largest share. */
int tail_top(const struct tail_part *t, enum ns_side side);
/* tail_p99_count, _above_us, _top, _STAGE_share, _STAGE_excess_us. */
void tail_kv(const struct tail_part part[TAIL_QUANTILES], enum ns_side side,
	     struct kv_list *out);
/* Under the stage table: the p99 tail's three largest stages. */
void tail_line(const struct tail_part *t, enum ns_side side, FILE *f);

#endif
