#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/common.h"
#include "stats/fit.h"
#include "net/net.h"
#include "side/report.h"
#include "trace/tracer.h"

static void throughput_fit(struct side_result *r, struct worker *w, int n,
			   const struct run_shared *rs)
{
	long k, nk = -1;
	double *x, *y, slope, corr, dur;
	int i;

	for (i = 0; i < n; i++)
		if (nk < 0 || w[i].nticks < nk)
			nk = w[i].nticks;
	if (nk < 0)
		nk = 0;
	x = xcalloc(nk, sizeof(*x));
	y = xcalloc(nk, sizeof(*y));
	for (k = 0; k < nk; k++) {
		for (i = 0; i < n; i++) {
			x[k] += ns_to_s(w[i].ticks[k].time - rs->t_start);
			y[k] += rs->wl->is_rr ? w[i].ticks[k].transactions
					      : w[i].ticks[k].bytes * 8.0 / 1e6;
		}
		x[k] /= n;
	}
	linear_fit(x, y, nk, &slope, &corr);
	r->num_samples = nk;
	dur = ns_to_s(r->t_end - r->t_start);
	if (isnan(slope) && dur > 0)
		/* Too few samples for a fit: the plain average. */
		slope = (rs->wl->is_rr ? r->transactions
				       : (r->bytes_read + r->bytes_written) *
						 8.0 / 1e6) / dur;
	r->throughput = slope;
	r->correlation = corr;
	free(x);
	free(y);
}

/*
 * --raw: a flow the server closed, one whose response passed the size
 * the framing accepts, or one without a whole response for longer than
 * --rr-timeout when the test ended (a silent server).
 */
static void raw_flow_verdict(struct side_result *r, const struct flow *f,
			     const struct run_shared *rs)
{
	uint64_t since = f->t_progress ? f->t_progress : rs->t_start;

	r->unexpected_bytes += f->unexpected;
	if (f->overlong)
		r->overlong_flows++;
	else if (f->peer_closed)
		r->closed_flows++;
	/* Workers may finish a response after t_end was taken. */
	else if (f->open && since < r->t_end && r->t_end - since >
		 (uint64_t)rs->o->rr_timeout * 1000000)
		r->silent_flows++;
}

void report_collect(struct side_result *r, struct worker *w, int n,
		    const struct run_shared *rs)
{
	int i, j;

	hist_reset(&r->lat);
	hist_reset(&r->lat_unc);
	for (i = 0; i < n; i++) {
		if (w[i].fatal[0] && !r->error)
			r->error = w[i].fatal;
		r->errors += w[i].errors;
		if (w[i].last_errno)
			r->last_errno = w[i].last_errno;
		r->transactions += w[i].gone_transactions;
		r->bytes_read += w[i].gone_read;
		r->bytes_written += w[i].gone_written;
		hist_merge(&r->lat, &w[i].lat_total);
		hist_merge(&r->lat_unc, &w[i].lat_unc_total);
		for (j = 0; j < w[i].nflows; j++) {
			struct flow *f = w[i].flows[j];

			r->transactions += f->transactions;
			r->bytes_read += f->bytes_read;
			r->bytes_written += f->bytes_written;
			r->lost += f->lost;
			r->mismatched += f->mismatched;
			r->sent += f->sent_total;
			r->behind += f->behind;
			r->late += f->late;
			if (rs->raw)
				raw_flow_verdict(r, f, rs);
		}
	}
	r->busy_poll = busy_poll_take();
	throughput_fit(r, w, n, rs);
	if (rs->tracer)
		workers_summarise(&r->trace, w, n, rs);
}

/* us of CPU per transaction (rr) or per KB moved (stream); -1 unknown. */
double report_service_demand_us(const struct side_result *r,
				const struct run_shared *rs)
{
	double busy = cpu_busy_s(&r->cpu_start, &r->cpu_end);
	double work = rs->wl->is_rr ? (double)r->transactions
				    : (r->bytes_read + r->bytes_written) / 1024.0;

	if (cpu_util(&r->cpu_start, &r->cpu_end) < 0 || work <= 0)
		return -1;
	return busy * 1e6 / work;
}

