/*
 * Socket calls for scripts. Each returns its result, or nil and an
 * error object (tostring gives strerror, .errno the number, .name the
 * symbol) and remembers the errno for the packet hook that returns -1.
 */
#include <errno.h>
#include <lauxlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "script/laddr.h"
#include "script/lmsg.h"
#include "script/lsock.h"
#include "script/lconst.h"

static int err_tostring(lua_State *L)
{
	lua_getfield(L, 1, "errno");
	lua_pushstring(L, strerror((int)lua_tointeger(L, -1)));
	return 1;
}

static int err_eq(lua_State *L)
{
	lua_getfield(L, 1, "errno");
	lua_getfield(L, 2, "errno");
	lua_pushboolean(L, lua_rawequal(L, -1, -2));
	return 1;
}

int lsock_fail(lua_State *L, int e)
{
	const char *name = strerrorname_np(e);
	struct lsock_info *li = lsock_info(L);

	if (li)
		li->last_errno = e;
	lua_pushnil(L);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, e);
	lua_setfield(L, -2, "errno");
	lua_pushstring(L, name ? name : "?");
	lua_setfield(L, -2, "name");
	luaL_setmetatable(L, ERROR_MT);
	return 2;
}

static int result(lua_State *L, long rc)
{
	if (rc < 0)
		return lsock_fail(L, errno);
	lua_pushinteger(L, rc);
	return 1;
}

static int ok(lua_State *L, int rc)
{
	if (rc < 0)
		return lsock_fail(L, errno);
	lua_pushboolean(L, 1);
	return 1;
}

static int fd_arg(lua_State *L)
{
	return (int)luaL_checkinteger(L, 1);
}

static int l_socket(lua_State *L)
{
	return result(L, socket((int)luaL_checkinteger(L, 1),
				(int)luaL_checkinteger(L, 2),
				(int)luaL_optinteger(L, 3, 0)));
}

static int l_close(lua_State *L)
{
	return ok(L, close(fd_arg(L)));
}

static int l_bind(lua_State *L)
{
	struct lsa *a = lsa_check(L, 2);

	return ok(L, bind(fd_arg(L), (struct sockaddr *)&a->ss, a->len));
}

static int l_connect(lua_State *L)
{
	struct lsa *a = lsa_check(L, 2);

	return ok(L, connect(fd_arg(L), (struct sockaddr *)&a->ss, a->len));
}

static int name_of(lua_State *L, int peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc = peer ? getpeername(fd_arg(L), (struct sockaddr *)&ss, &len)
		      : getsockname(fd_arg(L), (struct sockaddr *)&ss, &len);

	if (rc < 0)
		return lsock_fail(L, errno);
	lsa_push(L, (struct sockaddr *)&ss, len);
	return 1;
}

static int l_getsockname(lua_State *L)
{
	return name_of(L, 0);
}

static int l_getpeername(lua_State *L)
{
	return name_of(L, 1);
}

/* Options whose value is a struct with a table form. */
static int is_linger(int level, int name)
{
	return level == SOL_SOCKET && name == SO_LINGER;
}

static int is_timeval(int level, int name)
{
	return level == SOL_SOCKET && (name == SO_RCVTIMEO ||
				       name == SO_SNDTIMEO);
}

static int is_string_opt(int level, int name)
{
	return (level == SOL_SOCKET && name == SO_BINDTODEVICE) ||
	       (level == IPPROTO_TCP && name == TCP_CONGESTION);
}

static lua_Integer field(lua_State *L, int t, const char *k)
{
	lua_Integer v;

	lua_getfield(L, t, k);
	v = luaL_optinteger(L, -1, 0);
	lua_pop(L, 1);
	return v;
}

/*
 * setsockopt(fd, level, name, value [, len]): value is an integer or
 * boolean (int), a string (its bytes, or the first len), or a table for
 * SO_LINGER {onoff, linger} and SO_RCVTIMEO/SO_SNDTIMEO {sec, usec}.
 */
