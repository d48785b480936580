/*
 * The options taken together, once each parsed on its own (options.c):
 * combinations a workload or mode cannot run, hosts that do not
 * resolve, listen addresses that cannot be; each refused with one line
 * naming what was wrong.
 */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "net/metrics_http.h"
#include "config/options.h"
#include "config/options_def.h"
#include "stages.h"
#include "config/workload.h"
#include "workload/seq.h"

static int check_resolves(const struct options *o, const char *name,
			  const char *what, char *err, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int rc;

	hints.ai_family = o->ipv4 ? AF_INET : o->ipv6 ? AF_INET6 : AF_UNSPEC;
	rc = getaddrinfo(name, NULL, &hints, &ai);
	if (rc)
		return opt_fail(err, len, NULL, "option --%s: cannot resolve '%s': %s",
			    what, name, gai_strerror(rc));
	freeaddrinfo(ai);
	return 0;
}

/* --local-host: a list of addresses, each one that resolves. */
static int check_local_hosts(const struct options *o, char *err, size_t len)
{
	char host[NI_MAXHOST];
	const char *p = o->local_host;
	int i;

	for (i = 0; ; i++) {
		const char *end = strchrnul(p, ',');

		if (end == p || (size_t)(end - p) >= sizeof(host))
			return opt_fail(err, len, NULL,
				    "option --local-host: address %d of '%s' is %s",
				    i + 1, o->local_host,
				    end == p ? "empty" : "too long");
		snprintf(host, sizeof(host), "%.*s", (int)(end - p), p);
		if (check_resolves(o, host, "local-host", err, len))
			return -1;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/*
 * udp_rr --burst: responses are told apart by the sequence number they
 * echo, which needs one (not --raw) and room for the window twice over
 * (a late response must not pass for an outstanding request). BPF pairs
 * a UDP response with its request by turn, one in flight: untraced.
 */
#define UDP_MAX_BURST 1024

static int udp_burst_refused(const struct options *o, char *err, size_t len)
{
	size_t n = seq_width(o->request_size, o->response_size);

	if (o->raw)
		return opt_fail(err, len, NULL,
			    "option --burst: udp_rr --raw has no sequence number to tell its responses apart");
	if (o->trace)
		return opt_fail(err, len, NULL,
			    "option --burst: udp_rr --trace times one request in flight per flow");
	if (n < 8 && (uint64_t)o->burst > (1ULL << (8 * n - 1)))
		return opt_fail(err, len, NULL,
			    "option --burst: at most %llu with %zu-byte messages (the sequence number they carry)",
			    1ULL << (8 * n - 1), n);
	/* Each response looks through the flow's outstanding requests. */
	if (o->burst > UDP_MAX_BURST)
		return opt_fail(err, len, NULL,
			    "option --burst: udp_rr keeps at most %d requests in flight per flow",
			    UDP_MAX_BURST);
	return 0;
}

/* Options only per-transaction records can serve: --trace (records). */
static int needs_records(const struct options *o, char *err, size_t len)
{
	const struct {
		const char *name;
		int given;
	} need[] = {
		{ "trace-sched", o->trace_sched },
		{ "timestamping", o->timestamping },
		{ "trace-records", o->trace_records != NULL },
		{ "report", o->report != NULL },
		{ "perfetto", o->perfetto != NULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(need); i++)
		if (need[i].given && o->trace != 1)
			return opt_fail(err, len, NULL,
				    "option --%s: needs --trace (records)",
				    need[i].name);
	return 0;
}

static int check_listen(const char *where, char *err, size_t len)
{
	struct addr a;
	char why[300];

	if (!metrics_http_parse(where, &a, why, sizeof(why)))
		return 0;
	return opt_fail(err, len, NULL, "option --listen: %s", why);
}

int options_validate(struct options *o, char *err, size_t len)
{
	if (strcmp(o->output_format, "kv") && strcmp(o->output_format, "csv") &&
	    strcmp(o->output_format, "human") &&
	    strcmp(o->output_format, "json") &&
	    strcmp(o->output_format, "auto"))
		return opt_fail(err, len, NULL,
			    "option --output-format: '%s' is not kv, csv, human, json or auto",
			    o->output_format);
	if (!strcmp(o->output_format, "auto")) {
		free(o->output_format);
		o->output_format = xstrdup(isatty(STDOUT_FILENO) &&
					   !o->output ? "human" : "kv");
	}
	if (o->clock && strcmp(o->clock, "monotonic") &&
	    strcmp(o->clock, "realtime") && strcmp(o->clock, "tai"))
		return opt_fail(err, len, NULL,
			    "option --clock: '%s' is not monotonic, realtime or tai",
			    o->clock);
	/* TCP_CA_NAME_MAX is 16, with its terminating zero. */
	if (o->congestion && strlen(o->congestion) > 15)
		return opt_fail(err, len, NULL,
			    "option --congestion: '%s' is longer than the kernel's 15 characters",
			    o->congestion);
	if (o->ipv4 && o->ipv6)
		return opt_fail(err, len, NULL,
			    "options --ipv4 and --ipv6 exclude each other");
	if (o->listen && check_listen(o->listen, err, len))
		return -1;
	if ((o->request_data || o->request_file || o->response_end) &&
	    !o->raw)
		return opt_fail(err, len, NULL,
			    "options --request-data/--request-file/--response-end: only with --raw");
	if (o->local && options_given(o, "host"))
		return opt_fail(err, len, NULL,
			    "option --host: not with --local, which runs on loopback (--local-host names the address)");
	if (o->raw && o->local)
		return opt_fail(err, len, NULL,
			    "option --raw: a client of another server, not with --local");
	if (o->raw && o->auth_key)
		return opt_fail(err, len, NULL,
			    "option --auth-key: --raw has no control connection to prove it on");
	if (o->raw && o->trace && !options_given(o, "response_size") &&
	    o->workload != W_UDP_RR)
		return opt_fail(err, len, NULL,
			    "option --raw: --trace over TCP numbers messages by size: give -R (--response-end beside it checks each response's end)");
	if (o->workload == W_OBSERVE && (!options_given(o, "port") ||
					 !o->port))
		return opt_fail(err, len, NULL,
			    "observe: --port PORT names the server to observe");
	if (o->workload == W_OBSERVE) {
		/* Traced by definition, with one reader standing for all. */
		o->trace = 1;
		o->num_threads = o->num_flows = 1;
	}
	if (o->raw)
		o->client = 1;
	if (o->local)
		o->client = 1;
	if (o->client && !o->local && !o->host)
		return opt_fail(err, len, NULL, "option --host: needed with --client");
	if (o->client && !o->local && (!o->control_port || !o->port))
		return opt_fail(err, len, NULL,
			    "option --control-port/--port: 0 is only valid for a server");
	if (o->io_mode == IO_BLOCKING &&
	    !(o->workload & (W_TCP_RR | W_TCP_STREAM)))
		return opt_fail(err, len, NULL,
			    "option --io-mode: 'blocking' is only for tcp_rr and tcp_stream");
	if (o->io_mode == IO_SPIN && o->workload != W_TCP_RR)
		return opt_fail(err, len, NULL,
			    "option --io-mode: 'spin' is only for tcp_rr");
	if (io_thread_per_flow(o->io_mode) && o->edge_trigger)
		return opt_fail(err, len, NULL,
			    "option --io-mode: '%s' uses no epoll, so no --edge-trigger",
			    io_mode_name(o->io_mode));
	if (io_thread_per_flow(o->io_mode) && o->client &&
	    o->num_flows > o->num_threads)
		return opt_fail(err, len, NULL,
			    "option --io-mode: '%s' needs --num-threads >= --num-flows (%d < %d)",
			    io_mode_name(o->io_mode), o->num_threads,
			    o->num_flows);
	if (o->workload == W_UDP_RR &&
	    (o->request_size > 65507 || o->response_size > 65507 ||
	     o->buffer_size < o->response_size ||
	     o->buffer_size < o->request_size))
		return opt_fail(err, len, NULL,
			    "udp_rr: --request-size and --response-size are datagrams (<= 65507 bytes, <= --buffer-size)");
	if ((o->workload & W_TCP_RR) && strcmp(o->arrival, "poisson") &&
	    strcmp(o->arrival, "uniform"))
		return opt_fail(err, len, NULL,
			    "option --arrival: '%s' is neither poisson nor uniform",
			    o->arrival);
	if (o->rate > 0 && (o->burst > 1 || io_thread_per_flow(o->io_mode)))
		return opt_fail(err, len, NULL,
			    "option --rate: not with --burst or --io-mode %s",
			    io_mode_name(o->io_mode));
	if (o->burst > 1 && io_thread_per_flow(o->io_mode))
		return opt_fail(err, len, NULL,
			    "option --burst: not with --io-mode %s",
			    io_mode_name(o->io_mode));
	if (o->workload == W_UDP_RR && o->burst > 1 &&
	    udp_burst_refused(o, err, len))
		return -1;
	if (o->burst > NS_MAX_BURST && o->trace)
		return opt_fail(err, len, NULL,
			    "option --burst: --trace times at most %d requests in flight per flow",
			    NS_MAX_BURST);
	if (o->trace_sample > 1 && !o->trace)
		return opt_fail(err, len, NULL,
			    "option --trace-sample: needs --trace");
	if (o->trace_control && (o->trace != 1 || o->trace_sample > 1 ||
				 o->trace_control < 2))
		return opt_fail(err, len, NULL,
			    "option --trace-control: 2 or more, with --trace (records) and without --trace-sample, whose untimed transactions are the control group already");
	/*
	 * A sampled message's predecessor in the sample must be done when
	 * it starts: BPF then knows which of its slots are in use.
	 */
	if (o->trace_sample > 1 && o->trace_sample <= options_inflight(o, 1))
		return opt_fail(err, len, NULL,
			    "option --trace-sample: %d must exceed the requests in flight per flow (%d%s)",
			    o->trace_sample, options_inflight(o, 1),
			    o->rate > 0 ? " with --rate" : ", --burst");
	if ((o->burst > 1 || o->rate > 0) && o->timestamping)
		return opt_fail(err, len, NULL,
			    "option --timestamping: one request in flight (not with --burst or --rate)");
	if (needs_records(o, err, len))
		return -1;
	if (o->host && !o->local &&
	    check_resolves(o, o->host, "host", err, len))
		return -1;
	if (o->local_host && check_local_hosts(o, err, len))
		return -1;
	if (o->client) {
		o->enable_write = 1;
	} else {
		o->enable_read = 1;
	}
	/* A thread that waits in send() cannot read meanwhile. */
	if (o->io_mode == IO_BLOCKING && o->workload == W_TCP_STREAM &&
	    o->enable_read && o->enable_write)
		return opt_fail(err, len, NULL,
			    "option --io-mode: 'blocking' moves a flow's data one way (not --enable-read with --enable-write)");
	return 0;
}