void report_fill_totals(const struct side_result *r,
			const struct run_shared *rs, struct ctl_msg *m)
{
	double util = cpu_util(&r->cpu_start, &r->cpu_end);
	double sd = report_service_demand_us(r, rs);

	m->f[R_TRANSACTIONS] = r->transactions;
	m->f[R_BYTES_READ] = r->bytes_read;
	m->f[R_BYTES_WRITTEN] = r->bytes_written;
	/* Within what the peer accepts (ctl_msg.h): rounding can pass 100%. */
	if (util > 100)
		util = 100;
	if (sd * 1e3 > CTL_DEMAND_MAX_NS)
		sd = -1;
	m->f[R_CPU_UTIL_PPM] = util < 0 ? UINT64_MAX : (uint64_t)(util * 1e4 + 0.5);
	m->f[R_SERVICE_DEMAND_NS] = sd < 0 ? UINT64_MAX : (uint64_t)(sd * 1e3 + 0.5);
}

static void cpu_kv(const char *who, double util, double sd,
		   struct kv_list *out)
{
	char key[48];

	snprintf(key, sizeof(key), "%s_cpu_util", who);
	kv_num(out, key, util < 0 ? NAN : util, 2);
	snprintf(key, sizeof(key), "%s_service_demand_us", who);
	kv_num(out, key, sd < 0 ? NAN : sd, 3);
}

static double tv(const struct timeval *t)
{
	return t->tv_sec + t->tv_usec / 1e6;
}

static void rusage_kv(const struct side_result *r, struct kv_list *out)
{
	const struct rusage *s = &r->ru_start, *e = &r->ru_end;

	kv_num(out, "utime_start", tv(&s->ru_utime), 6);
	kv_num(out, "utime_end", tv(&e->ru_utime), 6);
	kv_num(out, "stime_start", tv(&s->ru_stime), 6);
	kv_num(out, "stime_end", tv(&e->ru_stime), 6);
	kv_int(out, "maxrss_start", s->ru_maxrss);
	kv_int(out, "maxrss_end", e->ru_maxrss);
	kv_int(out, "minflt_start", s->ru_minflt);
	kv_int(out, "minflt_end", e->ru_minflt);
	kv_int(out, "majflt_start", s->ru_majflt);
	kv_int(out, "majflt_end", e->ru_majflt);
	kv_int(out, "nvcsw_start", s->ru_nvcsw);
	kv_int(out, "nvcsw_end", e->ru_nvcsw);
	kv_int(out, "nivcsw_start", s->ru_nivcsw);
	kv_int(out, "nivcsw_end", e->ru_nivcsw);
}

static void latency_kv(const struct side_result *r,
		       const struct run_shared *rs, struct kv_list *out)
{
	static const double std_p[] = { 50, 90, 99, 99.9 };
	const struct percentiles *pc = &rs->o->percentiles;
	const struct hist *h = &r->lat;
	char key[48];
	size_t i;

	kv_num(out, "latency_min_us", h->count ? h->min / 1e3 : 0, 3);
	kv_num(out, "latency_mean_us", hist_mean(h) / 1e3, 3);
	kv_num(out, "latency_max_us", h->count ? h->max / 1e3 : 0, 3);
	kv_num(out, "latency_stddev_us", hist_stddev(h) / 1e3, 3);
	for (i = 0; i < ARRAY_SIZE(std_p); i++) {
		snprintf(key, sizeof(key), "latency_p%g_us", std_p[i]);
		kv_num(out, key, hist_percentile(h, std_p[i]) / 1e3, 3);
	}
	for (i = 0; i < (size_t)pc->n; i++) {
		snprintf(key, sizeof(key), "latency_p%g_us", pc->p[i]);
		kv_num(out, key, hist_percentile(h, pc->p[i]) / 1e3, 3);
	}
}

/*
 * --rate: the latency keys above run from each request's intended send;
 * these say what the client achieved and what latency from the actual
 * send (which hides the client's own stalls) would have been.
 */
static void open_loop_kv(const struct side_result *r,
			 const struct run_shared *rs, struct kv_list *out)
{
	static const double p[] = { 50, 90, 99, 99.9 };
	double dur = ns_to_s(r->t_end - r->t_start);
	double achieved = dur > 0 ? r->sent / dur : 0;
	char key[48];
	size_t i;

	kv_num(out, "target_rate", rs->o->rate, 2);
	kv_num(out, "achieved_rate", achieved, 2);
	kv_uint(out, "rate_behind", r->behind);
	kv_num(out, "latency_uncorrected_mean_us",
	       hist_mean(&r->lat_unc) / 1e3, 3);
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		snprintf(key, sizeof(key), "latency_uncorrected_p%g_us", p[i]);
		kv_num(out, key, hist_percentile(&r->lat_unc, p[i]) / 1e3, 3);
	}
}

