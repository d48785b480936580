/*
 * The one definition of what netstage traces, shared by the BPF program
 * (bpf/stages.bpf.c) and user space (src/trace/). Self-contained: no
 * kernel or libc headers, so both sides can include it.
 *
 * A transaction is timed at boundaries: kernel ones (K), stamped by BPF
 * programs on the socket's own events, and user ones (U), stamped by the
 * worker with CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads. The
 * stages of a side are the intervals between its consecutive boundaries,
 * so they add up to the side's time span. docs/stages.md defines each.
 */
#ifndef NETSTAGE_STAGES_H
#define NETSTAGE_STAGES_H

/* X(name, where): every boundary, in no particular order. */
#define NS_BOUNDARIES(X)						\
	X(APP_SEND, U)	  /* worker calls send() for the message */	\
	X(TCP_SEND, K)	  /* TCP's departure time of its first packet */	\
	X(DEV_XMIT, K)	  /* first device hand-off after it */		\
	X(NETIF_RX, K)	  /* netif_receive_skb of the first byte's packet */ \
	X(TCP_RX, K)	  /* TCP's clock read as it took that skb */	\
	X(DATA_READY, K)  /* first sk_data_ready after it */		\
	X(EPOLL_RET, U)	  /* epoll_wait returned with the flow readable */ \
	X(RECV_RET, K)	  /* the recv that completes the message returns */ \
	X(SEND_RET, K)	  /* the send that completes the message returns */ \
	X(APP_DONE, U)	  /* worker sees the transaction complete */	\
	X(CONNECT, U)	  /* tcp_crr client: worker opens the connection */ \
	X(SYN_SENT, K)	  /* tcp_crr: connect() sends the SYN */		\
	X(ESTABLISHED, K) /* tcp_crr: the handshake completes on the socket */ \
	X(ACCEPT_RET, U)  /* tcp_crr server: accept() returned the socket */ \
	X(POLL_RET, K)	  /* observe: the reader's epoll/poll return */ \
	X(BUSY_END, M)	  /* --trace-sched: a running reader's other work ends */ \
	X(WOKEN, K)	  /* --trace-sched: sched_wakeup of the reader */ \
	X(ON_CPU, K)	  /* --trace-sched: sched_switch onto the reader */ \
	X(RETRANS, N)	  /* TCP first retransmitted the message's bytes */ \
	X(INTENDED, U)	  /* --rate: when the request was due to be sent */

#define NS_B_ENUM(name, where) NS_B_##name,
enum ns_boundary { NS_BOUNDARIES(NS_B_ENUM) NS_B_COUNT };
#undef NS_B_ENUM

/*
 * The kernel boundaries alone, numbered for BPF's per-message slots.
 * M ones the merge makes from the others (docs/stages.md). N ones are
 * notices, in no stage: BPF logs them apart (struct ns_retrans) and
 * user space puts them into the records they belong to. WOKEN and
 * ON_CPU are kept per worker thread for netstage's own workers and
 * taken into the record at its end; an observed server's are taken
 * into the message's slot as its thread reads the request.
 */
#define NS_K_ENUM_K(name) NS_K_##name,
#define NS_K_ENUM_U(name)
#define NS_K_ENUM_M(name)
#define NS_K_ENUM_N(name)
#define NS_K_ENUM(name, where) NS_K_ENUM_##where(name)
enum ns_kboundary { NS_BOUNDARIES(NS_K_ENUM) NS_K_COUNT };
#undef NS_K_ENUM
#undef NS_K_ENUM_N
#undef NS_K_ENUM_M
#undef NS_K_ENUM_U
#undef NS_K_ENUM_K

/* Each kernel boundary's enum ns_boundary, in enum ns_kboundary order. */
#define NS_K_TO_B_K(name) NS_B_##name,
#define NS_K_TO_B_U(name)
#define NS_K_TO_B_M(name)
#define NS_K_TO_B_N(name)
#define NS_K_TO_B_(name, where) NS_K_TO_B_##where(name)
#define NS_K_TO_B { NS_BOUNDARIES(NS_K_TO_B_) }

