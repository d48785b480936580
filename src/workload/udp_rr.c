/*
 * Request/response over UDP. --burst N requests in flight per flow (1
 * by default); a request that has no response within --rr-timeout is
 * counted lost and the flow sends another in its place, so loss never
 * stalls a flow. Each request carries a sequence number (in its first
 * min(8, request, response size) bytes) that the server echoes: a
 * response answers the outstanding request of its number, and one that
 * answers none (its request timed out) is counted late and dropped.
 *
 * --trace (one request in flight): a datagram read in the same batch as
 * an earlier one had no epoll wait of its own, so only the batch's
 * first read carries the epoll return; the others' wake-up stage is 0
 * (merge.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "core/common.h"
#include "engine/io.h"
#include "net/net.h"
#include "trace/collect.h"
#include "engine/worker.h"
#include "workload/seq.h"

/* Calls per readiness event at most, so one flow cannot starve others. */
#define BURST 16

static size_t seq_bytes(const struct run_shared *rs)
{
	/* A server we did not write echoes nothing. */
	if (rs->raw)
		return 0;
	return seq_width(rs->request_size, rs->response_size);
}

/* Does a datagram of n bytes have the size of a response? */
static int response_sized(const struct run_shared *rs, size_t n)
{
	/* --raw without -R: any datagram is the response. */
	return n == rs->response_size || (rs->raw && !rs->response_size);
}

/* 1 if the tracer worked on it (trace_worker_done()). */
static int traced(struct worker *w, struct flow *f, uint64_t sent,
		  uint64_t epoll_ret, uint64_t done, uint64_t peer_seq)
{
	struct ustamps u = {
		.app_send = sent, .epoll_ret = epoll_ret, .app_done = done,
		.peer_seq = peer_seq, .peer_port = f->port,
	};

	return trace_worker_done(w->tw, f, &u);
}

/*
 * Requests in flight per flow: each outstanding one has an entry, its
 * number in sent_seq (0: the entry is free) and its send time in
 * sent_at. Answers and timeouts free entries in any order.
 */
static int window(const struct run_shared *rs)
{
	return rs->o->burst;
}

static void outstanding(const struct run_shared *rs, struct flow *f,
			uint64_t seq, uint64_t now)
{
	int i;

	for (i = 0; i < window(rs); i++)
		if (!f->sent_seq[i]) {
			f->sent_seq[i] = seq;
			f->sent_at[i] = now;
			return;
		}
}

static void send_request(struct worker *w, struct flow *f, uint64_t now)
{
	const struct run_shared *rs = w->rs;
	ssize_t r;

	f->seq_out++;
	seq_put(w->buf, seq_bytes(rs), f->seq_out);
	f->t_send = now;
	outstanding(rs, f, f->seq_out, now);
	r = io_send(w, f->fd, rs->raw ? rs->raw->req : w->buf,
		    rs->request_size, MSG_DONTWAIT);
	if (r < 0)
		worker_error(w, errno);	/* refused or full: it will time out */
	else
		f->bytes_written += r;
}

/*
 * Does a response carrying seq (its low n bytes) answer an outstanding
 * request? If so, that request is no longer outstanding and f->t_send
 * is when it went.
 */
static int answered(const struct run_shared *rs, struct flow *f,
		    uint64_t seq, size_t n)
{
	int i;

	for (i = 0; i < window(rs); i++)
		if (f->sent_seq[i] && seq_trunc(f->sent_seq[i], n) == seq) {
			f->t_send = f->sent_at[i];
			f->sent_seq[i] = 0;
			return 1;
		}
	return 0;
}

static void client_read(struct worker *w, struct flow *f)
{
	const struct run_shared *rs = w->rs;
	size_t n = seq_bytes(rs);
	uint64_t seq;
	int i;

	for (i = 0; i < BURST && f->open; i++) {
		ssize_t r = io_recv(w, f->fd, w->buf, rs->o->buffer_size,
				 MSG_DONTWAIT);
		uint64_t now;

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				worker_error(w, errno);	/* ICMP unreachable */
			return;
		}
		seq_take(&seq, n, w->buf, 0, r);
		if (rs->raw && !response_sized(rs, r)) {
			/* Not what -R says a response is. */
			f->unexpected += r;
			if (w->tw)
				trace_worker_drop(w->tw);
			continue;
		}
		if (!response_sized(rs, r) || !answered(rs, f, seq, n)) {
			f->late++;
			if (w->tw)
				trace_worker_drop(w->tw);
			continue;
		}
		now = now_ns();
		f->bytes_read += r;
		hist_add(f->lat, now - f->t_send);
		f->t_progress = now;
		f->transactions++;
		/*
		 * BPF numbers the flow's requests as they are sent, lost
		 * ones too: this is request seq_out - 1, timed or not.
		 */
		f->tr_seq = f->seq_out - 1;
		/* Not the tracer's work in the next request's time (rr.c). */
		if (w->tw && traced(w, f, f->t_send,
				    w->t_epoll > f->t_send ? w->t_epoll : 0,
				    now, 0))
			now = now_ns();
		send_request(w, f, now);
	}
}

