/*
 * Inside the tracer (tracer.c opens and closes it, tracer_size.c sizes
 * its maps, tracer_calib.c measures what a program run costs,
 * tracer_read.c reads its maps): the state they share. Everything else
 * reads tracer.h.
 */
#ifndef NETSTAGE_TRACER_INT_H
#define NETSTAGE_TRACER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "stages.h"
#include "stages.skel.h"

/*
 * Each hook of the stage model, the program that serves it on kernels
 * that allow fentry, and the tracepoint program inside the same kernel
 * function that serves it otherwise.
 */
struct hook {
	const char *name;
	const char *fentry;	/* program name, or NULL */
	const char *tp_btf;	/* program, named as its tracepoint */
	int only;		/* ONLY_OBSERVE and kin, or 0: every side */
	/*
	 * The kernel may lack it and still have the rest: what it stamps
	 * is left out, and the note says how the stages change.
	 */
	const char *without;
	/* observe loads its own programs: obs_ and the names above */
	int obs_own;
	/* so does a side of many messages in flight: many_ (TRACER_MANY) */
	int many_own;
};

/*
 * From this many messages in flight a side's loops over them run under
 * bpf_loop() (the many_ programs): checked once, not once a message.
 * Not observe's, whose walks are its obs_ programs' own.
 */
#define TRACER_MANY 8

#define ONLY_OBSERVE 2
#define ONLY_SCHED 3
#define ONLY_CONNECTIONS 4	/* tcp_crr and observe: BPF makes storage */
#define ONLY_TCP 5

/* By program (enum ns_prog, bpf/stages.h): each is one hook's. */
extern const struct hook tracer_hook_table[NS_P_COUNT];
/* Does this side (and --trace-sched) use hook h? */
int tracer_hook_used(const struct hook *h, enum ns_side side, int sched);
struct tracer;
struct tracer_cfg;
/* Sizes and choices made from the configuration (tracer_size.c). */
int tracer_can_be_lean(const struct tracer *t, const struct tracer_cfg *cfg);
uint32_t tracer_wcap(const struct tracer *t, const struct tracer_cfg *cfg);
uint32_t tracer_kslots(const struct tracer *t, const struct tracer_cfg *cfg);
uint32_t tracer_ring_bytes(const struct tracer *t);
uint32_t tracer_arrival_set_bits(const struct tracer_cfg *cfg);
uint32_t tracer_batch_of(const struct tracer *t,
			 const struct tracer_cfg *cfg);
/* Hook h's fentry (or tracepoint) program for tracer t, or NULL. */
struct bpf_program *tracer_hook_prog(const struct bpf_object *obj,
				     const struct hook *h,
				     const struct tracer *t, int fentry);

struct tracer {
	struct stages_bpf *skel;
	int is_end;		/* an end of a tracer serving both: owns nothing */
	int both_ends;		/* its object serves both ends (--local) */
	int base;		/* its first worker's ring */
	struct bpf_link *links[NS_P_COUNT];
	int ring_fd[NS_MAX_RINGS];
	int nworkers;
	enum ns_side side;	/* NS_BPF_SIDE(): what BPF sees */
	int sched;		/* --trace-sched */
	int lean;		/* without the recv and send length hooks */
	uint32_t batch;		/* most messages a socket has in flight */
	int missing[NS_P_COUNT];	/* the kernel lacks its tracepoint */
	int retrans_err;	/* tcp_retransmit_skb passes the error */
	int no_fentry;		/* the kernel refused a probe's fentry */
	int stamp_fd;		/* keeps the kernel stamping packets */
	struct bpf_link *flush;	/* observe: obs_flush over the sockets */
	int no_flush;		/* observe: the kernel refused obs_flush */
	int flush_errno;	/* why it could not be attached */
	/*
	 * Lean: the flows' part of the `wstamps` map (hist) or the `krecs`
	 * map (records), mapped (NULL: not used); this end's part of each,
	 * in flows, and how much of that is given out.
	 */
	struct ns_wstamp *wbase;
	struct ns_krec *kbase;
	size_t wmapped, kmapped;
	uint32_t kslots;	/* records: slots a flow */
	uint32_t wfirst, wcap, wnext;
	double entry_ns;	/* entering one program run; -1 unknown */
	double stats_ns;	/* bpf_stats' own share of a run it times */
	int calib_prog;		/* an empty program that measures them */
	const char *note;
	char hooks[512];
	uint64_t setup_ns;
};

/*
 * The hooks the kernel lacks a tracepoint for, in t->missing, and the
 * note that says what changes; -1 with why if one is needed.
 */
int tracer_find_missing(struct tracer *t, char *why, size_t len);
/* Load the empty program the two below use (-1: none, no figures). */
void tracer_calib_open(struct tracer *t);
/* Measure entry_ns, what entering one program run costs (-1: unknown). */
void tracer_calibrate_entry(struct tracer *t);

#endif
