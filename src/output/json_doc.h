/* A side's JSON document (docs/netstage.schema.json). */
#ifndef NETSTAGE_JSON_DOC_H
#define NETSTAGE_JSON_DOC_H

#include <stdio.h>

#include "core/kv.h"

struct run_results;

/*
 * Options, results, the latency and stage histograms, per-interval
 * summaries.
 */
void write_json(FILE *f, const struct run_results *r);

#endif
