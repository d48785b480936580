/*
 * The workers' states: each gets copies of the hook functions (with
 * their upvalues) and of the script's globals, and runs the hooks for
 * its worker's sockets. After the run, collect() wrappers are filled
 * from every worker's copy.
 */
#include <errno.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "net/net.h"
#include "config/options.h"
#include "script/copy.h"
#include "script/engine.h"
#include "script/laddr.h"
#include "script/lmsg.h"

static int l_main_only(lua_State *L)
{
	return luaL_error(L, "%s() is for the main script, not for hooks",
			  lua_tostring(L, lua_upvalueindex(1)));
}

static void stub(lua_State *L, const char *name)
{
	lua_pushstring(L, name);
	lua_pushcclosure(L, l_main_only, 1);
	lua_setglobal(L, name);
}

/* What only the main script may call raises an error in a worker. */
static void stub_main_api(lua_State *L)
{
	int h;

	stub(L, "run");
	stub(L, "collect");
	stub(L, "results");
	for (h = 0; h < HOOK_COUNT; h++)
		stub(L, script_hook_name(h));
}

/* "x.lua:12": where the function at fn is defined. */
static void describe(lua_State *L, int fn, char *out, size_t len)
{
	lua_Debug ar;

	lua_pushvalue(L, fn);
	lua_getinfo(L, ">S", &ar);
	snprintf(out, len, "%s:%d", ar.short_src, ar.linedefined);
}

/* The hooks, then the script's own globals (best effort: see docs). */
static int copy_in(struct script *sc, struct script_worker *sw)
{
	lua_State *from = sc->L;
	struct lcopy c;
	char where[300];
	int h, rc = 0;

	lcopy_begin(&c, from, sw->L, 1);
	lua_getfield(from, LUA_REGISTRYINDEX, HOOKS_KEY);
	for (h = 0; h < HOOK_COUNT && !rc; h++) {
		sw->ref[h] = LUA_NOREF;
		if (lua_getfield(from, -1, script_hook_name(h)) == LUA_TNIL) {
			lua_pop(from, 1);
			continue;
		}
		describe(from, lua_gettop(from), sw->where[h],
			 sizeof(sw->where[h]));
		snprintf(where, sizeof(where), "%s: hook %s", sw->where[h],
			 script_hook_name(h));
		c.where = where;
		rc = lcopy_value(&c, -1);
		lua_pop(from, 1);
		if (rc)
			engine_fail(sc, "%s", c.err);
		else
			sw->ref[h] = luaL_ref(sw->L, LUA_REGISTRYINDEX);
	}
	lua_pop(from, 1);
	if (!rc)
		lcopy_globals(&c);
	lcopy_end(&c);
	return rc;
}

static struct script_worker *worker_new(struct script *sc)
{
	struct script_worker *sw = xcalloc(1, sizeof(*sw));
	int h;

	sw->sc = sc;
	sw->limit_ns = (uint64_t)sc->o->hook_timeout * 1000000;
	for (h = 0; h < HOOK_COUNT; h++)
		sw->ref[h] = LUA_NOREF;
	sw->L = engine_new_state(&sw->info);
	if (!sw->L) {
		log_err("out of memory for a worker's Lua state");
		exit(EXIT_RUNTIME);
	}
	lua_pushcfunction(sw->L, engine_traceback);	/* slot 1 */
	sw->msg = lmsg_push_hook(sw->L);		/* slot 2 */
	stub_main_api(sw->L);
	if (copy_in(sc, sw))
		sw->failed = 1;
	return sw;
}

struct script_worker *script_worker(struct script *sc, int i)
{
	while (sc->nw <= i) {
		sc->w = xrealloc(sc->w, sc->nw + 1, sizeof(*sc->w));
		sc->w[sc->nw] = worker_new(sc);
		sc->nw++;
	}
	return sc->w[i];
}

/* VM instructions between the watchdog's looks at the clock. */
#define WATCH_EVERY 100000

