/*
 * `netstage observe --port PORT`: time the request/response transactions
 * of a server netstage did not write, from the kernel alone. No traffic
 * and no workers of its own: the tracer in observe mode (NS_SERVER_OBS),
 * one ring read every few milliseconds, and the outputs every side has.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "core/common.h"
#include "net/flow.h"
#include "output/metrics.h"
#include "net/metrics_http.h"
#include "sys/privs.h"
#include "cmd/run.h"
#include "side/side.h"
#include "side/side_out.h"
#include "sys/stop.h"
#include "trace/collect.h"
#include "trace/tracer.h"

/* How often the ring is read: BPF does not wake us (BPF_RB_NO_WAKEUP). */
#define READ_EVERY_MS 10
/* How long a read of a ring that does not empty goes on (ns). */
#define READ_FOR_NS (20 * 1000 * 1000ULL)
/* How long a record may come after its stamp, and still count on time. */
#define DRAINED_SLACK_NS (1000 * 1000ULL)

/* The inodes of TCP sockets listening on port, from one /proc table. */
static int listening_inodes(const char *table, int port,
			    unsigned long *ino, int max)
{
	FILE *f = fopen(table, "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned int lport, state;
		unsigned long inode;

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*s %x %*s %*s %*s "
			   "%*d %*d %lu", &lport, &state, &inode) == 3 &&
		    (int)lport == port && state == 0x0A)
			ino[n++] = inode;
	}
	fclose(f);
	return n;
}

/* Does process pid hold one of these socket inodes? */
static int holds_socket(const char *pid, const unsigned long *ino, int n)
{
	char dir[64], path[64 + 256], link[64];
	struct dirent *e;
	unsigned long i;
	int found = 0, k;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%.40s/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(path))
			continue;
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &i) != 1)
			continue;
		for (k = 0; k < n; k++)
			found |= ino[k] == i;
	}
	closedir(d);
	return found;
}

/* The process listening on TCP port: its pid, or -1 with why. */
static int find_listener(int port, char *why, size_t len)
{
	unsigned long ino[64];
	struct dirent *e;
	int n, pid = -1;
	DIR *d;

	n = listening_inodes("/proc/net/tcp", port, ino, 64);
	n += listening_inodes("/proc/net/tcp6", port, ino + n, 64 - n);
	if (!n) {
		snprintf(why, len, "nothing listens on TCP port %d",
			 port);
		return -1;
	}
	d = opendir("/proc");
	while (d && pid < 0 && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
		    holds_socket(e->d_name, ino, n))
			pid = atoi(e->d_name);
	if (d)
		closedir(d);
	if (pid < 0)
		snprintf(why, len, "TCP port %d listens, but no "
			 "process here holds its socket", port);
	return pid;
}

