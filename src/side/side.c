#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/common.h"
#include "engine/io.h"
#include "net/net.h"
#include "script/script.h"
#include "side/side.h"
#include "trace/collect.h"
#include "trace/keep.h"
#include "trace/tracer.h"
#include "core/tstamp.h"

int side_init(struct side *s, struct options *o, const struct workload *wl,
	      int is_client, char *err, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->wl = wl;
	s->rs.o = o;
	s->rs.wl = wl;
	s->rs.is_client = is_client;
	s->rs.request_size = o->request_size;
	s->rs.response_size = o->response_size;
	s->rs.raw = o->raw_spec;
	if (o->raw_spec)
		s->rs.response_size = o->raw_spec->resp_size;
	s->rs.do_read = o->enable_read;
	s->rs.do_write = o->enable_write;
	s->rs.interval_ns = (uint64_t)(o->interval * NSEC_PER_SEC);
	s->rs.record_samples = o->all_samples != NULL;
	s->res.is_client = is_client;
	s->rs.script = script_current();
	s->rs.phooks = io_hooks_of(&s->rs);
	s->rs.on_event = io_event;
	s->rs.stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->rs.stop_efd < 0) {
		snprintf(err, len, "eventfd: %s", strerror(errno));
		return -1;
	}
	if (o->all_samples && out_open(&s->samples, o->all_samples, err, len))
		return -1;
	if (o->json && !o->parent_writes &&
	    out_open(&s->json, o->json, err, len))
		return -1;
	if (o->trace_records &&
	    out_open(&s->trace_records, o->trace_records, err, len))
		return -1;
	if (o->parent_writes)
		return 0;
	if (o->perfetto && out_open(&s->perfetto, o->perfetto, err, len))
		return -1;
	if (o->report && out_open(&s->report, o->report, err, len))
		return -1;
	return 0;
}

/*
 * Register a flow's socket. tcp_crr has none to register: its client
 * connects per transaction, its server's listeners carry no data, and
 * BPF makes each connection's storage (docs/stages.md).
 */
/* The client's port of a connection, which names it on both ends. */
static uint16_t client_port(int fd, int is_client)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int rc = is_client ? getsockname(fd, (struct sockaddr *)&ss, &sl)
			   : getpeername(fd, (struct sockaddr *)&ss, &sl);

	return rc ? 0 : net_port_of(&ss);
}

static void trace_flow(struct side *s, struct flow *f)
{
	uint32_t idx;
	int rc;

	if (f->fd < 0 || f->listener)
		return;
	f->port = client_port(f->fd, s->rs.is_client);
	idx = tracer_flow_index(s->rs.tracer);
	f->ws = tracer_wstamp(s->rs.tracer, idx);
	f->kr = tracer_krecs(s->rs.tracer, idx);
	rc = tracer_register(s->rs.tracer, f->fd, f->id,
			     f->id % s->o->num_threads, idx);
	if (rc)
		log_err("--trace: flow %d not traced: %s", f->id, strerror(-rc));
}

/* --local: the tracer serving both ends, opened before the fork. */
static struct tracer *both_ends;

struct tracer *side_open_both(const struct options *o,
			      const struct workload *wl)
{
	struct run_shared rs = { .o = o, .wl = wl, .is_client = 1 };
	struct tracer_cfg cfg = {
		.side = trace_side(&rs),
		.rx_size = o->response_size,
		.tx_size = o->request_size,
		.nworkers = o->num_threads,
		.verbose = o->logtostderr,
		.hist_mode = o->trace == 2,
		.both_ends = 1,
		.sample = o->trace_sample,
		.control = o->trace_control,
		.inflight = options_inflight(o, 1),
		.open_loop = o->rate > 0,
		.flows = o->num_flows,
	};
	char why[256];

	/* Failing here, each side tries on its own and says why. */
	both_ends = o->trace ? tracer_open(&cfg, why, sizeof(why)) : NULL;
	return both_ends;
}

/*
 * A server's messages in flight on a flow: what its clients said they
 * keep (HELLO), which BPF can hold at most.
 */