/*
 * A hook that runs past --hook-timeout fails with its file and line.
 * The clock is read only every WATCH_EVERY instructions: a hook that
 * returns before the first look costs the watchdog nothing.
 */
static void watchdog(lua_State *L, lua_Debug *ar)
{
	struct lsock_info *info = *(struct lsock_info **)lua_getextraspace(L);
	struct script_worker *sw = (struct script_worker *)(
		(char *)info - offsetof(struct script_worker, info));
	uint64_t now = now_ns();

	if (!sw->seen_ns) {
		sw->seen_ns = now;
		return;
	}
	if (now - sw->seen_ns <= sw->limit_ns)
		return;
	/* Level 0 is the Lua function running: where the hook was. */
	if (lua_getstack(L, 0, ar) && lua_getinfo(L, "Sl", ar) &&
	    ar->currentline > 0)
		luaL_error(L, "%s:%d: the hook ran longer than %d ms "
			   "(--hook-timeout)", ar->short_src, ar->currentline,
			   (int)(sw->limit_ns / 1000000));
	luaL_error(L, "the hook ran longer than %d ms (--hook-timeout)",
		   (int)(sw->limit_ns / 1000000));
}

/* Around each call of a hook: the watchdog counts from here. */
static void watch(struct script_worker *sw)
{
	if (!sw->limit_ns)
		return;
	sw->seen_ns = 0;
	lua_sethook(sw->L, watchdog, LUA_MASKCOUNT, WATCH_EVERY);
}

static void unwatch(struct script_worker *sw)
{
	if (sw->limit_ns)
		lua_sethook(sw->L, NULL, 0, 0);
}

static void hook_failed(struct script_worker *sw, enum hook h,
			const char *msg)
{
	sw->failed = 1;
	engine_fail(sw->sc, "hook %s: %s", script_hook_name(h),
		    msg ? msg : "error");
}

/* The addrinfo-like table socket hooks get. */
static void push_addrinfo(lua_State *L, const struct addr *a, int socktype)
{
	lua_createtable(L, 0, 5);
	lua_pushinteger(L, a->ss.ss_family);
	lua_setfield(L, -2, "ai_family");
	lua_pushinteger(L, socktype);
	lua_setfield(L, -2, "ai_socktype");
	lua_pushinteger(L, socktype == SOCK_STREAM ? IPPROTO_TCP
						   : IPPROTO_UDP);
	lua_setfield(L, -2, "ai_protocol");
	lua_pushinteger(L, a->len);
	lua_setfield(L, -2, "ai_addrlen");
	lsa_push(L, (const struct sockaddr *)&a->ss, a->len);
	lua_setfield(L, -2, "ai_addr");
}

int script_socket_hook(struct script_worker *sw, enum hook h, int fd,
		       const struct addr *a, int socktype)
{
	lua_State *L = sw->L;

	if (sw->failed)
		return -1;
	if (sw->ref[h] == LUA_NOREF)
		return 0;
	lua_rawgeti(L, LUA_REGISTRYINDEX, sw->ref[h]);
	lua_pushinteger(L, fd);
	push_addrinfo(L, a, socktype);
	watch(sw);
	if (lua_pcall(L, 2, 0, 1)) {
		unwatch(sw);
		hook_failed(sw, h, lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	unwatch(sw);
	return 0;
}

/* Bytes the message's buffers hold. */
static size_t msg_bytes(const struct msghdr *m)
{
	size_t n = 0, i;

	for (i = 0; i < m->msg_iovlen; i++)
		n += m->msg_iov[i].iov_len;
	return n;
}

ssize_t script_packet_hook(struct script_worker *sw, enum hook h, int fd,
			   struct msghdr *m, int flags)
{
	lua_State *L = sw->L;
	int receive = h >= HOOK_CLIENT_RECVMSG, isint, rc;
	lua_Integer n;

	if (sw->failed) {
		errno = ECANCELED;
		return -1;
	}
	lmsg_prepare(sw->msg, m, receive);
	sw->info.last_errno = 0;
	lua_rawgeti(L, LUA_REGISTRYINDEX, sw->ref[h]);
	lua_pushinteger(L, fd);
	lua_pushvalue(L, 2);
	lua_pushinteger(L, flags);
	watch(sw);
	rc = lua_pcall(L, 3, 1, 1);
	unwatch(sw);
	if (rc) {
		hook_failed(sw, h, lua_tostring(L, -1));
		lua_pop(L, 1);
		errno = ECANCELED;
		return -1;
	}
	n = lua_tointegerx(L, -1, &isint);
	if (!isint || n < -1) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: the hook returned %s%s, not "
			 "a byte count or -1", sw->where[h], isint ? "" : "a ",
			 isint ? "a negative number" : luaL_typename(L, -1));
		lua_pop(L, 1);
		hook_failed(sw, h, msg);
		errno = ECANCELED;
		return -1;
	}
	lua_pop(L, 1);
	/* More bytes than the buffers hold cannot have been moved. */
	if (n > (lua_Integer)msg_bytes(m)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: the hook returned %lld bytes, "
			 "more than the %zu it was given", sw->where[h],
			 (long long)n, msg_bytes(m));
		hook_failed(sw, h, msg);
		errno = ECANCELED;
		return -1;
	}
	if (receive)
		lmsg_finish(sw->msg, m);
	if (n < 0)
		errno = sw->info.last_errno ? sw->info.last_errno : EIO;
	return (ssize_t)n;
}