/*
 * observe: what the observer counted of the server's transactions (it
 * sends nothing, so no bytes, flows or latency of its own), and how
 * they went by kernel stage.
 */
static void observe_kv(const struct side_result *r,
		       const struct run_shared *rs, struct kv_list *out)
{
	kv_num(out, "time_start", ns_to_s(r->t_start), 9);
	kv_int(out, "observed_port", rs->o->port);
	kv_int(out, "observed_pid", r->observed_pid);
	kv_num(out, "duration_s", ns_to_s(r->t_end - r->t_start), 3);
	kv_uint(out, "num_transactions", r->transactions);
	kv_uint(out, "observed_requests_skipped", r->obs_skipped);
	kv_uint(out, "observed_responses_flushed", r->obs_flushed);
	kv_num(out, "throughput", r->throughput, 2);
	kv_int(out, "num_cpus", cpu_count());
	cpu_kv("local", cpu_util(&r->cpu_start, &r->cpu_end), -1, out);
	trace_kv(&r->trace, rs->tracer, r->trace_off, r->transactions, out);
	if (r->error)
		kv_str(out, "error", r->error);
	kv_num(out, "time_end", ns_to_s(r->t_end), 9);
}

void report_kv(const struct side_result *r, const struct run_shared *rs,
	       struct kv_list *out)
{
	if (rs->wl->bit == W_OBSERVE) {
		observe_kv(r, rs, out);
		return;
	}
	if (!r->is_client)
		kv_int(out, "invalid_secret_count", r->invalid_secret_count);
	kv_num(out, "time_start", ns_to_s(r->t_start), 9);
	rusage_kv(r, out);
	kv_int(out, "flows", r->num_flows);
	kv_uint(out, "num_transactions", r->transactions);
	kv_uint(out, "bytes_read", r->bytes_read);
	kv_uint(out, "bytes_written", r->bytes_written);
	kv_uint(out, "io_errors", r->errors);
	kv_int(out, "start_index", 0);
	kv_int(out, "end_index", r->num_samples - 1);
	kv_int(out, "num_samples", r->num_samples);
	kv_num(out, rs->wl->is_rr ? "throughput" : "throughput_Mbps",
	       r->throughput, 2);
	kv_num(out, "correlation_coefficient", r->correlation, 2);
	if (rs->wl->is_rr && r->is_client)
		latency_kv(r, rs, out);
	if (rs->wl->is_rr && r->is_client && rs->wl->socktype == SOCK_STREAM &&
	    !rs->raw)
		kv_uint(out, "num_mismatched", r->mismatched);
	if (rs->raw) {
		if (rs->raw->resp_size && rs->raw->end_len)
			kv_uint(out, "raw_bad_end_responses", r->mismatched);
		kv_uint(out, "raw_unexpected_bytes", r->unexpected_bytes);
		kv_int(out, "raw_closed_flows", r->closed_flows);
		kv_int(out, "raw_silent_flows", r->silent_flows);
		kv_int(out, "raw_overlong_flows", r->overlong_flows);
	}
	if (rs->o->rate > 0 && r->is_client)
		open_loop_kv(r, rs, out);
	if (rs->wl->bit == W_UDP_RR && r->is_client) {
		kv_uint(out, "num_lost", r->lost);
		kv_uint(out, "num_late", r->late);
		kv_num(out, "loss_percent", r->transactions + r->lost ?
		       100.0 * r->lost / (r->transactions + r->lost) : 0, 3);
	}
	kv_int(out, "num_cpus", cpu_count());
	cpu_kv("local", cpu_util(&r->cpu_start, &r->cpu_end),
	       report_service_demand_us(r, rs), out);
	/* "" where no data connection was made. */
	if (rs->wl->socktype == SOCK_STREAM) {
		const char *cc = net_congestion();

		kv_str(out, "tcp_congestion", cc ? cc : "");
	}
	if (rs->o->busy_poll) {
		kv_int(out, "busy_poll_sockets", r->busy_poll.sockets);
		kv_int(out, "busy_poll_epolls", r->busy_poll.epolls);
	}
	if (r->has_remote) {
		kv_uint(out, "remote_num_transactions",
			r->remote[R_TRANSACTIONS]);
		kv_uint(out, "remote_bytes_read", r->remote[R_BYTES_READ]);
		kv_uint(out, "remote_bytes_written",
			r->remote[R_BYTES_WRITTEN]);
		cpu_kv("remote",
		       r->remote[R_CPU_UTIL_PPM] == UINT64_MAX ? -1 :
		       r->remote[R_CPU_UTIL_PPM] / 1e4,
		       r->remote[R_SERVICE_DEMAND_NS] == UINT64_MAX ? -1 :
		       r->remote[R_SERVICE_DEMAND_NS] / 1e3, out);
	}
	if (rs->o->trace)
		trace_kv(&r->trace, rs->tracer, r->trace_off, r->transactions,
			 out);
	if (r->error)
		kv_str(out, "error", r->error);
	kv_num(out, "time_end", ns_to_s(r->t_end), 9);
}

