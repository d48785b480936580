#include <inttypes.h>
#include <stdlib.h>

#include "core/common.h"
#include "core/kv.h"
#include "trace/merge.h"
#include "trace/perfetto.h"

uint64_t perfetto_zero_ns(const struct join_table *t, int n)
{
	uint64_t base = UINT64_MAX;
	long r;
	int i, b;

	for (i = 0; i < n; i++)
		for (r = 0; r < t[i].n; r++)
			for (b = 0; b < NS_B_COUNT; b++)
				if (t[i].r[r].b[b] && t[i].r[r].b[b] < base)
					base = t[i].r[r].b[b];
	return base == UINT64_MAX ? 0 : base;
}

/*
 * Times go out in us on a grid of 1/2048 us (0.49 ns). A viewer adds ts
 * and dur in binary floating point, and only such dyadic fractions add
 * up exactly: written as decimal ns, a stage ending where the next one
 * begins ends 1e-15 us after it, and Chrome's trace engine drops every
 * slice that ends past its parent. On this grid both ts and dur still
 * round to the record's ns.
 */
#define GRID 2048

static uint64_t ticks(uint64_t ns)
{
	return (ns * GRID * 2 + 1000) / 2000;	/* rounded */
}

static void us(FILE *f, const char *name, uint64_t t)
{
	/* 1/2048 = 0.00048828125: eleven digits, trailing zeros dropped */
	uint64_t frac = (t % GRID) * 48828125ULL;
	int digits = 11;

	fprintf(f, "\"%s\":%" PRIu64, name, t / GRID);
	if (!frac)
		return;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	fprintf(f, ".%0*" PRIu64, digits, frac);
}

static void slice(FILE *f, const char *name, int pid, long tid,
		  uint64_t from, uint64_t to, uint64_t base,
		  const struct join_rec *r)
{
	uint64_t t0 = ticks(from - base);

	fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%ld,",
		name, pid, tid);
	us(f, "ts", t0);
	fputc(',', f);
	us(f, "dur", ticks(to - base) - t0);
	/* Its stages are inside it: the transaction's slice names it. */
	if (r)
		fprintf(f, ",\"args\":{\"flow\":%u,\"seq\":%" PRIu64
			",\"port\":%u}", r->flow_id, r->seq, r->port);
	fputc('}', f);
}

/*
 * One record: the transaction's slice, then its stages inside it. A
 * stage of 0 ns gets none: viewers sort the slices of one start longest
 * first, so it would land inside the stage that starts with it.
 */
static void transaction(FILE *f, const struct join_table *t, int pid,
			long tid, const struct join_rec *r, uint64_t base)
{
	const struct stage_def *d = stage_defs(t->side);
	int i, n = stage_count(t->side);

	slice(f, "transaction", pid, tid, r->b[d[0].from], r->b[d[n - 1].to],
	      base, r);
	for (i = 0; i < n; i++)
		if (r->b[d[i].to] != r->b[d[i].from])
			slice(f, d[i].name, pid, tid, r->b[d[i].from],
			      r->b[d[i].to], base, NULL);
}

/*
 * Tracks: a viewer nests the slices of a thread by time, so no two
 * transactions of a track may overlap. Those of a flow do when several
 * requests are in flight (--burst, --rate), and a server's by a little
 * (it stamps APP_DONE after its send returns, by when the client may
 * have sent the next request); a tcp_crr server's flow is a connection.
 * Each flow (every connection of a tcp_crr server together) gets as
 * many tracks as it needs: a record takes the first of its flow's
 * tracks free at its start.
 */
struct placing {
	const struct join_table *t;
	uint64_t first, last;	/* the side's span boundaries */
};

/*
 * A record's flow, for its tracks and the count: a tcp_crr server's
 * connections are all one.
 */
static uint32_t flow_of(const struct join_table *t, long i)
{
	return NS_IS_SERVER(t->side) && NS_IS_CRR(t->side) ? 0 :
	       t->r[i].flow_id;
}

static uint64_t start_of(const struct placing *p, long i)
{
	return p->t->r[i].b[p->first];
}

