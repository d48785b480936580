/*
 * Merging kernel records with user stamps, on synthetic transactions:
 * exact stage values, the identity (stages add up to the span), missing
 * and reordered boundaries, the reader that beats the wake-up call,
 * blocking I/O without epoll, lost and renumbered records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/flow.h"
#include "trace/collect.h"
#include "trace/keep.h"
#include "trace/merge.h"

/* A client transaction, 1 us apart at each boundary from t = 1000. */
static void client_txn(struct ns_krecord *k, struct ustamps *u)
{
	memset(k, 0, sizeof(*k));
	u->app_send = 1000;
	k->t[NS_B_TCP_SEND] = 2000;
	k->t[NS_B_DEV_XMIT] = 3000;
	k->t[NS_B_SEND_RET] = 3500;	/* not a client boundary */
	k->t[NS_B_NETIF_RX] = 10000;	/* 7 us away: network and server */
	k->t[NS_B_TCP_RX] = 11000;
	k->t[NS_B_DATA_READY] = 12000;
	u->epoll_ret = 15000;
	k->t[NS_B_RECV_RET] = 16000;
	u->app_done = 17000;
}

static void server_txn(struct ns_krecord *k, struct ustamps *u)
{
	memset(k, 0, sizeof(*k));
	k->t[NS_B_NETIF_RX] = 100;
	k->t[NS_B_TCP_RX] = 200;
	k->t[NS_B_DATA_READY] = 400;
	u->epoll_ret = 800;
	k->t[NS_B_RECV_RET] = 1600;
	u->app_send = 3200;
	k->t[NS_B_TCP_SEND] = 6400;
	k->t[NS_B_DEV_XMIT] = 12800;
	k->t[NS_B_SEND_RET] = 25000;
	u->app_done = 25600;
}

static uint64_t sum(const struct merged *m, enum ns_side side)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < stage_count(side); i++)
		s += m->stage[i];
	return s;
}

static void t_each_side_is_a_chain_of_stages(void **state)
{
	enum ns_side side;
	int i;

	for (side = NS_CLIENT; side <= NS_SERVER; side++) {
		const struct stage_def *d = stage_defs(side);

		assert_int_equal(stage_count(side), 8);
		for (i = 1; i < stage_count(side); i++)
			assert_int_equal(d[i].from, d[i - 1].to);
	}
	assert_int_equal(stage_defs(NS_CLIENT)[0].from, NS_B_APP_SEND);
	assert_int_equal(stage_defs(NS_CLIENT)[7].to, NS_B_APP_DONE);
	assert_int_equal(stage_defs(NS_SERVER)[0].from, NS_B_NETIF_RX);
	assert_int_equal(stage_defs(NS_SERVER)[7].to, NS_B_APP_DONE);
	assert_string_equal(stage_defs(NS_CLIENT)[2].name, "remote");
	assert_string_equal(boundary_name(NS_B_TCP_RX), "TCP_RX");
}

/*
 * BPF's account() takes a side's kernel stages as one run of
 * NS_KSTAGES, at most NS_MAX_KSTAGES long: a side listed in two places
 * would lose the second.
 */
static void t_kernel_stages_of_a_side_are_consecutive(void **state)
{
#define SIDE(s, name, f, t) NS_##s,
	static const int sides[] = { NS_KSTAGES(SIDE) };
#undef SIDE
	int n = sizeof(sides) / sizeof(sides[0]), i, j, run;

	for (i = 0; i < n; i = j) {
		for (j = i; j < n && sides[j] == sides[i]; j++)
			;
		run = j - i;
		assert_int_equal(run, kstage_count(sides[i]));
		assert_in_range(run, 1, NS_MAX_KSTAGES);
	}
	assert_int_equal(kstage_count(NS_CLIENT), 5);
	assert_int_equal(kstage_count(NS_SERVER), 6);
}

static void t_client_stages_are_exact(void **state)
{
	static const uint64_t want[8] = { 1000, 1000, 7000, 1000, 1000, 3000,
					   1000, 1000 };
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	client_txn(&k, &u);
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, want, sizeof(want));
	/* The identity: stages add up to the latency the worker measured. */
	assert_int_equal(m.total, u.app_done - u.app_send);
	assert_int_equal(sum(&m, NS_CLIENT), m.total);
}

/*
 * --rate: the transaction starts when its request was due (400), the
 * wait to the actual send its `queue`; the latency the worker measures
 * from the intended send is the total, with --trace-sched too.
 */
