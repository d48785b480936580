/*
 * A worker's share of tracing: after each transaction it reads its own
 * ring (the kernel record of that transaction is already there: BPF
 * emits it inside the worker's own last recv or send of it), merges it
 * with the worker's stamps and adds the stage durations to histograms.
 * No locks: everything here belongs to one worker. The observer's one
 * reader (NS_SERVER_OBS) has no stamps of its own: it merges each
 * record as it reads it.
 */
#ifndef NETSTAGE_TRACE_COLLECT_H
#define NETSTAGE_TRACE_COLLECT_H

#include <stdint.h>

#include "net/flow.h"
#include "stats/hist.h"
#include "trace/bottomk.h"
#include "trace/cost.h"
#include "trace/inrun.h"
#include "trace/merge.h"
#include "msgnum.h"
#include "trace/rec.h"

struct tracer;
struct ring_buffer;


/* Lean records: a transaction whose record has not come yet. */
struct trace_late {
	struct flow *f;
	uint64_t seq;
	struct ustamps u;
};
/* Transactions that wait for their record at most, a worker. */
#define TRACE_WAITING 256

/* A kept record's place, in a heap by key (the largest first). */
struct trace_slot {
	uint64_t key;
	long at;		/* index in the records */
};

struct trace_worker {
	struct ring_buffer *rb;
	enum ns_side side;
	int id;
	uint32_t sample;	/* --trace-sample: BPF times 1 message in this many */
	uint32_t control;	/* --trace-control: msgnum.h, ns_timed() */
	uint64_t untimed;	/* transactions the two leave untimed */
	/*
	 * A TCP request's bytes, where all are alike: request seq begins
	 * at seq * req_bytes in its stream, what names it in the sample
	 * (trace_rec_priority()). 0: not known, named by number.
	 */
	uint32_t req_bytes;
	const struct trace_cost *cost;	/* times the merges while it says */
	uint64_t cost_ns, cost_n;	/* merges timed, and their time */
	struct ns_krecord rec;	/* the record read last */
	int have;
	unsigned int budget;	/* records a read takes at most; 0: all */
	uint64_t until;		/* a read stops past this time (ns); 0: never */
	uint64_t nread;		/* records read from the ring */
	/*
	 * observe: told each record's time (its last stamp) before the
	 * record counts, so that intervals close by the transactions' own
	 * time, not by when their records were read; nonzero: the record
	 * is not counted (past the run's end). Or NULL.
	 */
	int (*at)(void *arg, uint64_t t);
	void *at_arg;
	/*
	 * --trace-sample, a server whose records come by ring: the timed
	 * transaction whose record is merged at the worker's next one
	 * (collect.c, defer_ring()), or NULL, and its stamps.
	 */
	struct flow *defer_f;
	struct ustamps defer_u;
	uint64_t defer_seq;
	/* A client with a control group: timed and untimed latencies, or NULL */
	struct inrun *inrun;
	/*
	 * Lean tcp_rr records (docs/stages.md) come in each flow's slots
	 * (flow.kr), not by ring: message m's in slot m & krec_mask, which
	 * is 0 for every other kind of record (trace_worker_lean()). BPF
	 * writes one at the last kernel boundary, which may be before the
	 * worker is done with the transaction (several flows, --burst) or
	 * after (a response held back): transactions done before their
	 * record wait in `late`.
	 */
	uint32_t krec_mask;
	struct trace_late *late;	/* a ring, oldest first; f NULL: settled */
	int late_head, nlate;
	uint64_t complete;
	uint64_t missing;	/* a kernel boundary was not seen */
	uint64_t disorder;	/* boundaries out of time order */
	uint64_t norecord;	/* no kernel record for the transaction */
	uint64_t bad_at[NS_B_COUNT];	/* missing or disorder, by boundary */
	struct hist held;	/* merge_held_back_ns() of responses held back */
	struct hist stage[NS_MAX_STAGES];
	/*
	 * Kept records: the max_recs complete transactions of lowest
	 * priority, a hash of what names them on both ends (a uniform
	 * sample that joins across sides), in `keep` while the worker
	 * runs (a constant cost each), then in recs, trimmed to the run's
	 * limit by trace_keep().
	 */
	struct bottomk keep;
	struct trace_rec *recs;
	long nrecs, cap, max_recs;
	uint64_t offered;	/* complete transactions that could be kept */
	/*
	 * And the max_slow longest (the shortest first in sheap), so that
	 * the slowest of a run longer than the limit are kept whole.
	 */
	struct trace_rec *slow;
	struct trace_slot *sheap;
	long nslow, max_slow;
	uint16_t next_port;	/* observe: the record being accounted's */
	/*
	 * observe: the flow that stands for the observed server: its
	 * transactions, their span (NETIF_RX to SEND_RET) as its latency
	 * and its stage sums, for the interval samples.
	 */
	struct flow *server;
};

