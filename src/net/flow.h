/*
 * A flow: one data socket and the state of the message in progress on
 * it. The worker owns it; the workload engines move it along.
 */
#ifndef NETSTAGE_FLOW_H
#define NETSTAGE_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "stats/hist.h"
#include "net/raw.h"
#include "stages.h"

struct flow {
	int fd;
	int id;			/* 0 .. num_flows - 1 on this side */
	int state;		/* engine-specific */
	int open;
	int listener;		/* tcp_crr server: accepts, carries no data */
	int adopted;		/* accepted by a worker: freed when it closes */
	int hooked;		/* --script: socket hooks saw it open */
	uint16_t port;		/* --trace: the client's port (records, join) */
	size_t off;		/* bytes done of the message in progress */
	uint64_t t_send;	/* rr: when the message's send began */
	uint64_t t_intended;	/* --rate: when that request was due */
	uint64_t t_epoll;	/* rr: epoll_wait return that began a receive */
	uint64_t t_connect;	/* tcp_crr client, --trace: connection began */
	uint64_t t_app_send;	/* tcp_crr client, --trace: request's send */
	uint64_t t_accept;	/* tcp_crr server, --trace: accept() returned */
	uint64_t t_recv;	/* rr server, --trace: the request was whole */
	uint64_t tr_seq;	/* --trace: transactions, as BPF numbers them */
	uint32_t nlate;		/* --trace, lean: waiting for their records */
	struct ns_wstamp *ws;	/* lean --trace=hist: stamps BPF reads */
	struct ns_krec *kr;	/* lean records: the slots BPF writes */
	uint64_t sw_tx;		/* --timestamping: kernel TX stamp of the send */
	uint64_t sw_rx;		/* --timestamping: kernel RX stamp of the recv */
	/* --trace: this interval's traced transactions and stage sums */
	uint64_t st_count;
	uint64_t st_sum[NS_MAX_STAGES];
	uint32_t events;	/* epoll events armed now */
	uint64_t seq_out;	/* rr client: sequence of the last request */
	uint64_t seq_in;	/* rr: sequence the message being read carries */
	/*
	 * udp_rr server, --trace: by client port, the last request's
	 * number unwrapped from the bytes it carries (flows share the
	 * socket, so a client's numbers are followed port by port)
	 */
	uint32_t *peer_seq;
	uint64_t mismatched;	/* rr client: responses to another request */
	/* --raw: the response being framed, and bytes read past one */
	struct raw_rx raw;
	char *pend;		/* bytes read after a response ended */
	size_t pend_len, pend_off;
	uint64_t unexpected;	/* bytes no request asked for */
	int peer_closed;	/* the server closed the connection */
	int overlong;		/* a response passed RAW_RESPONSE_MAX */
	uint64_t t_progress;	/* rr client: last whole response (0: none) */
	/* --burst: requests owed, the send offset, send times by sequence */
	int to_send;
	size_t soff;
	uint64_t seq_recv;
	uint64_t *sent_at;
	uint64_t *sent_seq;	/* udp_rr: each sent_at's request (0: free) */
	/* --rate: intended send times by sequence, and the next one */
	uint64_t *intended_at;
	uint64_t next_intended;
	uint64_t sent_total;	/* requests sent */
	uint64_t behind;	/* intended sends skipped: too many in flight */
	struct hist *lat_unc;	/* from the actual send: the worker's */
	uint64_t lost;		/* udp_rr: requests never answered in time */
	uint64_t late;		/* udp_rr: responses that came too late */
	uint64_t transactions;
	uint64_t bytes_read;
	uint64_t bytes_written;
	/*
	 * rr client: where this interval's latencies go. A histogram is
	 * 33 KiB, so flows share their worker's unless per-flow samples
	 * (-A) need one each (own_lat).
	 */
	struct hist *lat;
	int wants_lat;
	int own_lat;
};

struct flow *flow_new(int fd, int id, int with_latency);
/*
 * A flow that counts latencies counts them into `shared`, or, with
 * own, into a histogram of its own that flow_close_interval() folds in.
 */
void flow_attach_latency(struct flow *f, struct hist *shared, int own);
/* Fold an own interval histogram into `into` and start a new interval. */
void flow_close_interval(struct flow *f, struct hist *into);
void flow_free(struct flow *f);

#endif
