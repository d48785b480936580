#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "config/options.h"
#include "stages.h"
#include "version.h"
#include "config/options_def.h"

_Static_assert(!(W_EVERY & OPT_TRACED_RESULT), "a workload bit");

#define O(f) offsetof(struct options, f)

static const struct opt_def defs[] = {
	{ "client", 'c', T_BOOL, O(client), W_ALL, NULL, 0, 0,
	  "run as the client (default: server)" },
	{ "host", 'H', T_STR, O(host), W_ALL, NULL, 0, 0,
	  "server host name or address (client)" },
	{ "local_host", 'L', T_STR, O(local_host), W_ALL, NULL, 0, 0,
	  "local address to bind to; a comma-separated list spreads the client's flows over them" },
	{ "control_port", 'C', T_INT, O(control_port), W_ALL, "12866", 0,
	  65535, "control connection port" },
	{ "port", 'P', T_INT, O(port), W_ALL, "12867", 0, 65535,
	  "data port" },
	{ "port", 'P', T_INT, O(port), W_OBSERVE, NULL, 1, 65535,
	  "TCP port of the server to observe (needed)" },
	{ "ipv4", '4', T_BOOL, O(ipv4), W_EVERY, NULL, 0, 0,
	  "use IPv4 only" },
	{ "ipv6", '6', T_BOOL, O(ipv6), W_EVERY, NULL, 0, 0,
	  "use IPv6 only" },
	{ "maxevents", 0, T_INT, O(maxevents), W_ALL, "1000", 1, 1 << 20,
	  "events per epoll_wait() call" },
	{ "num_flows", 'F', T_INT, O(num_flows), W_ALL, "1", 1, 1 << 20,
	  "total number of flows (connections)" },
	{ "num_threads", 'T', T_INT, O(num_threads), W_ALL, "1", 1, 4096,
	  "number of worker threads" },
	{ "num_clients", 0, T_INT, O(num_clients), W_ALL, "1", 1, 1024,
	  "clients a server waits for before starting" },
	{ "test_length", 'l', T_INT, O(test_length), W_EVERY, "10", 1,
	  1000000, "test length in seconds" },
	{ "pin_cpu", 'U', T_BOOL, O(pin_cpu), W_ALL, NULL, 0, 0,
	  "pin worker thread i to CPU i modulo the CPU count" },
	{ "dry_run", 'n', T_BOOL, O(dry_run), W_EVERY, NULL, 0, 0,
	  "print the options and exit" },
	{ "logtostderr", 0, T_BOOL, O(logtostderr), W_EVERY, NULL, 0, 0,
	  "log progress of set-up and tear-down to stderr" },
	{ "nonblocking", 0, T_BOOL, O(nonblocking), W_ALL, NULL, 0, 0,
	  "make every data socket non-blocking (rr; stream always is)" },
	{ "edge_trigger", 'E', T_BOOL, O(edge_trigger), W_ALL, NULL, 0, 0,
	  "edge-triggered epoll" },
	{ "epoll_trigger", 0, T_TRIGGER, O(edge_trigger), W_ALL, NULL, 0, 0,
	  "epoll trigger: level or edge" },
	{ "io_mode", 0, T_IOMODE, O(io_mode), W_ALL, "epoll", 0, 0,
	  "epoll; busy (epoll that never sleeps); blocking (tcp_rr, tcp_stream) or spin (tcp_rr): one flow per thread" },
	{ "busy_poll", 0, T_INT, O(busy_poll), W_ALL, "0", 0, 1000000,
	  "us the kernel busy-polls the device before recv or epoll_wait sleeps (SO_BUSY_POLL, EPIOCSPARAMS; NAPI devices, not loopback)" },
	{ "delay", 'D', T_DELAY, O(delay), W_ALL, "0", 0, 0,
	  "delay between sends: ns, or with suffix ns/us/ms/s" },
	{ "work", 0, T_DELAY, O(work), W_TCP_RR | W_TCP_CRR, "0", 0, 0,
	  "server: spin this long before each answer, as a server computing it would (its app stage; --delay sleeps instead): ns, or with suffix ns/us/ms/s" },
	{ "auth_key", 0, T_STR, O(auth_key), W_ALL, NULL, 0, 0,
	  "pre-shared key FILE: the server challenges each client to prove it (HMAC-SHA-256); both sides need it" },
	{ "magic", 'M', T_INT, O(magic), W_ALL, "42", INT_MIN, INT_MAX,
	  "a number both sides must give, sent in clear: keeps tests apart (--auth-key keeps strangers out)" },
	{ "suicide_length", 's', T_INT, O(suicide_length), W_EVERY, "0", 0,
	  1000000, "exit after this many seconds whatever happens (0: off)" },
	{ "debug", 'd', T_BOOL, O(debug), W_ALL, NULL, 0, 0,
	  "set SO_DEBUG on data sockets" },
	{ "all_samples", 'A', T_OPTSTR, O(all_samples), W_EVERY, "samples.csv",
	  0, 0, "write per-interval, per-flow samples (CSV) to FILE" },
	{ "interval", 'I', T_DOUBLE, O(interval), W_EVERY, "1.0", 0, 0,
	  "seconds between samples" },
	{ "percentiles", 'p', T_PCT, O(percentiles), W_RR | W_OBSERVE, NULL, 0, 0,
	  "latency percentiles for samples.csv and results (list)" },
	{ "json", 'J', T_STR, O(json), W_EVERY, NULL, 0, 0,
	  "write options and results as JSON to FILE" },
	{ "output", 'o', T_STR, O(output), W_EVERY, NULL, 0, 0,
	  "print only these result keys (comma-separated), no options" },
	{ "output_format", 0, T_STR, O(output_format), W_EVERY, "auto", 0, 0,
	  "kv, csv, human or json; auto: human on a terminal (without -o), else kv" },
	{ "iterations", 'i', T_ITER, O(iter_min), W_ALL, "1,1", 0, 0,
	  "MIN,MAX: repeat the test until --confidence is met (netperf -i, whose MAX,MIN order is taken too)" },
	{ "confidence", 0, T_CONF, O(conf_level), W_ALL, "99,5", 0, 0,
	  "LEVEL,WIDTH: 95 or 99, interval width in % of the mean (netperf -I)" },
	{ "quiet", 'q', T_BOOL, O(quiet), W_EVERY, NULL, 0, 0,
	  "no progress line per interval on stderr" },
	{ "local", 0, T_BOOL, O(local), W_ALL, NULL, 0, 0,
	  "run server and client together on loopback" },
	{ "max_pacing_rate", 'm', T_U64, O(max_pacing_rate), W_ALL, "0", 0, 0,
	  "SO_MAX_PACING_RATE in bytes/s (0: off)" },
	{ "min_rto", 0, T_INT, O(min_rto), W_TCP_RR | W_TCP_CRR | W_TCP_STREAM,
	  "0", 0,
	  120000, "minimum TCP retransmission timeout in ms (0: default)" },
	{ "congestion", 0, T_STR, O(congestion),
	  W_TCP_RR | W_TCP_CRR | W_TCP_STREAM, NULL, 0, 0,
	  "TCP congestion control of the data connections, e.g. cubic (default: the system's)" },
	{ "listen_backlog", 0, T_INT, O(listen_backlog), W_ALL, "4096", 1,
	  65535, "backlog of listen() (the kernel caps it at net.core.somaxconn)" },
	{ "reuseaddr", 'R', T_BOOL, O(reuseaddr), W_STREAM, NULL, 0, 0,
	  "SO_REUSEADDR on listening sockets" },
	{ "reuseaddr", 0, T_BOOL, O(reuseaddr), W_RR, NULL, 0, 0,
	  "SO_REUSEADDR on listening sockets" },
	{ "reuseport", 0, T_BOOL, O(reuseport), W_ALL, NULL, 0, 0,
	  "SO_REUSEPORT on listening sockets" },
	{ "request_size", 'Q', T_INT, O(request_size), W_RR, "1", 1,
	  64 << 20, "bytes in a request" },
	{ "response_size", 'R', T_INT, O(response_size), W_RR, "1", 1,
	  64 << 20, "bytes in a response" },
	{ "burst", 0, T_INT, O(burst), W_TCP_RR | W_UDP_RR, "1", 1, 65536,
	  "requests outstanding per flow (netperf --enable-burst; traced: <= 31; udp_rr: untraced)" },
	{ "rate", 0, T_RATE, O(rate), W_TCP_RR, "0", 0, 0,
	  "open loop: send requests at this rate (all flows, per s; 0: off; traced: <= 31 in flight per flow)" },
	{ "arrival", 0, T_STR, O(arrival), W_TCP_RR, "poisson", 0, 0,
	  "open loop inter-arrival: poisson or uniform" },
	{ "rr_timeout", 0, T_INT, O(rr_timeout), W_UDP_RR, "100", 1, 60000,
	  "ms without a response before a request counts as lost" },
	{ "rr_timeout", 0, T_INT, O(rr_timeout), W_TCP_RR | W_TCP_CRR, "1000",
	  1, 60000,
	  "--raw: ms without the whole response before the server counts as silent" },
	{ "raw", 0, T_BOOL, O(raw), W_RR, NULL, 0, 0,
	  "client for any server: no control connection, flows connect to --host/--port (docs/real-servers.md)" },
	{ "request_data", 0, T_STR, O(request_data), W_RR, NULL, 0, 0,
	  "--raw: the request, with C escapes (\\r \\n \\t \\\\ \\0 \\xHH)" },
	{ "request_file", 0, T_STR, O(request_file), W_RR, NULL, 0, 0,
	  "--raw: the request is this file's bytes" },
	{ "response_end", 0, T_STR, O(response_end), W_TCP_RR | W_TCP_CRR,
	  NULL, 0, 0,
	  "--raw: a response ends with this string (C escapes), instead of -R bytes" },
	{ "buffer_size", 'B', T_INT, O(buffer_size), W_RR, "65536", 1,
	  64 << 20, "bytes per send()/recv() at most" },
	{ "buffer_size", 'B', T_INT, O(buffer_size), W_TCP_STREAM, "16384", 1,
	  64 << 20, "bytes per send()/recv()" },
	{ "buffer_size", 'B', T_INT, O(buffer_size), W_UDP_STREAM, "1400", 1,
	  65507, "bytes per datagram" },
	{ "read_size", 0, T_INT, O(read_size), W_TCP_STREAM, "0", 0, 64 << 20,
	  "bytes per recv() at most on the reading end (netperf -M); 0: --buffer-size" },
	{ "enable_read", 'r', T_BOOL, O(enable_read), W_STREAM, NULL, 0, 0,
	  "read from flows (on by default for the server)" },
	{ "enable_write", 'w', T_BOOL, O(enable_write), W_STREAM, NULL, 0, 0,
	  "write to flows (on by default for the client)" },
	{ "trace", 0, T_TRACE, O(trace), W_RR, NULL, 0, 0,
	  "time each transaction by kernel stage (eBPF): records, or hist (cheaper, kernel stages only)" },
	{ "trace_records", 0, T_STR, O(trace_records), W_RR | W_OBSERVE, NULL, 0, 0,
	  "write every traced transaction's boundaries (CSV) to FILE" },
	{ "report", 0, T_STR, O(report), W_RR, NULL, 0, 0,
	  "write an HTML report of the traced run (waterfall, histograms, time, slowest) to FILE" },
	{ "perfetto", 0, T_STR, O(perfetto), W_RR, NULL, 0, 0,
	  "write the kept traced transactions as a Perfetto / Chrome trace (JSON) to FILE" },
	{ "perfetto_every", 0, T_INT, O(perfetto_every), W_RR, "16", 1,
	  1 << 20,
	  "--perfetto: every transaction above its side's p99, and 1 in N of the rest of each flow (1: all)" },
	{ "clock", 0, T_STR, O(clock), W_RR, "monotonic", 0, 0,
	  "a traced client on two hosts: monotonic (align the server's clock by the traffic), or realtime or tai (the hosts' clocks agree, by PTP say: compare on that one; the fit checks it)" },
	{ "trace_max_records", 0, T_INT, O(trace_max_records), W_RR | W_OBSERVE,
	  "100000", 0, 100000000,
	  "traced transactions kept at most, for --trace-records and scripts" },
	{ "trace_sample", 0, T_INT, O(trace_sample),
	  W_TCP_RR | W_UDP_RR | OPT_TRACED_RESULT, "1", 1,
	  1 << 30,
	  "with --trace: time one transaction in N per flow (those whose number is a multiple of N); the others cost BPF one lookup per event" },
	{ "trace_control", 0, T_INT, O(trace_control),
	  W_TCP_RR | W_UDP_RR | OPT_TRACED_RESULT, "0", 0, 1 << 20,
	  "with --trace: leave each flow's transactions untimed in one window of 64 in N, a control group that measures what timing costs in the run (0: none)" },
	{ "trace_sched", 0, T_BOOL, O(trace_sched), W_RR | W_OBSERVE, NULL, 0, 0,
	  "with --trace: split wakeup into busy, wake_call, runq and to_user (sched_wakeup, sched_switch), and name what held the CPU" },
	{ "timestamping", 0, T_BOOL, O(timestamping), W_TCP_RR, NULL, 0, 0,
	  "with --trace: add the kernel's SO_TIMESTAMPING software stamps to each record" },
	{ "hook_timeout", 0, T_INT, O(hook_timeout), W_EVERY, "2000", 0,
	  3600000,
	  "ms a --script hook may run before the run fails naming it (0: no limit)" },
	{ "script", 'S', T_STR, O(script), W_EVERY, NULL, 0, 0,
	  "run the Lua script FILE: hooks, run(), analysis (docs/script-api.md)" },
	{ "pid", 0, T_INT, O(pid), W_OBSERVE, "0", 0, 1 << 30,
	  "the server's process id (default: whichever listens on --port)" },
	{ "listen", 0, T_STR, O(listen), W_OBSERVE, NULL, 0, 0,
	  "serve /metrics (OpenMetrics: stage histograms) for Prometheus on ADDR:PORT, and run until stopped unless -l is given" },
	{ "help", 'h', T_BOOL, O(help), W_EVERY, NULL, 0, 0,
	  "show this help" },
};


