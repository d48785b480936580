#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys/busypoll.h"
#include "core/common.h"
#include "script/script.h"
#include "trace/collect.h"
#include "trace/summary.h"
#include "trace/tracer.h"
#include "engine/worker.h"

void worker_arm(struct worker *w, struct flow *f, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = f };

	if (w->rs->o->edge_trigger)
		ev.events |= EPOLLET;
	if (f->events == events || w->epfd < 0)
		return;
	epoll_ctl(w->epfd, f->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, f->fd,
		  &ev);
	f->events = events;
}

void worker_flow_closed(struct worker *w, struct flow *f)
{
	if (!f->open)
		return;
	if (w->epfd >= 0 && f->events)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, f->fd, NULL);
	f->events = 0;
	f->open = 0;
	w->open_flows--;
}

struct flow *worker_adopt(struct worker *w, int fd)
{
	int n = w->rs->o->num_threads;
	struct flow *f = flow_new(fd, (int)(w->adopted++ * n + w->id), 0);

	f->adopted = 1;
	worker_add_flow(w, f);
	return f;
}

void worker_add_flow(struct worker *w, struct flow *f)
{
	if (w->nflows == w->flows_cap) {
		w->flows_cap = w->flows_cap ? 2 * w->flows_cap : 16;
		w->flows = xrealloc(w->flows, w->flows_cap, sizeof(*w->flows));
	}
	w->flows[w->nflows++] = f;
	w->open_flows++;
	flow_attach_latency(f, &w->ilat, w->rs->record_samples);
	f->lat_unc = &w->ilat_unc;
}

/* Free accepted flows that closed, keeping what they counted. */
static void reap(struct worker *w)
{
	int i = 0;

	while (i < w->nflows) {
		struct flow *f = w->flows[i];

		if (!f->adopted || f->open) {
			i++;
			continue;
		}
		w->gone_transactions += f->transactions;
		w->gone_read += f->bytes_read;
		w->gone_written += f->bytes_written;
		flow_free(f);
		w->flows[i] = w->flows[--w->nflows];
	}
}


int worker_done(struct worker *w)
{
	struct run_shared *rs = w->rs;

	if (!worker_stopping(w))
		return 0;
	if (!atomic_load(&rs->drain))
		return 1;
	return w->open_flows == 0 || now_ns() >= rs->drain_deadline;
}

static struct timespec nap(uint64_t ns)
{
	return (struct timespec){ ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };
}

/*
 * Sleep no longer than the next snapshot or the engine's deadline, to
 * the nanosecond: an open-loop schedule of 100 us gaps cannot wait in
 * milliseconds.
 */
static struct timespec wait_for(struct worker *w, uint64_t deadline)
{
	uint64_t now, until = w->next_snap, ns;

	/* Far from the snapshot: wake early by the coarse clock's lag. */
	if (!deadline && !worker_stopping(w)) {
		now = coarse_ns() + w->coarse_lag;
		if (now < until)
			return nap(until - now);
	}
	now = now_ns();
	if (worker_stopping(w))
		until = now + 50000000;
	else if (deadline && deadline < until)
		until = deadline;
	ns = until > now ? until - now : 0;
	return nap(ns);
}

/*
 * epoll_pwait2 for its nanosecond timeout; where the kernel refuses it
 * (before 5.11, a seccomp filter, valgrind), epoll_wait in milliseconds,
 * rounded up so the loop never spins.
 */
static int wait_events(struct worker *w, struct epoll_event *ev, int max,
		       const struct timespec *ts)
{
	static int no_pwait2 = -1;
	int n, ms;

	if (__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED) == -1)
		__atomic_store_n(&no_pwait2, pretend_enosys("epoll_pwait2"),
				 __ATOMIC_RELAXED);
	if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		/* The syscall: glibc's wrapper is a cancellation point (io.h). */
		n = syscall(SYS_epoll_pwait2, w->epfd, ev, max, ts, NULL,
			    _NSIG / 8);
		if (n >= 0 || (errno != ENOSYS && errno != EPERM))
			return n;
		__atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
	}
	ms = (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
	return epoll_wait(w->epfd, ev, max, ms);
}

/*
 * --trace-sample: does a flow of this epoll batch complete a timed
 * transaction next? Only then is the return's clock read (EPOLL_RET).
 */
static int batch_sampled(const struct worker *w,
			 const struct epoll_event *ev, int n)
{
	const struct flow *f;
	int i;

	if (w->tw->sample <= 1)
		return 1;
	for (i = 0; i < n; i++)
		if ((f = ev[i].data.ptr) && trace_worker_sampled(w->tw, f))
			return 1;
	return 0;
}

