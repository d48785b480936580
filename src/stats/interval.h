/*
 * Per-interval aggregation across workers. Each worker reports interval
 * k once it has closed it; the last of them to report prints the
 * progress line and files a summary of the interval for the JSON
 * document. No worker waits on another.
 */
#ifndef NETSTAGE_INTERVAL_H
#define NETSTAGE_INTERVAL_H

#include <pthread.h>
#include <stdint.h>

#include "stats/hist.h"

#define INTERVAL_SLOTS 8

struct interval_sum {
	double t_end;		/* seconds since the test started */
	uint64_t transactions;	/* in this interval, all workers */
	uint64_t bytes;		/* read + written in this interval */
	double rate;		/* transactions/s */
	double mbps;
	double p50_us, p90_us, p99_us;	/* rr only */
};

struct interval_slot {
	long k;
	int reported;
	uint64_t transactions;
	uint64_t bytes;
	struct hist lat;
};

struct intervals {
	pthread_mutex_t mu;
	int nworkers;
	int is_rr;		/* progress in trans/s, not Mbps */
	int has_latency;	/* and latency percentiles (an rr client) */
	int quiet;
	double interval_s;
	const char *label;	/* "client" / "server" in progress lines */
	struct interval_slot slot[INTERVAL_SLOTS];
	struct interval_sum *sums;
	long nsums, cap;
	int no_history;		/* print each interval, keep none (no sums) */
};

void intervals_init(struct intervals *iv, int nworkers, int is_rr,
		    int has_latency, int quiet, double interval_s,
		    const char *label);
/* A worker's deltas for interval k; lat may be NULL (no latencies). */
void intervals_report(struct intervals *iv, long k, uint64_t transactions,
		      uint64_t bytes, const struct hist *lat);
void intervals_free(struct intervals *iv);

#endif
