#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "trace/merge.h"
#include "trace/portfit.h"
#include "trace/waterfall.h"

/* A client transaction's latency: its first stage's start to its end. */
static uint64_t span(const struct waterfall *w, const struct join_rec *c)
{
	const struct stage_def *d = stage_defs(w->t[0].side);
	int n = stage_count(w->t[0].side);

	return c->b[d[n - 1].to] - c->b[d[0].from];
}

/*
 * Did TCP resend bytes of this transaction on any hop before its
 * response reached the client? A server may resend a response the
 * client had (its ACK lost with the next request): that held up
 * nothing of this transaction.
 */
static int retransmitted(const struct waterfall *w,
			 const struct join_rec **chain)
{
	uint64_t t, by = chain[0]->b[NS_B_NETIF_RX];
	int i;

	for (i = 0; i < w->n; i++) {
		t = chain[i]->b[NS_B_RETRANS];
		if (t && t < by)
			return 1;
	}
	return 0;
}

static void record_row(const struct waterfall *w,
		       const struct join_rec **chain)
{
	const struct join_rec *c = chain[0];
	int i;

	fprintf(w->records, "%u", c->port);
	for (i = 0; i < w->plan.nrows; i++)
		fprintf(w->records, ",%llu",
			(unsigned long long)join_row_ns(&w->plan, i, chain));
	fprintf(w->records, ",%llu,%d\n", (unsigned long long)span(w, c),
		retransmitted(w, chain));
}

static void records_header(const struct waterfall *w)
{
	int i;

	fputs("port", w->records);
	for (i = 0; i < w->plan.nrows; i++)
		fprintf(w->records, ",%s", w->plan.row[i].name);
	fputs(",latency,retransmitted\n", w->records);
}

static void keep(struct waterfall *w, const struct join_rec **chain)
{
	const struct stage_def *d = stage_defs(w->t[0].side);
	long stride = w->plan.nrows + WATERFALL_KEPT_HEAD;
	uint64_t *v;
	int i;

	if (!w->kept)
		w->kept = xcalloc(w->t[0].n * stride, sizeof(*w->kept));
	v = w->kept + w->nkept++ * stride;
	v[0] = chain[0]->b[d[0].from];
	v[1] = span(w, chain[0]);
	v[2] = chain[0]->flow_id;
	v[3] = chain[0]->seq;
	v[4] = chain[0]->slowest;
	v[5] = retransmitted(w, chain);
	for (i = 0; i < w->plan.nrows; i++)
		v[WATERFALL_KEPT_HEAD + i] = join_row_ns(&w->plan, i, chain);
}

/* The client's and the server's kernel stamps of one exchange. */
static int exchange_of(const struct join_rec *c, const struct join_rec *r,
		       struct clock_exchange *x)
{
	x->c_tx = c->b[NS_B_DEV_XMIT];
	x->c_rx = c->b[NS_B_NETIF_RX];
	x->s_rx = r->b[NS_B_NETIF_RX];
	x->s_tx = r->b[NS_B_DEV_XMIT];
	return x->c_tx && x->c_rx && x->s_rx && x->s_tx;
}

/* Two ends: the clocks fitted from the n exchanges in ex. */
static void fit_clocks(struct waterfall *w, const struct clock_exchange *ex,
		       long n)
{
	w->has_clock = !clock_fit(ex, n, &w->clock);
}

/*
 * Paired by number (tcp_rr, udp_rr): every exchange of the sample,
 * before any time is compared, since the server's clock may be
 * anywhere. (Paired by time, tcp_crr and observed hops fit from the
 * join's pairs on one clock; tcp_crr's on two from portfit.h first.)
 */
static void fit_numbered(struct waterfall *w)
{
	struct clock_exchange *ex;
	const struct join_rec *r;
	long i, n = 0;

	ex = xcalloc(w->t[0].n ? w->t[0].n : 1, sizeof(*ex));
	for (i = 0; i < w->t[0].n; i++) {
		const struct join_rec *c = &w->t[0].r[i];

		if (!c->slowest && (r = join_numbered(&w->t[1], c)))
			n += exchange_of(c, r, &ex[n]);
	}
	fit_clocks(w, ex, n);
	free(ex);
}

/*
 * WATERFALL_CLOCKS_AUTO: two clocks when one cannot explain the stamps,
 * the fitted difference farther from 0 than causality allows.
 */
static int two_clocks(const struct waterfall *w)
{
	double off = clock_offset_ns(&w->clock);

	if (w->clocks != WATERFALL_CLOCKS_AUTO)
		return w->clocks == WATERFALL_CLOCKS_TWO;
	return fabs(off) > w->clock.causal_ns;
}

/*
 * The server's stamps moved onto the client's clock: by the fit f, or
 * (f NULL) by server_shift_ns, what a clock both hosts keep says.
 */
static void move_server(struct waterfall *w, const struct clock_fit *f)
{
	struct join_table *t = &w->t[1];
	uint64_t *x;
	long i;
	int b;

	for (i = 0; i < t->n; i++)
		for (b = 0; b < NS_B_COUNT; b++) {
			x = &t->r[i].b[b];
			if (*x)
				*x = f ? clock_to_client(f, *x) :
					 *x + (uint64_t)w->server_shift_ns;
		}
}