/*
 * X(side, stage name, from, to): each side's stages in time order. A
 * client transaction runs from APP_SEND to APP_DONE, the latency its
 * worker measures; a server's from the request's NETIF_RX to APP_DONE
 * after the response is sent. UDP (udp_rr) has no TCP boundaries: its
 * send goes from the call to the device, its receive from the device to
 * the wake-up. A tcp_crr client's transaction starts at the connection;
 * its server's at the handshake's end, and as the request may arrive
 * before accept() returns, the server's chain leaves the request's
 * arrival out.
 */
#define NS_STAGES(X)						\
	X(CLIENT, send_call, APP_SEND, TCP_SEND)		\
	X(CLIENT, tcp_tx, TCP_SEND, DEV_XMIT)			\
	X(CLIENT, remote, DEV_XMIT, NETIF_RX)			\
	X(CLIENT, softirq_rx, NETIF_RX, TCP_RX)			\
	X(CLIENT, tcp_rx, TCP_RX, DATA_READY)			\
	X(CLIENT, wakeup, DATA_READY, EPOLL_RET)		\
	X(CLIENT, recv_call, EPOLL_RET, RECV_RET)		\
	X(CLIENT, to_app, RECV_RET, APP_DONE)			\
	X(SERVER, softirq_rx, NETIF_RX, TCP_RX)			\
	X(SERVER, tcp_rx, TCP_RX, DATA_READY)			\
	X(SERVER, wakeup, DATA_READY, EPOLL_RET)		\
	X(SERVER, recv_call, EPOLL_RET, RECV_RET)		\
	X(SERVER, app, RECV_RET, APP_SEND)			\
	X(SERVER, send_call, APP_SEND, TCP_SEND)		\
	X(SERVER, tcp_tx, TCP_SEND, DEV_XMIT)			\
	X(SERVER, send_return, DEV_XMIT, APP_DONE)		\
	X(CLIENT_CRR, connect_call, CONNECT, SYN_SENT)		\
	X(CLIENT_CRR, handshake, SYN_SENT, ESTABLISHED)		\
	X(CLIENT_CRR, connected, ESTABLISHED, APP_SEND)		\
	X(CLIENT_CRR, send_call, APP_SEND, TCP_SEND)		\
	X(CLIENT_CRR, tcp_tx, TCP_SEND, DEV_XMIT)		\
	X(CLIENT_CRR, remote, DEV_XMIT, NETIF_RX)		\
	X(CLIENT_CRR, softirq_rx, NETIF_RX, TCP_RX)		\
	X(CLIENT_CRR, tcp_rx, TCP_RX, DATA_READY)		\
	X(CLIENT_CRR, wakeup, DATA_READY, EPOLL_RET)		\
	X(CLIENT_CRR, recv_call, EPOLL_RET, RECV_RET)		\
	X(CLIENT_CRR, to_app, RECV_RET, APP_DONE)		\
	X(SERVER_CRR, accept_wait, ESTABLISHED, ACCEPT_RET)	\
	X(SERVER_CRR, to_epoll, ACCEPT_RET, EPOLL_RET)		\
	X(SERVER_CRR, recv_call, EPOLL_RET, RECV_RET)		\
	X(SERVER_CRR, app, RECV_RET, APP_SEND)			\
	X(SERVER_CRR, send_call, APP_SEND, TCP_SEND)		\
	X(SERVER_CRR, tcp_tx, TCP_SEND, DEV_XMIT)		\
	X(SERVER_CRR, send_return, DEV_XMIT, APP_DONE)		\
	X(CLIENT_UDP, send_call, APP_SEND, DEV_XMIT)		\
	X(CLIENT_UDP, remote, DEV_XMIT, NETIF_RX)		\
	X(CLIENT_UDP, udp_rx, NETIF_RX, DATA_READY)		\
	X(CLIENT_UDP, wakeup, DATA_READY, EPOLL_RET)		\
	X(CLIENT_UDP, recv_call, EPOLL_RET, RECV_RET)		\
	X(CLIENT_UDP, to_app, RECV_RET, APP_DONE)		\
	X(SERVER_UDP, udp_rx, NETIF_RX, DATA_READY)		\
	X(SERVER_UDP, wakeup, DATA_READY, EPOLL_RET)		\
	X(SERVER_UDP, recv_call, EPOLL_RET, RECV_RET)		\
	X(SERVER_UDP, app, RECV_RET, APP_SEND)			\
	X(SERVER_UDP, send_call, APP_SEND, DEV_XMIT)		\
	X(SERVER_UDP, send_return, DEV_XMIT, APP_DONE)		\
	X(SERVER_OBS, softirq_rx, NETIF_RX, TCP_RX)		\
	X(SERVER_OBS, tcp_rx, TCP_RX, DATA_READY)		\
	X(SERVER_OBS, wakeup, DATA_READY, POLL_RET)		\
	X(SERVER_OBS, recv_call, POLL_RET, RECV_RET)		\
	X(SERVER_OBS, app, RECV_RET, TCP_SEND)			\
	X(SERVER_OBS, tcp_tx, TCP_SEND, DEV_XMIT)		\
	X(SERVER_OBS, send_return, DEV_XMIT, SEND_RET)

