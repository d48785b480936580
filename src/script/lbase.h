/*
 * What the script socket modules (laddr.c, lmsg.c, lsock.c) share: the
 * names of their types' metatables, the C layouts behind them, and the
 * one way a type is made. The base they build on, as Lua's libraries
 * build on lauxlib. Internal to src/script/.
 */
#ifndef NETSTAGE_SCRIPT_LBASE_H
#define NETSTAGE_SCRIPT_LBASE_H

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
void lbase_new_type(lua_State *L, const char *name, const luaL_Reg *m);

#endif
