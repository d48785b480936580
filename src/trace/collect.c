#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "core/common.h"
#include "net/flow.h"
#include "trace/collect.h"
#include "trace/tracer.h"

/*
 * Negative: libbpf stops, this record consumed, the next kept. The
 * clock is read every 64 records: a reader short of CPU takes ms each.
 */
static int spent(struct trace_worker *tw)
{
	tw->nread++;
	if (tw->budget && !--tw->budget)
		return -1;
	if (tw->until && !(tw->nread & 63) && now_ns() >= tw->until)
		return -1;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct trace_worker *tw = ctx;

	if (size < sizeof(tw->rec))
		return spent(tw);
	/* More than one record per transaction: the earlier is lost. */
	if (tw->have)
		tw->norecord++;
	memcpy(&tw->rec, data, sizeof(tw->rec));
	tw->have = 1;
	return spent(tw);
}

/* The flow's interval sums, for the stage columns of samples.csv. */
static void add_stage_sums(struct flow *f, const struct merged *m, int n)
{
	int i;

	f->st_count++;
	for (i = 0; i < n; i++)
		f->st_sum[i] += m->stage[i];
}

static uint64_t last_stamp(const struct ns_krecord *rec)
{
	uint64_t t = 0;
	int b;

	for (b = 0; b < NS_B_COUNT; b++)
		if (rec->t[b] > t)
			t = rec->t[b];
	return t;
}

/*
 * observe: no worker stamps to wait for; each record is a whole
 * transaction, merged as it is read.
 */
static void kernel_record(struct trace_worker *tw, void *data, size_t size)
{
	struct ustamps u = { 0 };
	struct flow *f = tw->server;
	struct ns_krecord rec;
	enum merge_result r;
	struct merged m;

	if (size < sizeof(rec))
		return;
	memcpy(&rec, data, sizeof(rec));
	if (tw->at && tw->at(tw->at_arg, last_stamp(&rec)))
		return;
	r = merge_transaction(tw->side, &rec, &u, &m);
	tw->next_port = rec.next_port;
	trace_worker_account(tw, r, &m, rec.flow_id, rec.seq, rec.port,
			     rec.rx_off);
	if (!f)
		return;
	f->transactions++;
	if (r != MERGE_OK)
		return;
	hist_add(f->lat, m.total);
	add_stage_sums(f, &m, stage_count(tw->side));
}

static int on_kernel_record(void *ctx, void *data, size_t size)
{
	kernel_record(ctx, data, size);
	return spent(ctx);
}

int trace_worker_read_some(struct trace_worker *tw, unsigned int n,
			   uint64_t until)
{
	int r;

	tw->budget = n;
	tw->until = until;
	r = ring_buffer__consume(tw->rb);
	tw->budget = 0;
	tw->until = 0;
	return r < 0;
}

int trace_worker_init(struct trace_worker *tw, struct tracer *t, int id,
		      enum ns_side side, long max_recs)
{
	int i;

	memset(tw, 0, sizeof(*tw));
	tw->side = side;
	tw->id = id;
	tw->krec_mask = tracer_krec_mask(t);
	if (trace_worker_lean(tw))
		tw->late = xcalloc(TRACE_WAITING, sizeof(*tw->late));
	tw->max_recs = max_recs;
	tw->max_slow = max_recs * TRACE_SLOWEST_PCT / 100;
	/* Committed now, not in the first kept transaction's latency. */
	bottomk_reserve(&tw->keep, max_recs);
	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&tw->stage[i]);
	hist_reset(&tw->held);
	/* Lean records in the flows' slots need no ring. */
	if (trace_worker_lean(tw))
		return 0;
	tw->rb = ring_buffer__new(tracer_ring_fd(t, id),
				  NS_IS_OBS(side) ? on_kernel_record : on_record,
				  tw, NULL);
	return tw->rb ? 0 : -errno;
}


/* Merge a transaction's record with its stamps, and account it. */
static void merge_rec(struct trace_worker *tw, struct flow *f,
		      const struct ns_krecord *rec, const struct ustamps *u)
{
	enum merge_result r;
	struct merged m;

	r = merge_transaction(tw->side, rec, u, &m);
	/*
	 * tcp_crr: BPF knows each connection's client port; f does not.
	 * A udp_rr server's record goes by the client's number.
	 */
	trace_worker_account(tw, r, &m, f->id,
			     u->peer_seq ? u->peer_seq - 1 : rec->seq,
			     rec->port ? rec->port :
			     u->peer_port ? u->peer_port : f->port,
			     tw->req_bytes ? (int64_t)(uint32_t)(rec->seq *
							       tw->req_bytes)
					   : -1);
	if (r == MERGE_OK)
		add_stage_sums(f, &m, stage_count(tw->side));
}

