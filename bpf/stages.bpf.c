// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel side of netstage --trace: stamp each registered socket's
 * transaction at the kernel boundaries of bpf/stages.h and hand one
 * record per transaction to the worker that owns the socket. TCP's
 * receive and send are timed by TCP's own clock reads, taken where the
 * wake-up call and the device hand-off run: no program of their own.
 *
 * Only sockets user space registered in `socks` are traced: every other
 * socket costs one failed storage lookup. Several messages can be in
 * flight on a socket (--burst): each has its slot, by its number in the
 * stream, found from TCP sequence numbers, never from the order events
 * happen to come in. A packet's arrival is netif_receive_skb's time of
 * it, which one small program keeps for every packet (by sequence
 * number, or a datagram's skb) and TCP or UDP looks up where it has the
 * socket: a copy dropped on its way to the socket cannot time a
 * message, its retransmission does.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "hist_layout.h"
#include "msgnum.h"
#include "stages.h"

char LICENSE[] SEC("license") = "GPL";

#include "config.bpf.h"
#include "maps.bpf.h"
#include "slots.bpf.h"
#include "record.bpf.h"
#include "arrival.bpf.h"
#include "udp.bpf.h"

/* Every packet of the machine: the clock first. */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(netif_receive_skb, struct sk_buff *skb)
{
	__u64 now;

	if (empty)
		return 0;
	now = bpf_ktime_get_ns();
	note_arrival(skb, now);
	return 0;
}

/*
 * tcp_crr: storage for a connection of the data port, made by BPF, at
 * its client or its server. Its worker is known at its first record;
 * user space numbers its records.
 */
static __always_inline struct ns_sk *new_storage(const struct sock *sk,
						 int server)
{
	struct ns_sk *st;

	if (NS_IS_OBS(side) &&
	    (!obs_ready || BPF_CORE_READ(sk, __sk_common.skc_net.net,
					 ns.inum) != observe_netns))
		return NULL;
	st = bpf_sk_storage_get(&socks, (struct sock *)sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return NULL;
	st->side = server ? side | 1 : side & ~1;
	/* Both ends name a connection by its client port (records, join). */
	st->port = server ? bpf_ntohs(sk->__sk_common.skc_dport)
			  : sk->__sk_common.skc_num;
	/* observe: one ring, and the connection is the flow. */
	st->worker = NS_IS_OBS(side) ? 0 : NS_NO_WORKER;
	st->flow_id = NS_IS_OBS(side) ? st->port : NS_NO_FLOW;
	return st;
}

/*
 * At a wake-up call, the segment just queued: the receive queue's tail
 * skb, and its first byte's sequence number and the one after its last
 * (TCP's control block). NULL: the queue is empty.
 */
static __always_inline const struct sk_buff *
tail_range(const struct sock *sk, __u32 *seq, __u32 *end_seq)
{
	const struct sk_buff *tail =
		ro_cast(sk, struct sock)->sk_receive_queue.prev;
	const struct tcp_skb_cb *cb;

	if ((void *)tail == (void *)&sk->sk_receive_queue)
		return NULL;
	cb = ro_cast(tail->cb, struct tcp_skb_cb);
	*seq = cb->seq;
	*end_seq = cb->end_seq;
	return tail;
}

/*
 * Did a segment come out of order since the last wake-up, or does TCP
 * still hold some so? Then what this wake-up made readable may have
 * arrived long before TCP took it in order, possibly over several
 * wake-ups as holes fill: its messages go untimed.
 */
static __always_inline int out_of_order(const struct tcp_sock *tp,
					struct ns_sk *st)
{
	int ooo = tp->rcv_ooopack != st->rx_ooo || st->ooo_held;

	st->rx_ooo = tp->rcv_ooopack;
	st->ooo_held = tp->out_of_order_queue.rb_node != NULL;
	return ooo;
}

/*
 * One wake-up's messages, as tcp_ready() found them: what each needs
 * to be stamped, by ready_msg().
 */
struct ready_walk {
	const struct sock *sk;
	struct ns_sk *st;
	const struct sk_buff *tail;	/* NULL: no message gets TCP_RX */
	__u64 end, rx, now;
	__u32 rcv_nxt, size, seq, end_seq;
};

static __always_inline void ready_walk(struct ready_walk *w,
				       const struct sock *sk, struct ns_sk *st,
				       __u64 now, int ooo)
{
	const struct tcp_sock *tp = ro_cast(sk, struct tcp_sock);

	w->sk = sk;
	w->st = st;
	w->now = now;
	w->size = rx_size[st->side & 1];
	w->end = tp->bytes_received;
	w->rx = tp->tcp_clock_cache;
	w->rcv_nxt = tp->rcv_nxt;
	w->seq = w->end_seq = 0;
	w->tail = ooo ? NULL : tail_range(sk, &w->seq, &w->end_seq);
}

static __always_inline void ready_msg(const struct ready_walk *w, __u32 m)
{
	struct ns_sk *st = w->st;
	__u32 first;
	__u64 *sl;

	if (!sampled(m))
		return;
	/* Every stamp set, none left from a slot's earlier message. */
	sl = slot(st, m);
	sl[NS_K_DATA_READY] = w->now;
	first = ns_first_seq(w->end, w->rcv_nxt, w->size, m);
	if (w->tail && ns_carries(w->seq, w->end_seq, first)) {
		sl[NS_K_TCP_RX] = w->rx;
		sl[NS_K_NETIF_RX] = tcp_arrival(w->sk, w->tail, first,
						w->end_seq, w->now);
	} else {
		sl[NS_K_TCP_RX] = sl[NS_K_NETIF_RX] = 0;
	}
	if (lean && !NS_IS_SERVER(st->side)) {
		if (hist_mode)
			st->hist_pending++;
		else
			emit(st, m);
		st->rx_msgs = m + 1;
	}
}

/*
 * many_ programs (a side of many messages in flight): a wake-up's
 * messages after its first, one a bpf_loop() step, which the verifier
 * checks once where a loop is checked once a message. The step finds
 * what it needs again in its own frame, from the few values it is
 * handed.
 */
struct ready_rest {
	const struct sock *sk;
	struct ns_sk *st;
	__u64 now;
	__u32 first, ooo;
};

static long ready_step(__u64 i, void *data)
{
	const struct ready_rest *r = data;
	struct ready_walk w;

	ready_walk(&w, r->sk, r->st, r->now, r->ooo);
	ready_msg(&w, r->first + 1 + (__u32)i);
	return 0;
}

/*
 * TCP receive without a program of its own. tcp_rcv_established reads
 * TCP's clock (tcp_clock_cache) as it takes a segment, before any work
 * on it, and calls this wake-up once it has queued it at the receive
 * queue's tail. Every message whose first byte that made readable gets
 * the clock read as TCP_RX, the tail's arrival as NETIF_RX and this
 * call as DATA_READY; a lean client's record goes now, its worker
 * matching it to its own stamps when it has read the response. A
 * message not in the tail (the segment that filled a hole before it),
 * or made readable while segments came out of order (out_of_order()),
 * gets no TCP_RX: incomplete, never timed from another packet's clock.
 */
static __always_inline int tcp_ready(const struct sock *sk, struct ns_sk *st,
				     __u64 now, const int many)
{
	const struct tcp_sock *tp;
	struct ready_walk w;
	struct ready_rest r;
	__u32 n, i, m = 0;
	int ooo;

	if (!sampled_ahead(st->rx_msgs))
		return 0;
	/*
	 * Storage not UDP's is a TCP socket's, and this program only reads
	 * it: a cast, not bpf_skc_to_tcp_sock()'s check (15 ns a wake-up
	 * call, bpf_stats).
	 */
	tp = ro_cast(sk, struct tcp_sock);
	ooo = out_of_order(tp, st);
	/* The messages that start before rcv_nxt, from the first unseen. */
	n = ns_readable(tp->bytes_received, rx_size[st->side & 1],
			ns_diff(st->rx_seen, st->rx_msgs) > 0 ?
			st->rx_seen : st->rx_msgs, batch, &m);
	if (!n)
		return 0;
	st->rx_seen = m + n;
	ready_walk(&w, sk, st, now, ooo);
	n = n < batch ? n : batch;
	if (!many) {
		for (i = 0; i < batch && i < n; i++)
			ready_msg(&w, m + i);
		return 0;
	}
	ready_msg(&w, m);
	if (n > 1) {
		r.sk = sk;
		r.st = st;
		r.now = now;
		r.first = m;
		r.ooo = ooo;
		bpf_loop(n - 1, ready_step, &r, 0);
	}
	return 0;
}

/*
 * observe: a request is what the server reads until it writes. The
 * first wake-up with new payload since its response began (rx_mark, or
 * since the handshake) starts the next one. Its first byte is the first
 * new one: the segment carrying it, if it is the queue's tail, gives
 * its arrival (the copy TCP took) and TCP's clock read, as for the
 * benchmark's sides (tcp_ready); a request begun out of order has
 * neither.
 */
static __always_inline int obs_wakeup(const struct sock *sk, struct ns_sk *st,
				      __u64 now)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	__u32 seq = 0, end_seq = 0, first;
	const struct sk_buff *tail;
	__u64 end, *sl;
	int ooo;

	if (!tp)
		return 0;
	end = tp->bytes_received;
	ooo = out_of_order(tp, st);
	if (st->rx_open || st->late || end <= st->rx_mark)
		return 0;
	sl = slot(st, st->rx_seen);
	clear_slot(sl);
	st->rx_open = 1;
	st->rx_off[NS_SLOT(st->rx_seen)] = (__u32)st->rx_mark;
	st->rx_seen++;
	sl[NS_K_DATA_READY] = now;
	first = tp->rcv_nxt - (__u32)(end - st->rx_mark);
	if (!ooo && (tail = tail_range(sk, &seq, &end_seq)) &&
	    ns_carries(seq, end_seq, first)) {
		sl[NS_K_TCP_RX] = tp->tcp_clock_cache;
		sl[NS_K_NETIF_RX] = tcp_arrival(sk, tail, first, end_seq,
						now);
	}
	return 0;
}

/*
 * observe: a connection of the port met after its handshake (it was
 * there before observe began) gets storage at its first wake-up, and
 * is timed from the request after the next response: it may be in the
 * middle of one.
 */
static __always_inline int obs_late(const struct sock *sk)
{
	struct ns_sk *st;

	if (sk->__sk_common.skc_num != data_port ||
	    sk->sk_protocol != IPPROTO_TCP ||
	    sk->__sk_common.skc_state != TCP_ESTABLISHED)
		return 0;
	st = new_storage(sk, 1);
	if (st)
		st->late = 1;
	return 0;
}

/*
 * A wake-up call, for the same slot: its socket, and how far its
 * receive queue reaches (TCP's next number; a datagram's skb), so that
 * the socket's next wake-up, for data queued since (a backlog's next
 * segment, well within RX_CLOCK_SAME_NS), is another.
 */
static __always_inline __u64 ready_id(const struct sock *sk)
{
	__u32 q;

	if (sk->sk_protocol == IPPROTO_TCP)
		q = ro_cast(sk, struct tcp_sock)->rcv_nxt;
	else
		q = low32(ro_cast(sk, struct sock)->sk_receive_queue.prev);
	return (__u64)low32(sk) << 32 | q;
}

/* TCP: the wake-up after a segment; UDP: after each datagram. */
static __always_inline int data_ready(const struct sock *sk, const int many)
{
	struct ns_sk *st;
	__u64 now;

	if (empty)
		return 0;
	/*
	 * DATA_READY: first thing, before the storage lookup, which a cold
	 * cache makes long (0.35 us of tcp_rx against the reference under
	 * --rate 5000). A clock read more for every other socket's wake-up.
	 * The call's first one on this CPU, as a packet's (first_clock()):
	 * another traced process's program on it ran before this one.
	 */
	now = first_clock(ready_id(sk), bpf_ktime_get_ns());
	st = lookup(sk);
	/* `side`, not st->side: the verifier drops these when not observing. */
	if (!st)
		return NS_IS_OBS(side) ? obs_late(sk) : 0;
	own(NS_P_DATA_READY);
	/* `side`: every socket of the run is of its workload's protocol. */
	if (NS_IS_UDP(side))
		return udp_ready(sk, st, now);
	if (NS_IS_OBS(side))
		return obs_wakeup(sk, st, now);
	return tcp_ready(sk, st, now, many);
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(sk_data_ready, const struct sock *sk)
{
	return data_ready(sk, 0);
}

/*
 * many: a side that keeps many messages in flight (--rate's 31) walks
 * them under bpf_loop() (tracer_hook_prog() chooses): a plain loop is
 * checked once a message, 28 ms of the verifier's time at 31.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(many_sk_data_ready, const struct sock *sk)
{
	return data_ready(sk, 1);
}

/* observe: the transaction whose response began goes to user space. */
static __always_inline void obs_emit(struct ns_sk *st)
{
	__u32 m = st->tx_begun - 1;

	count_done(1);
	st->tx_open = 0;
	st->tx_msgs = m + 1;
	emit(st, m);
}

/*
 * observe, as it stops: the record of each response still open (sent,
 * not yet ended by its connection's next read or close), as it stands;
 * user space counts those whose last stamp came before its end. The
 * response is closed here, so that the server's next read, while the
 * reader drains, does not send it again; only a read in the very
 * moment of this walk (its server runs on another CPU) can.
 */
SEC("iter/tcp")
int obs_flush(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	struct ns_sk *st;

	if (!NS_IS_OBS(side) || hist_mode || krec_mask || !skc)
		return 0;
	/*
	 * Every TCP socket of the walker's namespace, ours found by their
	 * storage. Not the storage map's own walk: kernels may refuse
	 * that iterator (6.18 here does, to root too); this one they take.
	 */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	st = bpf_sk_storage_get(&socks, tp, 0, 0);
	if (!st || !st->tx_open || !st->tx_begun)
		return 0;
	st->tx_open = 0;
	obs_count(NS_OBS_FLUSHED);
	ring_record(st, st->tx_begun - 1, 0, 0);
	return 0;
}

/*
 * --trace-sched, observe: the thread's last wake-up is this request's
 * if the merge finds it between its DATA_READY and POLL_RET; what held
 * its CPU then goes with the record, emitted at its next read.
 */
static __always_inline void obs_sched_read(struct obs_task *t, __u64 *sl)
{
	sl[NS_K_WOKEN] = t->sched.woken;
	sl[NS_K_ON_CPU] = t->sched.on_cpu;
	t->read_held_pid = t->sched.held_pid;
	t->read_held_cpu = t->sched.held_cpu;
	__builtin_memcpy(t->read_held_comm, t->sched.held_comm,
			 sizeof(t->read_held_comm));
}

/*
 * observe: a read of the request. Its first read takes the thread's
 * last epoll/poll return as POLL_RET, if that came after the request
 * did (else the thread did not wait for it); the last read before the
 * response is RECV_RET. The first read after a response ends that
 * transaction: its send has returned, in this very thread.
 */
static __always_inline int obs_read(struct ns_sk *st)
{
	struct obs_task *t;
	__u64 *sl;

	if (st->late)
		return 0;
	if (st->tx_open)
		obs_emit(st);
	if (!st->rx_open)
		return 0;
	sl = slot(st, st->rx_seen - 1);
	if (!sl[NS_K_RECV_RET]) {
		t = bpf_task_storage_get(&obs_tasks, bpf_get_current_task_btf(),
					 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t && sl[NS_K_TCP_RX] && t->poll_ret >= sl[NS_K_TCP_RX])
			sl[NS_K_POLL_RET] = t->poll_ret;
		if (t)
			t->reading = st->flow_id;
		if (t && sched)
			obs_sched_read(t, sl);
	}
	sl[NS_K_RECV_RET] = bpf_ktime_get_ns();
	return 0;
}

/*
 * observe: a send on a connection not observed, by a thread that read a
 * request: a forwarder passing it on. Its local port names the
 * connection on which the next hop's records are.
 */
static __always_inline int obs_forward(const struct sock *sk)
{
	struct obs_task *t;
	__u16 port;

	t = bpf_task_storage_get(&obs_tasks, bpf_get_current_task_btf(), 0,
				 0);
	if (!t || !t->reading)
		return 0;
	port = sk->__sk_common.skc_num;
	bpf_map_update_elem(&next_ports, &t->reading, &port, BPF_ANY);
	t->reading = 0;
	if (!forwarding)
		forwarding = 1;
	return 0;
}

/*
 * observe: the last send of the response is its SEND_RET. A connection
 * that closed inside the send (a reset by the peer, met as the send
 * released its socket) ends with it, failed or not.
 */
static __always_inline int obs_sent(struct ns_sk *st, int ret)
{
	st->sending = 0;
	if (st->tx_open && ret > 0)
		slot(st, st->tx_begun - 1)[NS_K_SEND_RET] =
			bpf_ktime_get_ns();
	if (st->tx_open == NS_TX_CLOSED)
		obs_emit(st);
	return 0;
}

/*
 * A recv (rx) or send of ret bytes on the socket. The call that brings
 * the message to its size stamps RECV_RET or SEND_RET, and ends the
 * transaction of the side whose last call it is: a client's with the
 * response received, a server's with the response sent.
 */
static __always_inline int message_part(struct sock *sk, int ret, int rx)
{
	struct ns_sk *st = lookup(sk);
	__u32 end, *bytes, size, m;

	if (!st)
		return 0;
	own(rx ? NS_P_RECV : NS_P_SEND);
	if (NS_IS_OBS(side))
		return rx ? obs_read(st) : obs_sent(st, ret);
	end = st->side & 1;
	if (rx && NS_IS_UDP(side))
		udp_read(sk, st);
	bytes = rx ? &st->rx_bytes : &st->tx_bytes;
	size = rx ? rx_size[end] : tx_size[end];
	*bytes += ret;
	if (*bytes < size)
		return 0;
	*bytes = 0;
	m = rx ? rx_msg(st) : tx_msg(st);
	if (rx)
		st->rx_msgs++;
	else
		st->tx_msgs++;
	if (end == (rx ? NS_CLIENT : NS_SERVER))
		count_done(end);
	if (!sampled(m))
		return 0;
	slot(st, m)[rx ? NS_K_RECV_RET : NS_K_SEND_RET] = bpf_ktime_get_ns();
	if (end == (rx ? NS_CLIENT : NS_SERVER))
		emit(st, m);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sock_recv_length, struct sock *sk, int ret, int flags)
{
	if (empty)
		return 0;
	if (ret <= 0 || (flags & MSG_PEEK))
		return 0;
	return message_part(sk, ret, 1);
}

/*
 * observe: the first send after a request began is its response: the
 * request has ended, and the next one starts with the next new payload
 * (one request in flight per connection). A connection met mid-stream
 * is timed from here on.
 */
static __always_inline int obs_send(const struct sock *sk, struct ns_sk *st)
{
	struct tcp_sock *tp;
	__u32 m;

	if (!st->rx_open && !st->late)
		return 0;
	tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!tp)
		return 0;
	/* The next request starts past what has come in so far. */
	st->rx_mark = tp->bytes_received;
	if (st->late) {
		obs_count(NS_OBS_SKIPPED);
		st->late = 0;
		return 0;
	}
	st->rx_open = 0;
	m = st->rx_seen - 1;
	slot(st, m)[NS_K_TCP_SEND] = bpf_ktime_get_ns();
	st->tx_seq[NS_SLOT(m)] = tp->write_seq;
	st->tx_begun = m + 1;
	st->tx_open = 1;
	return 0;
}

/*
 * Inside tcp_sendmsg_locked, before it copies: write_seq is where the
 * bytes go. The first call of a message notes its first byte's number.
 */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tcp_sendmsg_locked, const struct sock *sk, const struct msghdr *msg,
	     const struct sk_buff *skb, int size_goal)
{
	struct ns_sk *st;

	if (empty)
		return 0;
	st = lookup(sk);
	if (st)
		own(NS_P_TCP_SEND);
	if (st && NS_IS_OBS(side))
		st->sending = 1;
	return st ? obs_send(sk, st) : obs_forward(sk);
}

