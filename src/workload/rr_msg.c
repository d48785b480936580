/*
 * The rr engine's messages: their sizes, sending and receiving them
 * (framed by --response-end, or pipelined with --burst), the sequence
 * numbers they carry, and the stamps and trace hand-off a transaction
 * takes at its end. The loops (rr.c, rr_open.c, rr_blocking.c) call
 * these; nothing here calls them.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "core/common.h"
#include "engine/io.h"
#include "trace/collect.h"
#include "core/tstamp.h"
#include "engine/worker.h"
#include "workload/rr.h"
#include "workload/rr_int.h"
#include "workload/seq.h"
#include "stages.h"

size_t rr_tx_size(const struct worker *w)
{
	return w->rs->is_client ? w->rs->request_size : w->rs->response_size;
}

static size_t rx_size(const struct worker *w)
{
	return w->rs->is_client ? w->rs->response_size : w->rs->request_size;
}

static size_t chunk(const struct worker *w, size_t left)
{
	size_t b = w->rs->o->buffer_size;

	return left < b ? left : b;
}

void rr_work(const struct worker *w)
{
	uint64_t end;

	if (!w->rs->o->work || w->rs->is_client)
		return;
	/* Work, not sleep: the CPU stays busy, as a server's would. */
	end = now_ns() + w->rs->o->work;
	while (now_ns() < end)
		;
}

void rr_pause_delay(const struct worker *w)
{
	uint64_t d = w->rs->o->delay;
	struct timespec ts = { d / NSEC_PER_SEC, d % NSEC_PER_SEC };

	if (d)
		nanosleep(&ts, NULL);
}

/*
 * --trace: the transaction on f is complete at `done`. 1 if the tracer
 * worked on it (trace_worker_done()).
 */
int rr_traced(struct worker *w, struct flow *f, uint64_t done)
{
	struct ustamps u = {
		/* tcp_crr: t_send is the connect, where its latency starts. */
		.app_send = f->t_connect ? f->t_app_send : f->t_send,
		.epoll_ret = f->t_epoll, .app_done = done,
		.sw_tx = f->sw_tx, .sw_rx = f->sw_rx,
		.connect = f->t_connect, .accept_ret = f->t_accept,
		.intended = f->t_intended,
	};

	/* Lean records: the clock read that found the message whole. */
	if (trace_worker_lean(w->tw))
		u.recv_ret = w->rs->is_client ? done : f->t_recv;

	return trace_worker_done(w->tw, f, &u);
}

/*
 * A client's next request starts at its last response's clock read,
 * unless the tracer worked in between: merging and keeping a record is
 * the tool's own work, which would land in the next request's latency
 * and in its first stage.
 */
uint64_t rr_next_start(struct worker *w, struct flow *f, uint64_t now)
{
	return w->tw && rr_traced(w, f, now) ? now_ns() : now;
}

/*
 * Lean --trace=hist: the flow's RECV_RET (rx) or SEND_RET for BPF
 * (struct ns_wstamp), at `now`, or at a clock read of its own if 0. A
 * message --trace-sample leaves out is counted, not stamped.
 */
void rr_wstamp(struct worker *w, struct flow *f, int rx, uint64_t now)
{
	struct ns_wstamp *u = f->ws;
	uint32_t *n = rx ? &u->recv_n : &u->send_n;

	if (ns_sampled(*n, w->rs->o->trace_sample)) {
		u->tid = w->tid;
		*(rx ? &u->recv_ret : &u->send_ret) = now ? now : now_ns();
	}
	++*n;
}

/* A peer that went away ends the flow; anything else is also counted. */
void rr_flow_failed(struct worker *w, struct flow *f, int err)
{
	if (err != ECONNRESET && err != EPIPE)
		worker_error(w, err);
	else
		f->peer_closed = 1;
	worker_flow_closed(w, f);
}

/* Sequence numbers (seq.h) as this side's message sizes allow. */
static size_t seq_len(const struct worker *w)
{
	/* A server we did not write echoes nothing. */
	if (w->rs->raw)
		return 0;
	return seq_width(w->rs->request_size, w->rs->response_size);
}

int rr_answers(const struct worker *w, const struct flow *f,
	       uint64_t seq)
{
	return f->seq_in == seq_trunc(seq, seq_len(w));
}

void rr_put_seq(struct worker *w, uint64_t seq)
{
	seq_put(w->buf, seq_len(w), seq);
}

static void take_seq(struct worker *w, struct flow *f, size_t off, size_t r)
{
	seq_take(&f->seq_in, seq_len(w), w->buf, off, r);
}

