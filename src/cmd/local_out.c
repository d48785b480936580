/*
 * What a run of two ends makes of their two models once both are done:
 * --local's parent (local.c runs the ends), and a traced client whose
 * server sent its model over the control connection (client.c). The
 * server's output after the client's, one JSON document or CSV table
 * of both, the joined waterfall, --perfetto and --report of both, and
 * the script's r.peer. Everything here reads the two models; nothing
 * is read back from text.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "output/html_report.h"
#include "output/json_doc.h"
#include "cmd/local_out.h"
#include "core/outfile.h"
#include "results/results_wire.h"
#include "side/report.h"
#include "script/script.h"
#include "side/side_out.h"
#include "trace/perfetto.h"
#include "trace/summary.h"

static const char *const prefix[2] = { "client.", "server." };

/* One document: {"client": ..., "server": ..., "waterfall": {...}}. */
static void json_wrap(FILE *to, const struct local *l,
		      const struct options *o, const struct kv_list *wf)
{
	int i;

	for (i = 0; i < 2; i++) {
		fputs(i ? ",\n\"server\":\n" : "{\"client\":\n", to);
		if (!l->side[i])
			fputs("null", to);
		else if (o)	/* stdout: as each side prints it */
			side_print_results(l->side[i], o, prefix[i], to);
		else
			write_json(to, l->side[i]);
	}
	if (wf->n) {
		fputs(",\n\"waterfall\": {\n", to);
		kv_json_members(wf, to, 2);
		fputs("}", to);
	}
	fputs("}\n", to);
}

/* path written by fill, whole or not at all (outfile.h). */
static int write_whole(const char *path,
		       void (*fill)(FILE *f, const void *arg), const void *arg)
{
	struct out_file out = { 0 };
	char err[256];

	if (out_open(&out, path, err, sizeof(err)))
		return log_err("%s", err), -1;
	fill(out.f, arg);
	if (out_commit(&out, err, sizeof(err)))
		return log_err("%s", err), -1;
	return 0;
}

struct json_args {
	const struct local *l;
	const struct kv_list *wf;
};

static void fill_json(FILE *f, const void *arg)
{
	const struct json_args *a = arg;

	json_wrap(f, a->l, NULL, a->wf);
}

int local_write_json(const struct local *l, const struct kv_list *wf)
{
	struct json_args a = { l, wf };

	return write_whole(l->json, fill_json, &a);
}

struct report_args {
	const struct waterfall *w;
	const struct html_meta *m;
	int every;		/* --perfetto-every */
};

static void fill_perfetto(FILE *f, const void *arg)
{
	const struct report_args *a = arg;

	perfetto_write(f, a->w->t, a->w->n,
		       a->w->has_clock ? &a->w->clock : NULL, a->w->aligned,
		       a->every);
}

static void fill_report(FILE *f, const void *arg)
{
	const struct report_args *a = arg;

	html_report_write(f, a->w, a->m);
}

/*
 * --perfetto and --report: both sides' records, which only the parent
 * has, in one file each.
 */
int local_write_files(const struct local *l, const struct waterfall *w,
		      const struct options *o)
{
	struct html_meta m = {
		.workload = l->side[0]->workload, .interval_s = o->interval,
		/* One BPF object served both ends: the client's says it. */
		.hooks = kv_get(&l->side[0]->keys, "trace_hooks"),
		.options = &l->side[0]->options,
		.perfetto = html_perfetto_name(l->report, l->perfetto),
	};
	struct report_args a = { w, &m, o->perfetto_every };
	int rc = 0;

	/* Untraced (no privileges, say): nothing to draw, no empty file. */
	if (!w->joined)
		return log_err("--report/--perfetto: no traced transaction "
			       "to write (trace_error says why)"), -1;
	if (l->perfetto && write_whole(l->perfetto, fill_perfetto, &a))
		rc = -1;
	/* What each side could not time, which its records do not show. */
	m.keys[0] = &l->side[0]->keys;
	m.keys[1] = &l->side[1]->keys;
	if (l->report && write_whole(l->report, fill_report, &a))
		rc = -1;
	return rc;
}