int trace_worker_init(struct trace_worker *tw, struct tracer *t, int id,
		      enum ns_side side, long max_recs);

/*
 * Read at most n records from the ring (0: no limit), stopping once
 * past time `until` (ns; 0: no limit): 1 if it stopped (more may be
 * waiting), 0 if it read all there was. ring_buffer__consume() alone
 * does not return while the programs keep the ring from emptying.
 */
int trace_worker_read_some(struct trace_worker *tw, unsigned int n,
			   uint64_t until);

/* Does this worker take lean records (from the flows' slots)? */
static inline int trace_worker_lean(const struct trace_worker *tw)
{
	return tw->krec_mask != 0;
}

/*
 * Is the transaction on f that completes next one BPF times? Those
 * --trace-sample leaves out need none of the worker's stamps, so a
 * clock read only a stamp needs is skipped for them.
 */
static inline int trace_worker_sampled(const struct trace_worker *tw,
				       const struct flow *f)
{
	/* BPF numbers messages modulo 2^32. */
	return ns_timed((uint32_t)f->tr_seq, tw->sample, tw->control);
}

/*
 * The transaction on f just completed with these user stamps. One that
 * --trace-sample leaves out costs a counter. 1 if f's transaction was
 * sampled: the tracer has just done its work for it (a client's next
 * request starts after that, not at this clock read).
 */
int trace_worker_done(struct trace_worker *tw, struct flow *f,
		      const struct ustamps *u);
/*
 * The worker is done: transactions still waiting take their records
 * if they are there, and count as without one if not.
 */
void trace_worker_end(struct trace_worker *tw);
void trace_worker_free(struct trace_worker *tw);
/*
 * A message that ended no transaction was read (udp_rr: a response
 * that came too late): its record, if any, is no transaction's.
 */
void trace_worker_drop(struct trace_worker *tw);

/*
 * Match the record read last (if any) to the transaction that just
 * completed on f, merge and account it. trace_worker_done reads the
 * ring, then calls this; the unit tests call it directly.
 */
void trace_worker_take(struct trace_worker *tw, struct flow *f,
		       const struct ustamps *u);
/*
 * Lean records: the transaction on f just completed. BPF numbers a
 * flow's messages from its registration, as f->tr_seq does: the record
 * in slot f->tr_seq & krec_mask with that number is this transaction's,
 * whenever it comes. One whose record is not there yet waits, looked
 * for again at f's next transactions, until it is older than f's slots
 * reach or, when TRACE_WAITING wait, as the oldest: then it counts as
 * without a record. trace_worker_done calls it; the unit tests call it
 * directly.
 */
void trace_worker_take_lean(struct trace_worker *tw, struct flow *f,
			    const struct ustamps *u);

/* The slowest kept apart: this % of --trace-max-records (keep.h). */
#define TRACE_SLOWEST_PCT 1

/*
 * Account one merge result (keep.c: into the worker's store of kept
 * records); exposed for the unit tests. The record kept
 * for --trace-records, or NULL (incomplete, or past the limit). off:
 * the request's offset in its stream, or < 0 (trace_rec_priority()).
 */
struct trace_rec *trace_worker_account(struct trace_worker *tw,
				       enum merge_result r,
				       const struct merged *m,
				       uint32_t flow_id, uint64_t seq,
				       uint16_t port, int64_t off);

#endif
