/*
 * What one side measured, as plain data, handed from the side that
 * measured it to whoever reads it after the test (today the script's
 * results, r = run()): built once by side.c at the end of a test, so
 * that a reader needs no side, no workers and no tracer. The first
 * piece of issue 41's results model.
 */
#ifndef NETSTAGE_RUN_RESULTS_H
#define NETSTAGE_RUN_RESULTS_H

#include <stdint.h>

#include "hist.h"
#include "interval.h"
#include "kv.h"
#include "trace/summary.h"

struct run_results {
	int is_client;
	const char *role;		/* client, server or observe */
	const char *workload;
	const struct kv_list *keys;	/* as printed */
	/* transactions/s or Mbit/s, as measured (not as printed) */
	double throughput;
	int has_lat;			/* an rr client: lat is its latency */
	struct hist lat;
	uint64_t t_start;		/* the test's start, CLOCK_MONOTONIC */
	const struct interval_sum *iv;	/* per interval, niv of them */
	long niv;
	int iv_lat;			/* the intervals have latency */
	int trace_asked, traced;
	struct trace_summary ts;	/* when traced */
	/*
	 * The kept records, by worker: owned here; a reader that keeps
	 * them past the side takes them (and sets these NULL).
	 */
	struct trace_rec *recs[NS_MAX_RINGS];
	long nrec[NS_MAX_RINGS];
	int nworkers;
};

#endif
