/*
 * A side's results once its test is done (side_out.c): printed, written
 * to its files, handed on. The side's other stages are side.h's.
 */
#ifndef NETSTAGE_SIDE_OUT_H
#define NETSTAGE_SIDE_OUT_H

#include <stdio.h>

#include "side.h"

/*
 * The stage table goes to f rather than stderr: a --local server's, for
 * its parent to print whole after the client's.
 */
void side_table_to(FILE *f);
/*
 * --local: the side's kept trace records are dumped to f as it
 * finishes (recout_dump()), for the parent's waterfall.
 */
void side_records_to(FILE *f);
/*
 * --local with a script: the result keys are written to `keys` as
 * well, and a traced side's struct trace_summary to `summary`.
 */
void side_results_to(FILE *keys, FILE *summary);
/* Print the results and write the files: 0, or 1 if a file failed. */
int side_finish(struct side *s);
/*
 * End a side whose run returned rc: < 0 a set-up failure described in
 * err (no results to print), 1 a test that ended early (res.error says
 * why; results printed), 0 a full test. Returns the exit status.
 */
int side_conclude(struct side *s, int rc, const char *err);

#endif
