#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/common.h"
#include "output/html_report.h"
#include "trace/perfetto.h"
#include "version.h"

/* The page's script and style, from src/html/ (Makefile). */
static const char report_js[] =
#include "html/report_js.inc"
	;
static const char report_css[] =
#include "html/report_css.inc"
	;

#define BINS_PER_DECADE 10
#define NBINS (10 * BINS_PER_DECADE)	/* 1 ns to 10 s */
#define SLOWEST 20

/*
 * Each side's keys of a prefix as "member":{side:{...}}: trace_ (what
 * it timed, and why it timed no more), tail_ (which stages make its
 * tail, trace/tail.h).
 */
static void side_keys(FILE *f, const struct waterfall *w,
		      const struct html_meta *m, const char *member,
		      const char *prefix)
{
	int i, first = 1;

	fprintf(f, ",\"%s\":{", member);
	for (i = 0; i < w->n; i++) {
		if (!m->keys[i])
			continue;
		fputs(first ? "" : ",", f);
		json_string(f, w->t[i].name);
		fputs(":{\n", f);
		kv_json_prefixed(m->keys[i], prefix, f, 0);
		fputc('}', f);
		first = 0;
	}
	fputc('}', f);
}

/* Two ends: how their clocks were put together (waterfall.h). */
static void clock_meta(FILE *f, const struct waterfall *w)
{
	const struct clock_fit *c = &w->clock;

	if (!w->has_clock) {
		fputs(",\"clock\":null", f);
		return;
	}
	fprintf(f, ",\"clock\":{\"aligned\":%d,\"offset_us\":%.3f,"
		"\"drift_ppm\":%.3f,\"bound_us\":%.3f,"
		"\"causal_bound_us\":%.3f,\"negative_legs\":%ld}",
		w->aligned, clock_offset_ns(c) / 1e3,
		c->drift_ppm, c->bound_ns / 1e3, c->causal_ns / 1e3,
		c->negative);
}

static void meta(FILE *f, const struct waterfall *w,
		 const struct html_meta *m)
{
	struct utsname u;
	char when[64], kernel[4 * sizeof(u.release)];
	time_t now = time(NULL);
	int i;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	if (uname(&u))
		snprintf(kernel, sizeof(kernel), "unknown");
	else
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname,
			 u.release, u.machine);
	fputs("\"meta\":{\"workload\":", f);
	json_string(f, m->workload);
	fputs(",\"version\":", f);
	json_string(f, NETSTAGE_VERSION);
	fputs(",\"kernel\":", f);
	json_string(f, kernel);
	fprintf(f, ",\"cpus\":%ld,\"interval_s\":%g,\"date\":",
		sysconf(_SC_NPROCESSORS_ONLN), m->interval_s);
	json_string(f, when);
	fputs(",\"hooks\":", f);
	json_string(f, m->hooks ? m->hooks : "");
	fprintf(f, ",\"joined\":%" PRIu64 ",\"records\":%ld,\"sides\":[",
		w->joined, w->t[0].n);
	for (i = 0; i < w->n; i++) {
		fputs(i ? "," : "", f);
		json_string(f, w->t[i].name);
	}
	fputc(']', f);
	clock_meta(f, w);
	if (m->perfetto) {
		fputs(",\"perfetto\":", f);
		json_string(f, m->perfetto);
	}
	fputs(",\"options\":{\n", f);
	if (m->options)
		kv_json_members(m->options, f, 0);
	fputc('}', f);
	side_keys(f, w, m, "trace", "trace_");
	side_keys(f, w, m, "tail", "tail_");
	fputc('}', f);
}

/* A histogram as [bin, count] pairs, bin b from 10^(b/10) ns. */
static void bins(FILE *f, const struct hist *h)
{
	uint64_t count[NBINS] = { 0 }, lo, hi;
	unsigned int i;
	int b, first = 1;

	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		hist_bucket_range(i, &lo, &hi);
		b = lo ? (int)floor(BINS_PER_DECADE * log10((double)lo)) : 0;
		count[b < 0 ? 0 : b >= NBINS ? NBINS - 1 : b] += h->bucket[i];
	}
	fputc('[', f);
	for (b = 0; b < NBINS; b++)
		if (count[b]) {
			fprintf(f, "%s[%d,%" PRIu64 "]", first ? "" : ",", b,
				count[b]);
			first = 0;
		}
	fputc(']', f);
}

