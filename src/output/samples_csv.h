/* samples.csv (-A), written from a side's results model. */
#ifndef NETSTAGE_SAMPLES_CSV_H
#define NETSTAGE_SAMPLES_CSV_H

#include <stdio.h>

struct run_results;

/* A header, then a row a flow and interval. */
void write_samples_csv(FILE *f, const struct run_results *r);

#endif