static int l_setsockopt(lua_State *L)
{
	int fd = fd_arg(L), level = (int)luaL_checkinteger(L, 2),
	    name = (int)luaL_checkinteger(L, 3), i;
	struct linger lg;
	struct timeval tv;
	const void *p = &i;
	size_t len = sizeof(i);

	switch (lua_type(L, 4)) {
	case LUA_TBOOLEAN:
		i = lua_toboolean(L, 4);
		break;
	case LUA_TNUMBER:
		i = (int)luaL_checkinteger(L, 4);
		break;
	case LUA_TSTRING:
		p = lua_tolstring(L, 4, &len);
		if (!lua_isnoneornil(L, 5)) {
			lua_Integer n = luaL_checkinteger(L, 5);

			luaL_argcheck(L, n >= 0 && (size_t)n <= len, 5,
				      "longer than the string");
			len = n;
		}
		break;
	case LUA_TTABLE:
		if (is_linger(level, name)) {
			lg.l_onoff = (int)field(L, 4, "onoff");
			lg.l_linger = (int)field(L, 4, "linger");
			p = &lg, len = sizeof(lg);
		} else if (is_timeval(level, name)) {
			tv.tv_sec = field(L, 4, "sec");
			tv.tv_usec = field(L, 4, "usec");
			p = &tv, len = sizeof(tv);
		} else {
			return luaL_argerror(L, 4, "no table form for this "
					     "option: pass its bytes as a string");
		}
		break;
	default:
		return luaL_argerror(L, 4, "integer, boolean, string or table");
	}
	return ok(L, setsockopt(fd, level, name, p, (socklen_t)len));
}

/*
 * getsockopt(fd, level, name [, size]): an integer; a string for
 * SO_BINDTODEVICE and TCP_CONGESTION, or the raw bytes when size is
 * given; a table for SO_LINGER and the timeouts.
 */
static int l_getsockopt(lua_State *L)
{
	int fd = fd_arg(L), level = (int)luaL_checkinteger(L, 2),
	    name = (int)luaL_checkinteger(L, 3);
	lua_Integer want = luaL_optinteger(L, 4, -1);
	char buf[512];
	socklen_t len = sizeof(buf);

	if (want > (lua_Integer)sizeof(buf))
		return luaL_argerror(L, 4, "512 bytes at most");
	if (want >= 0)
		len = (socklen_t)want;
	else if (!is_string_opt(level, name) && !is_linger(level, name) &&
		 !is_timeval(level, name))
		len = sizeof(int);
	memset(buf, 0, sizeof(buf));
	if (getsockopt(fd, level, name, buf, &len) < 0)
		return lsock_fail(L, errno);
	if (want >= 0 || is_string_opt(level, name)) {
		lua_pushlstring(L, buf, want < 0 ? strnlen(buf, len) : len);
	} else if (is_linger(level, name)) {
		struct linger *lg = (void *)buf;

		lua_createtable(L, 0, 2);
		lua_pushinteger(L, lg->l_onoff);
		lua_setfield(L, -2, "onoff");
		lua_pushinteger(L, lg->l_linger);
		lua_setfield(L, -2, "linger");
	} else if (is_timeval(level, name)) {
		struct timeval *tv = (void *)buf;

		lua_createtable(L, 0, 2);
		lua_pushinteger(L, tv->tv_sec);
		lua_setfield(L, -2, "sec");
		lua_pushinteger(L, tv->tv_usec);
		lua_setfield(L, -2, "usec");
	} else {
		int v;

		memcpy(&v, buf, sizeof(v));
		lua_pushinteger(L, v);
	}
	return 1;
}

/* Length argument: given, or the buffer's; never beyond it. */
static size_t len_arg(lua_State *L, int idx, size_t have)
{
	lua_Integer n = luaL_optinteger(L, idx, (lua_Integer)have);

	luaL_argcheck(L, n >= 0 && (size_t)n <= have, idx,
		      "longer than the buffer");
	return (size_t)n;
}

/*
 * recv(fd, buf, len, flags): into a buffer, the byte count;
 * recv(fd, n [, flags]): up to n bytes, as a string.
 */
