/*
 * Histogram objects for scripts (h.count, h.mean, h:percentile(p),
 * h:buckets(), h:add(us [, n]), histogram()): each a copy of a
 * struct hist in a userdata, read in microseconds.
 */
#ifndef NETSTAGE_SCRIPT_LHIST_H
#define NETSTAGE_SCRIPT_LHIST_H

#include <lua.h>

struct hist;

/* The metatable, and the global histogram(), into the state. */
void lhist_open(lua_State *L);
/* A copy of h on the stack, as a histogram object. */
void lhist_push(lua_State *L, const struct hist *h);

#endif
