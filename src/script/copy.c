#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/copy.h"
#include "script/lbase.h"

/* Library tables both states have: a reference maps to the other's own. */
static const char *const shared_libs[] = {
	"string", "table", "math", "io", "os", "coroutine", "utf8", "debug",
	"package", "bit32", "bit", "S", NULL
};

static const char *const std_files[] = { "stdin", "stdout", "stderr", NULL };

/* Userdata that is plain bytes and may be copied as such. */
static const char *const plain_types[] = {
	SOCKADDR_MT, IN_ADDR_MT, IN6_ADDR_MT, NULL
};

static int copy(struct lcopy *c, int idx, const void **wrapper);

static int fail(struct lcopy *c, const char *what)
{
	snprintf(c->err, sizeof(c->err), "%s: %s", c->where ? c->where : "copy",
		 what);
	return -1;
}

/* map[key] = value on top of `to` (left there). */
static void remember(struct lcopy *c, const void *key)
{
	lua_pushlightuserdata(c->to, (void *)key);
	lua_pushvalue(c->to, -2);
	lua_rawset(c->to, c->map);
}

/* Pushes the known copy of key onto `to` and returns 1, or returns 0. */
static int known(struct lcopy *c, const void *key)
{
	lua_pushlightuserdata(c->to, (void *)key);
	if (lua_rawget(c->to, c->map) != LUA_TNIL)
		return 1;
	lua_pop(c->to, 1);
	return 0;
}

void lcopy_begin(struct lcopy *c, lua_State *from, lua_State *to, int track)
{
	int i;

	c->from = from;
	c->to = to;
	c->track = track;
	c->where = NULL;
	c->err[0] = '\0';
	lua_newtable(to);
	c->map = lua_gettop(to);
	lua_pushglobaltable(from);
	lua_pushglobaltable(to);
	remember(c, lua_topointer(from, -1));
	lua_pop(to, 1);
	for (i = 0; shared_libs[i]; i++) {
		int ft = lua_getfield(from, -1, shared_libs[i]);

		if (lua_getglobal(to, shared_libs[i]) == LUA_TTABLE &&
		    ft == LUA_TTABLE)
			remember(c, lua_topointer(from, -1));
		lua_pop(to, 1);
		lua_pop(from, 1);
	}
	/* The standard files are each state's own. */
	if (lua_getfield(from, -1, "io") == LUA_TTABLE &&
	    lua_getglobal(to, "io") == LUA_TTABLE) {
		for (i = 0; std_files[i]; i++) {
			lua_getfield(from, -1, std_files[i]);
			if (lua_getfield(to, -1, std_files[i]) == LUA_TUSERDATA)
				remember(c, lua_topointer(from, -1));
			lua_pop(to, 1);
			lua_pop(from, 1);
		}
		lua_pop(to, 1);
	} else if (lua_type(from, -1) == LUA_TTABLE) {
		lua_pop(to, 1);
	}
	lua_pop(from, 2);
}

void lcopy_end(struct lcopy *c)
{
	lua_remove(c->to, c->map);
}

/* Where, in `to`, the value of a collect() wrapper went. */
static void record_collected(struct lcopy *c, const void *wrapper,
			     const char *k1, int i1, const char *k2, int i2)
{
	lua_State *to = c->to;

	if (lua_getfield(to, LUA_REGISTRYINDEX, COLLECTED_KEY) != LUA_TTABLE) {
		lua_pop(to, 1);
		lua_newtable(to);
		lua_pushvalue(to, -1);
		lua_setfield(to, LUA_REGISTRYINDEX, COLLECTED_KEY);
	}
	lua_pushlightuserdata(to, (void *)wrapper);
	if (lua_rawget(to, -2) != LUA_TNIL) {
		lua_pop(to, 2);	/* the first place wins */
		return;
	}
	lua_pop(to, 1);
	lua_pushlightuserdata(to, (void *)wrapper);
	lua_createtable(to, 0, 2);
	lua_pushvalue(to, i1);
	lua_setfield(to, -2, k1);
	lua_pushvalue(to, i2);
	lua_setfield(to, -2, k2);
	lua_rawset(to, -3);
	lua_pop(to, 1);
}

