/*
 * The client side: send the test parameters, open the flows, start the
 * test together with the server, end it after --test-length seconds and
 * trade totals with the server. Traced with records, it also takes the
 * server's whole results at the end and prints both ends joined, as
 * --local does (a run on two hosts).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/auth.h"
#include "core/common.h"
#include "stats/confidence.h"
#include "control/control.h"
#include "cmd/local_out.h"
#include "results/results_wire.h"
#include "sys/fdlimit.h"
#include "net/net.h"
#include "sys/privs.h"
#include "net/raw.h"
#include "cmd/run.h"
#include "script/script.h"
#include "side/side.h"
#include "side/side_out.h"
#include "sys/stop.h"
#include "trace/summary.h"

#define CTL_TIMEOUT_MS 10000
/* The server drains a stream for up to 2 s before it answers. */
#define RESULT_TIMEOUT_MS 15000

#define MAX_ITER 30
/* The server builds its model, then sends it: its records may be many. */
#define PEER_TIMEOUT_MS 60000

struct client {
	struct side side;
	struct options *o;
	const struct workload *wl;
	int ctl;
	struct addr data;
	int joins;		/* client_joins_server() */
	struct run_results *peer;	/* the server's model, at the end */
	/* --iterations with --trace: each test's p50 of every stage, us */
	double stage_p50[NS_MAX_STAGES][MAX_ITER];
	char err[256];
};

/*
 * The server's next message, past the WAITs of a server that holds its
 * clients until --num-clients are in: each is a sign of life, and the
 * control timeout starts again after it.
 */
static int recv_past_waits(struct client *c, struct ctl_msg *m)
{
	int rc, said = 0;

	while (!(rc = ctl_recv(c->ctl, m, CTL_TIMEOUT_MS)) &&
	       m->type == CTL_WAIT) {
		if (!said++ && !c->o->quiet)
			log_err("the server waits for %llu more client%s",
				 (unsigned long long)(m->f[W_NEEDED] - m->f[W_IN]),
				 m->f[W_NEEDED] - m->f[W_IN] == 1 ? "" : "s");
	}
	return rc;
}

/*
 * The server's answer to HELLO: its ACK in m, after proving the key if
 * it challenges. 0, or -1 with c->err saying what went wrong.
 */
static int answer(struct client *c, struct ctl_msg *m)
{
	const struct auth_key *key = c->o->auth;
	struct ctl_msg a = { .type = CTL_AUTH };
	int rc = recv_past_waits(c, m);

	if (!rc && m->type == CTL_CHALLENGE) {
		if (!key)
			return snprintf(c->err, sizeof(c->err),
					"the server asks for --auth-key"), -1;
		auth_answer(key, m->f, a.f);
		if (ctl_send(c->ctl, &a))
			rc = -errno;
		else if (!(rc = recv_past_waits(c, m)) && m->type != CTL_ACK)
			rc = -EBADMSG;
		if (rc == -EPIPE)
			return snprintf(c->err, sizeof(c->err),
					"the server dropped the control connection at its challenge: not its --auth-key?"), -1;
	} else if (!rc && m->type == CTL_ACK && key) {
		/* Not checked is not what --auth-key asked for. */
		return snprintf(c->err, sizeof(c->err),
				"--auth-key: the server did not challenge (it has no key)"), -1;
	} else if (!rc && m->type != CTL_ACK) {
		rc = -EBADMSG;
	}
	if (rc)
		return snprintf(c->err, sizeof(c->err),
				"control: no answer from the server (%s)",
				strerror(-rc)), -1;
	return 0;
}

