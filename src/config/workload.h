/*
 * A workload is a const table: its name, transport, and the engine that
 * moves its flows. tcp_rr, tcp_stream and udp_stream are a few lines
 * each on top of the rr and stream engines.
 */
#ifndef NETSTAGE_WORKLOAD_H
#define NETSTAGE_WORKLOAD_H

#include <stdint.h>

struct worker;
struct flow;
struct run_shared;

struct workload {
	const char *name;
	unsigned int bit;	/* W_* of options.h */
	int socktype;		/* SOCK_STREAM or SOCK_DGRAM */
	int is_rr;		/* request/response: latency per transaction */
	/* First move on a flow once the test starts. */
	void (*start)(struct worker *w, struct flow *f);
	/* epoll reported `events` on the flow. */
	void (*event)(struct worker *w, struct flow *f, uint32_t events);
	/* --io-mode blocking: run one flow until the test stops. */
	void (*run_blocking)(struct worker *w, struct flow *f);
	/* rr client: the transaction on f is complete (NULL: send again). */
	void (*client_done)(struct worker *w, struct flow *f, uint64_t now);
	/* Server: one listener per worker, accepted flows come and go. */
	int accepts_per_worker;
	/*
	 * Called after each epoll batch and when its deadline passes:
	 * handle timeouts, return the earliest deadline left (0: none).
	 */
	uint64_t (*tick)(struct worker *w, uint64_t now);
};

extern const struct workload tcp_rr_workload;
extern const struct workload tcp_stream_workload;
extern const struct workload udp_stream_workload;
extern const struct workload tcp_crr_workload;
extern const struct workload udp_rr_workload;
extern const struct workload observe_workload;

/* By name ("tcp_rr"); NULL if there is none. */
const struct workload *workload_find(const char *name);
const struct workload *workload_by_bit(unsigned int bit);
/* "tcp_rr, tcp_stream, udp_stream" for messages. */
const char *workload_names(void);

/* Engines shared by the tables. */
void rr_start(struct worker *w, struct flow *f);
void rr_event(struct worker *w, struct flow *f, uint32_t events);
void rr_run_blocking(struct worker *w, struct flow *f);
/* The rr client's next request on f, timed from `now`. */
void rr_begin_send(struct worker *w, struct flow *f, uint64_t now);
uint64_t rr_tick(struct worker *w, uint64_t now);
void crr_start(struct worker *w, struct flow *f);
void crr_event(struct worker *w, struct flow *f, uint32_t events);
void crr_client_done(struct worker *w, struct flow *f, uint64_t now);
void stream_start(struct worker *w, struct flow *f);
void stream_run_blocking(struct worker *w, struct flow *f);
void stream_event(struct worker *w, struct flow *f, uint32_t events);

#endif
