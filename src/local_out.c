/*
 * --local: what the parent makes of the two sides once both are done
 * (local.c runs them): the server's output after the client's, one
 * JSON document or CSV table of both, the joined waterfall, --perfetto
 * and --report of both, and the script's r.peer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "html_report.h"
#include "local_out.h"
#include "outfile.h"
#include "script/script.h"
#include "trace/perfetto.h"
#include "trace/summary.h"
#include "trace/tracer.h"
#include "worker.h"

static void copy_file(FILE *from, FILE *to)
{
	char buf[4096];
	size_t n;

	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		fwrite(buf, 1, n, to);
}

/* A side's JSON, or null if it wrote none. */
static void embed(FILE *to, FILE *from)
{
	if (!from || fseek(from, 0, SEEK_END) || ftell(from) <= 0) {
		fputs("null", to);
		return;
	}
	copy_file(from, to);
}

/* One document: {"client": ..., "server": ..., "waterfall": {...}}. */
static void json_wrap(FILE *to, FILE *client, FILE *server,
		      const struct kv_list *wf)
{
	fputs("{\"client\":\n", to);
	embed(to, client);
	fputs(",\n\"server\":\n", to);
	embed(to, server);
	if (wf->n) {
		fputs(",\n\"waterfall\": {\n", to);
		kv_json_members(wf, to, 2);
		fputs("}", to);
	}
	fputs("}\n", to);
}

/* --json FILE: the two sides' documents made one. */
int local_merge_json(struct local *l, const struct kv_list *wf)
{
	FILE *c = fopen(l->client_json, "r"), *s = fopen(l->server_json, "r");
	struct out_file out;
	char err[256];
	int rc = 0;

	if (out_open(&out, l->user_json, err, sizeof(err)))
		rc = -1;
	else {
		json_wrap(out.f, c, s, wf);
		rc = out_commit(&out, err, sizeof(err));
	}
	if (c)
		fclose(c);
	if (s)
		fclose(s);
	if (rc)
		log_err("%s", err);
	return rc;
}

/* A value's type back from its text: what JSON and Lua make of it. */
static enum kv_type kv_type_of(const char *text)
{
	char *end;

	if (!*text)
		return KV_STR;
	strtod(text, &end);
	if (*end && strcmp(text, "nan"))
		return KV_STR;
	return strpbrk(text, ".en") ? KV_NUM : KV_INT;
}

/* A side's key=value lines, the "client."/"server." prefix dropped. */
static void read_kv(FILE *f, struct kv_list *kv)
{
	char *line = NULL, *eq, *dot;
	size_t cap = 0;

	rewind(f);
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		eq = strchr(line, '=');
		dot = strchr(line, '.');
		if (!eq || !dot || dot > eq)
			continue;
		*eq = '\0';
		kv_str(kv, dot + 1, eq + 1);
		kv->v[kv->n - 1].type = kv_type_of(eq + 1);
	}
	free(line);
}

struct report_args {
	const struct waterfall *w;
	const struct html_meta *m;
};

static void fill_perfetto(FILE *f, const void *arg)
{
	const struct report_args *a = arg;

	perfetto_write(f, a->w->t, a->w->n);
}

