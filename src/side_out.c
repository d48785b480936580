/*
 * A side's results once its test is done: built once into struct
 * run_results, then printed (key=value, JSON or the terminal summary),
 * written to the files the options asked for, handed to --local's
 * parent and to the script. Reads the side; the side knows nothing of it.
 */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "glance.h"
#include "html_report.h"
#include "json_doc.h"
#include "run_results.h"
#include "samples_csv.h"
#include "script/script.h"
#include "side.h"
#include "side_out.h"
#include "trace/perfetto.h"
#include "trace/recout.h"
#include "trace/summary.h"
#include "trace/tracer.h"

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
	r->error = res->error;
}

/*
 * What the side measured, as plain data for every output after the
 * test (on the heap: its histograms make it 600 KB); the workers' kept
 * records move into it.
 */
static struct run_results *side_run_results(struct side *s,
					    const struct kv_list *keys)
{
	struct run_results *r = xcalloc(1, sizeof(*r));
	struct rec_set *rs = &r->recs;
	int i;

	r->is_client = s->rs.is_client;
	r->role = side_role(s);
	r->workload = s->wl->name;
	r->is_rr = s->wl->is_rr;
	r->side = trace_side(&s->rs);
	r->keys = keys;
	r->pc = s->o->percentiles;
	lend_samples(s, r);
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
		return r;
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
	return r;
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
	struct run_results *r;
	int rc;

	s->res.trace_off = s->trace_off;
	report_kv(&s->res, &s->rs, &results);
	for (size_t i = 0; i < s->extra.n; i++)
		kv_str(&results, s->extra.v[i].key, s->extra.v[i].text);
	r = side_run_results(s, &results);
	print_results(s, r);
	if (results_out)
		write_results(s, &results);
	say_run(s, r);
	if (r->traced)
		trace_outputs(s, r);
	rc = write_files(s, r);
	if (s->rs.script)
		script_keep_results(s->rs.script, r);
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
