/*
 * One side's results: gathered from its workers after the test, turned
 * into the result keys (key=value and JSON), samples.csv and the JSON
 * document.
 */
#ifndef NETSTAGE_REPORT_H
#define NETSTAGE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "sys/busypoll.h"
#include "stats/cpu.h"
#include "control/ctl_msg.h"
#include "stats/hist.h"
#include "core/kv.h"
#include "core/outfile.h"
#include "trace/summary.h"
#include "engine/worker.h"

struct side_result {
	int is_client;
	uint64_t t_start, t_end;
	struct rusage ru_start, ru_end;
	uint64_t transactions, bytes_read, bytes_written, errors;
	uint64_t lost, late;	/* udp_rr client */
	uint64_t mismatched;	/* tcp rr client: answers to another request */
	uint64_t sent, behind;	/* --rate: requests sent, sends skipped */
	/* --raw: what the server did that a request/response peer should not */
	uint64_t unexpected_bytes;
	int closed_flows, silent_flows, overlong_flows;
	int observed_pid;	/* observe: the server's process */
	uint64_t obs_skipped;	/* observe: requests met mid-stream */
	uint64_t obs_flushed;	/* observe: records of responses open */
	struct hist lat_unc;	/* --rate: latency from the actual send */
	struct cpu_snap cpu_start, cpu_end;
	int num_flows;
	int num_samples;
	double throughput;	/* transactions/s, or Mbps for stream */
	double correlation;
	struct hist lat;	/* rr client, every transaction */
	int invalid_secret_count;	/* server */
	int has_remote;
	uint64_t remote[R_NFIELDS];
	const char *error;	/* what ended the test early, or NULL */
	int last_errno;		/* of the last failed I/O call (io_errors) */
	const char *trace_off;	/* --trace asked but off: why */
	struct trace_summary trace;
	struct busy_poll_counts busy_poll;	/* --busy-poll */
};

void report_collect(struct side_result *r, struct worker *w, int n,
		    const struct run_shared *rs);
void report_kv(const struct side_result *r, const struct run_shared *rs,
	       struct kv_list *out);
/*
 * Print the results (all, or with -o only the selected keys, in their
 * order) as kv, csv (a header line and a value line), json (an object)
 * or, with -o, human (aligned columns); each key after prefix.
 */
void report_print(const struct kv_list *results, const struct options *o,
		  const char *prefix, FILE *f);
/* The keys -o selects, in its order, or all of them without -o. */
void report_select(const struct kv_list *results, const struct options *o,
		   struct kv_list *out);
/* -o: 0, or -1 with the first key no result of this run can have. */
int report_check_keys(const struct options *o, const struct workload *wl,
		      char *err, size_t len);
/* CPU per transaction (rr) or per KB (stream), us; -1 unknown. */
double report_service_demand_us(const struct side_result *r,
				const struct run_shared *rs);
/* The side's own totals and CPU figures, as STOP/RESULT carry them. */
void report_fill_totals(const struct side_result *r,
			const struct run_shared *rs, struct ctl_msg *m);


#endif