static const uint8_t kb[NS_K_COUNT] = NS_K_TO_B;

/*
 * Lean: flow f's transaction seq in its slot, if BPF has written it
 * whole (0), else -1. BPF zeroes seq while it writes: the same seq
 * before and after the copy is a whole record.
 */
static int take_slot(const struct trace_worker *tw, const struct flow *f,
		     uint64_t seq, struct ns_krecord *rec)
{
	const struct ns_krec *k = &f->kr[seq & tw->krec_mask];
	uint64_t want = (uint64_t)(uint32_t)seq + 1;
	int i;

	if (__atomic_load_n(&k->seq, __ATOMIC_ACQUIRE) != want)
		return -1;
	memset(rec, 0, sizeof(*rec));
	for (i = 0; i < NS_K_COUNT; i++)
		rec->t[kb[i]] = k->t[i];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&k->seq, __ATOMIC_RELAXED) != want)
		return -1;
	rec->flow_id = f->id;
	rec->seq = (uint32_t)seq;
	rec->side = tw->side;
	return 0;
}

/* Lean: the i-th oldest transaction waiting for its record. */
static struct trace_late *late_at(struct trace_worker *tw, int i)
{
	return &tw->late[(tw->late_head + i) % TRACE_WAITING];
}

/* Lean: a waiting transaction stops waiting. */
static void gone(struct trace_late *l)
{
	if (l->f)
		l->f->nlate--;
	l->f = NULL;
}

/* Lean: the ring starts at the oldest transaction still waiting. */
static void trim_late(struct trace_worker *tw)
{
	while (tw->nlate && !late_at(tw, 0)->f) {
		tw->late_head = (tw->late_head + 1) % TRACE_WAITING;
		tw->nlate--;
	}
}

/*
 * Lean: waiting transaction l takes its record if it is there. If not,
 * it never will once older than its flow's slots reach (a later
 * message has the slot), or when the run is over (final).
 */
static void settle(struct trace_worker *tw, struct trace_late *l, int final)
{
	struct ns_krecord rec;

	if (!take_slot(tw, l->f, l->seq, &rec))
		merge_rec(tw, l->f, &rec, &l->u);
	else if (!final && l->f->tr_seq - l->seq <= tw->krec_mask + 1)
		return;
	else
		tw->norecord++;
	gone(l);
}

/*
 * Lean: f's waiting transactions, looked for at each of its own (BPF
 * writes a record before the flow's next transaction is done, as a
 * rule); other flows' cost nothing here.
 */
static void settle_flow(struct trace_worker *tw, struct flow *f)
{
	struct trace_late *l;
	int i;

	for (i = 0; i < tw->nlate && f->nlate; i++) {
		l = late_at(tw, i);
		if (l->f == f)
			settle(tw, l, 0);
	}
	trim_late(tw);
}

/* Lean: f's transaction seq waits for its record (the oldest gives way). */
static void wait_record(struct trace_worker *tw, struct flow *f,
			uint64_t seq, const struct ustamps *u)
{
	/* The oldest waiting (settled ones are gone). */
	if (tw->nlate == TRACE_WAITING) {
		gone(late_at(tw, 0));
		tw->norecord++;
		tw->late_head = (tw->late_head + 1) % TRACE_WAITING;
		tw->nlate--;
	}
	*late_at(tw, tw->nlate++) = (struct trace_late){ f, seq, *u };
	f->nlate++;
}

/*
 * Lean: the record of f's transaction from its slot, now or at one of
 * f's next transactions. A flow past the slots the end has has none.
 */
void trace_worker_take_lean(struct trace_worker *tw, struct flow *f,
			    const struct ustamps *u)
{
	uint64_t seq = f->tr_seq++;
	struct ns_krecord rec;

	if (!f->kr) {
		tw->norecord++;
		return;
	}
	if (f->nlate)
		settle_flow(tw, f);
	if (!take_slot(tw, f, seq, &rec))
		merge_rec(tw, f, &rec, u);
	else
		wait_record(tw, f, seq, u);
}

static void take_deferred(struct trace_worker *tw);

