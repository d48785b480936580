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

#include "core/common.h"
#include "sys/heapwarm.h"
#include "sys/privs.h"
#include "stages.h"
#include "trace/tracer.h"
#include "trace/tracer_int.h"

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
	t->wcap = tracer_wcap(t, cfg);
	t->kslots = tracer_kslots(t, cfg);
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

/* Is hook i's program loaded and attached? Lean mode has no length hooks. */
static int attached(const struct tracer *t, size_t i)
{
	if (t->lean && (i == NS_P_RECV || i == NS_P_SEND))
		return 0;
	return tracer_hook_used(&tracer_hook_table[i], t->side, t->sched);
}

/* What libbpf's load touches, the kernel's BTF above all: about 11 MiB. */
#define TRACER_LOAD_HEAP (16 << 20)

static struct stages_bpf *open_with(const struct tracer *t,
				    const struct tracer_cfg *cfg,
				    int fentry, int *err)
{
	struct stages_bpf *skel = stages_bpf__open();
	uint32_t wcap = tracer_wcap(t, cfg), kslots = tracer_kslots(t, cfg);
	struct bpf_program *p;
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
	skel->rodata->batch = t->batch;
	skel->rodata->observe_tgid = cfg->observe_tgid;
	skel->rodata->observe_netns = cfg->observe_netns;
	skel->rodata->lean = t->lean;
	skel->rodata->arrival_hook = !t->missing[NS_P_ARRIVAL];
	skel->rodata->retrans_err = t->retrans_err;
	skel->rodata->arrival_set_bits = tracer_arrival_set_bits(cfg);
	bpf_map__set_max_entries(skel->maps.arrivals,
				 1u << skel->rodata->arrival_set_bits);
	if (wcap && cfg->hist_mode)
		bpf_map__set_max_entries(skel->maps.wstamps,
					 wcap * (cfg->both_ends ? 2 : 1));
	if (kslots) {
		skel->rodata->krec_mask = kslots - 1;
		bpf_map__set_max_entries(skel->maps.krecs, wcap * kslots *
					 (cfg->both_ends ? 2 : 1));
	}
	/* bench/overhead.sh: the cost of entering the programs alone. */
	skel->rodata->empty = getenv("NETSTAGE_BENCH_EMPTY_BPF") != NULL;
	/* What no hook of this side asks for stays out (obs_*, say). */
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	for (i = 0; i < NS_P_COUNT; i++) {
		const struct hook *h = &tracer_hook_table[i];
		struct bpf_program *fe, *tp;
		int use;

		tp = tracer_hook_prog(skel->obj, h, t, 0);
		fe = tracer_hook_prog(skel->obj, h, t, 1);
		use = attached(t, i) && !t->missing[i];
		if (fe)
			bpf_program__set_autoload(fe, fentry && use);
		if (tp)
			bpf_program__set_autoload(tp, !(fentry && fe) && use);
	}
	bpf_program__set_autoload(skel->progs.obs_flush,
				  NS_IS_OBS(t->side) && !t->no_flush);
	share_rx_clock(skel);
	/* libbpf's parse of the kernel's BTF: pages in bulk (heapwarm.h). */
	heap_warm(TRACER_LOAD_HEAP);
	*err = stages_bpf__load(skel);
	heap_cool();
	if (*err) {
		stages_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int attach(struct tracer *t, int fentry, char *why, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < NS_P_COUNT; i++) {
		const struct hook *h = &tracer_hook_table[i];
		int fe = fentry && h->fentry;
		struct bpf_program *p;

		if (!attached(t, i))
			continue;
		if (t->missing[i]) {
			n += snprintf(t->hooks + n, sizeof(t->hooks) - n,
				      "%s%s:none", n ? "," : "", h->name);
			continue;
		}
		p = tracer_hook_prog(t->skel->obj, h, t, fe);
		t->links[i] = p ? bpf_program__attach(p) : NULL;
		if (!t->links[i]) {
			snprintf(why, len, "tracing off: cannot attach %s: %s",
				 p ? bpf_program__name(p) : h->name,
				 strerror(errno));
			return -1;
		}
		n += snprintf(t->hooks + n, sizeof(t->hooks) - n, "%s%s:%s",
			      n ? "," : "", h->name, fe ? "fentry" : "tp_btf");
	}
	return 0;
}

static int make_rings(struct tracer *t, int nrings, char *why, size_t len)
{
	int outer = bpf_map__fd(t->skel->maps.rings), i;

	for (i = 0; i < nrings; i++) {
		t->ring_fd[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ns_ring",
					       0, 0, tracer_ring_bytes(t), NULL);
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
 * asks for them. 0, or -1 with `why`.
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

/*
 * fentry where the kernel allows it, else the tracepoints; and for
 * observe, its walk over the sockets where the kernel allows that, else
 * none (attach_flush() then says why, as observe stops).
 */
static struct stages_bpf *open_tries(struct tracer *t,
				     const struct tracer_cfg *cfg,
				     int *fentry, int *err)
{
	struct stages_bpf *skel;
	int flush_err;

	for (*fentry = !t->no_fentry; *fentry >= 0; (*fentry)--)
		if ((skel = open_with(t, cfg, *fentry, err)))
			return skel;
	if (!NS_IS_OBS(t->side))
		return NULL;
	flush_err = *err;
	t->no_flush = 1;
	for (*fentry = !t->no_fentry; *fentry >= 0; (*fentry)--)
		if ((skel = open_with(t, cfg, *fentry, err))) {
			t->flush_errno = -flush_err;
			return skel;
		}
	return NULL;
}

/*
 * observe: the walk over the sockets' storage that sends the records of
 * responses still open (obs_flush), attached while loading is allowed;
 * tracer_obs_flush() runs it. Without it, observe runs on and each
 * connection's last response is not counted (it says so as it stops).
 */
static void attach_flush(struct tracer *t)
{
	if (t->no_flush)
		return;
	t->flush = bpf_program__attach_iter(t->skel->progs.obs_flush, NULL);
	t->flush_errno = t->flush ? 0 : errno;
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
	tracer_calib_open(t);
	t->both_ends = cfg->both_ends;
	t->nworkers = cfg->nworkers;
	t->side = NS_BPF_SIDE(cfg->side);
	t->sched = NS_IS_SCHED(cfg->side) != 0;
	if (nrings > NS_MAX_RINGS) {
		snprintf(why, len, "tracing off: at most %d threads are traced",
			 NS_MAX_RINGS / (cfg->both_ends ? 2 : 1));
		goto fail;
	}
	if (tracer_find_missing(t, why, len))
		goto fail;
	t->lean = tracer_can_be_lean(t, cfg);
	t->batch = tracer_batch_of(t, cfg);
	t->skel = open_tries(t, cfg, &fentry, &err);
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
	tracer_calibrate_entry(t);
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
	t->side = NS_BPF_SIDE(side);
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

void tracer_close(struct tracer *t)
{
	size_t i;

	if (!t)
		return;
	if (t->is_end) {
		free(t);
		return;
	}
	for (i = 0; i < NS_P_COUNT; i++)
		bpf_link__destroy(t->links[i]);
	bpf_link__destroy(t->flush);
	for (i = 0; i < NS_MAX_RINGS; i++)
		if (t->ring_fd[i] >= 0)
			close(t->ring_fd[i]);
	if (t->stamp_fd >= 0)
		close(t->stamp_fd);
	if (t->calib_prog >= 0)
		close(t->calib_prog);
	if (t->wbase)
		munmap(t->wbase, t->wmapped);
	if (t->kbase)
		munmap(t->kbase, t->kmapped);
	stages_bpf__destroy(t->skel);
	free(t);
}