/* The TCP header of a packet handed to a device. */
static __always_inline const struct tcphdr *xmit_th(const struct sk_buff *skb)
{
	return ro_cast((void *)((__u64)skb->head + skb->transport_header),
		       struct tcphdr);
}

/* The TCP payload bytes of a packet handed to a device (0: an ACK). */
static __always_inline __u32 xmit_payload(const struct sk_buff *skb,
					  __u32 *seq)
{
	__u64 head = (__u64)skb->head, data = (__u64)skb->data;
	const struct tcphdr *th = xmit_th(skb);
	__s64 len;

	len = (__s64)skb->len - (__s64)(head + skb->transport_header - data) -
	      th->doff * 4;
	*seq = bpf_ntohl(th->seq);
	return len > 0 ? len : 0;
}

/* Has message m's record gone? Its slot may hold a later message's. */
static __always_inline int handed_over(const struct ns_sk *st, __u32 m)
{
	return ns_diff(m, NS_IS_SERVER(st->side) ? st->tx_msgs
						 : st->rx_msgs) < 0;
}

/*
 * The departure time TCP gave a packet as it transmitted it
 * (tcp_write_xmit's clock read, kept in skb->tstamp on CLOCK_MONOTONIC
 * for the qdisc), which is the message's TCP_SEND. 0 if it holds none.
 */
