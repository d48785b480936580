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
#include "local_out.h"
#include "net.h"
#include "run.h"
#include "script/script.h"
#include "side.h"
#include "side_out.h"
#include "trace/tracer.h"
#include "worker.h"

#define SERVER_START_MS 10000
#define SERVER_EXIT_MS 20000

/* The server's process while it runs, for local_stop_server(). */
static volatile pid_t server_pid;

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
		w = local_waterfall(&l, o, wl, &wf);
	if (l.peer && script_current())
		local_keep_peer(&l, w);
	local_finish_output(&l, o, w, &wf);
	if (w && (l.perfetto || l.report) && local_write_files(&l, w, o, wl, both))
		rc = EXIT_RUNTIME;
	else if (!w && !rc && !src && (l.perfetto || l.report)) {
		log_err("--report/--perfetto: no traced transaction to write "
			"(trace_error says why)");
		rc = EXIT_RUNTIME;
	}
	if (!rc && !src && l.user_json && local_merge_json(&l, &wf))
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
