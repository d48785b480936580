/*
 * Connect/request/response (netperf TCP_CRR): a new connection per
 * transaction. The client connects, sends the request, reads the
 * response and closes, with SO_LINGER 0 so that ports do not pile up
 * in TIME_WAIT; its latency runs from the connect. The server's
 * workers each own a listener (SO_REUSEPORT spreads connections over
 * them) and serve what they accept with the rr engine.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/common.h"
#include "net/net.h"
#include "script/script.h"
#include "trace/tracer.h"
#include "engine/worker.h"

enum { CRR_CONNECTING = 100 };

static void reconnect(struct worker *w, struct flow *f, uint64_t now)
{
	const struct run_shared *rs = w->rs;
	struct linger lg = { 1, 0 };
	char err[160];
	int fd;

	if (f->fd >= 0) {
		if (w->sw)
			script_socket_hook(w->sw, HOOK_CLIENT_CLOSE, f->fd,
					   &rs->data_addr, SOCK_STREAM);
		setsockopt(f->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(f->fd);	/* also leaves the epoll set */
		f->fd = -1;
		f->events = 0;
	}
	if (worker_stopping(w))
		return;
	fd = socket(rs->data_addr.ss.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    net_set_congestion(rs->o, fd, SOCK_STREAM, err, sizeof(err)) ||
	    net_data_sockopts(rs->o, fd, SOCK_STREAM, err, sizeof(err)) ||
	    (w->sw && script_socket_hook(w->sw, HOOK_CLIENT_SOCKET, fd,
					 &rs->data_addr, SOCK_STREAM))) {
		worker_error(w, errno);
		if (fd >= 0)
			close(fd);
		worker_flow_closed(w, f);
		return;
	}
	f->fd = fd;
	f->hooked = w->sw != NULL;
	f->raw = (struct raw_rx){ 0 };
	f->pend_len = 0;
	f->t_send = now;
	/* Traced: BPF gives the socket its storage as connect() sends. */
	if (rs->tracer)
		f->t_connect = now;
	f->state = CRR_CONNECTING;
	if (connect(fd, (struct sockaddr *)&rs->data_addr.ss,
		    rs->data_addr.len) && errno != EINPROGRESS) {
		/* Refused: counted, and tried again when epoll says so. */
		worker_error(w, errno);
	}
	worker_arm(w, f, EPOLLOUT);
}

static void connected(struct worker *w, struct flow *f)
{
	socklen_t sl = sizeof(int);
	int soerr = 0;

	if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		worker_error(w, soerr ? soerr : errno);
		reconnect(w, f, now_ns());
		return;
	}
	/* The transaction's clock started at the connect. */
	if (w->tw)
		f->t_app_send = now_ns();
	rr_begin_send(w, f, f->t_send);
}

static void accept_all(struct worker *w, struct flow *listener)
{
	for (;;) {
		int fd = accept4(listener->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		char err[160];
		struct flow *f;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				worker_error(w, errno);
			return;
		}
		if (net_data_sockopts(w->rs->o, fd, SOCK_STREAM, err,
				      sizeof(err))) {
			worker_error(w, errno);
			close(fd);
			continue;
		}
		f = worker_adopt(w, fd);
		/* Traced: BPF made the socket's storage at the handshake. */
		if (w->rs->tracer)
			f->t_accept = now_ns();
		rr_start(w, f);
	}
}

void crr_start(struct worker *w, struct flow *f)
{
	if (f->listener)
		worker_arm(w, f, EPOLLIN);
	else
		reconnect(w, f, now_ns());
}

void crr_event(struct worker *w, struct flow *f, uint32_t events)
{
	if (f->listener)
		accept_all(w, f);
	else if (f->state == CRR_CONNECTING)
		connected(w, f);
	else
		rr_event(w, f, events);
}

void crr_client_done(struct worker *w, struct flow *f, uint64_t now)
{
	reconnect(w, f, now);
}

const struct workload tcp_crr_workload = {
	.name = "tcp_crr",
	.bit = W_TCP_CRR,
	.socktype = SOCK_STREAM,
	.is_rr = 1,
	.start = crr_start,
	.event = crr_event,
	.client_done = crr_client_done,
	.accepts_per_worker = 1,
};
