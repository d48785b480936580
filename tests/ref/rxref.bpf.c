// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' own timer of the receive stages, independent of netstage's
 * BPF: its own programs, and TCP receive taken at the tcp_probe
 * tracepoint (the start of tcp_rcv_established), not from TCP's clock
 * cache. softirq_rx is netif_receive_skb to tcp_probe, tcp_rx tcp_probe
 * to sk_data_ready, for segments with payload on connections of `port`.
 *
 * A program on a tracepoint delays what runs after it there: the
 * kernel's next step, and other programs (netstage's). So the first two
 * read their clock last, as they hand back: a boundary is where the
 * kernel, or the next program, goes on; the wake-up's reads it first
 * and does no more than keep it. A packet's receive runs on one CPU
 * from netif_receive_skb to the wake-up call, so the stamps wait in
 * per-CPU slots; the stages are booked when the reader's recv()
 * returns (sock_recv_length), out of every stage. A receive that moved
 * CPU (the socket's backlog) is not counted.
 *
 * UDP (udp_rr): udp_rx from netif_receive_skb to the wake-up call. A
 * datagram goes from the one to the other in one call chain on one
 * CPU, with no other packet in between: its arrival is the CPU's last.
 *
 * tcp_tx: a segment's departure time, which TCP gives it as it sends
 * it, to two events around netstage's hand-off to the driver (below).
 *
 * The worker's stages, between its thread's system calls (below).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define RING 8		/* packets a CPU may have between the two hooks */
#define BUCKETS 10000	/* 10 ns each, to 100 us */

const volatile __u16 port;	/* host order */
/* The worker's stages of message m only if m % sample == 0 (0, 1: all). */
const volatile __u32 sample;

struct pcpu {
	__u64 skb[RING], t[RING];
	__u32 next;
	int side;		/* of the segment at tcp_probe: -1 none */
	__u64 arrival, probe;
	/* a wake-up's stamps, until recv() returns */
	int bside;
	__u64 barrival, bprobe, bready;
	/* a segment between net_dev_queue and net_dev_xmit: 0, none */
	__u64 txskb, txstamp;
	int txside, txudp;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pcpu);
} cpus SEC(".maps");

/*
 * [stage * 2 + side][bucket]: side 0 client, 1 server; stage 0
 * softirq_rx, 1 tcp_rx, 2 udp_rx, 3 tcp_tx to net_dev_queue, 4 to
 * net_dev_xmit; then the worker's (below), each a low and a high bound.
 */
enum { ST_SOFTIRQ_RX, ST_TCP_RX, ST_UDP_RX, ST_TX_QUEUED, ST_TX_SENT,
       ST_WAKEUP_LO, ST_WAKEUP_HI, ST_RECV_CALL_LO, ST_RECV_CALL_HI,
       ST_SEND_CALL_LO, ST_SEND_CALL_HI, ST_RET_LO, ST_RET_HI,
       ST_APP_LO, ST_APP_HI, ST_ROWS };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * ST_ROWS * BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline struct pcpu *mine(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&cpus, &k);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(ref_netif, struct sk_buff *skb)
{
	struct pcpu *c = mine();
	__u32 i;

	if (!c)
		return 0;
	i = c->next++ % RING;
	c->skb[i] = (__u64)skb;
	c->t[i] = bpf_ktime_get_ns();
	return 0;
}

