/*
 * Kept transactions as a Chrome / Perfetto trace (the Trace Event
 * Format's JSON, which ui.perfetto.dev and chrome://tracing load): a
 * process per side, thread tracks per flow (as many as its transactions
 * need not to overlap), a slice per transaction with a slice per stage
 * inside it, on the CLOCK_MONOTONIC both sides share, in us
 * from the earliest boundary of the file.
 *
 * Not every kept transaction: a transaction is some 0.85 KB a side in
 * this format, too much to keep or open for a long run. The file holds
 * each side's transactions above its p99 and those kept as the
 * slowest (what one opens it for), every `every`-th of each flow (the
 * common case, 1: all), and a server's half of each client
 * transaction written; otherData says so and counts them.
 */
#ifndef NETSTAGE_TRACE_PERFETTO_H
#define NETSTAGE_TRACE_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "trace/clock.h"
#include "trace/join.h"

/*
 * n sides' records (t[i].name names the process, t[i].side gives the
 * stages). fit: a client's and its server's clocks fitted, or NULL;
 * aligned: the server's stamps were moved onto the client's clock by
 * it. Both go into the file's otherData, so that a reader knows whose
 * clock the server's slices are on and how far to trust it. 0, or -1
 * if writing failed.
 */
int perfetto_write(FILE *f, const struct join_table *t, int n,
		   const struct clock_fit *fit, int aligned, int every);
/*
 * The file's time zero: the earliest boundary of every record of the
 * same tables (ns, CLOCK_MONOTONIC). A slice's ts is its start less
 * this, in us.
 */
uint64_t perfetto_zero_ns(const struct join_table *t, int n);

#endif
