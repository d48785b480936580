/*
 * Messages for scripts: the msghdr a packet hook receives (or one a
 * script makes with msghdr(n)), views of its iovec and control
 * messages, memory views (buf), and typed views of cmsg data. Views
 * keep their msghdr alive through a user value.
 */
#include <lauxlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <linux/errqueue.h>

#include "script/laddr.h"
#include "script/lmsg.h"

#define IOVS_MT "netstage.iovs"
#define IOV_MT "netstage.iovec"
#define CMSG_MT "netstage.cmsg"
#define U32_MT "netstage.uint32_ptr"

struct lview {
	void *p;
	size_t n;
};

static struct lview *view_push(lua_State *L, void *p, size_t n,
			       const char *mt, int owner)
{
	struct lview *v = lua_newuserdata(L, sizeof(*v));

	v->p = p;
	v->n = n;
	luaL_setmetatable(L, mt);
	if (owner) {
		lua_pushvalue(L, owner);
		lua_setuservalue(L, -2);
	}
	return v;
}

void lbuf_push(lua_State *L, void *p, size_t len)
{
	struct lbuf *b = lua_newuserdata(L, sizeof(*b));

	b->p = p;
	b->len = len;
	luaL_setmetatable(L, BUF_MT);
}

const char *lbuf_arg(lua_State *L, int idx, size_t *len, int writable)
{
	struct lbuf *b = luaL_testudata(L, idx, BUF_MT);

	if (b) {
		*len = b->len;
		return b->p;
	}
	if (writable)
		luaL_argerror(L, idx, "a buffer (msg.msg_iov[0].iov_base)");
	return luaL_checklstring(L, idx, len);
}

static int buf_len(lua_State *L)
{
	lua_pushinteger(L, ((struct lbuf *)luaL_checkudata(L, 1, BUF_MT))->len);
	return 1;
}

/* buf:string([n]): its first n bytes (all) as a string. */
static int buf_string(lua_State *L)
{
	struct lbuf *b = luaL_checkudata(L, 1, BUF_MT);
	lua_Integer n = luaL_optinteger(L, 2, (lua_Integer)b->len);

	luaL_argcheck(L, n >= 0 && (size_t)n <= b->len, 2, "out of range");
	lua_pushlstring(L, b->p, n);
	return 1;
}

/* buf:fill(s): copy s in (as much as fits); returns the bytes copied. */
static int buf_fill(lua_State *L)
{
	struct lbuf *b = luaL_checkudata(L, 1, BUF_MT);
	size_t n;
	const char *s = luaL_checklstring(L, 2, &n);

	if (n > b->len)
		n = b->len;
	memcpy(b->p, s, n);
	lua_pushinteger(L, n);
	return 1;
}

static int buf_tostring(lua_State *L)
{
	struct lbuf *b = luaL_checkudata(L, 1, BUF_MT);

	lua_pushfstring(L, "buf(%d bytes)", (int)b->len);
	return 1;
}

struct lmsg *lmsg_check(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, MSGHDR_MT);
}

static struct lmsg *lmsg_new(lua_State *L, size_t data)
{
	struct lmsg *lm = lua_newuserdata(L, sizeof(*lm) + data);

	memset(lm, 0, sizeof(*lm));
	lm->h.msg_iov = &lm->iov;
	lm->h.msg_iovlen = 1;
	lm->iov.iov_base = lm + 1;
	lm->iov.iov_len = data;
	lm->h.msg_name = &lm->name;
	lm->h.msg_namelen = sizeof(lm->name);
	lm->h.msg_control = lm->control;
	lm->h.msg_controllen = sizeof(lm->control);
	luaL_setmetatable(L, MSGHDR_MT);
	return lm;
}

/* msghdr([n]): a message with an n-byte buffer (default 65536). */
static int l_msghdr(lua_State *L)
{
	lua_Integer n = luaL_optinteger(L, 1, 65536);

	luaL_argcheck(L, n >= 0 && n <= (64 << 20), 1, "0 .. 64 MiB");
	lmsg_new(L, (size_t)n);
	return 1;
}

struct lmsg *lmsg_push_hook(lua_State *L)
{
	return lmsg_new(L, 0);
}

