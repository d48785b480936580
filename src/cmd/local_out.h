/*
 * What a run of two ends makes of their two results models once both
 * are done: --local's parent (local.c runs them and gathers the
 * models) and a traced client on two hosts (client.c, the server's
 * model from the control connection): the client's output then the
 * server's, one JSON document or CSV table of both, the joined
 * waterfall, --perfetto and --report of both, and the script's r and
 * r.peer.
 */
#ifndef NETSTAGE_LOCAL_OUT_H
#define NETSTAGE_LOCAL_OUT_H

#include <sys/types.h>

#include "core/kv.h"
#include "config/options.h"
#include "results/run_results.h"
#include "trace/waterfall.h"
#include "config/workload.h"

struct tracer;

struct local {
	/* The client's model and the server's; NULL: that side gave none. */
	struct run_results *side[2];
	char *json;		/* --json: the parent writes both sides */
	char *perfetto;		/* --perfetto: the same */
	char *report;		/* --report: the same */
	pid_t pid;
};

/* --json FILE: the two sides' documents made one; -1 if it failed. */
int local_write_json(const struct local *l, const struct kv_list *wf);
/* --perfetto and --report of both sides' records; -1 if one failed. */
int local_write_files(const struct local *l, const struct waterfall *w,
		      const struct options *o);
/*
 * The two sides' records joined, the client's first, the server's
 * stages inside the client's `remote`, the keys in kv; NULL if a side
 * has no records. clock: --clock (NULL or monotonic: each host's own,
 * aligned by the fit where they differ; realtime, tai: the one the
 * hosts share).
 */
struct waterfall *local_waterfall(const struct local *l, int keep,
				  const char *clock, struct kv_list *kv);
/*
 * On stdout, in the format asked for, the client's results, the
 * server's, then the waterfall's keys; the stage tables or the
 * waterfall on the tables' stream.
 */
void local_print(const struct local *l, const struct options *o,
		 const struct waterfall *w, const struct kv_list *wf);
/* --script: the client's model as r, the server's as r.peer (taken). */
void local_keep_for_script(struct local *l);

/*
 * The files written of both ends (--json, --perfetto, --report) taken
 * from o into l: the client's side then writes none of them.
 */
void local_take_files(struct local *l, struct options *o);
/* Fail on an unwritable output path before anything starts: -1. */
int local_probe_outputs(const struct options *o);
/* A side_results_to() hand-off: the client's model into l->side[0]. */
void local_keep_client(struct run_results *r, void *arg);
/*
 * Everything of both once both are done (ok: both ran to the end):
 * stdout, the files, the script's r; -1 if a file failed.
 */
int local_write_both(struct local *l, const struct options *o, int ok);
/* The models and paths l holds. */
void local_free(struct local *l);

#endif
