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

#include "common.h"
#include "options.h"
#include "stages.h"
#include "version.h"
#include "workload.h"

enum opt_type {
	T_BOOL,		/* no argument: sets 1 */
	T_INT,		/* int within [min, max] */
	T_U64,		/* unsigned 64-bit */
	T_DOUBLE,	/* > 0 */
	T_STR,
	T_OPTSTR,	/* optional argument; bare flag takes defval */
	T_PCT,		/* percentile list */
	T_TRIGGER,	/* level|edge into an int */
	T_IOMODE,
	T_DELAY,	/* duration: ns, or with ns/us/ms/s suffix */
	T_TRACE,	/* optional argument: records */
	T_RATE,		/* double >= 0 */
	T_ITER,		/* MIN,MAX into two ints */
	T_CONF,		/* LEVEL,WIDTH into an int and a double */
};

struct opt_def {
	const char *name;
	char shortopt;
	enum opt_type type;
	size_t off;
	unsigned int mask;	/* the workloads it applies to, OPT_ flags */
	const char *defval;	/* parsed like user input at start-up */
	long long min, max;
	const char *usage;
};

/*
 * Not a workload: a traced run's results print the value in effect
 * (trace/summary.h), so the key=value options leave it out then: one
 * line, not two. JSON keeps both, each in its own object.
 */
#define OPT_TRACED_RESULT (1u << 31)
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
	  "MIN,MAX: repeat the test until --confidence is met (netperf -i)" },
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

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->off))

static void dashed(char *dst, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		dst[i] = name[i] == '_' ? '-' : name[i];
	dst[i] = '\0';
}

static int fail(char *err, size_t len, const struct opt_def *d,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, const struct opt_def *d,
		const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d) {
		char name[40];

		dashed(name, sizeof(name), d->name);
		snprintf(err, len, "option --%s: %s", name, msg);
	}
	else
		snprintf(err, len, "%s", msg);
	return -1;
}


/* A decimal number, nothing before or after it (strtod takes hex too). */
static int parse_decimal(const char *s, double *out)
{
	char *end;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	if (strpbrk(s, "xXpP"))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

int percentiles_parse(struct percentiles *p, const char *s)
{
	char *copy = xstrdup(s), *rest = copy, *tok;
	int rc = 0;
	double v;

	p->n = 0;
	/* strsep, not strtok: an empty item ("50,,99", ",") is an error. */
	while ((tok = strsep(&rest, ",")) != NULL) {
		if (parse_decimal(tok, &v) || v > 100 ||
		    p->n == MAX_PERCENTILES) {
			rc = -1;
			break;
		}
		p->p[p->n++] = v;
	}
	free(copy);
	return rc;
}

/* A decimal integer: no octal, no hex, no sign but '-', no overflow. */
static int parse_ll(const char *s, long long *out)
{
	char *end;

	if (!isdigit((unsigned char)*s) &&
	    !(*s == '-' && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno || *end) ? -1 : 0;
}

/* "A,B": two decimal integers in [lo, hi]. */
static int parse_pair(const char *s, long long lo, long long hi,
		      long long *a, long long *b)
{
	char *copy = xstrdup(s), *comma = strchr(copy, ',');
	int rc = -1;

	if (comma) {
		*comma = '\0';
		rc = parse_ll(copy, a) || parse_ll(comma + 1, b) ||
		     *a < lo || *a > hi || *b < lo || *b > hi ? -1 : 0;
	}
	free(copy);
	return rc;
}

static int parse_delay(const char *s, uint64_t *out)
{
	static const struct { const char *sfx; uint64_t mul; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", NSEC_PER_SEC },
	};
	char *end;
	double v;
	size_t i;

	if ((!isdigit((unsigned char)*s) && *s != '.') || strpbrk(s, "xXpP"))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].sfx)) {
			if (v * units[i].mul > 1e15)
				return -1;
			*out = (uint64_t)(v * units[i].mul);
			return 0;
		}
	}
	return -1;
}

/* Indexed by enum io_mode. */
static const char *const io_modes[] = { "epoll", "blocking", "busy", "spin" };

const char *io_mode_name(enum io_mode m)
{
	return io_modes[m];
}

static int io_mode_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(io_modes); i++)
		if (!strcmp(name, io_modes[i]))
			return i;
	return -1;
}