/* 1: message sent; 0: would block; -errno: failed. *off is progress. */
int rr_send_from(struct worker *w, struct flow *f, size_t *off,
		 size_t size)
{
	/* --raw: the user's request; else the bytes' content is ours. */
	const char *raw = w->rs->raw ? w->rs->raw->req : NULL;

	while (*off < size) {
		ssize_t r = io_send(w, f->fd, raw ? raw + *off : w->buf,
				    chunk(w, size - *off), MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		*off += r;
		f->bytes_written += r;
	}
	return 1;
}

int rr_send_rest(struct worker *w, struct flow *f, size_t size)
{
	if (f->off == 0)
		rr_put_seq(w, w->rs->is_client ? f->seq_out : f->seq_in);
	return rr_send_from(w, f, &f->off, size);
}

/* recv(), which for a message's first bytes also takes the RX stamp. */
static ssize_t rr_recv(struct worker *w, struct flow *f, size_t len)
{
	if (w->rs->timestamping && f->off == 0 && !w->phooks)
		return tstamp_recv(f->fd, w->buf, len, w->rs->ts_offset,
				   &f->sw_rx);
	return io_recv(w, f->fd, w->buf, len, 0);
}

void rr_sent(struct worker *w, struct flow *f)
{
	if (w->rs->timestamping)
		f->sw_tx = tstamp_tx(f->fd, w->rs->ts_offset);
}

/*
 * --raw with --response-end: responses are found by their terminator,
 * or with -R beside it, checked against it.
 */
static int framed(const struct worker *w)
{
	return w->rs->raw && w->rs->is_client && w->rs->raw->end_len;
}

/* Several requests in flight: bytes after a response start the next. */
int rr_pipelined(const struct worker *w)
{
	return w->rs->o->burst > 1 || w->rs->o->rate > 0;
}

/*
 * Bytes read past the response's end: the next responses' when several
 * are in flight, kept for the next read; else no request asked for them.
 */
static void keep_rest(struct worker *w, struct flow *f, const char *rest,
		      size_t n)
{
	if (!rr_pipelined(w)) {
		f->unexpected += n;
		f->pend_len = 0;
		return;
	}
	if (!f->pend)
		f->pend = xcalloc(1, w->rs->o->buffer_size);
	memmove(f->pend, rest, n);
	f->pend_off = 0;
	f->pend_len = n;
}

/*
 * rr_read_chunk() for terminated responses: a read takes what the socket
 * has, up to -B bytes, and the framing says where the response ends.
 */
static int read_framed(struct worker *w, struct flow *f)
{
	size_t n = f->pend_len, used;
	const char *p = n ? f->pend + f->pend_off : NULL;
	ssize_t r;
	int rc;

	if (!n) {
		/* Sized: never read into the next response (BPF counts). */
		n = w->rs->o->buffer_size;
		if (w->rs->response_size &&
		    w->rs->response_size - f->raw.len < n)
			n = w->rs->response_size - f->raw.len;
		do
			r = rr_recv(w, f, n);
		while (r < 0 && errno == EINTR);
		if (r < 0 && errno == EAGAIN)
			return READ_NOTHING;
		if (r <= 0) {
			rr_flow_failed(w, f, r ? errno : ECONNRESET);
			return READ_FAILED;
		}
		f->bytes_read += r;
		p = w->buf;
		n = r;
	}
	rc = raw_frame(w->rs->raw, &f->raw, p, n, &used);
	if (rc == RAW_OVERLONG) {
		f->overlong = 1;
		rr_flow_failed(w, f, EMSGSIZE);
		return READ_FAILED;
	}
	f->off += used;
	if (p != w->buf) {
		f->pend_off += used;
		f->pend_len -= used;
	}
	if (rc == RAW_MORE)
		return READ_PART;
	if (rc == RAW_BADEND)
		f->mismatched++;
	if (n > used)
		keep_rest(w, f, p + used, n - used);
	return READ_WHOLE;
}

/* What a read's result r (not EINTR) did to the inbound message. */
int rr_took(struct worker *w, struct flow *f, ssize_t r)
{
	if (r < 0 && errno == EAGAIN)
		return READ_NOTHING;
	if (r <= 0) {
		rr_flow_failed(w, f, r ? errno : ECONNRESET);
		return READ_FAILED;
	}
	take_seq(w, f, f->off, r);
	f->off += r;
	f->bytes_read += r;
	return f->off == rx_size(w) ? READ_WHOLE : READ_PART;
}

/*
 * Read once toward the inbound message; READ_FAILED closed the flow.
 * A message's EPOLL_RET is the wake-up its first read followed, if that
 * read was the first since (*woken): one read later in the same round,
 * the data may have come after the wake-up and had no wait of its own.
 */
int rr_read_chunk(struct worker *w, struct flow *f, int *woken)
{
	size_t size = rx_size(w);
	ssize_t r;

	if (f->off == 0)
		f->t_epoll = *woken ? w->t_epoll : 0;
	*woken = 0;
	if (framed(w))
		return read_framed(w, f);

	do
		r = rr_recv(w, f, chunk(w, size - f->off));
	while (r < 0 && errno == EINTR);
	return rr_took(w, f, r);
}
