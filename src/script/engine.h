/*
 * Inside the script engine: the main state and the workers' states.
 * Internal to src/script/.
 */
#ifndef NETSTAGE_SCRIPT_ENGINE_H
#define NETSTAGE_SCRIPT_ENGINE_H

#include <lua.h>
#include <pthread.h>
#include <stdatomic.h>

#include "script/lsock.h"
#include "script/script.h"

struct kept;

/* Registry fields of the main state. */
#define SCRIPT_KEY "netstage.script"
#define HOOKS_KEY "netstage.hooks"		/* hook name -> function */
#define COLLECTS_KEY "netstage.collects"	/* collect() wrappers */

struct script_worker {
	lua_State *L;		/* slot 1: traceback handler, 2: the msghdr */
	struct script *sc;
	struct lsock_info info;
	struct lmsg *msg;
	int ref[HOOK_COUNT];
	char where[HOOK_COUNT][160];	/* "x.lua:12" where each is defined */
	int failed;
	uint64_t limit_ns;	/* --hook-timeout; 0: none */
	uint64_t seen_ns;	/* when the watchdog first saw this call */
};

struct script {
	lua_State *L;
	struct lsock_info info;
	struct options *o;
	const struct workload *wl;
	script_run_fn run_fn;
	int ran;
	int rc;			/* what run() returned */
	int signals_seen;	/* signals_caught as the test ended */
	unsigned int hooks;
	struct script_worker **w;
	int nw;
	pthread_mutex_t lock;
	atomic_int failed;
	char *error;		/* the first hook's error, with traceback */
	struct kept *kept;	/* the results, after run() */
};

/* A state with the libraries, the socket API and the prelude. */
lua_State *engine_new_state(struct lsock_info *info);
/* lua.c's message handler: the message with a traceback. */
int engine_traceback(lua_State *L);
/* Record the first failure and stop the side. */
void engine_fail(struct script *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Fill the collect() wrappers with one value per worker. -1: err set. */
int engine_collect(struct script *sc, char *err, size_t len);

#endif