static int set_value(struct options *o, const struct opt_def *d,
		     const char *arg, char *err, size_t len)
{
	long long ll;
	double v;

	switch (d->type) {
	case T_BOOL:
		*FIELD(o, d, int) = 1;
		return 0;
	case T_INT:
		if (parse_ll(arg, &ll))
			return fail(err, len, d, "'%s' is not an integer", arg);
		if (ll < d->min || ll > d->max)
			return fail(err, len, d, "%lld is out of range [%lld, %lld]",
				    ll, d->min, d->max);
		*FIELD(o, d, int) = (int)ll;
		return 0;
	case T_U64:
		if (parse_ll(arg, &ll) || ll < 0)
			return fail(err, len, d,
				    "'%s' is not a non-negative integer", arg);
		*FIELD(o, d, uint64_t) = (uint64_t)ll;
		return 0;
	case T_DOUBLE:
		if (parse_decimal(arg, &v) || v < 0.001 || v > 3600)
			return fail(err, len, d,
				    "'%s' is not a number in [0.001, 3600]",
				    arg);
		*FIELD(o, d, double) = v;
		return 0;
	case T_STR:
	case T_OPTSTR:
		if (!arg && d->type == T_OPTSTR)
			arg = d->defval;
		if (!*arg)
			return fail(err, len, d, "empty value");
		free(*FIELD(o, d, char *));
		*FIELD(o, d, char *) = xstrdup(arg);
		return 0;
	case T_PCT:
		if (percentiles_parse(FIELD(o, d, struct percentiles), arg))
			return fail(err, len, d,
				    "'%s' is not a list of up to %d numbers in [0, 100]",
				    arg, MAX_PERCENTILES);
		return 0;
	case T_TRIGGER:
		if (strcmp(arg, "level") && strcmp(arg, "edge"))
			return fail(err, len, d,
				    "'%s' is neither 'level' nor 'edge'", arg);
		*FIELD(o, d, int) = !strcmp(arg, "edge");
		return 0;
	case T_IOMODE:
		ll = io_mode_of(arg);
		if (ll < 0)
			return fail(err, len, d,
				    "'%s' is none of 'epoll', 'blocking', 'busy', 'spin'",
				    arg);
		*FIELD(o, d, enum io_mode) = ll;
		return 0;
	case T_TRACE:
		if (arg && strcmp(arg, "records") && strcmp(arg, "hist"))
			return fail(err, len, d,
				    "'%s' is neither 'records' nor 'hist'", arg);
		*FIELD(o, d, int) = arg && !strcmp(arg, "hist") ? 2 : 1;
		return 0;
	case T_ITER: {
		long long a, b;

		if (parse_pair(arg, 1, 30, &a, &b) || b < a)
			return fail(err, len, d,
				    "'%s' is not MIN,MAX with 1 <= MIN <= MAX <= 30",
				    arg);
		o->iter_min = (int)a;
		o->iter_max = (int)b;
		return 0;
	}
	case T_CONF: {
		const char *comma = strchr(arg, ',');
		long long lvl = 0;
		char lv[8] = "";
		double wd = 0;

		if (comma && comma - arg < (long)sizeof(lv))
			memcpy(lv, arg, comma - arg);
		if (!comma || parse_ll(lv, &lvl) ||
		    parse_decimal(comma + 1, &wd) ||
		    (lvl != 95 && lvl != 99) || !(wd > 0) || wd > 100)
			return fail(err, len, d,
				    "'%s' is not LEVEL,WIDTH with LEVEL 95 or 99 and 0 < WIDTH <= 100",
				    arg);
		o->conf_level = (int)lvl;
		o->conf_width = wd;
		return 0;
	}
	case T_RATE:
		if (parse_decimal(arg, &v) || v > 1e9)
			return fail(err, len, d,
				    "'%s' is not a rate in [0, 1e9] per second",
				    arg);
		*FIELD(o, d, double) = v;
		return 0;
	case T_DELAY:
		if (parse_delay(arg, FIELD(o, d, uint64_t)))
			return fail(err, len, d,
				    "'%s' is not a duration (e.g. 500, 20us, 1ms)",
				    arg);
		return 0;
	}
	return fail(err, len, d, "internal: unknown type");
}

static void set_defaults(struct options *o, unsigned int wl)
{
	char err[256];
	size_t i;

	memset(o, 0, sizeof(*o));
	o->workload = wl;
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		const struct opt_def *d = &defs[i];

		if ((d->mask & wl) && d->defval && d->type != T_OPTSTR &&
		    set_value(o, d, d->defval, err, sizeof(err)))
			abort();	/* a bad table entry is a bug */
	}
}

/* getopt_long wants a table; ours has both spellings of each name. */
struct getopt_tables {
	struct option longopts[2 * ARRAY_SIZE(defs) + 1];
	char names[ARRAY_SIZE(defs)][40];
	char shortopts[3 * ARRAY_SIZE(defs) + 2];
};