static int peer_inflight(const struct run_shared *rs)
{
	if (rs->peer_inflight < 1 || rs->peer_inflight > NS_MAX_BURST)
		return NS_MAX_BURST;
	return rs->peer_inflight;
}

static struct tracer *open_tracer(struct tracer_cfg *cfg, char *why,
				  size_t len)
{
	struct tracer *t;

	if (!both_ends)
		return tracer_open(cfg, why, len);
	t = tracer_end(both_ends, cfg->side);
	tracer_set_port(t, cfg->data_port);
	return t;
}

void side_open_tracer(struct side *s, int data_port)
{
	struct options *o = s->o;
	int client = s->rs.is_client;
	struct tracer_cfg cfg = {
		.side = trace_side(&s->rs),
		.rx_size = client ? s->rs.response_size : s->rs.request_size,
		.tx_size = client ? s->rs.request_size : s->rs.response_size,
		.data_port = data_port,
		.nworkers = o->num_threads,
		.verbose = o->logtostderr,
		.hist_mode = o->trace == 2,
		.sample = o->trace_sample,
		.control = o->trace_control,
		.inflight = client ? options_inflight(o, 1)
				   : peer_inflight(&s->rs),
		.open_loop = o->rate > 0,
		/* A server registers the flows it accepts as they come. */
		.flows = client ? o->num_flows : 0,
		.peer_flows = client ? 0 : s->rs.peer_flows,
	};

	if (!o->trace)
		return;
	s->rs.tracer = open_tracer(&cfg, s->trace_off, sizeof(s->trace_off));
	if (!s->rs.tracer) {
		log_err("%s", s->trace_off);
		return;
	}
	/* Each worker may keep them all: trace_keep() makes it per run. */
	s->rs.trace_recs_per_worker = o->trace_max_records;
	s->rs.timestamping = o->timestamping;
	s->rs.trace_hist = o->trace == 2;
	s->rs.ts_offset = tstamp_offset();
	log_info("tracing with %s", tracer_hooks(s->rs.tracer));
	if (tracer_note(s->rs.tracer))
		log_err("--trace: %s", tracer_note(s->rs.tracer));
	/* A UDP server's sockets exist before the tracer: it needs their port. */
	for (int i = 0; i < s->nflows; i++)
		trace_flow(s, s->flows[i]);
}

void side_add_flow(struct side *s, struct flow *f)
{
	char err[160];

	if (s->rs.tracer)
		trace_flow(s, f);
	if (s->rs.timestamping && tstamp_enable(f->fd, err, sizeof(err)))
		log_err("--timestamping: flow %d: %s", f->id, err);
	if (!(s->nflows & (s->nflows - 1)) || !s->flows)
		s->flows = xrealloc(s->flows, s->nflows ? 2 * s->nflows : 1,
				    sizeof(*s->flows));
	s->flows[s->nflows++] = f;
}

/*
 * --trace: measure what tracing costs for a window of the test
 * (trace/cost.h), from its start; side_stop() ends it.
 */
static void side_measure_cost(struct side *s)
{
	if (s->rs.tracer)
		trace_cost_start(&s->rs.cost, s->rs.tracer, s->o->test_length);
}

