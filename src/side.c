#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common.h"
#include "glance.h"
#include "html_report.h"
#include "io.h"
#include "net.h"
#include "run_results.h"
#include "script/script.h"
#include "side.h"
#include "trace/collect.h"
#include "trace/perfetto.h"
#include "trace/recout.h"
#include "trace/summary.h"
#include "trace/tracer.h"
#include "tstamp.h"

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
	if (o->json && out_open(&s->json, o->json, err, len))
		return -1;
	if (o->trace_records &&
	    out_open(&s->trace_records, o->trace_records, err, len))
		return -1;
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

/* Where the stage table goes (NULL: stderr). */
static FILE *table_out;

void side_table_to(FILE *f)
{
	table_out = f;
}

/*
 * Where the result keys go too, and the trace summary (its histograms),
 * for a --local script's r.peer (or NULL).
 */
static FILE *results_out, *summary_out;

void side_results_to(FILE *keys, FILE *summary)
{
	results_out = keys;
	summary_out = summary;
}

static void write_results(const struct side *s, const struct kv_list *kv)
{
	struct trace_summary *ts;

	kv_print(kv, results_out, s->o->prefix);
	fflush(results_out);
	if (!summary_out || !s->rs.tracer)
		return;
	/* Its histograms make it large: not on the stack. */
	ts = xcalloc(1, sizeof(*ts));
	*ts = s->res.trace;
	ts->cost = NULL;	/* a pointer: no meaning in the reader */
	if (fwrite(ts, sizeof(*ts), 1, summary_out) != 1 || fflush(summary_out))
		log_err("--local: the trace summary for the script: %s",
			strerror(errno));
	free(ts);
}

/* Where the kept records are dumped for --local's waterfall (or NULL). */
static FILE *records_out;