static __always_inline __u64 tx_departure(const struct sk_buff *skb,
					  __u64 now)
{
	__s64 t = skb->tstamp;

	/* A CLOCK_REALTIME stamp lies decades past now. */
	return t > 0 && t <= now ? t : 0;
}

/*
 * Lean --trace=hist: the flow's stamps from its worker, read in the
 * very thread that writes them (or, any_thread, once the workers are
 * done), so never half-written. NULL: none to be had here.
 */
static __always_inline struct ns_wstamp *
read_wstamps(const struct ns_sk *st, int any_thread)
{
	__u32 k = st->widx - 1;
	struct ns_wstamp *u;

	if (!st->widx)
		return NULL;
	u = bpf_map_lookup_elem(&wstamps, &k);
	if (!u || (!any_thread &&
		   u->tid != (__u32)bpf_get_current_pid_tgid()))
		return NULL;
	return u;
}

/* Lean --trace=hist: message m's last boundary k is t (0: missing). */
static __always_inline void hist_done(struct ns_sk *st, __u32 m, int k,
				      __u64 t)
{
	__u64 *sl = slot(st, m);

	sl[k] = t;
	account(st, m);
	clear_slot(sl);
}

/*
 * Lean --trace=hist, client: the response its worker read last, if it
 * woke up for it and was sampled, is done at RECV_RET. A client sends
 * after each response it reads, or closes.
 */