/* A connection of `port` (TCP or UDP): its side, or -1. */
static __always_inline int sk_side(const struct sock *sk)
{
	if (sk->__sk_common.skc_num == port)
		return 1;
	if (sk->__sk_common.skc_dport == __builtin_bswap16(port))
		return 0;
	return -1;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(ref_probe, struct sock *sk, struct sk_buff *skb)
{
	struct pcpu *c = mine();
	const struct tcphdr *th;
	int i, side;

	if (!c)
		return 0;
	c->side = -1;
	side = sk_side(sk);
	if (side < 0)
		return 0;
	th = (const struct tcphdr *)skb->data;
	if (skb->len <= BPF_CORE_READ_BITFIELD_PROBED(th, doff) * 4)
		return 0;
	/* The newest: a freed skb's memory comes back for a later packet. */
	c->arrival = 0;
	for (i = 0; i < RING; i++)
		if (c->skb[i] == (__u64)skb && c->t[i] > c->arrival)
			c->arrival = c->t[i];
	c->side = side;
	c->probe = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void book(int side, int stage, __u64 d)
{
	__u32 k;
	__u64 *n;

	d /= 10;
	if (d >= BUCKETS)
		d = BUCKETS - 1;
	k = (stage * 2 + side) * BUCKETS + d;
	n = bpf_map_lookup_elem(&hist, &k);
	if (n)
		(*n)++;
}

#define ETH_P_IP 0x0800
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

/* A UDP socket of `port`: its side, or -1. */
static __always_inline int udp_side(const struct sock *sk)
{
	return sk->sk_protocol == IPPROTO_UDP ? sk_side(sk) : -1;
}

/*
 * The worker's stages, from the system calls its thread makes (never
 * its own clock reads, which bound netstage's). A clock read of the
 * worker's lies between the return of one call and the entry of the
 * next, so each stage that ends (or starts) at one is bounded by two
 * reference events, as tcp_tx is: the low bound the shorter way, the
 * high one the longer. wakeup: from the message's sk_data_ready to the
 * return of the thread's epoll_wait (low) and to its read's entry
 * (high). recv_call: the read's entry to its return (low), the epoll
 * return to the next send's entry (high). send_call: the send's entry
 * (low) and the last read's return (high) to the departure time TCP
 * gave its first segment. send_return: that segment's net_dev_xmit to
 * the send's return (low), its net_dev_queue to the thread's next call
 * (high; a thread preempted as its send returns waits before it is
 * back in user space).
 *
 * UDP (udp_rr) ends recv_call at the read's sock_recv_length, where the
 * reference stamps it too: recv_call is the read's entry (low), the
 * epoll return (high), to there and to the read's return. A datagram
 * read with no epoll return after its wake-up (the worker reads on to
 * EAGAIN) has no wait of its own: wakeup 0, recv_call from the wake-up.
 * app (server) and to_app (client) go from that stamp to the read's
 * return (low) and to the next call's entry (high). send_call ends at
 * the datagram's hand-off, between net_dev_queue (low) and net_dev_xmit
 * (high). One flow a side: a message's sk_data_ready
 * is its side's last. A thread is followed once it has read from a
 * connection of `port`. With `sample`, only the messages netstage's
 * --trace-sample times are booked, counted by the thread's reads and
 * sends from its first read (a client's first followed send is its
 * request 1).
 */
struct thr {
	__u64 epoll_ret, recv_enter, recv_ret, send_enter, queued, sent;
	__u64 call_from;	/* recv_call's high bound waits: its start */
	int recv_side;		/* side + 1 of a read under way; 0 none */
	int call_side;		/* side + 1 of call_from's read */
	int tx_side;		/* of the send's first segment */
	int ret_side;		/* side + 1: send_return's high bound waits */
	int udp;		/* the thread's reads are of datagrams */
	__u64 srl;		/* UDP: the read's sock_recv_length */
	int app_side;		/* side + 1: (to_)app's high bound waits */
	int send_due;		/* UDP: send_call's high bound waits */
	__u32 reads, sends;	/* messages read and sent, followed */
	__u32 call_msg, ret_msg;	/* call_from's read, ret_side's send */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct thr);
} thrs SEC(".maps");

__u64 ready[2];

/* Is message m one netstage times (--trace-sample)? */
static __always_inline int kept(__u32 m)
{
	return sample <= 1 || m % sample == 0;
}

static __always_inline struct thr *thread(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&thrs, &tid);
}

/* A read from a connection of `port`, under way: booked at its return. */
static __always_inline void reading(const struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thr zero = {}, *t;
	int side = sk_side(sk);

	if (side < 0)
		return;
	bpf_map_update_elem(&thrs, &tid, &zero, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&thrs, &tid);
	if (!t)
		return;
	t->recv_side = side + 1;
	t->udp = sk->sk_protocol == IPPROTO_UDP;
	t->srl = bpf_ktime_get_ns();
}

/* epoll_wait and kin; recvfrom, recvmsg, read; sendto, sendmsg, write. */
#if defined(__TARGET_ARCH_x86)
#define IS_POLL(nr) ((nr) == 232 || (nr) == 281 || (nr) == 441)
#define IS_RECV(nr) ((nr) == 45 || (nr) == 47 || (nr) == 0)
#define IS_SEND(nr) ((nr) == 44 || (nr) == 46 || (nr) == 1)
#define SYSCALL_NR(regs) ((regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define IS_POLL(nr) ((nr) == 22 || (nr) == 441)
#define IS_RECV(nr) ((nr) == 207 || (nr) == 212 || (nr) == 63)
#define IS_SEND(nr) ((nr) == 206 || (nr) == 211 || (nr) == 64)
#define SYSCALL_NR(regs) ((regs)->syscallno)
#else	/* no worker stages: the comparison says the reference timed none */
#define IS_POLL(nr) 0
#define IS_RECV(nr) 0
#define IS_SEND(nr) 0
#define SYSCALL_NR(regs) (-1)
#endif

