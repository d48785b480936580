/*
 * The socket API scripts see (docs/script-api.md): syscall wrappers and
 * constants, on the addresses of laddr.h and the messages of lmsg.h,
 * registered together. Internal to src/script/.
 */
#ifndef NETSTAGE_SCRIPT_LSOCK_H
#define NETSTAGE_SCRIPT_LSOCK_H

#include "script/lbase.h"

/* Register everything: globals, and the table S with the same names. */
void lsock_open(lua_State *L);

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