static void t_open_loop_starts_at_the_intended_send(void **state)
{
	static const uint64_t want[9] = { 600, 1000, 1000, 7000, 1000, 1000,
					   3000, 1000, 1000 };
	enum ns_side side = NS_CLIENT | NS_RATE_BIT;
	enum ns_side both = side | NS_SCHED_BIT;
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	assert_int_equal(stage_count(side), stage_count(NS_CLIENT) + 1);
	assert_int_equal(stage_count(both), stage_count(NS_CLIENT) + 4);
	assert_string_equal(stage_defs(both)[0].name, "queue");
	assert_int_equal(stage_defs(side)[0].from, NS_B_INTENDED);
	assert_int_equal(stage_defs(side)[0].to, NS_B_APP_SEND);
	assert_int_equal(stage_count(NS_SERVER | NS_RATE_BIT), 0);
	client_txn(&k, &u);
	u.intended = 400;
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, want, sizeof(want));
	assert_int_equal(m.total, u.app_done - u.intended);
	assert_int_equal(sum(&m, side), m.total);
	/* Without its due time, no latency to give: incomplete. */
	u.intended = 0;
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_INTENDED);
}

/*
 * --trace-sched: wakeup (DATA_READY 12000 to EPOLL_RET 15000) split.
 * Asleep: woken at 12400, on a CPU at 14000 after `held`; running: the
 * worker's last wake-up was before the data, and all of it is busy.
 */
static void t_sched_splits_the_wakeup(void **state)
{
	static const uint64_t asleep[11] = { 1000, 1000, 7000, 1000, 1000,
					     0, 400, 1600, 1000, 1000, 1000 };
	static const uint64_t running[11] = { 1000, 1000, 7000, 1000, 1000,
					      3000, 0, 0, 0, 1000, 1000 };
	enum ns_side side = NS_CLIENT | NS_SCHED_BIT;
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	assert_int_equal(stage_count(side), 11);
	assert_string_equal(stage_defs(side)[5].name, "busy");
	assert_string_equal(stage_defs(side)[7].name, "runq");
	assert_string_equal(stage_defs(side)[8].name, "to_user");
	client_txn(&k, &u);
	k.t[NS_B_WOKEN] = 12400;
	k.t[NS_B_ON_CPU] = 14000;
	k.held_pid = 42;
	k.held_cpu = 1;
	strcpy(k.held_comm, "swapper/1");
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, asleep, sizeof(asleep));
	assert_int_equal(sum(&m, side), m.total);
	assert_string_equal(m.held_comm, "swapper/1");
	assert_int_equal(m.held_pid, 42);
	/* Woken before its data came: it was running, behind other work. */
	k.t[NS_B_WOKEN] = 11000;
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, running, sizeof(running));
	assert_string_equal(m.held_comm, "");
	/* Not on a CPU since (on_cpu 0): not this transaction's wake-up. */
	k.t[NS_B_WOKEN] = 12400;
	k.t[NS_B_ON_CPU] = 0;
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, running, sizeof(running));
	/* No epoll wait of its own: the whole wake-up is 0, as unsplit. */
	k.t[NS_B_ON_CPU] = 14000;
	u.epoll_ret = 0;
	assert_int_equal(merge_transaction(side, &k, &u, &m), MERGE_OK);
	assert_int_equal(m.stage[5] + m.stage[6] + m.stage[7] + m.stage[8], 0);
	assert_int_equal(sum(&m, side), m.total);
}

static void t_server_stages_are_exact(void **state)
{
	static const uint64_t want[8] = { 100, 200, 400, 800, 1600, 3200,
					   6400, 12800 };
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	server_txn(&k, &u);
	assert_int_equal(merge_transaction(NS_SERVER, &k, &u, &m), MERGE_OK);
	assert_memory_equal(m.stage, want, sizeof(want));
	assert_int_equal(m.total, 25500);
	assert_int_equal(sum(&m, NS_SERVER), m.total);
}

static void t_missing_kernel_boundary_is_incomplete(void **state)
{
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	client_txn(&k, &u);
	k.t[NS_B_DEV_XMIT] = 0;		/* the xmit event was not seen */
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m),
			 MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_DEV_XMIT);
	client_txn(&k, &u);
	k.t[NS_B_NETIF_RX] = 0;		/* first stage with a hole */
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m),
			 MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_NETIF_RX);
}

static void t_reordered_boundaries_are_incomplete(void **state)
{
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	client_txn(&k, &u);
	k.t[NS_B_NETIF_RX] = 11500;	/* after TCP_RX: not this message's */
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m),
			 MERGE_DISORDER);
	assert_int_equal(m.bad, NS_B_TCP_RX);
	/* A stale epoll stamp, before the data even reached TCP. */
	client_txn(&k, &u);
	u.epoll_ret = 10500;
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m),
			 MERGE_DISORDER);
}

