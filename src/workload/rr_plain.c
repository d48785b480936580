/*
 * tcp_rr's blocking loop in its plain case, the fastest ping-pong the
 * engine has. Pinned, each transaction is two context switches, and
 * the user code run between them costs far more than on a warm loop:
 * on the PVM guest of docs/performance.md the general loop's path to
 * each syscall (the options it checks per call, three layers of
 * functions) cost 1.7% of a transaction, about 1 ns an instruction.
 * Here each message is one call whose result is compared with the
 * message's size; anything else (a short read, EINTR, an error, the end
 * of the flow) goes to the general code in rr.c, so both loops count,
 * close and fail flows the same way.
 */
#include <sys/socket.h>

#include "core/common.h"
#include "stats/hist.h"
#include "engine/io.h"
#include "engine/worker.h"
#include "workload/rr.h"
#include "workload/seq.h"

int rr_plain(const struct worker *w, const struct flow *f)
{
	const struct run_shared *rs = w->rs;
	size_t most = (size_t)rs->o->buffer_size;

	return rs->o->io_mode == IO_BLOCKING && !w->tw && !f->ws &&
	       !w->phooks && !rs->raw && !rs->timestamping &&
	       !rs->o->delay && !rs->o->work && rs->request_size && rs->response_size &&
	       rs->request_size <= most && rs->response_size <= most;
}

/* 1 with the message in; else what the general code's recv_on said. */
static int recv_msg(struct worker *w, struct flow *f, size_t len, size_t sn,
		    const struct rr_rest *rest)
{
	ssize_t r = sys_recvfrom(f->fd, w->buf, len, 0, NULL, NULL);

	if (r != (ssize_t)len)
		return rest->recv_on(w, f, r);
	seq_take(&f->seq_in, sn, w->buf, 0, len);
	f->bytes_read += len;
	return 1;
}

/* 1 with the message sent; else what the general code's send_on said. */
static int send_msg(struct worker *w, struct flow *f, size_t len, size_t sn,
		    uint64_t seq, const struct rr_rest *rest)
{
	ssize_t r;

	seq_put(w->buf, sn, seq);
	r = sys_sendto(f->fd, w->buf, len, MSG_NOSIGNAL, NULL, 0);
	if (r != (ssize_t)len)
		return rest->send_on(w, f, r);
	f->bytes_written += len;
	return 1;
}

int rr_plain_client(struct worker *w, struct flow *f,
		    const struct rr_rest *rest)
{
	size_t tx = w->rs->request_size, rx = w->rs->response_size;
	size_t sn = seq_width(tx, rx);
	uint64_t t0 = now_ns(), now;
	int rc = 0;

	while (!worker_stopping(w)) {
		rc = send_msg(w, f, tx, sn, ++f->seq_out, rest);
		if (rc > 0)
			rc = recv_msg(w, f, rx, sn, rest);
		if (rc <= 0)
			break;
		if (f->seq_in != seq_trunc(f->seq_out, sn))
			f->mismatched++;
		/* One clock read ends this transaction and starts the next. */
		now = now_ns();
		hist_add(f->lat, now - t0);
		f->t_send = t0;
		f->t_progress = now;
		t0 = now;
		f->transactions++;
		worker_maybe_snapshot(w, now);
	}
	return rc;
}

int rr_plain_server(struct worker *w, struct flow *f,
		    const struct rr_rest *rest)
{
	size_t rx = w->rs->request_size, tx = w->rs->response_size;
	size_t sn = seq_width(tx, rx);
	int rc = 0;

	while (!worker_stopping(w)) {
		rc = recv_msg(w, f, rx, sn, rest);
		if (rc > 0)
			rc = send_msg(w, f, tx, sn, f->seq_in, rest);
		if (rc <= 0)
			break;
		f->transactions++;
		/* An untraced server has no use for the time. */
		worker_poll_snapshot(w);
	}
	return rc;
}
