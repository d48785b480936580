/*
 * Request/response engine. One message in flight per flow: the client
 * sends a request and waits for the whole response, the server waits
 * for the whole request and sends a response. A client transaction ends
 * when the response is complete (its latency is recorded then); a server
 * transaction ends when the response is fully sent.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "../common.h"
#include "../io.h"
#include "../trace/collect.h"
#include "../tstamp.h"
#include "../worker.h"
#include "rr.h"
#include "seq.h"
#include "stages.h"

enum { RR_SENDING = 1, RR_RECEIVING };

static size_t tx_size(const struct worker *w)
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

static void pause_delay(const struct worker *w)
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
static int traced(struct worker *w, struct flow *f, uint64_t done)
{
	struct ustamps u = {
		/* tcp_crr: t_send is the connect, where its latency starts. */
		.app_send = f->t_connect ? f->t_app_send : f->t_send,
		.epoll_ret = f->t_epoll, .app_done = done,
		.sw_tx = f->sw_tx, .sw_rx = f->sw_rx,
		.connect = f->t_connect, .accept_ret = f->t_accept,
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
static uint64_t next_start(struct worker *w, struct flow *f, uint64_t now)
{
	return w->tw && traced(w, f, now) ? now_ns() : now;
}

/*
 * Lean --trace=hist: the flow's RECV_RET (rx) or SEND_RET for BPF
 * (struct ns_wstamp), at `now`, or at a clock read of its own if 0. A
 * message --trace-sample leaves out is counted, not stamped.
 */
static void wstamp(struct worker *w, struct flow *f, int rx, uint64_t now)
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
static void flow_failed(struct worker *w, struct flow *f, int err)
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

static int answers(const struct worker *w, const struct flow *f,
		   uint64_t seq)
{
	return f->seq_in == seq_trunc(seq, seq_len(w));
}

static void put_seq(struct worker *w, uint64_t seq)
{
	seq_put(w->buf, seq_len(w), seq);
}

static void take_seq(struct worker *w, struct flow *f, size_t off, size_t r)
{
	seq_take(&f->seq_in, seq_len(w), w->buf, off, r);
}

