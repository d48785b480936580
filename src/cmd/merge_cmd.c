/*
 * `netstage merge RESULT.json ...`: many runs' results as one, the
 * only correct way: counts summed, histograms merged bucket by bucket
 * and percentiles read from the merge, never averaged. Runs that ran
 * at once (clients of one server, pairs across hosts) sum their
 * throughput; runs one after another (repeats) do not, and the result
 * says which kind it made. A table of the runs beside the total.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/kv.h"
#include "core/outfile.h"
#include "output/merge_report.h"
#include "results/run_json.h"
#include "cmd/run.h"

#define MERGE_USAGE "usage: netstage merge RESULT.json RESULT.json ... " \
	"[--missing NAME]... [--output-format kv|json|human] " \
	"[--report FILE.html] (--json files of " \
	"runs of one workload; docs/usage.md, Merging runs)"

struct merge {
	struct run_json *run;
	const char **path;
	int n;
	/* --missing: runs that gave no result (a host that failed) */
	const char **missing;
	int nmissing;
	int concurrent;
	int json, human;	/* --output-format; auto: human on a terminal */
	const char *report;	/* --report FILE.html, or NULL */
};

/* Runs that do not merge: a workload, a role or a message size apart. */
static int refuse(const struct merge *m)
{
	const struct run_json *a = &m->run[0];
	int i, f;

	for (i = 1; i < m->n; i++) {
		const struct run_json *b = &m->run[i];
		const struct {
			const char *what, *x, *y;
		} field[] = {
			{ "workload", a->workload, b->workload },
			{ "role", a->role, b->role },
			{ "request size", a->request, b->request },
			{ "response size", a->response, b->response },
		};

		for (f = 0; f < (int)ARRAY_SIZE(field); f++)
			if (strcmp(field[f].x, field[f].y))
				return log_err("merge: %s and %s differ in %s "
					       "(%s, %s): they do not merge",
					       m->path[0], m->path[i],
					       field[f].what, field[f].x,
					       field[f].y), -1;
	}
	return 0;
}

/* At once when every run's time holds a moment all share. */
static int concurrent(const struct merge *m)
{
	double start = m->run[0].time_start, end = m->run[0].time_end;
	int i;

	for (i = 1; i < m->n; i++) {
		start = fmax(start, m->run[i].time_start);
		end = fmin(end, m->run[i].time_end);
	}
	return start < end;
}

static void hist_kv(struct kv_list *kv, const char *name,
		    const struct hist *h, int all)
{
	static const double pct[] = { 50, 90, 99, 99.9 };
	char key[96];
	size_t q;

	snprintf(key, sizeof(key), "%s_mean_us", name);
	kv_num(kv, key, hist_mean(h) / 1e3, 3);
	for (q = 0; q < ARRAY_SIZE(pct) - !all; q++) {
		snprintf(key, sizeof(key), "%s_p%g_us", name, pct[q]);
		kv_num(kv, key, hist_percentile(h, pct[q]) / 1e3, 3);
	}
	if (all) {
		snprintf(key, sizeof(key), "%s_max_us", name);
		kv_num(kv, key, h->max / 1e3, 3);
	}
}

/* A stage every run has, merged; -1 if one lacks it. */
static int stage_merged(const struct merge *m, const char *name,
			struct hist *h)
{
	int i, k;

	hist_reset(h);
	for (i = 0; i < m->n; i++) {
		for (k = 0; k < m->run[i].nstages; k++)
			if (!strcmp(m->run[i].stage[k], name))
				break;
		if (k == m->run[i].nstages)
			return -1;
		hist_merge(h, &m->run[i].stage_hist[k]);
	}
	return 0;
}

/*
 * The merge, computed once, that every view reads (key=value, JSON,
 * the terminal's table, the page): the runs as rows, the whole, each
 * stage every run has, merged. hist[0] is the whole's latency, hist[1
 * + k] merged stage k's.
 */
struct merged {
	struct merge_page page;
	struct merge_run *run;
	struct merge_stage *stage;
	struct hist *hist;
};

/*
 * The whole's count and rate. At once: the rates add. One after
 * another: the rate of the whole, each run weighed by its length, as
 * if one long run; a stream's then has no byte count to make one of
 * (rate -1: none).
 */
static void totals(const struct merge *m, struct merge_run *whole)
{
	double secs = 0;
	int i;

	whole->transactions = 0;
	whole->rate = 0;
	for (i = 0; i < m->n; i++) {
		whole->transactions += m->run[i].transactions;
		whole->rate += m->run[i].throughput;
		secs += m->run[i].time_end - m->run[i].time_start;
	}
	if (!m->concurrent)
		whole->rate = m->run[0].mbps ? -1 : secs > 0 ?
			      whole->transactions / secs : 0;
}

