/*
 * What an observer has seen so far, in the OpenMetrics text format, for
 * Prometheus to scrape (`observe --listen`): each stage's latency as a
 * histogram (cumulative buckets, _sum and _count, in seconds), the
 * transactions, the incomplete ones, the events lost in BPF, and what
 * tracing costs a transaction, labelled by the observed port (and the
 * stage, and the part of the cost). Everything counts from observe's
 * start, as Prometheus counters do.
 */
#ifndef NETSTAGE_METRICS_H
#define NETSTAGE_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "stats/hist.h"
#include "stages.h"

/* Bucket bounds: ten a decade, 100 ns to 10 s, then +Inf. */
#define METRICS_BUCKETS 81
double metrics_le(int i);

enum metrics_cost { MC_BPF, MC_ENTRY, MC_USER, MC_TOTAL, MC_PARTS };

struct metrics_view {
	int port;
	enum ns_side side;
	const struct hist *stage;	/* stage_count(side) of them */
	uint64_t transactions, incomplete, lost;
	int has_cost;			/* the cost was measured */
	double cost_ns[MC_PARTS];	/* per transaction */
};

void metrics_write(FILE *f, const struct metrics_view *v);

#endif