/* 1: message sent; 0: would block; -errno: failed. *off is progress. */
static int send_from(struct worker *w, struct flow *f, size_t *off,
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

static int send_rest(struct worker *w, struct flow *f, size_t size)
{
	if (f->off == 0)
		put_seq(w, w->rs->is_client ? f->seq_out : f->seq_in);
	return send_from(w, f, &f->off, size);
}

/* recv(), which for a message's first bytes also takes the RX stamp. */
static ssize_t rr_recv(struct worker *w, struct flow *f, size_t len)
{
	if (w->rs->timestamping && f->off == 0 && !w->phooks)
		return tstamp_recv(f->fd, w->buf, len, w->rs->ts_offset,
				   &f->sw_rx);
	return io_recv(w, f->fd, w->buf, len, 0);
}

static void sent(struct worker *w, struct flow *f)
{
	if (w->rs->timestamping)
		f->sw_tx = tstamp_tx(f->fd, w->rs->ts_offset);
}

static void continue_send(struct worker *w, struct flow *f)
{
	int rc = send_rest(w, f, tx_size(w));

	if (rc < 0) {
		flow_failed(w, f, -rc);
		return;
	}
	if (rc == 0) {
		worker_arm(w, f, EPOLLOUT);
		return;
	}
	sent(w, f);
	if (!w->rs->is_client) {
		f->transactions++;
		if (f->ws)
			wstamp(w, f, 0, 0);
		if (w->tw)
			traced(w, f, trace_worker_sampled(w->tw, f) ?
				     now_ns() : 0);
	}
	f->state = RR_RECEIVING;
	f->off = 0;
	worker_arm(w, f, EPOLLIN);
}

static int pipelined(const struct worker *w);

/*
 * --raw -R without --response-end: a response is the next -R bytes,
 * so bytes already there before a request is sent (no request was
 * outstanding) would pass for its response. They are the server's
 * own, counted as no request's and dropped.
 */
static void drop_unasked(struct worker *w, struct flow *f)
{
	int n = 0;
	ssize_t r;

	if (ioctl(f->fd, FIONREAD, &n) || n <= 0)
		return;
	do {
		r = recv(f->fd, w->buf, n < w->rs->o->buffer_size ?
			 n : w->rs->o->buffer_size, MSG_DONTWAIT);
		if (r > 0) {
			f->unexpected += r;
			f->bytes_read += r;
			n -= r;
		}
	} while (r > 0 && n > 0);
}

void rr_begin_send(struct worker *w, struct flow *f, uint64_t now)
{
	if (w->rs->raw && w->rs->is_client && !w->rs->raw->end_len &&
	    !pipelined(w))
		drop_unasked(w, f);
	if (w->rs->o->delay) {
		pause_delay(w);
		now = now_ns();
	}
	f->state = RR_SENDING;
	f->off = 0;
	f->t_send = now;
	if (w->rs->is_client)
		f->seq_out++;
	continue_send(w, f);
}

static void message_received(struct worker *w, struct flow *f)
{
	uint64_t now = 0;

	if (w->rs->is_client) {
		now = now_ns();
		hist_add(f->lat, now - f->t_send);
		f->t_progress = now;
		f->transactions++;
		if (!answers(w, f, f->seq_out))
			f->mismatched++;
		if (f->ws)
			wstamp(w, f, 1, now);
		now = next_start(w, f, now);
		if (w->rs->wl->client_done) {
			w->rs->wl->client_done(w, f, now);
			return;
		}
	} else if (w->tw && trace_worker_sampled(w->tw, f)) {
		now = now_ns();	/* the server's APP_SEND */
		f->t_recv = now;
	} else if (f->ws) {
		wstamp(w, f, 1, 0);
	}
	rr_begin_send(w, f, now);
}

enum { READ_FAILED = -1, READ_NOTHING, READ_PART, READ_WHOLE };

/*
 * --raw with --response-end: responses are found by their terminator,
 * or with -R beside it, checked against it.
 */
static int framed(const struct worker *w)
{
	return w->rs->raw && w->rs->is_client && w->rs->raw->end_len;
}

/* Several requests in flight: bytes after a response start the next. */
static int pipelined(const struct worker *w)
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
	if (!pipelined(w)) {
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
 * read_chunk() for terminated responses: a read takes what the socket
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
			flow_failed(w, f, r ? errno : ECONNRESET);
			return READ_FAILED;
		}
		f->bytes_read += r;
		p = w->buf;
		n = r;
	}
	rc = raw_frame(w->rs->raw, &f->raw, p, n, &used);
	if (rc == RAW_OVERLONG) {
		f->overlong = 1;
		flow_failed(w, f, EMSGSIZE);
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
static int took(struct worker *w, struct flow *f, ssize_t r)
{
	if (r < 0 && errno == EAGAIN)
		return READ_NOTHING;
	if (r <= 0) {
		flow_failed(w, f, r ? errno : ECONNRESET);
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
static int read_chunk(struct worker *w, struct flow *f, int *woken)
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
	return took(w, f, r);
}

static void on_readable(struct worker *w, struct flow *f)
{
	int edge = w->rs->o->edge_trigger, rc, woken = 1;

	while (f->open && f->state == RR_RECEIVING) {
		rc = read_chunk(w, f, &woken);
		if (rc <= READ_NOTHING)
			return;
		if (rc == READ_WHOLE)
			message_received(w, f);
		if (!edge)
			return;
	}
}

static int open_loop(const struct worker *w)
{
	return w->rs->o->rate > 0;
}

/* Slots of the per-flow rings of send times, by sequence number. */
static int ring_size(const struct worker *w)
{
	return open_loop(w) ? OPEN_INFLIGHT : w->rs->o->burst;
}

static void continue_open(struct worker *w, struct flow *f);

/*
 * --burst N (and --rate): the client keeps several requests outstanding.
 * TCP keeps them in order, so responses come back in the order of their
 * requests, and each one's echoed sequence number checks that. Sends
 * and receives interleave: a request can be half written (soff) while
 * responses are read (off).
 */
static void burst_pump(struct worker *w, struct flow *f)
{
	int rc, n = ring_size(w);

	while (f->to_send > 0) {
		if (f->soff == 0) {
			f->seq_out++;
			put_seq(w, f->seq_out);
			f->sent_at[f->seq_out % n] = now_ns();
		}
		rc = send_from(w, f, &f->soff, tx_size(w));
		if (rc < 0) {
			flow_failed(w, f, -rc);
			return;
		}
		if (rc == 0) {
			worker_arm(w, f, EPOLLIN | EPOLLOUT);
			return;
		}
		f->soff = 0;
		f->to_send--;
		f->sent_total++;
	}
	worker_arm(w, f, EPOLLIN);
}

static void burst_read(struct worker *w, struct flow *f)
{
	int edge = w->rs->o->edge_trigger, n = ring_size(w);
	int rc, woken = 1;

	while (f->open) {
		uint64_t now;

		rc = read_chunk(w, f, &woken);
		if (rc <= READ_NOTHING)
			return;
		if (rc == READ_WHOLE) {
			now = now_ns();
			f->seq_recv++;
			if (!answers(w, f, f->seq_recv))
				f->mismatched++;
			f->transactions++;
			f->t_progress = now;
			f->off = 0;
			f->t_send = f->sent_at[f->seq_recv % n];
			if (open_loop(w)) {
				/* From the intended send: stalls are not hidden. */
				hist_add(f->lat, now -
					 f->intended_at[f->seq_recv % n]);
				hist_add(f->lat_unc, now - f->t_send);
			} else {
				hist_add(f->lat, now - f->t_send);
			}
			if (w->tw)
				traced(w, f, now);
			if (f->ws)
				wstamp(w, f, 1, now);
			if (open_loop(w)) {
				continue_open(w, f);
			} else {
				f->to_send++;
				burst_pump(w, f);
			}
		}
		/* Bytes kept from the last read are read by nobody else. */
		if (!edge && !f->pend_len)
			return;
	}
}

static void burst_start(struct worker *w, struct flow *f)
{
	f->sent_at = xcalloc(w->rs->o->burst, sizeof(*f->sent_at));
	f->to_send = w->rs->o->burst;
	burst_pump(w, f);
}

/* --rate: the time to the flow's next request, in ns. */
static uint64_t interarrival(struct worker *w)
{
	double mean = 1e9 * w->rs->o->num_flows / w->rs->o->rate, u;

	if (w->rs->o->arrival[0] == 'u')
		return (uint64_t)mean;
	/* xorshift64*: exponential gaps make Poisson arrivals. */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	u = ((w->rng * 0x2545f4914f6cdd1dULL) >> 11) * 0x1.0p-53;
	return (uint64_t)(-log(1.0 - u) * mean);
}

/* Send what is queued; a half-written request waits for EPOLLOUT. */
static void continue_open(struct worker *w, struct flow *f)
{
	if (f->to_send > 0 && f->soff == 0)
		burst_pump(w, f);
}

static void open_start(struct worker *w, struct flow *f)
{
	f->sent_at = xcalloc(OPEN_INFLIGHT, sizeof(*f->sent_at));
	f->intended_at = xcalloc(OPEN_INFLIGHT, sizeof(*f->intended_at));
	if (!w->rng)
		w->rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)w->id << 32) ^
			 now_ns();
	/* Flows start at random points of their first gap: no lockstep. */
	f->next_intended = w->rs->t_start + interarrival(w);
	worker_arm(w, f, EPOLLIN);
}