SEC("tp_btf/sys_enter")
int BPF_PROG(ref_sys_enter, struct pt_regs *regs, long nr)
{
	__u64 now = bpf_ktime_get_ns();
	struct thr *t;

	if (!(IS_POLL(nr) || IS_RECV(nr) || IS_SEND(nr)) || !(t = thread()))
		return 0;
	if (t->ret_side) {
		if (kept(t->ret_msg))
			book(t->ret_side - 1, ST_RET_HI, now - t->queued);
		t->ret_side = 0;
	}
	if (t->app_side) {
		if (kept(t->call_msg))
			book(t->app_side - 1, ST_APP_HI, now - t->srl);
		t->app_side = 0;
	}
	if (IS_RECV(nr)) {
		t->recv_enter = now;
	} else if (IS_SEND(nr)) {
		if (t->call_from && kept(t->call_msg)) {
			book(t->call_side - 1, ST_RECV_CALL_HI,
			     now - t->call_from);
			t->call_from = 0;
		}
		t->send_enter = now;
		t->queued = t->sent = 0;
	}
	return 0;
}

/* A message's wake-up, and the epoll wait that returned after it. */
static __always_inline void waited(struct thr *t, int side, __u64 r,
				   __u64 now)
{
	book(side, ST_WAKEUP_LO, t->epoll_ret - r);
	book(side, ST_WAKEUP_HI, t->recv_enter - r);
	if (!t->udp) {
		book(side, ST_RECV_CALL_LO, now - t->recv_enter);
		t->call_from = t->epoll_ret;
		t->call_side = side + 1;
		return;
	}
	book(side, ST_RECV_CALL_LO, t->srl - t->recv_enter);
	book(side, ST_RECV_CALL_HI, now - t->epoll_ret);
	book(side, ST_APP_LO, now - t->srl);
	t->app_side = side + 1;
}

/* A datagram read on after an earlier one, with no wait of its own. */
static __always_inline void read_on(struct thr *t, int side, __u64 r,
				    __u64 now)
{
	book(side, ST_WAKEUP_LO, 0);
	book(side, ST_WAKEUP_HI, 0);
	book(side, ST_RECV_CALL_LO, t->srl - r);
	book(side, ST_RECV_CALL_HI, now - r);
	book(side, ST_APP_LO, now - t->srl);
	t->app_side = side + 1;
}

