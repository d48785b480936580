/*
 * What tracing costs, stated by every traced run: over one interval of
 * the test, the run time of the BPF programs (kernel.bpf_stats, on for
 * that interval only: it adds two clock reads to every program run),
 * the time the workers spend reading and merging records (two clock
 * reads per transaction, that interval only), and entering the
 * programs, which bpf_stats does not see: the program runs per
 * transaction times the cost of entering one, calibrated when the
 * tracer opens (tracer_entry_ns()). All per transaction of the interval.
 */
#ifndef NETSTAGE_TRACE_COST_H
#define NETSTAGE_TRACE_COST_H

#include <stdint.h>

#include "../kv.h"

struct tracer;

struct trace_cost {
	struct tracer *t;
	long interval;		/* the interval measured (0-based) */
	int stats_fd;		/* bpf_stats stay on while it is open */
	uint64_t run_ns, runs;	/* at the start, then the interval's */
	uint64_t transactions;	/* in the interval, this side */
	int timing;		/* workers time their merges now */
	int done;
	const char *error;	/* why there is no figure */
};

/*
 * Measure interval `interval` of t's run (the second, if the test has
 * two or more; the first otherwise). Call before the workers start.
 */
void trace_cost_init(struct trace_cost *c, struct tracer *t,
		     long nintervals);
/* Interval k has ended with n transactions (intervals.h's callback). */
void trace_cost_interval(struct trace_cost *c, long k, uint64_t n);
/* Do workers time their merges now? Read once per transaction. */
static inline int trace_cost_timing(const struct trace_cost *c)
{
	return __atomic_load_n(&c->timing, __ATOMIC_RELAXED);
}

/*
 * The trace_cost_* keys; user_ns: the workers' merge time per
 * transaction of the interval (-1: none taken).
 */
void trace_cost_kv(const struct trace_cost *c, double user_ns,
		   struct kv_list *out);
/* The key names, for -o. */
void trace_cost_kv_names(struct kv_list *out);
void trace_cost_free(struct trace_cost *c);

#endif
