/*
 * The tracer's maps read during and after a run: records lost, the
 * kernel stages' histograms (--trace=hist), retransmissions, observe's
 * counts, and bpf_stats' run time per program.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/common.h"
#include "sys/privs.h"
#include "trace/tracer.h"
#include "trace/tracer_int.h"

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
	return tracer_hook_used(&tracer_hook_table[NS_P_RETRANS], side, 0);
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

/* Add program p's counted run time and runs, if it is loaded. */
static int add_prog_stats(const struct bpf_program *p, uint64_t *run_ns,
			  uint64_t *runs)
{
	struct bpf_prog_info info;
	__u32 n = sizeof(info);

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
	for (i = 0; i < NS_P_COUNT; i++) {
		const struct hook *h = &tracer_hook_table[i];
		const struct bpf_object *o = t->skel->obj;

		err = add_prog_stats(tracer_hook_prog(o, h, t, 0),
				     &s->run_ns[i], &s->runs[i]);
		if (!err)
			err = add_prog_stats(tracer_hook_prog(o, h, t, 1),
					     &s->run_ns[i], &s->runs[i]);
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