static int by_flow_start(const void *a, const void *b, void *ctx)
{
	const struct placing *p = ctx;
	long x = *(const long *)a, y = *(const long *)b;
	uint32_t gx = flow_of(p->t, x), gy = flow_of(p->t, y);
	uint64_t sx = start_of(p, x), sy = start_of(p, y);

	if (gx != gy)
		return gx < gy ? -1 : 1;
	return sx < sy ? -1 : sx > sy;
}

static void name_track(FILE *f, int pid, long tid, const char *side,
		       const struct placing *p, uint32_t flow, int lane)
{
	fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
		"\"tid\":%ld,\"args\":{\"name\":\"%s ", pid, tid, side);
	if (NS_IS_SERVER(p->t->side) && NS_IS_CRR(p->t->side))
		fprintf(f, "connections");
	else
		fprintf(f, "flow %u", flow);
	if (lane)
		fprintf(f, " (%d)", lane + 1);
	fputs("\"}}", f);
}

/* Each record's track in tid[]; names the tracks as it makes them. */
static void place(FILE *f, const struct placing *p, int pid, long *tid)
{
	long n = p->t->n, i, *ord = xcalloc(n ? n : 1, sizeof(*ord));
	uint64_t *end = NULL;
	long next_tid = 1, lane0 = 0;
	int lanes = 0, cap = 0, k;

	for (i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), by_flow_start, (void *)p);
	for (i = 0; i < n; i++) {
		const struct join_rec *r = &p->t->r[ord[i]];

		if (!i || flow_of(p->t, ord[i]) != flow_of(p->t, ord[i - 1]))
			lanes = 0;	/* a new flow: its tracks from here */
		for (k = 0; k < lanes && end[k] > r->b[p->first]; k++)
			;
		if (k == lanes) {
			if (lanes == cap) {
				cap = cap ? 2 * cap : 8;
				end = xrealloc(end, cap, sizeof(*end));
			}
			if (!k)
				lane0 = next_tid;
			name_track(f, pid, next_tid++, p->t->name, p,
				   flow_of(p->t, ord[i]), k);
			lanes++;
		}
		end[k] = r->b[p->last];
		tid[ord[i]] = lane0 + k;
	}
	free(ord);
	free(end);
}

/* Whose clock the server's slices are on, and the fit's figures. */
static void clocks(FILE *f, const struct clock_fit *fit, int aligned)
{
	if (!fit)
		return;
	fprintf(f, ",\"server_clock\":\"%s\",\"clock_offset_us\":%.3f,"
		"\"clock_drift_ppm\":%.3f,\"clock_bound_us\":%.3f,"
		"\"clock_causal_bound_us\":%.3f",
		aligned ? "aligned to the client's by the fit" :
			  "the client's (one clock; the fit a check)",
		clock_offset_ns(fit) / 1e3, fit->drift_ppm,
		fit->bound_ns / 1e3, fit->causal_ns / 1e3);
}

/* A record's span on its side, ns. */
static uint64_t span_of(const struct join_table *t, const struct join_rec *r)
{
	const struct stage_def *d = stage_defs(t->side);

	return r->b[d[stage_count(t->side) - 1].to] - r->b[d[0].from];
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The span above which a record is in its side's slowest 1%. */
static uint64_t p99_of(const struct join_table *t)
{
	uint64_t *s = xcalloc(t->n ? t->n : 1, sizeof(*s)), v;
	long i;

	for (i = 0; i < t->n; i++)
		s[i] = span_of(t, &t->r[i]);
	qsort(s, t->n, sizeof(*s), by_u64);
	/* Nearest rank, as the histograms' p99. */
	v = t->n ? s[(t->n * 99 + 99) / 100 - 1] : 0;
	free(s);
	return v;
}

static int by_flow_seq(const void *a, const void *b, void *ctx)
{
	const struct join_table *t = ctx;
	long i = *(const long *)a, j = *(const long *)b;
	uint32_t fi = flow_of(t, i), fj = flow_of(t, j);

	if (fi != fj)
		return fi < fj ? -1 : 1;
	return t->r[i].seq < t->r[j].seq ? -1 : t->r[i].seq > t->r[j].seq;
}

/*
 * Which records of t go in: all above its p99, those kept as slowest,
 * and every `every`-th of each flow in the order of their numbers (not
 * the numbers themselves: under --trace-sample they are all multiples
 * of its N).
 */
static void pick_own(const struct join_table *t, int every, char *in)
{
	long n = t->n, i, k = 0, *ord = xcalloc(n ? n : 1, sizeof(*ord));
	uint64_t p99 = p99_of(t);

	for (i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), by_flow_seq, (void *)t);
	for (i = 0; i < n; i++) {
		if (i && flow_of(t, ord[i]) != flow_of(t, ord[i - 1]))
			k = 0;
		in[ord[i]] |= k++ % every == 0 || t->r[ord[i]].slowest ||
			      span_of(t, &t->r[ord[i]]) > p99;
	}
	free(ord);
}