static void epoll_loop(struct worker *w)
{
	int max = w->rs->o->maxevents, i, n, efd_armed = 1;
	int busy = w->rs->o->io_mode == IO_BUSY;
	struct epoll_event *ev = xcalloc(max, sizeof(*ev));
	uint64_t deadline = 0, now;

	for (i = 0; i < w->nflows; i++)
		w->rs->wl->start(w, w->flows[i]);
	/* The engine's first deadline, before the first sleep. */
	if (w->rs->wl->tick)
		deadline = w->rs->wl->tick(w, now_ns());
	while (!worker_done(w)) {
		/* --io-mode=busy: poll, never sleep (no wake-up to wait for). */
		struct timespec ts = busy ? (struct timespec){ 0, 0 }
					  : wait_for(w, deadline);

		n = wait_events(w, ev, max, &ts);
		if (n < 0 && errno != EINTR) {
			snprintf(w->fatal, sizeof(w->fatal), "epoll_wait: %s",
				 strerror(errno));
			break;
		}
		if (w->tw)
			w->t_epoll = batch_sampled(w, ev, n) ? now_ns() : 0;
		for (i = 0; i < n; i++) {
			struct flow *f = ev[i].data.ptr;

			if (!f) {
				/* Draining: stop waking on the stop event. */
				if (efd_armed && atomic_load(&w->rs->drain)) {
					epoll_ctl(w->epfd, EPOLL_CTL_DEL,
						  w->rs->stop_efd, NULL);
					efd_armed = 0;
				}
				continue;
			}
			if (!f->open)
				continue;
			if (w->phooks && !(ev[i].events =
					   w->rs->on_event(w, f->fd,
							   ev[i].events)))
				continue;
			w->rs->wl->event(w, f, ev[i].events);
		}
		if (w->rs->wl->accepts_per_worker)
			reap(w);
		if (worker_stopping(w))
			continue;
		if (!w->rs->wl->tick) {
			worker_poll_snapshot(w);
			continue;
		}
		/* One clock read serves the engine's deadlines and the snapshot. */
		now = now_ns();
		deadline = w->rs->wl->tick(w, now);
		worker_maybe_snapshot(w, now);
	}
	free(ev);
}

/*
 * How far behind coarse_ns() may be: two of its ticks, so that a
 * snapshot is not late for a tick the kernel took late. Without the
 * coarse clock, an hour: every check reads the clock.
 */
static uint64_t coarse_lag(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec)
		return 3600 * NSEC_PER_SEC;
	return 2 * (uint64_t)res.tv_nsec;
}

