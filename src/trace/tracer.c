#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../common.h"
#include "../privs.h"
#include "stages.h"
#include "stages.skel.h"
#include "tracer.h"

/*
 * Each hook of the stage model, the program that serves it on kernels
 * that allow fentry, and the tracepoint program inside the same kernel
 * function that serves it otherwise.
 */
struct hook {
	const char *name;
	const char *fentry;	/* program name, or NULL */
	const char *tp_btf;	/* program, named as its tracepoint */
	int only;		/* ONLY_OBSERVE and kin, or 0: every side */
	/*
	 * The kernel may lack it and still have the rest: what it stamps
	 * is left out, and the note says how the stages change.
	 */
	const char *without;
};

#define ONLY_OBSERVE 2
#define ONLY_SCHED 3
#define ONLY_CONNECTIONS 4	/* tcp_crr and observe: BPF makes storage */
#define ONLY_TCP 5

/* By program (enum ns_prog, bpf/stages.h): each is one hook's. */
static const struct hook hooks[NS_P_COUNT] = {
	/* Every packet the machine receives: NETIF_RX. */
	[NS_P_ARRIVAL] = { "netif_receive_skb", NULL, "netif_receive_skb", 0,
		"the kernel has no netif_receive_skb tracepoint: "
		"NETIF_RX is the kernel's receive stamp, which "
		"loopback and veth take after IP receive and "
		"netfilter" },
	[NS_P_DATA_READY] = { "sk_data_ready", NULL, "sk_data_ready", 0 },
	[NS_P_RECV] = { "sock_recv_length", NULL, "sock_recv_length", 0 },
	[NS_P_TCP_SEND] = { "tcp_sendmsg_locked", NULL, "tcp_sendmsg_locked",
		ONLY_OBSERVE },
	[NS_P_XMIT] = { "dev_hard_start_xmit", "dev_hard_start_xmit",
		"net_dev_start_xmit", 0 },
	[NS_P_SEND] = { "sock_send_length", NULL, "sock_send_length", 0 },
	[NS_P_STATE] = { "inet_sock_set_state", NULL, "inet_sock_set_state",
		ONLY_CONNECTIONS },
	/* Every syscall of the machine: only observe needs it (POLL_RET). */
	[NS_P_SYSEXIT] = { "sys_exit", NULL, "sys_exit", ONLY_OBSERVE,
		"the kernel has no sys_exit tracepoint: POLL_RET is "
		"not stamped, so wakeup is 0 and recv_call holds the "
		"wait" },
	/* Every wake-up and context switch of the machine: --trace-sched. */
	[NS_P_WAKEUP] = { "sched_wakeup", NULL, "sched_wakeup", ONLY_SCHED,
		"the kernel has no sched_wakeup tracepoint: WOKEN is "
		"not stamped, so the wake-up counts as busy" },
	[NS_P_SWITCH] = { "sched_switch", NULL, "sched_switch", ONLY_SCHED,
		"the kernel has no sched_switch tracepoint: ON_CPU is "
		"not stamped, so the wake-up counts as busy" },
	/* Runs only when TCP resends: RETRANS, and the counts. */
	[NS_P_RETRANS] = { "tcp_retransmit_skb", NULL, "tcp_retransmit_skb",
		ONLY_TCP, "the kernel has no tcp_retransmit_skb "
		"tracepoint: retransmissions are not counted or "
		"marked" },
};

/* Does this side (and --trace-sched) use hook h? */
static int used(const struct hook *h, enum ns_side side, int sched)
{
	if (h->only == ONLY_OBSERVE)
		return NS_IS_OBS(side);
	if (h->only == ONLY_SCHED)
		return sched;
	if (h->only == ONLY_CONNECTIONS)
		return NS_IS_CRR(side) || NS_IS_OBS(side);
	if (h->only == ONLY_TCP)
		return !NS_IS_UDP(side);
	return 1;
}