/* A tcp_crr client and its server: one connection a transaction. */
static int by_port(const struct waterfall *w)
{
	return w->n == 2 && NS_IS_CRR(w->t[0].side) &&
	       NS_IS_CRR(w->t[1].side) && !NS_IS_SERVER(w->t[0].side);
}

/*
 * tcp_crr where the clocks may be two: fitted from the pairs of one
 * port whose difference the run shares (portfit.h), and the server's
 * stamps moved onto the client's clock if two. -1: two clocks and no
 * fit.
 */
static int align_by_port(struct waterfall *w)
{
	w->has_clock = !portfit(&w->t[0], &w->t[1], &w->clock);
	if (w->has_clock && two_clocks(w)) {
		move_server(w, &w->clock);
		w->aligned = 1;
	}
	return w->clocks == WATERFALL_CLOCKS_TWO && !w->aligned ? -1 : 0;
}

int waterfall_join(struct waterfall *w, int nested)
{
	const struct join_rec *chain[JOIN_MAX_HOPS];
	struct clock_exchange *ex = NULL;
	long i, nex = 0;
	int k, rc, hop, by_seq;

	by_seq = join_by_seq(w->t, w->n);
	if (w->clocks == WATERFALL_CLOCKS_TWO && !by_seq && !by_port(w))
		return WATERFALL_NEEDS_ONE_CLOCK;
	if (by_port(w) && w->clocks != WATERFALL_CLOCKS_ONE &&
	    align_by_port(w))
		return WATERFALL_NEEDS_ONE_CLOCK;
	if ((nested ? join_plan_nested : join_plan)(w->t, w->n, &w->plan))
		return -1;
	w->row = xcalloc(w->plan.nrows, sizeof(*w->row));
	for (k = 0; k < w->plan.nrows; k++)
		hist_reset(&w->row[k]);
	hist_reset(&w->total);
	join_prepare(w->t, w->n);
	if (w->server_shift_ns && w->n == 2)
		move_server(w, NULL);
	if (by_seq) {
		fit_numbered(w);
		if (w->has_clock && two_clocks(w)) {
			move_server(w, &w->clock);
			w->aligned = 1;
		}
	} else if (w->n == 2 && !w->aligned) {
		/* On one clock the join's own pairs fit it, a check. */
		ex = xcalloc(w->t[0].n ? w->t[0].n : 1, sizeof(*ex));
	}
	if (w->records)
		records_header(w);
	for (i = 0; i < w->t[0].n; i++) {
		const struct join_rec *c = &w->t[0].r[i];

		rc = join_one(w->t, w->n, c, &w->plan, chain, &hop);
		if (c->slowest) {
			/* Not of the sample: in no figure, a biased one. */
			w->apart++;
			if (rc == JOIN_OK && w->keep)
				keep(w, chain);
			continue;
		}
		w->by_result[rc]++;
		if (rc != JOIN_OK) {
			w->at_hop[hop]++;
			continue;
		}
		w->joined++;
		w->retransmitted += retransmitted(w, chain);
		for (k = 0; k < w->plan.nrows; k++)
			hist_add(&w->row[k], join_row_ns(&w->plan, k, chain));
		hist_add(&w->total, span(w, c));
		if (w->records)
			record_row(w, chain);
		if (w->keep)
			keep(w, chain);
		if (ex)
			nex += exchange_of(chain[0], chain[1], &ex[nex]);
	}
	if (ex)
		fit_clocks(w, ex, nex);
	free(ex);
	return 0;
}

/* "wire to fwd" -> "join_wire_to_fwd_p50_us", for keys. */
static void key_of(char *dst, size_t len, const char *prefix,
		   const char *name, const char *stat)
{
	size_t i;

	snprintf(dst, len, "%s%s_%s", prefix, name, stat);
	for (i = 0; dst[i]; i++)
		if (dst[i] == ' ' || dst[i] == '-')
			dst[i] = '_';
}

static void stats_kv(const struct hist *h, const char *prefix,
		     const char *name, struct kv_list *out)
{
	static const double pct[] = { 50, 90, 99 };
	char key[128], stat[24];
	size_t q;

	key_of(key, sizeof(key), prefix, name, "mean_us");
	kv_num(out, key, hist_mean(h) / 1e3, 3);
	for (q = 0; q < ARRAY_SIZE(pct); q++) {
		snprintf(stat, sizeof(stat), "p%g_us", pct[q]);
		key_of(key, sizeof(key), prefix, name, stat);
		kv_num(out, key, hist_percentile(h, pct[q]) / 1e3, 3);
	}
}

