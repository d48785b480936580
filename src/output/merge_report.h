/*
 * `netstage merge --report FILE.html`: one self-contained page of a
 * merge (inline SVG drawn by an inline script, nothing fetched): the
 * runs beside the merged whole, the merged latency histogram with each
 * run's over it on log axes, and each merged stage's p50 and p99.
 * src/output/html/merge.js draws it; report.css is the run report's.
 */
#ifndef NETSTAGE_MERGE_REPORT_H
#define NETSTAGE_MERGE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "stats/hist.h"

struct merge_run {
	const char *name;		/* its file, which names its host */
	uint64_t transactions;
	double rate;			/* transactions/s, or Mbit/s */
	double cpu_util;		/* %, < 0: none */
	const struct hist *lat;		/* NULL: none */
};

struct merge_stage {
	const char *name;
	const struct hist *h;		/* merged */
};

struct merge_page {
	const char *workload, *role;
	int concurrent;
	int mbps;			/* rates are Mbit/s */
	const struct merge_run *run;	/* the runs */
	int nruns;
	struct merge_run whole;		/* rate < 0: none to give */
	const struct merge_stage *stage;
	int nstages;
	const char *const *missing;	/* runs that gave no result */
	int nmissing;
};

/* 0, or -1 if writing failed. */
int merge_report_write(FILE *f, const struct merge_page *p);

#endif
