#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/kv.h"
#include "trace/collect.h"
#include "trace/join.h"
#include "trace/retrans.h"
#include "trace/summary.h"
#include "trace/tracer.h"

static const double pcts[] = { 50, 90, 99, 99.9 };

int trace_stage_count(const struct trace_summary *ts)
{
	return ts->hist_mode ? kstage_count(ts->side) : stage_count(ts->side);
}

const struct stage_def *trace_stage_defs(const struct trace_summary *ts)
{
	return ts->hist_mode ? kstage_defs(ts->side) : stage_defs(ts->side);
}

/* The workers' timed merges, ns per transaction; -1: none timed. */
static double merge_cost(struct trace_worker *const *tw, int n)
{
	uint64_t ns = 0, count = 0;
	int i;

	for (i = 0; i < n; i++)
		if (tw[i]) {
			ns += tw[i]->cost_ns;
			count += tw[i]->cost_n;
		}
	return count ? (double)ns / count : -1;
}

/* What TCP resent on this side's connections, as BPF logged it. */
static void summarise_retrans(struct trace_summary *ts, struct tracer *t)
{
	const struct ns_retrans *log;
	uint32_t n;

	ts->has_retrans = t && tracer_has_retrans(t);
	if (!ts->has_retrans)
		return;
	ts->retransmits = tracer_retrans(t, &log, &n);
	ts->retransmitted = retrans_transactions(log, n, ts->side);
	ts->retrans_partial = n == NS_RETRANS_LOG;
	ts->retrans_logged = n;
}

void trace_mark_retrans(const struct trace_summary *ts, struct tracer *t,
			struct trace_worker *const *tw, int n)
{
	const struct ns_retrans *log;
	uint32_t nlog;
	int i;

	if (!ts->has_retrans || !ts->retransmits)
		return;
	tracer_retrans(t, &log, &nlog);
	if (nlog > ts->retrans_logged)
		nlog = ts->retrans_logged;
	for (i = 0; i < n; i++)
		if (tw[i])
			retrans_mark(tw[i]->recs, tw[i]->nrecs, ts->side,
				     log, nlog);
}

/* --trace-sample or --trace-control, a client: its control group. */
static void summarise_inrun(struct trace_summary *ts,
			    struct trace_worker *const *tw, int n)
{
	struct inrun *all = NULL;
	int i;

	for (i = 0; i < n; i++) {
		if (!tw[i] || !tw[i]->inrun)
			continue;
		if (!all) {
			all = xcalloc(1, sizeof(*all));
			*all = *tw[i]->inrun;
		} else {
			inrun_merge(all, tw[i]->inrun);
		}
	}
	if (!all)
		return;
	ts->has_inrun = inrun_cost(all, &ts->inrun) ? 2 : 1;
	if (!ts->inrun.timed || !ts->inrun.untimed)
		ts->has_inrun = 0;
	free(all);
}

/* --trace=hist: the histograms and counts are BPF's. */
static void summarise_bpf(struct trace_summary *ts, struct tracer *t)
{
	int j;

	for (j = 0; j < trace_stage_count(ts); j++)
		tracer_khist(t, j, &ts->stage[j]);
	tracer_kcounts(t, &ts->complete, &ts->incomplete);
}

void trace_summarise(struct trace_summary *ts, struct tracer *t,
		     struct trace_worker *const *tws, int n,
		     const struct trace_run *run)
{
	int i, j;

	memset(ts, 0, sizeof(*ts));
	ts->side = run->side;
	ts->hist_mode = run->hist_mode;
	ts->sample = run->sample > 1 ? run->sample : 1;
	ts->control = run->control;
	ts->cost = run->cost;
	ts->user_ns = merge_cost(tws, n);
	for (j = 0; j < NS_MAX_STAGES; j++)
		hist_reset(&ts->stage[j]);
	hist_reset(&ts->held);
	summarise_retrans(ts, t);
	if (ts->hist_mode) {
		summarise_bpf(ts, t);
		return;
	}
	for (i = 0; i < n; i++) {
		struct trace_worker *tw = tws[i];

		if (!tw)
			continue;
		ts->complete += tw->complete;
		ts->missing += tw->missing;
		ts->disorder += tw->disorder;
		ts->norecord += tw->norecord;
		ts->untimed += tw->untimed;
		for (j = 0; j < NS_B_COUNT; j++)
			ts->bad_at[j] += tw->bad_at[j];
		hist_merge(&ts->held, &tw->held);
		for (j = 0; j < stage_count(ts->side); j++)
			hist_merge(&ts->stage[j], &tw->stage[j]);
	}
	ts->incomplete = ts->missing + ts->disorder + ts->norecord;
	ts->lost = t ? tracer_lost(t) : 0;
	summarise_inrun(ts, tws, n);
}

