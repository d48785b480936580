/* A side's JSON document (docs/netstage.schema.json). */
#ifndef NETSTAGE_JSON_DOC_H
#define NETSTAGE_JSON_DOC_H

#include <stdio.h>

#include "core/kv.h"

struct run_results;
struct hist;

/*
 * Options, results, the latency and stage histograms, per-interval
 * summaries.
 */
void write_json(FILE *f, const struct run_results *r);
/* A histogram's non-empty buckets: [[lo_us, hi_us, count], ...]. */
void json_buckets(FILE *f, const struct hist *h);

#endif
