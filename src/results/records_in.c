#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/infile.h"
#include "results/records_in.h"
#include "trace/merge.h"

enum col {
	C_SIDE, C_WORKER, C_FLOW, C_SEQ, C_SW_TX, C_SW_RX, C_PORT,
	C_NEXT_PORT, C_KEPT, C_HELD_COMM, C_HELD_PID, C_HELD_CPU,
	C_B0,			/* then a boundary each */
	C_COUNT = C_B0 + NS_B_COUNT
};

static const char *const col_name[C_B0] = {
	"side", "worker", "flow_id", "seq", "SW_TX", "SW_RX", "port",
	"next_port", "kept", "held_comm", "held_pid", "held_cpu",
};

static const char *name_of(int c)
{
	return c < C_B0 ? col_name[c] : boundary_name(c - C_B0);
}

/*
 * The next CSV field of *p, unquoted in place ("" is a quote inside
 * quotes); NULL past the last.
 */
static char *next_field(char **p)
{
	char *s = *p, *out, *in;

	if (!s)
		return NULL;
	if (*s != '"') {
		char *comma = strchr(s, ',');

		*p = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		return s;
	}
	for (out = s, in = s + 1; *in; in++) {
		if (*in == '"' && in[1] == '"')
			*out++ = *in++;
		else if (*in == '"')
			break;
		else
			*out++ = *in;
	}
	*out = '\0';
	if (*in == '"')
		in++;
	*p = *in == ',' ? in + 1 : NULL;
	return s;
}

/* For each column we read, where it is (-1: the file has none). */
static int find_columns(char *header, int *at, const char *path, char *err,
			size_t len)
{
	char *p = header, *tok;
	int i, c;

	for (c = 0; c < C_COUNT; c++)
		at[c] = -1;
	header[strcspn(header, "\r\n")] = '\0';
	for (i = 0; (tok = next_field(&p)); i++)
		for (c = 0; c < C_COUNT; c++)
			if (at[c] < 0 && !strcmp(tok, name_of(c)))
				at[c] = i;
	if (at[C_SIDE] < 0 || at[C_PORT] < 0 ||
	    at[C_B0 + NS_B_NETIF_RX] < 0 || at[C_B0 + NS_B_DEV_XMIT] < 0)
		return snprintf(err, len, "join: %s is no --trace-records file "
				"of this netstage (no side, port or boundary "
				"columns)", path), -1;
	return 0;
}

static void set_col(struct trace_rec *r, int c, const char *v, char *side,
		    size_t side_len)
{
	unsigned long long n = strtoull(v, NULL, 10);

	switch (c) {
	case C_SIDE: snprintf(side, side_len, "%s", v); break;
	case C_WORKER: r->worker = (uint16_t)n; break;
	case C_FLOW: r->flow_id = (uint32_t)n; break;
	case C_SEQ: r->seq = n; break;
	case C_SW_TX: r->sw_tx = n; break;
	case C_SW_RX: r->sw_rx = n; break;
	case C_PORT: r->port = (uint16_t)n; break;
	case C_NEXT_PORT: r->next_port = (uint16_t)n; break;
	case C_KEPT: r->slowest = !strcmp(v, "slowest"); break;
	case C_HELD_COMM:
		snprintf(r->held_comm, sizeof(r->held_comm), "%s", v);
		break;
	case C_HELD_PID: r->held_pid = (uint32_t)n; break;
	case C_HELD_CPU: r->held_cpu = (uint32_t)n; break;
	default: r->b[c - C_B0] = n; break;
	}
}

/* One row into r; its side's name in side. */
static void parse_row(char *line, const int *at, struct trace_rec *r,
		      char *side, size_t side_len)
{
	char *p = line, *v;
	int i, c;

	memset(r, 0, sizeof(*r));
	line[strcspn(line, "\r\n")] = '\0';
	for (i = 0; (v = next_field(&p)); i++)
		for (c = 0; c < C_COUNT; c++)
			if (at[c] == i)
				set_col(r, c, v, side, side_len);
}

