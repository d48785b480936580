/*
 * The record of one traced transaction, as a side keeps it after the
 * merge: its own type, so that what stores, samples, prints or hands
 * records on needs nothing of the collector's.
 */
#ifndef NETSTAGE_TRACE_REC_H
#define NETSTAGE_TRACE_REC_H

#include <stdint.h>

#include "stages.h"

/* One merged transaction kept for --trace-records. */
struct trace_rec {
	uint32_t flow_id;
	uint16_t worker;
	uint16_t port;		/* the client's port of the connection (join) */
	uint16_t next_port;	/* observe: where a forwarder sent it on */
	uint64_t seq;
	uint64_t b[NS_B_COUNT];
	uint64_t sw_tx, sw_rx;
	uint64_t prio;		/* its place in the sample (collect.c) */
	uint64_t span;		/* its side's first to last boundary, ns */
	int slowest;		/* kept as one of the slowest, not sampled */
	/* --trace-sched: the task its reader took the CPU from ("": none) */
	uint32_t held_pid, held_cpu;
	char held_comm[16];
};

/*
 * A side's kept records, one array per worker in worker order: what
 * every output of them reads (records CSV, Perfetto, the report, the
 * --local exchange, Lua).
 */
struct rec_set {
	struct trace_rec *recs[NS_MAX_RINGS];
	long n[NS_MAX_RINGS];
	int nworkers;
};

static inline long rec_set_count(const struct rec_set *s)
{
	long k = 0;
	int i;

	for (i = 0; i < s->nworkers; i++)
		k += s->n[i];
	return k;
}

#endif
