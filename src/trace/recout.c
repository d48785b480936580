/*
 * A side's kept records written out, whatever kept them: as the
 * records CSV (--trace-records, which records_in.c reads back) and as
 * a join table (the waterfall, Perfetto, the report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/kv.h"
#include "trace/join.h"
#include "trace/merge.h"
#include "trace/recout.h"

static void print_stamp(FILE *f, uint64_t t)
{
	if (t)
		fprintf(f, ",%llu", (unsigned long long)t);
	else
		fputs(",", f);
}

/* --trace-sched: what held the reader's CPU; empty fields when nothing. */
static void held_csv(FILE *f, const struct trace_rec *tr)
{
	if (!tr->held_comm[0]) {
		fputs(",,,\n", f);
		return;
	}
	csv_field(f, tr->held_comm, 1);
	fprintf(f, ",%u,%u\n", tr->held_pid, tr->held_cpu);
}

void recout_csv(FILE *f, const struct rec_set *s, enum ns_side side)
{
	const struct stage_def *d = stage_defs(side);
	int i, j, b, ns = stage_count(side);
	long r;

	fputs("side,worker,flow_id,seq", f);
	for (b = 0; b < NS_B_COUNT; b++)
		fprintf(f, ",%s", boundary_name(b));
	for (j = 0; j < ns; j++)
		fprintf(f, ",%s", d[j].name);
	fputs(",SW_TX,SW_RX,port,next_port,kept,held_comm,held_pid,held_cpu\n",
	      f);
	for (i = 0; i < s->nworkers; i++) {
		for (r = 0; r < s->n[i]; r++) {
			const struct trace_rec *tr = &s->recs[i][r];

			fprintf(f, "%s,%u,%u,%llu",
				NS_IS_OBS(side) ? "observe" :
				NS_IS_SERVER(side) ? "server" : "client",
				tr->worker, tr->flow_id,
				(unsigned long long)tr->seq);
			/*
			 * CLOCK_MONOTONIC ns: on one host, the client's and
			 * the server's records compare directly.
			 */
			for (b = 0; b < NS_B_COUNT; b++) {
				if (tr->b[b])
					fprintf(f, ",%llu",
						(unsigned long long)tr->b[b]);
				else
					fputs(",", f);
			}
			for (j = 0; j < ns; j++)
				fprintf(f, ",%llu", (unsigned long long)(
					tr->b[d[j].to] - tr->b[d[j].from]));
			print_stamp(f, tr->sw_tx);
			print_stamp(f, tr->sw_rx);
			fprintf(f, ",%u,%u,%s", tr->port, tr->next_port,
				tr->slowest ? "slowest" : "sample");
			held_csv(f, tr);
		}
	}
}

static void to_join_rec(struct join_rec *jr, const struct trace_rec *tr)
{
	memset(jr, 0, sizeof(*jr));
	jr->port = tr->port;
	jr->next_port = tr->next_port;
	jr->flow_id = tr->flow_id;
	jr->slowest = (uint8_t)tr->slowest;
	jr->seq = tr->seq;
	memcpy(jr->b, tr->b, sizeof(jr->b));
}

void recout_table(struct join_table *t, const struct rec_set *s)
{
	long r, k = rec_set_count(s);
	int i;

	t->r = xcalloc(k ? k : 1, sizeof(*t->r));
	t->n = 0;
	for (i = 0; i < s->nworkers; i++)
		for (r = 0; r < s->n[i]; r++)
			to_join_rec(&t->r[t->n++], &s->recs[i][r]);
}