static int has_arg(const struct opt_def *d)
{
	if (d->type == T_BOOL)
		return no_argument;
	return d->type == T_OPTSTR || d->type == T_TRACE ? optional_argument
							 : required_argument;
}

static void build_tables(struct getopt_tables *t, unsigned int wl)
{
	size_t i, nl = 0, ns = 0;

	t->shortopts[ns++] = ':';	/* report missing arguments as ':' */
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		const struct opt_def *d = &defs[i];
		int ha = has_arg(d);

		if (!(d->mask & wl))
			continue;
		t->longopts[nl++] = (struct option){ d->name, ha, NULL, 256 + i };
		dashed(t->names[i], sizeof(t->names[i]), d->name);
		if (strcmp(t->names[i], d->name))
			t->longopts[nl++] = (struct option){ t->names[i], ha,
							     NULL, 256 + i };
		if (d->shortopt) {
			t->shortopts[ns++] = d->shortopt;
			if (ha != no_argument)
				t->shortopts[ns++] = ':';
			if (ha == optional_argument)
				t->shortopts[ns++] = ':';
		}
	}
	t->shortopts[ns] = '\0';
	memset(&t->longopts[nl], 0, sizeof(t->longopts[nl]));
}

static const struct opt_def *by_short(int c, unsigned int wl)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defs); i++)
		if (defs[i].shortopt == c && (defs[i].mask & wl))
			return &defs[i];
	return NULL;
}

static int bad_option(int c, char **argv, char *err, size_t len)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return fail(err, len, NULL, "option '%s' needs a value", arg);
	if (optopt && !(arg[0] == '-' && arg[1] == '-'))
		return fail(err, len, NULL, "unknown option '-%c'", optopt);
	/* The name alone: "--bogus=5" is about --bogus. */
	return fail(err, len, NULL, "unknown option '%.*s'",
		    (int)strcspn(arg, "="), arg);
}

int options_parse(struct options *o, unsigned int wl, int argc, char **argv,
		  char *err, size_t len)
{
	struct getopt_tables *t = xcalloc(1, sizeof(*t));
	int c, rc = 0;

	set_defaults(o, wl);
	build_tables(t, wl);
	opterr = 0;
	/*
	 * 0, not 1: glibc then forgets where it was inside a cluster of
	 * short options ("-xyz") of an earlier parse that stopped there,
	 * which would point into that parse's (freed) arguments.
	 */
	optind = 0;
	while ((c = getopt_long(argc, argv, t->shortopts, t->longopts,
				NULL)) != -1) {
		const struct opt_def *d;

		if (c == '?' || c == ':') {
			rc = bad_option(c, argv, err, len);
			break;
		}
		d = c >= 256 ? &defs[c - 256] : by_short(c, wl);
		o->given[(d - defs) / 64] |= 1ULL << ((d - defs) % 64);
		rc = set_value(o, d, optarg, err, len);
		if (rc)
			break;
	}
	if (!rc && optind < argc)
		rc = fail(err, len, NULL, "unexpected argument '%s'",
			  argv[optind]);
	free(t);
	return rc;
}

_Static_assert(ARRAY_SIZE(defs) <=
	       64 * ARRAY_SIZE(((struct options *)0)->given),
	       "options.given has a bit per table entry");