/* Is the process there and not a zombie its parent has yet to reap? */
static int alive(int pid)
{
	char path[48], line[256], *p;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	p = ok ? strrchr(line, ')') : NULL;
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

struct observer {
	struct side side;
	int pid;
	struct metrics_http *http;	/* --listen, or NULL */
	uint64_t end;		/* transactions count from t_start to here */
	uint64_t lost;		/* events lost in BPF by the last interval */
	uint64_t cost_end;	/* the cost's window closes */
	char err[256];
};

/*
 * The network namespace pid serves in (its inode): tracepoints fire for
 * every namespace's sockets, and another's may use the same port.
 */
static uint32_t netns_of(int pid)
{
	char path[48];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return stat(path, &st) ? 0 : (uint32_t)st.st_ino;
}

/*
 * Close the intervals that ended by t, each at its own end: a
 * transaction counts in the interval its last stamp falls in, however
 * late its record is read. An interval that lost events says so.
 */
static void close_intervals(struct observer *ob, uint64_t t)
{
	struct worker *w = &ob->side.workers[0];
	uint64_t lost;

	while (t >= w->next_snap) {
		worker_snapshot(w, w->next_snap);
		lost = tracer_lost(ob->side.rs.tracer);
		if (lost > ob->lost)
			log_err("interval %ld: %llu events lost in BPF: its "
				"figures are incomplete", w->k,
				(unsigned long long)(lost - ob->lost));
		ob->lost = lost;
	}
}

static int at_time(void *arg, uint64_t t)
{
	struct observer *ob = arg;

	/* Before the clock started: records of the programs' first ms. */
	if (t < ob->side.rs.t_start || t >= ob->end)
		return 1;
	close_intervals(ob, t);
	return 0;
}

/* The cost parts, once measured (what trace_cost_* keys print). */
static int cost_parts(struct observer *ob, double *ns)
{
	const struct trace_cost *c = &ob->side.rs.cost;
	const struct trace_worker *tw = ob->side.workers[0].tw;
	struct trace_cost_parts p;

	/* Finished (its thread joined), or it may be writing them. */
	if (c->inited || trace_cost_parts(c, tw->cost_n ? (double)tw->cost_ns /
						     tw->cost_n : -1, &p))
		return 0;
	ns[MC_BPF] = p.bpf_ns;
	ns[MC_ENTRY] = p.entry_ns;
	ns[MC_USER] = p.user_ns;
	ns[MC_TOTAL] = p.total_ns;
	return 1;
}

/* GET /metrics: what the run has seen so far. */
static void render_metrics(void *arg, FILE *f)
{
	struct observer *ob = arg;
	const struct trace_worker *tw = ob->side.workers[0].tw;
	struct metrics_view v = {
		.port = ob->side.o->port,
		.side = tw->side,
		.stage = tw->stage,
		.transactions = tw->complete + tw->missing + tw->disorder,
		.incomplete = tw->missing + tw->disorder,
		.lost = tracer_lost(ob->side.rs.tracer),
	};

	v.has_cost = cost_parts(ob, v.cost_ns);
	metrics_write(f, &v);
}

/* The tracer in observe mode and the one reader of its one ring. */
static int observer_open(struct observer *ob)
{
	struct side *s = &ob->side;
	struct tracer_cfg cfg = {
		.side = trace_side(&s->rs),
		.data_port = s->o->port,
		.nworkers = 1,
		.verbose = s->o->logtostderr,
		.observe_tgid = ob->pid,
		.observe_netns = netns_of(ob->pid),
	};
	struct worker *w;

	s->rs.tracer = tracer_open(&cfg, s->trace_off, sizeof(s->trace_off));
	if (!s->rs.tracer) {
		snprintf(ob->err, sizeof(ob->err), "%.200s",
			 s->trace_off);
		return -1;
	}
	if (tracer_note(s->rs.tracer))
		log_err("%s", tracer_note(s->rs.tracer));
	/*
	 * One worker that is no thread, with one flow standing for the
	 * server: the interval snapshots, samples and progress lines of
	 * every side follow from them (worker_maybe_snapshot).
	 */
	s->workers = w = xcalloc(1, sizeof(*w));
	s->nworkers = 1;
	worker_init(w, &s->rs);
	w->tw = xcalloc(1, sizeof(*w->tw));
	if (trace_worker_init(w->tw, s->rs.tracer, 0, trace_side(&s->rs),
			      s->o->trace_max_records)) {
		snprintf(ob->err, sizeof(ob->err), "ring buffer: %s",
			 strerror(errno));
		return -1;
	}
	w->tw->at = at_time;
	w->tw->at_arg = ob;
	side_add_flow(s, w->tw->server = flow_new(-1, 0, 1));
	worker_add_flow(w, w->tw->server);
	if (s->o->listen) {
		ob->http = metrics_http_open(s->o->listen, render_metrics, ob,
					     ob->err, sizeof(ob->err));
		if (!ob->http)
			return -1;
		log_info("serving /metrics on %s", s->o->listen);
	}
	return 0;
}

/* --listen without -l: until stopped. */
static int forever(const struct options *o)
{
	return o->listen && !options_given(o, "test_length");
}

/* The clock starts: intervals from here. */
static void observer_start(struct observer *ob)
{
	struct side *s = &ob->side;

	intervals_init(&s->rs.iv, 1, 1, 1, s->o->quiet, s->o->interval,
		       "observe");
	/*
	 * Until stopped, for weeks maybe: Prometheus keeps the history;
	 * the run keeps none of its own (90 bytes an interval), so that
	 * its memory holds still.
	 */
	s->rs.no_history = s->rs.iv.no_history = forever(s->o);
	getrusage(RUSAGE_SELF, &s->res.ru_start);
	cpu_read(&s->res.cpu_start);
	s->res.t_start = s->rs.t_start = now_ns();
	s->workers[0].next_snap = s->rs.t_start + s->rs.interval_ns;
	ob->end = forever(s->o) ? UINT64_MAX
				: s->rs.t_start + s->o->test_length * NSEC_PER_SEC;
	/* Until stopped: measured 1 s in, as a 4 s run's would be. */
	trace_cost_start(&s->rs.cost, s->rs.tracer,
			 forever(s->o) ? 4 : s->o->test_length);
	ob->cost_end = s->rs.t_start + s->rs.cost.delay_ns +
		       s->rs.cost.window_ns + NSEC_PER_SEC / 10;
	/* What comes after this line counts (scripts wait for it). */
	log_info("observing pid %d (and its children) on port %d with %s",
		 ob->pid, s->o->port, tracer_hooks(s->rs.tracer));
}

/*
 * Read for READ_FOR_NS at most; inside the cost window, time it: the
 * merge of a record is observe's cost in user space (trace_cost_user_ns).
 */
static int read_timed(struct trace_worker *tw, const struct trace_cost *c)
{
	uint64_t t0 = now_ns(), n0 = tw->nread;
	int timing = trace_cost_timing(c), more;

	more = trace_worker_read_some(tw, 0, t0 + READ_FOR_NS);
	if (timing) {
		tw->cost_ns += now_ns() - t0;
		tw->cost_n += tw->nread - n0;
	}
	return more;
}

/*
 * Read records until the time is up, a signal, or the server is gone.
 * With no record to close them, intervals close by the clock once a
 * read has emptied the ring: every record stamped before it began is
 * in, but for a thread held between its stamp and its record
 * (DRAINED_SLACK_NS).
 */
static int observe_loop(struct observer *ob)
{
	struct side *s = &ob->side;
	struct trace_worker *tw = s->workers[0].tw;
	int rc = 0, more = 0;

	for (;;) {
		uint64_t t0;

		/* A full ring is read on at once, the clock kept between. */
		if (!more)
			poll(NULL, 0, READ_EVERY_MS);
		t0 = now_ns();
		more = read_timed(tw, &s->rs.cost);
		if (!more)
			close_intervals(ob, t0 - DRAINED_SLACK_NS);
		/* Its figures stand once its window is over (--listen). */
		if (t0 > ob->cost_end)
			trace_cost_finish(&s->rs.cost);
		if (ob->http)
			metrics_http_serve(ob->http);
		if (now_ns() >= ob->end)
			break;
		/* Ctrl-C ends an observation as bpftrace's does: no error. */
		if (interrupted == INTERRUPTED_SIGNAL)
			break;
		if (interrupted) {
			s->res.error = interrupted_why();
			rc = 1;
			break;
		}
		if (!alive(ob->pid)) {
			s->res.error = "the observed process exited";
			rc = 1;
			break;
		}
	}
	if (now_ns() < ob->end)
		ob->end = now_ns();
	s->res.t_end = ob->end;
	trace_cost_finish(&s->rs.cost);
	/*
	 * The records of the run's last transactions, for a tenth of an
	 * interval at most: the observed server goes on, and may keep the
	 * ring full. Those of later ones are not counted.
	 */
	trace_worker_read_some(tw, 0, now_ns() + s->rs.interval_ns / 10);
	/*
	 * A response ends at its connection's next read or close: those
	 * still open (a kept connection's last) are sent now, and count if
	 * they came before the end, as the others.
	 */
	if (tracer_obs_flush(s->rs.tracer))
		log_err("each connection's last response is not counted: "
			"%s", strerror(errno));
	trace_worker_read_some(tw, 0, now_ns() + s->rs.interval_ns / 10);
	s->res.obs_skipped = tracer_obs_count(s->rs.tracer, NS_OBS_SKIPPED);
	s->res.obs_flushed = tracer_obs_count(s->rs.tracer, NS_OBS_FLUSHED);
	/* A last interval that is all but over counts, as a worker's does. */
	close_intervals(ob, ob->end + s->rs.interval_ns / 10);
	worker_finish(&s->workers[0]);
	return rc;
}

static void observe_results(struct observer *ob)
{
	struct side *s = &ob->side;
	struct side_result *r = &s->res;
	struct trace_worker *tw = s->workers[0].tw;
	double dur = ns_to_s(r->t_end - r->t_start);

	getrusage(RUSAGE_SELF, &r->ru_end);
	cpu_read(&r->cpu_end);
	r->observed_pid = ob->pid;
	r->transactions = tw->complete + tw->missing + tw->disorder;
	r->throughput = dur > 0 ? r->transactions / dur : 0;
	workers_summarise(&r->trace, s->workers, 1, &s->rs);
	side_keep_records(s);
}

int observe_run(struct options *o, const struct workload *wl)
{
	struct observer *ob = xcalloc(1, sizeof(*ob));
	int rc;

	log_set_role("netstage observe");
	if (!privs_may_load()) {
		log_err("needs root (CAP_BPF and CAP_PERFMON) to load its BPF programs");
		free(ob);
		return EXIT_RUNTIME;
	}
	ob->pid = o->pid ? o->pid : find_listener(o->port, ob->err,
						  sizeof(ob->err));
	if (ob->pid > 0 && !alive(ob->pid))
		snprintf(ob->err, sizeof(ob->err), "no process %d",
			 ob->pid), ob->pid = -1;
	rc = ob->pid < 0 ? -1 :
	     side_init(&ob->side, o, wl, 0, ob->err, sizeof(ob->err));
	if (!rc)
		rc = observer_open(ob);
	privs_loaded();
	if (!rc) {
		options_print(o, wl->name);
		observer_start(ob);
		rc = observe_loop(ob);
		observe_results(ob);
		if (rc)
			log_err("%s", ob->side.res.error);
		rc = side_finish(&ob->side) || rc ? EXIT_RUNTIME : 0;
	} else {
		log_err("%s", ob->err);
		rc = EXIT_RUNTIME;
	}
	metrics_http_close(ob->http);
	if (ob->pid >= 0 || ob->side.o)
		side_free(&ob->side);
	free(ob);
	return rc;
}
