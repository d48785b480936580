/*
 * What a client and a server have in common once their flows exist:
 * start the workers, stop them, gather and print the results, write the
 * output files.
 */
#ifndef NETSTAGE_SIDE_H
#define NETSTAGE_SIDE_H

#include <signal.h>
#include <stdio.h>

#include "net/net.h"
#include "config/options.h"
#include "side/report.h"
#include "engine/worker.h"
#include "config/workload.h"

struct run_results;

struct side {
	struct options *o;
	const struct workload *wl;
	struct run_shared rs;
	struct flow **flows;
	int nflows;
	struct worker *workers;
	int nworkers;
	int started;
	struct side_result res;
	struct out_file samples;
	struct out_file json;
	struct out_file trace_records;
	struct out_file perfetto;
	struct out_file report;
	char trace_off[256];	/* --trace asked, and why it is off */
	struct kv_list extra;	/* keys the caller adds after the results */
	/*
	 * Given the side's results model as soon as it is built, before
	 * any output (a server sends it to the clients that asked).
	 */
	void (*share)(const struct run_results *r, void *arg);
	void *share_arg;
};

/* --script socket hooks for a socket of worker `worker` (-1: all). */
struct side_hook {
	struct script *sc;
	int hook;		/* enum hook */
	int worker, nworkers;
};
/* A net_cb function: runs the hook in each of those workers' states. */
int side_socket_hook(void *arg, int fd, const struct addr *a, int socktype);
/* The close hook of fd (a: its address, NULL: its local one). */
void side_close_hook(const struct side_hook *sh, int fd, int socktype,
		     const struct addr *a);

/* Opens the output files first, so a bad path fails before the test. */
int side_init(struct side *s, struct options *o, const struct workload *wl,
	      int is_client, char *err, size_t len);
/*
 * --trace: load the BPF side for this side's data port and message
 * sizes. A kernel that refuses leaves the test running untraced, with
 * one line saying why.
 */
void side_open_tracer(struct side *s, int data_port);
/*
 * --local --trace: one BPF object for both ends, opened before the
 * server's process forks; each side's side_open_tracer() then takes its
 * end of it. NULL if the kernel refused: each side tries on its own.
 */
struct tracer *side_open_both(const struct options *o,
			      const struct workload *wl);
/* Adds the flow, registering its socket with the tracer first. */
void side_add_flow(struct side *s, struct flow *f);
int side_start(struct side *s, char *err, size_t len);
void side_stop(struct side *s);
/*
 * --trace: the workers' records become a uniform sample of at most
 * --trace-max-records over the whole run (side_stop() does it).
 */
void side_keep_records(struct side *s);
void side_free(struct side *s);

/* "client", "server" or "observe": for tables, JSON and scripts. */
const char *side_role(const struct side *s);

/* Where output files of the server go in --local mode. */
char *side_server_path(const char *path);

#endif