static const struct kv *find(const struct kv_list *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

/* The -o selection, in its order; keys this run lacks are left out. */
static void select_keys(const struct kv_list *all, const char *sel,
			struct kv_list *out)
{
	char *copy = xstrdup(sel), *tok, *save = NULL;
	const struct kv *kv;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if ((kv = find(all, tok))) {
			kv_str(out, kv->key, kv->text);
			out->v[out->n - 1].type = kv->type;
		}
	free(copy);
}

static void select_keys_all(const struct kv_list *all, struct kv_list *out)
{
	size_t i;

	for (i = 0; i < all->n; i++) {
		kv_str(out, all->v[i].key, all->v[i].text);
		out->v[out->n - 1].type = all->v[i].type;
	}
}

void report_select(const struct kv_list *results, const struct options *o,
		   struct kv_list *out)
{
	if (o->output)
		select_keys(results, o->output, out);
	else
		select_keys_all(results, out);
}

void report_print(const struct kv_list *results, const struct options *o,
		  const char *prefix, FILE *f)
{
	struct kv_list sel = { 0 };
	size_t i;

	if (!o->output && strcmp(o->output_format, "csv")) {
		kv_print(results, f, prefix);
		return;
	}
	report_select(results, o, &sel);
	if (!strcmp(o->output_format, "csv")) {
		for (i = 0; i < sel.n; i++)
			fprintf(f, "%s%s%s", i ? "," : "", prefix,
				sel.v[i].key);
		fputc('\n', f);
		for (i = 0; i < sel.n; i++)
			csv_field(f, sel.v[i].text, i);
		fputc('\n', f);
	} else if (!strcmp(o->output_format, "json")) {
		fputs("{\n", f);
		kv_json_members(&sel, f, 2);
		fputs("}\n", f);
	} else if (!strcmp(o->output_format, "human")) {
		for (i = 0; i < sel.n; i++)
			fprintf(f, "%s%-32s %s\n", prefix, sel.v[i].key,
				sel.v[i].text);
	} else {
		kv_print(&sel, f, prefix);
	}
	kv_free(&sel);
}

int report_check_keys(const struct options *o, const struct workload *wl,
		      char *err, size_t len)
{
	struct side_result *r = xcalloc(1, sizeof(*r));
	struct run_shared *rs = xcalloc(1, sizeof(*rs));
	struct kv_list all = { 0 };
	char *copy, *tok, *rest;
	int rc = 0;

	if (!o->output)
		goto out;
	/* Every key either side of this workload can print. */
	rs->o = o;
	rs->wl = wl;
	rs->raw = o->raw_spec;
	r->has_remote = 1;
	r->error = "";
	r->trace_off = "";
	for (r->is_client = 0; r->is_client < 2; r->is_client++) {
		rs->is_client = r->is_client;
		report_kv(r, rs, &all);
		/* The stage keys a traced run prints, traced or not here. */
		r->trace.side = trace_side(rs);
		r->trace.hist_mode = o->trace == 2;
		r->trace.sample = o->trace_sample;
		r->trace.control = o->trace_control;
		r->trace.has_retrans = tracer_side_retrans(r->trace.side);
		if (o->trace)
			trace_kv_names(&r->trace, &all);
	}
	copy = xstrdup(o->output);
	rest = copy;
	/* strsep: an empty key ("a,,b", ",") is an error, not skipped. */
	while (!rc && (tok = strsep(&rest, ",")) != NULL) {
		if (find(&all, tok))
			continue;
		if (*tok)
			snprintf(err, len,
				 "option --output: no result key '%s' in %s",
				 tok, wl->name);
		else
			snprintf(err, len,
				 "option --output: an empty key in '%s'",
				 o->output);
		rc = -1;
	}
	free(copy);
	kv_free(&all);
out:
	free(r);
	free(rs);
	return rc;
}
