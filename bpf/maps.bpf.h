/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps, and the per-CPU counters every program bumps.
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_MAPS_BPF_H
#define NETSTAGE_MAPS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ns_sk);
} socks SEC(".maps");

/*
 * The benchmark's worker threads, by thread id: tcp_crr's sockets get
 * their storage from BPF, in the worker's own connect() or send, rather
 * than from a registration system call per connection.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NS_MAX_RINGS);
	__type(key, __u32);
	__type(value, __u32);
} threads SEC(".maps");

/*
 * --trace-sched, per worker thread: its last wake-up, when it got a
 * CPU after it, and the task it took the CPU from. A record takes them
 * at its end, in the worker's own call; the merge keeps them only if
 * they lie between the transaction's DATA_READY and EPOLL_RET.
 */
struct wsched {
	__u64 woken;
	__u64 on_cpu;		/* 0: not on a CPU since woken */
	__u32 held_pid;
	__u32 held_cpu;
	char held_comm[16];
};

/*
 * observe, per thread of the server: when it last returned from
 * epoll_wait or poll with something ready (its next read of a request
 * takes it as POLL_RET), and the client port of the request it read
 * last, until it sends on another connection (a forwarder's upstream).
 */
struct obs_task {
	/*
	 * --trace-sched, for the server's threads. First: &t->sched is t,
	 * so no arithmetic on a pointer the verifier has not seen checked.
	 */
	struct wsched sched;
	__u64 poll_ret;
	__u32 reading;
	__u32 pad;
	/* what held its CPU before the read of its last request */
	__u32 read_held_pid, read_held_cpu;
	char read_held_comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct obs_task);
} obs_tasks SEC(".maps");

/*
 * observe: a forwarder's connection on, by the client port of the
 * request it carried: the next hop's records are on that connection.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u16);
} next_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NS_MAX_RINGS);
	__type(key, __u32);
	__type(value, struct wsched);
} wscheds SEC(".maps");

/* One ring per worker, so each worker reads only its own records. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, NS_MAX_RINGS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, NS_RING_BYTES);
	});
} rings SEC(".maps");

/*
 * Lean --trace=hist: each flow's struct ns_wstamp, written by its
 * worker through a mapping of the map; sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ns_wstamp);
} wstamps SEC(".maps");

/*
 * Lean records: each flow's krec_mask + 1 slots (struct ns_krec), by
 * ns_sk.widx, mapped by the workers.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ns_krec);
} krecs SEC(".maps");

/* --trace=hist: a histogram per kernel stage, by end and stage. */
struct khist {
	__u32 b[HIST_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * NS_MAX_KSTAGES);
	__type(key, __u32);
	__type(value, struct khist);
} khists SEC(".maps");

/* --trace=hist: by end, [0] transactions timed, [1] incomplete. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} kcounts SEC(".maps");

/* Transactions completed, by end, while `counting`. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} done SEC(".maps");

/* Records that found their ring full, by end. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* observe, by enum ns_obs_count (bpf/stages.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NS_OBS_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
} obs_counts SEC(".maps");

static __always_inline void obs_count(__u32 k)
{
	__u64 *n = bpf_map_lookup_elem(&obs_counts, &k);

	if (n)
		(*n)++;
}

/*
 * While `counting`: each program's runs for this run's own packets (of
 * the data port), sockets (registered) and threads, by enum ns_prog.
 * The cost charges these; other processes' traffic runs the programs
 * too, at the same price a run, but is not this run's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NS_P_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} own_runs SEC(".maps");

/* One more in a per-CPU counter. */
static __always_inline void bump(void *map, __u32 key)
{
	__u64 *n = bpf_map_lookup_elem(map, &key);

	if (n)
		(*n)++;
}

static __always_inline void own(__u32 prog)
{
	if (counting)
		bump(&own_runs, prog);
}

static __always_inline struct ns_sk *lookup(const struct sock *sk)
{
	return bpf_sk_storage_get(&socks, (struct sock *)sk, 0, 0);
}

static __always_inline void count_done(__u32 end)
{
	if (counting)
		bump(&done, end);
}

#endif