void opt_dashed(char *dst, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		dst[i] = name[i] == '_' ? '-' : name[i];
	dst[i] = '\0';
}



_Static_assert(ARRAY_SIZE(defs) <= OPT_MAX, "the getopt tables hold it");
_Static_assert(OPT_MAX <= 64 * ARRAY_SIZE(((struct options *)0)->given),
	       "options.given has a bit per table entry");

int options_inflight(const struct options *o, int traced)
{
	if (o->rate <= 0)
		return o->burst > 0 ? o->burst : 1;
	return traced ? NS_MAX_BURST : OPEN_INFLIGHT;
}

int options_given(const struct options *o, const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defs); i++)
		if (!strcmp(defs[i].name, name) &&
		    (o->given[i / 64] >> (i % 64) & 1))
			return 1;
	return 0;
}

void options_free(struct options *o)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		const struct opt_def *d = &defs[i];

		if (d->type == T_STR || d->type == T_OPTSTR) {
			free(*FIELD(o, d, char *));
			*FIELD(o, d, char *) = NULL;
		}
	}
}

static void dump_one(const struct options *o, const struct opt_def *d,
		     struct kv_list *out)
{
	char buf[MAX_PERCENTILES * 12 + 1] = "";
	const struct percentiles *p;
	int i;

	switch (d->type) {
	case T_BOOL:
	case T_INT:
		kv_int(out, d->name, *FIELD(o, d, int));
		break;
	case T_TRIGGER:
		kv_str(out, d->name, *FIELD(o, d, int) ? "edge" : "level");
		break;
	case T_TRACE:
		kv_str(out, d->name, (const char *[]){ "off", "records",
			   "hist" }[*FIELD(o, d, int)]);
		break;
	case T_ITER:
		snprintf(buf, sizeof(buf), "%d,%d", o->iter_min, o->iter_max);
		kv_str(out, d->name, buf);
		break;
	case T_CONF:
		snprintf(buf, sizeof(buf), "%d,%g", o->conf_level, o->conf_width);
		kv_str(out, d->name, buf);
		break;
	case T_IOMODE:
		kv_str(out, d->name, opt_io_modes[*FIELD(o, d, enum io_mode)]);
		break;
	case T_U64:
	case T_DELAY:
		kv_uint(out, d->name, *FIELD(o, d, uint64_t));
		break;
	case T_DOUBLE:
	case T_RATE:
		kv_num(out, d->name, *FIELD(o, d, double), 6);
		break;
	case T_STR:
	case T_OPTSTR:
		kv_str(out, d->name, *FIELD(o, d, char *));
		break;
	case T_PCT:
		p = FIELD(o, d, struct percentiles);
		for (i = 0; i < p->n; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 "%s%g", i ? "," : "", p->p[i]);
		kv_str(out, d->name, buf);
		break;
	}
}