static void merged_build(const struct merge *m, struct merged *g)
{
	struct merge_page *p = &g->page;
	struct hist *h;
	int i, k;

	g->run = xcalloc(m->n, sizeof(*g->run));
	g->stage = xcalloc(RUN_JSON_STAGES, sizeof(*g->stage));
	g->hist = xcalloc(RUN_JSON_STAGES + 1, sizeof(*g->hist));
	*p = (struct merge_page){
		.workload = m->run[0].workload, .role = m->run[0].role,
		.concurrent = m->concurrent, .mbps = m->run[0].mbps,
		.run = g->run, .nruns = m->n, .stage = g->stage,
		.missing = m->missing, .nmissing = m->nmissing,
	};
	for (i = 0; i < m->n; i++)
		g->run[i] = (struct merge_run){ m->path[i],
			m->run[i].transactions, m->run[i].throughput,
			m->run[i].cpu_util,
			m->run[i].has_lat ? &m->run[i].lat : NULL };
	totals(m, &p->whole);
	p->whole.name = "merged";
	p->whole.cpu_util = -1;
	if (m->run[0].has_lat) {
		hist_reset(&g->hist[0]);
		for (i = 0; i < m->n; i++)
			hist_merge(&g->hist[0], &m->run[i].lat);
		p->whole.lat = &g->hist[0];
	}
	for (k = 0; k < m->run[0].nstages; k++) {
		h = &g->hist[1 + p->nstages];
		if (stage_merged(m, m->run[0].stage[k], h))
			continue;
		g->stage[p->nstages++] = (struct merge_stage){
			m->run[0].stage[k], h };
	}
}

static void merged_free(struct merged *g)
{
	free(g->hist);
	free(g->stage);
	free(g->run);
}

/*
 * Runs the merge lacks, named by the caller (a fleet's failed hosts):
 * the whole is then of fewer runs than were meant, and says so.
 */
static void missing_kv(const struct merge *m, struct kv_list *kv)
{
	char names[1024] = "";
	size_t len = 0;
	int i;

	kv_int(kv, "merge_missing_count", m->nmissing);
	if (!m->nmissing)
		return;
	for (i = 0; i < m->nmissing && len < sizeof(names); i++)
		len += snprintf(names + len, sizeof(names) - len, "%s%s",
				i ? "," : "", m->missing[i]);
	kv_str(kv, "merge_missing", names);
}

static void merged_kv(const struct merge *m, const struct merge_page *p,
		      struct kv_list *kv)
{
	char name[64];
	int k;

	kv_str(kv, "merge_kind", p->concurrent ? "concurrent" : "repeated");
	kv_int(kv, "merge_runs", p->nruns);
	missing_kv(m, kv);
	kv_str(kv, "workload", p->workload);
	kv_str(kv, "role", p->role);
	kv_uint(kv, "num_transactions", p->whole.transactions);
	if (p->whole.rate >= 0)
		kv_num(kv, p->mbps ? "throughput_Mbps" : "throughput",
		       p->whole.rate, 2);
	if (p->whole.lat) {
		kv_uint(kv, "latency_count", p->whole.lat->count);
		hist_kv(kv, "latency", p->whole.lat, 1);
	}
	for (k = 0; k < p->nstages; k++) {
		snprintf(name, sizeof(name), "stage_%s", p->stage[k].name);
		hist_kv(kv, name, p->stage[k].h, 0);
	}
}

/* Each run as it was: the table beside the total. */
static void run_kv(const struct merge *m, int i, struct kv_list *kv)
{
	const struct run_json *r = &m->run[i];

	kv_str(kv, "file", m->path[i]);
	kv_uint(kv, "num_transactions", r->transactions);
	kv_num(kv, r->mbps ? "throughput_Mbps" : "throughput", r->throughput,
	       2);
	if (r->has_lat) {
		kv_num(kv, "latency_p50_us", hist_percentile(&r->lat, 50) / 1e3,
		       3);
		kv_num(kv, "latency_p99_us", hist_percentile(&r->lat, 99) / 1e3,
		       3);
	}
	kv_num(kv, "local_cpu_util", r->cpu_util, 2);
	kv_num(kv, "time_start", r->time_start, 6);
	kv_num(kv, "time_end", r->time_end, 6);
}

/* One row of the terminal's table: a run, or the whole. */
static void human_row(const char *name, const struct merge_run *r, int lat)
{
	printf("  %-32s %12llu", name, (unsigned long long)r->transactions);
	if (r->rate >= 0)
		printf(" %12.2f", r->rate);
	else
		printf(" %12s", "-");
	if (lat && r->lat)
		printf(" %10.2f %10.2f", hist_percentile(r->lat, 50) / 1e3,
		       hist_percentile(r->lat, 99) / 1e3);
	if (r->cpu_util >= 0)
		printf(" %6.2f", r->cpu_util);
	putchar('\n');
}