static int l_recv(lua_State *L)
{
	int fd = fd_arg(L);
	size_t have;
	char *p;
	ssize_t r;

	if (lua_type(L, 2) == LUA_TNUMBER) {
		luaL_Buffer b;
		size_t n = (size_t)luaL_checkinteger(L, 2);

		p = luaL_buffinitsize(L, &b, n);
		r = recv(fd, p, n, (int)luaL_optinteger(L, 3, 0));
		if (r < 0)
			return lsock_fail(L, errno);
		luaL_pushresultsize(&b, r);
		return 1;
	}
	p = (char *)lbuf_arg(L, 2, &have, 1);
	return result(L, recv(fd, p, len_arg(L, 3, have),
			      (int)luaL_optinteger(L, 4, 0)));
}

/* recvfrom(fd, buf, len, flags [, sockaddr]): fills the sockaddr. */
static int l_recvfrom(lua_State *L)
{
	size_t have;
	char *p = (char *)lbuf_arg(L, 2, &have, 1);
	size_t len = len_arg(L, 3, have);
	int flags = (int)luaL_optinteger(L, 4, 0);
	struct lsa *a = lua_isnoneornil(L, 5) ? NULL : lsa_check(L, 5);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	ssize_t r = recvfrom(fd_arg(L), p, len, flags,
			     (struct sockaddr *)&ss, &sl);

	if (r >= 0 && a) {
		memcpy(&a->ss, &ss, sl < sizeof(a->ss) ? sl : sizeof(a->ss));
		a->len = sl;
	}
	return result(L, r);
}

static int l_recvmsg(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, 2);

	return result(L, recvmsg(fd_arg(L), &lm->h,
				 (int)luaL_optinteger(L, 3, 0)));
}

/* send(fd, buf or string [, len [, flags]]) */
static int l_send(lua_State *L)
{
	size_t have;
	const char *p = lbuf_arg(L, 2, &have, 0);

	return result(L, send(fd_arg(L), p, len_arg(L, 3, have),
			      (int)luaL_optinteger(L, 4, 0) | MSG_NOSIGNAL));
}

/* sendto(fd, buf or string, len, flags, sockaddr) */
static int l_sendto(lua_State *L)
{
	size_t have;
	const char *p = lbuf_arg(L, 2, &have, 0);
	size_t len = len_arg(L, 3, have);
	int flags = (int)luaL_optinteger(L, 4, 0) | MSG_NOSIGNAL;
	struct lsa *a = lsa_check(L, 5);

	return result(L, sendto(fd_arg(L), p, len, flags,
				(struct sockaddr *)&a->ss, a->len));
}

static int l_sendmsg(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, 2);

	return result(L, sendmsg(fd_arg(L), &lm->h,
				 (int)luaL_optinteger(L, 3, 0) | MSG_NOSIGNAL));
}

static const struct lconst consts[] = { LCONST_LIST };

void lsock_open(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "socket", l_socket }, { "close", l_close },
		{ "bind", l_bind }, { "connect", l_connect },
		{ "getsockname", l_getsockname },
		{ "getpeername", l_getpeername },
		{ "setsockopt", l_setsockopt }, { "getsockopt", l_getsockopt },
		{ "recv", l_recv }, { "recvfrom", l_recvfrom },
		{ "recvmsg", l_recvmsg }, { "send", l_send },
		{ "sendto", l_sendto }, { "sendmsg", l_sendmsg },
		{ NULL, NULL }
	};
	size_t i;

	luaL_newmetatable(L, ERROR_MT);
	lua_pushcfunction(L, err_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, err_eq);
	lua_setfield(L, -2, "__eq");
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	laddr_open(L);
	lmsg_open(L);
	for (i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
		lua_pushinteger(L, consts[i].value);
		lua_setfield(L, -2, consts[i].name);
	}
	/* Every name is a global too, as C spells it. */
	lua_pushglobaltable(L);
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -4);
	}
	lua_pop(L, 1);
	lua_setglobal(L, "S");
}
