/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A transaction's record handed to the worker that owns the socket: by
 * ring, or lean, into the flow's slot of the mapped `krecs`.
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_RECORD_BPF_H
#define NETSTAGE_RECORD_BPF_H

/* The worker running this thread, or NS_NO_WORKER. */
static __always_inline __u32 this_worker(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), *w;

	w = bpf_map_lookup_elem(&threads, &tid);
	return w ? *w : NS_NO_WORKER;
}

/* observe: where a forwarder sent this connection's request on, if on. */
static __always_inline __u16 next_port(const struct ns_sk *st)
{
	__u32 client = st->flow_id;
	__u16 *p, port;

	/* A server that forwards nothing pays no lookup. */
	if (!NS_IS_OBS(side) || !forwarding)
		return 0;
	p = bpf_map_lookup_elem(&next_ports, &client);
	if (!p)
		return 0;
	port = *p;
	bpf_map_delete_elem(&next_ports, &client);
	return port;
}

static __always_inline void sched_stamps(struct ns_krecord *r, __u32 worker)
{
	struct obs_task *t;
	struct wsched *w;

	r->held_pid = 0;
	r->held_cpu = 0;
	r->held_comm[0] = 0;
	if (!sched)
		return;
	if (NS_IS_OBS(side)) {
		/* Its slot has WOKEN and ON_CPU; this thread read it. */
		t = bpf_task_storage_get(&obs_tasks,
					 bpf_get_current_task_btf(), 0, 0);
		if (!t)
			return;
		r->held_pid = t->read_held_pid;
		r->held_cpu = t->read_held_cpu;
		__builtin_memcpy(r->held_comm, t->read_held_comm,
				 sizeof(r->held_comm));
		return;
	}
	w = bpf_map_lookup_elem(&wscheds, &worker);
	if (!w)
		return;
	r->t[NS_B_WOKEN] = w->woken;
	r->t[NS_B_ON_CPU] = w->on_cpu;
	r->held_pid = w->held_pid;
	r->held_cpu = w->held_cpu;
	__builtin_memcpy(r->held_comm, w->held_comm, sizeof(r->held_comm));
}

/* A record of that end that could not reach its worker. */
static __always_inline void count_lost(__u32 end)
{
	bump(&lost, end);
}

/*
 * Lean records: message m's stamps into its flow's slot, where its
 * worker reads them; seq last, each write of it a full barrier.
 */
static __always_inline void put_krec(const struct ns_sk *st, __u32 m,
				     const __u64 *sl)
{
	__u32 k = (st->widx - 1) * (krec_mask + 1) + (m & krec_mask);
	struct ns_krec *r = NULL;
	int i;

	if (st->widx)
		r = bpf_map_lookup_elem(&krecs, &k);
	if (!r) {
		count_lost(st->side & 1);
		return;
	}
	__sync_lock_test_and_set(&r->seq, 0);
	for (i = 0; i < NS_K_COUNT; i++)
		r->t[i] = sl[i];
	__sync_lock_test_and_set(&r->seq, (__u64)m + 1);
}

/*
 * Message m's record into its worker's ring, its slot left as it is;
 * with the scheduler's stamps (`sched`) or without.
 */
static __always_inline void ring_record(struct ns_sk *st, __u32 m,
					__u32 worker, int sched)
{
	struct ns_krecord *r;
	__u64 *sl = slot(st, m);
	void *ring;
	int i;

	ring = bpf_map_lookup_elem(&rings, &worker);
	r = ring ? bpf_ringbuf_reserve(ring, sizeof(*r), 0) : NULL;
	if (!r) {
		count_lost(st->side & 1);
		return;
	}
	r->flow_id = st->flow_id;
	r->side = st->side;
	r->next_port = next_port(st);
	r->port = st->port;
	r->seq = m;
	r->rx_off = st->rx_off[NS_SLOT(m)];
	for (i = 0; i < NS_B_COUNT; i++)
		r->t[i] = 0;
	for (i = 0; i < NS_K_COUNT; i++)
		r->t[kb[i]] = sl[i];
	if (sched)
		sched_stamps(r, worker);
	/* The worker polls its ring after each transaction: no wake-up. */
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * Hand transaction m to its worker and free its slot. It ends in the
 * worker's own recv or send: a socket BPF made storage for learns its
 * worker here.
 */
static __always_inline void emit(struct ns_sk *st, __u32 m)
{
	__u32 worker = st->worker;
	__u64 *sl = slot(st, m);

	if (worker == NS_NO_WORKER)
		st->worker = worker = this_worker();

	if (hist_mode) {
		account(st, m);
		goto done;
	}
	if (krec_mask) {
		put_krec(st, m, sl);
		goto done;
	}
	ring_record(st, m, worker, 1);
done:
	clear_slot(sl);
}

#endif