/* The server's clock against the client's (trace/clock.h), in us. */
static void clock_kv(const struct clock_fit *f, int aligned,
		     const char *key_prefix, struct kv_list *out)
{
	char key[128];

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", key_prefix, name), key)
	kv_int(out, KEY("clock_aligned"), aligned);
	kv_num(out, KEY("clock_offset_us"),
	       clock_offset_ns(f) / 1e3, 3);
	kv_num(out, KEY("clock_drift_ppm"), f->drift_ppm, 3);
	kv_num(out, KEY("clock_bound_us"), f->bound_ns / 1e3, 3);
	kv_num(out, KEY("clock_causal_bound_us"), f->causal_ns / 1e3, 3);
	kv_uint(out, KEY("clock_negative_legs"), (uint64_t)f->negative);
#undef KEY
}

void waterfall_kv(const struct waterfall *w, const char *key_prefix,
		  struct kv_list *out)
{
	char key[128];
	int i;

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", key_prefix, name), key)
	kv_int(out, KEY("hops"), w->n);
	kv_uint(out, KEY("client_transactions"), w->t[0].n - w->apart);
	kv_uint(out, KEY("slowest_apart"), w->apart);
	kv_uint(out, KEY("transactions"), w->joined);
	kv_uint(out, KEY("unmatched"), w->by_result[JOIN_NONE]);
	kv_uint(out, KEY("ambiguous"), w->by_result[JOIN_MANY]);
	kv_uint(out, KEY("disorder"), w->by_result[JOIN_DISORDER]);
	kv_str(out, KEY("joined_by"), join_by_seq(w->t, w->n) ?
				      "connection_and_seq" : "connection_and_time");
	kv_uint(out, KEY("mispaired"), w->by_result[JOIN_MISPAIR]);
	kv_uint(out, KEY("retransmitted"), w->retransmitted);
#undef KEY
	for (i = 0; i < w->plan.nrows; i++)
		stats_kv(&w->row[i], key_prefix, w->plan.row[i].name, out);
	stats_kv(&w->total, key_prefix, "latency", out);
	if (w->has_clock)
		clock_kv(&w->clock, w->aligned, key_prefix, out);
}

static void print_row(FILE *f, int depth, const char *name,
		      const struct hist *h, double total)
{
	fprintf(f, "  %*s%-*s %9.2f %9.2f %9.2f %9.2f %6.1f%%\n",
		2 * depth, "", 28 - 2 * depth, name, hist_mean(h) / 1e3,
		hist_percentile(h, 50) / 1e3, hist_percentile(h, 90) / 1e3,
		hist_percentile(h, 99) / 1e3,
		total > 0 ? 100 * hist_mean(h) / total : 0);
}

/* The clocks' line: what the fit found, and what its bounds assume. */
static void print_clocks(const struct waterfall *w, FILE *f)
{
	const struct clock_fit *c = &w->clock;
	double off = clock_offset_ns(c) / 1e3;

	if (w->aligned)
		fprintf(f, "  clocks: the server's aligned, %+.3f us and %+.3f "
			"ppm from the client's, within %.3f us if the wire "
			"legs' minima are equal, %.3f us from causality alone; "
			"%ld legs below zero\n", off, c->drift_ppm,
			c->bound_ns / 1e3, c->causal_ns / 1e3, c->negative);
	else
		fprintf(f, "  clocks: one; the fit from the stamps, a check: "
			"%+.3f us (%.3f us if the wire legs' minima are equal, "
			"%.3f us from causality), %ld legs below zero\n", off,
			c->bound_ns / 1e3, c->causal_ns / 1e3, c->negative);
}

void waterfall_print(const struct waterfall *w, const char *title,
		     const char *total_name, FILE *f)
{
	double total = hist_mean(&w->total);
	int i, k;

	fprintf(f, "%s: %llu of %llu client transactions joined on %s "
		"clock (us)%s\n", title, (unsigned long long)w->joined,
		(unsigned long long)(w->t[0].n - w->apart),
		w->aligned ? "the client's" : "one",
		w->apart ? ", the uniform sample of the kept" : "");
	if (w->has_clock)
		print_clocks(w, f);
	fprintf(f, "  %-28s %9s %9s %9s %9s %7s\n", "stretch", "mean", "p50",
		"p90", "p99", "share");
	for (i = 0; i < w->plan.nrows; i++)
		print_row(f, w->plan.row[i].depth, w->plan.row[i].name,
			  &w->row[i], total);
	print_row(f, 0, total_name, &w->total, total);
	for (k = 1; k < w->n; k++)
		if (w->at_hop[k])
			fprintf(f, "  not joined at %s: %llu\n", w->t[k].name,
				(unsigned long long)w->at_hop[k]);
	if (w->by_result[JOIN_MISPAIR])
		fprintf(f, "  mis-paired (the same connection and number "
			"outside the client's time): %llu\n",
			(unsigned long long)w->by_result[JOIN_MISPAIR]);
	if (w->retransmitted)
		fprintf(f, "  retransmitted (TCP resent bytes on a hop): "
			"%llu\n", (unsigned long long)w->retransmitted);
}

void waterfall_free(struct waterfall *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		free(w->t[i].r);
	free(w->row);
	free(w->kept);
	w->row = NULL;
	w->kept = NULL;
}
