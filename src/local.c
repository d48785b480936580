/*
 * --local: server and client in one invocation on loopback. The server
 * runs as a child process (its own threads, its own results) on free
 * ports it reports through a pipe; its stdout goes to a temporary file
 * that is printed after the client's results, every key prefixed
 * "server." while the client's are prefixed "client.". With --json the
 * two documents become one: {"client": ..., "server": ...}.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "html_report.h"
#include "net.h"
#include "report.h"
#include "run.h"
#include "script/script.h"
#include "side.h"
#include "side_out.h"
#include "trace/perfetto.h"
#include "trace/summary.h"
#include "trace/tracer.h"
#include "trace/waterfall.h"
#include "worker.h"

#define SERVER_START_MS 10000
#define SERVER_EXIT_MS 20000

/* The server's process while it runs, for local_stop_server(). */
static volatile pid_t server_pid;

struct local {
	char *user_json;
	char *client_json;
	char *server_json;
	FILE *server_out;
	FILE *server_table;	/* its stage table, printed after the client's */
	FILE *client_out;	/* JSON on stdout: the client's, to wrap */
	FILE *client_table;	/* the summary: printed if no waterfall */
	FILE *recs[2];		/* the server's and the client's kept records */
	char *perfetto;		/* --perfetto: the parent writes both sides */
	char *report;		/* --report: the same */
	FILE *peer;		/* the server's keys: for r.peer, --report */
	FILE *peer_ts;		/* and its trace summary, for r.peer */
	FILE *own;		/* --report: the client's keys */
	pid_t pid;
};

/* The server listens on the first --local-host address. */
static char *local_server_host(const char *list)
{
	char host[NI_MAXHOST];

	return xstrdup(net_local_host(list, 0, host, sizeof(host)));
}

/*
 * CSV: each side prints key=value lines for the parent to make one
 * table of. The format it replaced, to put back, or NULL.
 */
static char *side_kv_for_csv(struct options *o)
{
	char *was = o->output_format;

	if (strcmp(was, "csv"))
		return NULL;
	o->output_format = xstrdup("kv");
	return was;
}

static void run_child(struct options *o, const struct workload *wl,
		      struct local *l, int port_fd)
{
	int rc;

	dup2(fileno(l->server_out), STDOUT_FILENO);
	side_table_to(l->server_table);
	side_records_to(l->recs[0]);
	side_results_to(l->peer, l->peer_ts);
	o->client = 0;
	o->local = 0;
	o->enable_write = 0;
	o->enable_read = 1;
	o->quiet = 1;
	o->control_port = 0;
	o->port = 0;
	o->port_fd = port_fd;
	/* Loopback only, unless the user named an address. */
	if (!o->local_host)
		o->local_host = xstrdup(o->ipv6 ? "::1" : "127.0.0.1");
	snprintf(o->prefix, sizeof(o->prefix), "server.");
	log_set_role("netstage server");
	free(o->json);
	o->json = l->server_json ? xstrdup(l->server_json) : NULL;
	if (o->all_samples) {
		char *p = side_server_path(o->all_samples);

		free(o->all_samples);
		o->all_samples = p;
	}
	if (o->trace_records) {
		char *p = side_server_path(o->trace_records);

		free(o->trace_records);
		o->trace_records = p;
	}
	free(o->perfetto);
	free(o->report);
	o->perfetto = o->report = NULL;
	options_print(o, wl->name);
	side_kv_for_csv(o);
	rc = server_run(o, wl);
	fflush(stdout);
	/* The script's run() is the parent's: the child says its own error. */
	if (script_current() && script_error(script_current())) {
		log_err("script error (server): %s",
			script_error(script_current()));
		rc = EXIT_RUNTIME;
	}
	_exit(rc);
}

void local_stop_server(void)
{
	struct timespec tick = { 0, 10000000 };
	pid_t pid = server_pid;
	int i;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (i = 0; i < 300; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int read_port(int fd, pid_t pid)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char b[2];

	if (poll(&p, 1, SERVER_START_MS) <= 0 || read(fd, b, 2) != 2) {
		kill(pid, SIGTERM);
		return -1;
	}
	return b[0] << 8 | b[1];
}

static int reap(pid_t pid)
{
	uint64_t deadline = now_ns() + SERVER_EXIT_MS * 1000000ULL;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > deadline) {
			log_err("server did not exit in time; killed it");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return EXIT_RUNTIME;
		}
		usleep(10000);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return EXIT_RUNTIME;
}

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
static int merge_json(struct local *l, const struct kv_list *wf)
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

/*
 * A side's own document, merged into the user's when both are done: in
 * $TMPDIR (the user's path may be a device or a fifo), made here with
 * O_EXCL and a random suffix, so nothing planted at a name netstage
 * would pick is followed. NULL, with errno, if it cannot be.
 */
static const char *tmp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

static char *tmp_name(const char *tag)
{
	const char *dir = tmp_dir();
	size_t n;
	char *s;
	int fd;

	n = strlen(dir) + 40;
	s = xcalloc(1, n);
	snprintf(s, n, "%s/netstage-%s.XXXXXX", dir, tag);
	fd = mkostemp(s, O_CLOEXEC);
	if (fd < 0) {
		free(s);
		return NULL;
	}
	close(fd);
	out_track(s);
	return s;
}