static __always_inline void read_returned(struct thr *t, __u64 now)
{
	int side = (t->recv_side - 1) & 1;
	__u64 r = ready[side];

	t->recv_side = 0;
	t->call_msg = t->reads++;
	if (r > t->recv_ret && t->recv_enter > r && kept(t->call_msg)) {
		if (t->epoll_ret >= r)
			waited(t, side, r, now);
		else if (t->udp)
			read_on(t, side, r, now);
	}
	t->recv_ret = now;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ref_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	long nr = SYSCALL_NR(regs);
	struct thr *t;

	if (!(IS_POLL(nr) || IS_RECV(nr) || IS_SEND(nr)) || ret <= 0 ||
	    !(t = thread()))
		return 0;
	if (IS_POLL(nr)) {
		t->epoll_ret = now;
	} else if (IS_RECV(nr)) {
		if (t->recv_side)
			read_returned(t, now);
	} else if (t->queued && t->sent) {
		t->ret_msg = t->sends++ + (t->tx_side == 0);
		if (kept(t->ret_msg))
			book(t->tx_side, ST_RET_LO, now - t->sent);
		t->ret_side = t->tx_side + 1;
	}
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(ref_ready, struct sock *sk)
{
	__u64 now = bpf_ktime_get_ns();
	struct pcpu *c = mine();
	int side;

	if (!c)
		return 0;
	/* Any wake-up of a connection of the port starts its wakeup. */
	side = sk_side(sk);
	if (side >= 0)
		ready[side] = now;
	side = udp_side(sk);
	if (side >= 0) {
		/* udp_rx: 4 + side, booked apart from the TCP stages. */
		c->bside = side + 4;
		c->barrival = c->t[(c->next - 1) % RING];
		c->bready = now;
		return 0;
	}
	/* No segment of the port at tcp_probe (probe 0: none yet). */
	if (c->side < 0 || !c->probe)
		return 0;
	c->bside = c->side;
	c->barrival = c->arrival;
	c->bprobe = c->probe;
	c->bready = now;
	c->side = -1;
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ref_booked, struct sock *sk, int ret, int flags)
{
	struct pcpu *c = mine();

	if (ret > 0)
		reading(sk);
	if (!c || !c->bready)
		return 0;
	if (c->bside >= 4) {
		if (c->barrival && c->barrival < c->bready)
			book(c->bside - 4, ST_UDP_RX, c->bready - c->barrival);
	} else {
		if (c->barrival && c->barrival < c->bprobe)
			book(c->bside, ST_SOFTIRQ_RX, c->bprobe - c->barrival);
		book(c->bside, ST_TCP_RX, c->bready - c->bprobe);
	}
	c->bready = 0;
	return 0;
}

/*
 * tcp_tx: a TCP segment with payload of `port`, from the departure time
 * TCP gave it (skb->tstamp, its clock read as it sent the segment) to
 * two events around netstage's hand-off to the driver (DEV_XMIT, the
 * net_dev_start_xmit tracepoint): queued for the device (net_dev_queue,
 * in __dev_queue_xmit before the qdisc), and the driver's return
 * (net_dev_xmit). No tracepoint marks TCP's transmit and this kernel
 * refuses fentry, so the start is the stamp netstage reads too; the
 * ends, the segment's headers and the booking are the reference's own.
 * The two run in one call chain on one CPU: the stamp waits in the
 * CPU's slot, by the skb's address (compared, never read after).
 */
/*
 * The first segment of a send under way in this thread (loopback and
 * veth transmit in the sender's call): send_call ends at its departure
 * time, send_return starts at its hand-off.
 */
static __always_inline void sending(int side, __u64 departure, __u64 now)
{
	struct thr *t = thread();

	if (!t || !t->send_enter)
		return;
	t->send_due = departure > t->send_enter && t->recv_ret &&
		      t->recv_ret < t->send_enter &&
		      kept(t->sends + (side == 0));
	if (t->send_due) {
		book(side, ST_SEND_CALL_LO, departure - t->send_enter);
		/* UDP: its high bound is the hand-off's return. */
		if (!t->udp)
			book(side, ST_SEND_CALL_HI, departure - t->recv_ret);
	}
	t->send_enter = 0;
	t->queued = now;
	t->tx_side = side;
}

/* A packet of `port` by its ports (network order): its side, or -1. */
static __always_inline int ports_side(__u16 source, __u16 dest)
{
	if (source == __builtin_bswap16(port))
		return 1;
	if (dest == __builtin_bswap16(port))
		return 0;
	return -1;
}

/*
 * udp_rr: a datagram of `port` queued for the device. Its hand-off
 * (netstage's DEV_XMIT) lies between this and net_dev_xmit: send_call
 * ends between the two.
 */
static __always_inline int udp_queued(struct pcpu *c,
				      const struct sk_buff *skb, __u64 now)
{
	struct udphdr uh;
	int side;

	if (bpf_probe_read_kernel(&uh, sizeof(uh),
				  skb->head + skb->transport_header))
		return 0;
	side = ports_side(uh.source, uh.dest);
	if (side < 0)
		return 0;
	sending(side, now, now);
	c->txskb = (__u64)skb;
	c->txside = side;
	c->txudp = 1;
	return 0;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(ref_dev_queue, struct sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns();
	__u16 th_off = skb->transport_header;
	struct pcpu *c = mine();
	struct tcphdr th;
	struct iphdr ip;
	__s64 len;
	int side;

	if (!c)
		return 0;
	c->txskb = 0;
	if (skb->protocol != __builtin_bswap16(ETH_P_IP) ||
	    bpf_probe_read_kernel(&ip, sizeof(ip),
				  skb->head + skb->network_header))
		return 0;
	if (ip.protocol == IPPROTO_UDP)
		return udp_queued(c, skb, now);
	if (ip.protocol != IPPROTO_TCP ||
	    bpf_probe_read_kernel(&th, sizeof(th), skb->head + th_off))
		return 0;
	side = ports_side(th.source, th.dest);
	if (side < 0)
		return 0;
	len = (__s64)skb->len - (th_off - (skb->data - skb->head)) -
	      th.doff * 4;
	if (len <= 0 || skb->tstamp <= 0 || now <= (__u64)skb->tstamp)
		return 0;
	book(side, ST_TX_QUEUED, now - skb->tstamp);
	sending(side, skb->tstamp, now);
	c->txskb = (__u64)skb;
	c->txstamp = skb->tstamp;
	c->txside = side;
	c->txudp = 0;
	return 0;
}

SEC("tp_btf/net_dev_xmit")
int BPF_PROG(ref_dev_xmit, struct sk_buff *skb, int rc)
{
	__u64 now = bpf_ktime_get_ns();
	struct pcpu *c = mine();
	struct thr *t;

	if (!c || c->txskb != (__u64)skb)
		return 0;
	if (rc == 0 && !c->txudp)
		book(c->txside, ST_TX_SENT, now - c->txstamp);
	if (rc == 0 && (t = thread()) && t->queued && !t->sent) {
		t->sent = now;
		if (t->udp && t->send_due)
			book(c->txside, ST_SEND_CALL_HI, now - t->recv_ret);
		t->send_due = 0;
	}
	c->txskb = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
