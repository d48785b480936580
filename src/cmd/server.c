/*
 * The server side: wait for real clients on the control port (dropping
 * and counting connections that do not speak our protocol or know the
 * magic), take their parameters, accept their flows, run until every
 * client says stop or goes away, and report.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/common.h"
#include "control/control.h"
#include "sys/fdlimit.h"
#include "control/greeter.h"
#include "results/results_wire.h"
#include "net/net.h"
#include "sys/privs.h"
#include "cmd/run.h"
#include "script/script.h"
#include "side/side.h"
#include "side/side_out.h"
#include "sys/stop.h"

#define HELLO_TIMEOUT_MS 5000
/* Well inside the client's control timeout (10 s). */
#define WAIT_TICK_MS 2000
#define SETUP_TIMEOUT_MS 10000
/* How long past its length a test may run before the server gives up. */
#define STOP_GRACE_S 30
#define DRAIN_NS (2 * NSEC_PER_SEC)

struct server {
	struct side side;
	struct options *o;
	const struct workload *wl;
	int ctl_listen;
	int data_listen;
	int data_port;
	int ctl[1024];		/* one control connection per client */
	/* HF_WANTS_RESULTS: that client joins the records (two hosts) */
	unsigned char wants_results[1024];
	int nclients;
	int total_flows;
	uint32_t hello_flags;
	int invalid_total;	/* dropped control connections, all tests */
	struct side_hook hook;	/* --script: the data listener's hooks */
	char err[256];
};

static void refuse(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
	struct ctl_msg m = { .type = CTL_ACK };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	m.f[A_STATUS] = 1;
	log_err("refused a client: %s", m.text);
	ctl_send(fd, &m);
}

/* Parameters a client may ask for; anything else is refused. */
static int check_hello(struct server *sv, int fd, const struct ctl_msg *m)
{
	const struct workload *want = workload_by_bit(m->f[H_WORKLOAD]);
	struct options *o = sv->o;
	char why[160];

	if (want != sv->wl) {
		refuse(fd, "this server runs %s, the client asked for %s",
		       sv->wl->name, want ? want->name : "an unknown workload");
		return -1;
	}
	if (want == &udp_rr_workload && (m->f[H_REQUEST] > 65507 ||
					 m->f[H_RESPONSE] > 65507)) {
		refuse(fd, "udp_rr messages are datagrams of at most 65507 bytes");
		return -1;
	}
	if (m->f[H_FLOWS] < 1 || m->f[H_FLOWS] > (1 << 20) ||
	    (want->is_rr && (m->f[H_REQUEST] < 1 ||
			     m->f[H_REQUEST] > (64 << 20) ||
			     m->f[H_RESPONSE] < 1 ||
			     m->f[H_RESPONSE] > (64 << 20))) ||
	    m->f[H_LENGTH] < 1 || m->f[H_LENGTH] > 1000000) {
		refuse(fd, "test parameters out of range");
		return -1;
	}
	if (io_thread_per_flow(o->io_mode) &&
	    sv->total_flows + (int)m->f[H_FLOWS] > o->num_threads) {
		refuse(fd, "server --io-mode %s has %d threads for %d flows",
		       io_mode_name(o->io_mode),
		       o->num_threads, sv->total_flows + (int)m->f[H_FLOWS]);
		return -1;
	}
	if (o->io_mode == IO_BLOCKING && want == &tcp_stream_workload &&
	    (m->f[H_FLAGS] & HF_CLIENT_READS)) {
		refuse(fd, "server --io-mode blocking moves a flow's data one "
		       "way: the client may not read (--enable-read)");
		return -1;
	}
	if (fd_limit_ensure(sv->total_flows + m->f[H_FLOWS] + FD_SPARE,
			    why, sizeof(why))) {
		refuse(fd, "server: %s", why);
		return -1;
	}
	if (sv->nclients && want->is_rr && (o->request_size != (int)m->f[H_REQUEST] ||
			     o->response_size != (int)m->f[H_RESPONSE])) {
		refuse(fd, "clients of one test must agree on message sizes");
		return -1;
	}
	return 0;
}

