/*
 * What a person at a terminal sees instead of the key=value lines: a
 * few lines per side (throughput, latency, CPU, what tracing saw and
 * cost) followed by the stage table or, under --local, the waterfall.
 * Chosen by --output-format human without -o, which is the default
 * when stdout is a terminal; the key=value lines stay the machine
 * interface (docs/usage.md).
 */
#ifndef NETSTAGE_GLANCE_H
#define NETSTAGE_GLANCE_H

#include <stdio.h>

struct run_results;

/* A side's lines, read from the side's results model. */
void glance_side(const struct run_results *r, FILE *f);

#endif