/* On a terminal: the runs, the whole beneath them, its stages. */
static void print_human(const struct merge_page *p)
{
	int i, lat = p->whole.lat != NULL;

	printf("netstage merge: %d %s runs of %s, %s (%s)\n", p->nruns,
	       p->role, p->workload, p->concurrent ? "at once, rates added" :
	       "one after another, the whole's rate",
	       p->concurrent ? "concurrent" : "repeated");
	printf("  %-32s %12s %12s", "run", "transactions",
	       p->mbps ? "Mbit/s" : "per s");
	if (lat)
		printf(" %10s %10s", "p50 us", "p99 us");
	printf(" %6s\n", "cpu %");
	for (i = 0; i < p->nruns; i++)
		human_row(p->run[i].name, &p->run[i], lat);
	human_row("= merged", &p->whole, lat);
	for (i = 0; i < p->nmissing; i++)
		printf("  %-32s no result: the whole lacks it\n",
		       p->missing[i]);
	if (p->nstages)
		printf("  stages, merged (us)          p50        p99\n");
	for (i = 0; i < p->nstages; i++)
		printf("  %-24s %10.2f %10.2f\n", p->stage[i].name,
		       hist_percentile(p->stage[i].h, 50) / 1e3,
		       hist_percentile(p->stage[i].h, 99) / 1e3);
}

static void print(const struct merge *m, const struct merge_page *p)
{
	struct kv_list total = { 0 }, one = { 0 };
	char prefix[32];
	int i;

	if (m->human) {
		print_human(p);
		return;
	}
	merged_kv(m, p, &total);
	if (m->json) {
		fputs("{\"merge\": {\n", stdout);
		kv_json_members(&total, stdout, 2);
		fputs("},\n\"runs\": [", stdout);
	} else {
		kv_print(&total, stdout, "");
	}
	for (i = 0; i < m->n; i++) {
		run_kv(m, i, &one);
		if (m->json) {
			fputs(i ? ",\n{" : "\n{", stdout);
			kv_json_members(&one, stdout, 2);
			fputs("}", stdout);
		} else {
			snprintf(prefix, sizeof(prefix), "run%d.", i + 1);
			kv_print(&one, stdout, prefix);
		}
		kv_free(&one);
	}
	if (m->json)
		fputs("]}\n", stdout);
	kv_free(&total);
}

/* The page of the merge, written whole or not at all. */
static int write_report(const char *path, const struct merge_page *p)
{
	struct out_file o;
	char err[320] = "";

	if (out_open(&o, path, err, sizeof(err))) {
		log_err("merge: %s", err);
		return -1;
	}
	if (merge_report_write(o.f, p) || out_commit(&o, err, sizeof(err))) {
		out_abort(&o);
		log_err("merge: %s: %s", path, err[0] ? err : "cannot write");
		return -1;
	}
	return 0;
}

static int parse_args(struct merge *m, int argc, char **argv)
{
	const char *f;
	int i;

	m->path = xcalloc(argc, sizeof(*m->path));
	m->missing = xcalloc(argc, sizeof(*m->missing));
	file_cmd_format("auto", &m->json, &m->human);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts(MERGE_USAGE);
			return -1;
		}
		if (!strcmp(argv[i], "--output-format") && i + 1 < argc)
			f = argv[++i];
		else if (!strncmp(argv[i], "--output-format=", 16))
			f = argv[i] + 16;
		else
			f = NULL;
		if (f && file_cmd_format(f, &m->json, &m->human))
			return log_err("merge: --output-format %s: kv, json, "
				       "human or auto", f), EXIT_USAGE;
		if (f)
			continue;
		if (!strcmp(argv[i], "--report") && i + 1 < argc)
			m->report = argv[++i];
		else if (!strncmp(argv[i], "--report=", 9))
			m->report = argv[i] + 9;
		else if (!strcmp(argv[i], "--missing") && i + 1 < argc)
			m->missing[m->nmissing++] = argv[++i];
		else if (!strncmp(argv[i], "--missing=", 10))
			m->missing[m->nmissing++] = argv[i] + 10;
		else if (argv[i][0] == '-')
			return log_err("merge: %s: not an option of merge; %s",
				       argv[i], MERGE_USAGE), EXIT_USAGE;
		else
			m->path[m->n++] = argv[i];
	}
	/* One run is a merge only beside the runs it lacks. */
	if (m->n < (m->nmissing ? 1 : 2))
		return log_err("%s", MERGE_USAGE), EXIT_USAGE;
	return 0;
}

int merge_main(int argc, char **argv)
{
	struct merge m = { 0 };
	struct merged g = { 0 };
	char err[320];
	int i, rc, read = 0;

	rc = parse_args(&m, argc, argv);
	if (rc)
		goto out;
	m.run = xcalloc(m.n, sizeof(*m.run));
	for (read = 0; read < m.n; read++)
		if (run_json_read(m.path[read], &m.run[read], err,
				  sizeof(err))) {
			log_err("%s", err);
			rc = EXIT_RUNTIME;
			goto out;
		}
	if (refuse(&m)) {
		rc = EXIT_USAGE;
		goto out;
	}
	m.concurrent = concurrent(&m);
	merged_build(&m, &g);
	if (m.report && write_report(m.report, &g.page)) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	print(&m, &g.page);
	if (m.nmissing)
		log_err("merge: %d of %d runs gave no result: the whole "
			"lacks them", m.nmissing, m.n + m.nmissing);
out:
	merged_free(&g);
	for (i = 0; i < read; i++)
		run_json_free(&m.run[i]);
	free(m.run);
	free(m.path);
	free(m.missing);
	return rc < 0 ? 0 : rc;
}
