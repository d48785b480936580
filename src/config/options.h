/*
 * Command-line options: one table of definitions (name, short flag, type,
 * default, range, usage, which workloads take it), parsed and validated
 * in one place and printed back as key=value so every run describes
 * itself.
 */
#ifndef NETSTAGE_OPTIONS_H
#define NETSTAGE_OPTIONS_H

#include <stdint.h>
#include <string.h>

#include "core/kv.h"

/* Workload bits: an option belongs to the workloads in its mask. */
enum {
	W_TCP_RR = 1 << 0,
	W_TCP_STREAM = 1 << 1,
	W_UDP_STREAM = 1 << 2,
	W_TCP_CRR = 1 << 3,
	W_UDP_RR = 1 << 4,
	W_OBSERVE = 1 << 5,	/* `netstage observe`: no traffic of its own */
	W_RR = W_TCP_RR | W_TCP_CRR | W_UDP_RR,
	W_STREAM = W_TCP_STREAM | W_UDP_STREAM,
	W_ALL = W_RR | W_STREAM,
	W_EVERY = W_ALL | W_OBSERVE,	/* every command that runs a side */
};

/*
 * epoll: sleep in epoll_wait; busy: epoll_wait that never sleeps; the
 * thread-per-flow ping-pongs: blocking (sleeps in recv) and spin
 * (non-blocking recv until the answer is there).
 */
enum io_mode { IO_EPOLL, IO_BLOCKING, IO_BUSY, IO_SPIN };

const char *io_mode_name(enum io_mode m);

/* The modes where each thread owns one flow and runs its own loop. */
static inline int io_thread_per_flow(enum io_mode m)
{
	return m == IO_BLOCKING || m == IO_SPIN;
}

#define MAX_PERCENTILES 32

struct percentiles {
	int n;
	double p[MAX_PERCENTILES];
};

struct options {
	/* connectivity */
	int client;
	char *host;
	char *local_host;
	int control_port;
	int port;
	int ipv4;
	int ipv6;
	/* workload */
	int maxevents;
	int num_flows;
	int num_threads;
	int num_clients;
	int test_length;
	int pin_cpu;
	int dry_run;
	int logtostderr;
	int nonblocking;
	int edge_trigger;
	enum io_mode io_mode;
	int busy_poll;		/* us: SO_BUSY_POLL, epoll busy polling */
	uint64_t delay;		/* ns between sends */
	uint64_t work;		/* ns a server spins before each answer */
	int magic;
	int suicide_length;
	int debug;
	/* statistics and output */
	char *all_samples;	/* NULL: no samples.csv */
	double interval;
	struct percentiles percentiles;
	char *json;
	char *output;		/* -o: result keys to print, comma-separated */
	char *output_format;	/* kv, csv or human */
	int quiet;
	int local;
	/* TCP */
	uint64_t max_pacing_rate;
	int min_rto;		/* ms */
	char *congestion;	/* TCP_CONGESTION of the data connections */
	int listen_backlog;
	int reuseaddr;
	int reuseport;
	/* rr */
	int request_size;
	int response_size;
	int rr_timeout;		/* udp_rr: ms before a request is lost */
	int burst;		/* tcp_rr: requests outstanding per flow */
	double rate;		/* tcp_rr open loop: requests/s, all flows */
	int iter_min, iter_max;	/* --iterations */
	int conf_level;		/* --confidence: 95 or 99 */
	double conf_width;	/* --confidence: interval width, % of mean */
	char *arrival;		/* poisson or uniform */
	/* --raw: any server, no control connection (raw.h) */
	int raw;
	char *request_data;
	char *request_file;
	char *response_end;
	int pid;		/* observe: the server's process (0: by port) */
	char *listen;		/* observe: ADDR:PORT to serve /metrics on */
	/* tracing (rr) */
	int trace;		/* 0 off, 1 records, 2 hist */
	char *trace_records;	/* CSV of merged records, or NULL */
	char *perfetto;		/* Trace Event Format JSON of them, or NULL */
	int perfetto_every;	/* --perfetto writes 1 in this many of the rest */
	char *report;		/* HTML report of them, or NULL */
	char *script;		/* --script: Lua file, or NULL */
	int hook_timeout;	/* ms a script hook may run; 0: no limit */
	int trace_max_records;
	/* two hosts' stamps compared on: monotonic, realtime or tai */
	char *clock;
	int trace_sample;	/* --trace times one transaction in this many */
	int trace_control;	/* --trace leaves one window in this many */
	int timestamping;	/* SO_TIMESTAMPING stamps in the records */
	int trace_sched;	/* wakeup split by the scheduler's events */
	/* stream */
	int buffer_size;
	int read_size;		/* tcp_stream's reader; 0: buffer_size */
	int enable_read;
	int enable_write;

