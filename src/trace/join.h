/*
 * Joining the traced records of one request along its path, on the one
 * clock every process of a host shares: a netstage client, then each
 * hop it crossed (a server `netstage observe` watched, a forwarder), to
 * the server that answered. One row per stretch of the path, so the
 * rows of a transaction add up exactly to the client's latency. Pure:
 * no I/O; tests/unit/t_join.c checks it on synthetic records.
 *
 * Which record of hop k belongs to a client transaction: hop 1's is on
 * the same connection (its client's port) and lies inside the client's
 * `remote` (from DEV_XMIT to NETIF_RX); hop k+1's lies inside hop k's
 * time between reading the request and sending the response (RECV_RET
 * to TCP_SEND), on the connection hop k sent the request on when the
 * observer saw it (next_port). One request is in flight per connection,
 * so there is one such record, or the transaction is not joined: none
 * (the hop did not time it) or several (another connection's fit too).
 *
 * Netstage's own tcp_rr ends number a connection's messages alike, so
 * there the server's record is the one of the client's connection and
 * sequence number, never found by time: with several requests in flight
 * (--burst, --rate) a window can hold another request's. The window
 * still checks it: a record of that number outside it is a mis-pair,
 * counted and shown.
 */
#ifndef NETSTAGE_TRACE_JOIN_H
#define NETSTAGE_TRACE_JOIN_H

#include <stdint.h>

#include "stages.h"

#define JOIN_MAX_HOPS 8
#define JOIN_NAME 24

/* One traced transaction of one hop. */
struct join_rec {
	uint16_t port;		/* its connection's client port (0: none) */
	uint16_t next_port;	/* the port it went on with; 0: unknown */
	uint32_t flow_id;	/* the side's flow (its track in a trace) */
	uint8_t slowest;	/* kept as one of the slowest, not sampled */
	uint64_t seq;		/* the flow's transaction number */
	uint64_t b[NS_B_COUNT];	/* CLOCK_MONOTONIC ns, 0: not stamped */
};

/* A hop's records, sorted by join_sort() before joining. */
struct join_table {
	char name[JOIN_NAME];
	enum ns_side side;	/* NS_CLIENT first, then servers */
	struct join_rec *r;
	long n;
};

void join_sort(struct join_table *t);

/* Is hop 1 joined by the client's connection and sequence number? */
int join_by_seq(const struct join_table *t, int n);
/*
 * After join_prepare(), joined by seq: the server's record in s of
 * client record c's connection and number, stamped at its arrival and
 * its hand-off, whatever its clock says; NULL if not exactly one.
 */
const struct join_rec *join_numbered(const struct join_table *s,
				     const struct join_rec *c);

/* Sort every hop's records for join_one() (hop 1 by seq where it joins so). */
void join_prepare(struct join_table *t, int n);

/*
 * One row of the waterfall: from boundary fb of hop fh to tb of th.
 * The rows of depth 0 add up to the client's latency; rows of depth 1
 * split the depth-0 row before them (the client's `remote`).
 */
struct join_row {
	char name[72];
	int fh, th;
	enum ns_boundary fb, tb;
	int depth;
};

#define JOIN_MAX_ROWS (4 * JOIN_MAX_HOPS + 2 * NS_MAX_STAGES + 2)

struct join_plan {
	int nrows;
	struct join_row row[JOIN_MAX_ROWS];
};

/*
 * The rows for the chain t[0] (the client) .. t[n-1] (the server
 * that answered), the last expanded into its own stages up to its
 * DEV_XMIT. 0, or -1 if n is out of range.
 */
int join_plan(const struct join_table *t, int n, struct join_plan *p);

/*
 * The same path with the client's own stages as rows, its `remote`
 * split (depth 1) into the wire legs and the hops' stages: the
 * waterfall of --local. -1 also if the client side has no `remote`.
 * With n = 1, t[0]'s stages alone (any side: a report of one side).
 */
int join_plan_nested(const struct join_table *t, int n, struct join_plan *p);

/*
 * JOIN_MISPAIR: the record of the client's connection and number lies
 * outside the client's window (join_by_seq()).
 */
enum { JOIN_OK, JOIN_NONE, JOIN_MANY, JOIN_DISORDER, JOIN_MISPAIR,
       JOIN_RESULTS };

/*
 * The records of hops 1..n-1 for client record c (chain[0] = c).
 * JOIN_OK with chain[] filled, else what went wrong and at which hop
 * (*hop). JOIN_DISORDER: a row of the plan would be negative.
 */
/* join_prepare() first. */
int join_one(const struct join_table *t, int n, const struct join_rec *c,
	     const struct join_plan *p, const struct join_rec **chain,
	     int *hop);

/* Row i's duration for a joined chain, ns. */
static inline uint64_t join_row_ns(const struct join_plan *p, int i,
				   const struct join_rec *const *chain)
{
	const struct join_row *r = &p->row[i];

	return chain[r->th]->b[r->tb] - chain[r->fh]->b[r->fb];
}

#endif
