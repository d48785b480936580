/*
 * A side's results kept for the script after run(): the result keys,
 * the latency histogram and, with --trace, the stage histograms and
 * the merged per-transaction records, as Lua objects.
 */
#ifndef NETSTAGE_SCRIPT_RESULTS_H
#define NETSTAGE_SCRIPT_RESULTS_H

#include <lua.h>

struct kept;

/* Metatables of the result objects, into the state. */
void results_open(lua_State *L);
/* The results table (made once, then the same table), or nil. */
int results_push(lua_State *L, struct kept *k);
void results_free(struct kept *k);

#endif
