/*
 * Worker threads: each owns a set of flows and one epoll set (or, with
 * --io-mode blocking, exactly one flow), and closes an interval snapshot
 * of its flows every --interval seconds.
 */
#ifndef NETSTAGE_WORKER_H
#define NETSTAGE_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "core/common.h"
#include "net/flow.h"
#include "stats/hist.h"
#include "stats/interval.h"
#include "net/net.h"
#include "config/options.h"
#include "results/sample.h"
#include "trace/cost.h"
#include "config/workload.h"

struct tracer;
struct trace_worker;
struct script;
struct script_worker;

struct worker;

/* What every worker of one side shares, read-only once started. */
struct run_shared {
	const struct options *o;
	const struct workload *wl;
	int is_client;
	int do_read;		/* stream: this side reads */
	int do_write;		/* stream: this side writes */
	struct addr data_addr;	/* client: the server's data port */
	size_t request_size;	/* rr: from the client's parameters */
	size_t response_size;
	int peer_inflight;	/* server: the most a client keeps in flight */
	int peer_flows;		/* server: its clients' flows, all told */
	uint64_t t_start;
	uint64_t interval_ns;
	int record_samples;	/* -A given: keep per-flow samples */
	/* observe until stopped: no per-interval ticks (memory holds still) */
	int no_history;
	atomic_int stop;
	atomic_int drain;	/* after stop, read on until EOF or deadline */
	uint64_t drain_deadline;
	int stop_efd;
	struct intervals iv;
	struct tracer *tracer;	/* NULL: not tracing */
	struct trace_cost cost;	/* what tracing costs, measured in the run */
	int timestamping;	/* SO_TIMESTAMPING on the data sockets */
	int64_t ts_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	long trace_recs_per_worker;
	int trace_hist;		/* --trace=hist: BPF keeps it all */
	struct script *script;	/* --script: NULL when none */
	/*
	 * --script packet hooks: the IO_* bits of io.h this side's script
	 * registered (0: none), and what then sees each epoll event first
	 * (io_event()): set by the side, which knows both.
	 */
	unsigned int phooks;
	uint32_t (*on_event)(struct worker *w, int fd, uint32_t events);
	const struct raw_spec *raw;	/* --raw: NULL with a netstage server */
};

/* --trace: the stage lists this side's transactions follow. */
static inline enum ns_side trace_side(const struct run_shared *rs)
{
	if (rs->wl->bit == W_OBSERVE)
		return (enum ns_side)(NS_SERVER_OBS |
			(rs->o && rs->o->trace_sched ? NS_SCHED_BIT : 0));
	return (enum ns_side)((rs->is_client ? NS_CLIENT : NS_SERVER) |
			      (rs->wl->socktype == SOCK_DGRAM ? NS_UDP_BIT : 0) |
			      (rs->wl->accepts_per_worker ? NS_CRR_BIT : 0) |
			      (rs->o && rs->o->trace_sched ? NS_SCHED_BIT : 0) |
			      (rs->is_client && rs->o && rs->o->rate > 0 ?
			       NS_RATE_BIT : 0));
}

/* One worker's cumulative totals at the end of interval k. */
struct tick {
	uint64_t time;
	uint64_t transactions;
	uint64_t bytes;
};

struct worker {
	int id;
	uint32_t tid;		/* its thread's id (gettid) */
	pthread_t thread;
	struct run_shared *rs;
	int epfd;
	struct flow **flows;
	int nflows, flows_cap;
	int open_flows;
	/* Flows accepted and closed since: their counts live on here. */
	uint64_t gone_transactions, gone_read, gone_written;
	long adopted;
	char *buf;
	long k;			/* interval being measured */
	uint64_t next_snap;
	uint64_t coarse_lag;	/* coarse_ns() is at most this behind */
	int own_files;		/* runs on its own copy of the fd table */
	struct tick *ticks;
	long nticks, ticks_cap;
	struct sample *samples;
	long nsamples, samples_cap;
	struct hist ilat;	/* this interval's latencies, all flows */
	struct hist lat_total;	/* every closed interval's */
	struct hist ilat_unc;	/* --rate: the same from the actual send */
	struct hist lat_unc_total;
	uint64_t prev_transactions, prev_bytes;
	uint64_t errors;	/* send/recv failures other than EAGAIN */
	int last_errno;		/* the last of them */
	char fatal[96];		/* what stopped this worker early, or "" */
	uint64_t t_epoll;	/* --trace: when epoll_wait last returned */
	uint64_t rng;		/* --rate: inter-arrival times */
	struct trace_worker *tw;	/* --trace: this worker's share */
	struct script_worker *sw;	/* --script: this worker's state */
	unsigned int phooks;	/* IO_* bits of io.h: packet hooks */
	int ev_fd;		/* packet hooks: the flow of the event... */
	uint32_t ev;		/* ...and the readiness not used yet */
};

/* An I/O call failed (not the peer leaving): counted, the errno kept. */
static inline void worker_error(struct worker *w, int err)
{
	w->errors++;
	if (err)
		w->last_errno = err;
}

/* A worker with no flows yet (workers_start makes its own). */
void worker_init(struct worker *w, struct run_shared *rs);
/* Start the side's workers: flow i goes to worker i % n. */
int workers_start(struct worker **out, int n, struct run_shared *rs,
		  struct flow **flows, int nflows, char *err, size_t len);
/* Tell workers to stop (they take a last snapshot) and join them. */
void workers_stop(struct worker *w, int n, struct run_shared *rs);
void workers_free(struct worker *w, int n);
/* The workers' trace shares, by worker (NULL where none); allocated. */
struct trace_worker **workers_tw(struct worker *w, int n);
/* --trace: the side's summary from its n workers' shares. */
struct trace_summary;
void workers_summarise(struct trace_summary *ts, struct worker *w, int n,
		       const struct run_shared *rs);

/* Engines call these. */
void worker_arm(struct worker *w, struct flow *f, uint32_t events);
void worker_flow_closed(struct worker *w, struct flow *f);
/* A connection the worker accepted becomes one of its flows. */
struct flow *worker_adopt(struct worker *w, int fd);
/* f becomes w's: it counts latencies into w's histograms (or, -A, its own). */
void worker_add_flow(struct worker *w, struct flow *f);
/* The run is over: fold what the last snapshot left into the totals. */
void worker_finish(struct worker *w);
/* Close the intervals that ended by `now`: ticks, samples, progress. */
void worker_snapshot(struct worker *w, uint64_t now);
/*
 * At stop: the interval under way counts if it is all but over (90%),
 * so a 10 s test at 1 s intervals has 10 samples on both sides.
 */
void worker_final_snapshot(struct worker *w);
/* Blocking mode: the same when one is due (inline: every transaction). */
static inline void worker_maybe_snapshot(struct worker *w, uint64_t now)
{
	if (now >= w->next_snap)
		worker_snapshot(w, now);
}
/*
 * The same for a loop with no use for the time: the clock is read only
 * when the coarse one says the snapshot may be due.
 */
static inline void worker_poll_snapshot(struct worker *w)
{
	if (coarse_ns() + w->coarse_lag >= w->next_snap)
		worker_maybe_snapshot(w, now_ns());
}
/*
 * True when a worker's loop should end: stopped, and not draining any
 * more (a stream server reads what came before the stop, for up to 2 s).
 */
int worker_done(struct worker *w);
static inline int worker_stopping(struct worker *w)
{
	return atomic_load_explicit(&w->rs->stop, memory_order_relaxed);
}

#endif