/*
 * Percentiles whose tail is thinner than the share of transactions the
 * trace could not time: those could be wrong, and the output says so.
 * Sampled, the share is of those in the sample.
 */
static void unreliable(const struct trace_summary *ts, uint64_t all,
		       struct kv_list *out)
{
	double gone;

	if (ts->sample > 1)
		all = ts->complete + ts->incomplete;
	gone = all ? (double)(all - ts->complete) / all : 0;
	char buf[64] = "";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pcts); i++)
		if (gone > 1.0 - pcts[i] / 100.0)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 "%sp%g", buf[0] ? "," : "", pcts[i]);
	if (buf[0])
		kv_str(out, "trace_unreliable", buf);
}

static const char *const held_keys[] = {
	"trace_held_back_count", "trace_held_back_p50_us",
	"trace_held_back_p99_us", "trace_held_back_max_us",
};

/* The responses held back (merge_held_back_ns()), when there were any. */
static void held_back_kv(const struct hist *h, struct kv_list *out)
{
	if (!h->count)
		return;
	kv_uint(out, held_keys[0], h->count);
	kv_num(out, held_keys[1], hist_percentile(h, 50) / 1e3, 3);
	kv_num(out, held_keys[2], hist_percentile(h, 99) / 1e3, 3);
	kv_num(out, held_keys[3], h->max / 1e3, 3);
}

/*
 * Records only (BPF's histograms keep no reasons): why transactions
 * were not timed, as the stderr table's "not timed" lines say it, so
 * that a script or a test need not read the table.
 */
void trace_incomplete_kv(const struct trace_summary *ts,
			 struct kv_list *out)
{
	/* A boundary's name is far shorter than 40, a count's 20 digits. */
	char buf[NS_B_COUNT * 64] = "";
	size_t len = 0;
	int b;

	kv_uint(out, "trace_incomplete_missing", ts->missing);
	kv_uint(out, "trace_incomplete_disorder", ts->disorder);
	kv_uint(out, "trace_incomplete_norecord", ts->norecord);
	for (b = 0; b < NS_B_COUNT && len < sizeof(buf); b++)
		if (ts->bad_at[b])
			len += snprintf(buf + len, sizeof(buf) - len,
					"%s%s:%llu", len ? "," : "",
					boundary_name(b),
					(unsigned long long)ts->bad_at[b]);
	if (len)
		kv_str(out, "trace_incomplete_at", buf);
	held_back_kv(&ts->held, out);
}

/* The counts and the stage keys of ts. */
static void trace_counts_kv(const struct trace_summary *ts,
			    uint64_t transactions, struct kv_list *out)
{
	const struct stage_def *d = trace_stage_defs(ts);
	char key[80];
	size_t i;
	int j;

	kv_uint(out, "trace_sample", ts->sample);
	if (ts->control > 1) {
		kv_uint(out, "trace_control", ts->control);
		kv_uint(out, "trace_untimed", ts->untimed);
	}
	kv_uint(out, "trace_transactions", ts->complete);
	kv_uint(out, "trace_incomplete", ts->incomplete);
	kv_uint(out, "trace_lost", ts->lost);
	if (ts->has_retrans) {
		kv_uint(out, "trace_retransmits", ts->retransmits);
		kv_uint(out, "trace_retransmitted", ts->retransmitted);
		if (ts->retrans_partial)
			kv_uint(out, "trace_retransmitted_partial", 1);
	}
	if (!ts->hist_mode) {
		trace_incomplete_kv(ts, out);
		kv_uint(out, "trace_records_kept", ts->records_kept);
		kv_uint(out, "trace_records_slowest", ts->records_slowest);
		kv_str(out, "trace_records_policy",
		       ts->records_offered > ts->records_kept
		       ? "slowest_and_uniform_sample" : "all");
	}
	unreliable(ts, transactions, out);
	for (j = 0; j < trace_stage_count(ts); j++) {
		const struct hist *h = &ts->stage[j];

		snprintf(key, sizeof(key), "stage_%s_count", d[j].name);
		kv_uint(out, key, h->count);
		snprintf(key, sizeof(key), "stage_%s_mean_us", d[j].name);
		kv_num(out, key, hist_mean(h) / 1e3, 3);
		for (i = 0; i < ARRAY_SIZE(pcts); i++) {
			snprintf(key, sizeof(key), "stage_%s_p%g_us", d[j].name,
				 pcts[i]);
			kv_num(out, key, hist_percentile(h, pcts[i]) / 1e3, 3);
		}
		snprintf(key, sizeof(key), "stage_%s_max_us", d[j].name);
		kv_num(out, key, h->count ? h->max / 1e3 : 0, 3);
	}
	if (!ts->hist_mode)
		tail_kv(ts->tailq, ts->side, out);
}

