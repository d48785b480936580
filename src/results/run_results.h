/*
 * What one side measured, as plain data: built once by side_out.c at
 * the end of a test, then read through a const pointer by every output
 * of it (the JSON, samples.csv, the records CSV, Perfetto, the report,
 * the terminal summary, --local's joined outputs) and taken whole by
 * the script's results (r = run()), so that none of them needs a side,
 * a worker or the tracer. --local's server sends it to the parent as
 * bytes (results_wire.h). Issue 41's results model.
 */
#ifndef NETSTAGE_RUN_RESULTS_H
#define NETSTAGE_RUN_RESULTS_H

#include <stdint.h>

#include "stats/hist.h"
#include "stats/interval.h"
#include "core/kv.h"
#include "results/clock_id.h"
#include "config/options.h"
#include "results/sample.h"
#include "trace/cost.h"
#include "trace/rec.h"
#include "trace/summary.h"

struct run_results {
	int is_client;
	char role[16];			/* client, server or observe */
	char workload[32];
	int is_rr;
	enum ns_side side;		/* the tracer's name for this end */
	struct kv_list keys;		/* as printed */
	struct kv_list options;		/* every option: JSON's "options" */
	/*
	 * --local's server: the options lines its output starts with
	 * (options_header()), which the parent prints for it.
	 */
	struct kv_list header;
	/* transactions/s or, with throughput_mbps, Mbit/s, as measured */
	double throughput;
	int throughput_mbps;
	uint64_t transactions, bytes_read, bytes_written, io_errors;
	int flows;			/* -1: observe, which has none */
	double duration_s;		/* time_end - time_start */
	double cpu_util;		/* % of the machine; < 0 unknown */
	int ncpus;
	double service_demand_us;	/* per transaction or KB; < 0 none */
	char *error;			/* NULL: none */
	int has_lat;			/* an rr client: lat is its latency */
	struct hist lat;
	uint64_t t_start;		/* the test's start, CLOCK_MONOTONIC */
	/* whose clock its stamps are on (clock_id.h); "": not known */
	char clock_id[CLOCK_ID_LEN];
	/* CLOCK_REALTIME and CLOCK_TAI ahead of its clock at the end, ns */
	int64_t realtime_ns, tai_ns;
	struct interval_sum *iv;	/* per interval, niv of them */
	long niv;
	int iv_lat;			/* the intervals have latency */
	int trace_asked, traced;
	char trace_off[256];		/* asked, not traced: why */
	int trace_hist;			/* --trace=hist: no records */
	struct trace_summary ts;	/* when traced; ts.cost NULL */
	int has_cost;			/* cost: what tracing cost, measured */
	struct trace_cost_parts cost;
	int cost_both_ends;		/* cost covers both ends (--local) */
	/*
	 * The kept records, by worker: owned here. A reader that keeps
	 * them past the side takes them (and sets these NULL).
	 */
	struct rec_set recs;
	/*
	 * The samples (-A), by worker: the workers' own, lent for the
	 * side's outputs only (NULL once the model leaves the side).
	 */
	struct sample_set *samples;
	int nsample_sets;
	struct percentiles pc;		/* samples.csv's latency columns */
};

struct join_table;
/*
 * r's kept records as the rows of a join (trace/join.h), sorted for
 * it: t's side and name are r's, its rows allocated.
 */
void run_results_table(const struct run_results *r, struct join_table *t);

/*
 * Everything but the samples is r's own: it outlives the side that
 * built it (--local's parent, the script's r = run()).
 * Free what r owns (records not taken) and r itself.
 */
void run_results_free(struct run_results *r);

#endif
