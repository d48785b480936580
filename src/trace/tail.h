/*
 * Which stages make the tail: of a side's kept records, those slower
 * than the p99 (and the p99.9, with 1,000 records or more), each
 * stage's share of their latency and how far its mean among them
 * exceeds its own p50. The uniform sample only: the slowest kept
 * beside it would count the tail twice.
 */
#ifndef NETSTAGE_TRACE_TAIL_H
#define NETSTAGE_TRACE_TAIL_H

#include <stdio.h>

#include "core/kv.h"
#include "trace/collect.h"
#include "trace/summary.h"

/* The quantiles of ts->tailq[], as keys name them ("p99", "p99.9"). */
extern const char *const tail_names[TAIL_QUANTILES];

/* ts->tailq from the workers' kept records and ts->stage's p50s. */
void tail_explain(struct trace_summary *ts, struct trace_worker *const *tw,
		  int n);
/* Stage k of part t with the largest share. */
int tail_top(const struct trace_summary *ts, const struct tail_part *t);
/* tail_p99_count, _above_us, _top, _STAGE_share, _STAGE_excess_us. */
void tail_kv(const struct trace_summary *ts, struct kv_list *out);
/* Under the stage table: the p99 tail's three largest stages. */
void tail_line(const struct trace_summary *ts, FILE *f);

#endif