static __always_inline void hist_client(struct ns_sk *st, int any_thread)
{
	struct ns_wstamp *u;
	__u32 r;

	if (!st->hist_pending)
		return;
	u = read_wstamps(st, any_thread);
	if (!u || !u->recv_n)
		return;
	r = u->recv_n - 1;
	if (!sampled(r) || !slot(st, r)[NS_K_DATA_READY])
		return;
	hist_done(st, r, NS_K_RECV_RET, u->recv_ret);
	st->hist_pending--;
}

/*
 * Lean --trace=hist, client: sampled request m takes its slot. A
 * response still there was never read before a send: incomplete.
 */
static __always_inline void hist_client_slot(struct ns_sk *st, __u32 m)
{
	__u64 *sl = slot(st, m);

	if (sl[NS_K_DATA_READY]) {
		count(st, 1);
		if (st->hist_pending)
			st->hist_pending--;
	}
	clear_slot(sl);
}

/*
 * Lean --trace=hist, server: response m goes to the device, inside its
 * worker's send. The response before it is done (its send returned)
 * at SEND_RET; request m was read whole at RECV_RET. Global, as
 * account(): checked once, not once per message of a packet.
 */
__noinline int hist_server(struct ns_sk *st, __u32 m)
{
	struct ns_wstamp *u;
	int prev;

	if (!st)
		return 0;
	prev = sampled(m - 1) && slot(st, m - 1)[NS_K_DEV_XMIT];
	if (!prev && !sampled(m))
		return 0;
	u = read_wstamps(st, 0);
	if (prev)
		hist_done(st, m - 1, NS_K_SEND_RET,
			  u && u->send_n == m ? u->send_ret : 0);
	if (sampled(m))
		slot(st, m)[NS_K_RECV_RET] =
			u && u->recv_n == m + 1 ? u->recv_ret : 0;
	return 0;
}

