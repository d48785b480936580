/*
 * --local: the files and tables both sides leave for the parent, and
 * what the parent makes of them once both are done (local_out.c).
 */
#ifndef NETSTAGE_LOCAL_OUT_H
#define NETSTAGE_LOCAL_OUT_H

#include <stdio.h>
#include <sys/types.h>

#include "kv.h"
#include "options.h"
#include "trace/waterfall.h"
#include "workload.h"

struct tracer;

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

/* --json FILE: the two sides' documents made one; -1 if it failed. */
int local_merge_json(struct local *l, const struct kv_list *wf);
/* --perfetto and --report of both sides' records; -1 if one failed. */
int local_write_files(const struct local *l, const struct waterfall *w,
		      const struct options *o, const struct workload *wl,
		      struct tracer *both);
/*
 * The two sides' records joined, the client's first, the keys in kv;
 * NULL if they could not be read.
 */
struct waterfall *local_waterfall(struct local *l, const struct options *o,
				  const struct workload *wl,
				  struct kv_list *kv);
/* --script: the server's results as run()'s r.peer. */
void local_keep_peer(struct local *l, const struct waterfall *w);
/* After the client's output, the server's, then the waterfall. */
void local_finish_output(struct local *l, const struct options *o,
			 const struct waterfall *w, const struct kv_list *wf);

#endif
