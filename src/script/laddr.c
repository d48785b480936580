/*
 * Addresses for scripts: sockaddr (IPv4 or IPv6, one type), in_addr and
 * in6_addr, with tostring and ==. Plain bytes, so they may be copied
 * into the workers' states.
 */
#include <arpa/inet.h>
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "script/laddr.h"

struct lsa *lsa_push(lua_State *L, const struct sockaddr *sa, socklen_t len)
{
	struct lsa *a = lua_newuserdata(L, sizeof(*a));

	memset(a, 0, sizeof(*a));
	if (len > sizeof(a->ss))
		len = sizeof(a->ss);
	if (sa)
		memcpy(&a->ss, sa, len);
	a->len = len;
	luaL_setmetatable(L, SOCKADDR_MT);
	return a;
}

struct lsa *lsa_check(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, SOCKADDR_MT);
}

static struct sockaddr_in *sin4(struct lsa *a)
{
	return (struct sockaddr_in *)&a->ss;
}

static struct sockaddr_in6 *sin6(struct lsa *a)
{
	return (struct sockaddr_in6 *)&a->ss;
}

/* An in_addr argument: the object, or a dotted string. */
static struct in_addr in_arg(lua_State *L, int idx)
{
	struct in_addr *p = luaL_testudata(L, idx, IN_ADDR_MT), a;

	if (p)
		return *p;
	if (inet_pton(AF_INET, luaL_checkstring(L, idx), &a) != 1)
		luaL_argerror(L, idx, "not an IPv4 address");
	return a;
}

static struct in6_addr in6_arg(lua_State *L, int idx)
{
	struct in6_addr *p = luaL_testudata(L, idx, IN6_ADDR_MT), a;

	if (p)
		return *p;
	if (inet_pton(AF_INET6, luaL_checkstring(L, idx), &a) != 1)
		luaL_argerror(L, idx, "not an IPv6 address");
	return a;
}

static int l_in_addr(lua_State *L)
{
	struct in_addr a = lua_isnoneornil(L, 1) ? (struct in_addr){ 0 }
						 : in_arg(L, 1);

	*(struct in_addr *)lua_newuserdata(L, sizeof(a)) = a;
	luaL_setmetatable(L, IN_ADDR_MT);
	return 1;
}

static int l_in6_addr(lua_State *L)
{
	struct in6_addr a = lua_isnoneornil(L, 1) ? in6addr_any
						  : in6_arg(L, 1);

	*(struct in6_addr *)lua_newuserdata(L, sizeof(a)) = a;
	luaL_setmetatable(L, IN6_ADDR_MT);
	return 1;
}

static int sockaddr_new(lua_State *L, int family)
{
	int port = (int)luaL_optinteger(L, 1, 0), has_addr = !lua_isnoneornil(L, 2);
	struct in6_addr a6 = in6addr_any;
	struct in_addr a4 = { 0 };
	struct lsa *a;

	if (has_addr && family == AF_INET)
		a4 = in_arg(L, 2);
	else if (has_addr)
		a6 = in6_arg(L, 2);
	a = lsa_push(L, NULL, family == AF_INET ? sizeof(struct sockaddr_in)
						: sizeof(struct sockaddr_in6));
	a->ss.ss_family = family;
	if (family == AF_INET) {
		sin4(a)->sin_port = htons(port);
		sin4(a)->sin_addr = a4;
	} else {
		sin6(a)->sin6_port = htons(port);
		sin6(a)->sin6_addr = a6;
	}
	return 1;
}

static int l_sockaddr_in(lua_State *L)
{
	return sockaddr_new(L, AF_INET);
}

static int l_sockaddr_in6(lua_State *L)
{
	return sockaddr_new(L, AF_INET6);
}

static int sa_index(lua_State *L)
{
	struct lsa *a = lsa_check(L, 1);
	const char *k = luaL_checkstring(L, 2);
	int v4 = a->ss.ss_family == AF_INET;

	if (!strcmp(k, "family") || !strcmp(k, "sin_family") ||
	    !strcmp(k, "sin6_family") || !strcmp(k, "sa_family"))
		lua_pushinteger(L, a->ss.ss_family);
	else if (!strcmp(k, "port"))
		lua_pushinteger(L, ntohs(v4 ? sin4(a)->sin_port
					    : sin6(a)->sin6_port));
	else if (!strcmp(k, "sin_port") || !strcmp(k, "sin6_port"))
		lua_pushinteger(L, v4 ? sin4(a)->sin_port : sin6(a)->sin6_port);
	else if (v4 && (!strcmp(k, "sin_addr") || !strcmp(k, "addr"))) {
		*(struct in_addr *)lua_newuserdata(L, sizeof(struct in_addr)) =
			sin4(a)->sin_addr;
		luaL_setmetatable(L, IN_ADDR_MT);
	} else if (!v4 && (!strcmp(k, "sin6_addr") || !strcmp(k, "addr"))) {
		*(struct in6_addr *)lua_newuserdata(L, sizeof(struct in6_addr)) =
			sin6(a)->sin6_addr;
		luaL_setmetatable(L, IN6_ADDR_MT);
	} else if (!strcmp(k, "len"))
		lua_pushinteger(L, a->len);
	else
		lua_pushnil(L);
	return 1;
}