/*
 * Lean --trace=hist: the connection closes (a FIN or RST from a worker
 * or the thread that closes its flows, the workers done): the last
 * transaction is done.
 */
static __always_inline void hist_close(struct ns_sk *st)
{
	struct ns_wstamp *u;
	__u32 p;

	if (!NS_IS_SERVER(st->side)) {
		hist_client(st, 1);
		return;
	}
	u = read_wstamps(st, 1);
	if (!u || !u->send_n)
		return;
	p = u->send_n - 1;
	if (sampled(p) && slot(st, p)[NS_K_DEV_XMIT])
		hist_done(st, p, NS_K_SEND_RET, u->send_ret);
}

/*
 * lean: message m went to the device, a transaction's worth (its end
 * may not be seen), and what is known read moves on, as the length
 * hooks would count it: a server answering request m has read it, and
 * a client sending request m has read every response but the
 * `inflight` - 1 before it.
 */
static __always_inline void lean_sent(struct ns_sk *st, __u32 m)
{
	__u32 read = NS_IS_SERVER(st->side) ? m + 1 : m + 1 - inflight;

	count_done(st->side & 1);
	if (ns_diff(read, st->rx_msgs) > 0)
		st->rx_msgs = read;
}

/*
 * Sampled message m went to the device: this hand-off is its DEV_XMIT
 * (one clock read per packet, in *now), the packet's departure time
 * its TCP_SEND. A lean server's record goes now.
 */
static __always_inline void xmit_stamp(const struct sk_buff *skb,
				       struct ns_sk *st, __u32 m, __u64 *now)
{
	__u64 *sl = slot(st, m);

	if (lean && hist_mode && !NS_IS_SERVER(st->side))
		hist_client_slot(st, m);
	if (!*now)
		*now = bpf_ktime_get_ns();
	sl[NS_K_TCP_SEND] = tx_departure(skb, *now);
	sl[NS_K_DEV_XMIT] = *now;
	if (lean && NS_IS_SERVER(st->side)) {
		if (!hist_mode)
			emit(st, m);
		st->tx_msgs = m + 1;
	}
}

/* One hand-off's messages, as stream_xmit() found them. */
struct xmit_walk {
	const struct sk_buff *skb;
	struct ns_sk *st;
	__u64 now;		/* the clock, read at the first stamp */
	__u64 m;		/* the first message that starts in it */
};

