/*
 * A side's results once its test is done (side_out.c): printed, written
 * to its files, handed on. The side's other stages are side.h's.
 */
#ifndef NETSTAGE_SIDE_OUT_H
#define NETSTAGE_SIDE_OUT_H

#include <stdio.h>

#include "side/side.h"

struct run_results;
/*
 * --local: the side's results model goes to fn, which then owns it,
 * instead of to stdout, the stage table and the script; the side still
 * says on stderr what it says and writes its own files.
 */
void side_results_to(void (*fn)(struct run_results *r, void *arg),
		     void *arg);
/*
 * r on f as the options ask: the terminal's summary, the JSON document
 * or the key=value lines (-o's selection), each key after prefix.
 */
void side_print_results(const struct run_results *r,
			const struct options *o, const char *prefix, FILE *f);
/* Print the results and write the files: 0, or 1 if a file failed. */
int side_finish(struct side *s);
/*
 * End a side whose run returned rc: < 0 a set-up failure described in
 * err (no results to print), 1 a test that ended early (res.error says
 * why; results printed), 0 a full test. Returns the exit status.
 */
int side_conclude(struct side *s, int rc, const char *err);

#endif