struct tracer {
	struct stages_bpf *skel;
	int is_end;		/* an end of a tracer serving both: owns nothing */
	int both_ends;		/* its object serves both ends (--local) */
	int base;		/* its first worker's ring */
	struct bpf_link *links[ARRAY_SIZE(hooks)];
	int ring_fd[NS_MAX_RINGS];
	int nworkers;
	enum ns_side side;	/* without NS_SCHED_BIT: what BPF sees */
	int sched;		/* --trace-sched */
	int lean;		/* without the recv and send length hooks */
	int missing[NS_P_COUNT];	/* the kernel lacks its tracepoint */
	int retrans_err;	/* tcp_retransmit_skb passes the error */
	int stamp_fd;		/* keeps the kernel stamping packets */
	struct bpf_link *flush;	/* observe: obs_flush over the sockets */
	int flush_errno;	/* why it could not be attached */
	/*
	 * Lean: the flows' part of the `wstamps` map (hist) or the `krecs`
	 * map (records), mapped (NULL: not used); this end's part of each,
	 * in flows, and how much of that is given out.
	 */
	struct ns_wstamp *wbase;
	struct ns_krec *kbase;
	size_t wmapped, kmapped;
	uint32_t kslots;	/* records: slots a flow */
	uint32_t wfirst, wcap, wnext;
	double entry_ns;	/* entering one program run; -1 unknown */
	double stats_ns;	/* bpf_stats' own share of a run it times */
	const char *note;
	char hooks[512];
	uint64_t setup_ns;
};

static char libbpf_last[256];
static int libbpf_verbose;

/* Keep libbpf's last warning for the one-line reason; print on demand. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	if (level != LIBBPF_DEBUG)
		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, copy);
	va_end(copy);
	if (libbpf_verbose && level != LIBBPF_DEBUG)
		vfprintf(stderr, fmt, ap);
	return 0;
}

/*
 * Does the kernel have this tracepoint (the BTF type tp_btf attaches
 * by)? NETSTAGE_TRACE_PRETEND_MISSING=a,b takes tracepoints a and b as
 * missing: how the tests run what an older kernel would.
 */