static void pin(struct worker *w)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->id % (ncpu > 0 ? ncpu : 1), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * A worker that opens no file of its own runs on its own copy of the
 * process's fd table. The kernel then lends a socket to each syscall
 * (fdget()'s path for a table with one user) instead of taking a
 * reference and dropping it, as it must for a table threads share:
 * two atomic operations a call. Not where the worker makes sockets the
 * side closes (tcp_crr's accepts) or a script may open files: numbers
 * in a copy name nothing in the original.
 */
static int own_files(const struct run_shared *rs)
{
	if (rs->wl->accepts_per_worker || rs->script)
		return 0;
	return unshare(CLONE_FILES) == 0;
}

/*
 * The copy's references go before the thread does: pthread_join()
 * returns before the kernel releases an exiting thread's table, and the
 * side's close of a flow must be its last, the FIN going then.
 */
static void drop_own_files(const struct worker *w)
{
	if (w->own_files)
		close_range(0, ~0U, 0);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run_shared *rs = w->rs;

	w->tid = (uint32_t)gettid();
	if (rs->o->pin_cpu)
		pin(w);
	/* An open-loop schedule wants its timed sleeps to end on time. */
	if (rs->o->rate > 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	w->next_snap = rs->t_start + rs->interval_ns;
	w->coarse_lag = coarse_lag();
	if (rs->tracer && tracer_register_thread(rs->tracer, w->id))
		worker_error(w, errno);
	w->own_files = own_files(rs);
	if (io_thread_per_flow(rs->o->io_mode)) {
		if (w->nflows)
			rs->wl->run_blocking(w, w->flows[0]);
		while (!worker_stopping(w))
			worker_maybe_snapshot(w, now_ns()),
				usleep(10000);
	} else {
		epoll_loop(w);
	}
	if (w->tw)
		trace_worker_end(w->tw);
	worker_final_snapshot(w);
	worker_finish(w);
	drop_own_files(w);
	return NULL;
}

void worker_init(struct worker *w, struct run_shared *rs)
{
	w->rs = rs;
	w->epfd = -1;
	w->ev_fd = -1;
	hist_reset(&w->ilat);
	hist_reset(&w->lat_total);
	hist_reset(&w->ilat_unc);
	hist_reset(&w->lat_unc_total);
}

/* One buffer serves every send and recv of the worker's flows. */
static size_t worker_buf_size(const struct options *o)
{
	size_t n = 65536;

	if ((size_t)o->buffer_size > n)
		n = o->buffer_size;
	if ((size_t)o->read_size > n)
		n = o->read_size;
	return n;
}

static int setup_worker(struct worker *w, struct run_shared *rs, char *err,
			size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	worker_init(w, rs);
	if (rs->script) {
		w->sw = script_worker(rs->script, w->id);
		w->phooks = rs->phooks;
	}
	w->buf = xcalloc(1, worker_buf_size(rs->o));
	if (rs->tracer && !rs->trace_hist) {
		w->tw = xcalloc(1, sizeof(*w->tw));
		if (trace_worker_init(w->tw, rs->tracer, w->id,
				      trace_side(rs),
				      rs->trace_recs_per_worker)) {
			snprintf(err, len, "trace ring: %s", strerror(errno));
			return -1;
		}
		/* A TCP request is named by where it starts in its stream. */
		if (!NS_IS_UDP(trace_side(rs)) && !NS_IS_CRR(trace_side(rs)))
			w->tw->req_bytes = rs->request_size;
		w->tw->sample = rs->o->trace_sample;
		w->tw->control = rs->o->trace_control;
		w->tw->cost = &rs->cost;
		/* The untimed transactions are a control group. */
		if (rs->is_client && (rs->o->trace_sample > 1 ||
				      rs->o->trace_control > 1)) {
			w->tw->inrun = xcalloc(1, sizeof(*w->tw->inrun));
			inrun_init(w->tw->inrun, rs->t_start,
				   (uint64_t)rs->o->test_length * NSEC_PER_SEC);
		}
	}
	if (io_thread_per_flow(rs->o->io_mode))
		return 0;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, rs->stop_efd, &ev)) {
		snprintf(err, len, "epoll: %s", strerror(errno));
		return -1;
	}
	if (rs->o->busy_poll)
		busy_poll_epoll(w->epfd, rs->o->busy_poll);
	return 0;
}

int workers_start(struct worker **out, int n, struct run_shared *rs,
		  struct flow **flows, int nflows, char *err, size_t len)
{
	struct worker *w = xcalloc(n, sizeof(*w));
	int i, rc;

	*out = w;
	for (i = 0; i < n; i++)
		w[i].epfd = -1;
	for (i = 0; i < n; i++) {
		w[i].id = i;
		w[i].flows_cap = nflows / n + 1;
		w[i].flows = xcalloc(w[i].flows_cap, sizeof(struct flow *));
		if (setup_worker(&w[i], rs, err, len))
			return -1;
	}
	for (i = 0; i < nflows; i++)
		worker_add_flow(&w[i % n], flows[i]);
	for (i = 0; i < n; i++) {
		rc = pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
		if (rc) {
			snprintf(err, len, "pthread_create: %s", strerror(rc));
			atomic_store(&rs->stop, 1);
			while (i--)
				pthread_join(w[i].thread, NULL);
			return -1;
		}
	}
	return 0;
}

static void wake(struct run_shared *rs)
{
	uint64_t one = 1;

	if (write(rs->stop_efd, &one, sizeof(one)) < 0)
		log_err("eventfd write: %s", strerror(errno));
}

void workers_stop(struct worker *w, int n, struct run_shared *rs)
{
	struct timespec ts;
	int i, j;

	atomic_store(&rs->stop, 1);
	wake(rs);
	/*
	 * A blocking server waits in recv() for requests that will not come:
	 * it stops after every client's workers did. SHUT_RD ends the wait
	 * at once (end of file, nothing sent), not 2 s later, which would
	 * add two empty intervals to its throughput. A stream's is draining
	 * what was sent before the stop, to the end of file.
	 */
	if (!rs->is_client && rs->o->io_mode == IO_BLOCKING && rs->wl->is_rr)
		for (i = 0; i < n; i++)
			for (j = 0; j < w[i].nflows; j++)
				shutdown(w[i].flows[j]->fd, SHUT_RD);
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		if (!pthread_timedjoin_np(w[i].thread, NULL, &ts))
			continue;
		/* Blocked in a syscall on a silent peer: wake it. */
		for (j = 0; j < w[i].nflows; j++)
			shutdown(w[i].flows[j]->fd, SHUT_RDWR);
		pthread_join(w[i].thread, NULL);
	}
}

void workers_free(struct worker *w, int n)
{
	int i;

	if (!w)
		return;
	for (i = 0; i < n; i++) {
		if (w[i].epfd >= 0)
			close(w[i].epfd);
		/* The side frees the flows it made; accepted ones are ours. */
		for (int j = 0; j < w[i].nflows; j++)
			if (w[i].flows[j]->adopted)
				flow_free(w[i].flows[j]);
		free(w[i].flows);
		free(w[i].buf);
		free(w[i].ticks);
		free(w[i].samples);
		if (w[i].tw)
			trace_worker_free(w[i].tw);
		free(w[i].tw);
	}
	free(w);
}

struct trace_worker **workers_tw(struct worker *w, int n)
{
	struct trace_worker **tw = xcalloc(n > 0 ? n : 1, sizeof(*tw));
	int i;

	for (i = 0; i < n; i++)
		tw[i] = w[i].tw;
	return tw;
}

void workers_summarise(struct trace_summary *ts, struct worker *w, int n,
		       const struct run_shared *rs)
{
	struct trace_worker **tw = workers_tw(w, n);
	struct trace_run run = { .side = trace_side(rs) };

	/* No worker ran: nothing was traced, whatever was asked. */
	if (n > 0) {
		run.hist_mode = rs->trace_hist;
		run.sample = rs->o->trace_sample;
		run.control = rs->o->trace_control;
		run.cost = &rs->cost;
	}
	trace_summarise(ts, rs->tracer, tw, n, &run);
	free(tw);
}
