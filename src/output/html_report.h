/*
 * --report FILE.html: one self-contained page (inline SVG drawn by an
 * inline script from the run's figures, nothing fetched to draw it)
 * with the waterfall, each stage's latency histogram on a log axis,
 * latency and stage p50/p99 interval by interval, the slowest
 * transactions stage by stage (each linked, with --perfetto beside the
 * page, to its slices in ui.perfetto.dev: a click fetches that file),
 * what each side could not time and why, and the run's options,
 * kernel, CPUs and trace hooks. The figures come from the joined
 * records (trace/waterfall.h, kept), the untimed ones from each side's
 * trace_* result keys; src/html/ holds the script and style built into
 * the binary.
 */
#ifndef NETSTAGE_HTML_REPORT_H
#define NETSTAGE_HTML_REPORT_H

#include <stdio.h>

#include "core/kv.h"
#include "trace/waterfall.h"

struct html_meta {
	const char *workload;
	const char *hooks;		/* the tracer's, or NULL */
	double interval_s;		/* the run's -I */
	const struct kv_list *options;
	/* Side i's (w->t[i]'s) result keys, or NULL: its trace_* ones. */
	const struct kv_list *keys[2];
	/*
	 * The --perfetto file of the same tables, named from the report's
	 * directory (html_perfetto_name()): the slowest rows link to their
	 * slices in it. NULL: no link.
	 */
	const char *perfetto;
};

/*
 * The Perfetto file's name as the report reaches it, if both are in
 * one directory (the page fetches it beside itself), else NULL.
 */
const char *html_perfetto_name(const char *report, const char *perfetto);

/* 0, or -1 if writing failed. */
int html_report_write(FILE *f, const struct waterfall *w,
		      const struct html_meta *m);

#endif
