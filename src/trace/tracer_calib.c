/*
 * What a program run costs that bpf_stats cannot say: entering the
 * program, and bpf_stats' own clock reads inside the span it times.
 * Both are measured with an empty program of their own, which needs no
 * BTF and, once loaded, no privilege to attach or run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "core/common.h"
#include "trace/tracer_int.h"

/* The tracepoint every recv() passes, found or not. */
#define CALIB_TP "sock_recv_length"
#define ENTRY_PAIRS 5
#define ENTRY_ROUNDS 2
#define ENTRY_CALLS 200
#define STATS_RUNS 100
#define STATS_BATCHES 5

void tracer_calib_open(struct tracer *t)
{
	/* `return 0`: what is left of a run is entering it. */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	t->entry_ns = -1;
	t->calib_prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT,
				      "ns_calib", "GPL", insns,
				      ARRAY_SIZE(insns), NULL);
}

/* ns per recv() that finds nothing, the least of a few rounds. */
static double empty_recv_ns(int fd)
{
	double best = 1e9, ns;
	uint64_t t0;
	char c;
	int r, i;

	for (r = 0; r < ENTRY_ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < ENTRY_CALLS; i++)
			(void)!recv(fd, &c, 1, MSG_DONTWAIT);
		ns = (now_ns() - t0) / (double)ENTRY_CALLS;
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

/*
 * What entering one program run costs: a recv() that finds nothing
 * with the empty program on its tracepoint twice, less once (the
 * tracepoint stays on: switching it costs a millisecond each way).
 * Rounds of each, side by side, and the median of their differences:
 * one pair of minima was 0 on a loaded machine as often as not, and
 * once 1.5 us. entry_ns stays -1 if it cannot be had.
 */
void tracer_calibrate_entry(struct tracer *t)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int i, once = -1, twice;
	double d[ENTRY_PAIRS], base;

	if (t->calib_prog < 0 || fd < 0)
		goto out;
	once = bpf_raw_tracepoint_open(CALIB_TP, t->calib_prog);
	for (i = 0; once >= 0 && i < ENTRY_PAIRS; i++) {
		base = empty_recv_ns(fd);
		twice = bpf_raw_tracepoint_open(CALIB_TP, t->calib_prog);
		if (twice < 0)
			goto out;
		d[i] = empty_recv_ns(fd) - base;
		close(twice);
	}
	if (once < 0)
		goto out;
	qsort(d, ENTRY_PAIRS, sizeof(d[0]), by_value);
	t->entry_ns = d[ENTRY_PAIRS / 2] > 0 ? d[ENTRY_PAIRS / 2] : 0;
out:
	if (once >= 0)
		close(once);
	if (fd >= 0)
		close(fd);
}

/* The empty program's mean counted run time over `runs` test runs; < 0: none. */
static double stats_batch(int prog, int runs)
{
	struct bpf_prog_info a = { 0 }, b = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run);
	__u32 n = sizeof(a);
	int i;

	if (bpf_obj_get_info_by_fd(prog, &a, &n))
		return -1;
	for (i = 0; i < runs; i++)
		if (bpf_prog_test_run_opts(prog, &run))
			return -1;
	if (bpf_obj_get_info_by_fd(prog, &b, &n) || b.run_cnt <= a.run_cnt)
		return -1;
	return (double)(b.run_time_ns - a.run_time_ns) /
	       (b.run_cnt - a.run_cnt);
}

/*
 * With bpf_stats on: the run time it counts for the empty program,
 * run by BPF_PROG_TEST_RUN (it times those runs as it times a
 * tracepoint's: 40.6 ns both ways here). The least of a few batches'
 * means: an interrupt, or the host taking the vCPU, inside one run
 * adds microseconds to its batch's mean, which could take the whole of
 * the programs' share for bpf_stats' own (trace_cost_bpf_ns read 0
 * once in a full suite on 2026-11-29, not seen again in six runs
 * alone). A batch that fails ends it: the least of those before it,
 * or 0 if the first failed.
 */
void tracer_calibrate_stats(struct tracer *t)
{
	double m;
	int i;

	t->stats_ns = 0;
	if (t->calib_prog < 0)
		return;
	for (i = 0; i < STATS_BATCHES; i++) {
		m = stats_batch(t->calib_prog, STATS_RUNS / STATS_BATCHES);
		if (m < 0)
			return;
		if (!i || m < t->stats_ns)
			t->stats_ns = m;
	}
}
