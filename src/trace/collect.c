#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "../common.h"
#include "../flow.h"
#include "collect.h"
#include "tracer.h"

static int on_record(void *ctx, void *data, size_t size)
{
	struct trace_worker *tw = ctx;

	if (size < sizeof(tw->rec))
		return 0;
	/* More than one record per transaction: the earlier is lost. */
	if (tw->have)
		tw->norecord++;
	memcpy(&tw->rec, data, sizeof(tw->rec));
	tw->have = 1;
	return 0;
}

/*
 * observe: no worker stamps to wait for; each record is a whole
 * transaction, merged as it is read.
 */
static int on_kernel_record(void *ctx, void *data, size_t size)
{
	struct trace_worker *tw = ctx;
	struct ustamps u = { .no_tcp_send = tw->no_tcp_send };
	struct flow *f = tw->server;
	struct trace_rec *tr;
	struct ns_krecord rec;
	enum merge_result r;
	struct merged m;
	int i;

	if (size < sizeof(rec))
		return 0;
	memcpy(&rec, data, sizeof(rec));
	r = merge_transaction(tw->side, &rec, &u, &m);
	tr = trace_worker_account(tw, r, &m, rec.flow_id, rec.seq, rec.port);
	if (tr)
		tr->next_port = rec.next_port;
	if (!f)
		return 0;
	f->transactions++;
	if (r != MERGE_OK)
		return 0;
	hist_add(f->lat, m.total);
	f->st_count++;
	for (i = 0; i < stage_count(tw->side); i++)
		f->st_sum[i] += m.stage[i];
	return 0;
}

int trace_worker_init(struct trace_worker *tw, struct tracer *t, int id,
		      enum ns_side side, long max_recs)
{
	int i;

	memset(tw, 0, sizeof(*tw));
	tw->side = side;
	tw->id = id;
	tw->no_tcp_send = !tracer_has_tcp_send(t);
	tw->max_recs = max_recs;
	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&tw->stage[i]);
	tw->rb = ring_buffer__new(tracer_ring_fd(t, id),
				  NS_IS_OBS(side) ? on_kernel_record : on_record,
				  tw, NULL);
	return tw->rb ? 0 : -errno;
}

struct trace_rec *trace_worker_account(struct trace_worker *tw,
				       enum merge_result r,
				       const struct merged *m,
				       uint32_t flow_id, uint64_t seq,
				       uint16_t port)
{
	int i, n = stage_count(tw->side);
	struct trace_rec *tr;

	if (r != MERGE_OK)
		tw->bad_at[m->bad]++;
	if (r == MERGE_MISSING) {
		tw->missing++;
		return NULL;
	}
	if (r == MERGE_DISORDER) {
		tw->disorder++;
		return NULL;
	}
	tw->complete++;
	for (i = 0; i < n; i++)
		hist_add(&tw->stage[i], m->stage[i]);
	if (tw->nrecs >= tw->max_recs)
		return NULL;
	if (!tw->recs)
		tw->recs = xcalloc(tw->max_recs, sizeof(*tw->recs));
	tr = &tw->recs[tw->nrecs++];
	tr->flow_id = flow_id;
	tr->worker = tw->id;
	tr->seq = seq;
	tr->port = port;
	memcpy(tr->b, m->b, sizeof(tr->b));
	tr->sw_tx = m->sw_tx;
	tr->sw_rx = m->sw_rx;
	return tr;
}

static void done(struct trace_worker *tw, struct flow *f,
		 const struct ustamps *u)
{
	/* BPF numbers a flow's transactions as f->tr_seq does. */
	if (tw->sample > 1 && f->tr_seq % tw->sample) {
		f->tr_seq++;
		return;
	}
	ring_buffer__consume(tw->rb);
	trace_worker_take(tw, f, u);
}

void trace_worker_done(struct trace_worker *tw, struct flow *f,
		       const struct ustamps *u)
{
	uint64_t t0;

	if (!tw->cost || !trace_cost_timing(tw->cost)) {
		done(tw, f, u);
		return;
	}
	t0 = now_ns();
	done(tw, f, u);
	tw->cost_ns += now_ns() - t0;
	tw->cost_n++;
}

void trace_worker_drop(struct trace_worker *tw)
{
	ring_buffer__consume(tw->rb);
	tw->have = 0;
}

void trace_worker_take(struct trace_worker *tw, struct flow *f,
		       const struct ustamps *u)
{
	enum merge_result r;
	struct ustamps us;
	struct merged m;
	int i;

	if (!tw->have || (tw->rec.flow_id != (uint32_t)f->id &&
			  tw->rec.flow_id != NS_NO_FLOW)) {
		tw->norecord++;
		f->tr_seq++;
		return;
	}
	tw->have = 0;
	/*
	 * The record was emitted inside this transaction's own last call,
	 * so it is this transaction's even if an earlier one went
	 * unrecorded (counted then): follow the kernel's numbering. A
	 * socket BPF made storage for (tcp_crr) has none: number here.
	 */
	if (tw->rec.flow_id == NS_NO_FLOW)
		tw->rec.seq = f->tr_seq;
	f->tr_seq = tw->rec.seq + 1;
	us = *u;
	us.no_tcp_send = tw->no_tcp_send;
	r = merge_transaction(tw->side, &tw->rec, &us, &m);
	/* tcp_crr: BPF knows each connection's client port; f does not. */
	trace_worker_account(tw, r, &m, f->id, tw->rec.seq,
			     tw->rec.port ? tw->rec.port : f->port);
	if (r != MERGE_OK)
		return;
	/* The flow's interval sums, for the stage columns of samples.csv. */
	f->st_count++;
	for (i = 0; i < stage_count(tw->side); i++)
		f->st_sum[i] += m.stage[i];
}

void trace_worker_free(struct trace_worker *tw)
{
	ring_buffer__free(tw->rb);
	free(tw->recs);
	tw->rb = NULL;
	tw->recs = NULL;
}