/*
 * --trace: the number the client's BPF gives the request just read
 * (from 0), plus one. Its low bytes come in the request; the rest is
 * followed by the client's port, as the flows of many clients share the
 * socket. The two ends' records then pair by port and number, whatever
 * their clocks say (docs/stages.md, Two hosts).
 */
static uint64_t peer_number(const struct run_shared *rs, struct flow *f,
			    const void *buf, ssize_t len, uint16_t port)
{
	size_t n = seq_bytes(rs);
	uint64_t s;

	if (!n || len < (ssize_t)n)
		return 0;
	seq_take(&s, n, buf, 0, n);
	/* Four bytes or more hold any run's numbers whole. */
	if (n >= 4)
		return s;
	if (!f->peer_seq)
		f->peer_seq = xcalloc(UINT16_MAX + 1, sizeof(*f->peer_seq));
	s = seq_unwrap(f->peer_seq[port], s, n);
	f->peer_seq[port] = (uint32_t)s;
	return s;
}

/* Echo each request's sequence in a response of response_size bytes. */
static void server_read(struct worker *w, struct flow *f)
{
	const struct run_shared *rs = w->rs;
	uint64_t sent = 0, num;
	ssize_t got;
	int i;

	for (i = 0; i < BURST; i++) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		/* A whole datagram, whatever -B says: the buffer holds 64 KiB. */
		ssize_t r = io_recvfrom(w, f->fd, w->buf, 65536, MSG_DONTWAIT,
					&peer, &pl);

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				worker_error(w, errno);
			return;
		}
		f->bytes_read += r;
		got = r;
		if (w->tw)
			sent = now_ns();
		r = io_sendto(w, f->fd, w->buf, rs->response_size,
			      MSG_DONTWAIT, (struct sockaddr *)&peer, pl);
		if (r < 0) {
			worker_error(w, errno);
			continue;
		}
		f->bytes_written += r;
		f->transactions++;
		if (!w->tw)
			continue;
		/* Flows share a socket: the record names the client's port. */
		f->port = net_port_of(&peer);
		num = peer_number(rs, f, w->buf, got, f->port);
		traced(w, f, sent, i ? 0 : w->t_epoll, now_ns(), num);
	}
}

static void urr_start(struct worker *w, struct flow *f)
{
	int i;

	worker_arm(w, f, EPOLLIN);
	if (!w->rs->is_client)
		return;
	f->sent_at = xcalloc(window(w->rs), sizeof(*f->sent_at));
	f->sent_seq = xcalloc(window(w->rs), sizeof(*f->sent_seq));
	for (i = 0; i < window(w->rs); i++)
		send_request(w, f, now_ns());
}

static void urr_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (w->rs->is_client)
		client_read(w, f);
	else
		server_read(w, f);
}

/*
 * Time out f's requests, each replaced by a new one; the earliest
 * deadline left, or 0.
 */
static uint64_t flow_tick(struct worker *w, struct flow *f, uint64_t now)
{
	uint64_t timeout = (uint64_t)w->rs->o->rr_timeout * 1000000;
	uint64_t next = 0, due;
	int i;

	for (i = 0; i < window(w->rs); i++) {
		if (!f->sent_seq[i])
			continue;
		due = f->sent_at[i] + timeout;
		if (now >= due) {
			/* Its entry is free for the request in its place. */
			f->sent_seq[i] = 0;
			f->lost++;
			send_request(w, f, now);
			due = now + timeout;
		}
		if (!next || due < next)
			next = due;
	}
	return next;
}

/* Time out requests; return the earliest deadline left (0: none). */
static uint64_t urr_tick(struct worker *w, uint64_t now)
{
	uint64_t next = 0, d;
	int i;

	if (!w->rs->is_client)
		return 0;
	for (i = 0; i < w->nflows; i++) {
		struct flow *f = w->flows[i];

		if (!f->open || !f->sent_seq)
			continue;
		d = flow_tick(w, f, now);
		if (d && (!next || d < next))
			next = d;
	}
	return next;
}

const struct workload udp_rr_workload = {
	.name = "udp_rr",
	.bit = W_UDP_RR,
	.socktype = SOCK_DGRAM,
	.is_rr = 1,
	.start = urr_start,
	.event = urr_event,
	.tick = urr_tick,
};