static enum ns_side side_named(const char *s)
{
	if (!strcmp(s, "observe"))
		return NS_SERVER_OBS;
	return strcmp(s, "server") ? NS_CLIENT : NS_SERVER;
}

/* Is name one of the header's columns? */
static int has_column(const char *header, const char *name)
{
	char *copy = xstrdup(header), *p = copy, *tok;
	int found = 0;

	while (!found && (tok = next_field(&p)))
		found = !strcmp(tok, name);
	free(copy);
	return found;
}

/*
 * The file says only which end it is; its stage columns say the rest:
 * the kind (udp_rr, tcp_crr, else tcp_rr) whose every stage is one.
 */
static enum ns_side side_of(const char *header, enum ns_side end)
{
	static const int kinds[] = { NS_UDP_BIT, NS_CRR_BIT };
	const struct stage_def *d;
	size_t k;
	int i, n;

	if (NS_IS_OBS(end))
		return end;
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		d = stage_defs(end | kinds[k]);
		n = stage_count(end | kinds[k]);
		for (i = 0; i < n && has_column(header, d[i].name); i++)
			;
		if (n && i == n)
			return end | kinds[k];
	}
	return end;
}

/* The rows, read in one array, by worker as a side keeps them. */
static int by_worker(struct run_results *m, struct trace_rec *all, long n,
		     const char *path, char *err, size_t len)
{
	struct rec_set *s = &m->recs;
	long i;
	int w;

	for (i = 0; i < n; i++) {
		if (all[i].worker >= NS_MAX_RINGS)
			return snprintf(err, len, "join: %s: worker %u of a "
					"record is more than netstage runs",
					path, all[i].worker), -1;
		s->n[all[i].worker]++;
		if (all[i].worker >= s->nworkers)
			s->nworkers = all[i].worker + 1;
	}
	for (w = 0; w < s->nworkers; w++) {
		s->recs[w] = xcalloc(s->n[w] ? s->n[w] : 1, sizeof(*all));
		s->n[w] = 0;
	}
	for (i = 0; i < n; i++) {
		w = all[i].worker;
		s->recs[w][s->n[w]++] = all[i];
	}
	return 0;
}

/*
 * An open-loop client's records (--rate) have their intended sends: its
 * transactions start there, with `queue`, as they did in the run.
 */
static struct run_results *new_model(const char *side, const char *header,
				     int rate)
{
	struct run_results *m = xcalloc(1, sizeof(*m));

	m->side = side_of(header, side_named(side));
	if (rate && !NS_IS_SERVER(m->side))
		m->side |= NS_RATE_BIT;
	m->is_client = !NS_IS_SERVER(m->side);
	snprintf(m->role, sizeof(m->role), "%s", *side ? side : "client");
	m->trace_asked = m->traced = 1;
	return m;
}

struct run_results *records_read(const char *path, char *err, size_t len)
{
	FILE *f = infile_open(path);
	char *line = NULL, *header = NULL, side[16] = "";
	struct run_results *m = NULL;
	struct trace_rec *all = NULL;
	long n = 0, alloc = 0;
	int at[C_COUNT];
	size_t cap = 0;

	if (!f)
		return snprintf(err, len, "join: %s: %s", path,
				strerror(errno)), NULL;
	err[0] = '\0';
	if (getline(&line, &cap, f) < 0) {
		snprintf(err, len, "join: %s is empty", path);
		goto out;
	}
	line[strcspn(line, "\r\n")] = '\0';
	header = xstrdup(line);
	if (find_columns(line, at, path, err, len))
		goto out;
	while (getline(&line, &cap, f) > 0) {
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			all = xrealloc(all, alloc, sizeof(*all));
		}
		parse_row(line, at, &all[n++], side, sizeof(side));
	}
	m = new_model(side, header, n && all[0].b[NS_B_INTENDED]);
	if (by_worker(m, all, n, path, err, len)) {
		run_results_free(m);
		m = NULL;
	}
out:
	free(all);
	free(header);
	free(line);
	fclose(f);
	return m;
}
