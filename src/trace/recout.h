/*
 * The kept records (struct rec_set) as each output needs them. Reads
 * records only: no worker, tracer or collector.
 */
#ifndef NETSTAGE_TRACE_RECOUT_H
#define NETSTAGE_TRACE_RECOUT_H

#include <stdio.h>

#include "trace/rec.h"

struct join_table;

/* --trace-records: a header, then a row a record, for `side`. */
void recout_csv(FILE *f, const struct rec_set *s, enum ns_side side);
/* As t's rows (t->r allocated; its name and side are the caller's). */
void recout_table(struct join_table *t, const struct rec_set *s);

#endif