static int kernel_has(const struct btf *vmlinux, const char *tp)
{
	const char *p = getenv("NETSTAGE_TRACE_PRETEND_MISSING");
	size_t n = strlen(tp);
	char type[128];

	while (p && *p) {
		if (!strncmp(p, tp, n) && (p[n] == ',' || !p[n]))
			return 0;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	snprintf(type, sizeof(type), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF) > 0;
}

/* The arguments tracepoint tp passes (its BTF prototype's), or -1. */
static int tp_args(const struct btf *vmlinux, const char *tp)
{
	const struct btf_type *p;
	char type[128];
	int id;

	snprintf(type, sizeof(type), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	p = btf__type_by_id(vmlinux, btf__resolve_type(vmlinux, id));
	if (!p || !btf_is_ptr(p))
		return -1;
	p = btf__type_by_id(vmlinux, p->type);
	/* The first is the tracepoint's own data. */
	return p && btf_is_func_proto(p) ? btf_vlen(p) - 1 : -1;
}

/*
 * Which used hooks' tracepoints the kernel lacks. A hook that can be
 * done without is left out with a note; any other ends tracing: 0, or
 * -1 with `why`. Without kernel BTF, loading says why. A hook with an
 * fentry program may serve without its tracepoint: loading decides.
 */
static int find_missing(struct tracer *t, char *why, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	size_t i;

	if (!vmlinux)
		return 0;
	t->retrans_err = tp_args(vmlinux, "tcp_retransmit_skb") >= 3;
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		if (!used(&hooks[i], t->side, t->sched) || hooks[i].fentry ||
		    kernel_has(vmlinux, hooks[i].tp_btf))
			continue;
		if (!hooks[i].without) {
			snprintf(why, len, "tracing off: the kernel has no %s "
				 "tracepoint", hooks[i].tp_btf);
			btf__free(vmlinux);
			return -1;
		}
		t->missing[i] = 1;
		t->note = hooks[i].without;
	}
	btf__free(vmlinux);
	return 0;
}

/*
 * Records of tcp_rr can go without the recv and send length hooks
 * (bpf/stages.bpf.c, `lean`) where nothing else needs them.
 * NETSTAGE_BENCH_FULL_HOOKS=1 keeps them, for bench/overhead.sh.
 */
static int can_be_lean(const struct tracer *t, const struct tracer_cfg *cfg)
{
	/* hist: a client that sends on its own clock reads unseen. */
	return !(cfg->hist_mode && cfg->open_loop) && !t->sched &&
	       !NS_IS_OBS(t->side) &&
	       !NS_IS_UDP(t->side) && !NS_IS_CRR(t->side) &&
	       !getenv("NETSTAGE_BENCH_FULL_HOOKS");
}

/*
 * Lean: the flows an end keeps stamps (hist) or records (records) for
 * in the maps BPF and the workers share. A server does not know its
 * clients' flows when it loads.
 */
static uint32_t wcap(const struct tracer *t, const struct tracer_cfg *cfg)
{
	if (!t->lean)
		return 0;
	return cfg->flows ? cfg->flows : NS_FLOWS_UNKNOWN;
}

/*
 * Lean records: a flow's slots, more than the messages it can have in
 * flight (a worker reads message m's before m + slots can be written),
 * a power of two.
 */
static uint32_t kslots(const struct tracer *t, const struct tracer_cfg *cfg)
{
	uint32_t n = 2;

	if (!t->lean || cfg->hist_mode)
		return 0;
	while (n <= cfg->inflight)
		n *= 2;
	return n;
}

/* Map m, of values `size` bytes, into this process (and those it forks). */
static void *map_shared(struct bpf_map *m, size_t size, size_t *mapped,
			char *why, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*mapped = (bpf_map__max_entries(m) * size + page - 1) / page * page;
	p = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "tracing off: mapping %s: %s",
			 bpf_map__name(m), strerror(errno));
		return NULL;
	}
	return p;
}

/* The maps each flow has a part of, mapped. */
static int map_flows(struct tracer *t, const struct tracer_cfg *cfg,
		     char *why, size_t len)
{
	t->wcap = wcap(t, cfg);
	t->kslots = kslots(t, cfg);
	if (t->wcap && cfg->hist_mode &&
	    !(t->wbase = map_shared(t->skel->maps.wstamps,
				    sizeof(struct ns_wstamp), &t->wmapped,
				    why, len)))
		return -1;
	if (t->kslots &&
	    !(t->kbase = map_shared(t->skel->maps.krecs,
				    sizeof(struct ns_krec), &t->kmapped,
				    why, len)))
		return -1;
	return 0;
}

/*
 * A worker's ring. observe's one ring holds a busy server's records
 * while its reader is off CPU: 16 MiB, about 80,000 records of 208
 * bytes, more than a second of memcached at its rate here. The kernel lets a ring in the outer
 * map differ in size from the BPF object's template (Linux 5.10).
 */
static uint32_t ring_bytes(const struct tracer *t)
{
	return NS_IS_OBS(t->side) ? NS_OBS_RING_BYTES : NS_RING_BYTES;
}

/*
 * Every netstage object on the host stamps a packet with the clock read
 * of the first program to see it (ns_rx_clock in bpf/stages.bpf.c):
 * take the oldest's map, if one is loaded, before loading ours. A
 * kernel reference keeps it while any object holds it, whoever exits
 * first.
 */