/* One clock when both ends name the same one, two when they differ. */
static int clocks_of(const struct run_results *a, const struct run_results *b)
{
	if (!*a->clock_id || !*b->clock_id)
		return WATERFALL_CLOCKS_AUTO;
	return strcmp(a->clock_id, b->clock_id) ? WATERFALL_CLOCKS_TWO :
						   WATERFALL_CLOCKS_ONE;
}

/*
 * --clock realtime or tai: how far the server's stamps move onto the
 * client's monotonic clock through that one, as each host keeps it
 * (disciplined by PTP, say).
 */
static int64_t shared_clock_shift(const struct local *l, const char *clock)
{
	const struct run_results *c = l->side[0], *s = l->side[1];

	return !strcmp(clock, "tai") ? s->tai_ns - c->tai_ns :
				       s->realtime_ns - c->realtime_ns;
}

/* A shared clock the stamps contradict: more apart than causality lets. */
static void check_shared_clock(const struct waterfall *w, const char *clock)
{
	double off = clock_offset_ns(&w->clock) / 1e3;

	if (w->has_clock && fabs(off) > w->clock.causal_ns / 1e3)
		log_err("--clock %s: the stamps put the two hosts' clocks "
			"%.3f us apart, more than causality allows (%.3f us): "
			"is that clock disciplined on both?", clock, off,
			w->clock.causal_ns / 1e3);
}

struct waterfall *local_waterfall(const struct local *l, int keep,
				  const char *clock, struct kv_list *kv)
{
	int shared = clock && strcmp(clock, "monotonic");
	struct waterfall *w;
	int i, rc;

	if (!l->side[0] || !l->side[1])
		return NULL;
	w = xcalloc(1, sizeof(*w));
	w->n = 2;
	w->keep = keep;
	w->clocks = clocks_of(l->side[0], l->side[1]);
	for (i = 0; i < 2; i++)
		run_results_table(l->side[i], &w->t[i]);
	if (shared) {
		/* Both on that clock, then: the fit checks the claim. */
		w->server_shift_ns = shared_clock_shift(l, clock);
		w->clocks = WATERFALL_CLOCKS_ONE;
	}
	if (!w->t[0].n)
		return w;
	rc = waterfall_join(w, 1);
	if (rc == WATERFALL_NEEDS_ONE_CLOCK)
		log_err("the two ends run on two hosts' clocks, and too "
			"few %s records pair to align them; no waterfall",
			l->side[0]->workload);
	if (rc)
		return w;
	/* Said even when the claim leaves nothing joined: why it did. */
	if (shared)
		check_shared_clock(w, clock);
	if (w->joined) {
		waterfall_kv(w, "", kv);
		kv_str(kv, "clock_source", shared ? clock : "monotonic");
	}
	return w;
}

void local_keep_for_script(struct local *l)
{
	struct script *sc = script_current();

	if (!sc)
		return;
	if (l->side[0])
		script_keep_results(sc, l->side[0]);
	if (l->side[1])
		script_keep_peer(sc, l->side[1]);
	l->side[0] = l->side[1] = NULL;
}

/*
 * --output-format csv: one table, a row per side, a column per key
 * either side has (the client's first), empty where a side has none.
 */
static void csv_table(const struct local *l, const struct options *o,
		      FILE *to)
{
	struct kv_list side[2] = { { 0 } }, cols = { 0 };
	size_t i;
	int k;

	for (k = 0; k < 2; k++)
		if (l->side[k])
			report_select(&l->side[k]->keys, o, &side[k]);
	for (k = 0; k < 2; k++)
		for (i = 0; i < side[k].n; i++)
			if (!kv_get(&cols, side[k].v[i].key))
				kv_str(&cols, side[k].v[i].key, "");
	fputs("side", to);
	for (i = 0; i < cols.n; i++)
		fprintf(to, ",%s", cols.v[i].key);
	fputc('\n', to);
	for (k = 0; k < 2; k++) {
		if (!side[k].n)
			continue;
		fputs(l->side[k]->role, to);
		for (i = 0; i < cols.n; i++)
			csv_field(to, kv_get(&side[k], cols.v[i].key) ?: "", 1);
		fputc('\n', to);
	}
	kv_free(&side[0]);
	kv_free(&side[1]);
	kv_free(&cols);
}

