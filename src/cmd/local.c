/*
 * --local: server and client in one invocation on loopback. The server
 * runs as a child process (its own threads, its own results) on free
 * ports. One pipe carries all it tells the parent: the port it listens
 * on, then at its end its whole results model (results_wire.h). The
 * parent keeps the client's model in memory too and makes every output
 * of the two (local_out.h): keys prefixed "client." and "server.", one
 * JSON document {"client": ..., "server": ...}, the waterfall.
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

#include "core/common.h"
#include "cmd/local_out.h"
#include "net/net.h"
#include "results/results_wire.h"
#include "cmd/run.h"
#include "script/script.h"
#include "side/side.h"
#include "side/side_out.h"
#include "trace/tracer.h"
#include "engine/worker.h"

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

/*
 * The child's options, whose lines the parent prints for it: made at
 * its end, when they hold the data port it took, in the output format
 * the user asked for (the child's own is kv, for the parent).
 */
static struct {
	struct options *o;
	const char *workload;
	char *format;
} child;

/* The server's model, with its options lines, down the pipe. */
static void send_to_parent(struct run_results *r, void *arg)
{
	int fd = *(int *)arg;
	char *format = child.o->output_format;

	child.o->output_format = child.format;
	options_header(child.o, child.workload, &r->header);
	child.o->output_format = format;
	if (results_send(fd, r))
		log_err("--local: the results for the parent: %s",
			strerror(errno));
	run_results_free(r);
}

static void run_child(struct options *o, const struct workload *wl,
		      int fd)
{
	/* The server closes its port's fd once it has said the port. */
	static int results_fd;
	int rc;

	results_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	side_results_to(send_to_parent, &results_fd);
	o->client = 0;
	o->local = 0;
	o->enable_write = 0;
	o->enable_read = 1;
	o->quiet = 1;
	o->control_port = 0;
	o->port = 0;
	o->port_fd = fd;
	/* Loopback only, unless the user named an address. */
	if (!o->local_host)
		o->local_host = xstrdup(o->ipv6 ? "::1" : "127.0.0.1");
	snprintf(o->prefix, sizeof(o->prefix), "server.");
	log_set_role("netstage server");
	/* The parent writes both sides' JSON, Perfetto and report. */
	free(o->json);
	free(o->perfetto);
	free(o->report);
	o->json = o->perfetto = o->report = NULL;
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
	child.o = o;
	child.workload = wl->name;
	child.format = o->output_format ? xstrdup(o->output_format) : NULL;
	side_kv_for_csv(o);
	rc = server_run(o, wl);
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

/* The server's model, at its end (it ends after the client). */
static struct run_results *server_results(int fd)
{
	struct run_results *r;
	char err[256];

	r = results_recv(fd, SERVER_EXIT_MS, RESULTS_MAX_LEN, NULL, err,
			 sizeof(err));
	if (!r && *err)
		log_err("--local: the server's results: %s", err);
	return r;
}

/* The client, with the files only the parent writes kept aside. */
static int run_client(struct local *l, struct options *o,
		      const struct workload *wl, int port)
{
	char *csv;
	int rc;

	o->control_port = port;
	free(o->host);
	o->host = o->local_host ? local_server_host(o->local_host)
		: xstrdup(o->ipv6 ? "::1" : "127.0.0.1");
	/*
	 * The client prints its options once the server named its port,
	 * in the format asked for, not the kv the parent reads CSV from:
	 * none then, if that format prints none.
	 */
	o->options_shown = !options_header_shown(o);
	local_take_files(l, o);
	side_results_to(local_keep_client, l);
	csv = side_kv_for_csv(o);
	rc = client_run(o, wl);
	side_results_to(NULL, NULL);
	if (csv) {
		free(o->output_format);
		o->output_format = csv;
	}
	return rc;
}

int local_run(struct options *o, const struct workload *wl)
{
	struct local l = { 0 };
	struct tracer *both;
	int pfd[2], port, rc, src;

	if (local_probe_outputs(o))
		return EXIT_RUNTIME;
	if (pipe2(pfd, O_CLOEXEC)) {
		log_err("--local: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	both = side_open_both(o, wl);
	fflush(stdout);
	l.pid = fork();
	if (l.pid < 0) {
		log_err("fork: %s", strerror(errno));
		tracer_close(both);
		close(pfd[0]);
		close(pfd[1]);
		return EXIT_RUNTIME;
	}
	if (l.pid == 0) {
		close(pfd[0]);
		run_child(o, wl, pfd[1]);
	}
	server_pid = l.pid;
	close(pfd[1]);
	port = read_port(pfd[0], l.pid);
	if (port < 0) {
		log_err("--local: the server did not start");
		rc = EXIT_RUNTIME;
	} else {
		rc = run_client(&l, o, wl, port);
	}
	if (rc)
		/* The server would wait for a client that will not come. */
		kill(l.pid, SIGTERM);
	l.side[1] = server_results(pfd[0]);
	close(pfd[0]);
	src = reap(l.pid);
	server_pid = 0;
	if (local_write_both(&l, o, !rc && !src))
		rc = EXIT_RUNTIME;
	tracer_close(both);
	local_free(&l);
	return rc ? rc : src;
}
