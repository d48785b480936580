/*
 * Copying Lua values between states (how hooks reach the workers),
 * fed Lua chunks: whatever value a chunk returns (tables with cycles
 * and shared parts, functions with upvalues, ...) is copied or refused
 * with a message, never crashes. The chunk runs with the base, string,
 * table, math and coroutine libraries only, without file access, for at
 * most 100,000 instructions.
 */
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdlib.h>

#include "script/copy.h"

static void limit(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	luaL_error(L, "instruction limit");
}

static lua_State *new_state(void)
{
	static const luaL_Reg libs[] = {
		{ "_G", luaopen_base }, { LUA_STRLIBNAME, luaopen_string },
		{ LUA_TABLIBNAME, luaopen_table },
		{ LUA_MATHLIBNAME, luaopen_math },
		{ LUA_COLIBNAME, luaopen_coroutine }, { NULL, NULL },
	};
	static const char *const unsafe[] = { "dofile", "loadfile", "load",
					      "require", "collectgarbage",
					      NULL };
	lua_State *L = luaL_newstate();
	const luaL_Reg *l;
	int i;

	for (l = libs; l->func; l++) {
		luaL_requiref(L, l->name, l->func, 1);
		lua_pop(L, 1);
	}
	for (i = 0; unsafe[i]; i++) {
		lua_pushnil(L);
		lua_setglobal(L, unsafe[i]);
	}
	return L;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *from = new_state(), *to = new_state();
	struct lcopy c;

	lua_sethook(from, limit, LUA_MASKCOUNT, 100000);
	if (!luaL_loadbufferx(from, (const char *)data, size, "fuzz", "t") &&
	    !lua_pcall(from, 0, 1, 0)) {
		lua_sethook(from, NULL, 0, 0);
		lcopy_begin(&c, from, to, 0);
		if (!lcopy_value(&c, -1))
			lua_pop(to, 1);
		lcopy_end(&c);
	}
	lua_close(from);
	lua_close(to);
	return 0;
}