static const char *const inrun_keys[] = {
	"trace_cost_inrun_ns", "trace_cost_inrun_lo_ns",
	"trace_cost_inrun_hi_ns", "trace_cost_inrun_tenths",
};

/* The control group's figure, with its interval when there is one. */
static void inrun_kv(const struct trace_summary *ts, struct kv_list *out)
{
	if (!ts->has_inrun)
		return;
	kv_num(out, inrun_keys[0], ts->inrun.p50_ns, 0);
	if (ts->has_inrun == 1) {
		kv_num(out, inrun_keys[1], ts->inrun.lo_ns, 0);
		kv_num(out, inrun_keys[2], ts->inrun.hi_ns, 0);
	}
	kv_int(out, inrun_keys[3], ts->inrun.blocks);
}

void trace_kv(const struct trace_summary *ts, const struct tracer *t,
	      const char *off_reason, uint64_t transactions,
	      struct kv_list *out)
{
	if (!t) {
		kv_str(out, "trace_status", "off");
		kv_str(out, "trace_error", off_reason);
		return;
	}
	kv_str(out, "trace_status", ts->hist_mode ? "hist" : "records");
	kv_str(out, "trace_hooks", tracer_hooks(t));
	kv_num(out, "trace_setup_ms", tracer_setup_ns(t) / 1e6, 3);
	if (ts->cost)
		trace_cost_kv(ts->cost, ts->user_ns, out);
	inrun_kv(ts, out);
	trace_counts_kv(ts, transactions, out);
}

void trace_kv_names(const struct trace_summary *ts, struct kv_list *out)
{
	size_t i;

	kv_str(out, "trace_status", "");
	kv_str(out, "trace_error", "");
	kv_str(out, "trace_hooks", "");
	kv_str(out, "trace_setup_ms", "");
	kv_str(out, "trace_unreliable", "");
	if (ts->has_retrans)
		kv_str(out, "trace_retransmitted_partial", "");
	if ((ts->sample > 1 || ts->control > 1) && !NS_IS_SERVER(ts->side))
		for (i = 0; i < ARRAY_SIZE(inrun_keys); i++)
			kv_str(out, inrun_keys[i], "");
	if (!ts->hist_mode)
		kv_str(out, "trace_incomplete_at", "");
	if (!ts->hist_mode && merge_held_back_side(ts->side))
		for (i = 0; i < ARRAY_SIZE(held_keys); i++)
			kv_str(out, held_keys[i], "");
	trace_cost_kv_names(out);
	trace_counts_kv(ts, 0, out);
}


void trace_find_tail(struct trace_summary *ts, struct trace_worker *const *tw,
		     int n)
{
	int i, k;
	long r;

	ts->ntail = 0;
	for (i = 0; i < n; i++)
		for (r = 0; tw[i] && r < tw[i]->nrecs; r++) {
			const struct trace_rec *tr = &tw[i]->recs[r];

			/* Insertion into the few kept, longest first. */
			for (k = ts->ntail; k > 0 && ts->tail[k - 1].span <
						     tr->span; k--)
				if (k < TRACE_TAIL)
					ts->tail[k] = ts->tail[k - 1];
			if (k < TRACE_TAIL) {
				ts->tail[k] = *tr;
				if (ts->ntail < TRACE_TAIL)
					ts->ntail++;
			}
		}
	tail_explain(ts->tailq, ts->side, ts->stage, tw, n);
}

/*
 * A kept record's longest stage, `remote` included: a lost packet's
 * retransmission timeout is there, and a line naming another stage
 * would hide it.
 */
static int widest(const struct trace_summary *ts, const struct trace_rec *r)
{
	const struct stage_def *d = trace_stage_defs(ts);
	uint64_t best = 0, v;
	int j, w = 0;

	for (j = 0; j < trace_stage_count(ts); j++) {
		v = r->b[d[j].to] - r->b[d[j].from];
		if (v > best) {
			best = v;
			w = j;
		}
	}
	return w;
}

/*
 * Under the table: the slowest kept transactions, each one's widest
 * stage and, with --trace-sched, the task its reader waited behind.
 */