/* Queue every request whose time has come; the earliest next time. */
uint64_t rr_tick(struct worker *w, uint64_t now)
{
	uint64_t next = 0;
	int i;

	if (!open_loop(w) || !w->rs->is_client)
		return 0;
	for (i = 0; i < w->nflows; i++) {
		struct flow *f = w->flows[i];
		uint64_t queued;

		if (!f->open)
			continue;
		while (f->next_intended <= now) {
			queued = f->seq_out + f->to_send - (f->soff ? 1 : 0);
			if (queued - f->seq_recv >=
			    (uint64_t)options_inflight(w->rs->o,
						     w->rs->tracer != NULL)) {
				f->behind++;	/* the client cannot keep up */
			} else {
				f->intended_at[(queued + 1) % OPEN_INFLIGHT] =
					f->next_intended;
				f->to_send++;
			}
			f->next_intended += interarrival(w);
		}
		continue_open(w, f);
		if (!next || f->next_intended < next)
			next = f->next_intended;
	}
	return next;
}

static void burst_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (events & EPOLLOUT)
		burst_pump(w, f);
	if (f->open && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		burst_read(w, f);
}

void rr_start(struct worker *w, struct flow *f)
{
	if (w->rs->is_client && open_loop(w)) {
		open_start(w, f);
		return;
	}
	if (w->rs->is_client && w->rs->o->burst > 1) {
		burst_start(w, f);
		return;
	}
	if (w->rs->is_client) {
		rr_begin_send(w, f, now_ns());
		return;
	}
	f->state = RR_RECEIVING;
	f->off = 0;
	worker_arm(w, f, EPOLLIN);
}