/* The workload's options, but those with an OPT_ flag of `skip`. */
static void dump_but(const struct options *o, unsigned int skip,
		     struct kv_list *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defs); i++)
		if ((defs[i].mask & o->workload) && !(defs[i].mask & skip))
			dump_one(o, &defs[i], out);
	kv_int(out, "total_run_time", o->test_length);
}

void options_dump(const struct options *o, struct kv_list *out)
{
	dump_but(o, 0, out);
}

int options_header_shown(const struct options *o)
{
	return o->dry_run || !(o->output || glance_on(o) ||
			       !strcmp(o->output_format, "json") ||
			       !strcmp(o->output_format, "csv"));
}

void options_header(const struct options *o, const char *workload,
		    struct kv_list *out)
{
	/* -o: the selected results are the whole output; a person at a
	 * terminal sees the summary (glance.h); JSON holds the options, CSV is
	 * one table of results. */
	if (!options_header_shown(o))
		return;

	kv_str(out, "workload", workload);
	kv_str(out, "version", NETSTAGE_VERSION);
	dump_but(o, o->trace ? OPT_TRACED_RESULT : 0, out);
}

void options_print(const struct options *o, const char *workload)
{
	struct kv_list kv = { 0 };

	options_header(o, workload, &kv);
	kv_print(&kv, stdout, o->prefix);
	fflush(stdout);
	kv_free(&kv);
}

const struct opt_def *options_defs(size_t *n)
{
	*n = ARRAY_SIZE(defs);
	return defs;
}

/* Indexed by enum io_mode. */
const char *const opt_io_modes[4] = { "epoll", "blocking", "busy", "spin" };

const char *io_mode_name(enum io_mode m)
{
	return opt_io_modes[m];
}

const char *options_workload_name(unsigned int bit)
{
	switch (bit) {
	case W_TCP_RR: return "tcp_rr";
	case W_TCP_STREAM: return "tcp_stream";
	case W_UDP_STREAM: return "udp_stream";
	case W_TCP_CRR: return "tcp_crr";
	case W_UDP_RR: return "udp_rr";
	case W_OBSERVE: return "observe";
	}
	return NULL;
}