/*
 * --trace=hist: the stages BPF can time alone, between kernel
 * boundaries only (it has no user stamps), kept as histograms in BPF.
 * ready_recv is wakeup + recv_call; recv_send is app + send_call.
 */
#define NS_KSTAGES(X)						\
	X(CLIENT, tcp_tx, TCP_SEND, DEV_XMIT)			\
	X(CLIENT, remote, DEV_XMIT, NETIF_RX)			\
	X(CLIENT, softirq_rx, NETIF_RX, TCP_RX)			\
	X(CLIENT, tcp_rx, TCP_RX, DATA_READY)			\
	X(CLIENT, ready_recv, DATA_READY, RECV_RET)		\
	X(SERVER, softirq_rx, NETIF_RX, TCP_RX)			\
	X(SERVER, tcp_rx, TCP_RX, DATA_READY)			\
	X(SERVER, ready_recv, DATA_READY, RECV_RET)		\
	X(SERVER, recv_send, RECV_RET, TCP_SEND)		\
	X(SERVER, tcp_tx, TCP_SEND, DEV_XMIT)			\
	X(SERVER, xmit_return, DEV_XMIT, SEND_RET)		\
	X(CLIENT_CRR, handshake, SYN_SENT, ESTABLISHED)		\
	X(CLIENT_CRR, tcp_tx, TCP_SEND, DEV_XMIT)		\
	X(CLIENT_CRR, remote, DEV_XMIT, NETIF_RX)		\
	X(CLIENT_CRR, softirq_rx, NETIF_RX, TCP_RX)		\
	X(CLIENT_CRR, tcp_rx, TCP_RX, DATA_READY)		\
	X(CLIENT_CRR, ready_recv, DATA_READY, RECV_RET)		\
	X(SERVER_CRR, established_recv, ESTABLISHED, RECV_RET)	\
	X(SERVER_CRR, recv_send, RECV_RET, TCP_SEND)		\
	X(SERVER_CRR, tcp_tx, TCP_SEND, DEV_XMIT)		\
	X(SERVER_CRR, xmit_return, DEV_XMIT, SEND_RET)		\
	X(CLIENT_UDP, remote, DEV_XMIT, NETIF_RX)		\
	X(CLIENT_UDP, udp_rx, NETIF_RX, DATA_READY)		\
	X(CLIENT_UDP, ready_recv, DATA_READY, RECV_RET)		\
	X(SERVER_UDP, udp_rx, NETIF_RX, DATA_READY)		\
	X(SERVER_UDP, ready_recv, DATA_READY, RECV_RET)		\
	X(SERVER_UDP, recv_xmit, RECV_RET, DEV_XMIT)		\
	X(SERVER_UDP, xmit_return, DEV_XMIT, SEND_RET)

