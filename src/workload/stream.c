/*
 * Bulk transfer engine (TCP and UDP). A side reads, writes or both, as
 * fast as the socket lets it; one transaction is one successful
 * send() or recv() call.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "core/common.h"
#include "engine/io.h"
#include "engine/worker.h"

static void flow_gone(struct worker *w, struct flow *f, int err)
{
	if (err && err != ECONNRESET && err != EPIPE)
		worker_error(w, err);
	worker_flow_closed(w, f);
}

/*
 * Calls per readiness event at most: enough to save most epoll_wait()
 * calls on a busy flow, few enough that one flow cannot starve the
 * others of its thread. Edge-triggered epoll must go on to EAGAIN.
 */
#define BURST 16

/*
 * Whether to call again. A short send means the socket's buffer is full
 * for now, so writing stops there. A short recv does not mean the flow
 * is drained: on a busy stream the next segment lands while the last is
 * copied out, so reading goes on to EAGAIN (10% more unpinned on
 * loopback at 128 KiB, docs/performance.md).
 */
static int more(const struct worker *w, int i, int short_send)
{
	if (w->rs->o->edge_trigger)
		return 1;
	return i < BURST && !short_send;
}

static void read_some(struct worker *w, struct flow *f)
{
	size_t len = options_read_size(w->rs->o);
	ssize_t r;
	int i = 0;

	do {
		r = io_recv(w, f->fd, w->buf, len, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r < 0 || (r == 0 && w->rs->wl->socktype == SOCK_STREAM)) {
			flow_gone(w, f, r ? errno : 0);
			return;
		}
		f->bytes_read += r;
		f->transactions++;
	} while (more(w, ++i, 0));
}

static void pause_delay(uint64_t d)
{
	struct timespec ts = { d / NSEC_PER_SEC, d % NSEC_PER_SEC };

	nanosleep(&ts, NULL);
}

static void write_some(struct worker *w, struct flow *f)
{
	uint64_t d = w->rs->o->delay;
	size_t len = w->rs->o->buffer_size;
	ssize_t r;
	int i = 0;

	do {
		if (d)
			pause_delay(d);
		r = io_send(w, f->fd, w->buf, len,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r < 0 && (errno == ECONNREFUSED || errno == ENOBUFS) &&
		    w->rs->wl->socktype == SOCK_DGRAM) {
			/* UDP: the datagram is lost, the flow goes on. */
			worker_error(w, errno);
			return;
		}
		if (r < 0) {
			flow_gone(w, f, errno);
			return;
		}
		f->bytes_written += r;
		f->transactions++;
	} while (more(w, ++i, (size_t)r < len) && !worker_stopping(w));
}

/*
 * --io-mode blocking (tcp_stream): one flow per thread, moving its data
 * one way, as netperf's and iperf3's senders and receivers do. A send()
 * waits in the kernel until the whole buffer is queued, a recv() until
 * anything came; no epoll_wait() between calls. On loopback it moves
 * about 5% more at 128 KiB unpinned than the epoll loop
 * (docs/performance.md).
 */
void stream_run_blocking(struct worker *w, struct flow *f)
{
	size_t len = w->rs->o->buffer_size;
	size_t rlen = options_read_size(w->rs->o);
	int writes = w->rs->do_write;
	uint64_t d = w->rs->o->delay;
	ssize_t r;

	while (!worker_done(w)) {
		if (writes && d)
			pause_delay(d);
		r = writes ? io_send(w, f->fd, w->buf, len, MSG_NOSIGNAL)
			   : io_recv(w, f->fd, w->buf, rlen, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* Stopped while it waited: shutdown() woke it. */
			flow_gone(w, f, r && !worker_done(w) ? errno : 0);
			return;
		}
		if (writes)
			f->bytes_written += r;
		else
			f->bytes_read += r;
		f->transactions++;
		worker_poll_snapshot(w);
	}
	worker_flow_closed(w, f);
}

void stream_start(struct worker *w, struct flow *f)
{
	uint32_t ev = 0;

	if (w->rs->do_read)
		ev |= EPOLLIN;
	if (w->rs->do_write)
		ev |= EPOLLOUT;
	worker_arm(w, f, ev);
}

void stream_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		if (w->rs->do_read)
			read_some(w, f);
		else if (!(events & EPOLLOUT))
			flow_gone(w, f, 0);
	}
	if (!f->open || !(events & EPOLLOUT))
		return;
	if (worker_stopping(w))
		/* Draining after the test: read only. */
		worker_arm(w, f, f->events & ~EPOLLOUT);
	else
		write_some(w, f);
}