/* A HELLO with the right magic and parameters: take the client. */
static int take_client(struct server *sv, int fd, const struct ctl_msg *m)
{
	if ((uint32_t)m->f[H_MAGIC] != (uint32_t)sv->o->magic) {
		sv->side.res.invalid_secret_count++;
		log_err("dropped a control connection: wrong magic");
		return -1;
	}
	if (check_hello(sv, fd, m))
		return -1;
	sv->o->request_size = m->f[H_REQUEST];
	sv->o->response_size = m->f[H_RESPONSE];
	sv->o->test_length = m->f[H_LENGTH];
	sv->total_flows += m->f[H_FLOWS];
	sv->hello_flags |= m->f[H_FLAGS];
	if ((int)m->f[H_INFLIGHT] > sv->side.rs.peer_inflight)
		sv->side.rs.peer_inflight = m->f[H_INFLIGHT];
	sv->side.rs.peer_flows = sv->total_flows;
	sv->wants_results[sv->nclients] = !!(m->f[H_FLAGS] & HF_WANTS_RESULTS);
	sv->ctl[sv->nclients++] = fd;
	log_info("client %d connected", sv->nclients);
	return 0;
}

/*
 * Those in wait for the others, each within its control timeout: tell
 * them, so that a client started long before the last keeps waiting. A
 * client gone is found at the handshake.
 */
static void tell_waiting(struct server *sv)
{
	struct ctl_msg m = { .type = CTL_WAIT };
	int i;

	m.f[W_IN] = (uint64_t)sv->nclients;
	m.f[W_NEEDED] = (uint64_t)sv->o->num_clients;
	for (i = 0; i < sv->nclients; i++)
		(void)ctl_send(sv->ctl[i], &m);
}

/*
 * Greet control connections, all pending ones at once (greeter.h),
 * until the clients the test needs are in.
 */
static int wait_clients(struct server *sv)
{
	struct greeter g;
	struct ctl_msg m;
	int fd, rc = 0;

	greeter_init(&g, sv->ctl_listen, HELLO_TIMEOUT_MS, sv->o->auth);
	g.tick_ms = WAIT_TICK_MS;
	while (sv->nclients < sv->o->num_clients) {
		fd = greeter_next(&g, &m, (volatile const int *)&interrupted,
				  sv->err, sizeof(sv->err));
		if (fd == GREET_TICK) {
			tell_waiting(sv);
			continue;
		}
		if (fd < 0) {
			rc = -1;
			break;
		}
		if (take_client(sv, fd, &m))
			close(fd);
	}
	sv->side.res.invalid_secret_count += g.dropped;
	greeter_free(&g);
	return rc;
}

static int setup_data_socket(struct server *sv, int fd, int id)
{
	struct options *o = sv->o;
	int nonblock = sv->wl->socktype == SOCK_DGRAM ||
		       o->io_mode == IO_SPIN ||
		       (o->io_mode != IO_BLOCKING &&
			(o->nonblocking || o->edge_trigger || !sv->wl->is_rr));

	if (net_data_sockopts(o, fd, sv->wl->socktype, sv->err,
			      sizeof(sv->err)) ||
	    net_set_nonblock(fd, nonblock)) {
		close(fd);
		return -1;
	}
	side_add_flow(&sv->side, flow_new(fd, id, 0));
	return 0;
}

