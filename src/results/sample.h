/*
 * One flow's figures over one interval: a row of samples.csv (-A),
 * kept by its worker as the interval closes.
 */
#ifndef NETSTAGE_SAMPLE_H
#define NETSTAGE_SAMPLE_H

#include <stdint.h>
#include <sys/resource.h>

#include "config/options.h"
#include "stages.h"

struct sample {
	uint64_t time;
	int tid;
	int flow_id;
	uint64_t bytes_read, bytes_written, transactions;
	double lat_min, lat_mean, lat_max, lat_stddev;	/* s */
	double pct[MAX_PERCENTILES];			/* s */
	double stage_mean[NS_MAX_STAGES];		/* s, --trace */
	uint64_t trace_lost;	/* the side's events lost in BPF so far */
	struct rusage ru;
};

/* One worker's samples: its own array, lent to whoever writes them. */
struct sample_set {
	const struct sample *v;
	long n;
};

#endif