#define NS_MAX_KSTAGES 6

/*
 * Which end, and over which transport: bit 0 is the end (client 0,
 * server 1), bit 1 says UDP, bit 2 a connection per transaction
 * (tcp_crr), bit 3 a server netstage observes but did not write
 * (`netstage observe`): its messages have no size BPF knows, so a
 * request is what the server reads until it writes, and the response
 * what it writes until it reads again. Stage lists are by this value.
 */
enum ns_side {
	NS_CLIENT = 0, NS_SERVER = 1, NS_CLIENT_UDP = 2, NS_SERVER_UDP = 3,
	NS_CLIENT_CRR = 4, NS_SERVER_CRR = 5, NS_SERVER_OBS = 9
};
#define NS_UDP_BIT 2
#define NS_CRR_BIT 4
#define NS_OBS_BIT 8
/*
 * --trace-sched (user space only; BPF sees the side without it): the
 * side's `wakeup` split by the scheduler's boundaries into
 * NS_SCHED_STAGES. Stage lists are made for side | NS_SCHED_BIT too.
 */
#define NS_SCHED_BIT 16
/*
 * --rate (user space only): an open-loop client's transaction starts
 * when its request was due, INTENDED, and `queue` (INTENDED to the
 * side's first boundary) comes before its other stages: they add up to
 * the latency measured from the intended send. Stage lists are made
 * for side | NS_RATE_BIT (and | NS_SCHED_BIT) too.
 */
#define NS_RATE_BIT 32
#define NS_SIDES 64
#define NS_IS_SCHED(s) ((s) & NS_SCHED_BIT)
/* The side BPF sees: without the bits user space adds. */
#define NS_BPF_SIDE(s) ((s) & (NS_SCHED_BIT - 1))

/*
 * X(stage, from, to): what `wakeup` (DATA_READY to EPOLL_RET) becomes.
 * A reader asleep when its data came: busy is 0 (BUSY_END is
 * DATA_READY), then the wake-up call, the wait for a CPU, the return to
 * user space. One running already: busy is all of it (BUSY_END, WOKEN
 * and ON_CPU are EPOLL_RET), the time behind its other work.
 */
#define NS_SCHED_STAGES(X)					\
	X(busy, DATA_READY, BUSY_END)				\
	X(wake_call, BUSY_END, WOKEN)				\
	X(runq, WOKEN, ON_CPU)					\
	X(to_user, ON_CPU, EPOLL_RET)
#define NS_IS_SERVER(s) ((s) & 1)
#define NS_IS_UDP(s) ((s) & NS_UDP_BIT)
#define NS_IS_CRR(s) ((s) & NS_CRR_BIT)
#define NS_IS_OBS(s) ((s) & NS_OBS_BIT)

/*
 * Stages of a side at most (a tcp_crr client's with --trace-sched: 14;
 * --rate adds one).
 */
#define NS_MAX_STAGES 16

/*
 * The programs, one per hook (src/trace/tracer.c lists them in this
 * order): each counts its runs for this run's own packets, sockets and
 * threads while the cost is measured (src/trace/cost.h), so that the
 * cost charges those and not other processes' traffic.
 */
enum ns_prog {
	NS_P_ARRIVAL, NS_P_DATA_READY, NS_P_RECV, NS_P_TCP_SEND, NS_P_XMIT,
	NS_P_SEND, NS_P_STATE, NS_P_SYSEXIT, NS_P_WAKEUP, NS_P_SWITCH,
	NS_P_RETRANS, NS_P_COUNT
};