void trace_worker_end(struct trace_worker *tw)
{
	struct trace_late *l;
	int i;

	if (tw->rb)
		take_deferred(tw);
	if (!trace_worker_lean(tw))
		return;
	for (i = 0; i < tw->nlate; i++) {
		l = late_at(tw, i);
		if (l->f)
			settle(tw, l, 1);
	}
	tw->nlate = 0;
}

/*
 * --trace-sample, a lean server: the record of a timed transaction is
 * taken at its flow's next one, which is not timed. Taken now, right
 * after the response's send(), the merge would run while the client
 * wakes up for that response, and the sample would time a slower
 * system than the run's (3.3-5.3 us at p50 with --local).
 */
static int defer_record(const struct trace_worker *tw)
{
	return tw->sample > 1 && NS_IS_SERVER(tw->side) &&
	       trace_worker_lean(tw);
}

/*
 * --trace-sample, a server whose records come by ring (udp_rr; tcp_rr
 * with the length hooks): as a lean server's, a timed transaction's
 * record is merged at the worker's next transaction, not while its
 * client wakes up for the response.
 */
static int defer_ring(const struct trace_worker *tw)
{
	return tw->sample > 1 && NS_IS_SERVER(tw->side) && tw->rb;
}

/*
 * The deferred transaction takes the oldest record in the ring (a
 * later timed one's may be there behind it). Its flow has numbered on:
 * the record does not take it back.
 */
static void take_deferred(struct trace_worker *tw)
{
	struct flow *f = tw->defer_f;
	uint64_t next;

	if (!f)
		return;
	next = f->tr_seq;
	tw->defer_f = NULL;
	/* One held already (the one before went without): it is the next. */
	if (!tw->have)
		trace_worker_read_some(tw, 1, 0);
	/* Its own record went missing: this one is a later transaction's. */
	if (tw->have && tw->rec.flow_id == (uint32_t)f->id &&
	    (uint32_t)tw->rec.seq != (uint32_t)tw->defer_seq) {
		tw->norecord++;
		return;
	}
	trace_worker_take(tw, f, &tw->defer_u);
	if (f->tr_seq < next)
		f->tr_seq = next;
}

static void done(struct trace_worker *tw, struct flow *f,
		 const struct ustamps *u, int sampled)
{
	if (!sampled)
		tw->untimed++;
	if (defer_ring(tw)) {
		take_deferred(tw);
		if (sampled) {
			tw->defer_f = f;
			tw->defer_u = *u;
			tw->defer_seq = f->tr_seq;
		}
		f->tr_seq++;
		return;
	}
	/* BPF numbers a flow's transactions as f->tr_seq does. */
	if (!sampled) {
		f->tr_seq++;
		if (f->nlate && defer_record(tw))
			settle_flow(tw, f);
		return;
	}
	if (tw->rb)
		ring_buffer__consume(tw->rb);
	if (defer_record(tw) && f->kr)
		wait_record(tw, f, f->tr_seq++, u);
	else if (trace_worker_lean(tw))
		trace_worker_take_lean(tw, f, u);
	else
		trace_worker_take(tw, f, u);
}

int trace_worker_done(struct trace_worker *tw, struct flow *f,
		      const struct ustamps *u)
{
	int sampled = trace_worker_sampled(tw, f);
	uint64_t t0;

	if (tw->inrun && u->app_done > u->app_send)
		inrun_add(tw->inrun, u->app_done, u->app_done - u->app_send,
			  sampled);

	if (!tw->cost || !trace_cost_timing(tw->cost)) {
		done(tw, f, u, sampled);
		return sampled;
	}
	t0 = now_ns();
	done(tw, f, u, sampled);
	tw->cost_ns += now_ns() - t0;
	tw->cost_n++;
	return sampled;
}

void trace_worker_drop(struct trace_worker *tw)
{
	ring_buffer__consume(tw->rb);
	tw->have = 0;
}

void trace_worker_take(struct trace_worker *tw, struct flow *f,
		       const struct ustamps *u)
{
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
	merge_rec(tw, f, &tw->rec, u);
}


void trace_worker_free(struct trace_worker *tw)
{
	ring_buffer__free(tw->rb);
	free(tw->late);
	free(tw->inrun);
	tw->late = NULL;
	bottomk_free(&tw->keep);
	free(tw->recs);
	free(tw->slow);
	free(tw->sheap);
	tw->rb = NULL;
	tw->recs = NULL;
	tw->slow = NULL;
	tw->sheap = NULL;
}