static int hello(struct client *c)
{
	struct ctl_msg m = { .type = CTL_HELLO };
	struct options *o = c->o;
	struct addr a;

	if (net_resolve(o->host, o->control_port, net_family(o), &a, c->err,
			sizeof(c->err)))
		return -1;
	c->ctl = net_connect(o, SOCK_STREAM, &a, 0, CTL_TIMEOUT_MS, NULL, c->err,
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
	m.f[H_INFLIGHT] = options_inflight(o, o->trace != 0);
	m.f[H_FLAGS] = (o->enable_read ? HF_CLIENT_READS : 0) |
		       (o->enable_write ? HF_CLIENT_WRITES : 0) |
		       (c->joins ? HF_WANTS_RESULTS : 0);
	if (ctl_send(c->ctl, &m))
		return snprintf(c->err, sizeof(c->err), "control: %s",
				strerror(errno)), -1;
	if (answer(c, &m))
		return -1;
	if (m.f[A_STATUS])
		return snprintf(c->err, sizeof(c->err),
				"server refused the test: %s", m.text), -1;
	/* The port the server named, not the one asked for: shown so. */
	c->o->port = m.f[A_DATA_PORT];
	if (!c->o->options_shown++)
		options_print(c->o, c->wl->name);
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
		       o->io_mode == IO_SPIN ||
		       (o->io_mode != IO_BLOCKING &&
			(o->nonblocking || o->edge_trigger || !c->wl->is_rr));
	struct side_hook sh = { c->side.rs.script, HOOK_CLIENT_SOCKET, 0, 0 };
	struct net_cb cb = { sh.sc ? side_socket_hook : NULL, &sh, 1 };
	int i, fd;

	c->side.rs.data_addr = c->data;
	if (fd_limit_ensure(o->num_flows + FD_SPARE, c->err, sizeof(c->err)))
		return -1;
	for (i = 0; i < o->num_flows; i++) {
		if (c->wl->accepts_per_worker) {
			/* tcp_crr connects as part of every transaction. */
			side_add_flow(&c->side, flow_new(-1, i, 1));
			continue;
		}
		sh.worker = i % o->num_threads;
		fd = net_connect(o, c->wl->socktype, &c->data, i,
				 CTL_TIMEOUT_MS, &cb, c->err, sizeof(c->err));
		if (fd < 0)
			return -1;
		if (net_data_sockopts(o, fd, c->wl->socktype, c->err,
				      sizeof(c->err)) ||
		    net_set_nonblock(fd, nonblock)) {
			close(fd);
			return -1;
		}
		side_add_flow(&c->side, flow_new(fd, i, c->wl->is_rr));
		c->side.flows[i]->hooked = sh.sc != NULL;
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
			return c->side.res.error = interrupted_why(), -1;
		if (now >= end)
			return 0;
		if (poll(&p, 1, (end - now + 999999) / 1000000) > 0)
			return c->side.res.error =
				       "server went away before the end of the test",
			       -1;
	}
}

/* STOP and the server's totals: 0, or 1 without them (res.error says). */
static int trade_totals(struct client *c)
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
		r->error = "no results from the server";
		return 1;
	}
	r->has_remote = 1;
	for (i = 0; i < R_NFIELDS; i++)
		r->remote[i] = m.f[i];
	return 0;
}

/* --raw: the flows go straight to --host/--port, no control connection. */
static int raw_target(struct client *c)
{
	const struct options *o = c->o;

	return net_resolve(o->host, o->port, net_family(o), &c->data, c->err,
			   sizeof(c->err));
}

/*
 * --raw: say in one line each what the server did that a
 * request/response server should not; a server that answered nothing
 * fails the run.
 */
static int raw_verdict(struct client *c)
{
	struct side_result *r = &c->side.res;
	int n = c->side.nflows;

	if (r->closed_flows)
		log_err("--raw: the server closed %d of %d flows", r->closed_flows,
			n);
	if (r->silent_flows)
		log_err("--raw: the server went silent on %d of %d flows (no whole response for %d ms at the end)",
			r->silent_flows, n, c->o->rr_timeout);
	if (r->overlong_flows)
		log_err("--raw: %d responses passed %u bytes without their end: flows closed",
			r->overlong_flows, RAW_RESPONSE_MAX);
	if (r->mismatched)
		log_err("--raw: %llu responses of -R bytes did not end with --response-end",
			(unsigned long long)r->mismatched);
	if (r->unexpected_bytes)
		log_err("--raw: the server sent %llu bytes no request asked for",
			(unsigned long long)r->unexpected_bytes);
	if (r->transactions)
		return 0;
	r->error = "the server answered no request";
	return 1;
}

static int run(struct client *c)
{
	struct ctl_msg m = { .type = CTL_START };
	int raw = c->o->raw, failed;

	if (raw ? raw_target(c) : hello(c))
		return -1;
	side_open_tracer(&c->side, ntohs(c->data.ss.ss_family == AF_INET6 ?
		((struct sockaddr_in6 *)&c->data.ss)->sin6_port :
		((struct sockaddr_in *)&c->data.ss)->sin_port));
	if (open_flows(c))
		return -1;
	privs_loaded();
	if (!raw && ctl_expect(c->ctl, CTL_READY, &m, CTL_TIMEOUT_MS)) {
		snprintf(c->err, sizeof(c->err), "server never got ready");
		return -1;
	}
	m.type = CTL_START;
	if ((!raw && ctl_send(c->ctl, &m)) ||
	    side_start(&c->side, c->err, sizeof(c->err)))
		return -1;
	failed = wait_end(c);
	side_stop(&c->side);
	if (!failed && raw)
		failed = raw_verdict(c);
	else if (!failed)
		failed = trade_totals(c);
	return failed ? 1 : 0;
}

/* Test n's p50 of every stage, when it was traced. */
static void keep_stage_p50(struct client *c, int n)
{
	const struct trace_summary *ts = &c->side.res.trace;
	int j;

	if (!c->side.rs.tracer)
		return;
	for (j = 0; j < trace_stage_count(ts); j++)
		c->stage_p50[j][n] = hist_percentile(&ts->stage[j], 50) / 1e3;
}

/*
 * --iterations with --trace: how well the repeats pin down each stage's
 * p50 (the tests' p50s, as throughput's means are for the test).
 */