static void tail_view(const struct trace_summary *ts, FILE *f)
{
	const struct stage_def *d = trace_stage_defs(ts);
	int i, w;

	if (!ts->ntail)
		return;
	fprintf(f, "  slowest kept:");
	for (i = 0; i < ts->ntail; i++) {
		const struct trace_rec *r = &ts->tail[i];

		w = widest(ts, r);
		fprintf(f, "%s %.1f us (%s %.1f", i ? ";" : "",
			r->span / 1e3, d[w].name,
			(r->b[d[w].to] - r->b[d[w].from]) / 1e3);
		if (r->held_comm[0])
			fprintf(f, ", CPU %u held by %s[%u]", r->held_cpu,
				r->held_comm, r->held_pid);
		if (r->b[NS_B_RETRANS])
			fputs(", retransmitted", f);
		fputc(')', f);
	}
	fputc('\n', f);
}

/*
 * The count of transactions missing boundary b or out of order there.
 * A tcp_rr server's out of order at APP_DONE were responses held back
 * (merge_held_back_ns()), which users would not guess from the name:
 * say so, and how long they waited.
 */
static void bad_at_line(const struct trace_summary *ts, int b, FILE *f)
{
	const struct hist *h = &ts->held;

	fprintf(f, "  at %s: %llu", boundary_name(b),
		(unsigned long long)ts->bad_at[b]);
	if (b == NS_B_APP_DONE && merge_held_back_side(ts->side) && h->count)
		fprintf(f, " (responses TCP held back: they reached the "
			"device p50 %.2f us, max %.2f us after send() "
			"returned)", hist_percentile(h, 50) / 1e3,
			h->max / 1e3);
	fputc('\n', f);
}

/* " (95%: lo..hi us, N tenths)", or "" without an interval. */
static const char *inrun_interval(const struct trace_summary *ts)
{
	static char buf[96];

	if (ts->has_inrun != 1)
		return "";
	snprintf(buf, sizeof(buf), " (95%%: %+.2f..%+.2f us, %d tenths)",
		 ts->inrun.lo_ns / 1e3, ts->inrun.hi_ns / 1e3,
		 ts->inrun.blocks);
	return buf;
}

void trace_table(const struct trace_summary *ts, FILE *f, const char *who)
{
	const struct stage_def *d = trace_stage_defs(ts);
	int j, b;

	fprintf(f, "netstage %s: stages of %llu traced transactions", who,
		(unsigned long long)ts->complete);
	if (ts->sample > 1)
		fprintf(f, " (1 in %u)", ts->sample);
	fputs(" (us)\n", f);
	fprintf(f, "  %-12s %-22s %9s %9s %9s %9s %9s %9s\n", "stage",
		"from -> to", "mean", "p50", "p90", "p99", "p99.9", "max");
	for (j = 0; j < trace_stage_count(ts); j++) {
		const struct hist *h = &ts->stage[j];
		char span[48];

		snprintf(span, sizeof(span), "%s->%s",
			 boundary_name(d[j].from), boundary_name(d[j].to));
		fprintf(f, "  %-12s %-22s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n",
			d[j].name, span, hist_mean(h) / 1e3,
			hist_percentile(h, 50) / 1e3,
			hist_percentile(h, 90) / 1e3,
			hist_percentile(h, 99) / 1e3,
			hist_percentile(h, 99.9) / 1e3,
			h->count ? h->max / 1e3 : 0);
	}
	if (ts->incomplete || ts->lost)
		fprintf(f, "  not timed: %llu incomplete (%llu missing a kernel "
			"boundary, %llu out of order, %llu without a record), "
			"%llu lost in BPF\n",
			(unsigned long long)ts->incomplete,
			(unsigned long long)ts->missing,
			(unsigned long long)ts->disorder,
			(unsigned long long)ts->norecord,
			(unsigned long long)ts->lost);
	for (b = 0; b < NS_B_COUNT; b++)
		if (ts->bad_at[b])
			bad_at_line(ts, b, f);
	if (ts->has_inrun)
		fprintf(f, "  timing a transaction, in this run: its p50 "
			"%+.2f us over the untimed ones'%s\n",
			ts->inrun.p50_ns / 1e3, inrun_interval(ts));
	if (ts->retransmits)
		fprintf(f, "  retransmitted: %s%llu transactions' messages "
			"(%llu segments)\n", ts->retrans_partial ? "at least " : "",
			(unsigned long long)ts->retransmitted,
			(unsigned long long)ts->retransmits);
	if (!ts->hist_mode)
		tail_line(&ts->tailq[0], ts->side, f);
	tail_view(ts, f);
}