static int copy_table(struct lcopy *c, int idx)
{
	lua_State *from = c->from, *to = c->to;
	const void *w;
	int t, k;

	lua_newtable(to);
	remember(c, lua_topointer(from, idx));
	t = lua_gettop(to);
	lua_pushnil(from);
	while (lua_next(from, idx)) {
		if (copy(c, lua_gettop(from) - 1, NULL))
			return lua_pop(from, 2), -1;
		k = lua_gettop(to);
		w = NULL;
		if (copy(c, lua_gettop(from), &w))
			return lua_pop(from, 2), -1;
		if (w) {
			lua_pushvalue(to, t);
			record_collected(c, w, "t", lua_gettop(to), "k", k);
			lua_pop(to, 1);
		}
		lua_rawset(to, t);
		lua_pop(from, 1);
	}
	/* A table with a metatable (a class, say) keeps it. */
	if (lua_getmetatable(from, idx)) {
		int rc = copy(c, lua_gettop(from), NULL);

		lua_pop(from, 1);
		if (rc)
			return -1;
		lua_setmetatable(to, t);
	}
	return 0;
}

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
	luaL_addlstring(ud, p, sz);
	return 0;
}

/* Upvalue n of the function at fidx (from) into the copy at tf (to). */
static int copy_upvalue(struct lcopy *c, int fidx, int tf, int n)
{
	lua_State *from = c->from, *to = c->to;
	const void *id = lua_upvalueid(from, fidx, n), *w = NULL;
	const char *name, *saved = c->where;
	char where[200];
	int rc;

	lua_pushlightuserdata(to, (void *)id);
	if (lua_rawget(to, c->map) == LUA_TTABLE) {
		/* Shared with a function copied before: share it here too. */
		lua_rawgeti(to, -1, 1);
		lua_rawgeti(to, -2, 2);
		lua_upvaluejoin(to, tf, n, -2, (int)lua_tointeger(to, -1));
		lua_pop(to, 3);
		return 0;
	}
	lua_pop(to, 1);
	name = lua_getupvalue(from, fidx, n);
	snprintf(where, sizeof(where), "%s, upvalue '%s'",
		 saved ? saved : "copy", name && *name ? name : "?");
	c->where = where;
	rc = copy(c, lua_gettop(from), &w);
	c->where = saved;
	lua_pop(from, 1);
	if (rc)
		return -1;
	lua_setupvalue(to, tf, n);
	lua_pushlightuserdata(to, (void *)id);
	lua_createtable(to, 2, 0);
	lua_pushvalue(to, tf);
	lua_rawseti(to, -2, 1);
	lua_pushinteger(to, n);
	lua_rawseti(to, -2, 2);
	lua_rawset(to, c->map);
	if (w) {
		lua_pushinteger(to, n);
		record_collected(c, w, "f", tf, "n", lua_gettop(to));
		lua_pop(to, 1);
	}
	return 0;
}

static int copy_lua_function(struct lcopy *c, int idx)
{
	lua_State *from = c->from, *to = c->to;
	luaL_Buffer b;
	int n, tf;

	lua_pushvalue(from, idx);
	luaL_buffinit(from, &b);
	lua_dump(from, dump_writer, &b, 0);
	luaL_pushresult(&b);
	if (luaL_loadbufferx(to, lua_tostring(from, -1),
			     lua_rawlen(from, -1), "=copy", "b") != LUA_OK) {
		lua_pop(from, 2);
		return fail(c, lua_tostring(to, -1)), lua_pop(to, 1), -1;
	}
	lua_pop(from, 2);
	remember(c, lua_topointer(from, idx));
	tf = lua_gettop(to);
	for (n = 1; lua_getupvalue(from, idx, n); n++) {
		lua_pop(from, 1);
		if (copy_upvalue(c, idx, tf, n))
			return -1;
	}
	return 0;
}

static int copy_userdata(struct lcopy *c, int idx)
{
	lua_State *from = c->from, *to = c->to;
	const char *name = NULL;
	size_t len;
	int i;

	if (lua_getmetatable(from, idx)) {
		if (lua_getfield(from, -1, "__name") == LUA_TSTRING)
			name = lua_tostring(from, -1);
		lua_pop(from, 2);	/* name stays in the registry's table */
	}
	for (i = 0; name && plain_types[i]; i++) {
		if (strcmp(name, plain_types[i]))
			continue;
		len = lua_rawlen(from, idx);
		memcpy(lua_newuserdata(to, len), lua_touserdata(from, idx),
		       len);
		luaL_setmetatable(to, name);
		return 0;
	}
	return fail(c, name ? "this kind of object cannot be copied"
			    : "a userdata cannot be copied");
}