/* Has a client's control connection closed or failed? */
static int client_gone(struct server *sv)
{
	struct pollfd p;
	int i;

	for (i = 0; i < sv->nclients; i++) {
		p = (struct pollfd){ .fd = sv->ctl[i], .events = POLLRDHUP };
		if (poll(&p, 1, 0) > 0 &&
		    (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			return 1;
	}
	return 0;
}

static int accept_flows(struct server *sv)
{
	uint64_t deadline = now_ns() + SETUP_TIMEOUT_MS * 1000000ULL;
	int i;

	for (i = 0; i < sv->total_flows; i++) {
		struct pollfd p = { .fd = sv->data_listen, .events = POLLIN };
		uint64_t now = now_ns();
		int fd, rc = 0;

		/* Look at the clients every 100 ms: one may have gone. */
		while (now < deadline && !(rc = poll(&p, 1, 100)) &&
		       !client_gone(sv))
			now = now_ns();
		if (rc <= 0 && now < deadline) {
			snprintf(sv->err, sizeof(sv->err),
				 "a client went away during set-up");
			return -1;
		}
		if (rc <= 0) {
			snprintf(sv->err, sizeof(sv->err),
				 "%d of %d flows connected in time", i,
				 sv->total_flows);
			return -1;
		}
		fd = accept4(sv->data_listen, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 || setup_data_socket(sv, fd, i)) {
			if (fd < 0)
				snprintf(sv->err, sizeof(sv->err), "accept: %s",
					 strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * Sockets of their own for each worker, sharing the data port by
 * SO_REUSEPORT: a UDP socket, or a tcp_crr listener (non-blocking, so
 * a worker accepts until EAGAIN and never blocks).
 */
static int open_per_worker(struct server *sv, int socktype)
{
	struct side_hook sh = { sv->side.rs.script, HOOK_SERVER_SOCKET, 0, 0 };
	struct net_cb cb = { sh.sc ? side_socket_hook : NULL, &sh, 1 };
	int i, fd;

	for (i = 0; i < sv->o->num_threads; i++) {
		sh.worker = i;
		fd = net_listen(sv->o, socktype, sv->data_port, 1, &cb,
				sv->err, sizeof(sv->err));
		if (fd < 0 || setup_data_socket(sv, fd, i))
			return -1;
		sv->side.flows[sv->side.nflows - 1]->hooked = sh.sc != NULL;
		if (socktype == SOCK_STREAM) {
			sv->side.flows[sv->side.nflows - 1]->listener = 1;
			net_set_nonblock(fd, 1);
		}
		if (!i)
			sv->data_port = net_local_port(fd);
	}
	return 0;
}

static int open_listeners(struct server *sv)
{
	struct options *o = sv->o;
	unsigned char port[2];
	struct net_cb cb = { sv->hook.sc ? side_socket_hook : NULL, &sv->hook,
			     1 };

	sv->ctl_listen = net_listen(o, SOCK_STREAM, o->control_port, 0, NULL,
				    sv->err, sizeof(sv->err));
	if (sv->ctl_listen < 0)
		return -1;
	sv->data_port = o->port;
	/* UDP and tcp_crr sockets belong to each test: see serve(). */
	if (sv->wl->socktype == SOCK_STREAM && !sv->wl->accepts_per_worker) {
		sv->data_listen = net_listen(o, SOCK_STREAM, o->port, 0, &cb,
					     sv->err, sizeof(sv->err));
		if (sv->data_listen < 0)
			return -1;
		sv->data_port = net_local_port(sv->data_listen);
	}
	if (o->port_fd > 0) {
		int p = net_local_port(sv->ctl_listen);

		port[0] = p >> 8;
		port[1] = p & 0xff;
		if (write(o->port_fd, port, 2) != 2)
			return -1;
		close(o->port_fd);
	}
	log_info("listening: control port %d, data port %d",
		 net_local_port(sv->ctl_listen), sv->data_port);
	/* A server that says nothing looks hung: say what it waits for. */
	if (o->port_fd <= 0 && !o->quiet)
		log_err("waiting for %d client%s on control port %d",
			o->num_clients, o->num_clients == 1 ? "" : "s",
			net_local_port(sv->ctl_listen));
	return 0;
}

static int handshake(struct server *sv)
{
	struct ctl_msg m = { .type = CTL_ACK };
	int i;

	m.f[A_DATA_PORT] = sv->data_port;
	/* Its options say the port it took (--local's is ephemeral). */
	sv->o->port = sv->data_port;
	for (i = 0; i < sv->nclients; i++)
		if (ctl_send(sv->ctl[i], &m))
			goto lost;
	if (sv->wl->socktype == SOCK_STREAM && !sv->wl->accepts_per_worker &&
	    accept_flows(sv))
		return -1;
	m = (struct ctl_msg){ .type = CTL_READY };
	for (i = 0; i < sv->nclients; i++)
		if (ctl_send(sv->ctl[i], &m))
			goto lost;
	for (i = 0; i < sv->nclients; i++)
		if (ctl_expect(sv->ctl[i], CTL_START, &m, SETUP_TIMEOUT_MS))
			goto lost;
	return 0;
lost:
	snprintf(sv->err, sizeof(sv->err), "a client went away during set-up");
	return -1;
}

/* Wait for STOP from every client; -1 if one vanished or time ran out. */
static int wait_stop(struct server *sv)
{
	uint64_t deadline = sv->side.rs.t_start +
			    (sv->o->test_length + STOP_GRACE_S) * NSEC_PER_SEC;
	struct pollfd p[1024];
	int i, left = sv->nclients;
	struct ctl_msg m;

	for (i = 0; i < sv->nclients; i++)
		p[i] = (struct pollfd){ .fd = sv->ctl[i], .events = POLLIN };
	while (left) {
		uint64_t now = now_ns();

		if (interrupted)
			return sv->side.res.error = interrupted_why(), -1;
		if (now >= deadline)
			return sv->side.res.error = "no stop from the client in time", -1;
		if (poll(p, sv->nclients, (deadline - now) / 1000000 + 1) <= 0)
			continue;
		for (i = 0; i < sv->nclients; i++) {
			if (!p[i].revents)
				continue;
			if (ctl_expect(p[i].fd, CTL_STOP, &m, 1000))
				return sv->side.res.error =
					       "client went away before the end of the test",
				       -1;
			p[i].fd = -1;
			left--;
			sv->side.res.has_remote = 1;
			/* Counts add up over clients; CPU figures do not. */
			for (int j = 0; j < R_NFIELDS; j++)
				sv->side.res.remote[j] = j < R_CPU_UTIL_PPM ?
					sv->side.res.remote[j] + m.f[j] : m.f[j];
		}
	}
	return 0;
}

static void send_results(struct server *sv)
{
	struct ctl_msg m = { .type = CTL_RESULT };
	int i;

	report_fill_totals(&sv->side.res, &sv->side.rs, &m);
	for (i = 0; i < sv->nclients; i++)
		ctl_send(sv->ctl[i], &m);
}

/* serve(): a client failed its set-up; the server waits for others. */
#define SETUP_FAILED -2

static int serve(struct server *sv)
{
	struct side *s = &sv->side;
	int failed;

	if (wait_clients(sv))
		return -1;
	if ((sv->wl->socktype == SOCK_DGRAM || sv->wl->accepts_per_worker) &&
	    open_per_worker(sv, sv->wl->socktype))
		return -1;
	/* A client that reads gets the server writing back to it. */
	s->rs.do_write = sv->o->enable_write ||
			 (sv->hello_flags & HF_CLIENT_READS);
	s->rs.request_size = sv->o->request_size;
	s->rs.response_size = sv->o->response_size;
	side_open_tracer(s, sv->data_port);
	privs_loaded();
	if (handshake(sv))
		return SETUP_FAILED;
	if (side_start(s, sv->err, sizeof(sv->err)))
		return -1;
	failed = wait_stop(sv);
	if (!failed && sv->wl->socktype == SOCK_STREAM && !sv->wl->is_rr) {
		/* Read what the client sent before its stop: counts agree. */
		s->rs.drain_deadline = now_ns() + DRAIN_NS;
		atomic_store(&s->rs.drain, 1);
	}
	side_stop(s);
	if (sv->wl->accepts_per_worker || sv->wl->socktype == SOCK_DGRAM)
		/* Listeners and shared UDP sockets: the clients' flows count. */
		s->res.num_flows = sv->total_flows;
	send_results(sv);
	return failed ? 1 : 0;
}

/* After RESULT: does any client want another test (--iterations)? */
static int another_test(struct server *sv)
{
	struct ctl_msg m;
	int i, more = 0;

	for (i = 0; i < sv->nclients; i++)
		if (!ctl_expect(sv->ctl[i], CTL_NEXT, &m, SETUP_TIMEOUT_MS) &&
		    m.f[N_MORE])
			more = 1;
	return more;
}

/*
 * The model, with this server's options lines, to each client that
 * asked: theirs to join with their own records. A client that stops
 * reading does not hold the server past RESULTS_SEND_S.
 */
#define RESULTS_SEND_S 30

static void share_results(const struct run_results *r, void *arg)
{
	struct server *sv = arg;
	struct timeval t = { RESULTS_SEND_S, 0 };
	struct run_results with = *r;
	int i;

	with.header = (struct kv_list){ 0 };
	options_header(sv->o, sv->wl->name, &with.header);
	for (i = 0; i < sv->nclients; i++) {
		if (!sv->wants_results[i])
			continue;
		setsockopt(sv->ctl[i], SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t));
		if (results_send(sv->ctl[i], &with))
			log_err("client %d: its copy of the results: %s", i + 1,
				strerror(errno));
	}
	kv_free(&with.header);
}

/* One test; 1 if a client asked for another. Results only at the last. */
static int one_test(struct server *sv, int *rc)
{
	int r, more, i, invalid = sv->invalid_total;

	if (side_init(&sv->side, sv->o, sv->wl, 0, sv->err,
		      sizeof(sv->err))) {
		log_err("%s", sv->err);
		*rc = EXIT_RUNTIME;
		return 0;
	}
	sv->side.res.invalid_secret_count = invalid;
	r = serve(sv);
	more = r == 0 && another_test(sv);
	if (more) {
		log_info("a client asked for another test");
	} else if (r == SETUP_FAILED && !interrupted) {
		/* One client's failure is no reason to stop serving. */
		log_err("%s: waiting for clients again", sv->err);
		more = 1;
	} else {
		if (r == 0) {
			sv->side.share = share_results;
			sv->side.share_arg = sv;
		}
		*rc = side_conclude(&sv->side, r == SETUP_FAILED ? -1 : r,
				    sv->err);
	}
	sv->invalid_total = sv->side.res.invalid_secret_count;
	for (i = 0; i < sv->nclients; i++)
		close(sv->ctl[i]);
	sv->nclients = 0;
	sv->total_flows = 0;
	sv->hello_flags = 0;
	side_free(&sv->side);
	return more;
}

int server_run(struct options *o, const struct workload *wl)
{
	struct server *sv = xcalloc(1, sizeof(*sv));
	int rc = 0;

	sv->o = o;
	sv->wl = wl;
	sv->ctl_listen = sv->data_listen = -1;
	/* The one listener's hooks run in every worker's state. */
	sv->hook = (struct side_hook){ script_current(), HOOK_SERVER_SOCKET,
				       -1, o->num_threads };
	if (open_listeners(sv)) {
		log_err("%s", sv->err);
		rc = EXIT_RUNTIME;
	} else {
		while (one_test(sv, &rc))
			;
	}
	if (sv->ctl_listen >= 0)
		close(sv->ctl_listen);
	if (sv->data_listen >= 0) {
		sv->hook.hook = HOOK_SERVER_CLOSE;
		side_close_hook(&sv->hook, sv->data_listen, SOCK_STREAM, NULL);
		close(sv->data_listen);
	}
	free(sv);
	return rc;
}