/* Each side's results, the server's options lines first (kv). */
static void print_sides(const struct local *l, const struct options *o)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!l->side[i])
			continue;
		kv_print(&l->side[i]->header, stdout, prefix[i]);
		side_print_results(l->side[i], o, prefix[i], stdout);
	}
}

/*
 * In the format asked for: the client's results, the server's, then the
 * waterfall's keys (or, in the summary, the two stage tables if there
 * is no waterfall). Whole: nothing of one side interleaves.
 */
void local_print(const struct local *l, const struct options *o,
		 const struct waterfall *w, const struct kv_list *wf)
{
	int json = !strcmp(o->output_format, "json"), human = glance_on(o);
	int csv = !strcmp(o->output_format, "csv");
	int joined = w && w->joined, i;
	FILE *tables = human ? stdout : stderr;

	fflush(stdout);
	fflush(stderr);
	if (json)
		json_wrap(stdout, l, o, wf);
	else if (csv)
		csv_table(l, o, stdout);
	else
		print_sides(l, o);
	if (!json && !csv && !human && !o->output)
		kv_print(wf, stdout, "waterfall.");
	fflush(stdout);
	for (i = 0; i < 2 && (!human || !joined); i++)
		if (l->side[i] && l->side[i]->traced)
			trace_table(&l->side[i]->ts, tables,
				    l->side[i]->role);
	/* --rate: `queue` is its first row, as the latency keys count it. */
	if (joined)
		waterfall_print(w, "netstage waterfall", o->rate > 0 ?
				"= latency from intended send" : "= latency",
				tables);
	fflush(tables);
}

void local_take_files(struct local *l, struct options *o)
{
	/* The names stay, for the client's options to show. */
	l->json = o->json ? xstrdup(o->json) : NULL;
	l->perfetto = o->perfetto ? xstrdup(o->perfetto) : NULL;
	l->report = o->report ? xstrdup(o->report) : NULL;
	o->parent_writes = 1;
}

int local_probe_outputs(const struct options *o)
{
	const char *paths[] = { o->json, o->all_samples, o->trace_records,
				o->perfetto, o->report };
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++)
		if (paths[i] && out_check(paths[i], err, sizeof(err)))
			return log_err("%s", err), -1;
	return 0;
}

void local_keep_client(struct run_results *r, void *arg)
{
	struct local *l = arg;

	run_results_free(l->side[0]);
	l->side[0] = r;
}

int local_write_both(struct local *l, const struct options *o, int ok)
{
	struct kv_list wf = { 0 };
	struct waterfall *w = NULL;
	int rc = 0;

	if (ok && o->trace == 1)
		w = local_waterfall(l, l->report != NULL, o->clock, &wf);
	local_print(l, o, w, &wf);
	if (w && (l->perfetto || l->report) &&
	    local_write_files(l, w, o))
		rc = -1;
	else if (!w && ok && (l->perfetto || l->report)) {
		log_err("--report/--perfetto: %s", l->side[1] ?
			"no traced transaction to write (trace_error says why)" :
			"no results of the server's to join");
		rc = -1;
	}
	if (ok && l->json && local_write_json(l, &wf))
		rc = -1;
	local_keep_for_script(l);
	if (w) {
		waterfall_free(w);
		free(w);
	}
	kv_free(&wf);
	return rc;
}

void local_free(struct local *l)
{
	run_results_free(l->side[0]);
	run_results_free(l->side[1]);
	free(l->json);
	free(l->perfetto);
	free(l->report);
	*l = (struct local){ 0 };
}
