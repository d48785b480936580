/*
 * The rr engine's loop for a flow with a thread of its own
 * (--io-mode=blocking or spin): a message in one call where it can be
 * (rr_plain.c), the general loop where it cannot.
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
		rc = rr_read_chunk(w, f, &woken);
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
						      : rr_took(w, f, r));
}

/* The same for sending: >0 sent, 0 stopped first, <0 -errno. */
static int send_more(struct worker *w, struct flow *f, int rc)
{
	while (rc == 0 && !worker_stopping(w))
		rc = rr_send_rest(w, f, rr_tx_size(w));
	return rc;
}

static int send_all(struct worker *w, struct flow *f)
{
	f->off = 0;
	return send_more(w, f, rr_send_rest(w, f, rr_tx_size(w)));
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
	return send_more(w, f, rr_send_rest(w, f, rr_tx_size(w)));
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
				rr_pause_delay(w);
				t0 = now_ns();
			}
			f->seq_out++;
			rc = send_all(w, f);
			if (rc > 0) {
				rr_sent(w, f);
				rc = recv_all(w, f);
			}
			if (rc > 0 && !rr_answers(w, f, f->seq_out))
				f->mismatched++;
		} else {
			rc = recv_all(w, f);
			if (w->tw && trace_worker_sampled(w->tw, f))
				f->t_recv = f->t_send = now_ns();
			if (rc > 0 && f->ws)
				rr_wstamp(w, f, 1, 0);
			if (rc > 0 && w->rs->o->work) {
				rr_work(w);
				f->t_send = now_ns();
			}
			if (rc > 0)
				rc = send_all(w, f);
			if (rc > 0) {
				rr_sent(w, f);
				if (f->ws)
					rr_wstamp(w, f, 0, 0);
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
				rr_wstamp(w, f, 1, now);
			t0 = rr_next_start(w, f, now);
		} else {
			rr_traced(w, f, now);
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
		rr_flow_failed(w, f, -rc);
	else
		worker_flow_closed(w, f);
}