void lmsg_prepare(struct lmsg *lm, const struct msghdr *m, int receive)
{
	lm->iov = m->msg_iovlen ? m->msg_iov[0] : (struct iovec){ 0 };
	lm->h.msg_iov = &lm->iov;
	lm->h.msg_iovlen = 1;
	lm->h.msg_flags = 0;
	if (m->msg_name && !receive) {
		memcpy(&lm->name, m->msg_name, m->msg_namelen);
		lm->h.msg_name = &lm->name;
		lm->h.msg_namelen = m->msg_namelen;
	} else {
		lm->h.msg_name = receive ? &lm->name : NULL;
		lm->h.msg_namelen = receive ? sizeof(lm->name) : 0;
	}
	lm->h.msg_control = receive ? lm->control : m->msg_control;
	lm->h.msg_controllen = receive ? sizeof(lm->control)
				       : m->msg_controllen;
}

void lmsg_finish(const struct lmsg *lm, struct msghdr *m)
{
	if (m->msg_name && lm->h.msg_name == &lm->name) {
		socklen_t n = lm->h.msg_namelen < m->msg_namelen ?
			      lm->h.msg_namelen : m->msg_namelen;

		memcpy(m->msg_name, &lm->name, n);
		m->msg_namelen = lm->h.msg_namelen;
	}
	m->msg_flags = lm->h.msg_flags;
}

static struct cmsghdr *first_cmsg(struct lmsg *lm)
{
	return lm->h.msg_control ? CMSG_FIRSTHDR(&lm->h) : NULL;
}

static void push_cmsg(lua_State *L, struct cmsghdr *c, int owner)
{
	view_push(L, c, c->cmsg_len, CMSG_MT, owner);
}

/* msg:cmsg_firsthdr(): 1 and the first control message, or nil. */
static int msg_cmsg_firsthdr(lua_State *L)
{
	struct cmsghdr *c = first_cmsg(lmsg_check(L, 1));

	if (!c)
		return 0;
	lua_pushinteger(L, 1);
	push_cmsg(L, c, 1);
	return 2;
}

static int cmsgs_next(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, lua_upvalueindex(1));
	struct cmsghdr *c = lua_touserdata(L, lua_upvalueindex(2));
	lua_Integer i = lua_tointeger(L, lua_upvalueindex(3));

	c = c ? CMSG_NXTHDR(&lm->h, c) : first_cmsg(lm);
	if (!c)
		return 0;
	lua_pushlightuserdata(L, c);
	lua_replace(L, lua_upvalueindex(2));
	lua_pushinteger(L, ++i);
	lua_replace(L, lua_upvalueindex(3));
	lua_pushinteger(L, i);
	push_cmsg(L, c, lua_upvalueindex(1));
	return 2;
}

/* for i, cmsg in msg:cmsgs() do ... end */
static int msg_cmsgs(lua_State *L)
{
	lmsg_check(L, 1);
	lua_settop(L, 1);
	lua_pushnil(L);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, cmsgs_next, 3);
	return 1;
}

/* msg:data([n]): the first n received bytes (default: the iov length). */
static int msg_data(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, 1);
	lua_Integer n = luaL_optinteger(L, 2, (lua_Integer)lm->iov.iov_len);

	luaL_argcheck(L, n >= 0 && (size_t)n <= lm->iov.iov_len, 2,
		      "beyond the buffer");
	lua_pushlstring(L, lm->iov.iov_base, n);
	return 1;
}

static int msg_index(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, 1);
	const char *k = luaL_checkstring(L, 2);

	if (luaL_getmetafield(L, 1, "methods") == LUA_TTABLE &&
	    lua_getfield(L, -1, k) != LUA_TNIL)
		return 1;
	if (!strcmp(k, "msg_iov"))
		view_push(L, lm, 0, IOVS_MT, 1);
	else if (!strcmp(k, "msg_iovlen"))
		lua_pushinteger(L, lm->h.msg_iovlen);
	else if (!strcmp(k, "msg_name"))
		lm->h.msg_name && lm->h.msg_namelen ?
			(void)lsa_push(L, lm->h.msg_name, lm->h.msg_namelen) :
			lua_pushnil(L);
	else if (!strcmp(k, "msg_namelen"))
		lua_pushinteger(L, lm->h.msg_namelen);
	else if (!strcmp(k, "msg_control"))
		lm->h.msg_control ? lbuf_push(L, lm->h.msg_control,
					      lm->h.msg_controllen)
				  : lua_pushnil(L);
	else if (!strcmp(k, "msg_controllen"))
		lua_pushinteger(L, lm->h.msg_controllen);
	else if (!strcmp(k, "msg_flags"))
		lua_pushinteger(L, lm->h.msg_flags);
	else
		lua_pushnil(L);
	return 1;
}

