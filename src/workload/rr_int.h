/*
 * Inside the rr engine: what its files share. rr_msg.c moves messages;
 * the loops call it: rr.c the closed loop (a request, its response,
 * the next), rr_open.c keeps several requests in flight (--burst,
 * --rate), rr_blocking.c is the loop of a flow that has its thread to
 * itself. The rest of netstage reads workload.h.
 */
#ifndef NETSTAGE_WORKLOAD_RR_INT_H
#define NETSTAGE_WORKLOAD_RR_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct worker;
struct flow;

enum { RR_SENDING = 1, RR_RECEIVING };
/* What a read did to the inbound message. */
enum { READ_FAILED = -1, READ_NOTHING, READ_PART, READ_WHOLE };

/* Bytes of a message this side sends. */
size_t rr_tx_size(const struct worker *w);

/* --delay: the pause before a response (server) or request (client). */
void rr_pause_delay(const struct worker *w);
/* --work: a server's busy time before its response; none on a client. */
void rr_work(const struct worker *w);

/*
 * --trace: the transaction on f is complete at `done`. 1 if the tracer
 * worked on it (trace_worker_done()).
 */
int rr_traced(struct worker *w, struct flow *f, uint64_t done);

/*
 * A client's next request starts at its last response's clock read,
 * unless the tracer worked in between: merging and keeping a record is
 * the tool's own work, which would land in the next request's latency
 * and in its first stage.
 */
uint64_t rr_next_start(struct worker *w, struct flow *f, uint64_t now);

/*
 * Lean --trace=hist: the flow's RECV_RET (rx) or SEND_RET for BPF
 * (struct ns_wstamp), at `now`, or at a clock read of its own if 0. A
 * message --trace-sample leaves out is counted, not stamped.
 */
void rr_wstamp(struct worker *w, struct flow *f, int rx, uint64_t now);

/* A peer that went away ends the flow; anything else is also counted. */
void rr_flow_failed(struct worker *w, struct flow *f, int err);

/* Does the response just read answer request seq (--raw: unchecked)? */
int rr_answers(const struct worker *w, const struct flow *f,
	       uint64_t seq);

/* Request seq's number into the outbound message (seq.h). */
void rr_put_seq(struct worker *w, uint64_t seq);

/* 1: message sent; 0: would block; -errno: failed. *off is progress. */
int rr_send_from(struct worker *w, struct flow *f, size_t *off,
		 size_t size);

/* The rest of a message, blocking: 1 sent, 0 stopped, -errno. */
int rr_send_rest(struct worker *w, struct flow *f, size_t size);

/* A message is out: its SEND_RET stamp, the flow's counts. */
void rr_sent(struct worker *w, struct flow *f);

/* What a read's result r (not EINTR) did to the inbound message. */
int rr_took(struct worker *w, struct flow *f, ssize_t r);

/*
 * Read once toward the inbound message; READ_FAILED closed the flow.
 * A message's EPOLL_RET is the wake-up its first read followed, if that
 * read was the first since (*woken): one read later in the same round,
 * the data may have come after the wake-up and had no wait of its own.
 */
int rr_read_chunk(struct worker *w, struct flow *f, int *woken);

/* --rate: requests go on a schedule, not after responses. */
int rr_open_loop(const struct worker *w);

/* A flow's start and events with several requests in flight. */
void rr_burst_start(struct worker *w, struct flow *f);
void rr_open_start(struct worker *w, struct flow *f);
void rr_burst_event(struct worker *w, struct flow *f, uint32_t events);

/* Several requests in flight: bytes after a response start the next. */
int rr_pipelined(const struct worker *w);

#endif