int side_start(struct side *s, char *err, size_t len)
{
	sigset_t block, old;
	int rc;

	s->nworkers = s->o->num_threads;
	intervals_init(&s->rs.iv, s->nworkers, s->wl->is_rr,
		       s->wl->is_rr && s->rs.is_client, s->o->quiet,
		       s->o->interval,
		       s->rs.is_client ? "client" : "server");
	getrusage(RUSAGE_SELF, &s->res.ru_start);
	cpu_read(&s->res.cpu_start);
	s->rs.t_start = now_ns();
	s->res.t_start = s->rs.t_start;
	/* Signals are for the main thread only. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = workers_start(&s->workers, s->nworkers, &s->rs, s->flows,
			   s->nflows, err, len);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->started = !rc;
	if (s->started)
		side_measure_cost(s);
	return rc;
}

void side_keep_records(struct side *s)
{
	struct trace_worker **tw;
	struct trace_summary *ts = &s->res.trace;
	long j;
	int i;

	if (!s->rs.tracer || s->rs.trace_hist)
		return;
	tw = workers_tw(s->workers, s->nworkers);
	ts->records_offered = trace_keep(tw, s->nworkers,
					 s->o->trace_max_records);
	for (i = 0; i < s->nworkers; i++)
		for (j = 0; tw[i] && j < tw[i]->nrecs; j++) {
			ts->records_kept++;
			ts->records_slowest += tw[i]->recs[j].slowest;
		}
	trace_mark_retrans(ts, s->rs.tracer, tw, s->nworkers);
	trace_find_tail(ts, tw, s->nworkers);
	free(tw);
}

void side_stop(struct side *s)
{
	if (!s->started)
		return;
	s->res.t_end = now_ns();
	cpu_read(&s->res.cpu_end);
	trace_cost_finish(&s->rs.cost);
	workers_stop(s->workers, s->nworkers, &s->rs);
	getrusage(RUSAGE_SELF, &s->res.ru_end);
	s->res.num_flows = s->nflows;
	report_collect(&s->res, s->workers, s->nworkers, &s->rs);
	side_keep_records(s);
	s->started = 0;
}

const char *side_role(const struct side *s)
{
	if (s->wl->bit == W_OBSERVE)
		return "observe";
	return s->rs.is_client ? "client" : "server";
}

void side_free(struct side *s)
{
	int i;

	out_abort(&s->samples);
	out_abort(&s->json);
	out_abort(&s->trace_records);
	out_abort(&s->perfetto);
	out_abort(&s->report);
	kv_free(&s->extra);
	workers_free(s->workers, s->nworkers);
	for (i = 0; i < s->nflows; i++) {
		struct flow *f = s->flows[i];
		struct side_hook sh = {
			s->rs.script, s->rs.is_client ? HOOK_CLIENT_CLOSE
						      : HOOK_SERVER_CLOSE,
			f->id % s->o->num_threads, 0
		};

		if (f->hooked && f->fd >= 0)
			side_close_hook(&sh, f->fd, s->wl->socktype,
					s->rs.is_client ? &s->rs.data_addr
							: NULL);
		flow_free(f);
	}
	free(s->flows);
	if (s->rs.stop_efd > 0)
		close(s->rs.stop_efd);
	if (s->rs.iv.nworkers)
		intervals_free(&s->rs.iv);
	trace_cost_finish(&s->rs.cost);
	tracer_close(s->rs.tracer);
}

char *side_server_path(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	size_t n = strlen(path) + 16;
	char *out = xcalloc(1, n);

	if (!dot || (slash && dot < slash) || dot == path ||
	    (slash && dot == slash + 1))
		snprintf(out, n, "%s.server", path);
	else
		snprintf(out, n, "%.*s.server%s", (int)(dot - path), path, dot);
	return out;
}

static int run_socket_hooks(const struct side_hook *sh, int fd,
			    const struct addr *a, int socktype)
{
	int i = sh->worker < 0 ? 0 : sh->worker;
	int end = sh->worker < 0 ? sh->nworkers : sh->worker + 1;

	for (; i < end; i++)
		if (script_socket_hook(script_worker(sh->sc, i), sh->hook, fd,
				       a, socktype))
			return -1;
	return 0;
}

int side_socket_hook(void *arg, int fd, const struct addr *a, int socktype)
{
	return run_socket_hooks(arg, fd, a, socktype);
}

void side_close_hook(const struct side_hook *sh, int fd, int socktype,
		     const struct addr *a)
{
	struct addr local = { .len = sizeof(local.ss) };

	if (!sh->sc)
		return;
	if (!a) {
		if (getsockname(fd, (struct sockaddr *)&local.ss, &local.len))
			local.len = 0;
		a = &local;
	}
	run_socket_hooks(sh, fd, a, socktype);
}