/* Workers that can be traced, and each one's ring buffer. */
#define NS_MAX_RINGS 256
#define NS_RING_BYTES (1 << 20)
#define NS_OBS_RING_BYTES (4 << 20)	/* observe's one ring */

/*
 * TCP arrivals (bpf/arrival.bpf.h): sets of four entries, 2^bits of
 * them, from one page (6) to 1 MiB (14); 256 KiB when the run's flows
 * are not known.
 */
#define NS_ARRIVAL_SET_BITS_MIN 6
#define NS_ARRIVAL_SET_BITS_UNKNOWN 12
#define NS_ARRIVAL_SET_BITS_MAX 14

/* UDP datagrams queued on one socket whose stamps are kept (a power of 2). */
#define NS_UDP_QUEUE 16

/*
 * Messages of one socket whose stamps are kept at once (a power of 2):
 * request m and its response m share slot m % NS_SLOTS, so --burst may
 * keep NS_SLOTS - 1 requests in flight (one more slot covers a server
 * whose next request arrives before its send of this response returns).
 */
#define NS_SLOTS 32
#define NS_MAX_BURST (NS_SLOTS - 1)

/* tcp_crr storage BPF made: the worker and flow user space did not give. */
#define NS_NO_WORKER 0xffff
#define NS_NO_FLOW 0xffffffffu

#define NS_TX_CLOSED 2

/* Per registered socket, in BPF_MAP_TYPE_SK_STORAGE. */
struct ns_sk {
	/* written by user space when it registers the socket */
	unsigned int flow_id;
	unsigned short worker;
	unsigned char side;	/* enum ns_side: end and transport */
	/* kept by BPF; messages are numbered from the stream's start */
	unsigned char ooo_held;	/* TCP held data out of order at a wake-up */
	/* observe: the turn a connection is in (messages have no size) */
	unsigned char rx_open;	/* a request began and no response yet */
	unsigned char tx_open;	/* a response began, its record not sent;
				 * NS_TX_CLOSED: and the connection closed
				 * inside its send */
	unsigned char late;	/* met mid-stream: wait for a response */
	unsigned char tx_based;	/* tx_adj is set */
	/* storage BPF made: the connection's client port, for the records */
	unsigned short port;
	unsigned char sending;	/* observe: a send of the server's is under way */
	unsigned char pad3;
	unsigned int rx_msgs;	/* inbound messages read whole */
	unsigned int tx_msgs;	/* outbound messages sent whole */
	unsigned int rx_seen;	/* inbound messages whose start TCP saw */
	unsigned int tx_begun;	/* observe: responses that entered TCP */
	unsigned int tx_xmit;	/* first of those not handed to a device */
	unsigned int rx_bytes;	/* of the inbound message so far */
	unsigned int tx_bytes;	/* of the outbound message so far */
	/* the socket's rcv_ooopack at its last wake-up call */
	unsigned int rx_ooo;
	/* observe: TCP sequence number of each response's first byte */
	unsigned int tx_seq[NS_SLOTS];
	/* observe: each request's first byte's offset in the stream */
	unsigned int rx_off[NS_SLOTS];
	/* K stamps by message: slot m % NS_SLOTS, by enum ns_kboundary */
	unsigned long long slot[NS_SLOTS][NS_K_COUNT];
	/*
	 * UDP: NETIF_RX and DATA_READY of the datagrams queued and not yet
	 * read, in queue order (recv takes them in that order). The wake-ups
	 * of several senders add at once: the tail moves atomically.
	 */
	unsigned long long udp_q[NS_UDP_QUEUE][2];
	/* each stamp's datagram: its skb's address (low 32 bits), 0 unknown */
	unsigned int udp_w[NS_UDP_QUEUE];
	unsigned int udp_head, udp_tail;
	unsigned int udp_overflow;	/* lost track: wait for an empty queue */
	unsigned int udp_late;		/* recvs whose stamps are yet to come */
	/* what bytes_acked counts besides the stream (the SYN, or 0) */
	unsigned int tx_adj;
	/* observe: bytes_received as the response began */
	unsigned long long rx_mark;
	/*
	 * Lean: 1 + the flow's index (0: none) in the `wstamps` map (hist:
	 * its struct ns_wstamp) or the `krecs` map (records: its slots);
	 * sampled responses a hist client has woken up for and not yet
	 * timed.
	 */
	unsigned int widx;
	unsigned int hist_pending;
};

