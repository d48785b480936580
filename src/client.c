/*
 * The client side: send the test parameters, open the flows, start the
 * test together with the server, end it after --test-length seconds and
 * trade totals with the server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "control.h"
#include "net.h"
#include "run.h"
#include "side.h"

#define CTL_TIMEOUT_MS 10000
/* The server drains a stream for up to 2 s before it answers. */
#define RESULT_TIMEOUT_MS 15000

struct client {
	struct side side;
	struct options *o;
	const struct workload *wl;
	int ctl;
	struct addr data;
	char err[256];
};

static int hello(struct client *c)
{
	struct ctl_msg m = { .type = CTL_HELLO };
	struct options *o = c->o;
	struct addr a;
	int rc;

	if (net_resolve(o->host, o->control_port, net_family(o), &a, c->err,
			sizeof(c->err)))
		return -1;
	c->ctl = net_connect(o, SOCK_STREAM, &a, CTL_TIMEOUT_MS, c->err,
			     sizeof(c->err));
	if (c->ctl < 0) {
		char why[sizeof(c->err)];

		snprintf(why, sizeof(why), "%s", c->err);
		snprintf(c->err, sizeof(c->err), "control connection: %.200s",
			 why);
		return -1;
	}
	m.f[H_MAGIC] = (uint32_t)o->magic;
	m.f[H_WORKLOAD] = c->wl->bit;
	m.f[H_FLOWS] = o->num_flows;
	m.f[H_THREADS] = o->num_threads;
	m.f[H_REQUEST] = o->request_size;
	m.f[H_RESPONSE] = o->response_size;
	m.f[H_BUFFER] = o->buffer_size;
	m.f[H_LENGTH] = o->test_length;
	m.f[H_FLAGS] = (o->enable_read ? HF_CLIENT_READS : 0) |
		       (o->enable_write ? HF_CLIENT_WRITES : 0);
	if (ctl_send(c->ctl, &m))
		return snprintf(c->err, sizeof(c->err), "control: %s",
				strerror(errno)), -1;
	rc = ctl_expect(c->ctl, CTL_ACK, &m, CTL_TIMEOUT_MS);
	if (rc)
		return snprintf(c->err, sizeof(c->err),
				"control: no answer from the server (%s)",
				strerror(-rc)), -1;
	if (m.f[A_STATUS])
		return snprintf(c->err, sizeof(c->err),
				"server refused the test: %s", m.text), -1;
	c->data = a;
	if (a.ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&c->data.ss)->sin6_port =
			htons(m.f[A_DATA_PORT]);
	else
		((struct sockaddr_in *)&c->data.ss)->sin_port =
			htons(m.f[A_DATA_PORT]);
	return 0;
}

static int open_flows(struct client *c)
{
	struct options *o = c->o;
	int nonblock = c->wl->socktype == SOCK_DGRAM ||
		       (o->io_mode != IO_BLOCKING &&
			(o->nonblocking || o->edge_trigger || !c->wl->is_rr));
	int i, fd;

	c->side.rs.data_addr = c->data;
	for (i = 0; i < o->num_flows; i++) {
		if (c->wl->accepts_per_worker) {
			/* tcp_crr connects as part of every transaction. */
			side_add_flow(&c->side, flow_new(-1, i, 1));
			continue;
		}
		fd = net_connect(o, c->wl->socktype, &c->data, CTL_TIMEOUT_MS,
				 c->err, sizeof(c->err));
		if (fd < 0)
			return -1;
		if (net_data_sockopts(o, fd, c->wl->socktype, c->err,
				      sizeof(c->err)) ||
		    net_set_nonblock(fd, nonblock)) {
			close(fd);
			return -1;
		}
		side_add_flow(&c->side, flow_new(fd, i, c->wl->is_rr));
	}
	return 0;
}

/* Sleep out the test; -1 if the server went away or we were stopped. */
static int wait_end(struct client *c)
{
	uint64_t end = c->side.rs.t_start + c->o->test_length * NSEC_PER_SEC;
	struct pollfd p = { .fd = c->ctl, .events = POLLIN };

	for (;;) {
		uint64_t now = now_ns();

		if (interrupted)
			return c->side.res.error = "interrupted", -1;
		if (now >= end)
			return 0;
		if (poll(&p, 1, (end - now + 999999) / 1000000) > 0)
			return c->side.res.error =
				       "server went away before the end of the test",
			       -1;
	}
}

static void trade_totals(struct client *c)
{
	struct ctl_msg m = { .type = CTL_STOP };
	struct side_result *r = &c->side.res;
	int i;

	if (c->wl->socktype == SOCK_STREAM && c->side.rs.do_write &&
	    !c->wl->is_rr)
		/* The server reads to EOF, so its byte count is exact. */
		for (i = 0; i < c->side.nflows; i++)
			shutdown(c->side.flows[i]->fd, SHUT_WR);
	report_fill_totals(r, &c->side.rs, &m);
	if (ctl_send(c->ctl, &m) ||
	    ctl_expect(c->ctl, CTL_RESULT, &m, RESULT_TIMEOUT_MS)) {
		log_err("no results from the server");
		return;
	}
	r->has_remote = 1;
	for (i = 0; i < R_NFIELDS; i++)
		r->remote[i] = m.f[i];
}

static int run(struct client *c)
{
	struct ctl_msg m = { .type = CTL_START };
	int failed;

	if (hello(c))
		return -1;
	side_open_tracer(&c->side, ntohs(c->data.ss.ss_family == AF_INET6 ?
		((struct sockaddr_in6 *)&c->data.ss)->sin6_port :
		((struct sockaddr_in *)&c->data.ss)->sin_port));
	if (open_flows(c))
		return -1;
	if (ctl_expect(c->ctl, CTL_READY, &m, CTL_TIMEOUT_MS)) {
		snprintf(c->err, sizeof(c->err), "server never got ready");
		return -1;
	}
	m.type = CTL_START;
	if (ctl_send(c->ctl, &m) || side_start(&c->side, c->err,
					       sizeof(c->err)))
		return -1;
	failed = wait_end(c);
	side_stop(&c->side);
	if (!failed)
		trade_totals(c);
	return failed ? 1 : 0;
}

int client_run(struct options *o, const struct workload *wl)
{
	struct client *c = xcalloc(1, sizeof(*c));
	int rc;

	c->o = o;
	c->wl = wl;
	c->ctl = -1;
	if (side_init(&c->side, o, wl, 1, c->err, sizeof(c->err))) {
		log_err("%s", c->err);
		free(c);
		return EXIT_RUNTIME;
	}
	rc = side_conclude(&c->side, run(c), c->err);
	if (c->ctl >= 0)
		close(c->ctl);
	side_free(&c->side);
	free(c);
	return rc;
}
