/*
 * The socket API scripts see (docs/script-api.md): syscall wrappers,
 * addresses, msghdr and control messages, constants. Internal to
 * src/script/.
 */
#ifndef NETSTAGE_SCRIPT_LSOCK_H
#define NETSTAGE_SCRIPT_LSOCK_H

#include <lauxlib.h>
#include <lua.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

#define SOCKADDR_MT "netstage.sockaddr"
#define IN_ADDR_MT "netstage.in_addr"
#define IN6_ADDR_MT "netstage.in6_addr"
#define BUF_MT "netstage.buf"
#define MSGHDR_MT "netstage.msghdr"
#define ERROR_MT "netstage.error"

#define LMSG_CONTROL 512

struct lsa {
	socklen_t len;
	struct sockaddr_storage ss;
};

/* A view of memory (not owned unless it points into its own tail). */
struct lbuf {
	char *p;
	size_t len;
};

struct lmsg {
	struct msghdr h;
	struct iovec iov;
	struct sockaddr_storage name;
	char control[LMSG_CONTROL];
	/* A script's own msghdr(n) keeps its n data bytes after this. */
};

/* A metatable `name` with the methods m (luaL_newmetatable's __name). */
void lsock_new_type(lua_State *L, const char *name, const luaL_Reg *m);

/* Register everything: globals, and the table S with the same names. */
void lsock_open(lua_State *L);

/* Addresses (laddr.c). */
void laddr_open(lua_State *L);
struct lsa *lsa_push(lua_State *L, const struct sockaddr *sa, socklen_t len);
struct lsa *lsa_check(lua_State *L, int idx);

/* Buffers, msghdr, cmsg, typed views (lmsg.c). */
void lmsg_open(lua_State *L);
struct lmsg *lmsg_check(lua_State *L, int idx);
/* A msghdr for a worker's packet hooks, pointers set per call. */
struct lmsg *lmsg_push_hook(lua_State *L);
/*
 * Point the hook's msghdr at the engine's message: its first iovec and
 * name; receive hooks get the 512-byte control buffer.
 */
void lmsg_prepare(struct lmsg *lm, const struct msghdr *m, int receive);
/* What a receive hook learnt, back into the engine's message. */
void lmsg_finish(const struct lmsg *lm, struct msghdr *m);
void lbuf_push(lua_State *L, void *p, size_t len);
/* Memory and length of a buffer argument: a buf view or a string. */
const char *lbuf_arg(lua_State *L, int idx, size_t *len, int writable);

/*
 * What a state's C side keeps per state, in its extra space (set by
 * whoever makes the state; NULL: nothing kept).
 */
struct lsock_info {
	int last_errno;		/* of the script's last failed call */
};

static inline struct lsock_info *lsock_info(lua_State *L)
{
	return *(struct lsock_info **)lua_getextraspace(L);
}

/* nil and an error object for errno e (2 results); e is kept too. */
int lsock_fail(lua_State *L, int e);

#endif