/*
 * A lean server record whose response left after its send() returned:
 * out of order at APP_DONE, and held back for exactly the difference;
 * nothing else is held back.
 */
static void t_a_response_held_back_is_timed_apart(void **state)
{
	struct trace_worker tw;
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;
	enum merge_result r;

	server_txn(&k, &u);
	k.t[NS_B_SEND_RET] = 0;		/* lean: no send hook */
	u.recv_ret = k.t[NS_B_RECV_RET];
	u.app_done = 6000;		/* before TCP sent it at 6400 */
	r = merge_transaction(NS_SERVER, &k, &u, &m);
	assert_int_equal(r, MERGE_DISORDER);
	assert_int_equal(m.bad, NS_B_APP_DONE);
	assert_int_equal(merge_held_back_ns(NS_SERVER, r, &m), 12800 - 6000);
	assert_int_equal(merge_held_back_ns(NS_SERVER | NS_SCHED_BIT, r, &m),
			 12800 - 6000);
	/* A server worker counts it out of order, and keeps how long. */
	memset(&tw, 0, sizeof(tw));
	tw.side = NS_SERVER;
	hist_reset(&tw.held);
	assert_null(trace_worker_account(&tw, r, &m, 0, 0, 0, -1));
	assert_int_equal(tw.disorder, 1);
	assert_int_equal(tw.bad_at[NS_B_APP_DONE], 1);
	assert_int_equal(tw.held.count, 1);
	assert_int_equal(tw.held.max, 12800 - 6000);
	/* The same stamps are no held-back response at other sides. */
	assert_int_equal(merge_held_back_ns(NS_SERVER_CRR, r, &m), 0);
	assert_int_equal(merge_held_back_ns(NS_SERVER_OBS, r, &m), 0);
	/* Sent before the return: timed, and not held back. */
	u.app_done = 25600;
	r = merge_transaction(NS_SERVER, &k, &u, &m);
	assert_int_equal(r, MERGE_OK);
	assert_int_equal(merge_held_back_ns(NS_SERVER, r, &m), 0);
	/* Out of order before it (TCP_RX after DATA_READY): not held back. */
	u.app_done = 6000;
	k.t[NS_B_TCP_RX] = 500;
	r = merge_transaction(NS_SERVER, &k, &u, &m);
	assert_int_equal(r, MERGE_DISORDER);
	assert_int_equal(m.bad, NS_B_DATA_READY);
	assert_int_equal(merge_held_back_ns(NS_SERVER, r, &m), 0);
}

static void t_reader_that_beats_the_wakeup_call(void **state)
{
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	/* epoll_wait found the data 500 ns before sk_data_ready ran. */
	client_txn(&k, &u);
	u.epoll_ret = 11500;
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m), MERGE_OK);
	assert_int_equal(m.b[NS_B_DATA_READY], 11500);
	assert_int_equal(m.stage[4], 500);	/* tcp_rx */
	assert_int_equal(m.stage[5], 0);	/* wakeup */
	assert_int_equal(sum(&m, NS_CLIENT), u.app_done - u.app_send);
	/* ... or consumed it before sk_data_ready was called at all. */
	client_txn(&k, &u);
	k.t[NS_B_DATA_READY] = 0;
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m), MERGE_OK);
	assert_int_equal(m.b[NS_B_DATA_READY], u.epoll_ret);
}

static void t_blocking_io_has_no_epoll_stage(void **state)
{
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	client_txn(&k, &u);
	u.epoll_ret = 0;
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m), MERGE_OK);
	assert_int_equal(m.stage[5], 0);	/* wakeup collapses */
	assert_int_equal(m.stage[6], 16000 - 12000);	/* all in recv */
	assert_int_equal(sum(&m, NS_CLIENT), u.app_done - u.app_send);
}

/*
 * A packet that held no departure time gives its message no TCP_SEND:
 * incomplete, at that boundary, never folded into a neighbour.
 */
static void t_a_missing_tcp_send_is_incomplete(void **state)
{
	struct ns_krecord k;
	struct ustamps u = { 0 };
	struct merged m;

	client_txn(&k, &u);
	k.t[NS_B_TCP_SEND] = 0;
	assert_int_equal(merge_transaction(NS_CLIENT, &k, &u, &m),
			 MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_TCP_SEND);
	server_txn(&k, &u);
	k.t[NS_B_TCP_SEND] = 0;
	assert_int_equal(merge_transaction(NS_SERVER, &k, &u, &m),
			 MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_TCP_SEND);
}

