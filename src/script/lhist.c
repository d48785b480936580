/*
 * Histogram objects for scripts: copies of a result's histograms, and
 * the script's own (histogram()). Values in and out in microseconds.
 */
#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

#include "stats/hist.h"
#include "script/lhist.h"

#define HIST_MT "netstage.hist"

void lhist_push(lua_State *L, const struct hist *h)
{
	memcpy(lua_newuserdata(L, sizeof(*h)), h, sizeof(*h));
	luaL_setmetatable(L, HIST_MT);
}

static int lhist_index(lua_State *L)
{
	const struct hist *h = luaL_checkudata(L, 1, HIST_MT);
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "count"))
		lua_pushinteger(L, (lua_Integer)h->count);
	else if (!strcmp(k, "min"))
		lua_pushnumber(L, h->count ? h->min / 1e3 : 0);
	else if (!strcmp(k, "max"))
		lua_pushnumber(L, h->count ? h->max / 1e3 : 0);
	else if (!strcmp(k, "mean"))
		lua_pushnumber(L, hist_mean(h) / 1e3);
	else if (!strcmp(k, "stddev"))
		lua_pushnumber(L, hist_stddev(h) / 1e3);
	else if (luaL_getmetafield(L, 1, "methods") == LUA_TTABLE)
		lua_getfield(L, -1, k);
	else
		lua_pushnil(L);
	return 1;
}

/* h:percentile(p): p in [0, 100], us. */
static int lhist_pct(lua_State *L)
{
	const struct hist *h = luaL_checkudata(L, 1, HIST_MT);
	double p = luaL_checknumber(L, 2);

	luaL_argcheck(L, p >= 0 && p <= 100, 2, "a percentile is 0 .. 100");
	lua_pushnumber(L, hist_percentile(h, p) / 1e3);
	return 1;
}

/* h:buckets(): { {lo = us, hi = us, count = n}, ... }, non-empty ones. */
static int lhist_buckets(lua_State *L)
{
	const struct hist *h = luaL_checkudata(L, 1, HIST_MT);
	lua_Integer n = 0;
	uint64_t lo, hi;
	unsigned int i;

	lua_newtable(L);
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		hist_bucket_range(i, &lo, &hi);
		lua_createtable(L, 0, 3);
		lua_pushnumber(L, lo / 1e3);
		lua_setfield(L, -2, "lo");
		lua_pushnumber(L, hi / 1e3);
		lua_setfield(L, -2, "hi");
		lua_pushinteger(L, (lua_Integer)h->bucket[i]);
		lua_setfield(L, -2, "count");
		lua_rawseti(L, -2, ++n);
	}
	return 1;
}

/* h:add(us [, count]): the script's own values into its histogram. */
static int lhist_add(lua_State *L)
{
	struct hist *h = luaL_checkudata(L, 1, HIST_MT);
	double us = luaL_checknumber(L, 2);
	lua_Integer n = luaL_optinteger(L, 3, 1);

	luaL_argcheck(L, us >= 0 && us < 1e12, 2,
		      "h:add: a value is 0 or more us (under 1e12)");
	luaL_argcheck(L, n >= 0 && n <= 1000000000, 3,
		      "h:add: a count is 0 .. 1e9");
	hist_add_n(h, (uint64_t)(us * 1e3 + 0.5), (uint64_t)n);
	lua_settop(L, 1);
	return 1;
}

/* histogram(): an empty one, for the script's own values (us). */
static int lhist_new(lua_State *L)
{
	struct hist h;

	hist_reset(&h);
	lhist_push(L, &h);
	return 1;
}

static int lhist_tostring(lua_State *L)
{
	const struct hist *h = luaL_checkudata(L, 1, HIST_MT);

	lua_pushfstring(L, "hist(count %I, p50 %f us)", (lua_Integer)h->count,
			hist_percentile(h, 50) / 1e3);
	return 1;
}

void lhist_open(lua_State *L)
{
	static const luaL_Reg hist[] = {
		{ "__index", lhist_index }, { "__tostring", lhist_tostring },
		{ NULL, NULL }
	};
	static const luaL_Reg hist_methods[] = {
		{ "percentile", lhist_pct }, { "buckets", lhist_buckets },
		{ "add", lhist_add }, { NULL, NULL }
	};

	luaL_newmetatable(L, HIST_MT);
	luaL_setfuncs(L, hist, 0);
	luaL_newlib(L, hist_methods);
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
	lua_register(L, "histogram", lhist_new);
}
