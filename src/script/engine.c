/*
 * The engine's core, what every state and hook builds on: a state with
 * the libraries, the socket API and the prelude; the traceback handler;
 * a failure recorded once, and the side stopped. The main state's own
 * work (the script, run(), collect()) is run.c's.
 */
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/common.h"
#include "sys/stop.h"
#include "script/engine.h"

static const char prelude[] =
#include "prelude.inc"
	;

static const char *const hook_names[HOOK_COUNT] = {
	"client_socket", "server_socket", "client_close", "server_close",
	"client_sendmsg", "server_sendmsg", "client_recvmsg",
	"server_recvmsg", "client_recverr", "server_recverr",
};

const char *script_lua_version(void)
{
	return LUA_RELEASE;
}

const char *script_hook_name(enum hook h)
{
	return hook_names[h];
}

unsigned int script_hooks(const struct script *sc)
{
	return sc->hooks;
}

int script_failed(const struct script *sc)
{
	return atomic_load(&sc->failed);
}

const char *script_error(const struct script *sc)
{
	return script_failed(sc) ? sc->error : NULL;
}

int engine_traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") &&
		    lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)",
				      luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

lua_State *engine_new_state(struct lsock_info *info)
{
	lua_State *L = luaL_newstate();

	if (!L)
		return NULL;
	*(struct lsock_info **)lua_getextraspace(L) = info;
	luaL_openlibs(L);
	lsock_open(L);
	if (luaL_loadbufferx(L, prelude, sizeof(prelude) - 1, "=prelude",
			     "t") || lua_pcall(L, 0, 0, 0)) {
		log_err("lua prelude: %s", lua_tostring(L, -1));
		lua_close(L);
		return NULL;
	}
	return L;
}

void engine_fail(struct script *sc, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	pthread_mutex_lock(&sc->lock);
	if (!sc->error) {
		sc->error = msg;
		msg = NULL;
	}
	pthread_mutex_unlock(&sc->lock);
	free(msg);
	atomic_store(&sc->failed, 1);
	/* The main thread waits in poll(): the signal ends the wait. */
	interrupted = INTERRUPTED_SCRIPT;
	kill(getpid(), SIGUSR1);
}