static void t_records_match_transactions_by_flow_and_seq(void **state)
{
	const uint64_t seqs[3] = { 0, 7, 8 };
	struct trace_worker tw, *one[1] = { &tw };
	struct ustamps u = { 0 };
	struct flow f = { .id = 3 };
	int i, out = 0;

	memset(&tw, 0, sizeof(tw));
	tw.side = NS_CLIENT;
	tw.max_recs = 2;
	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&tw.stage[i]);
	/* Transaction 0: its record. */
	client_txn(&tw.rec, &u);
	tw.rec.flow_id = 3;
	tw.rec.seq = 0;
	tw.have = 1;
	trace_worker_take(&tw, &f, &u);
	assert_int_equal(tw.complete, 1);
	assert_int_equal(f.tr_seq, 1);
	/* Transaction 1: the record was lost. */
	trace_worker_take(&tw, &f, &u);
	assert_int_equal(tw.norecord, 1);
	assert_int_equal(f.tr_seq, 2);
	/* A record of another flow is not this transaction's. */
	tw.rec.flow_id = 4;
	tw.have = 1;
	trace_worker_take(&tw, &f, &u);
	assert_int_equal(tw.norecord, 2);
	/* The kernel numbered on (seq 7): follow it. */
	tw.rec.flow_id = 3;
	tw.rec.seq = 7;
	tw.have = 1;
	trace_worker_take(&tw, &f, &u);
	assert_int_equal(tw.complete, 2);
	assert_int_equal(f.tr_seq, 8);
	/*
	 * Past max_recs the records kept are those of lowest priority
	 * (a hash of flow and seq); histograms count every one.
	 */
	tw.rec.seq = 8;
	tw.have = 1;
	trace_worker_take(&tw, &f, &u);
	assert_int_equal(tw.complete, 3);
	assert_int_equal(tw.offered, 3);
	assert_int_equal(trace_keep(one, 1, 2), 3);
	assert_int_equal(tw.nrecs, 2);
	assert_int_equal(tw.stage[2].count, 3);
	assert_int_equal(tw.stage[2].min, 7000);
	/* The one left out is the one of highest priority. */
	for (i = 1; i < 3; i++)
		if (trace_rec_priority(NS_CLIENT, 3, seqs[i], 0, -1) >
		    trace_rec_priority(NS_CLIENT, 3, seqs[out], 0, -1))
			out = i;
	for (i = 0; i < 2; i++)
		assert_true(tw.recs[i].seq != seqs[out]);
	trace_worker_free(&tw);
}

/* A lean client record of flow, seq: RECV_RET is the worker's. */
static void lean_rec(struct ns_krecord *k, struct ustamps *u, uint32_t flow,
		     uint32_t seq)
{
	client_txn(k, u);
	k->t[NS_B_RECV_RET] = 0;
	u->recv_ret = 16000;
	k->flow_id = flow;
	k->seq = seq;
}

/*
 * --trace-max-records: both ends keep the same transactions (so their
 * records still join), as many as the limit, whatever the run's length,
 * and in flow and sequence order.
 */
/* The records kept for being slow, dropped: what is left is the sample. */
static void drop_slowest(struct trace_worker *tw)
{
	long i, k = 0;

	for (i = 0; i < tw->nrecs; i++)
		if (!tw->recs[i].slowest)
			tw->recs[k++] = tw->recs[i];
	tw->nrecs = k;
}

/* BPF's put_krec(): message m's kernel stamps into its slot, seq last. */
static void slot_put(struct ns_krec *kr, uint32_t mask, uint32_t m,
		     uint64_t dev_xmit)
{
	static const uint8_t kb[NS_K_COUNT] = NS_K_TO_B;
	struct ns_krec *s = &kr[m & mask];
	struct ustamps u = { 0 };
	struct ns_krecord k;
	int i;

	lean_rec(&k, &u, 0, m);
	k.t[NS_B_DEV_XMIT] = dev_xmit;
	for (i = 0; i < NS_K_COUNT; i++)
		s->t[i] = k.t[kb[i]];
	s->seq = (uint64_t)m + 1;
}

/* A client worker of lean records, two slots a flow. */
static void lean_worker(struct trace_worker *tw)
{
	int i;

	memset(tw, 0, sizeof(*tw));
	tw->side = NS_CLIENT;
	tw->krec_mask = 1;
	tw->late = calloc(TRACE_WAITING, sizeof(*tw->late));
	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&tw->stage[i]);
}

/*
 * Lean tcp_rr records in the flow's slots instead of a ring: taken when
 * whole (seq m + 1), waited for while BPF writes them (seq 0), and a
 * transaction whose slot a later one took never gets its own.
 */
