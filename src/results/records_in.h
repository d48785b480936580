/*
 * A --trace-records file read back into a results model (run_results.h):
 * the side its rows name and its records by worker, with every column
 * the file has (boundaries, software stamps, ports, kept, what held
 * the CPU). `netstage join` reads its hops so, and builds its waterfall
 * from the models as --local does from its two.
 */
#ifndef NETSTAGE_RECORDS_IN_H
#define NETSTAGE_RECORDS_IN_H

#include <stddef.h>

#include "results/run_results.h"

/* The model of path, or NULL with a one-line reason in err. */
struct run_results *records_read(const char *path, char *err, size_t len);

#endif
