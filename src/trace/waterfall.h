/*
 * Where along its path the time of a request went, as one table: the
 * records of a client and of the hops after it (trace/join.h) joined
 * transaction by transaction, a histogram per row of the plan, the
 * keys and the table. `netstage join` reads the hops from
 * --trace-records files; --local from the two sides' kept records,
 * which each side dumps for it (trace_records_dump()).
 */
#ifndef NETSTAGE_TRACE_WATERFALL_H
#define NETSTAGE_TRACE_WATERFALL_H

#include <stdio.h>

#include "stats/hist.h"
#include "core/kv.h"
#include "trace/clock.h"
#include "trace/join.h"

struct waterfall {
	struct join_table t[JOIN_MAX_HOPS];	/* client first */
	int n;
	struct join_plan plan;
	struct hist *row;	/* one per plan row */
	struct hist total;	/* the joined transactions' latency */
	uint64_t joined, by_result[JOIN_RESULTS];
	/* joined ones where a hop's record has RETRANS: TCP resent bytes */
	uint64_t retransmitted;
	/*
	 * Client records kept as the run's slowest, not of the uniform
	 * sample: in no figure, only among the report's slowest.
	 */
	uint64_t apart;
	uint64_t at_hop[JOIN_MAX_HOPS];
	FILE *records;		/* a CSV row per joined transaction, or NULL */
	/*
	 * keep: each joined transaction's figures, for a report: start
	 * (its client's first boundary, ns), latency (ns), flow, sequence
	 * number, 1 if kept as one of the slowest (0: of the sample), 1 if
	 * TCP resent its bytes before the response came, then a duration
	 * per row (ns): WATERFALL_KEPT_HEAD + nrows.
	 */
	int keep;
	uint64_t *kept;
	long nkept;
	/*
	 * A client and a server: their clocks fitted from the joined
	 * exchanges' four kernel stamps (trace/clock.h). On one host the
	 * truth is 0, a check of the fit.
	 */
	int has_clock;
	struct clock_fit clock;
	/*
	 * Set by the caller: are the two ends' stamps on one clock? TWO:
	 * the server's are moved onto the client's by the fit before the
	 * join (aligned then 1); AUTO: when one clock cannot explain them.
	 */
	enum { WATERFALL_CLOCKS_AUTO, WATERFALL_CLOCKS_ONE,
	       WATERFALL_CLOCKS_TWO } clocks;
	/*
	 * Set by the caller (--clock realtime or tai): the server's stamps
	 * moved by this first, the two hosts' shared clock's difference
	 * between their monotonic ones; clocks is then ONE.
	 */
	int64_t server_shift_ns;
	int aligned;
};

/* waterfall_join(): two clocks, and records that pair only by time. */
#define WATERFALL_NEEDS_ONE_CLOCK (-2)

#define WATERFALL_KEPT_HEAD 6

/* The kept values of joined transaction i (keep set). */
static inline const uint64_t *waterfall_kept(const struct waterfall *w,
					      long i)
{
	return w->kept + i * (w->plan.nrows + WATERFALL_KEPT_HEAD);
}

/*
 * Join every client record of the w->n tables (sorted, named) along
 * the plan join_plan() or, nested, join_plan_nested() makes (n = 1:
 * one side's own stages). -1 if there is no such plan,
 * WATERFALL_NEEDS_ONE_CLOCK if clocks is TWO and the records pair only
 * by time.
 */
int waterfall_join(struct waterfall *w, int nested);

/* join_transactions and kin, each row's mean and percentiles. */
void waterfall_kv(const struct waterfall *w, const char *key_prefix,
		  struct kv_list *out);
/* The table: a title line, a row per stretch, the total. */
void waterfall_print(const struct waterfall *w, const char *title,
		     const char *total_name, FILE *f);
/* Frees the tables' records too. */
void waterfall_free(struct waterfall *w);


#endif