static void t_lean_records_in_flow_slots(void **state)
{
	struct ns_krec kr[2];
	struct flow f = { .id = 1, .kr = kr }, nowhere = { .id = 2 };
	struct trace_worker tw;
	struct ns_krecord k;
	struct ustamps u = { 0 };
	int i;

	memset(kr, 0, sizeof(kr));
	lean_worker(&tw);
	lean_rec(&k, &u, 1, 0);
	/* There before its transaction is done: taken at once. */
	slot_put(kr, 1, 0, 3000);
	trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.complete, 1);
	/* tcp_tx: DEV_XMIT - TCP_SEND; to_app from the worker's RECV_RET. */
	assert_int_equal(tw.stage[1].max, 1000);
	assert_int_equal(tw.stage[7].min, 1000);
	/* Being written as the worker looks: it waits, taken once whole. */
	slot_put(kr, 1, 1, 3001);
	kr[1].seq = 0;
	trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.complete, 1);
	assert_int_equal(tw.nlate, 1);
	kr[1].seq = 2;
	slot_put(kr, 1, 2, 3002);
	trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.complete, 3);
	assert_int_equal(tw.nlate, 0);
	assert_int_equal(tw.stage[1].max, 1002);
	/* 3 and 4 done before their records; 5's takes 3's slot. */
	trace_worker_take_lean(&tw, &f, &u);
	trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.nlate, 2);
	slot_put(kr, 1, 4, 3004);
	slot_put(kr, 1, 5, 3005);
	trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.complete, 5);
	assert_int_equal(tw.norecord, 1);
	assert_int_equal(tw.nlate, 0);
	assert_int_equal(tw.stage[1].max, 1005);
	/*
	 * Records that never come (BPF's programs returning at once): no
	 * more wait than the flow's slots, and the wait is the flow's own.
	 */
	for (i = 0; i < 300; i++)
		trace_worker_take_lean(&tw, &f, &u);
	assert_int_equal(tw.nlate, 2);
	assert_int_equal(f.nlate, 2);
	assert_int_equal(tw.norecord, 1 + 298);
	/* A flow past the end's slots has none. */
	trace_worker_take_lean(&tw, &nowhere, &u);
	assert_int_equal(tw.norecord, 1 + 298 + 1);
	assert_int_equal(tw.nlate, 2);
	trace_worker_end(&tw);
	assert_int_equal(tw.complete + tw.norecord, f.tr_seq + nowhere.tr_seq);
	trace_worker_free(&tw);
}

/*
 * Many flows' transactions done before their records: no more than
 * TRACE_WAITING wait (the oldest give way), and a flow whose records
 * come takes its own, whichever others wait.
 */
static void t_lean_waiting_is_bounded_across_flows(void **state)
{
	enum { NF = 150 };
	static struct ns_krec kr[NF][2];
	struct flow f[NF];
	struct trace_worker tw;
	struct ustamps u = { 0 };
	struct ns_krecord k;
	uint64_t done = 0;
	int i, r;

	memset(kr, 0, sizeof(kr));
	lean_worker(&tw);
	for (i = 0; i < NF; i++)
		f[i] = (struct flow){ .id = i, .kr = kr[i] };
	lean_rec(&k, &u, 0, 0);
	/* 300 would wait: flows 0-43's first transactions give way. */
	for (r = 0; r < 2; r++)
		for (i = 0; i < NF; i++)
			trace_worker_take_lean(&tw, &f[i], &u);
	assert_int_equal(tw.nlate, TRACE_WAITING);
	assert_int_equal(tw.norecord, 2 * NF - TRACE_WAITING);
	assert_int_equal(f[0].nlate, 1);
	assert_int_equal(f[NF - 1].nlate, 2);
	/* The last flow's two records come; its third is done first. */
	slot_put(kr[NF - 1], 1, 0, 3000);
	slot_put(kr[NF - 1], 1, 1, 3001);
	trace_worker_take_lean(&tw, &f[NF - 1], &u);
	assert_int_equal(tw.complete, 2);
	assert_int_equal(tw.stage[1].max, 1001);
	assert_int_equal(f[NF - 1].nlate, 1);
	assert_int_equal(f[0].nlate, 1);
	/* The run is over: those still waiting never got theirs. */
	trace_worker_end(&tw);
	assert_int_equal(tw.complete, 2);
	assert_int_equal(tw.nlate, 0);
	for (i = 0; i < NF; i++)
		done += f[i].tr_seq;
	assert_int_equal(tw.complete + tw.norecord, done);
	trace_worker_free(&tw);
}

