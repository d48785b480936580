/*
 * The server's control port under load from strangers: every pending
 * connection is greeted at once, each with its own deadline, so no idle
 * or slow peer holds up the next one, and the accept queue is drained as
 * fast as connections come. A connection that sends something other
 * than a HELLO, nothing in time, or goes away is dropped and counted;
 * past GREET_MAX pending (or when descriptors run out) one is dropped
 * for the newest: the oldest that has sent nothing, else the oldest. With a key (--auth-key), a HELLO is answered
 * with a CHALLENGE, and only a right AUTH lets the peer through; a wrong
 * one is dropped and counted as a stranger.
 */
#ifndef NETSTAGE_GREETER_H
#define NETSTAGE_GREETER_H

#include <stddef.h>
#include <stdint.h>

#include "control/auth.h"
#include "control/ctl_msg.h"

#define GREET_MAX 256

struct greet_peer {
	int fd;
	uint64_t deadline;
	size_t have;
	uint8_t buf[CTL_MAX_MSG];
	int challenged;			/* its HELLO is in, AUTH awaited */
	int spoke;			/* it sent bytes: no idle stranger */
	uint64_t nonce[AUTH_FIELDS];
	struct ctl_msg hello;
};

struct greeter {
	int listen_fd;
	int timeout_ms;
	struct greet_peer *peer;	/* GREET_MAX */
	int n;
	uint64_t dropped;		/* strangers, late or gone */
	const struct auth_key *key;	/* NULL: no challenge */
	int tick_ms;			/* 0, or greeter_next()'s GREET_TICK */
};

void greeter_init(struct greeter *g, int listen_fd, int timeout_ms,
		  const struct auth_key *key);
/*
 * The next connection to send a whole HELLO: its descriptor (now the
 * caller's) and the message. -1 if `stop` became set or accept failed
 * for good, with err saying why; GREET_TICK when tick_ms (if set) went
 * by without one, for the caller to tell those it holds.
 */
#define GREET_TICK (-2)
int greeter_next(struct greeter *g, struct ctl_msg *hello,
		 volatile const int *stop, char *err, size_t len);
/* Drop every connection still pending. */
void greeter_free(struct greeter *g);

#endif