static int msg_newindex(lua_State *L)
{
	struct lmsg *lm = lmsg_check(L, 1);
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "msg_flags"))
		lm->h.msg_flags = (int)luaL_checkinteger(L, 3);
	else if (!strcmp(k, "msg_name")) {
		struct lsa *a = lua_isnil(L, 3) ? NULL : lsa_check(L, 3);

		if (a)
			memcpy(&lm->name, &a->ss, a->len);
		lm->h.msg_name = a ? &lm->name : NULL;
		lm->h.msg_namelen = a ? a->len : 0;
	} else if (!strcmp(k, "msg_controllen")) {
		lua_Integer n = luaL_checkinteger(L, 3);

		luaL_argcheck(L, n >= 0 && n <= LMSG_CONTROL, 3, "0 .. 512");
		lm->h.msg_control = n ? lm->control : NULL;
		lm->h.msg_controllen = n;
	} else {
		return luaL_error(L, "msghdr has no settable field '%s'", k);
	}
	return 0;
}

static int iovs_index(lua_State *L)
{
	struct lview *v = luaL_checkudata(L, 1, IOVS_MT);
	struct lmsg *lm = v->p;
	lua_Integer i = luaL_checkinteger(L, 2);

	if (i < 0 || (size_t)i >= lm->h.msg_iovlen)
		return lua_pushnil(L), 1;
	lua_getuservalue(L, 1);
	view_push(L, &lm->h.msg_iov[i], 0, IOV_MT, lua_gettop(L));
	return 1;
}

static int iov_index(lua_State *L)
{
	struct iovec *iov = ((struct lview *)luaL_checkudata(L, 1, IOV_MT))->p;
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "iov_base"))
		lbuf_push(L, iov->iov_base, iov->iov_len);
	else if (!strcmp(k, "iov_len"))
		lua_pushinteger(L, iov->iov_len);
	else
		lua_pushnil(L);
	return 1;
}

static int cmsg_index(lua_State *L)
{
	struct cmsghdr *c = ((struct lview *)luaL_checkudata(L, 1, CMSG_MT))->p;
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "cmsg_level"))
		lua_pushinteger(L, c->cmsg_level);
	else if (!strcmp(k, "cmsg_type"))
		lua_pushinteger(L, c->cmsg_type);
	else if (!strcmp(k, "cmsg_len"))
		lua_pushinteger(L, c->cmsg_len);
	else if (!strcmp(k, "cmsg_data"))
		lbuf_push(L, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	else
		lua_pushnil(L);
	return 1;
}

static struct lbuf *check_buf(lua_State *L, int idx, size_t need)
{
	struct lbuf *b = luaL_checkudata(L, idx, BUF_MT);

	if (b->len < need)
		luaL_error(L, "the data is %d bytes, the type needs %d",
			   (int)b->len, (int)need);
	return b;
}

/* uint32_ptr(buf)[i]: the buffer as an array of uint32, from 0. */
static int l_uint32_ptr(lua_State *L)
{
	struct lbuf *b = check_buf(L, 1, sizeof(uint32_t));

	view_push(L, b->p, b->len / sizeof(uint32_t), U32_MT, 0);
	return 1;
}

static uint32_t *u32_at(lua_State *L)
{
	struct lview *v = luaL_checkudata(L, 1, U32_MT);
	lua_Integer i = luaL_checkinteger(L, 2);

	luaL_argcheck(L, i >= 0 && (size_t)i < v->n, 2, "index out of range");
	return (uint32_t *)v->p + i;
}

static int u32_index(lua_State *L)
{
	uint32_t x;

	memcpy(&x, u32_at(L), sizeof(x));
	lua_pushinteger(L, x);
	return 1;
}

