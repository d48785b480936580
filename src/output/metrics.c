#include <math.h>

#include "output/metrics.h"
#include "trace/merge.h"

#define PREFIX "netstage_observe_"

static const double steps[10] = {
	1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.3, 8
};

double metrics_le(int i)
{
	return steps[i % 10] * pow(10, i / 10 - 7);
}

static void family(FILE *f, const char *name, const char *type,
		   const char *unit, const char *help)
{
	fprintf(f, "# TYPE " PREFIX "%s %s\n", name, type);
	if (unit)
		fprintf(f, "# UNIT " PREFIX "%s %s\n", name, unit);
	fprintf(f, "# HELP " PREFIX "%s %s\n", name, help);
}

/*
 * A bucket counts the values up to its bound: the histogram's buckets
 * that end by then (128 to a power of two: a value lands at most 0.8%
 * past its bound, never in a lower bucket).
 */
static void histogram(FILE *f, const struct metrics_view *v, const char *stage,
		      const struct hist *h)
{
	unsigned int b = 0;
	uint64_t lo, hi, n = 0;
	int i;

	for (i = 0; i < METRICS_BUCKETS; i++) {
		double le_ns = metrics_le(i) * 1e9;

		for (; b < HIST_BUCKETS; b++) {
			hist_bucket_range(b, &lo, &hi);
			if ((double)hi > le_ns)
				break;
			n += h->bucket[b];
		}
		fprintf(f, PREFIX "stage_seconds_bucket{port=\"%d\",stage=\"%s\","
			"le=\"%g\"} %llu\n", v->port, stage, metrics_le(i),
			(unsigned long long)n);
	}
	fprintf(f, PREFIX "stage_seconds_bucket{port=\"%d\",stage=\"%s\","
		"le=\"+Inf\"} %llu\n", v->port, stage,
		(unsigned long long)h->count);
	fprintf(f, PREFIX "stage_seconds_sum{port=\"%d\",stage=\"%s\"} %.9f\n",
		v->port, stage, h->sum / 1e9);
	fprintf(f, PREFIX "stage_seconds_count{port=\"%d\",stage=\"%s\"} "
		"%llu\n", v->port, stage, (unsigned long long)h->count);
}

static void counter(FILE *f, const struct metrics_view *v, const char *name,
		    const char *help, uint64_t n)
{
	family(f, name, "counter", NULL, help);
	fprintf(f, PREFIX "%s_total{port=\"%d\"} %llu\n", name, v->port,
		(unsigned long long)n);
}

static void cost(FILE *f, const struct metrics_view *v)
{
	static const char *const part[MC_PARTS] = {
		"bpf", "entry", "user", "total"
	};
	int i;

	family(f, "trace_cost_seconds", "gauge", "seconds",
	       "What tracing costs a transaction, by part (docs/stages.md).");
	for (i = 0; i < MC_PARTS; i++)
		fprintf(f, PREFIX "trace_cost_seconds{port=\"%d\",part=\"%s\"} "
			"%.12f\n", v->port, part[i], v->cost_ns[i] / 1e9);
}

void metrics_write(FILE *f, const struct metrics_view *v)
{
	const struct stage_def *d = stage_defs(v->side);
	int i;

	family(f, "stage_seconds", "histogram", "seconds",
	       "Time the observed server's transactions spent in each stage.");
	for (i = 0; i < stage_count(v->side); i++)
		histogram(f, v, d[i].name, &v->stage[i]);
	counter(f, v, "transactions",
		"Request/response turns of the observed server.",
		v->transactions);
	counter(f, v, "incomplete_transactions",
		"Transactions not timed: a boundary missing or out of order.",
		v->incomplete);
	counter(f, v, "lost_events",
		"Records lost in BPF (a full ring): the figures are incomplete.",
		v->lost);
	if (v->has_cost)
		cost(f, v);
	fputs("# EOF\n", f);
}
