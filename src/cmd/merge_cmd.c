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
#include <unistd.h>

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

/*
 * The whole's count and rate. At once: the rates add. One after
 * another: the rate of the whole, each run weighed by its length, as
 * if one long run; a stream's then has no byte count to make one of
 * (returns 0: no rate).
 */
static int totals(const struct merge *m, uint64_t *tx, double *tput)
{
	double secs = 0;
	int i;

	*tx = 0;
	*tput = 0;
	for (i = 0; i < m->n; i++) {
		*tx += m->run[i].transactions;
		*tput += m->run[i].throughput;
		secs += m->run[i].time_end - m->run[i].time_start;
	}
	if (!m->concurrent && m->run[0].mbps)
		return 0;
	if (!m->concurrent)
		*tput = secs > 0 ? *tx / secs : 0;
	return 1;
}

static void totals_kv(const struct merge *m, struct kv_list *kv)
{
	const struct run_json *a = &m->run[0];
	double tput;
	uint64_t tx;
	int rate = totals(m, &tx, &tput);

	kv_str(kv, "merge_kind", m->concurrent ? "concurrent" : "repeated");
	kv_int(kv, "merge_runs", m->n);
	missing_kv(m, kv);
	kv_str(kv, "workload", a->workload);
	kv_str(kv, "role", a->role);
	kv_uint(kv, "num_transactions", tx);
	if (rate)
		kv_num(kv, a->mbps ? "throughput_Mbps" : "throughput", tput,
		       2);
}

/* The runs' latency histograms as one (h), or 0 if they have none. */
static int merged_latency(const struct merge *m, struct hist *h)
{
	int i;

	if (!m->run[0].has_lat)
		return 0;
	hist_reset(h);
	for (i = 0; i < m->n; i++)
		hist_merge(h, &m->run[i].lat);
	return 1;
}

