/*
 * The main state: load the script, give it the hook registrations,
 * collect() and run(), run it under a traceback handler, and report a
 * failure once, naming the script and line.
 */
#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/infile.h"
#include "config/options.h"
#include "sys/stop.h"
#include "script/copy.h"
#include "script/engine.h"
#include "script/results.h"

static struct script *current;

struct script *script_current(void)
{
	return current;
}

static struct script *self(lua_State *L)
{
	struct script *sc;

	lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	sc = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return sc;
}

/* client_socket(fn) and the others: upvalue 1 is the hook's number. */
static int l_register(lua_State *L)
{
	struct script *sc = self(L);
	int h = (int)lua_tointeger(L, lua_upvalueindex(1));

	luaL_checktype(L, 1, LUA_TFUNCTION);
	if (sc->ran)
		return luaL_error(L, "%s(): hooks are registered before run()",
				  script_hook_name(h));
	lua_getfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
	lua_pushvalue(L, 1);
	lua_setfield(L, -2, script_hook_name(h));
	sc->hooks |= 1u << h;
	return 0;
}

/* collect(v): a wrapper that run() turns into one v per worker. */
static int l_collect(lua_State *L)
{
	luaL_checkany(L, 1);
	if (self(L)->ran)
		return luaL_error(L, "collect(): call it before run()");
	lua_createtable(L, 1, 0);
	lua_pushvalue(L, 1);
	lua_rawseti(L, -2, 1);
	luaL_setmetatable(L, COLLECT_MT);
	lua_getfield(L, LUA_REGISTRYINDEX, COLLECTS_KEY);
	lua_pushvalue(L, -2);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
	return 1;
}

/* What run() does, also for a script that never called it. */
static int do_run(struct script *sc, char *err, size_t len)
{
	int rc;

	sc->ran = 1;
	rc = sc->run_fn(sc->o, sc->wl);
	if (engine_collect(sc, err, len))
		return -1;
	if (script_failed(sc)) {
		snprintf(err, len, "%s", sc->error ? sc->error : "a hook failed");
		return -1;
	}
	return rc;
}

static int l_run(lua_State *L)
{
	struct script *sc = self(L);
	char err[4096];
	int rc;

	if (sc->ran)
		return luaL_error(L, "run() was already called: a script "
				  "runs the test once");
	rc = do_run(sc, err, sizeof(err));
	/* A signal in the test ended the test: not the analysis after. */
	sc->signals_seen = signals_caught;
	if (rc < 0) {
		lua_pushstring(L, err);
		return lua_error(L);
	}
	sc->rc = rc;
	return results_push(L, sc->kept);
}

static int l_results(lua_State *L)
{
	return results_push(L, self(L)->kept);
}

static void register_api(struct script *sc)
{
	lua_State *L = sc->L;
	int h;

	lua_pushlightuserdata(L, sc);
	lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, HOOKS_KEY);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, COLLECTS_KEY);
	luaL_newmetatable(L, COLLECT_MT);
	lua_pop(L, 1);
	for (h = 0; h < HOOK_COUNT; h++) {
		lua_pushinteger(L, h);
		lua_pushcclosure(L, l_register, 1);
		lua_setglobal(L, script_hook_name(h));
	}
	lua_register(L, "collect", l_collect);
	lua_register(L, "run", l_run);
	lua_register(L, "results", l_results);
	results_open(L);
}

static void script_free(struct script *sc)
{
	int i;

	for (i = 0; i < sc->nw; i++) {
		lua_close(sc->w[i]->L);
		free(sc->w[i]);
	}
	free(sc->w);
	if (sc->L)
		lua_close(sc->L);
	results_free(sc->kept);
	pthread_mutex_destroy(&sc->lock);
	free(sc->error);
	free(sc);
}

/*
 * The main chunk outside run() (the analysis after it, say) stops at
 * SIGINT or SIGTERM, as the test does: once run() has returned nothing
 * else looks at the signal's flag.
 */
static void stop_on_signal(lua_State *L, lua_Debug *ar)
{
	if (signals_caught != self(L)->signals_seen)
		luaL_error(L, "stopped by a signal");
}

#define SCRIPT_MAX (16u << 20)

/*
 * luaL_loadfilex() as netstage reads its inputs (infile.h): a pipe's
 * script too (--script <(...)), with no wait for a fifo's writer that
 * never comes. As Lua's own loader, a first line starting with '#' is
 * skipped (made a comment: line numbers stay).
 */
static int load_script(lua_State *L, const char *path)
{
	char *buf = xcalloc(1, SCRIPT_MAX + 1), *name;
	size_t n, i;
	int rc;

	if (infile_read(path, buf, SCRIPT_MAX, &n, NULL) || n > SCRIPT_MAX) {
		lua_pushfstring(L, "cannot open %s: %s", path,
				n > SCRIPT_MAX ? "larger than 16 MiB" :
				errno == ETIMEDOUT ?
				"nothing written to it for 5 s" :
				strerror(errno));
		free(buf);
		return LUA_ERRFILE;
	}
	/* "#!..." becomes "--..." (a comment to the line's end). */
	if (n && buf[0] == '#')
		for (i = 0; i < 2 && i < n && buf[i] != '\n'; i++)
			buf[i] = i || (n > 1 && buf[1] != '\n') ? '-' : ' ';
	if (asprintf(&name, "@%s", path) < 0)
		name = NULL;
	rc = luaL_loadbufferx(L, buf, n, name ? name : "=script", "t");
	free(name);
	free(buf);
	return rc;
}

int script_main(struct options *o, const struct workload *wl,
		script_run_fn run_fn)
{
	struct script *sc = xcalloc(1, sizeof(*sc));
	char err[4096];
	int rc = 0;

	sc->o = o;
	sc->wl = wl;
	sc->run_fn = run_fn;
	pthread_mutex_init(&sc->lock, NULL);
	sc->L = engine_new_state(&sc->info);
	if (!sc->L) {
		script_free(sc);
		return EXIT_RUNTIME;
	}
	register_api(sc);
	current = sc;
	sc->signals_seen = signals_caught;
	lua_sethook(sc->L, stop_on_signal, LUA_MASKCOUNT, 1000);
	lua_pushcfunction(sc->L, engine_traceback);
	if (load_script(sc->L, o->script)) {
		log_err("--script: %s", lua_tostring(sc->L, -1));
		rc = EXIT_USAGE;
	} else if (lua_pcall(sc->L, 0, 0, 1)) {
		log_err("script error: %s", lua_tostring(sc->L, -1));
		rc = EXIT_RUNTIME;
	} else if (!sc->ran) {
		rc = do_run(sc, err, sizeof(err));
		if (rc < 0) {
			log_err("script error: %s", err);
			rc = EXIT_RUNTIME;
		}
	} else {
		rc = sc->rc;
	}
	current = NULL;
	script_free(sc);
	return rc;
}
