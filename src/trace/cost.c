#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cost.h"
#include "tracer.h"

void trace_cost_init(struct trace_cost *c, struct tracer *t,
		     long nintervals)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->stats_fd = -1;
	/* The first interval holds the start-up; measure the second. */
	c->interval = nintervals >= 2 ? 1 : 0;
	if (!t)
		return;
	if (c->interval == 0)
		trace_cost_interval(c, -1, 0);
}

static void start(struct trace_cost *c)
{
	c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (c->stats_fd < 0) {
		c->error = "kernel.bpf_stats cannot be switched on";
		return;
	}
	if (tracer_run_stats(c->t, &c->run_ns, &c->runs)) {
		c->error = "the programs' run time cannot be read";
		return;
	}
	__atomic_store_n(&c->timing, 1, __ATOMIC_RELAXED);
}

static void stop(struct trace_cost *c, uint64_t n)
{
	uint64_t run_ns, runs;

	__atomic_store_n(&c->timing, 0, __ATOMIC_RELAXED);
	if (!tracer_run_stats(c->t, &run_ns, &runs)) {
		c->run_ns = run_ns - c->run_ns;
		c->runs = runs - c->runs;
		c->transactions = n;
		c->done = n > 0;
		if (!n)
			c->error = "no transaction in the interval measured";
	} else {
		c->error = "the programs' run time cannot be read";
	}
	close(c->stats_fd);
	c->stats_fd = -1;
}

void trace_cost_interval(struct trace_cost *c, long k, uint64_t n)
{
	if (!c->t || c->error || c->done)
		return;
	if (k == c->interval - 1)
		start(c);
	else if (k == c->interval && c->stats_fd >= 0)
		stop(c, n);
}

static const char *const names[] = {
	"trace_cost_ns", "trace_cost_bpf_ns", "trace_cost_entry_ns",
	"trace_cost_user_ns", "trace_cost_runs", "trace_cost_interval",
	"trace_cost_covers", "trace_cost_error",
};

void trace_cost_kv(const struct trace_cost *c, double user_ns,
		   struct kv_list *out)
{
	double n, bpf, runs, entry, e_ns;

	if (!c->done) {
		kv_str(out, "trace_cost_error",
		       c->error ? c->error : "the test ended before the "
					     "interval measured");
		return;
	}
	n = (double)c->transactions;
	bpf = c->run_ns / n;
	runs = c->runs / n;
	e_ns = tracer_entry_ns(c->t);
	entry = e_ns >= 0 ? runs * e_ns : 0;
	if (user_ns < 0)
		user_ns = 0;
	kv_num(out, "trace_cost_ns", bpf + entry + user_ns, 0);
	kv_num(out, "trace_cost_bpf_ns", bpf, 0);
	if (e_ns >= 0)
		kv_num(out, "trace_cost_entry_ns", entry, 0);
	kv_num(out, "trace_cost_user_ns", user_ns, 0);
	kv_num(out, "trace_cost_runs", runs, 2);
	kv_uint(out, "trace_cost_interval", c->interval + 1);
	kv_str(out, "trace_cost_covers",
	       tracer_both_ends(c->t) ? "both_ends" : "this_end");
}

void trace_cost_kv_names(struct kv_list *out)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		kv_str(out, names[i], "");
}

void trace_cost_free(struct trace_cost *c)
{
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
}