/*
 * The records each side writes: its own pick, and a server's record of
 * every client transaction picked (when the two join by number), so
 * that a transaction in the file has both its halves.
 */
static char **pick(const struct join_table *t, int n, int every)
{
	char **in = xcalloc(n, sizeof(*in));
	const struct join_rec *s;
	long r;
	int i;

	for (i = 0; i < n; i++) {
		in[i] = xcalloc(t[i].n ? t[i].n : 1, 1);
		pick_own(&t[i], every, in[i]);
	}
	if (n < 2 || !join_by_seq(t, n))
		return in;
	for (r = 0; r < t[0].n; r++) {
		if (!in[0][r])
			continue;
		for (i = 1; i < n; i++)
			if ((s = join_numbered(&t[i], &t[0].r[r])))
				in[i][s - t[i].r] = 1;
	}
	return in;
}

/* t's records that go in, as a table of their own. */
static struct join_table picked(const struct join_table *t, const char *in)
{
	struct join_table o = *t;
	long r;

	o.r = xcalloc(t->n ? t->n : 1, sizeof(*o.r));
	o.n = 0;
	for (r = 0; r < t->n; r++)
		if (in[r])
			o.r[o.n++] = t->r[r];
	return o;
}

static void sampled(FILE *f, const struct join_table *t, int n, char **in,
		    int every)
{
	int halves = n > 1 && join_by_seq(t, n);
	long kept = 0, written = 0, r;
	int i;

	for (i = 0; i < n; i++)
		for (r = 0; r < t[i].n; r++) {
			kept++;
			written += in[i][r];
		}
	fprintf(f, ",\"every\":%d,\"kept\":%ld,\"written\":%ld,"
		"\"written_are\":\"each side's transactions above its p99 "
		"and those kept as the slowest, 1 in %d of the rest of each "
		"flow; %s\",\"halves\":%s", every, kept, written, every,
		halves ? "the server's half of each client transaction "
		"written" : "no server's half besides (the sides do not join "
		"by connection and number)", halves ? "true" : "false");
}

int perfetto_write(FILE *f, const struct join_table *all, int n,
		   const struct clock_fit *fit, int aligned, int every)
{
	uint64_t base = perfetto_zero_ns(all, n);
	char **in;
	struct join_table t;
	long r, *tid;
	int i;

	every = every > 0 ? every : 1;
	in = pick(all, n, every);
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":"
		"\"CLOCK_MONOTONIC\",\"zero_ns\":%" PRIu64, base);
	clocks(f, fit, aligned);
	sampled(f, all, n, in, every);
	fputs("},\n\"traceEvents\":[", f);
	for (i = 0; i < n; i++) {
		const struct stage_def *d = stage_defs(all[i].side);
		struct placing p = {
			.t = &t, .first = d[0].from,
			.last = d[stage_count(all[i].side) - 1].to,
		};

		t = picked(&all[i], in[i]);
		/* The hop's name is the user's (join NAME=FILE). */
		fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\","
			"\"pid\":%d,\"tid\":0,\"args\":{\"name\":",
			i ? "," : "", i + 1);
		json_string(f, t.name);
		fputs("}}", f);
		tid = xcalloc(t.n ? t.n : 1, sizeof(*tid));
		place(f, &p, i + 1, tid);
		for (r = 0; r < t.n; r++)
			transaction(f, &t, i + 1, tid[r], &t.r[r], base);
		free(tid);
		free(t.r);
		free(in[i]);
	}
	free(in);
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}
