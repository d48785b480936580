/*
 * `netstage compare A.json B.json`, or groups of repeated runs,
 * `netstage compare A1.json A2.json ... vs B1.json B2.json ...`: every
 * figure of B beside A's, the change, and whether it is beyond the
 * runs' noise (results/compare.h says how that is decided).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/outfile.h"
#include "output/compare_report.h"
#include "results/compare.h"
#include "results/run_json.h"
#include "cmd/run.h"

#define COMPARE_USAGE "usage: netstage compare A.json B.json | A.json... " \
	"vs B.json... [--output-format kv|json|human] [--report FILE.html] " \
	"(--json files of runs of one workload; docs/usage.md, Comparing " \
	"runs)"

/* A group's runs: each file's sides (a --local one has two). */
struct group {
	const char **path;
	int n;
	struct run_json (*run)[2];
	int *nsides;
};

struct compare {
	struct group g[2];
	int json, human;
	const char *report;
};

/* Files before "vs" are A, after it B; without it, one file each. */
static int split(struct compare *m, const char **file, int n, int vs)
{
	if (vs < 0 && n == 2)
		vs = 1;
	if (vs < 1 || vs >= n)
		return -1;
	m->g[0].path = file;
	m->g[0].n = vs;
	m->g[1].path = file + vs;
	m->g[1].n = n - vs;
	return 0;
}

static int parse_args(struct compare *m, int argc, char **argv,
		      const char **file)
{
	int i, n = 0, vs = -1;
	const char *f;

	file_cmd_format("auto", &m->json, &m->human);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts(COMPARE_USAGE);
			return -1;
		}
		f = NULL;
		if (!strcmp(argv[i], "--output-format") && i + 1 < argc)
			f = argv[++i];
		else if (!strncmp(argv[i], "--output-format=", 16))
			f = argv[i] + 16;
		else if (!strcmp(argv[i], "--report") && i + 1 < argc)
			m->report = argv[++i];
		else if (!strncmp(argv[i], "--report=", 9))
			m->report = argv[i] + 9;
		else if (!strcmp(argv[i], "vs") && vs < 0)
			vs = n;
		else if (argv[i][0] == '-')
			return log_err("compare: %s: not an option of compare; "
				       "%s", argv[i], COMPARE_USAGE), EXIT_USAGE;
		else
			file[n++] = argv[i];
		if (f && file_cmd_format(f, &m->json, &m->human))
			return log_err("compare: --output-format %s: kv, json, "
				       "human or auto", f), EXIT_USAGE;
	}
	if (split(m, file, n, vs))
		return log_err("%s", COMPARE_USAGE), EXIT_USAGE;
	return 0;
}

static int read_group(struct group *g)
{
	char err[320];
	int i;

	g->run = xcalloc(g->n, sizeof(*g->run));
	g->nsides = xcalloc(g->n, sizeof(*g->nsides));
	for (i = 0; i < g->n; i++) {
		g->nsides[i] = run_json_read_sides(g->path[i], "compare",
						   g->run[i], err, sizeof(err));
		if (g->nsides[i] < 0) {
			g->nsides[i] = 0;
			return log_err("%s", err), -1;
		}
	}
	return 0;
}

/* Every run's side named role, in r; 0 when a run lacks it. */
static int side_of(const struct group *g, const char *role,
		   const struct run_json **r)
{
	int i, k;

	for (i = 0; i < g->n; i++) {
		for (k = 0; k < g->nsides[i]; k++)
			if (!strcmp(g->run[i][k].role, role))
				break;
		if (k == g->nsides[i])
			return 0;
		r[i] = &g->run[i][k];
	}
	return 1;
}

/* Runs of one workload only: another's figures mean other things. */
static int refuse(const struct compare *m)
{
	const struct run_json *first = &m->g[0].run[0][0];
	int s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < m->g[s].n; i++)
			if (strcmp(m->g[s].run[i][0].workload, first->workload))
				return log_err("compare: %s runs %s, %s runs "
					       "%s: they do not compare",
					       m->g[0].path[0], first->workload,
					       m->g[s].path[i],
					       m->g[s].run[i][0].workload), -1;
	return 0;
}

static int build(const struct compare *m, struct cmp *c)
{
	static const char *const roles[] = { "client", "server" };
	const struct run_json **a = xcalloc(m->g[0].n, sizeof(*a));
	const struct run_json **b = xcalloc(m->g[1].n, sizeof(*b));
	size_t r;

	c->workload = m->g[0].run[0][0].workload;
	c->na = m->g[0].n;
	c->nb = m->g[1].n;
	for (r = 0; r < ARRAY_SIZE(roles); r++)
		if (side_of(&m->g[0], roles[r], a) &&
		    side_of(&m->g[1], roles[r], b))
			compare_side(c, roles[r], a, c->na, b, c->nb);
	free(a);
	free(b);
	compare_finish(c);
	if (!c->nfig)
		return log_err("compare: the two groups share no side (a "
			       "client's results against a server's?)"), -1;
	return 0;
}

static int write_report(const char *path, const struct compare_page *p)
{
	struct out_file o;
	char err[320] = "";

	if (out_open(&o, path, err, sizeof(err)))
		return log_err("compare: %s", err), -1;
	if (compare_report_write(o.f, p) || out_commit(&o, err, sizeof(err))) {
		out_abort(&o);
		return log_err("compare: %s: %s", path,
			       err[0] ? err : "cannot write"), -1;
	}
	return 0;
}

int compare_main(int argc, char **argv)
{
	const char **file = xcalloc(argc, sizeof(*file));
	struct compare m = { 0 };
	struct cmp c = { 0 };
	struct compare_page page;
	int rc, s, i;

	rc = parse_args(&m, argc, argv, file);
	if (rc)
		goto out;
	rc = EXIT_RUNTIME;
	if (read_group(&m.g[0]) || read_group(&m.g[1]))
		goto out;
	rc = EXIT_USAGE;
	if (refuse(&m) || build(&m, &c))
		goto out;
	page = (struct compare_page){ &c, m.g[0].path, m.g[1].path,
				      m.g[0].n, m.g[1].n };
	rc = EXIT_RUNTIME;
	if (m.report && write_report(m.report, &page))
		goto out;
	rc = 0;
	if (m.json)
		compare_print_json(stdout, &page);
	else if (m.human)
		compare_print_human(stdout, &page);
	else
		compare_print_kv(stdout, &page);
out:
	compare_free(&c);
	for (s = 0; s < 2; s++) {
		for (i = 0; i < m.g[s].n && m.g[s].run; i++) {
			run_json_free(&m.g[s].run[i][0]);
			run_json_free(&m.g[s].run[i][1]);
		}
		free(m.g[s].run);
		free(m.g[s].nsides);
	}
	free(file);
	return rc < 0 ? 0 : rc;
}