static void share_rx_clock(struct stages_bpf *skel)
{
	struct bpf_map *m = skel->maps.NS_RX_CLOCK;
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = privs_rx_clock_fd();

	if (fd < 0)
		return;
	/* Another build's layout is not ours to share. */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    info.type == bpf_map__type(m) &&
	    info.key_size == bpf_map__key_size(m) &&
	    info.value_size == bpf_map__value_size(m) &&
	    info.max_entries == bpf_map__max_entries(m))
		bpf_map__reuse_fd(m, fd);
	close(fd);
}

static struct stages_bpf *open_with(const struct tracer *t,
				    const struct tracer_cfg *cfg,
				    int fentry, int *err)
{
	struct stages_bpf *skel = stages_bpf__open();
	size_t i;

	if (!skel) {
		*err = -errno;
		return NULL;
	}
	skel->rodata->rx_size[NS_IS_SERVER(t->side)] = cfg->rx_size;
	skel->rodata->tx_size[NS_IS_SERVER(t->side)] = cfg->tx_size;
	if (cfg->both_ends) {
		/* The server receives what the client sends. */
		skel->rodata->rx_size[1] = cfg->tx_size;
		skel->rodata->tx_size[1] = cfg->rx_size;
	}
	skel->rodata->both_ends = cfg->both_ends;
	skel->rodata->side = t->side;
	skel->rodata->sched = t->sched;
	skel->rodata->hist_mode = cfg->hist_mode;
	skel->rodata->sample = cfg->sample;
	skel->rodata->control = cfg->control;
	skel->rodata->inflight = cfg->inflight;
	skel->rodata->observe_tgid = cfg->observe_tgid;
	skel->rodata->observe_netns = cfg->observe_netns;
	skel->rodata->lean = t->lean;
	skel->rodata->arrival_hook = !t->missing[NS_P_ARRIVAL];
	skel->rodata->retrans_err = t->retrans_err;
	if (wcap(t, cfg) && cfg->hist_mode)
		bpf_map__set_max_entries(skel->maps.wstamps, wcap(t, cfg) *
					 (cfg->both_ends ? 2 : 1));
	if (kslots(t, cfg)) {
		skel->rodata->krec_mask = kslots(t, cfg) - 1;
		bpf_map__set_max_entries(skel->maps.krecs, wcap(t, cfg) *
					 kslots(t, cfg) *
					 (cfg->both_ends ? 2 : 1));
	}
	/* bench/overhead.sh: the cost of entering the programs alone. */
	skel->rodata->empty = getenv("NETSTAGE_BENCH_EMPTY_BPF") != NULL;
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		const struct hook *h = &hooks[i];
		struct bpf_program *fe, *tp;
		int use;

		tp = bpf_object__find_program_by_name(skel->obj, h->tp_btf);
		fe = h->fentry ? bpf_object__find_program_by_name(skel->obj,
								  h->fentry)
			       : NULL;
		use = used(h, t->side, t->sched) && !t->missing[i];
		if (fe)
			bpf_program__set_autoload(fe, fentry && use);
		if (tp)
			bpf_program__set_autoload(tp, !(fentry && fe) && use);
	}
	bpf_program__set_autoload(skel->progs.obs_flush, NS_IS_OBS(t->side));
	share_rx_clock(skel);
	*err = stages_bpf__load(skel);
	if (*err) {
		stages_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * Is hook i's program attached? In lean mode the length hooks are
 * loaded (calibrate_entry() attaches one for a moment) but not.
 */
static int attached(const struct tracer *t, size_t i)
{
	if (t->lean && (i == NS_P_RECV || i == NS_P_SEND))
		return 0;
	return used(&hooks[i], t->side, t->sched);
}

static int attach(struct tracer *t, int fentry, char *why, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		const struct hook *h = &hooks[i];
		const char *prog = fentry && h->fentry ? h->fentry : h->tp_btf;
		struct bpf_program *p;

		if (!attached(t, i))
			continue;
		if (t->missing[i]) {
			n += snprintf(t->hooks + n, sizeof(t->hooks) - n,
				      "%s%s:none", n ? "," : "", h->name);
			continue;
		}
		p = bpf_object__find_program_by_name(t->skel->obj, prog);
		t->links[i] = p ? bpf_program__attach(p) : NULL;
		if (!t->links[i]) {
			snprintf(why, len, "tracing off: cannot attach %s: %s",
				 prog, strerror(errno));
			return -1;
		}
		n += snprintf(t->hooks + n, sizeof(t->hooks) - n, "%s%s:%s",
			      n ? "," : "", h->name,
			      fentry && h->fentry ? "fentry" : "tp_btf");
	}
	return 0;
}

