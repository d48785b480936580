/*
 * Addresses for scripts (laddr.c): sockaddr, in_addr, in6_addr.
 * Internal to src/script/.
 */
#ifndef NETSTAGE_SCRIPT_LADDR_H
#define NETSTAGE_SCRIPT_LADDR_H

#include "script/lbase.h"

void laddr_open(lua_State *L);
struct lsa *lsa_push(lua_State *L, const struct sockaddr *sa, socklen_t len);
struct lsa *lsa_check(lua_State *L, int idx);

#endif
