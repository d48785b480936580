/*
 * What a program run costs that bpf_stats cannot say: entering the
 * program, and bpf_stats' own clock reads inside the span it times.
 * Both measured once at load, over recv()s that find nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/common.h"
#include "sys/privs.h"
#include "trace/tracer_int.h"

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

#define ENTRY_PAIRS 5

/*
 * What entering one program run costs, which bpf_stats cannot see: a
 * recv() that finds nothing, with the sock_recv_length program attached
 * once more (it returns at once for it), less without. Rounds of each,
 * side by side, and the median of their differences: one pair of
 * minima was 0 on a loaded machine as often as not, and once 1.5 us.
 * Five pairs spread as nine did (87-320 ns against 120-411 for six
 * entries, four runs each) and take 30 ms less of the start-up, most
 * of a pair being the attach and detach. -1 if it cannot be had.
 */
double tracer_calibrate_entry(struct tracer *t)
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
 * What bpf_stats adds to each run it times (its clock read inside the
 * span): the run time it counts for the sock_recv_length program over
 * empty recv()s, for which it returns at once. 0 if it cannot be had.
 */
double tracer_calibrate_stats(struct tracer *t)
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