static __always_inline void xmit_msg(struct xmit_walk *w, __u32 m)
{
	struct ns_sk *st = w->st;

	if (ns_diff(m, st->tx_xmit) < 0)
		return;
	st->tx_xmit = m + 1;
	if (lean)
		lean_sent(st, m);
	/* Full records: one whose record went keeps its slot clean. */
	else if (handed_over(st, m))
		return;
	if (sampled(m))
		xmit_stamp(w->skb, st, m, &w->now);
	/* After the stamps, which then do not hold its run time. */
	if (lean && hist_mode && NS_IS_SERVER(st->side))
		hist_server(st, m);
}

/* A hand-off's messages after its first under bpf_loop(), as ready_step(). */
static long xmit_step(__u64 i, void *data)
{
	struct xmit_walk *w = data;

	xmit_msg(w, (__u32)(w->m + 1 + i));
	return 0;
}

/*
 * TCP transmit without a program of its own. A packet's first byte is at
 * stream offset bytes_acked + (seq - snd_una). Every message that starts
 * in it and was not handed off before (tx_xmit: a retransmission carries
 * none) gets this hand-off as DEV_XMIT and the packet's departure time
 * as TCP_SEND; a lean server's record goes now. `many`: under
 * bpf_loop(), as tcp_ready().
 */
static __always_inline void stream_xmit(const struct sk_buff *skb,
					const struct sock *sk,
					struct ns_sk *st, const int many)
{
	__u32 seq = 0, len, size = tx_size[st->side & 1], n, i;
	const struct tcp_sock *tp;
	struct xmit_walk w = {}, c;
	__u64 off;

	len = xmit_payload(skb, &seq);
	if (!len || !size) {
		if (lean && hist_mode &&
		    (xmit_th(skb)->fin || xmit_th(skb)->rst))
			hist_close(st);
		return;
	}
	/* skb->sk is an RCU pointer, which bpf_skc_to_tcp_sock() refuses. */
	tp = ro_cast(sk, struct tcp_sock);
	off = tp->bytes_acked + ns_diff(seq, tp->snd_una);
	/*
	 * Nothing is sent before registration: the first payload handed
	 * off after it starts the stream. A connecting end's bytes_acked
	 * counts its SYN too.
	 */
	if (!st->tx_based) {
		st->tx_adj = off;
		st->tx_based = 1;
	}
	n = ns_starts(off - st->tx_adj, len, size, batch, &w.m);
	w.skb = skb;
	w.st = st;
	n = n < batch ? n : batch;
	if (many) {
		if (n)
			xmit_msg(&w, (__u32)w.m);
		/* A copy: w, whose address stays here, lives in registers. */
		if (n > 1) {
			c = w;
			bpf_loop(n - 1, xmit_step, &c, 0);
		}
	} else
		for (i = 0; i < batch && i < n; i++)
			xmit_msg(&w, (__u32)(w.m + i));
	if (lean && hist_mode && !NS_IS_SERVER(st->side))
		hist_client(st, 0);
}

struct obs_stamp {
	struct ns_sk *st;
	__u64 now;
	__u32 first;
};

/*
 * Message first + i's hand-off, one step of bpf_loop(): the verifier
 * checks it once, where an unrolled loop of NS_SLOTS took it 66,000
 * instructions and 36 ms of observe's start-up.
 */
static long obs_stamp_one(__u64 i, void *data)
{
	struct obs_stamp *c = data;
	__u32 m = c->first + (__u32)i;

	/* A hand-off after the record went leaves the slot clean. */
	if (!handed_over(c->st, m) && sampled(m))
		stamp_once(slot(c->st, m), NS_K_DEV_XMIT, c->now);
	return 0;
}

struct obs_walk {
	const struct ns_sk *st;
	__u32 m, begun, seq, len, first;
};

/* One step of ns_xmit() under bpf_loop(), as obs_stamp_one(). */
static long obs_walk_one(__u64 i, void *data)
{
	struct obs_walk *w = data;

	if (w->m == w->begun ||
	    ns_xmit_step(w->st->tx_seq, w->m, w->seq, w->len, &w->first))
		return 1;
	w->m++;
	return 0;
}

/*
 * observe: the hand-off of the packet that carries a response's first
 * byte. Responses go out in order; tx_xmit is the first of those that
 * entered TCP (tcp_sendmsg_locked noted where each begins) still
 * waiting.
 */
static __always_inline void obs_xmit(const struct sk_buff *skb,
				     struct ns_sk *st)
{
	__u32 seq = 0, len, first, end, n;
	struct obs_walk w;
	struct obs_stamp c;

	if (st->tx_xmit == st->tx_begun)
		return;
	len = xmit_payload(skb, &seq);
	if (!len)
		return;
	w.st = st;
	w.m = w.first = st->tx_xmit;
	w.begun = st->tx_begun;
	w.seq = seq;
	w.len = len;
	bpf_loop(NS_SLOTS, obs_walk_one, &w, 0);
	end = w.m;
	first = w.first;
	st->tx_xmit = end;
	n = end - first;
	if (!n)
		return;
	c.st = st;
	c.now = bpf_ktime_get_ns();
	c.first = first;
	bpf_loop(n < NS_SLOTS ? n : NS_SLOTS, obs_stamp_one, &c, 0);
}

/*
 * obs: observe's programs (obs_*), whose code holds observe's bpf_loop()
 * walks; many: a side of many messages in flight (many_*), whose walk
 * is one. In the programs every side loads, a walk under bpf_loop()
 * made the verifier prune the rest less: a --rate client's hand-off
 * took 296,436 instructions.
 */