static void merged_kv(const struct merge *m, struct kv_list *kv)
{
	struct hist *h = xcalloc(1, sizeof(*h));
	char name[64];
	int k;

	totals_kv(m, kv);
	if (merged_latency(m, h)) {
		kv_uint(kv, "latency_count", h->count);
		hist_kv(kv, "latency", h, 1);
	}
	for (k = 0; k < m->run[0].nstages; k++) {
		if (stage_merged(m, m->run[0].stage[k], h))
			continue;
		snprintf(name, sizeof(name), "stage_%s", m->run[0].stage[k]);
		hist_kv(kv, name, h, 0);
	}
	free(h);
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
static void human_row(const char *name, uint64_t tx, double tput, int rate,
		      const struct hist *lat, double cpu)
{
	printf("  %-32s %12llu", name, (unsigned long long)tx);
	if (rate)
		printf(" %12.2f", tput);
	else
		printf(" %12s", "-");
	if (lat)
		printf(" %10.2f %10.2f", hist_percentile(lat, 50) / 1e3,
		       hist_percentile(lat, 99) / 1e3);
	if (cpu >= 0)
		printf(" %6.2f", cpu);
	putchar('\n');
}

/* On a terminal: the runs, the whole beneath them, its stages. */
static void print_human(const struct merge *m)
{
	const struct run_json *a = &m->run[0];
	struct hist *h = xcalloc(1, sizeof(*h));
	int i, k, rate, lat;
	double tput;
	uint64_t tx;

	rate = totals(m, &tx, &tput);
	lat = merged_latency(m, h);
	printf("netstage merge: %d %s runs of %s, %s (%s)\n", m->n,
	       a->role, a->workload, m->concurrent ? "at once, rates added" :
	       "one after another, the whole's rate",
	       m->concurrent ? "concurrent" : "repeated");
	printf("  %-32s %12s %12s", "run", "transactions",
	       a->mbps ? "Mbit/s" : "per s");
	if (lat)
		printf(" %10s %10s", "p50 us", "p99 us");
	printf(" %6s\n", "cpu %");
	for (i = 0; i < m->n; i++)
		human_row(m->path[i], m->run[i].transactions,
			  m->run[i].throughput, 1,
			  lat ? &m->run[i].lat : NULL, m->run[i].cpu_util);
	human_row("= merged", tx, tput, rate, lat ? h : NULL, -1);
	for (i = 0; i < m->nmissing; i++)
		printf("  %-32s no result: the whole lacks it\n",
		       m->missing[i]);
	for (k = 0, i = 0; k < a->nstages; k++) {
		if (stage_merged(m, a->stage[k], h))
			continue;
		if (!i++)
			printf("  stages, merged (us)          p50        "
			       "p99\n");
		printf("  %-24s %10.2f %10.2f\n", a->stage[k],
		       hist_percentile(h, 50) / 1e3,
		       hist_percentile(h, 99) / 1e3);
	}
	free(h);
}

static void print(const struct merge *m)
{
	struct kv_list total = { 0 }, one = { 0 };
	char prefix[32];
	int i;

	if (m->human) {
		print_human(m);
		return;
	}
	merged_kv(m, &total);
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
static int write_report(const struct merge *m)
{
	struct merge_run *run = xcalloc(m->n, sizeof(*run));
	struct merge_stage *stage = xcalloc(RUN_JSON_STAGES, sizeof(*stage));
	struct hist *h = xcalloc(RUN_JSON_STAGES + 1, sizeof(*h));
	struct merge_page p = {
		.workload = m->run[0].workload, .role = m->run[0].role,
		.concurrent = m->concurrent, .mbps = m->run[0].mbps,
		.run = run, .nruns = m->n,
	};
	struct out_file o;
	char err[320] = "";
	int i, rc = -1;

	for (i = 0; i < m->n; i++)
		run[i] = (struct merge_run){ m->path[i],
			m->run[i].transactions, m->run[i].throughput,
			m->run[i].cpu_util,
			m->run[i].has_lat ? &m->run[i].lat : NULL };
	if (!totals(m, &p.whole.transactions, &p.whole.rate))
		p.whole.rate = -1;
	p.whole.name = "merged";
	p.whole.cpu_util = -1;
	p.whole.lat = merged_latency(m, &h[0]) ? &h[0] : NULL;
	for (i = 0; i < m->run[0].nstages; i++)
		if (!stage_merged(m, m->run[0].stage[i], &h[p.nstages + 1])) {
			stage[p.nstages].name = m->run[0].stage[i];
			stage[p.nstages].h = &h[p.nstages + 1];
			p.nstages++;
		}
	p.stage = stage;
	p.missing = m->missing;
	p.nmissing = m->nmissing;
	if (out_open(&o, m->report, err, sizeof(err))) {
		log_err("merge: %s", err);
	} else if (merge_report_write(o.f, &p) ||
		   out_commit(&o, err, sizeof(err))) {
		out_abort(&o);
		log_err("merge: %s: %s", m->report, err[0] ? err :
			"cannot write");
	} else {
		rc = 0;
	}
	free(h);
	free(stage);
	free(run);
	return rc;
}

static int set_format(struct merge *m, const char *f)
{
	if (!strcmp(f, "auto")) {
		m->json = 0;
		m->human = isatty(STDOUT_FILENO);
		return 0;
	}
	m->json = !strcmp(f, "json");
	m->human = !strcmp(f, "human");
	return !m->json && !m->human && strcmp(f, "kv");
}

static int parse_args(struct merge *m, int argc, char **argv)
{
	const char *f;
	int i;

	m->path = xcalloc(argc, sizeof(*m->path));
	m->missing = xcalloc(argc, sizeof(*m->missing));
	m->human = isatty(STDOUT_FILENO);
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
		if (f && set_format(m, f))
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
	if (m.report && write_report(&m)) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	print(&m);
	if (m.nmissing)
		log_err("merge: %d of %d runs gave no result: the whole "
			"lacks them", m.nmissing, m.n + m.nmissing);
out:
	for (i = 0; i < read; i++)
		run_json_free(&m.run[i]);
	free(m.run);
	free(m.path);
	free(m.missing);
	return rc < 0 ? 0 : rc;
}
