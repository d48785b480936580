/* Entry points of the three ways to run: server, client, both (--local). */
#ifndef NETSTAGE_RUN_H
#define NETSTAGE_RUN_H

#include "config/options.h"
#include "config/workload.h"

/* Each returns the process exit status: 0, or EXIT_RUNTIME. */
int server_run(struct options *o, const struct workload *wl);
int client_run(struct options *o, const struct workload *wl);
int local_run(struct options *o, const struct workload *wl);
/*
 * Does this client take the server's results at the end and print both
 * ends joined (traced with records, not --local, not --raw)? Its keys
 * then carry "client." and "server." as --local's do.
 */
int client_joins_server(const struct options *o);
/*
 * --local, from a signal handler about to _exit(): stop the server's
 * process and wait for it (a few seconds at most), so that what it
 * writes is done before the caller removes temporary files.
 */
void local_stop_server(void);
/* `netstage merge`: many runs' JSON results as one (merge_cmd.c). */
int merge_main(int argc, char **argv);
/*
 * --output-format of join, merge and compare: kv, json, human or auto
 * (human on a terminal) into *json and *human; -1 for none of them.
 */
int file_cmd_format(const char *f, int *json, int *human);
/* `netstage compare`: two groups of runs, figure by figure. */
int compare_main(int argc, char **argv);
/* `netstage join`: records of a request's hops, on one clock. */
int join_main(int argc, char **argv);
/* `netstage observe`: a server's transactions, from the kernel alone. */
int observe_run(struct options *o, const struct workload *wl);

#endif