static void local_free(struct local *l)
{
	FILE *files[] = { l->server_out, l->server_table, l->client_out,
			  l->peer, l->peer_ts, l->own, l->client_table,
			  l->recs[0], l->recs[1] };

	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (files[i])
			fclose(files[i]);
	if (l->client_json) {
		unlink(l->client_json);
		out_untrack(l->client_json);
	}
	if (l->server_json) {
		unlink(l->server_json);
		out_untrack(l->server_json);
	}
	free(l->client_json);
	free(l->server_json);
	free(l->user_json);
	free(l->perfetto);
	free(l->report);
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
static int write_files(const struct local *l, const struct waterfall *w,
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
static struct waterfall *waterfall(struct local *l, const struct options *o,
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
static void keep_peer(struct local *l, const struct waterfall *w)
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
static void finish_output(struct local *l, const struct options *o,
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

/* JSON on stdout: the client's goes to a file the parent wraps. */
static int client_to(struct local *l, struct options *o,
		     const struct workload *wl)
{
	int saved, rc;

	if (!l->client_out)
		return client_run(o, wl);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(fileno(l->client_out), STDOUT_FILENO) < 0) {
		log_err("--local: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	rc = client_run(o, wl);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return rc;
}

/* Fail on an unwritable output path before anything starts. */
static int probe_outputs(const struct options *o)
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

int local_run(struct options *o, const struct workload *wl)
{
	struct local l = { 0 };
	struct kv_list wf = { 0 };
	struct waterfall *w = NULL;
	struct tracer *both;
	char *csv = NULL;
	int pfd[2], port, rc, src;

	if (probe_outputs(o))
		return EXIT_RUNTIME;
	l.server_out = tmpfile();
	l.server_table = tmpfile();
	if (o->trace == 1 && (l.recs[0] = tmpfile()) &&
	    (l.recs[1] = tmpfile()))
		side_records_to(l.recs[1]);
	if ((!strcmp(o->output_format, "json") ||
	     !strcmp(o->output_format, "csv")) && !(l.client_out = tmpfile()))
		l.server_out = NULL;
	if (glance_on(o) && (l.client_table = tmpfile()))
		side_table_to(l.client_table);
	if (script_current() || o->report)
		l.peer = tmpfile();
	if (script_current())
		l.peer_ts = tmpfile();
	if (o->report)
		l.own = tmpfile();
	if (!l.server_out || !l.server_table || pipe2(pfd, O_CLOEXEC)) {
		log_err("--local: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	if (o->json) {
		l.user_json = o->json;
		l.client_json = tmp_name("client");
		l.server_json = tmp_name("server");
		if (!l.client_json || !l.server_json) {
			log_err("--json: no temporary file in %.200s "
				"($TMPDIR, or /tmp): %s", tmp_dir(),
				strerror(errno));
			o->json = NULL;
			local_free(&l);
			return EXIT_RUNTIME;
		}
		o->json = xstrdup(l.client_json);
	}
	both = side_open_both(o, wl);
	fflush(stdout);
	l.pid = fork();
	if (l.pid < 0) {
		log_err("fork: %s", strerror(errno));
		tracer_close(both);
		local_free(&l);
		return EXIT_RUNTIME;
	}
	if (l.pid == 0) {
		close(pfd[0]);
		run_child(o, wl, &l, pfd[1]);
	}
	server_pid = l.pid;
	close(pfd[1]);
	port = read_port(pfd[0], l.pid);
	close(pfd[0]);
	if (port < 0) {
		log_err("--local: the server did not start");
		rc = EXIT_RUNTIME;
	} else {
		o->control_port = port;
		free(o->host);
		o->host = o->local_host ? local_server_host(o->local_host)
			: xstrdup(o->ipv6 ? "::1" : "127.0.0.1");
		options_print(o, wl->name);
		l.perfetto = o->perfetto;
		l.report = o->report;
		side_results_to(l.own, NULL);
		o->perfetto = o->report = NULL;
		csv = side_kv_for_csv(o);
		rc = client_to(&l, o, wl);
		if (csv) {
			free(o->output_format);
			o->output_format = csv;
		}
	}
	if (rc)
		/* The server would wait for a client that will not come. */
		kill(l.pid, SIGTERM);
	src = reap(l.pid);
	server_pid = 0;
	if (!rc && !src && l.recs[1])
		w = waterfall(&l, o, wl, &wf);
	if (l.peer && script_current())
		keep_peer(&l, w);
	finish_output(&l, o, w, &wf);
	if (w && (l.perfetto || l.report) && write_files(&l, w, o, wl, both))
		rc = EXIT_RUNTIME;
	else if (!w && !rc && !src && (l.perfetto || l.report)) {
		log_err("--report/--perfetto: no traced transaction to write "
			"(trace_error says why)");
		rc = EXIT_RUNTIME;
	}
	if (!rc && !src && l.user_json && merge_json(&l, &wf))
		rc = EXIT_RUNTIME;
	if (w) {
		waterfall_free(w);
		free(w);
	}
	tracer_close(both);
	local_free(&l);
	kv_free(&wf);
	return rc ? rc : src;
}