static void t_both_ends_keep_the_same_sample(void **state)
{
	struct trace_worker ends[2], *one[1];
	struct merged m = { 0 };
	uint64_t seq;
	int e, flow;

	for (e = 0; e < 2; e++) {
		memset(&ends[e], 0, sizeof(ends[e]));
		ends[e].side = e ? NS_SERVER : NS_CLIENT;
		ends[e].max_recs = 500;
		ends[e].max_slow = 5;
		for (flow = 0; flow < 3; flow++)
			for (seq = 0; seq < 4000; seq++)
				trace_worker_account(&ends[e], MERGE_OK, &m,
						     flow, seq, 0, -1);
		one[0] = &ends[e];
		assert_int_equal(trace_keep(one, 1, 300), 12000);
		/* 297 sampled, 3 (1%) of the slowest: all spans are 0 here,
		 * so any 3 not sampled. */
		assert_int_equal(ends[e].nrecs, 300);
		drop_slowest(&ends[e]);
		assert_int_equal(ends[e].nrecs, 297);
	}
	for (e = 0; e < 297; e++) {
		assert_int_equal(ends[0].recs[e].flow_id, ends[1].recs[e].flow_id);
		assert_int_equal(ends[0].recs[e].seq, ends[1].recs[e].seq);
		if (e)
			assert_true(ends[0].recs[e - 1].flow_id <
					    ends[0].recs[e].flow_id ||
				    ends[0].recs[e - 1].seq <
					    ends[0].recs[e].seq);
	}
	/* A sample of the whole run: its last quarter is in it too. */
	for (seq = 0, e = 0; e < 297; e++)
		if (ends[0].recs[e].seq >= 3000)
			seq++;
	assert_true(seq > 297 / 4 / 2);
	trace_worker_free(&ends[0]);
	trace_worker_free(&ends[1]);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * Bottom-k exactly: of 4000 transactions offered to 100 places, those
 * kept are the 100 of lowest priority, each still holding its own
 * record (span and sequence number together), and the 10 slowest
 * places hold the 10 longest. Offered from the highest priority down,
 * the worst order: each one displaces the highest kept.
 */
struct by_prio { uint64_t prio, seq; };

static int by_prio_desc(const void *pa, const void *pb)
{
	const struct by_prio *a = pa, *b = pb;

	return a->prio > b->prio ? -1 : a->prio < b->prio;
}

static void t_kept_are_exactly_the_lowest_priorities(void **state)
{
	uint64_t prio[4000], seq, low = 0;
	struct trace_worker w, *one[1] = { &w };
	struct by_prio order[4000];
	struct merged m = { 0 };
	long i, j;

	memset(&w, 0, sizeof(w));
	w.side = NS_CLIENT;
	w.max_recs = 100;
	w.max_slow = 10;
	for (seq = 0; seq < 4000; seq++) {
		prio[seq] = trace_rec_priority(NS_CLIENT, 1, seq, 0, -1);
		order[seq] = (struct by_prio){ prio[seq], seq };
	}
	qsort(order, 4000, sizeof(*order), by_prio_desc);
	for (i = 0; i < 4000; i++) {
		seq = order[i].seq;
		/* Spans 0..3999 in no order (7919 is prime). */
		m.total = (seq * 7919) % 4000;
		trace_worker_account(&w, MERGE_OK, &m, 1, seq, 0, -1);
		/*
		 * At every step the 100 lowest so far (the last offered)
		 * are in the store, and none twice.
		 */
		for (j = 0, low = 0; i >= 99 && j < w.keep.used; j++)
			low += w.keep.rec[j].prio <= order[i - 99].prio;
		assert_int_equal(low, i >= 99 ? 100 : 0);
		assert_true(w.keep.used <= w.keep.cap);
	}
	low = 0;
	qsort(prio, 4000, sizeof(*prio), cmp_u64);
	for (i = 0; i < w.keep.used; i++) {
		low += w.keep.rec[i].prio <= prio[99];
		assert_int_equal(w.keep.rec[i].prio,
				 trace_rec_priority(NS_CLIENT, 1,
						    w.keep.rec[i].seq, 0, -1));
		assert_int_equal(w.keep.rec[i].span,
				 (w.keep.rec[i].seq * 7919) % 4000);
	}
	assert_int_equal(low, 100);
	assert_int_equal(w.nslow, 10);
	for (i = 0; i < w.nslow; i++) {
		assert_true(w.slow[i].span >= 3990);
		assert_int_equal(w.slow[i].span, (w.slow[i].seq * 7919) % 4000);
	}
	/*
	 * One worker past the limit keeps the slowest apart too: the 99
	 * lowest priorities, and the longest of the rest marked, in
	 * sequence order.
	 */
	assert_int_equal(trace_keep(one, 1, 100), 4000);
	assert_int_equal(w.nrecs, 100);
	for (i = 0, low = 0; i < w.nrecs; i++) {
		if (w.recs[i].slowest) {
			low++;
			assert_int_equal(w.recs[i].span, 3999);
			assert_true(w.recs[i].prio > prio[98]);
		} else {
			assert_true(w.recs[i].prio <= prio[98]);
		}
		if (i)
			assert_true(w.recs[i].seq > w.recs[i - 1].seq);
	}
	assert_int_equal(low, 1);
	trace_worker_free(&w);
}

/*
 * An observer names a request by its client port and its first byte's
 * offset in the stream (BPF's rx_off); a client by its port and its
 * number times the request's size. 16 connections of 1000 seven-byte
 * requests each, 1600 kept: both ends keep the same ones, and the
 * sample is of every connection, not of the few whose port hashes low.
 */
static void t_an_observer_keeps_what_the_client_keeps(void **state)
{
	struct trace_worker end[2], *one[1];
	static uint64_t prio[2][1584];
	struct merged m = { 0 };
	long per_port[16] = { 0 }, i;
	uint64_t seq;
	int e, port;

	for (e = 0; e < 2; e++) {
		memset(&end[e], 0, sizeof(end[e]));
		end[e].side = e ? NS_SERVER_OBS : NS_CLIENT;
		end[e].max_recs = 1600;
		for (port = 0; port < 16; port++)
			for (seq = 0; seq < 1000; seq++)
				/* The observer numbers from where it met
				 * the connection: not the client's seq. */
				trace_worker_account(&end[e], MERGE_OK, &m,
						     e ? 0 : (uint32_t)port,
						     e ? seq + 40 : seq,
						     (uint16_t)(40000 + port),
						     (int64_t)seq * 7);
		one[0] = &end[e];
		assert_int_equal(trace_keep(one, 1, 1600), 16000);
		/* 1% of the limit is for the slowest, none here. */
		assert_int_equal(end[e].nrecs, 1584);
		for (i = 0; i < 1584; i++)
			prio[e][i] = end[e].recs[i].prio;
		qsort(prio[e], 1584, sizeof(prio[e][0]), cmp_u64);
	}
	for (i = 0; i < 1584; i++) {
		assert_int_equal(prio[0][i], prio[1][i]);
		per_port[end[0].recs[i].port - 40000]++;
	}
	/* 99 a connection expected: binomial, sd under 10. */
	for (port = 0; port < 16; port++) {
		assert_true(per_port[port] > 60);
		assert_true(per_port[port] < 140);
	}
	trace_worker_free(&end[0]);
	trace_worker_free(&end[1]);
}

/*
 * tcp_crr names a transaction by its connection's port: one port, one
 * priority for all. A tie does not displace what is kept: the first
 * 100 stay.
 */
static void t_ties_keep_the_earlier(void **state)
{
	struct trace_worker w, *one[1] = { &w };
	struct merged m = { 0 };
	long i;

	memset(&w, 0, sizeof(w));
	w.side = NS_CLIENT_CRR;
	w.max_recs = 100;
	for (i = 0; i < 1000; i++)
		trace_worker_account(&w, MERGE_OK, &m, 1, i, 5, 0);
	assert_int_equal(trace_keep(one, 1, 100), 1000);
	assert_int_equal(w.nrecs, 100);
	for (i = 0; i < 100; i++)
		assert_true(w.recs[i].seq < 100);
	trace_worker_free(&w);
}

/*
 * Past the limit, the run's slowest are kept whole besides the sample:
 * the 1% of the limit longest, over every worker, marked as such.
 */
static void t_the_slowest_are_kept(void **state)
{
	struct trace_worker w[2], *both[2] = { &w[0], &w[1] };
	struct merged m = { 0 };
	uint64_t seq, found = 0;
	long i;
	int k;

	for (k = 0; k < 2; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		w[k].side = NS_CLIENT;
		w[k].id = k;
		w[k].max_recs = 1000;
		w[k].max_slow = 10;
		/* Spans of 1 to 5000.5 us, the two workers' interleaved:
		 * the run's 10 longest are 4996 us and up, 5 on each. */
		for (seq = 1; seq <= 5000; seq++) {
			m.total = seq * 1000 + (seq % 2 == (uint64_t)k ? 0 : 500);
			trace_worker_account(&w[k], MERGE_OK, &m, k, seq, 0, -1);
		}
	}
	assert_int_equal(trace_keep(both, 2, 1000), 10000);
	for (k = 0; k < 2; k++)
		for (i = 0; i < w[k].nrecs; i++) {
			const struct trace_rec *r = &w[k].recs[i];

			if (r->span >= 4996000)
				found++;
			if (r->slowest)
				assert_true(r->span >= 4996000);
			if (i)
				assert_true(r->seq > w[k].recs[i - 1].seq);
		}
	/* Every one of the 10 longest is kept. */
	assert_int_equal(found, 10);
	assert_true(w[0].nrecs + w[1].nrecs <= 1000);
	trace_worker_free(&w[0]);
	trace_worker_free(&w[1]);
}

/*
 * observe: every boundary is the kernel's. A thread whose last poll
 * return came before the request did not wait for it: POLL_RET is 0 in
 * the record and collapses onto DATA_READY (wakeup 0).
 */
static void t_observed_server_stages(void **state)
{
	struct ustamps u = { 0 };
	struct ns_krecord k = { 0 };
	struct merged m;

	k.t[NS_B_NETIF_RX] = 100;
	k.t[NS_B_TCP_RX] = 300;
	k.t[NS_B_DATA_READY] = 600;
	k.t[NS_B_POLL_RET] = 1000;
	k.t[NS_B_RECV_RET] = 1500;
	k.t[NS_B_TCP_SEND] = 2100;
	k.t[NS_B_DEV_XMIT] = 2800;
	k.t[NS_B_SEND_RET] = 3600;
	assert_int_equal(merge_transaction(NS_SERVER_OBS, &k, &u, &m),
			 MERGE_OK);
	assert_int_equal(stage_count(NS_SERVER_OBS), 7);
	assert_int_equal(m.stage[2], 400);	/* wakeup */
	assert_int_equal(m.stage[3], 500);	/* recv_call */
	assert_int_equal(m.stage[4], 600);	/* app */
	assert_int_equal(m.stage[6], 800);	/* send_return */
	assert_int_equal(sum(&m, NS_SERVER_OBS), 3500);
	assert_int_equal(m.total, 3500);
	k.t[NS_B_POLL_RET] = 0;
	assert_int_equal(merge_transaction(NS_SERVER_OBS, &k, &u, &m),
			 MERGE_OK);
	assert_int_equal(m.stage[2], 0);
	assert_int_equal(m.stage[3], 900);
	assert_int_equal(sum(&m, NS_SERVER_OBS), 3500);
	/* A poll return before the wake-up call: the data was seen then. */
	k.t[NS_B_POLL_RET] = 450;
	assert_int_equal(merge_transaction(NS_SERVER_OBS, &k, &u, &m),
			 MERGE_OK);
	assert_int_equal(m.b[NS_B_DATA_READY], 450);
	assert_int_equal(m.stage[1], 150);
	assert_int_equal(m.stage[2], 0);
	/* No SEND_RET (the record went at close): incomplete, not guessed. */
	k.t[NS_B_SEND_RET] = 0;
	assert_int_equal(merge_transaction(NS_SERVER_OBS, &k, &u, &m),
			 MERGE_MISSING);
	assert_int_equal(m.bad, NS_B_SEND_RET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_observed_server_stages),
		cmocka_unit_test(t_each_side_is_a_chain_of_stages),
		cmocka_unit_test(t_kernel_stages_of_a_side_are_consecutive),
		cmocka_unit_test(t_client_stages_are_exact),
		cmocka_unit_test(t_sched_splits_the_wakeup),
		cmocka_unit_test(t_open_loop_starts_at_the_intended_send),
		cmocka_unit_test(t_server_stages_are_exact),
		cmocka_unit_test(t_missing_kernel_boundary_is_incomplete),
		cmocka_unit_test(t_reordered_boundaries_are_incomplete),
		cmocka_unit_test(t_a_response_held_back_is_timed_apart),
		cmocka_unit_test(t_reader_that_beats_the_wakeup_call),
		cmocka_unit_test(t_blocking_io_has_no_epoll_stage),
		cmocka_unit_test(t_a_missing_tcp_send_is_incomplete),
		cmocka_unit_test(t_records_match_transactions_by_flow_and_seq),
		cmocka_unit_test(t_lean_records_in_flow_slots),
		cmocka_unit_test(t_lean_waiting_is_bounded_across_flows),
		cmocka_unit_test(t_both_ends_keep_the_same_sample),
		cmocka_unit_test(t_kept_are_exactly_the_lowest_priorities),
		cmocka_unit_test(t_an_observer_keeps_what_the_client_keeps),
		cmocka_unit_test(t_ties_keep_the_earlier),
		cmocka_unit_test(t_the_slowest_are_kept),
	};

	return cmocka_run_group_tests_name("merge", tests, NULL, NULL);
}
