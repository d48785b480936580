/*
 * What tracing costs, stated by every traced run. For a short window of
 * the test (from a quarter of the way in, a tenth of it, at most
 * 200 ms) a thread of its own switches on kernel.bpf_stats (it adds two
 * clock reads to every program run, so only then), has BPF count the
 * transactions each end completes and the workers time their reading
 * and merging of records (two clock reads a transaction), then switches
 * all that off. Per transaction of the window: the programs' run time
 * for this run's own packets, sockets and threads (a program's time a
 * run times its own runs: other processes' traffic runs it too), less
 * what bpf_stats adds to it; entering the programs, which
 * bpf_stats does not see, as runs times the cost of one entry
 * (calibrated when the tracer opens); and the merges.
 */
#ifndef NETSTAGE_TRACE_COST_H
#define NETSTAGE_TRACE_COST_H

#include <pthread.h>
#include <stdint.h>

#include "core/kv.h"

struct tracer;

struct trace_cost {
	struct tracer *t;
	pthread_t thread;
	int inited;		/* mu and cv are set up */
	int started;		/* the thread runs: join it */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;		/* the test ended: measure no more */
	uint64_t delay_ns, window_ns;
	int timing;		/* workers time their merges now */
	/*
	 * the window's, once done: the run time and runs charged to this
	 * run (its own packets, sockets, threads), the runs left out
	 */
	uint64_t run_ns, runs, foreign_runs, transactions;
	int done;
	const char *error;	/* why there is no figure */
};

/* Start measuring t over a test of test_s seconds, from now. */
void trace_cost_start(struct trace_cost *c, struct tracer *t, double test_s);
/* The test has ended: stop waiting, finish or give up the window. Idempotent. */
void trace_cost_finish(struct trace_cost *c);
/* Do workers time their merges now? Read once per transaction. */
static inline int trace_cost_timing(const struct trace_cost *c)
{
	return __atomic_load_n(&c->timing, __ATOMIC_RELAXED);
}

/* A transaction's cost by part, once measured (ns; runs: program runs). */
struct trace_cost_parts {
	double bpf_ns, entry_ns, user_ns, total_ns, runs;
	int has_entry;		/* the entry's cost was calibrated */
};
/* The parts, user_ns the merges' (-1: none timed); -1 if not measured. */
int trace_cost_parts(const struct trace_cost *c, double user_ns,
		     struct trace_cost_parts *p);
/*
 * The trace_cost_* keys; user_ns: the workers' merge time per
 * transaction of the window (-1: none taken: 0 is printed).
 */
void trace_cost_kv(const struct trace_cost *c, double user_ns,
		   struct kv_list *out);
/* The key names, for -o. */
void trace_cost_kv_names(struct kv_list *out);

#endif
