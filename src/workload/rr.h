/*
 * Inside the rr engine: its blocking loop's plain case (rr_plain.c),
 * and the general code it hands a message to when a call did not move
 * the whole message at once, which rr.c passes it (so the plain case
 * imports nothing of rr.c's).
 */
#ifndef NETSTAGE_WORKLOAD_RR_H
#define NETSTAGE_WORKLOAD_RR_H

#include <sys/types.h>

struct worker;
struct flow;

/*
 * The rest of a message whose first call on the socket returned r
 * (errno set if r < 0), as the general loop would go on from there.
 * Receiving: 1 with the whole message in, 0 when the flow ended.
 * Sending: >0 sent, 0 stopped first, <0 -errno.
 */
struct rr_rest {
	int (*recv_on)(struct worker *w, struct flow *f, ssize_t r);
	int (*send_on)(struct worker *w, struct flow *f, ssize_t r);
};

/*
 * A blocking tcp_rr flow with nothing but messages to move: no tracing,
 * stamps, packet hooks, --raw, --delay or --work, and each message no larger
 * than one call's buffer.
 */
int rr_plain(const struct worker *w, const struct flow *f);
/* Its loops, until the test stops: >0 or 0 stopped, <0 -errno. */
int rr_plain_client(struct worker *w, struct flow *f,
		    const struct rr_rest *rest);
int rr_plain_server(struct worker *w, struct flow *f,
		    const struct rr_rest *rest);

#endif