void rr_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (w->rs->is_client && (w->rs->o->burst > 1 || open_loop(w))) {
		burst_event(w, f, events);
		return;
	}
	if (f->state == RR_SENDING && (events & (EPOLLOUT | EPOLLERR)))
		continue_send(w, f);
	else if (f->state == RR_RECEIVING &&
		 (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		on_readable(w, f);
}

/*
 * One flow per thread: 1 with the whole message read, 0 when the flow
 * ended. A blocking socket waits in recv(); --io-mode=spin's
 * non-blocking one comes back here until the message is in. rc is the
 * last read's outcome; READ_PART reads (again).
 */
static int recv_rest(struct worker *w, struct flow *f, int rc)
{
	int woken = 0;

	while (rc == READ_PART ||
	       (rc == READ_NOTHING && !worker_stopping(w)))
		rc = read_chunk(w, f, &woken);
	return rc == READ_WHOLE;
}

static int recv_all(struct worker *w, struct flow *f)
{
	f->off = 0;
	return recv_rest(w, f, READ_PART);
}

static int recv_on(struct worker *w, struct flow *f, ssize_t r)
{
	f->off = 0;
	return recv_rest(w, f, r < 0 && errno == EINTR ? READ_PART
						      : took(w, f, r));
}

/* The same for sending: >0 sent, 0 stopped first, <0 -errno. */
static int send_more(struct worker *w, struct flow *f, int rc)
{
	while (rc == 0 && !worker_stopping(w))
		rc = send_rest(w, f, tx_size(w));
	return rc;
}

static int send_all(struct worker *w, struct flow *f)
{
	f->off = 0;
	return send_more(w, f, send_rest(w, f, tx_size(w)));
}

static int send_on(struct worker *w, struct flow *f, ssize_t r)
{
	f->off = 0;
	if (r >= 0) {
		f->off = r;
		f->bytes_written += r;
	} else if (errno != EINTR && errno != EAGAIN) {
		return -errno;
	}
	return send_more(w, f, send_rest(w, f, tx_size(w)));
}

/* What the plain loops hand a message to when one call did not do. */
static const struct rr_rest rest = { .recv_on = recv_on,
				     .send_on = send_on };

/* rr_run_blocking() as it is for every case; >0 or 0 stopped, <0 -errno. */
static int general_loop(struct worker *w, struct flow *f)
{
	int client = w->rs->is_client, rc = 0;

	uint64_t t0 = now_ns(), now;

	while (!worker_stopping(w)) {
		if (client) {
			if (w->rs->o->delay) {
				pause_delay(w);
				t0 = now_ns();
			}
			f->seq_out++;
			rc = send_all(w, f);
			if (rc > 0) {
				sent(w, f);
				rc = recv_all(w, f);
			}
			if (rc > 0 && !answers(w, f, f->seq_out))
				f->mismatched++;
		} else {
			rc = recv_all(w, f);
			if (w->tw && trace_worker_sampled(w->tw, f))
				f->t_recv = f->t_send = now_ns();
			if (rc > 0 && f->ws)
				wstamp(w, f, 1, 0);
			if (rc > 0)
				rc = send_all(w, f);
			if (rc > 0) {
				sent(w, f);
				if (f->ws)
					wstamp(w, f, 0, 0);
			}
		}
		if (rc <= 0)
			break;
		if (!client && !w->tw) {
			/* An untraced server has no use for the time. */
			f->transactions++;
			worker_poll_snapshot(w);
			continue;
		}
		/* One clock read ends this transaction and starts the next. */
		now = now_ns();
		if (client) {
			hist_add(f->lat, now - t0);
			f->t_send = t0;
			f->t_progress = now;
			if (f->ws)
				wstamp(w, f, 1, now);
			t0 = next_start(w, f, now);
		} else {
			traced(w, f, now);
		}
		f->transactions++;
		worker_maybe_snapshot(w, now);
	}
	return rc;
}

void rr_run_blocking(struct worker *w, struct flow *f)
{
	int rc;

	if (!rr_plain(w, f))
		rc = general_loop(w, f);
	else if (w->rs->is_client)
		rc = rr_plain_client(w, f, &rest);
	else
		rc = rr_plain_server(w, f, &rest);
	if (rc < 0 && !worker_stopping(w))
		flow_failed(w, f, -rc);
	else
		worker_flow_closed(w, f);
}
