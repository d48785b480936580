/*
 * Merging one transaction's kernel record with its worker's own stamps
 * into stage durations. Pure: no BPF, no I/O, so every rule is unit
 * tested on synthetic records.
 */
#ifndef NETSTAGE_TRACE_MERGE_H
#define NETSTAGE_TRACE_MERGE_H

#include <stdint.h>

#include "stages.h"

/* A side's stages, in time order, from the NS_STAGES list. */
struct stage_def {
	const char *name;
	enum ns_boundary from, to;
};

int stage_count(enum ns_side side);
const struct stage_def *stage_defs(enum ns_side side);
/* --trace=hist: the kernel-only stages BPF times (NS_KSTAGES). */
int kstage_count(enum ns_side side);
const struct stage_def *kstage_defs(enum ns_side side);
const char *boundary_name(enum ns_boundary b);

/* The worker's user-space stamps of one transaction (0: none). */
struct ustamps {
	uint64_t app_send;
	uint64_t epoll_ret;	/* 0 with --io-mode blocking: no epoll */
	uint64_t app_done;
	uint64_t sw_tx, sw_rx;	/* --timestamping: the kernel's own stamps */
	uint64_t connect;	/* tcp_crr client: the connection began */
	uint64_t accept_ret;	/* tcp_crr server: accept() returned */
	/* lean records (docs/stages.md): RECV_RET is the worker's, not BPF's */
	uint64_t recv_ret;
	uint64_t intended;	/* --rate: when the request was due */
	/*
	 * udp_rr server: 1 + the client's number of the request (as the
	 * client's BPF numbers it), so both ends name it alike; 0: none.
	 * udp_rr: the client's port as this datagram names it: a server's
	 * flows share its socket, and a record merged later
	 * (--trace-sample) finds the flow on another datagram.
	 */
	uint64_t peer_seq;
	uint16_t peer_port;
};

enum merge_result {
	MERGE_OK,
	MERGE_MISSING,		/* a kernel boundary was not seen */
	MERGE_DISORDER,		/* boundaries out of time order */
};

struct merged {
	uint64_t b[NS_B_COUNT];		/* every boundary, ns */
	uint64_t stage[NS_MAX_STAGES];	/* durations, ns, in stage order */
	uint64_t total;			/* first to last boundary */
	uint64_t sw_tx, sw_rx;		/* carried from the user stamps */
	enum ns_boundary bad;		/* with MISSING or DISORDER: where */
	/* --trace-sched, a reader that slept: who had its CPU (else "") */
	uint32_t held_pid, held_cpu;
	char held_comm[16];
};

/*
 * Fill m from the kernel record and the user stamps of a transaction of
 * `side`. A missing EPOLL_RET (blocking I/O) collapses into the boundary
 * before it: that stage is 0. Durations add up to m->total exactly.
 */
enum merge_result merge_transaction(enum ns_side side,
				    const struct ns_krecord *k,
				    const struct ustamps *u, struct merged *m);

/*
 * A response held back (docs/stages.md): a tcp_rr server's response
 * whose first byte reached the device after its send() returned. Lean
 * records show it as disorder at APP_DONE (full ones as a missing
 * DEV_XMIT, with no time to give). merge_held_back_ns(): how long after
 * the return it left, ns; 0 for every other transaction.
 */
int merge_held_back_side(enum ns_side side);
uint64_t merge_held_back_ns(enum ns_side side, enum merge_result r,
			    const struct merged *m);

#endif
