/*
 * `netstage join CLIENT.csv [NAME=]HOP.csv ... [--records OUT.csv]`:
 * the --trace-records files of a client and of the hops its requests
 * crossed on this host (servers `netstage observe` watched, netstage's
 * own server), joined transaction by transaction on the clock they
 * share (trace/join.h): where along the path the client's latency went.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hist.h"
#include "infile.h"
#include "kv.h"
#include "report.h"
#include "trace/join.h"
#include "trace/merge.h"
#include "trace/waterfall.h"

struct columns {
	int side, port, next_port, flow, seq, kept;
	int b[NS_B_COUNT];
};

/* Where each column we read is; -1 with a message if one is missing. */
static int find_columns(char *header, struct columns *c, const char *path,
			char *err, size_t len)
{
	char *tok, *save = NULL;
	int i = 0, b;

	memset(c, -1, sizeof(*c));
	header[strcspn(header, "\r\n")] = '\0';
	for (tok = strtok_r(header, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), i++) {
		c->side = strcmp(tok, "side") ? c->side : i;
		c->port = strcmp(tok, "port") ? c->port : i;
		c->next_port = strcmp(tok, "next_port") ? c->next_port : i;
		c->flow = strcmp(tok, "flow_id") ? c->flow : i;
		c->seq = strcmp(tok, "seq") ? c->seq : i;
		c->kept = strcmp(tok, "kept") ? c->kept : i;
		for (b = 0; b < NS_B_COUNT; b++)
			if (!strcmp(tok, boundary_name(b)))
				c->b[b] = i;
	}
	if (c->side < 0 || c->port < 0 || c->b[NS_B_NETIF_RX] < 0 ||
	    c->b[NS_B_DEV_XMIT] < 0)
		return snprintf(err, len, "join: %s is no --trace-records file "
				"of this netstage (no side, port or boundary "
				"columns)", path), -1;
	return 0;
}

static enum ns_side side_named(const char *s)
{
	if (!strcmp(s, "observe"))
		return NS_SERVER_OBS;
	return strcmp(s, "server") ? NS_CLIENT : NS_SERVER;
}

/* One CSV row into r; its side's name in *side. */
static void parse_row(char *line, const struct columns *c,
		      struct join_rec *r, char *side, size_t side_len)
{
	char *p = line, *end;
	int i = 0, b;

	memset(r, 0, sizeof(*r));
	for (; p; p = end ? end + 1 : NULL, i++) {
		end = strchr(p, ',');
		if (end)
			*end = '\0';
		if (i == c->side)
			snprintf(side, side_len, "%s", p);
		else if (i == c->port)
			r->port = (uint16_t)strtoul(p, NULL, 10);
		else if (i == c->next_port)
			r->next_port = (uint16_t)strtoul(p, NULL, 10);
		else if (i == c->flow)
			r->flow_id = (uint32_t)strtoul(p, NULL, 10);
		else if (i == c->seq)
			r->seq = strtoull(p, NULL, 10);
		else if (i == c->kept)
			r->slowest = !strcmp(p, "slowest");
		for (b = 0; b < NS_B_COUNT; b++)
			if (i == c->b[b])
				r->b[b] = strtoull(p, NULL, 10);
	}
}

static int read_table(const char *path, struct join_table *t, char *err,
		      size_t len)
{
	FILE *f = infile_open(path);
	char *line = NULL, side[16] = "";
	struct columns c;
	size_t cap = 0;
	long alloc = 0;
	int rc = 0;

	if (!f)
		return snprintf(err, len, "join: %s: %s", path,
				strerror(errno)), -1;
	if (getline(&line, &cap, f) < 0 ||
	    find_columns(line, &c, path, err, len)) {
		if (!err[0])
			snprintf(err, len, "join: %s is empty", path);
		rc = -1;
	}
	while (!rc && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\r\n")] = '\0';
		if (t->n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			t->r = xrealloc(t->r, alloc, sizeof(*t->r));
		}
		parse_row(line, &c, &t->r[t->n++], side, sizeof(side));
	}
	t->side = side_named(side);
	free(line);
	fclose(f);
	join_sort(t);
	return rc;
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
};

#define JOIN_USAGE "usage: netstage join CLIENT.csv [NAME=]HOP.csv ... " \
	"[--records OUT.csv] (--trace-records files, client first, the " \
	"answering server last; docs/real-servers.md)"

static int usage(void)
{
	log_err(JOIN_USAGE);
	return EXIT_USAGE;
}

/* Files in path order; 0, or an exit status with one line said. */
static int parse_args(struct join_run *j, int argc, char **argv,
		      const char **records)
{
	char def[JOIN_NAME];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts(JOIN_USAGE);
			return -1;
		}
		if (!strncmp(argv[i], "--records=", 10))
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
	waterfall_join(w, 0);
	waterfall_kv(w, "join_", &kv);
	kv_print(&kv, stdout, "");
	kv_free(&kv);
	waterfall_print(w, "netstage join", "= client latency", stderr);
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