int options_inflight(const struct options *o, int traced)
{
	if (o->rate <= 0)
		return o->burst;
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
		kv_str(out, d->name, io_modes[*FIELD(o, d, enum io_mode)]);
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

void options_header(const struct options *o, const char *workload,
		    struct kv_list *out)
{
	/* -o: the selected results are the whole output; a person at a
	 * terminal sees the summary (glance.h); JSON holds the options, CSV is
	 * one table of results. */
	if ((o->output || glance_on(o) || !strcmp(o->output_format, "json") ||
	     !strcmp(o->output_format, "csv")) && !o->dry_run)
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

/* Text for roff: backslashes, minus signs and leading dots escaped. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void man_option(FILE *f, const struct opt_def *d)
{
	char longname[40];
	unsigned int bit;
	int first = 1;

	dashed(longname, sizeof(longname), d->name);
	fputs(".TP\n", f);
	if (d->shortopt)
		fprintf(f, "\\fB\\-%c\\fR, ", d->shortopt);
	fputs("\\fB\\-\\-", f);
	roff(f, longname);
	fputs(d->type == T_BOOL ? "\\fR" : d->type == T_OPTSTR ?
	      "\\fR[=\\fIFILE\\fR]" : d->type == T_TRACE ?
	      "\\fR[=\\fIMODE\\fR]" : "\\fR \\fIVALUE\\fR", f);
	fputc('\n', f);
	roff(f, d->usage);
	if (d->defval) {
		fputs(" [default: ", f);
		roff(f, d->defval);
		fputc(']', f);
	}
	fputs(".\nWorkloads: ", f);
	for (bit = 1; bit <= W_OBSERVE; bit <<= 1)
		if ((d->mask & bit) && workload_by_bit(bit)) {
			fprintf(f, "%s", first ? "" : ", ");
			roff(f, workload_by_bit(bit)->name);
			first = 0;
		}
	fputs(".\n", f);
}

void options_man(FILE *f)
{
	size_t i;

	fprintf(f, ".TH NETSTAGE 1 \"\" \"netstage %s\" \"User Commands\"\n",
		NETSTAGE_VERSION);
	fputs(".SH NAME\nnetstage \\- where the time of a request goes: a "
	      "network micro\\-benchmark that times each transaction "
	      "through the kernel\n"
	      ".SH SYNOPSIS\n.B netstage\n.I workload\n[\\fIoptions\\fR]"
	      "\n.br\n.B netstage observe \\-\\-port\n.I PORT\n"
	      "[\\fIoptions\\fR]\n.br\n.B netstage join\n"
	      ".I CLIENT.csv HOP.csv ...\n.br\n"
	      ".BR tcp_rr \" | \" tcp_crr \" | \" udp_rr \" | \" tcp_stream "
	      "\" | \" udp_stream\n[\\fIoptions\\fR]\n"
	      ".SH DESCRIPTION\nA multi\\-threaded epoll client and server "
	      "generate request/response and bulk traffic and report "
	      "throughput, latency percentiles and CPU use, as neper and "
	      "netperf do. With \\fB\\-\\-trace\\fR, eBPF programs time "
	      "every tcp_rr, tcp_crr and udp_rr transaction at each kernel "
	      "stage; under \\fB\\-\\-local\\fR one waterfall nests the "
	      "server's stages inside the client's time on the wire.\n"
	      ".PP\nOn a terminal the results are a summary; piped, they are "
	      "key=value lines (\\fB\\-\\-output\\-format\\fR).\n"
	      ".SH OPTIONS\n", f);
	for (i = 0; i < ARRAY_SIZE(defs); i++)
		man_option(f, &defs[i]);
	fputs(".SH EXIT STATUS\n0: the test ran; 1: it failed at run time; "
	      "2: bad usage, said in one line.\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\nSUDO_UID, SUDO_GID, SUDO_USER\n"
	      "Set by sudo(8): a netstage run as root by sudo becomes this "
	      "user and group, with the user's groups, once it has kept the "
	      "capabilities it needs.\n"
	      ".SH SECURITY\n"
	      "Only loading BPF needs root (CAP_BPF, CAP_PERFMON). A "
	      "privileged netstage keeps only the capabilities its options "
	      "need from start-up, sets no_new_privs, and drops those of "
	      "loading once its programs are loaded; a helper process keeps "
	      "CAP_SYS_ADMIN alone, for kernel.bpf_stats. The project's "
	      "docs/usage.md, \\(lqPrivileges\\(rq, says what runs with which "
	      "rights.\n"
	      ".SH EXAMPLES\n.nf\nnetstage tcp_rr \\-\\-local \\-l 5 "
	      "\\-\\-trace \\-\\-report run.html\n"
	      "tcp_rr \\-F 10 \\-T 2                  # server\n"
	      "tcp_rr \\-c \\-H server \\-F 10 \\-l 30   # client\n.fi\n"
	      ".SH SEE ALSO\nnetperf(1), iperf3(1), sockperf(1), bpftrace(8)\n",
	      f);
}

void options_usage(unsigned int wl, const char *name)
{
	size_t i;

	printf("usage: %s [options]\n\n", name);
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		const struct opt_def *d = &defs[i];
		char longname[40], left[64];

		if (!(d->mask & wl))
			continue;
		dashed(longname, sizeof(longname), d->name);
		snprintf(left, sizeof(left), "%c%c%s --%s%s",
			 d->shortopt ? '-' : ' ', d->shortopt ? d->shortopt : ' ',
			 d->shortopt ? "," : " ", longname,
			 d->type == T_BOOL ? "" :
			 d->type == T_OPTSTR ? "[=FILE]" :
			 d->type == T_TRACE ? "[=MODE]" : " VALUE");
		printf("  %-32s %s%s%s%s\n", left, d->usage,
		       d->defval ? " [" : "", d->defval ? d->defval : "",
		       d->defval ? "]" : "");
	}
}
