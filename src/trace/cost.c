#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/common.h"
#include "sys/privs.h"
#include "trace/cost.h"
#include "trace/tracer.h"

#define WINDOW_MAX_NS (200 * 1000000ULL)

/* Wait until `until` (CLOCK_MONOTONIC ns) or the test's end: 0, or -1. */
static int wait_until(struct trace_cost *c, uint64_t until)
{
	struct timespec ts = { until / NSEC_PER_SEC, until % NSEC_PER_SEC };
	int stop;

	pthread_mutex_lock(&c->mu);
	while (!c->stop &&
	       pthread_cond_timedwait(&c->cv, &c->mu, &ts) != ETIMEDOUT)
		;
	stop = c->stop;
	pthread_mutex_unlock(&c->mu);
	return stop ? -1 : 0;
}

/*
 * What the window's program runs cost this run: each program's run
 * time per run times its runs for this run's own packets, sockets and
 * threads; and the runs left out (other processes').
 */
static void charge(struct trace_cost *c, const struct tracer_stats *a,
		   const struct tracer_stats *b)
{
	double ns = 0;
	uint64_t runs, own;
	int i;

	c->runs = c->foreign_runs = 0;
	for (i = 0; i < NS_P_COUNT; i++) {
		runs = b->runs[i] - a->runs[i];
		own = b->own[i] - a->own[i];
		if (!runs)
			continue;
		/* A run counted own and not timed (bpf_stats racing) */
		if (own > runs)
			own = runs;
		ns += (double)(b->run_ns[i] - a->run_ns[i]) * own / runs;
		c->runs += own;
		c->foreign_runs += runs - own;
	}
	c->run_ns = (uint64_t)ns;
}

static void *measure(void *arg)
{
	struct trace_cost *c = arg;
	struct tracer_stats s0, s1;
	uint64_t t0 = now_ns(), n0;
	int fd;

	if (wait_until(c, t0 + c->delay_ns))
		return NULL;
	fd = privs_stats_fd();
	if (fd < 0) {
		c->error = "kernel.bpf_stats cannot be switched on";
		return NULL;
	}
	/* What its clock reads add to a run: measurable only now. */
	tracer_calibrate_stats(c->t);
	tracer_counting(c->t, 1);
	/*
	 * The transactions are counted inside the programs' window: this
	 * thread, preempted between two reads (the workers busy on every
	 * CPU), then adds runs of transactions not counted, never counts
	 * transactions whose runs it missed.
	 */
	if (tracer_stats(c->t, &s0))
		c->error = "the programs' run time cannot be read";
	n0 = tracer_done(c->t);
	__atomic_store_n(&c->timing, 1, __ATOMIC_RELAXED);
	wait_until(c, now_ns() + c->window_ns);
	__atomic_store_n(&c->timing, 0, __ATOMIC_RELAXED);
	c->transactions = tracer_done(c->t) - n0;
	if (!c->error && tracer_stats(c->t, &s1))
		c->error = "the programs' run time cannot be read";
	tracer_counting(c->t, 0);
	close(fd);
	if (c->error)
		return NULL;
	charge(c, &s0, &s1);
	c->done = c->transactions > 0;
	if (!c->done)
		c->error = "no transaction completed while it was measured";
	return NULL;
}

void trace_cost_start(struct trace_cost *c, struct tracer *t, double test_s)
{
	uint64_t test_ns = (uint64_t)(test_s * NSEC_PER_SEC);

	pthread_condattr_t ca;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->delay_ns = test_ns / 4;
	c->window_ns = test_ns / 10 < WINDOW_MAX_NS ? test_ns / 10
						    : WINDOW_MAX_NS;
	if (!t)
		return;
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	c->inited = 1;
	c->started = !pthread_create(&c->thread, NULL, measure, c);
	if (!c->started)
		c->error = "no thread to measure it";
}

void trace_cost_finish(struct trace_cost *c)
{
	if (!c->inited)
		return;
	if (c->started) {
		pthread_mutex_lock(&c->mu);
		c->stop = 1;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
		c->started = 0;
	}
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	c->inited = 0;
	if (!c->done && !c->error)
		c->error = "the test ended before it was measured";
}

static const char *const names[] = {
	"trace_cost_ns", "trace_cost_bpf_ns", "trace_cost_entry_ns",
	"trace_cost_user_ns", "trace_cost_runs", "trace_cost_foreign_runs",
	"trace_cost_window_ms", "trace_cost_covers", "trace_cost_error",
};

int trace_cost_parts(const struct trace_cost *c, double user_ns,
		     struct trace_cost_parts *p)
{
	double n, e_ns;

	if (!c->done)
		return -1;
	n = (double)c->transactions;
	p->runs = c->runs / n;
	/* bpf_stats' own clock read lies inside each run it times. */
	p->bpf_ns = ((double)c->run_ns - c->runs * tracer_stats_ns(c->t)) / n;
	if (p->bpf_ns < 0)
		p->bpf_ns = 0;
	e_ns = tracer_entry_ns(c->t);
	p->has_entry = e_ns >= 0;
	p->entry_ns = e_ns >= 0 ? p->runs * e_ns : 0;
	p->user_ns = user_ns < 0 ? 0 : user_ns;
	p->total_ns = p->bpf_ns + p->entry_ns + p->user_ns;
	return 0;
}

void trace_cost_kv(const struct trace_cost *c, double user_ns,
		   struct kv_list *out)
{
	struct trace_cost_parts p;

	if (trace_cost_parts(c, user_ns, &p)) {
		kv_str(out, "trace_cost_error",
		       c->error ? c->error : "not measured");
		return;
	}
	kv_num(out, "trace_cost_ns", p.total_ns, 0);
	kv_num(out, "trace_cost_bpf_ns", p.bpf_ns, 0);
	if (p.has_entry)
		kv_num(out, "trace_cost_entry_ns", p.entry_ns, 0);
	kv_num(out, "trace_cost_user_ns", p.user_ns, 0);
	kv_num(out, "trace_cost_runs", p.runs, 2);
	kv_num(out, "trace_cost_foreign_runs",
	       c->foreign_runs / (double)c->transactions, 2);
	kv_num(out, "trace_cost_window_ms", c->window_ns / 1e6, 0);
	kv_str(out, "trace_cost_covers",
	       tracer_both_ends(c->t) ? "both_ends" : "this_end");
}

void trace_cost_kv_names(struct kv_list *out)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		kv_str(out, names[i], "");
}
