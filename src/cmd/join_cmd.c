/*
 * `netstage join CLIENT.csv [NAME=]HOP.csv ... [--records OUT.csv]`:
 * the --trace-records files of a client and of the hops its requests
 * crossed on this host (servers `netstage observe` watched, netstage's
 * own server), joined transaction by transaction on the clock they
 * share (trace/join.h): where along the path the client's latency went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/kv.h"
#include "cmd/run.h"
#include "results/records_in.h"
#include "side/report.h"
#include "trace/join.h"
#include "trace/merge.h"
#include "trace/waterfall.h"

/* path's records (records_in.h) as hop t, named by the caller. */
static int read_table(const char *path, struct join_table *t, char *err,
		      size_t len)
{
	struct run_results *m = records_read(path, err, len);
	char name[JOIN_NAME];

	if (!m)
		return -1;
	snprintf(name, sizeof(name), "%s", t->name);
	run_results_table(m, t);
	snprintf(t->name, sizeof(t->name), "%s", name);
	run_results_free(m);
	return 0;
}

/* "NAME=FILE" names the hop; a bare FILE takes `def`. */
static const char *name_hop(struct join_table *t, const char *arg,
			    const char *def)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || eq - arg >= JOIN_NAME) {
		snprintf(t->name, sizeof(t->name), "%s", def);
		return arg;
	}
	snprintf(t->name, sizeof(t->name), "%.*s", (int)(eq - arg), arg);
	return eq + 1;
}

struct join_run {
	struct waterfall w;
	const char *path[JOIN_MAX_HOPS];
	struct out_file records;
	/* stdout: key=value lines, a JSON object, or the table */
	int json, human;
};

#define JOIN_USAGE "usage: netstage join CLIENT.csv [NAME=]HOP.csv ... " \
	"[--records OUT.csv] [--clocks auto|one|two] " \
	"[--output-format kv|json|human|auto] (--trace-records " \
	"files, client first, the answering server last; " \
	"docs/real-servers.md; --clocks: docs/stages.md, Two hosts)"

static int usage(void)
{
	log_err(JOIN_USAGE);
	return EXIT_USAGE;
}

/*
 * --clocks: are a client's and a server's files on one clock (one
 * host), two (the server's aligned by the fit), or, auto, two when one
 * cannot explain their stamps? Files do not name their clock.
 */
static int clocks_arg(struct waterfall *w, const char *v)
{
	static const char *const name[] = { "auto", "one", "two" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(name); i++)
		if (!strcmp(v, name[i]))
			return w->clocks = i, 0;
	log_err("join: --clocks %s: not auto, one or two", v);
	return -1;
}

static int format_arg(struct join_run *j, const char *v)
{
	if (!file_cmd_format(v, &j->json, &j->human))
		return 0;
	log_err("join: --output-format %s: kv, json, human or auto", v);
	return -1;
}

/* Files in path order; 0, or an exit status with one line said. */
static int parse_args(struct join_run *j, int argc, char **argv,
		      const char **records)
{
	char def[JOIN_NAME];
	int i;

	file_cmd_format("auto", &j->json, &j->human);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts(JOIN_USAGE);
			return -1;
		}
		if (!strncmp(argv[i], "--clocks=", 9)) {
			if (clocks_arg(&j->w, argv[i] + 9))
				return EXIT_USAGE;
		} else if (!strcmp(argv[i], "--clocks") && i + 1 < argc) {
			if (clocks_arg(&j->w, argv[++i]))
				return EXIT_USAGE;
		} else if (!strncmp(argv[i], "--output-format=", 16)) {
			if (format_arg(j, argv[i] + 16))
				return EXIT_USAGE;
		} else if (!strcmp(argv[i], "--output-format") &&
			   i + 1 < argc) {
			if (format_arg(j, argv[++i]))
				return EXIT_USAGE;
		} else if (!strncmp(argv[i], "--records=", 10))
			*records = argv[i] + 10;
		else if (!strcmp(argv[i], "--records") && i + 1 < argc)
			*records = argv[++i];
		else if (argv[i][0] == '-' || j->w.n == JOIN_MAX_HOPS)
			return usage();
		else
			j->path[j->w.n++] = argv[i];
	}
	if (j->w.n < 2)
		return usage();
	for (i = 0; i < j->w.n; i++) {
		if (!i)
			snprintf(def, sizeof(def), "client");
		else if (i == j->w.n - 1)
			snprintf(def, sizeof(def), "server");
		else
			snprintf(def, sizeof(def), "hop%d", i);
		j->path[i] = name_hop(&j->w.t[i], j->path[i], def);
	}
	return 0;
}

static int join_files(struct join_run *j, const char *records)
{
	struct waterfall *w = &j->w;
	struct kv_list kv = { 0 };
	char err[320] = "";
	int i, rc = 0;

	for (i = 0; i < w->n && !rc; i++)
		rc = read_table(j->path[i], &w->t[i], err, sizeof(err));
	if (!rc && records && out_open(&j->records, records, err, sizeof(err)))
		rc = -1;
	if (rc)
		return log_err("%s", err), EXIT_RUNTIME;
	w->records = j->records.f;
	if (waterfall_join(w, 0) == WATERFALL_NEEDS_ONE_CLOCK)
		return log_err("join: too few of the records pair to align "
			       "two clocks (--clocks two); --clocks one if "
			       "the hosts share one"), EXIT_RUNTIME;
	waterfall_kv(w, "join_", &kv);
	/*
	 * On a terminal the table alone; piped, the keys (or JSON) for a
	 * program, and the table on stderr for whoever watches.
	 */
	if (!j->json && !j->human)
		kv_print(&kv, stdout, "");
	if (j->json) {
		fputs("{\"join\": {\n", stdout);
		kv_json_members(&kv, stdout, 2);
		fputs("}}\n", stdout);
	}
	fflush(stdout);
	kv_free(&kv);
	waterfall_print(w, "netstage join", "= client latency",
			j->human ? stdout : stderr);
	if (j->records.f && out_commit(&j->records, err, sizeof(err)))
		return log_err("%s", err), EXIT_RUNTIME;
	if (!w->joined)
		return log_err("join: no client transaction could be joined"),
		       EXIT_RUNTIME;
	return 0;
}

int join_main(int argc, char **argv)
{
	struct join_run *j = xcalloc(1, sizeof(*j));
	const char *records = NULL;
	int rc;

	rc = parse_args(j, argc, argv, &records);
	if (!rc)
		rc = join_files(j, records);
	else if (rc < 0)
		rc = 0;		/* --help */
	out_abort(&j->records);
	waterfall_free(&j->w);
	free(j);
	return rc;
}