static void fill_report(FILE *f, const void *arg)
{
	const struct report_args *a = arg;

	html_report_write(f, a->w, a->m);
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

/*
 * --perfetto and --report: both sides' records, which only the parent
 * has, in one file each.
 */
int local_write_files(const struct local *l, const struct waterfall *w,
		       const struct options *o, const struct workload *wl,
		       struct tracer *both)
{
	struct kv_list opts = { 0 };
	struct html_meta m = {
		.workload = wl->name, .interval_s = o->interval,
		.hooks = both ? tracer_hooks(both) : NULL, .options = &opts,
	};
	struct report_args a = { w, &m };
	struct kv_list keys[2] = { { 0 } };
	int rc = 0;

	/* Untraced (no privileges, say): nothing to draw, no empty file. */
	if (!w->joined)
		return log_err("--report/--perfetto: no traced transaction "
			       "to write (trace_error says why)"), -1;
	if (l->perfetto && write_whole(l->perfetto, fill_perfetto, &a))
		rc = -1;
	options_dump(o, &opts);
	/* What each side could not time, which its records do not show. */
	if (l->own && l->peer) {
		read_kv(l->own, &keys[0]);
		read_kv(l->peer, &keys[1]);
		m.keys[0] = &keys[0];
		m.keys[1] = &keys[1];
	}
	if (l->report && write_whole(l->report, fill_report, &a))
		rc = -1;
	kv_free(&keys[0]);
	kv_free(&keys[1]);
	kv_free(&opts);
	return rc;
}

/*
 * The two sides' records (trace/waterfall.h), the client's first;
 * joined, the server's stages inside the client's `remote` on the clock
 * both share, with the keys in kv. NULL if they could not be read.
 */
struct waterfall *local_waterfall(struct local *l, const struct options *o,
				   const struct workload *wl,
				   struct kv_list *kv)
{
	struct waterfall *w = xcalloc(1, sizeof(*w));
	struct run_shared rs = { .o = o, .wl = wl };
	int i;

	w->n = 2;
	w->keep = l->report != NULL;
	for (i = 0; i < 2; i++) {
		rs.is_client = !i;
		w->t[i].side = trace_side(&rs);
		snprintf(w->t[i].name, sizeof(w->t[i].name), "%s",
			 i ? "server" : "client");
	}
	/* t[0] is the client: its records are recs[1]. */
	if (waterfall_load(&w->t[0], l->recs[1]) ||
	    waterfall_load(&w->t[1], l->recs[0])) {
		log_err("--local: the records for the waterfall: %s",
			strerror(errno));
		waterfall_free(w);
		free(w);
		return NULL;
	}
	if (w->t[0].n && !waterfall_join(w, 1) && w->joined)
		waterfall_kv(w, "", kv);
	return w;
}

/*
 * --script: run()'s result gets the server's as r.peer: its keys, its
 * trace summary and its records (the waterfall's, when there is one).
 */
void local_keep_peer(struct local *l, const struct waterfall *w)
{
	struct trace_summary *ts = xcalloc(1, sizeof(*ts));
	struct kv_list kv = { 0 };
	int have_ts = 0;

	read_kv(l->peer, &kv);
	if (l->peer_ts) {
		rewind(l->peer_ts);
		have_ts = fread(ts, sizeof(*ts), 1, l->peer_ts) == 1;
	}
	if (kv.n)
		script_keep_peer(script_current(), &kv, have_ts ? ts : NULL,
				 w ? w->t[1].r : NULL, w ? w->t[1].n : 0);
	kv_free(&kv);
	free(ts);
}

/*
 * --output-format csv: one table, a row per side, a column per key
 * either side has (the client's first), empty where a side has none.
 */
static void csv_table(FILE *client, FILE *server, FILE *to)
{
	struct kv_list side[2] = { { 0 } }, cols = { 0 };
	static const char *const name[] = { "client", "server" };
	size_t i;
	int k;

	read_kv(client, &side[0]);
	read_kv(server, &side[1]);
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
		fputs(name[k], to);
		for (i = 0; i < cols.n; i++)
			csv_field(to, kv_get(&side[k], cols.v[i].key) ?: "", 1);
		fputc('\n', to);
	}
	kv_free(&side[0]);
	kv_free(&side[1]);
	kv_free(&cols);
}

/*
 * After the client's output, in the format asked for: the server's
 * results, then the waterfall (or, in the summary, the two stage tables
 * if there is none). Whole files: nothing of one side interleaves.
 */
void local_finish_output(struct local *l, const struct options *o,
			  const struct waterfall *w, const struct kv_list *wf)
{
	int json = !strcmp(o->output_format, "json"), human = glance_on(o);
	int csv = !strcmp(o->output_format, "csv");
	int joined = w && w->joined;
	FILE *tables = human ? stdout : stderr;

	fflush(stdout);
	fflush(stderr);
	if (json)
		json_wrap(stdout, l->client_out, l->server_out, wf);
	else if (csv)
		csv_table(l->client_out, l->server_out, stdout);
	else
		copy_file(l->server_out, stdout);
	if (!json && !csv && !human && !o->output)
		kv_print(wf, stdout, "waterfall.");
	fflush(stdout);
	if (!human || !joined) {
		if (l->client_table)
			copy_file(l->client_table, tables);
		copy_file(l->server_table, tables);
	}
	if (joined)
		waterfall_print(w, "netstage waterfall", "= latency", tables);
	fflush(tables);
}
