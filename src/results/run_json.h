/*
 * A run's JSON document (--json FILE, docs/netstage.schema.json) read
 * back as the figures `netstage merge` adds up and `netstage compare`
 * sets side by side: its totals, its times, its intervals' rates,
 * the options a merge must agree on, and its histograms, bucket by
 * bucket. A --local document gives its client's side.
 */
#ifndef NETSTAGE_RUN_JSON_H
#define NETSTAGE_RUN_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "stats/hist.h"

#define RUN_JSON_STAGES 24

struct run_json {
	char workload[32], role[16];
	char request[24], response[24];	/* the options, as written */
	double time_start, time_end;	/* s, CLOCK_REALTIME */
	uint64_t transactions;
	double throughput;		/* transactions/s, or Mbit/s */
	int mbps;			/* throughput is throughput_Mbps */
	double cpu_util;		/* local_cpu_util, %; < 0 none */
	int has_lat;
	struct hist lat;
	int nstages;
	char stage[RUN_JSON_STAGES][32];
	struct hist *stage_hist;	/* nstages of them */
	double *rate;			/* each interval's throughput */
	int nrate;
};

/* path read into r: 0, or -1 with a one-line reason in err. */
int run_json_read(const char *path, struct run_json *r, char *err,
		  size_t len);
/*
 * Every side path's document holds (a --local one's client and server,
 * in that order; another's one), for `netstage compare`: how many, or
 * -1 with a reason in err that starts with who.
 */
int run_json_read_sides(const char *path, const char *who,
			struct run_json r[2], char *err, size_t len);
void run_json_free(struct run_json *r);

#endif
