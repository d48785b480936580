/*
 * What timing a transaction costs, measured inside the run itself:
 * with --trace-sample or --trace-control, the transactions BPF leaves
 * untimed are a control group running beside the timed ones, on the
 * same machine at the same moments. The client's latency of each goes
 * into one of two histograms per tenth of the run; the cost is the
 * timed p50 less the untimed p50, with a 95% interval from the tenths'
 * own differences (Student's t over those that have both). Pure: tests/unit/t_inrun.c.
 */
#ifndef NETSTAGE_TRACE_INRUN_H
#define NETSTAGE_TRACE_INRUN_H

#include <stdint.h>

#include "stats/hist.h"

#define INRUN_BLOCKS 10

struct inrun {
	uint64_t t0, span_ns;	/* the run's start and length */
	struct hist all[2];	/* [timed]: the run's latencies */
	struct hist block[INRUN_BLOCKS][2];
};

/* An empty one for a run from t0 of span_ns. */
void inrun_init(struct inrun *ir, uint64_t t0, uint64_t span_ns);
/* A transaction done at `done` took lat_ns; timed: BPF timed it. */
void inrun_add(struct inrun *ir, uint64_t done, uint64_t lat_ns, int timed);
void inrun_merge(struct inrun *dst, const struct inrun *src);

struct inrun_cost {
	double p50_ns;		/* timed p50 - untimed p50, the whole run */
	double lo_ns, hi_ns;	/* its 95% interval */
	int blocks;		/* tenths with both groups, the interval's */
	uint64_t timed, untimed;
};

/* 0, or -1: fewer than two tenths had both groups (no interval). */
int inrun_cost(const struct inrun *ir, struct inrun_cost *c);

#endif
