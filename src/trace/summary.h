/*
 * A side's tracing results: stage histograms gathered from its workers,
 * the trace_* and stage_<name>_<stat> keys, the table on stderr and the
 * --trace-records CSV.
 */
#ifndef NETSTAGE_TRACE_SUMMARY_H
#define NETSTAGE_TRACE_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "stats/hist.h"
#include "core/kv.h"
#include "trace/collect.h"
#include "trace/cost.h"
#include "trace/merge.h"
#include "trace/tail.h"

/* The slowest kept transactions shown under the table and in JSON. */
#define TRACE_TAIL 5

struct tracer;

struct trace_summary {
	enum ns_side side;
	int hist_mode;		/* kernel stages from BPF's histograms */
	uint32_t sample;	/* one transaction in this many was timed */
	uint32_t control;	/* --trace-control */
	uint64_t untimed;	/* left untimed by the two */
	const struct trace_cost *cost;	/* what tracing cost */
	double user_ns;		/* the workers' merge time per transaction */
	uint64_t complete;
	uint64_t incomplete;	/* missing + disorder + norecord */
	uint64_t missing, disorder, norecord;
	uint64_t lost;		/* ring full in BPF */
	uint64_t records_kept;	/* of records_offered: all, or a sample */
	uint64_t records_slowest;	/* of them kept for being slowest */
	uint64_t records_offered;
	uint64_t bad_at[NS_B_COUNT];
	/*
	 * TCP resent bytes of this side (counted: has_retrans): segments,
	 * and the transactions they touched, of the first NS_RETRANS_LOG
	 * logged (retrans_partial: more were).
	 */
	int has_retrans, retrans_partial;
	uint64_t retransmits, retransmitted;
	/*
	 * The log's entries these counts read: records are marked from
	 * them alone, though BPF may log more as observe drains.
	 */
	uint32_t retrans_logged;
	/*
	 * --trace-sample or --trace-control, a client: timed p50 less
	 * untimed p50, in the run (src/trace/inrun.h); has_inrun 1 with its
	 * interval, 2 without.
	 */
	int has_inrun;
	struct inrun_cost inrun;
	struct hist held;	/* responses held back: how long, from workers */
	struct hist stage[NS_MAX_STAGES];
	struct trace_rec tail[TRACE_TAIL];	/* slowest first */
	int ntail;
	/* The tail explained (trace/tail.h): above p99, and above p99.9. */
	struct tail_part tailq[TAIL_QUANTILES];
};

/* The stages ts has histograms of: all, or with hist_mode BPF's own. */
int trace_stage_count(const struct trace_summary *ts);
const struct stage_def *trace_stage_defs(const struct trace_summary *ts);

/* What a side's run was asked to trace, for its summary. */
struct trace_run {
	enum ns_side side;
	int hist_mode;		/* --trace=hist */
	uint32_t sample;	/* --trace-sample */
	uint32_t control;	/* --trace-control */
	const struct trace_cost *cost;	/* what tracing cost */
};

/* The side's summary from its workers' shares (tw[i] NULL: none). */
void trace_summarise(struct trace_summary *ts, struct tracer *t,
		     struct trace_worker *const *tw, int n,
		     const struct trace_run *run);
/*
 * trace_incomplete_{missing,disorder,norecord} and, when any were
 * missing or out of order, trace_incomplete_at=BOUNDARY:N,... (the
 * boundary each was missing or out of order at, in time order); when a
 * tcp_rr server's responses were held back, how long they waited:
 * trace_held_back_{count,p50_us,p99_us,max_us}.
 */
void trace_incomplete_kv(const struct trace_summary *ts,
			 struct kv_list *out);
/* off_reason: why --trace is off, or NULL when it ran. */
void trace_kv(const struct trace_summary *ts, const struct tracer *t,
	      const char *off_reason, uint64_t transactions,
	      struct kv_list *out);
/* Every trace key a run of ts's side and mode can print (for -o). */
void trace_kv_names(const struct trace_summary *ts, struct kv_list *out);
void trace_table(const struct trace_summary *ts, FILE *f, const char *who);
/* Put RETRANS into the workers' kept records (src/trace/retrans.h). */
void trace_mark_retrans(const struct trace_summary *ts, struct tracer *t,
			struct trace_worker *const *tw, int n);
/*
 * ts->tail: the TRACE_TAIL longest of the workers' kept records; and
 * ts->tailq, the tail explained (trace/tail.h).
 */
void trace_find_tail(struct trace_summary *ts, struct trace_worker *const *tw,
		     int n);

#endif