	int help;
	unsigned int workload;	/* W_* bit of the workload being run */
	/* Not options: set by --local so both sides' keys stay apart. */
	char prefix[16];
	int port_fd;		/* server: where to report its control port */
	/* --local's client: its parent writes --json, --perfetto, --report */
	int parent_writes;
	int options_shown;	/* a client prints them once, after HELLO */
	struct raw_spec *raw_spec;	/* --raw: made by main() from the above */
	char *auth_key;		/* --auth-key FILE */
	struct auth_key *auth;	/* its key, loaded by main() */
	uint64_t given[2];	/* bit i: table entry i was on the command line */
};

/*
 * Parse argv (argv[0] and the workload name already removed by the
 * caller: argv[0] here is only used for getopt's bookkeeping) for the
 * workload bit `wl`. Returns 0, or -1 with a one-line message naming the
 * option and the problem in `err`.
 */
int options_parse(struct options *o, unsigned int wl, int argc, char **argv,
		  char *err, size_t errlen);
/* Cross-option checks and host resolution; same contract. */
int options_validate(struct options *o, char *err, size_t errlen);
void options_free(struct options *o);
/*
 * The terminal's summary (glance.h) replaces the options and results on
 * stdout.
 */
static inline int glance_on(const struct options *o)
{
	return !o->output && !strcmp(o->output_format, "human");
}

/* Was the option `name` (as the table spells it) on the command line? */
int options_given(const struct options *o, const char *name);

/* --rate: the size of a flow's rings of intended and send times. */
#define OPEN_INFLIGHT 4096
/*
 * Requests one flow keeps in flight at most, the one rule: --burst (1
 * where the workload has none: tcp_crr); with --rate, as many as its
 * rings hold, or traced as many as BPF has slots for a socket.
 */
int options_inflight(const struct options *o, int traced);

/* Bytes a stream's reader asks recv() for: --read-size, else -B. */
static inline int options_read_size(const struct options *o)
{
	return o->read_size ? o->read_size : o->buffer_size;
}

/*
 * The name of the workload of W_ bit `bit` (one bit), as
 * workload/registry.c's tables spell it (a unit test holds them
 * together), or NULL: the man page names workloads without calling up
 * into their engines.
 */
const char *options_workload_name(unsigned int bit);
/* Every option of the workload as key=value, in table order. */
void options_dump(const struct options *o, struct kv_list *out);
/* Whether the output starts with the options lines (key=value). */
int options_header_shown(const struct options *o);
/*
 * "workload=NAME", the version and the dump, as the key=value output
 * starts; nothing in the formats that start otherwise.
 */
void options_header(const struct options *o, const char *workload,
		    struct kv_list *out);
/* options_header() on stdout, each key after o->prefix. */
void options_print(const struct options *o, const char *workload);
/* The man page, in roff, from the option table: every workload's. */
void options_man(FILE *f);
void options_usage(unsigned int wl, const char *name);

int percentiles_parse(struct percentiles *p, const char *s);

#endif