static int sa_newindex(lua_State *L)
{
	struct lsa *a = lsa_check(L, 1);
	const char *k = luaL_checkstring(L, 2);
	int v4 = a->ss.ss_family == AF_INET;

	if (!strcmp(k, "port")) {
		uint16_t p = htons((uint16_t)luaL_checkinteger(L, 3));

		*(v4 ? &sin4(a)->sin_port : &sin6(a)->sin6_port) = p;
	} else if (!strcmp(k, "sin_port") || !strcmp(k, "sin6_port")) {
		*(v4 ? &sin4(a)->sin_port : &sin6(a)->sin6_port) =
			(uint16_t)luaL_checkinteger(L, 3);
	} else if (v4 && (!strcmp(k, "sin_addr") || !strcmp(k, "addr"))) {
		sin4(a)->sin_addr = in_arg(L, 3);
	} else if (!v4 && (!strcmp(k, "sin6_addr") || !strcmp(k, "addr"))) {
		sin6(a)->sin6_addr = in6_arg(L, 3);
	} else {
		return luaL_error(L, "sockaddr has no settable field '%s'", k);
	}
	return 0;
}

static int sa_tostring(lua_State *L)
{
	struct lsa *a = lsa_check(L, 1);
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &sin4(a)->sin_addr, host, sizeof(host));
		lua_pushfstring(L, "%s:%d", host, ntohs(sin4(a)->sin_port));
	} else if (a->ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6(a)->sin6_addr, host, sizeof(host));
		lua_pushfstring(L, "[%s]:%d", host, ntohs(sin6(a)->sin6_port));
	} else {
		lua_pushfstring(L, "sockaddr(family %d)", a->ss.ss_family);
	}
	return 1;
}

static int sa_eq(lua_State *L)
{
	struct lsa *a = lsa_check(L, 1), *b = lsa_check(L, 2);

	lua_pushboolean(L, a->len == b->len && !memcmp(&a->ss, &b->ss, a->len));
	return 1;
}

static int in_index(lua_State *L)
{
	struct in_addr *a = luaL_checkudata(L, 1, IN_ADDR_MT);

	if (!strcmp(luaL_checkstring(L, 2), "s_addr"))
		lua_pushinteger(L, a->s_addr);
	else
		lua_pushnil(L);
	return 1;
}

static int in_tostring(lua_State *L)
{
	char s[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, luaL_checkudata(L, 1, IN_ADDR_MT), s, sizeof(s));
	lua_pushstring(L, s);
	return 1;
}

static int in_eq(lua_State *L)
{
	struct in_addr *a = luaL_checkudata(L, 1, IN_ADDR_MT),
		       *b = luaL_checkudata(L, 2, IN_ADDR_MT);

	lua_pushboolean(L, a->s_addr == b->s_addr);
	return 1;
}

static int in6_index(lua_State *L)
{
	struct in6_addr *a = luaL_checkudata(L, 1, IN6_ADDR_MT);

	if (!strcmp(luaL_checkstring(L, 2), "s6_addr"))
		lua_pushlstring(L, (const char *)a->s6_addr, 16);
	else
		lua_pushnil(L);
	return 1;
}

static int in6_tostring(lua_State *L)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, luaL_checkudata(L, 1, IN6_ADDR_MT), s, sizeof(s));
	lua_pushstring(L, s);
	return 1;
}

static int in6_eq(lua_State *L)
{
	lua_pushboolean(L, !memcmp(luaL_checkudata(L, 1, IN6_ADDR_MT),
				   luaL_checkudata(L, 2, IN6_ADDR_MT), 16));
	return 1;
}

void laddr_open(lua_State *L)
{
	static const luaL_Reg sa[] = {
		{ "__index", sa_index }, { "__newindex", sa_newindex },
		{ "__tostring", sa_tostring }, { "__eq", sa_eq }, { NULL, NULL }
	};
	static const luaL_Reg in[] = {
		{ "__index", in_index }, { "__tostring", in_tostring },
		{ "__eq", in_eq }, { NULL, NULL }
	};
	static const luaL_Reg in6[] = {
		{ "__index", in6_index }, { "__tostring", in6_tostring },
		{ "__eq", in6_eq }, { NULL, NULL }
	};
	static const luaL_Reg fns[] = {
		{ "sockaddr_in", l_sockaddr_in }, { "sockaddr_in6", l_sockaddr_in6 },
		{ "in_addr", l_in_addr }, { "in6_addr", l_in6_addr },
		{ NULL, NULL }
	};

	lbase_new_type(L, SOCKADDR_MT, sa);
	lbase_new_type(L, IN_ADDR_MT, in);
	lbase_new_type(L, IN6_ADDR_MT, in6);
	luaL_setfuncs(L, fns, 0);	/* into the table on top */
}