static void row(FILE *f, const char *name, int depth, const struct hist *h,
		double total)
{
	fputs("{\"name\":", f);
	json_string(f, name);
	fprintf(f, ",\"depth\":%d,\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,"
		"\"p99\":%.3f,\"max\":%.3f,\"share\":%.2f,\"hist\":", depth,
		hist_mean(h) / 1e3, hist_percentile(h, 50) / 1e3,
		hist_percentile(h, 90) / 1e3, hist_percentile(h, 99) / 1e3,
		h->count ? h->max / 1e3 : 0,
		total > 0 ? 100 * hist_mean(h) / total : 0);
	bins(f, h);
	fputc('}', f);
}

static void rows(FILE *f, const struct waterfall *w)
{
	double total = hist_mean(&w->total);
	int i;

	fputs("\"rows\":[\n", f);
	for (i = 0; i < w->plan.nrows; i++) {
		fputs(i ? ",\n" : "", f);
		row(f, w->plan.row[i].name, w->plan.row[i].depth, &w->row[i],
		    total);
	}
	fputs("],\n\"total\":", f);
	row(f, "latency", 0, &w->total, total);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, of n values sorted in place; us. */
static double pct(uint64_t *v, long n, double p)
{
	long k = (long)ceil(p / 100 * n);

	if (!n)
		return 0;
	return v[k < 1 ? 0 : k - 1] / 1e3;
}

/* Column c (0: latency, 1 + r: row r) of the transactions in `idx`. */
static void column(const struct waterfall *w, const long *idx, long n,
		   int c, uint64_t *v, double *p50, double *p99)
{
	long i;

	for (i = 0; i < n; i++)
		v[i] = waterfall_kept(w, idx[i])[c ? WATERFALL_KEPT_HEAD + c - 1
						   : 1];
	qsort(v, n, sizeof(*v), by_u64);
	*p50 = pct(v, n, 50);
	*p99 = pct(v, n, 99);
}

/*
 * The joined transactions of the uniform sample (not those kept as the
 * slowest) interval by interval, from the first start.
 */
static void intervals(FILE *f, const struct waterfall *w, double iv_s)
{
	uint64_t t0 = UINT64_MAX, iv = (uint64_t)(iv_s * 1e9);
	long i, k, nint = 0, *idx, *at, *start;
	uint64_t *v = xcalloc(w->nkept ? w->nkept : 1, sizeof(*v));
	int c;

	for (i = 0; i < w->nkept; i++)
		if (waterfall_kept(w, i)[0] < t0)
			t0 = waterfall_kept(w, i)[0];
	iv = iv ? iv : NSEC_PER_SEC;
	for (i = 0; i < w->nkept; i++) {
		k = (long)((waterfall_kept(w, i)[0] - t0) / iv);
		nint = k + 1 > nint ? k + 1 : nint;
	}
	/* The transactions grouped by interval (a counting sort). */
	start = xcalloc(nint + 1, sizeof(*start));
	at = xcalloc(nint + 1, sizeof(*at));
	idx = xcalloc(w->nkept ? w->nkept : 1, sizeof(*idx));
	for (i = 0; i < w->nkept; i++)
		if (!waterfall_kept(w, i)[4])
			start[(waterfall_kept(w, i)[0] - t0) / iv + 1]++;
	for (k = 0; k < nint; k++)
		start[k + 1] += start[k];
	memcpy(at, start, (nint + 1) * sizeof(*at));
	for (i = 0; i < w->nkept; i++)
		if (!waterfall_kept(w, i)[4])
			idx[at[(waterfall_kept(w, i)[0] - t0) / iv]++] = i;
	fprintf(f, "\"intervals\":{\"t0_ns\":%" PRIu64 ",\"n\":[", t0);
	for (k = 0; k < nint; k++)
		fprintf(f, "%s%ld", k ? "," : "", start[k + 1] - start[k]);
	fputs("],\"columns\":[\n", f);
	for (c = 0; c <= w->plan.nrows; c++) {
		fputs(c ? ",\n[" : "[", f);
		for (k = 0; k < nint; k++) {
			double p50, p99;

			column(w, idx + start[k], start[k + 1] - start[k], c, v,
			       &p50, &p99);
			fprintf(f, "%s[%.3f,%.3f]", k ? "," : "", p50, p99);
		}
		fputc(']', f);
	}
	fputs("]}", f);
	free(start);
	free(at);
	free(idx);
	free(v);
}

static const struct waterfall *slow_ctx;

static int by_latency_desc(const void *a, const void *b)
{
	uint64_t x = waterfall_kept(slow_ctx, *(const long *)a)[1];
	uint64_t y = waterfall_kept(slow_ctx, *(const long *)b)[1];

	return x > y ? -1 : x < y;
}

/*
 * zero: the --perfetto file's time zero, or UINT64_MAX (none). Each
 * row then gives its span in the file's ns (from its first side's
 * first boundary, where that side's transaction slice starts, for its
 * latency), where the page zooms Perfetto.
 */
static void slowest(FILE *f, const struct waterfall *w, uint64_t t0,
		    uint64_t zero)
{
	long *idx = xcalloc(w->nkept ? w->nkept : 1, sizeof(*idx)), i;
	int r;

	for (i = 0; i < w->nkept; i++)
		idx[i] = i;
	slow_ctx = w;
	qsort(idx, w->nkept, sizeof(*idx), by_latency_desc);
	fputs("\"slowest\":[", f);
	for (i = 0; i < w->nkept && i < SLOWEST; i++) {
		const uint64_t *v = waterfall_kept(w, idx[i]);

		fprintf(f, "%s\n{\"t\":%.6f,\"latency\":%.3f,\"flow\":%" PRIu64
			",\"seq\":%" PRIu64 ",\"retransmitted\":%s,",
			i ? "," : "", (v[0] - t0) / 1e9, v[1] / 1e3, v[2], v[3],
			v[5] ? "true" : "false");
		if (zero != UINT64_MAX && v[0] >= zero)
			fprintf(f, "\"span_ns\":[%" PRIu64 ",%" PRIu64 "],",
				v[0] - zero, v[0] - zero + v[1]);
		fputs("\"rows\":[", f);
		for (r = 0; r < w->plan.nrows; r++)
			fprintf(f, "%s%.3f", r ? "," : "",
				v[WATERFALL_KEPT_HEAD + r] / 1e3);
		fputs("]}", f);
	}
	fputs("]", f);
	free(idx);
}

/* realpath() of path's directory into buf, or NULL. */
static char *dir_of(const char *path, char *buf)
{
	char *copy = xstrdup(path), *r = realpath(dirname(copy), buf);

	free(copy);
	return r;
}

const char *html_perfetto_name(const char *report, const char *perfetto)
{
	char a[PATH_MAX], b[PATH_MAX];
	const char *name;

	if (!report || !perfetto || !dir_of(report, a) ||
	    !dir_of(perfetto, b) || strcmp(a, b))
		return NULL;
	name = strrchr(perfetto, '/');
	return name ? name + 1 : perfetto;
}

int html_report_write(FILE *f, const struct waterfall *w,
		      const struct html_meta *m)
{
	uint64_t t0 = UINT64_MAX;
	long i;

	for (i = 0; i < w->nkept; i++)
		if (waterfall_kept(w, i)[0] < t0)
			t0 = waterfall_kept(w, i)[0];
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "\n<title>netstage ", f);
	fputs(m->workload, f);
	fprintf(f, "</title>\n<style>\n%s</style></head>\n<body>\n"
		"<main id=\"app\"><p>This report draws itself with JavaScript."
		"</p></main>\n<script id=\"netstage-data\" "
		"type=\"application/json\">\n{", report_css);
	meta(f, w, m);
	fputs(",\n", f);
	rows(f, w);
	fputs(",\n", f);
	intervals(f, w, m->interval_s);
	fputs(",\n", f);
	slowest(f, w, t0, m->perfetto ? perfetto_zero_ns(w->t, w->n) :
					UINT64_MAX);
	fprintf(f, "}\n</script>\n<script>\n%s</script>\n</body></html>\n",
		report_js);
	return ferror(f) ? -1 : 0;
}
