/*
 * netstage: pick the workload by the name the program was called as
 * (tcp_rr, tcp_stream, udp_stream links) or by its first argument, parse
 * the options, print them, and run as server, client, or both.
 */
#include <libgen.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "control/auth.h"
#include "core/common.h"
#include "stats/cpu.h"
#include "net/net.h"
#include "config/options.h"
#include "core/outfile.h"
#include "sys/privs.h"
#include "version.h"
#include "net/raw.h"
#include "side/report.h"
#include "cmd/run.h"
#include "results/clock_id.h"
#include "script/script.h"
#include "side/side.h"
#include "sys/stop.h"
#include "config/workload.h"
#include "trace/tracer.h"

static void usage_all(FILE *f)
{
	fprintf(f,
		"usage: netstage WORKLOAD [options]   (WORKLOAD: %s)\n"
		"       netstage WORKLOAD --help      options of a workload\n"
		"       netstage observe --port PORT  time another server's requests\n"
		"       netstage join CLIENT.csv [NAME=]HOP.csv ...  join records on one clock\n"
		"       netstage merge RESULT.json RESULT.json ...   many runs' results as one\n"
		"       netstage compare A.json B.json | A.json... vs B.json...  B against A, beyond noise or not\n"
		"       netstage --version\n"
		"       netstage --man                the man page (roff)\n"
		"  e.g. netstage tcp_rr --local -l 5\n",
		workload_names());
}

/* What built it, what it runs with, and what the kernel offers it. */
static void print_version(FILE *f)
{
	fprintf(f, "netstage %s\nlibbpf %s, %s\n", NETSTAGE_VERSION,
		libbpf_version_string(), script_lua_version());
	tracer_kernel_features(f);
}

static void on_alarm(int sig)
{
	static const char msg[] = "netstage: --suicide-length reached\n";

	(void)sig;
	local_stop_server();
	out_remove_temps();
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_RUNTIME);
	_exit(EXIT_RUNTIME);
}

static const struct workload *pick(int *argc, char ***argv)
{
	const char *prog = basename((*argv)[0]);
	const struct workload *wl;

	/* make install's links: netstage-tcp_rr, or tcp_rr bare. */
	if (!strncmp(prog, "netstage-", 9))
		prog += 9;
	wl = workload_find(prog);

	if (wl && !(*argc >= 2 && !strcmp((*argv)[1], "--version")))
		return wl;
	if (*argc >= 2 && !strcmp((*argv)[1], "--version")) {
		print_version(stdout);
		exit(0);
	}
	/* What `make install` builds the man page from. */
	if (*argc >= 2 && !strcmp((*argv)[1], "--man")) {
		options_man(stdout);
		exit(0);
	}
	if (*argc < 2 || !strcmp((*argv)[1], "--help") ||
	    !strcmp((*argv)[1], "-h")) {
		usage_all(*argc < 2 ? stderr : stdout);
		exit(*argc < 2 ? EXIT_USAGE : 0);
	}
	wl = workload_find((*argv)[1]);
	if (!wl) {
		log_err("unknown workload '%s' (one of: %s)", (*argv)[1],
			workload_names());
		exit(EXIT_USAGE);
	}
	(*argc)--;
	(*argv)++;
	return wl;
}

/* --raw: the request and where a response ends, from the options. */
static int raw_spec(struct options *o, char *err, size_t len)
{
	if (!o->raw)
		return 0;
	o->raw_spec = xcalloc(1, sizeof(*o->raw_spec));
	if (raw_spec_init(o->raw_spec, o, options_given(o, "response_size"),
			  err, len))
		return -1;
	/* What the engines and the tracer size requests by. */
	o->request_size = o->raw_spec->req_len;
	return 0;
}

/* --auth-key: the key, read once for every connection of the run. */
static int auth_spec(struct options *o, char *err, size_t len)
{
	if (!o->auth_key)
		return 0;
	o->auth = auth_load(o->auth_key, err, len);
	return o->auth ? 0 : -1;
}

static void free_options(struct options *o)
{
	auth_free(o->auth);
	o->auth = NULL;
	if (o->raw_spec)
		raw_spec_free(o->raw_spec);
	free(o->raw_spec);
	o->raw_spec = NULL;
	options_free(o);
}

/*
 * Spinning threads that share a CPU wait for each other's time slices:
 * milliseconds a transaction. Say so before the figures do.
 */
static void check_spinners(const struct options *o)
{
	int per_side = o->num_threads, spinners, cpus = cpu_allowed();

	if (o->io_mode != IO_BUSY && o->io_mode != IO_SPIN)
		return;
	if (o->io_mode == IO_SPIN && o->num_flows < per_side)
		per_side = o->num_flows;	/* the rest have no flow */
	spinners = per_side * (o->local ? 2 : 1);
	if (spinners > cpus)
		log_err("--io-mode=%s: %d spinning threads on %d CPU%s: each waits for the others' time slices",
			io_mode_name(o->io_mode), spinners, cpus,
			cpus == 1 ? "" : "s");
}

static int run(struct options *o, const struct workload *wl)
{
	if (o->local || client_joins_server(o))
		snprintf(o->prefix, sizeof(o->prefix), "client.");
	/*
	 * --local and a client print their options once the server named
	 * its data port, observe once it observes (what could not start is
	 * one line).
	 */
	if ((!o->local && wl->bit != W_OBSERVE && (!o->client || o->raw)) ||
	    o->dry_run)
		options_print(o, wl->name);
	if (o->dry_run)
		return 0;
	check_spinners(o);
	install_signal_handlers();
	if (o->suicide_length) {
		signal(SIGALRM, on_alarm);
		alarm(o->suicide_length);
	}
	if (o->local)
		return local_run(o, wl);
	if (wl->bit == W_OBSERVE)
		return observe_run(o, wl);
	if (!o->client)
		log_set_role("netstage server");
	return o->client ? client_run(o, wl) : server_run(o, wl);
}

int main(int argc, char **argv)
{
	const struct workload *wl;
	struct clock_skew skew;
	struct options o;
	char err[320];
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "join") ||
			 !strcmp(argv[1], "merge") ||
			 !strcmp(argv[1], "compare"))) {
		/* They read files only: they need no right at all. */
		if (privs_none(err, sizeof(err))) {
			log_err("%s", err);
			return EXIT_RUNTIME;
		}
		return (argv[1][0] == 'j' ? join_main : argv[1][0] == 'm' ?
			merge_main : compare_main)(argc - 1, argv + 1);
	}
	wl = pick(&argc, &argv);

	if (options_parse(&o, wl->bit, argc, argv, err, sizeof(err))) {
		log_err("%s", err);
		options_free(&o);
		return EXIT_USAGE;
	}
	if (o.help) {
		options_usage(wl->bit, wl->name);
		options_free(&o);
		return 0;
	}
	/* Files the options name are read with the rights that are left. */
	if (privs_start(&o, wl, err, sizeof(err))) {
		log_err("%s", err);
		options_free(&o);
		return EXIT_RUNTIME;
	}
	if (options_validate(&o, err, sizeof(err)) ||
	    raw_spec(&o, err, sizeof(err)) ||
	    auth_spec(&o, err, sizeof(err)) ||
	    report_check_keys(&o, wl, err, sizeof(err)) ||
	    net_check_congestion(&o, err, sizeof(err)) ||
	    clock_skew_from_env(&skew, err, sizeof(err))) {
		log_err("%s", err);
		free_options(&o);
		return EXIT_USAGE;
	}
	log_enable_info(o.logtostderr);
	rc = o.script ? script_main(&o, wl, run) : run(&o, wl);
	free_options(&o);
	return rc;
}