static __always_inline int dev_xmit(const struct sk_buff *skb, const int obs,
				    const int many)
{
	/* Read directly: the verifier must see a socket, not a number. */
	struct sock *sk = skb->sk;
	struct ns_sk *st;

	if (!sk)
		return 0;
	st = lookup(sk);
	if (!st)
		return 0;
	own(NS_P_XMIT);
	if (obs)
		obs_xmit(skb, st);
	else if (NS_IS_UDP(side))
		udp_xmit(st, bpf_ktime_get_ns());
	else
		stream_xmit(skb, sk, st, many);
	return 0;
}

/*
 * A hand-off's two programs, the tracepoint's and fentry's (the same
 * code on whichever the kernel allows): the benchmark's sides', many_
 * (as many_sk_data_ready) and observe's obs_.
 */
#define XMIT_PROGS(tp, fe, obs, many)					\
SEC("tp_btf/net_dev_start_xmit")					\
int BPF_PROG(tp, const struct sk_buff *skb, const struct net_device *dev) \
{									\
	if (empty)							\
		return 0;						\
	return dev_xmit(skb, obs, many);				\
}									\
SEC("fentry/dev_hard_start_xmit")					\
int BPF_PROG(fe, struct sk_buff *first)					\
{									\
	if (empty)							\
		return 0;						\
	return dev_xmit(first, obs, many);				\
}

XMIT_PROGS(net_dev_start_xmit, dev_hard_start_xmit, 0, 0)
XMIT_PROGS(many_net_dev_start_xmit, many_dev_hard_start_xmit, 0, 1)
XMIT_PROGS(obs_net_dev_start_xmit, obs_dev_hard_start_xmit, 1, 0)

/*
 * Retransmissions, logged in every mode (struct ns_retrans). They are
 * rare, so a table and an atomic index are cheap enough; the segment
 * counts are exact even when the table is full.
 */
__u64 retrans_segs[2];		/* by end: TCP segments retransmitted */
__u32 retrans_n;		/* retransmissions logged, or beyond the log */
struct ns_retrans retrans_log[NS_RETRANS_LOG];
/*
 * The kernel's tracepoint passes the attempt's error (newer kernels,
 * where it fires for a failed attempt too): set by user space from its
 * BTF.
 */
const volatile __u8 retrans_err;

/* observe: the response whose bytes from seq on were sent (1), or none. */
static __always_inline __u32 obs_retrans_msg(const struct ns_sk *st,
					     __u32 seq, __u32 *first)
{
	__u32 i, r;

	for (i = 0; i < NS_SLOTS && i < st->tx_begun; i++) {
		r = st->tx_begun - 1 - i;
		if (ns_diff(seq, st->tx_seq[NS_SLOT(r)]) >= 0) {
			*first = r;
			return 1;
		}
	}
	return 0;
}

/*
 * The messages whose bytes a retransmitted skb holds: *first and how
 * many. A SYN (a connecting end that has sent nothing yet) is message
 * 0's; a FIN is no message's.
 */
static __always_inline __u32 retrans_msgs(const struct sock *sk,
					  const struct ns_sk *st,
					  const struct tcp_skb_cb *cb,
					  __u32 *first)
{
	const struct tcp_sock *tp = ro_cast(sk, struct tcp_sock);
	__u32 size = tx_size[st->side & 1], len = cb->end_seq - cb->seq;
	__s64 off;
	__u64 last;

	if (NS_IS_OBS(st->side))
		return obs_retrans_msg(st, cb->seq, first);
	if (!st->tx_based) {
		*first = 0;
		return 1;
	}
	if (cb->tcp_flags & TCPHDR_FIN)
		len--;
	off = (__s64)tp->bytes_acked + ns_diff(cb->seq, tp->snd_una) -
	      st->tx_adj;
	if (!size || !len || off < 0)
		return 0;
	*first = off / size;
	last = (off + len - 1) / size;
	return last - *first + 1 < 255 ? last - *first + 1 : 255;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb, const struct sock *sk,
	     const struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb;
	struct ns_retrans *e;
	struct ns_sk *st;
	__u32 i, n, segs, first = 0;

	if (empty)
		return 0;
	/* A failed attempt sent nothing (the kernel's counters agree). */
	if (retrans_err && (int)ctx[2])
		return 0;
	st = lookup(sk);
	if (!st)
		return 0;
	own(NS_P_RETRANS);
	cb = ro_cast((void *)skb->cb, struct tcp_skb_cb);
	segs = cb->tcp_gso_segs ? cb->tcp_gso_segs : 1;
	__sync_fetch_and_add(&retrans_segs[st->side & 1], segs);
	n = retrans_msgs(sk, st, cb, &first);
	if (!n)
		return 0;
	i = __sync_fetch_and_add(&retrans_n, 1);
	if (i >= NS_RETRANS_LOG)
		return 0;
	e = &retrans_log[i];
	e->t = bpf_ktime_get_ns();
	e->sk = (__u64)sk;
	e->flow_id = st->flow_id;
	e->first = first;
	e->port = st->port;
	e->side = st->side;
	e->n = n;
	return 0;
}

