/*
 * The BPF side from user space: load bpf/stages.bpf.c with the best
 * mechanism the kernel allows for each hook, register the benchmark's
 * sockets, give each worker its ring of per-transaction records.
 */
#ifndef NETSTAGE_TRACE_TRACER_H
#define NETSTAGE_TRACE_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/hist.h"
#include "stages.h"

struct tracer;
struct ring_buffer;

struct tracer_cfg {
	enum ns_side side;
	uint32_t rx_size;	/* bytes of a message this side receives */
	uint32_t tx_size;	/* bytes of a message this side sends */
	uint16_t data_port;
	int nworkers;
	int verbose;		/* libbpf's messages to stderr */
	int hist_mode;		/* --trace=hist: histograms in BPF, no rings */
	uint32_t observe_tgid;	/* observe: the server's process id */
	uint32_t observe_netns;	/* observe: its network namespace (inode) */
	/*
	 * --local: serve the client (side) and its server alike, nworkers
	 * each; the server's process inherits the tracer by fork() and
	 * takes its end with tracer_end(). data_port is set later.
	 */
	int both_ends;
	uint32_t sample;	/* TCP: time one message in this many (0, 1: all) */
	uint32_t control;	/* --trace-control (msgnum.h, ns_timed()) */
	uint32_t inflight;	/* messages in flight per socket at most */
	int open_loop;		/* --rate: a client sends on its own clock */
	uint32_t flows;		/* flows of a side (each); 0: not known */
	/*
	 * A server's: its clients' flows (their HELLOs), which size the
	 * table of arrivals only (0: not known, a table for many).
	 */
	uint32_t peer_flows;
};

/* Lean: flows an end keeps stamps or record slots for when it cannot tell. */
#define NS_FLOWS_UNKNOWN 65536

/*
 * What this kernel offers tracing, for --version: its release, whether
 * it has BTF and takes fentry, and which of the hooks' tracepoints it
 * has. Lines on f.
 */
void tracer_kernel_features(FILE *f);

/*
 * Load and attach. On failure returns NULL with `why` saying in one
 * line what could not be traced and why; the benchmark runs untraced.
 */
struct tracer *tracer_open(const struct tracer_cfg *cfg, char *why,
			   size_t len);
/*
 * One end (side) of a tracer that serves both: it shares the object,
 * and tracer_close() frees only the end.
 */
struct tracer *tracer_end(struct tracer *both, enum ns_side side);
/* The server's data port, where it was not known at tracer_open(). */
void tracer_set_port(struct tracer *t, uint16_t port);
/*
 * Trace this socket: 0, or -errno. Call before its first transaction.
 * idx: its flow's from tracer_flow_index().
 */
int tracer_register(struct tracer *t, int fd, int flow_id, int worker,
		    uint32_t idx);
/*
 * The calling thread is this worker's: tcp_crr's connections are then
 * traced without registration (BPF makes their storage). 0, or -errno.
 */
int tracer_register_thread(struct tracer *t, int worker);
/*
 * A worker's ring, read with ring_buffer__consume() in its own thread;
 * -1 when records do not go by ring (hist, lean records in slots).
 */
int tracer_ring_fd(struct tracer *t, int worker);
/* "hook:mechanism,..." for trace_hooks= ("none": the kernel lacks it) */
const char *tracer_hooks(const struct tracer *t);
/*
 * Lean: a new flow's place in the memory its worker shares with BPF,
 * or 0: not needed, or past the flows the end has room for (their
 * transactions count as incomplete, or without a record).
 */
uint32_t tracer_flow_index(struct tracer *t);
/*
 * Lean --trace=hist: where flow idx's worker keeps its RECV_RET and
 * SEND_RET for BPF (struct ns_wstamp). NULL: not hist, or idx 0.
 */
struct ns_wstamp *tracer_wstamp(const struct tracer *t, uint32_t idx);
/*
 * Lean records: flow idx's slots, where BPF leaves message m's record
 * in slot m & tracer_krec_mask(). NULL: records come by ring.
 */
struct ns_krec *tracer_krecs(const struct tracer *t, uint32_t idx);
/* Slots a flow, less one; 0 unless the records are lean. */
uint32_t tracer_krec_mask(const struct tracer *t);
/* What tracing goes without on this kernel, in a line; NULL: nothing. */
const char *tracer_note(const struct tracer *t);
/* --trace=hist: kernel stage k's histogram, summed over CPUs, into h. */
int tracer_khist(struct tracer *t, int k, struct hist *h);
/* --trace=hist: transactions BPF timed, and those it could not. */
void tracer_kcounts(struct tracer *t, uint64_t *timed, uint64_t *incomplete);
/* Records BPF could not reserve ring space for. */
uint64_t tracer_lost(struct tracer *t);
/*
 * observe, as it stops: send the records of responses still open (each
 * connection's last one, until its next read or close) to the ring. 0,
 * or -1 with errno.
 */
int tracer_obs_flush(struct tracer *t);
/* observe: a count of enum ns_obs_count, now. */
uint64_t tracer_obs_count(struct tracer *t, enum ns_obs_count k);
/*
 * The TCP segments this end retransmitted (exact), and the log of
 * retransmissions (*n entries at *log, both ends' under --local: each
 * says its side). Read after the run.
 */
int tracer_has_retrans(const struct tracer *t);
/* Does a side count retransmissions where the kernel lets it (TCP)? */
int tracer_side_retrans(enum ns_side side);
uint64_t tracer_retrans(const struct tracer *t,
			const struct ns_retrans **log, uint32_t *n);
/*
 * By program (enum ns_prog): run time and runs so far (counted while
 * kernel.bpf_stats is on), and the runs for this run's own packets,
 * sockets and threads (counted while tracer_counting() is on).
 */
struct tracer_stats {
	uint64_t run_ns[NS_P_COUNT], runs[NS_P_COUNT], own[NS_P_COUNT];
};

/* 0, or -errno. */
int tracer_stats(struct tracer *t, struct tracer_stats *s);
/*
 * BPF counts the transactions each end completes while at least one
 * caller has it on (on: 1 starts, 0 stops; callers may overlap).
 */
void tracer_counting(struct tracer *t, int on);
/* Transactions this end completed while counting, so far. */
uint64_t tracer_done(struct tracer *t);
/*
 * Measure what bpf_stats adds to the run time it counts for one run,
 * while bpf_stats is on (the cost window; no privilege needed); then
 * tracer_stats_ns() says it, in ns (0: unknown).
 */
void tracer_calibrate_stats(struct tracer *t);
double tracer_stats_ns(const struct tracer *t);
/* ns to enter one program run, calibrated at open; -1 unknown. */
double tracer_entry_ns(const struct tracer *t);
/* Does its object serve both ends (--local)? */
int tracer_both_ends(const struct tracer *t);
/* BPF open+load+attach time, ns. */
uint64_t tracer_setup_ns(const struct tracer *t);
void tracer_close(struct tracer *t);

#endif