/* Push worker w's value for the wrapper (by its address); 0 if none. */
static int worker_value(struct script_worker *sw, const void *wrapper)
{
	lua_State *L = sw->L;
	int top = lua_gettop(L);

	if (lua_getfield(L, LUA_REGISTRYINDEX, COLLECTED_KEY) != LUA_TTABLE)
		return lua_settop(L, top), 0;
	lua_pushlightuserdata(L, (void *)wrapper);
	if (lua_rawget(L, -2) != LUA_TTABLE)
		return lua_settop(L, top), 0;
	if (lua_getfield(L, -1, "f") == LUA_TFUNCTION) {
		lua_getfield(L, -2, "n");
		lua_getupvalue(L, -2, (int)lua_tointeger(L, -1));
	} else {
		lua_getfield(L, -2, "t");
		lua_getfield(L, -3, "k");
		lua_gettable(L, -2);
	}
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	return 1;
}

/* wrapper (top of the main stack) := { value of worker 1, ... }. */
static int fill_wrapper(struct script *sc, char *err, size_t len)
{
	lua_State *M = sc->L;
	const void *key = lua_topointer(M, -1);
	struct lcopy c;
	int i, w = lua_gettop(M);

	lua_rawgeti(M, w, 1);		/* the value as collect() got it */
	for (i = 0; i < sc->nw; i++) {
		struct script_worker *sw = sc->w[i];
		int rc;

		lcopy_begin(&c, sw->L, M, 0);
		c.where = "collect()";
		if (worker_value(sw, key)) {
			rc = lcopy_value(&c, -1);
			lua_pop(sw->L, 1);
		} else {
			lua_pushvalue(M, w + 1);	/* never captured */
			rc = 0;
		}
		if (rc) {
			snprintf(err, len, "worker %d: %s", i + 1, c.err);
			lcopy_end(&c);
			lua_settop(M, w);
			return -1;
		}
		lua_rawseti(M, w, i + 1);
		lcopy_end(&c);
	}
	lua_settop(M, w);
	lua_pushnil(M);
	lua_setmetatable(M, w);
	return 0;
}

int engine_collect(struct script *sc, char *err, size_t len)
{
	lua_State *M = sc->L;
	lua_Integer i, n;
	int rc = 0;

	lua_getfield(M, LUA_REGISTRYINDEX, COLLECTS_KEY);
	n = (lua_Integer)lua_rawlen(M, -1);
	for (i = 1; i <= n && !rc; i++) {
		lua_rawgeti(M, -1, i);
		rc = fill_wrapper(sc, err, len);
		lua_pop(M, 1);
	}
	lua_pop(M, 1);
	return rc;
}