void side_records_to(FILE *f)
{
	records_out = f;
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
		.inflight = options_inflight(o, 1),
		.open_loop = o->rate > 0,
		/* A server learns its clients' flows later. */
		.flows = client ? o->num_flows : 0,
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
	tw = xcalloc(s->nworkers ? s->nworkers : 1, sizeof(*tw));
	for (i = 0; i < s->nworkers; i++)
		tw[i] = s->workers[i].tw;
	ts->records_offered = trace_keep(tw, s->nworkers,
					 s->o->trace_max_records);
	for (i = 0; i < s->nworkers; i++)
		for (j = 0; tw[i] && j < tw[i]->nrecs; j++) {
			ts->records_kept++;
			ts->records_slowest += tw[i]->recs[j].slowest;
		}
	trace_mark_retrans(ts, s->rs.tracer, s->workers, s->nworkers);
	trace_find_tail(ts, s->workers, s->nworkers);
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

/* The workers' samples (-A), in worker order, moved into r. */
static void take_samples(struct side *s, struct run_results *r)
{
	long k = 0;
	int i;

	for (i = 0; i < s->nworkers; i++)
		k += s->workers[i].nsamples;
	r->samples = xcalloc(k ? k : 1, sizeof(*r->samples));
	for (i = 0; i < s->nworkers; i++) {
		struct worker *w = &s->workers[i];

		if (w->nsamples)
			memcpy(r->samples + r->nsamples, w->samples,
			       w->nsamples * sizeof(*w->samples));
		r->nsamples += w->nsamples;
	}
}

/* The side's totals and CPU figures, as its keys give them. */
static void side_totals(const struct side *s, struct run_results *r)
{
	const struct side_result *res = &s->res;
	int observe = s->wl->bit == W_OBSERVE;

	r->throughput_mbps = !s->wl->is_rr && !observe;
	r->transactions = res->transactions;
	r->bytes_read = res->bytes_read;
	r->bytes_written = res->bytes_written;
	r->io_errors = res->errors;
	r->flows = observe ? 0 : res->num_flows;
	r->duration_s = ns_to_s(res->t_end) - ns_to_s(res->t_start);
	r->cpu_util = cpu_util(&res->cpu_start, &res->cpu_end);
	r->ncpus = cpu_count();
	r->service_demand_us = observe ? -1 :
			       report_service_demand_us(res, &s->rs);
	r->error = res->error;
}

/*
 * What the side measured, as plain data for every output after the
 * test; the workers' kept records and samples move into it.
 */
static void side_run_results(struct side *s, const struct kv_list *keys,
			     struct run_results *r)
{
	struct rec_set *rs = &r->recs;
	int i;

	memset(r, 0, sizeof(*r));
	r->is_client = s->rs.is_client;
	r->role = side_role(s);
	r->workload = s->wl->name;
	r->is_rr = s->wl->is_rr;
	r->side = trace_side(&s->rs);
	r->keys = keys;
	r->pc = s->o->percentiles;
	take_samples(s, r);
	side_totals(s, r);
	r->throughput = s->res.throughput;
	r->has_lat = s->wl->is_rr && r->is_client;
	r->lat = s->res.lat;
	r->t_start = s->res.t_start;
	r->iv = s->rs.iv.sums;
	r->niv = s->rs.iv.nsums;
	r->iv_lat = s->rs.iv.is_rr && r->is_client;
	r->trace_asked = s->o->trace != 0;
	r->traced = s->rs.tracer != NULL;
	r->trace_hist = s->rs.trace_hist;
	if (!r->traced) {
		r->trace_off = s->trace_off;
		return;
	}
	r->ts = s->res.trace;
	r->has_cost = r->ts.cost &&
		      !trace_cost_parts(r->ts.cost, r->ts.user_ns, &r->cost);
	r->cost_both_ends = tracer_both_ends(s->rs.tracer);
	for (i = 0; i < s->nworkers && i < NS_MAX_RINGS; i++) {
		struct trace_worker *tw = s->workers[i].tw;

		if (!tw)
			continue;
		rs->recs[i] = tw->recs;
		rs->n[i] = tw->nrecs;
		tw->recs = NULL;
		tw->nrecs = 0;
	}
	rs->nworkers = i;
}

static int write_perfetto(struct side *s, const struct run_results *r,
			  char *err, size_t len)
{
	struct join_table t = { .side = r->side };

	snprintf(t.name, sizeof(t.name), "%s", r->role);
	recout_table(&t, &r->recs);
	perfetto_write(s->perfetto.f, &t, 1);
	free(t.r);
	return out_commit(&s->perfetto, err, len);
}

/*
 * The report of one side: its own stages, from its kept records, and
 * from its keys what it could not time.
 */
static int write_report(struct side *s, const struct run_results *r,
			char *err, size_t len)
{
	struct waterfall *w = xcalloc(1, sizeof(*w));
	struct kv_list opts = { 0 };
	struct html_meta m = {
		.workload = r->workload, .interval_s = s->o->interval,
		.hooks = s->rs.tracer ? tracer_hooks(s->rs.tracer) : NULL,
		.options = &opts, .keys = { r->keys },
	};
	int rc;

	w->n = 1;
	w->keep = 1;
	w->t[0].side = r->side;
	snprintf(w->t[0].name, sizeof(w->t[0].name), "%s", r->role);
	recout_table(&w->t[0], &r->recs);
	join_sort(&w->t[0]);
	options_dump(s->o, &opts);
	waterfall_join(w, 1);
	html_report_write(s->report.f, w, &m);
	rc = out_commit(&s->report, err, len);
	waterfall_free(w);
	free(w);
	kv_free(&opts);
	return rc;
}

/* Kept records fewer than traced: which, and that the keys count all. */
static void say_records_kept(const struct trace_summary *t)
{
	char slowest[64] = "";

	if (t->records_slowest)
		snprintf(slowest, sizeof(slowest), "the %llu slowest and ",
			 (unsigned long long)t->records_slowest);
	log_err("--trace-max-records: the records are %llu of %llu traced "
		"transactions: %sa uniform sample of %s (the stage keys and "
		"histograms count every one)",
		(unsigned long long)t->records_kept,
		(unsigned long long)t->records_offered, slowest,
		t->records_slowest ? "the rest" : "them");
}

/* The results on stdout: key=value lines, the summary or JSON. */
static void print_results(struct side *s, const struct run_results *r)
{
	struct kv_list opts = { 0 };

	if (glance_on(s->o)) {
		glance_side(r, stdout);
	} else if (!s->o->output && !strcmp(s->o->output_format, "json")) {
		options_dump(s->o, &opts);
		write_json(stdout, &opts, r);
		kv_free(&opts);
	} else {
		report_print(r->keys, s->o, stdout);
	}
	fflush(stdout);
}

/* The trace's table, and --local's records for the parent's waterfall. */
static void trace_outputs(struct side *s, const struct run_results *r)
{
	FILE *f = table_out ? table_out : glance_on(s->o) ? stdout : stderr;

	trace_table(&r->ts, f, r->role);
	/* A --local server leaves by _exit(): no stdio flush then. */
	fflush(f);
	if (records_out && recout_dump(records_out, &r->recs))
		log_err("--local: the records for the waterfall: %s",
			strerror(errno));
}

/* The files the options asked for, each whole or not at all: 1 if not. */
static int write_files(struct side *s, const struct run_results *r)
{
	struct kv_list opts = { 0 };
	char err[256];
	int rc = 0;

	if (s->trace_records.f) {
		recout_csv(s->trace_records.f, &r->recs, r->side);
		if (out_commit(&s->trace_records, err, sizeof(err)))
			log_err("%s", err), rc = 1;
	}
	if ((s->perfetto.f || s->report.f) && !r->ts.records_kept) {
		/* Untraced (no privileges, say): no empty file either. */
		log_err("--report/--perfetto: no traced transaction to write "
			"(trace_error says why)");
		out_abort(&s->perfetto);
		out_abort(&s->report);
		rc = 1;
	}
	if (s->perfetto.f && write_perfetto(s, r, err, sizeof(err)))
		log_err("%s", err), rc = 1;
	if (s->report.f && write_report(s, r, err, sizeof(err)))
		log_err("%s", err), rc = 1;
	if (s->samples.f) {
		write_samples_csv(s->samples.f, r);
		if (out_commit(&s->samples, err, sizeof(err)))
			log_err("%s", err), rc = 1;
	}
	if (s->json.f) {
		options_dump(s->o, &opts);
		write_json(s->json.f, &opts, r);
		if (out_commit(&s->json, err, sizeof(err)))
			log_err("%s", err), rc = 1;
	}
	kv_free(&opts);
	return rc;
}

/* What the side says on stderr about its run beside the results. */
static void say_run(const struct side *s, const struct run_results *r)
{
	if (s->o->rate > 0 && r->is_client && s->res.behind)
		log_err("--rate: the client could not keep up: %llu of the "
			"scheduled requests were never sent (%d in flight per "
			"flow at most)", (unsigned long long)s->res.behind,
			options_inflight(s->o, r->traced));
	if ((s->trace_records.f || s->rs.script) &&
	    r->ts.records_offered > r->ts.records_kept)
		say_records_kept(&r->ts);
	/* Counted in io_errors; said, so that failing sends are not silent. */
	if (s->res.errors)
		log_err("%llu socket calls failed (io_errors), the last with: %s",
			(unsigned long long)s->res.errors,
			s->res.last_errno ? strerror(s->res.last_errno)
					  : "no error number");
}

/*
 * The side's results, built once into the model every output then
 * reads: stdout, the files, the script's r = run().
 */
int side_finish(struct side *s)
{
	struct kv_list results = { 0 };
	struct run_results r;
	int rc;

	s->res.trace_off = s->trace_off;
	report_kv(&s->res, &s->rs, &results);
	for (size_t i = 0; i < s->extra.n; i++)
		kv_str(&results, s->extra.v[i].key, s->extra.v[i].text);
	side_run_results(s, &results, &r);
	print_results(s, &r);
	if (results_out)
		write_results(s, &results);
	say_run(s, &r);
	if (r.traced)
		trace_outputs(s, &r);
	rc = write_files(s, &r);
	if (s->rs.script)
		script_keep_results(s->rs.script, &r);
	run_results_free(&r);
	kv_free(&results);
	return rc;
}

int side_conclude(struct side *s, int rc, const char *err)
{
	if (rc < 0) {
		log_err("%s", err);
		side_stop(s);
		return EXIT_RUNTIME;
	}
	/* A worker that failed ends a test that otherwise ran to the end. */
	if (!rc && s->res.error)
		rc = 1;
	if (rc)
		log_err("%s", s->res.error);
	rc |= side_finish(s);
	return rc ? EXIT_RUNTIME : 0;
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
