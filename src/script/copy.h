/*
 * Copying Lua values between two lua_States of one process: numbers,
 * strings, booleans, tables (shared ones stay shared, cycles are kept),
 * Lua functions (as bytecode, with their upvalues; upvalues two
 * functions share stay shared), C functions without upvalues, and the
 * plain userdata types of the socket API.
 */
#ifndef NETSTAGE_SCRIPT_COPY_H
#define NETSTAGE_SCRIPT_COPY_H

#include <lua.h>
#include <stddef.h>

/* Registry name of the metatable collect() wrappers carry. */
#define COLLECT_MT "netstage.collect"
/* Registry field (in the destination) of where wrappers were put. */
#define COLLECTED_KEY "netstage.collected"

struct lcopy {
	lua_State *from, *to;
	int map;		/* in `to`: from-pointer -> copy */
	int track;		/* unwrap collect() wrappers and record where */
	const char *where;	/* for messages: "hook client_recvmsg" */
	char err[256];
};

/*
 * Start a copy from `from` to `to`: the identity map in `to` is seeded
 * so that `from`'s globals and library tables become `to`'s own.
 */
void lcopy_begin(struct lcopy *c, lua_State *from, lua_State *to, int track);
/* Pops nothing; pushes the copy of from[idx] onto `to`. 0 or -1 (err). */
int lcopy_value(struct lcopy *c, int idx);
/*
 * The globals of `from` that `to` lacks, copied into `to`'s globals;
 * one that cannot be copied is left out.
 */
void lcopy_globals(struct lcopy *c);
/* Drop the identity map from `to`'s stack. */
void lcopy_end(struct lcopy *c);

#endif
