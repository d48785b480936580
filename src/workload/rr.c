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

#include "core/common.h"
#include "engine/io.h"
#include "trace/collect.h"
#include "core/tstamp.h"
#include "engine/worker.h"
#include "workload/rr.h"
#include "workload/rr_int.h"
#include "workload/seq.h"
#include "stages.h"

static void continue_send(struct worker *w, struct flow *f)
{
	int rc = rr_send_rest(w, f, rr_tx_size(w));

	if (rc < 0) {
		rr_flow_failed(w, f, -rc);
		return;
	}
	if (rc == 0) {
		worker_arm(w, f, EPOLLOUT);
		return;
	}
	rr_sent(w, f);
	if (!w->rs->is_client) {
		f->transactions++;
		if (f->ws)
			rr_wstamp(w, f, 0, 0);
		if (w->tw)
			rr_traced(w, f, trace_worker_sampled(w->tw, f) ?
				     now_ns() : 0);
	}
	f->state = RR_RECEIVING;
	f->off = 0;
	worker_arm(w, f, EPOLLIN);
}


/*
 * --raw -R without --response-end: a response is the next -R bytes,
 * so bytes already there before a request is rr_sent (no request was
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
	    !rr_pipelined(w))
		drop_unasked(w, f);
	if (w->rs->o->delay || (w->rs->o->work && !w->rs->is_client)) {
		rr_pause_delay(w);
		rr_work(w);
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
		if (!rr_answers(w, f, f->seq_out))
			f->mismatched++;
		if (f->ws)
			rr_wstamp(w, f, 1, now);
		now = rr_next_start(w, f, now);
		if (w->rs->wl->client_done) {
			w->rs->wl->client_done(w, f, now);
			return;
		}
	} else if (w->tw && trace_worker_sampled(w->tw, f)) {
		now = now_ns();	/* the server's APP_SEND */
		f->t_recv = now;
	} else if (f->ws) {
		rr_wstamp(w, f, 1, 0);
	}
	rr_begin_send(w, f, now);
}


static void on_readable(struct worker *w, struct flow *f)
{
	int edge = w->rs->o->edge_trigger, rc, woken = 1;

	while (f->open && f->state == RR_RECEIVING) {
		rc = rr_read_chunk(w, f, &woken);
		if (rc <= READ_NOTHING)
			return;
		if (rc == READ_WHOLE)
			message_received(w, f);
		if (!edge)
			return;
	}
}

void rr_start(struct worker *w, struct flow *f)
{
	if (w->rs->is_client && rr_open_loop(w)) {
		rr_open_start(w, f);
		return;
	}
	if (w->rs->is_client && w->rs->o->burst > 1) {
		rr_burst_start(w, f);
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
	if (w->rs->is_client && (w->rs->o->burst > 1 || rr_open_loop(w))) {
		rr_burst_event(w, f, events);
		return;
	}
	if (f->state == RR_SENDING && (events & (EPOLLOUT | EPOLLERR)))
		continue_send(w, f);
	else if (f->state == RR_RECEIVING &&
		 (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		on_readable(w, f);
}