static int u32_newindex(lua_State *L)
{
	uint32_t x = (uint32_t)luaL_checkinteger(L, 3);

	memcpy(u32_at(L), &x, sizeof(x));
	return 0;
}

static void push_timespec(lua_State *L, const struct timespec *ts)
{
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, ts->tv_sec);
	lua_setfield(L, -2, "sec");
	lua_pushinteger(L, ts->tv_nsec);
	lua_setfield(L, -2, "nsec");
}

/* scm_timestamping_ptr(buf).ts[0..2].sec/.nsec: a copy of the stamps. */
static int l_scm_timestamping_ptr(lua_State *L)
{
	struct lbuf *b = check_buf(L, 1, 3 * sizeof(struct timespec));
	struct timespec ts[3];
	int i;

	memcpy(ts, b->p, sizeof(ts));
	lua_createtable(L, 0, 1);
	lua_createtable(L, 3, 0);
	for (i = 0; i < 3; i++) {
		push_timespec(L, &ts[i]);
		lua_rawseti(L, -2, i);
	}
	lua_setfield(L, -2, "ts");
	return 1;
}

/* sock_extended_err_ptr(buf): what IP_RECVERR and timestamps carry. */
static int l_sock_extended_err_ptr(lua_State *L)
{
	struct lbuf *b = check_buf(L, 1, sizeof(struct sock_extended_err));
	struct sock_extended_err e;

	memcpy(&e, b->p, sizeof(e));
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, e.ee_errno);
	lua_setfield(L, -2, "ee_errno");
	lua_pushinteger(L, e.ee_origin);
	lua_setfield(L, -2, "ee_origin");
	lua_pushinteger(L, e.ee_type);
	lua_setfield(L, -2, "ee_type");
	lua_pushinteger(L, e.ee_code);
	lua_setfield(L, -2, "ee_code");
	lua_pushinteger(L, e.ee_info);
	lua_setfield(L, -2, "ee_info");
	lua_pushinteger(L, e.ee_data);
	lua_setfield(L, -2, "ee_data");
	return 1;
}

void lmsg_open(lua_State *L)
{
	static const luaL_Reg buf[] = {
		{ "__len", buf_len }, { "__tostring", buf_tostring },
		{ NULL, NULL }
	};
	static const luaL_Reg buf_methods[] = {
		{ "string", buf_string }, { "fill", buf_fill }, { NULL, NULL }
	};
	static const luaL_Reg msg[] = {
		{ "__index", msg_index }, { "__newindex", msg_newindex },
		{ NULL, NULL }
	};
	static const luaL_Reg msg_methods[] = {
		{ "cmsgs", msg_cmsgs }, { "cmsg_firsthdr", msg_cmsg_firsthdr },
		{ "data", msg_data }, { NULL, NULL }
	};
	static const luaL_Reg iovs[] = { { "__index", iovs_index }, { NULL, NULL } };
	static const luaL_Reg iov[] = { { "__index", iov_index }, { NULL, NULL } };
	static const luaL_Reg cmsg[] = { { "__index", cmsg_index }, { NULL, NULL } };
	static const luaL_Reg u32[] = {
		{ "__index", u32_index }, { "__newindex", u32_newindex },
		{ NULL, NULL }
	};
	static const luaL_Reg fns[] = {
		{ "msghdr", l_msghdr }, { "uint32_ptr", l_uint32_ptr },
		{ "scm_timestamping_ptr", l_scm_timestamping_ptr },
		{ "sock_extended_err_ptr", l_sock_extended_err_ptr },
		{ NULL, NULL }
	};

	lbase_new_type(L, BUF_MT, buf);
	luaL_getmetatable(L, BUF_MT);
	luaL_newlib(L, buf_methods);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lbase_new_type(L, MSGHDR_MT, msg);
	luaL_getmetatable(L, MSGHDR_MT);
	luaL_newlib(L, msg_methods);
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
	lbase_new_type(L, IOVS_MT, iovs);
	lbase_new_type(L, IOV_MT, iov);
	lbase_new_type(L, CMSG_MT, cmsg);
	lbase_new_type(L, U32_MT, u32);
	luaL_setfuncs(L, fns, 0);
}
