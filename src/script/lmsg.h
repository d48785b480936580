/*
 * Buffers, msghdr, cmsg and typed views for scripts (lmsg.c).
 * Internal to src/script/.
 */
#ifndef NETSTAGE_SCRIPT_LMSG_H
#define NETSTAGE_SCRIPT_LMSG_H

#include "script/lbase.h"

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

#endif
