/*
 * Lua scripting (--script): the user's script runs in the main thread,
 * registers hooks and calls run(); each worker gets its own lua_State
 * holding copies of the hooks. This header is what the rest of netstage
 * sees of it.
 */
#ifndef NETSTAGE_SCRIPT_H
#define NETSTAGE_SCRIPT_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct options;
struct workload;
struct addr;
struct kv_list;
struct script;
struct script_worker;

/* The hooks, in the order of their names in script_hook_name(). */
enum hook {
	HOOK_CLIENT_SOCKET, HOOK_SERVER_SOCKET,
	HOOK_CLIENT_CLOSE, HOOK_SERVER_CLOSE,
	HOOK_CLIENT_SENDMSG, HOOK_SERVER_SENDMSG,
	HOOK_CLIENT_RECVMSG, HOOK_SERVER_RECVMSG,
	HOOK_CLIENT_RECVERR, HOOK_SERVER_RECVERR,
	HOOK_COUNT
};

/* The run the script's run() starts: the process exit status. */
typedef int (*script_run_fn)(struct options *o, const struct workload *wl);

/*
 * Load and run o->script; its run() calls run_fn (once), and a script
 * that never calls run() gets it after it returns. Returns the exit
 * status: run_fn's, or EXIT_RUNTIME after a script error (printed).
 */
int script_main(struct options *o, const struct workload *wl,
		script_run_fn run_fn);

/* The script of this run (NULL: none). Set by script_main. */
struct script *script_current(void);

/* Bit (1 << hook) for every hook the script registered. */
unsigned int script_hooks(const struct script *sc);
/* Worker i's state, made on first use (main thread only). */
struct script_worker *script_worker(struct script *sc, int i);

/*
 * Socket hooks: fd and the address the socket binds or connects to.
 * 0, or -1 after a script error (recorded, see script_failed).
 */
int script_socket_hook(struct script_worker *sw, enum hook h, int fd,
		       const struct addr *a, int socktype);

/*
 * Packet hooks, called in place of recvmsg/sendmsg on m (whose
 * msg_control, when NULL, is replaced by the hook's own 512-byte
 * buffer for receive hooks). Returns what the hook returned: bytes, or
 * -1 with errno set from the script's last failed call. A script error
 * returns -1 with errno ECANCELED.
 */
ssize_t script_packet_hook(struct script_worker *sw, enum hook h, int fd,
			   struct msghdr *m, int flags);

/* The Lua it runs scripts with: "Lua 5.3.6". */
const char *script_lua_version(void);

/* A hook failed: the side stops and run() raises the error. */
int script_failed(const struct script *sc);
/* The first hook's error message (NULL: none). */
const char *script_error(const struct script *sc);

struct run_results;
/*
 * r = run(): the side's results model, which the script takes (the
 * caller's pointer is no longer its own).
 */
void script_keep_results(struct script *sc, struct run_results *r);
/* --local: the server's model, which the parent received, as r.peer. */
void script_keep_peer(struct script *sc, struct run_results *peer);

const char *script_hook_name(enum hook h);

#endif