/*
 * Lean --trace=hist: the worker's own stamps of a flow's messages, which
 * it writes into the `wstamps` map (mapped into its memory) and BPF
 * reads at the flow's next device hand-off in that thread. A message is
 * the count's last: RECV_RET of message recv_n - 1, SEND_RET of
 * send_n - 1.
 */
struct ns_wstamp {
	unsigned int tid;	/* the worker thread that writes them */
	unsigned int recv_n;	/* messages read whole */
	unsigned int send_n;	/* messages sent whole */
	unsigned int pad;
	unsigned long long recv_ret;
	unsigned long long send_ret;
};

/*
 * Lean records (tcp_rr --trace): message m's kernel stamps, by enum
 * ns_kboundary, in slot m % slots of its flow's in the `krecs` map,
 * which the worker maps and reads when it is done with m: no ring, no
 * copy but this one. seq is m + 1 once they are all there, and 0 while
 * BPF writes them, so that a reader who sees the same m + 1 before and
 * after it copies them has copied m's.
 */
struct ns_krec {
	unsigned long long seq;
	unsigned long long t[NS_K_COUNT];
};

/*
 * TCP retransmitted bytes of messages first..first + n - 1 of a
 * registered socket (the SYN of a connecting one: message 0). BPF
 * logs every retransmission into a table user space reads after the
 * run (NS_RETRANS_LOG of them; more are counted, not logged): they are
 * rare, and a server's come after its transaction's record has gone.
 */
struct ns_retrans {
	unsigned long long t;		/* the retransmission's clock read */
	unsigned long long sk;		/* the socket: one connection */
	unsigned int flow_id;
	unsigned int first;		/* the first message */
	unsigned short port;		/* the connection's client port */
	unsigned char side;		/* enum ns_side, as registered */
	unsigned char n;		/* messages from first on */
};
#define NS_RETRANS_LOG 8192

/* One record per transaction per side, from BPF to the side's worker. */
struct ns_krecord {
	unsigned int flow_id;
	unsigned char side;
	unsigned char pad;
	/* observe: the port of the connection the request went on to */
	unsigned short next_port;
	/* the connection's client port, where BPF made the storage */
	unsigned short port;
	unsigned short pad2;
	/*
	 * observe: the offset of the request's first byte in the stream
	 * (its low 32 bits), which the client knows too: what names the
	 * transaction on both ends for the sample (trace_rec_priority)
	 */
	unsigned int rx_off;
	unsigned long long seq;
	unsigned long long t[NS_B_COUNT];	/* 0: not seen */
	/* --trace-sched: the task switched out as ON_CPU's reader came in */
	unsigned int held_pid;
	unsigned short held_cpu;
	unsigned short pad3;
	char held_comm[16];
};

/*
 * observe's counts: requests of connections met mid-stream (not timed,
 * not counted), and the records of responses still open as it stopped
 * (sent, not yet ended by the connection's next read or close) that
 * obs_flush sent.
 */
enum ns_obs_count { NS_OBS_SKIPPED, NS_OBS_FLUSHED, NS_OBS_COUNTS };

/*
 * The per-CPU packet clock every netstage object on a host shares (its
 * map's name, as BPF declares it and as user space finds it by:
 * bpf/stages.bpf.c, src/privs.c).
 */
#define NS_RX_CLOCK ns_rx_clock
#define NS_NAME_(x) #x
#define NS_NAME(x) NS_NAME_(x)

#endif