/*
 * tcp_crr: the set-up's stamps, on storage BPF makes (no registration):
 * a client's as its connect() in a worker's thread sends the SYN, a
 * server's as the handshake ends, before accept(). observe: storage for
 * a connection of the port, and the end of one closing.
 */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(inet_sock_set_state, const struct sock *sk, const int oldstate,
	     const int newstate)
{
	struct ns_sk *st;
	int server;

	if (empty)
		return 0;
	if (counting && (sk->__sk_common.skc_num == data_port ||
			 sk->__sk_common.skc_dport == bpf_htons(data_port)))
		own(NS_P_STATE);
	if (newstate == TCP_SYN_SENT) {
		st = lookup(sk);
		if (!st && NS_IS_CRR(side) && serves(0) &&
		    sk->__sk_common.skc_dport == bpf_htons(data_port) &&
		    this_worker() != NS_NO_WORKER)
			st = new_storage(sk, 0);
		if (st)
			stamp_once(slot(st, 0), NS_K_SYN_SENT,
				   bpf_ktime_get_ns());
		return 0;
	}
	if (newstate != TCP_ESTABLISHED && NS_IS_OBS(side)) {
		/*
		 * Closing (a peer's FIN may come before the response, so
		 * from CLOSE_WAIT too): the transaction in its response
		 * ends here, or, met inside the send (a peer's reset taken
		 * as the send releases the socket), as the send returns.
		 */
		st = lookup(sk);
		if (st && st->tx_open && st->sending)
			st->tx_open = NS_TX_CLOSED;
		else if (st && st->tx_open)
			obs_emit(st);
		return 0;
	}
	if (newstate != TCP_ESTABLISHED)
		return 0;
	/* The server's end of a connection of the data port, or a client's. */
	server = sk->__sk_common.skc_num == data_port;
	if (!serves(server) ||
	    (!server && sk->__sk_common.skc_dport != bpf_htons(data_port)))
		return 0;
	if (!NS_IS_CRR(side) && !NS_IS_OBS(side))
		return 0;
	st = lookup(sk);
	if (!st && server)
		st = new_storage(sk, 1);
	if (!st || !NS_IS_CRR(side))
		return 0;
	stamp_once(slot(st, 0), NS_K_ESTABLISHED, bpf_ktime_get_ns());
	/* A client's port is bound after SYN_SENT, inside connect(). */
	if (!st->port)
		st->port = sk->__sk_common.skc_num;
	return 0;
}

/* The syscalls a server waits in for its sockets to be ready. */
static __always_inline int is_poll(long nr)
{
#if defined(__TARGET_ARCH_x86)
	return nr == 7 || nr == 23 || nr == 232 || nr == 270 || nr == 271 ||
	       nr == 281 || nr == 441;	/* poll, select, epoll_wait, pselect6,
					 * ppoll, epoll_pwait, epoll_pwait2 */
#elif defined(__TARGET_ARCH_arm64)
	return nr == 22 || nr == 72 || nr == 73 || nr == 441;
#else
	return 0;
#endif
}

static __always_inline long syscall_nr(const struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
	return -1;
#endif
}

/*
 * The observed process, or a child of it: a server that forks per
 * connection (socat, inetd-style) serves from its children.
 */
static __always_inline int observed_task(void)
{
	struct task_struct *task;

	if ((bpf_get_current_pid_tgid() >> 32) == observe_tgid)
		return 1;
	task = bpf_get_current_task_btf();
	return BPF_CORE_READ(task, real_parent, tgid) == observe_tgid;
}

/*
 * observe: every system call of the machine returns through here, so
 * the cheapest test comes first; a wait of the observed process that
 * returned something ready is noted for the thread (obs_read takes it).
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	struct obs_task *t;

	if (ret <= 0 || empty || !is_poll(syscall_nr(regs)) ||
	    !observed_task())
		return 0;
	own(NS_P_SYSEXIT);
	t = bpf_task_storage_get(&obs_tasks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t)
		t->poll_ret = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(sock_send_length, struct sock *sk, int ret, int flags)
{
	struct ns_sk *st;

	if (empty)
		return 0;
	if (ret > 0)
		return message_part(sk, ret, 0);
	st = NS_IS_OBS(side) ? lookup(sk) : NULL;
	return st ? obs_sent(st, ret) : 0;
}

/*
 * --trace-sched: a worker thread made runnable. Both programs run for
 * every task of the machine: a hash lookup of the thread, then out.
 */
static __always_inline struct wsched *worker_sched(const struct task_struct *p)
{
	__u32 tid = p->pid, *w;

	w = bpf_map_lookup_elem(&threads, &tid);
	return w ? bpf_map_lookup_elem(&wscheds, w) : NULL;
}

/* observe: a thread of the observed server (or of a child of it). */
static __always_inline struct obs_task *observed_sched(struct task_struct *p)
{
	if (p->tgid != observe_tgid &&
	    BPF_CORE_READ(p, real_parent, tgid) != observe_tgid)
		return NULL;
	return bpf_task_storage_get(&obs_tasks, p, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The scheduler's record of p, if p is a thread this run traces. */
static __always_inline struct wsched *sched_of(struct task_struct *p)
{
	struct obs_task *t;

	if (!NS_IS_OBS(side))
		return worker_sched(p);
	t = observed_sched(p);
	return t ? &t->sched : NULL;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	struct wsched *w;

	if (empty)
		return 0;
	w = sched_of(p);
	if (w) {
		own(NS_P_WAKEUP);
		w->woken = bpf_ktime_get_ns();
		w->on_cpu = 0;
	}
	return 0;
}

/* It gets a CPU: the first time since its wake-up, and from whom. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct wsched *w;

	if (empty)
		return 0;
	w = sched_of(next);
	if (w)
		own(NS_P_SWITCH);
	if (!w || !w->woken || w->on_cpu)
		return 0;
	w->on_cpu = bpf_ktime_get_ns();
	w->held_pid = prev->pid;
	w->held_cpu = bpf_get_smp_processor_id();
	bpf_probe_read_kernel_str(w->held_comm, sizeof(w->held_comm),
				  prev->comm);
	return 0;
}
