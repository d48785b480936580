/*
 * A side's results once its test is done: built once into struct
 * run_results, then printed (key=value, JSON or the terminal summary),
 * written to the files the options asked for, handed to --local's
 * parent and to the script. Reads the side; the side knows nothing of it.
 */
#include <errno.h>
#include <string.h>

#include "core/common.h"
#include "output/glance.h"
#include "output/html_report.h"
#include "output/json_doc.h"
#include "results/run_results.h"
#include "output/samples_csv.h"
#include "script/script.h"
#include "side/side.h"
#include "side/side_out.h"
#include "trace/perfetto.h"
#include "trace/recout.h"
#include "trace/summary.h"
#include "trace/tracer.h"

/* --local: where the model goes instead of the side's outputs. */
static void (*hand_to)(struct run_results *r, void *arg);
static void *hand_arg;

void side_results_to(void (*fn)(struct run_results *r, void *arg),
		     void *arg)
{
	hand_to = fn;
	hand_arg = arg;
}

/* The workers' samples (-A), lent: the workers outlive the results. */
static void lend_samples(const struct side *s, struct run_results *r)
{
	int i;

	r->samples = xcalloc(s->nworkers ? s->nworkers : 1,
			     sizeof(*r->samples));
	for (i = 0; i < s->nworkers; i++) {
		r->samples[i].v = s->workers[i].samples;
		r->samples[i].n = s->workers[i].nsamples;
	}
	r->nsample_sets = s->nworkers;
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
	r->flows = observe ? -1 : res->num_flows;
	r->duration_s = ns_to_s(res->t_end) - ns_to_s(res->t_start);
	r->cpu_util = cpu_util(&res->cpu_start, &res->cpu_end);
	r->ncpus = cpu_count();
	r->service_demand_us = observe ? -1 :
			       report_service_demand_us(res, &s->rs);
	r->error = res->error ? xstrdup(res->error) : NULL;
}

/* The intervals, copied: the side's go with it. */
static void copy_intervals(const struct side *s, struct run_results *r)
{
	r->niv = s->rs.iv.nsums;
	r->iv = xcalloc(r->niv ? r->niv : 1, sizeof(*r->iv));
	if (r->niv)
		memcpy(r->iv, s->rs.iv.sums, r->niv * sizeof(*r->iv));
}

/* NETSTAGE_TEST_CLOCK_SKEW: this side's clock made another's. */
static void skew_for_test(struct run_results *r)
{
	struct clock_skew k;
	char err[160];

	/* main() refused a bad value before the run. */
	if (!clock_skew_from_env(&k, err, sizeof(err)))
		clock_skew_apply(&k, &r->recs, r->clock_id,
				 sizeof(r->clock_id));
}

/*
 * What the side measured, as plain data for every output after the
 * test (on the heap: its histograms make it 600 KB); the workers' kept
 * records move into it.
 */
static struct run_results *side_run_results(struct side *s,
					    struct kv_list *keys)
{
	struct run_results *r = xcalloc(1, sizeof(*r));
	struct rec_set *rs = &r->recs;
	int i;

	r->is_client = s->rs.is_client;
	snprintf(r->role, sizeof(r->role), "%s", side_role(s));
	snprintf(r->workload, sizeof(r->workload), "%s", s->wl->name);
	r->is_rr = s->wl->is_rr;
	r->side = trace_side(&s->rs);
	r->keys = *keys;
	*keys = (struct kv_list){ 0 };
	options_dump(s->o, &r->options);
	r->pc = s->o->percentiles;
	lend_samples(s, r);
	side_totals(s, r);
	r->throughput = s->res.throughput;
	r->has_lat = s->wl->is_rr && r->is_client;
	r->lat = s->res.lat;
	r->t_start = s->res.t_start;
	clock_id_read(r->clock_id, sizeof(r->clock_id));
	clock_offsets_read(&r->realtime_ns, &r->tai_ns);
	copy_intervals(s, r);
	r->iv_lat = s->rs.iv.is_rr && r->is_client;
	r->trace_asked = s->o->trace != 0;
	r->traced = s->rs.tracer != NULL;
	r->trace_hist = s->rs.trace_hist;
	if (!r->traced) {
		snprintf(r->trace_off, sizeof(r->trace_off), "%s",
			 s->trace_off);
		return r;
	}
	r->ts = s->res.trace;
	r->has_cost = r->ts.cost &&
		      !trace_cost_parts(r->ts.cost, r->ts.user_ns, &r->cost);
	/* The keys have what it measured; a pointer means nothing later. */
	r->ts.cost = NULL;
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
	skew_for_test(r);
	return r;
}

static int write_perfetto(struct side *s, const struct run_results *r,
			  char *err, size_t len)
{
	struct join_table t;

	run_results_table(r, &t);
	perfetto_write(s->perfetto.f, &t, 1, NULL, 0, s->o->perfetto_every);
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
	struct html_meta m = {
		.workload = r->workload, .interval_s = s->o->interval,
		.hooks = kv_get(&r->keys, "trace_hooks"),
		.options = &r->options, .keys = { &r->keys },
		.perfetto = s->perfetto.f ? html_perfetto_name(s->report.path,
							s->perfetto.path) : NULL,
	};
	int rc;

	w->n = 1;
	w->keep = 1;
	run_results_table(r, &w->t[0]);
	waterfall_join(w, 1);
	html_report_write(s->report.f, w, &m);
	rc = out_commit(&s->report, err, len);
	waterfall_free(w);
	free(w);
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

void side_print_results(const struct run_results *r,
			const struct options *o, const char *prefix, FILE *f)
{
	if (glance_on(o))
		glance_side(r, f);
	else if (!o->output && !strcmp(o->output_format, "json"))
		write_json(f, r);
	else
		report_print(&r->keys, o, prefix, f);
	fflush(f);
}

/* The files the options asked for, each whole or not at all: 1 if not. */
static int write_files(struct side *s, const struct run_results *r)
{
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
		write_json(s->json.f, r);
		if (out_commit(&s->json, err, sizeof(err)))
			log_err("%s", err), rc = 1;
	}
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
	struct run_results *r;
	int rc;

	s->res.trace_off = s->trace_off;
	report_kv(&s->res, &s->rs, &results);
	for (size_t i = 0; i < s->extra.n; i++)
		kv_str(&results, s->extra.v[i].key, s->extra.v[i].text);
	r = side_run_results(s, &results);
	if (s->share)
		s->share(r, s->share_arg);
	if (!hand_to)
		side_print_results(r, s->o, s->o->prefix, stdout);
	say_run(s, r);
	if (r->traced && !hand_to) {
		trace_table(&r->ts, glance_on(s->o) ? stdout : stderr, r->role);
		fflush(glance_on(s->o) ? stdout : stderr);
	}
	rc = write_files(s, r);
	if (hand_to)
		hand_to(r, hand_arg);		/* takes r */
	else if (s->rs.script)
		script_keep_results(s->rs.script, r);	/* takes r */
	else
		run_results_free(r);
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