static int make_rings(struct tracer *t, int nrings, char *why, size_t len)
{
	int outer = bpf_map__fd(t->skel->maps.rings), i;

	for (i = 0; i < nrings; i++) {
		t->ring_fd[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ns_ring",
					       0, 0, ring_bytes(t), NULL);
		if (t->ring_fd[i] < 0 ||
		    bpf_map_update_elem(outer, &i, &t->ring_fd[i], BPF_ANY)) {
			snprintf(why, len, "tracing off: ring buffer: %s",
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * Without the netif_receive_skb program, arrivals are the kernel's own
 * receive stamps (skb->tstamp, CLOCK_REALTIME), taken while any socket
 * asks for them. The socket also serves calibrate_entry(). 0, or -1
 * with `why`.
 */
static int keep_stamping(struct tracer *t, char *why, size_t len)
{
	int on = 1;

	t->stamp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (t->stamp_fd < 0 ||
	    (t->missing[NS_P_ARRIVAL] &&
	     setsockopt(t->stamp_fd, SOL_SOCKET, SO_TIMESTAMPNS, &on,
			sizeof(on)))) {
		snprintf(why, len, "tracing off: receive time stamps: %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC, from the closest of a few readings
 * of the one between two of the other.
 */
static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int64_t real_offset(void)
{
	int64_t best = 0, gap = INT64_MAX, a, r, b;
	int i;

	for (i = 0; i < 8; i++) {
		a = clock_ns(CLOCK_MONOTONIC);
		r = clock_ns(CLOCK_REALTIME);
		b = clock_ns(CLOCK_MONOTONIC);
		if (b - a < gap) {
			gap = b - a;
			best = r - (a + (b - a) / 2);
		}
	}
	return best;
}

static const char *load_reason(int err)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
	/* EACCES is the verifier's refusal: libbpf said what it was. */
	if (err == -EPERM)
		return "loading BPF needs root (CAP_BPF and CAP_PERFMON)";
	return libbpf_last[0] ? libbpf_last : strerror(-err);
}

/* ns per recv() that finds nothing, the least of a few rounds. */
static double empty_recv_ns(int fd)
{
	double best = 1e9, ns;
	uint64_t t0;
	char c;
	int r, i;

	for (r = 0; r < 3; r++) {
		t0 = now_ns();
		for (i = 0; i < 1000; i++)
			(void)!recv(fd, &c, 1, MSG_DONTWAIT);
		ns = (now_ns() - t0) / 1000.0;
		if (ns < best)
			best = ns;
	}
	return best;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define ENTRY_PAIRS 9

/*
 * What entering one program run costs, which bpf_stats cannot see: a
 * recv() that finds nothing, with the sock_recv_length program attached
 * once more (it returns at once for it), less without. Rounds of each,
 * side by side, and the median of their differences: one pair of
 * minima was 0 on a loaded machine as often as not, and once 1.5 us.
 * -1 if it cannot be had.
 */
static double calibrate_entry(struct tracer *t)
{
	double d[ENTRY_PAIRS], base;
	struct bpf_link *l;
	int i;

	if (bpf_program__fd(t->skel->progs.sock_recv_length) < 0)
		return -1;
	for (i = 0; i < ENTRY_PAIRS; i++) {
		base = empty_recv_ns(t->stamp_fd);
		l = bpf_program__attach(t->skel->progs.sock_recv_length);
		if (!l)
			return -1;
		d[i] = empty_recv_ns(t->stamp_fd) - base;
		bpf_link__destroy(l);
	}
	qsort(d, ENTRY_PAIRS, sizeof(d[0]), by_value);
	return d[ENTRY_PAIRS / 2] > 0 ? d[ENTRY_PAIRS / 2] : 0;
}

/*
 * observe: the walk over the sockets' storage that sends the records of
 * responses still open (obs_flush), attached while loading is allowed;
 * tracer_obs_flush() runs it. Without it, observe runs on and each
 * connection's last response is not counted (it says so as it stops).
 */
static void attach_flush(struct tracer *t)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, o);
	union bpf_iter_link_info li = { 0 };

	li.map.map_fd = bpf_map__fd(t->skel->maps.socks);
	o.link_info = &li;
	o.link_info_len = sizeof(li);
	t->flush = bpf_program__attach_iter(t->skel->progs.obs_flush, &o);
	t->flush_errno = t->flush ? 0 : errno;
}

/*
 * What bpf_stats adds to each run it times (its clock read inside the
 * span): the run time it counts for the sock_recv_length program over
 * empty recv()s, for which it returns at once. 0 if it cannot be had.
 */
static double calibrate_stats(struct tracer *t)
{
	int fd, prog = bpf_program__fd(t->skel->progs.sock_recv_length);
	struct bpf_prog_info a = { 0 }, b = { 0 };
	__u32 n = sizeof(a);
	double ns = 0;

	if (prog < 0)
		return 0;
	fd = privs_stats_fd();
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(prog, &a, &n)) {
		empty_recv_ns(t->stamp_fd);
		if (!bpf_obj_get_info_by_fd(prog, &b, &n) &&
		    b.run_cnt > a.run_cnt)
			ns = (double)(b.run_time_ns - a.run_time_ns) /
			     (b.run_cnt - a.run_cnt);
	}
	close(fd);
	return ns;
}

struct tracer *tracer_open(const struct tracer_cfg *cfg, char *why,
			   size_t len)
{
	struct tracer *t = xcalloc(1, sizeof(*t));
	int nrings = cfg->nworkers * (cfg->both_ends ? 2 : 1);
	uint64_t t0 = now_ns();
	int err, fentry = 1, i;

	libbpf_verbose = cfg->verbose;
	libbpf_set_print(libbpf_log);
	for (i = 0; i < NS_MAX_RINGS; i++)
		t->ring_fd[i] = -1;
	t->stamp_fd = -1;
	t->both_ends = cfg->both_ends;
	t->nworkers = cfg->nworkers;
	t->side = cfg->side & ~NS_SCHED_BIT;
	t->sched = NS_IS_SCHED(cfg->side) != 0;
	if (nrings > NS_MAX_RINGS) {
		snprintf(why, len, "tracing off: at most %d threads are traced",
			 NS_MAX_RINGS / (cfg->both_ends ? 2 : 1));
		goto fail;
	}
	if (find_missing(t, why, len))
		goto fail;
	t->lean = can_be_lean(t, cfg);
	/* fentry where the kernel allows it, else the tracepoints. */
	t->skel = open_with(t, cfg, 1, &err);
	if (!t->skel) {
		fentry = 0;
		t->skel = open_with(t, cfg, 0, &err);
	}
	if (!t->skel) {
		snprintf(why, len, "tracing off: %s", load_reason(err));
		goto fail;
	}
	if (keep_stamping(t, why, len) || map_flows(t, cfg, why, len) ||
	    (!cfg->hist_mode && !t->kslots &&
	     make_rings(t, nrings, why, len)))
		goto fail;
	t->skel->bss->real_offset = real_offset();
	t->skel->bss->data_port = cfg->data_port;
	if (attach(t, fentry, why, len))
		goto fail;
	t->entry_ns = calibrate_entry(t);
	t->stats_ns = calibrate_stats(t);
	if (NS_IS_OBS(t->side))
		attach_flush(t);
	t->skel->bss->obs_ready = 1;
	t->setup_ns = now_ns() - t0;
	return t;
fail:
	/* One line says it all; strip libbpf's newline. */
	why[strcspn(why, "\n")] = '\0';
	tracer_close(t);
	return NULL;
}

struct tracer *tracer_end(struct tracer *both, enum ns_side side)
{
	struct tracer *t = xcalloc(1, sizeof(*t));

	*t = *both;
	t->is_end = 1;
	t->side = side & ~NS_SCHED_BIT;
	t->base = NS_IS_SERVER(side) ? both->nworkers : 0;
	t->wfirst = NS_IS_SERVER(side) ? both->wcap : 0;
	t->wnext = 0;
	return t;
}

void tracer_set_port(struct tracer *t, uint16_t port)
{
	t->skel->bss->data_port = port;
}

int tracer_register(struct tracer *t, int fd, int flow_id, int worker,
		    uint32_t idx)
{
	struct ns_sk v = { 0 };

	v.widx = idx;
	v.flow_id = flow_id;
	v.worker = worker + t->base;
	v.side = t->side;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.socks), &fd, &v,
				BPF_NOEXIST))
		return -errno;
	return 0;
}

int tracer_register_thread(struct tracer *t, int worker)
{
	uint32_t tid = gettid(), w = worker + t->base;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.threads), &tid, &w,
				BPF_ANY))
		return -errno;
	return 0;
}