static void stage_confidence_kv(struct client *c, int n)
{
	const struct trace_summary *ts = &c->side.res.trace;
	const struct stage_def *d = trace_stage_defs(ts);
	struct kv_list *x = &c->side.extra;
	char key[96];
	double w;
	int j;

	if (!c->side.rs.tracer)
		return;
	for (j = 0; j < trace_stage_count(ts); j++) {
		w = confidence_width_percent(c->stage_p50[j], n,
					     c->o->conf_level);
		snprintf(key, sizeof(key), "stage_%s_p50_mean_us",
			 d[j].name);
		kv_num(x, key, mean_of(c->stage_p50[j], n), 3);
		snprintf(key, sizeof(key),
			 "stage_%s_p50_confidence_width_percent",
			 d[j].name);
		kv_num(x, key, w < 0 ? NAN : w, 3);
	}
}

/* --iterations: what the repeats achieved, after the last results. */
static void confidence_kv(struct client *c, const double *tput, int n,
			  double width)
{
	const struct options *o = c->o;
	struct kv_list *x = &c->side.extra;
	int met = width >= 0 && width <= o->conf_width;

	kv_int(x, "iterations_run", n);
	kv_num(x, c->wl->is_rr ? "throughput_mean" : "throughput_Mbps_mean",
	       mean_of(tput, n), 2);
	kv_int(x, "confidence_level", o->conf_level);
	kv_num(x, "confidence_width_percent", width < 0 ? NAN : width, 3);
	kv_int(x, "confidence_met", met);
	stage_confidence_kv(c, n);
	if (!met)
		log_err("--confidence: after %d tests the %d%% interval is %.1f%% "
			"of the mean, not within %g%%", n, o->conf_level, width,
			o->conf_width);
}

/*
 * After the last NEXT: the server's model, which it sends as it ends
 * (control.h). Without it the client's results stand alone, said why.
 */
static void take_peer(struct client *c)
{
	uint64_t cap = results_frame_cap(c->o->trace_max_records);
	uint64_t t = now_ns(), bytes = 0;
	char err[256];

	c->peer = results_recv(c->ctl, PEER_TIMEOUT_MS, cap, &bytes, err,
			       sizeof(err));
	/* What shipping the server's results cost: its frame, its wait. */
	kv_uint(&c->side.extra, "peer_results_bytes", bytes);
	kv_num(&c->side.extra, "peer_results_ms", (now_ns() - t) / 1e6, 3);
	if (!c->peer)
		log_err("the server's results, for the waterfall of both "
			"ends: %s", *err ? err : "it closed the control "
			"connection without them");
}

/*
 * One test; 1 when another should follow. The results are printed at
 * the last one only, with what the repeats achieved.
 */
static int one_test(struct client *c, double *tput, int *n, int *rc)
{
	const struct options *o = c->o;
	struct ctl_msg m = { .type = CTL_NEXT };
	double width;
	int r, more;

	if (side_init(&c->side, c->o, c->wl, 1, c->err, sizeof(c->err))) {
		log_err("%s", c->err);
		*rc = EXIT_RUNTIME;
		return 0;
	}
	r = run(c);
	if (r == 0) {
		keep_stage_p50(c, *n);
		tput[(*n)++] = c->side.res.throughput;
	}
	width = confidence_width_percent(tput, *n, o->conf_level);
	more = r == 0 && *n < o->iter_max &&
	       (*n < o->iter_min || width < 0 || width > o->conf_width);
	if (r == 0 && c->ctl >= 0) {
		m.f[N_MORE] = more;
		ctl_send(c->ctl, &m);
		if (!more && c->joins)
			take_peer(c);
	}
	if (more) {
		if (!o->quiet)
			fprintf(stderr, "netstage client: test %d: throughput "
				"%.2f, %d%% interval %.1f%% of the mean\n", *n,
				tput[*n - 1], o->conf_level, width);
	} else {
		if (r == 0 && o->iter_max > 1)
			confidence_kv(c, tput, *n, width);
		*rc = side_conclude(&c->side, r, c->err);
	}
	if (c->ctl >= 0)
		close(c->ctl);
	c->ctl = -1;
	side_free(&c->side);
	return more;
}

int client_joins_server(const struct options *o)
{
	return o->client && !o->local && !o->raw && o->trace == 1;
}

/* Every test, until one says no more: the exit status. */
static int run_tests(struct client *c)
{
	double tput[MAX_ITER];
	int rc = 0, n = 0;

	while (one_test(c, tput, &n, &rc))
		;
	return rc;
}

/*
 * Both ends' models, once the tests are done: every output of them
 * made as --local makes it (local_out.h).
 */
static int run_tests_joined(struct client *c)
{
	struct local l = { 0 };
	int rc;

	if (local_probe_outputs(c->o))
		return EXIT_RUNTIME;
	local_take_files(&l, c->o);
	side_results_to(local_keep_client, &l);
	rc = run_tests(c);
	side_results_to(NULL, NULL);
	l.side[1] = c->peer;
	c->peer = NULL;
	if (local_write_both(&l, c->o, !rc) && !rc)
		rc = EXIT_RUNTIME;
	local_free(&l);
	return rc;
}

int client_run(struct options *o, const struct workload *wl)
{
	struct client *c = xcalloc(1, sizeof(*c));
	int rc;

	c->o = o;
	c->wl = wl;
	c->ctl = -1;
	c->joins = client_joins_server(o);
	rc = c->joins ? run_tests_joined(c) : run_tests(c);
	free(c);
	return rc;
}
