/*
 * The rr client with several requests in flight: --burst N keeps N
 * outstanding, --rate sends on a schedule (an open loop) whatever the
 * responses do.
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

int rr_open_loop(const struct worker *w)
{
	return w->rs->o->rate > 0;
}

/* Slots of the per-flow rings of send times, by sequence number. */
static int ring_size(const struct worker *w)
{
	return rr_open_loop(w) ? OPEN_INFLIGHT : w->rs->o->burst;
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
			rr_put_seq(w, f->seq_out);
			f->sent_at[f->seq_out % n] = now_ns();
		}
		rc = rr_send_from(w, f, &f->soff, rr_tx_size(w));
		if (rc < 0) {
			rr_flow_failed(w, f, -rc);
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

		rc = rr_read_chunk(w, f, &woken);
		if (rc <= READ_NOTHING)
			return;
		if (rc == READ_WHOLE) {
			now = now_ns();
			f->seq_recv++;
			if (!rr_answers(w, f, f->seq_recv))
				f->mismatched++;
			f->transactions++;
			f->t_progress = now;
			f->off = 0;
			f->t_send = f->sent_at[f->seq_recv % n];
			if (rr_open_loop(w)) {
				/* From the intended send: stalls are not hidden. */
				f->t_intended = f->intended_at[f->seq_recv % n];
				hist_add(f->lat, now - f->t_intended);
				hist_add(f->lat_unc, now - f->t_send);
			} else {
				hist_add(f->lat, now - f->t_send);
			}
			if (w->tw)
				rr_traced(w, f, now);
			if (f->ws)
				rr_wstamp(w, f, 1, now);
			if (rr_open_loop(w)) {
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

void rr_burst_start(struct worker *w, struct flow *f)
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

void rr_open_start(struct worker *w, struct flow *f)
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

	if (!rr_open_loop(w) || !w->rs->is_client)
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

void rr_burst_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (events & EPOLLOUT)
		burst_pump(w, f);
	if (f->open && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		burst_read(w, f);
}