static int copy(struct lcopy *c, int idx, const void **wrapper)
{
	lua_State *from = c->from, *to = c->to;
	int t = lua_type(from, idx);

	idx = lua_absindex(from, idx);
	if (!lua_checkstack(to, 8) || !lua_checkstack(from, 8))
		return fail(c, "too deeply nested");
	switch (t) {
	case LUA_TNIL:
		lua_pushnil(to);
		return 0;
	case LUA_TBOOLEAN:
		lua_pushboolean(to, lua_toboolean(from, idx));
		return 0;
	case LUA_TNUMBER:
		if (lua_isinteger(from, idx))
			lua_pushinteger(to, lua_tointeger(from, idx));
		else
			lua_pushnumber(to, lua_tonumber(from, idx));
		return 0;
	case LUA_TSTRING: {
		size_t len;
		const char *s = lua_tolstring(from, idx, &len);

		lua_pushlstring(to, s, len);
		return 0;
	}
	case LUA_TLIGHTUSERDATA:
		lua_pushlightuserdata(to, lua_touserdata(from, idx));
		return 0;
	default:
		break;
	}
	if (known(c, lua_topointer(from, idx)))
		return 0;
	if (t == LUA_TTABLE && c->track && wrapper &&
	    luaL_getmetafield(from, idx, "__name") == LUA_TSTRING) {
		int is_collect = !strcmp(lua_tostring(from, -1), COLLECT_MT);

		lua_pop(from, 1);
		if (is_collect) {
			*wrapper = lua_topointer(from, idx);
			lua_rawgeti(from, idx, 1);
			t = copy(c, -1, NULL);
			lua_pop(from, 1);
			return t;
		}
	}
	switch (t) {
	case LUA_TTABLE:
		return copy_table(c, idx);
	case LUA_TFUNCTION:
		if (!lua_iscfunction(from, idx))
			return copy_lua_function(c, idx);
		if (lua_getupvalue(from, idx, 1))
			return lua_pop(from, 1),
			       fail(c, "a C function with upvalues cannot be copied");
		lua_pushcfunction(to, lua_tocfunction(from, idx));
		return 0;
	case LUA_TUSERDATA:
		return copy_userdata(c, idx);
	default:
		return fail(c, "a coroutine cannot be copied");
	}
}

int lcopy_value(struct lcopy *c, int idx)
{
	int top = lua_gettop(c->to), ftop = lua_gettop(c->from);

	if (copy(c, idx, NULL)) {
		lua_settop(c->to, top);
		lua_settop(c->from, ftop);
		return -1;
	}
	return 0;
}

void lcopy_globals(struct lcopy *c)
{
	lua_State *from = c->from, *to = c->to;
	int fg, tg, top;
	const void *w;
	char where[200];

	lua_pushglobaltable(from);
	fg = lua_gettop(from);
	lua_pushglobaltable(to);
	tg = lua_gettop(to);
	lua_pushnil(from);
	while (lua_next(from, fg)) {
		top = lua_gettop(from);
		if (lua_type(from, -2) != LUA_TSTRING ||
		    lua_getfield(to, tg, lua_tostring(from, -2)) != LUA_TNIL) {
			lua_settop(to, tg);
			lua_pop(from, 1);
			continue;
		}
		lua_pop(to, 1);
		lua_pushstring(to, lua_tostring(from, -2));
		snprintf(where, sizeof(where), "global '%s'",
			 lua_tostring(from, -2));
		c->where = where;
		w = NULL;
		if (!copy(c, top, &w)) {
			if (w)
				record_collected(c, w, "t", tg, "k", tg + 1);
			lua_rawset(to, tg);
		}
		lua_settop(to, tg);
		lua_settop(from, top - 1);
	}
	lua_settop(to, tg - 1);
	lua_settop(from, fg - 1);
	c->where = NULL;
}