int tracer_ring_fd(struct tracer *t, int worker)
{
	return worker < t->nworkers ? t->ring_fd[worker + t->base] : -1;
}

const char *tracer_hooks(const struct tracer *t)
{
	return t->hooks;
}

uint32_t tracer_flow_index(struct tracer *t)
{
	if (t->wnext == t->wcap)
		return 0;
	return t->wfirst + t->wnext++ + 1;
}

struct ns_wstamp *tracer_wstamp(const struct tracer *t, uint32_t idx)
{
	return t->wbase && idx ? &t->wbase[idx - 1] : NULL;
}

struct ns_krec *tracer_krecs(const struct tracer *t, uint32_t idx)
{
	return t->kbase && idx ? &t->kbase[(idx - 1) * t->kslots] : NULL;
}

uint32_t tracer_krec_mask(const struct tracer *t)
{
	return t->kslots ? t->kslots - 1 : 0;
}

const char *tracer_note(const struct tracer *t)
{
	return t->note;
}

/* Entry key of a per-CPU array of u64, summed over CPUs. */
static uint64_t percpu_sum(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t *v, sum = 0;

	if (ncpu <= 0)
		return 0;
	v = xcalloc(ncpu, sizeof(*v));
	if (!bpf_map_lookup_elem(fd, &key, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t tracer_lost(struct tracer *t)
{
	return percpu_sum(bpf_map__fd(t->skel->maps.lost),
			  NS_IS_SERVER(t->side));
}

int tracer_obs_flush(struct tracer *t)
{
	char buf[64];
	ssize_t n;
	int fd;

	if (!t->flush) {
		errno = t->flush_errno;
		return -1;
	}
	fd = bpf_iter_create(bpf_link__fd(t->flush));
	if (fd < 0)
		return -1;
	/* The walk runs as it is read; it writes nothing of its own. */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -1 : 0;
}

uint64_t tracer_obs_count(struct tracer *t, enum ns_obs_count k)
{
	return percpu_sum(bpf_map__fd(t->skel->maps.obs_counts), k);
}

int tracer_side_retrans(enum ns_side side)
{
	return used(&hooks[NS_P_RETRANS], side, 0);
}

int tracer_has_retrans(const struct tracer *t)
{
	return tracer_side_retrans(t->side) && !t->missing[NS_P_RETRANS];
}

uint64_t tracer_retrans(const struct tracer *t,
			const struct ns_retrans **log, uint32_t *n)
{
	uint32_t logged = __atomic_load_n(&t->skel->bss->retrans_n,
					  __ATOMIC_ACQUIRE);

	*log = t->skel->bss->retrans_log;
	*n = logged < NS_RETRANS_LOG ? logged : NS_RETRANS_LOG;
	return t->skel->bss->retrans_segs[NS_IS_SERVER(t->side)];
}

int tracer_khist(struct tracer *t, int k, struct hist *h)
{
	int ncpu = libbpf_num_possible_cpus(), i, fd;
	uint32_t key = k + NS_IS_SERVER(t->side) * NS_MAX_KSTAGES;
	uint32_t (*v)[HIST_BUCKETS];

	if (ncpu <= 0)
		return -1;
	v = xcalloc(ncpu, sizeof(*v));
	fd = bpf_map__fd(t->skel->maps.khists);
	if (bpf_map_lookup_elem(fd, &key, v)) {
		free(v);
		return -errno;
	}
	for (i = 0; i < ncpu; i++)
		hist_add_buckets(h, v[i]);
	free(v);
	return 0;
}

void tracer_kcounts(struct tracer *t, uint64_t *timed, uint64_t *incomplete)
{
	int fd = bpf_map__fd(t->skel->maps.kcounts);
	uint32_t first = NS_IS_SERVER(t->side) * 2;

	*timed = percpu_sum(fd, first);
	*incomplete = percpu_sum(fd, first + 1);
}

/* Add program `name`'s counted run time and runs, if it is loaded. */
static int add_prog_stats(struct tracer *t, const char *name,
			  uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_program *p;
	struct bpf_prog_info info;
	__u32 n = sizeof(info);

	p = name ? bpf_object__find_program_by_name(t->skel->obj, name) : NULL;
	if (!p || bpf_program__fd(p) < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &n))
		return -errno;
	*run_ns += info.run_time_ns;
	*runs += info.run_cnt;
	return 0;
}

int tracer_stats(struct tracer *t, struct tracer_stats *s)
{
	int fd = bpf_map__fd(t->skel->maps.own_runs);
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		err = add_prog_stats(t, hooks[i].tp_btf, &s->run_ns[i],
				     &s->runs[i]);
		if (!err)
			err = add_prog_stats(t, hooks[i].fentry, &s->run_ns[i],
					     &s->runs[i]);
		if (err)
			return err;
		s->own[i] = percpu_sum(fd, i);
	}
	return 0;
}

void tracer_counting(struct tracer *t, int on)
{
	__atomic_add_fetch(&t->skel->bss->counting, on ? 1 : -1,
			   __ATOMIC_RELAXED);
}

uint64_t tracer_done(struct tracer *t)
{
	return percpu_sum(bpf_map__fd(t->skel->maps.done),
			  NS_IS_SERVER(t->side));
}

double tracer_stats_ns(const struct tracer *t)
{
	return t->stats_ns;
}

double tracer_entry_ns(const struct tracer *t)
{
	return t->entry_ns;
}

int tracer_both_ends(const struct tracer *t)
{
	return t->both_ends;
}

uint64_t tracer_setup_ns(const struct tracer *t)
{
	return t->setup_ns;
}

void tracer_close(struct tracer *t)
{
	size_t i;

	if (!t)
		return;
	if (t->is_end) {
		free(t);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		bpf_link__destroy(t->links[i]);
	bpf_link__destroy(t->flush);
	for (i = 0; i < NS_MAX_RINGS; i++)
		if (t->ring_fd[i] >= 0)
			close(t->ring_fd[i]);
	if (t->stamp_fd >= 0)
		close(t->stamp_fd);
	if (t->wbase)
		munmap(t->wbase, t->wmapped);
	if (t->kbase)
		munmap(t->kbase, t->kmapped);
	stages_bpf__destroy(t->skel);
	free(t);
}
