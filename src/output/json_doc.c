/*
 * The JSON document of a side (docs/netstage.schema.json), from its
 * results model: options, results, the latency and stage histograms
 * with their buckets, the slowest kept transactions, the intervals.
 */
#include <stdio.h>

#include "core/common.h"
#include "output/json_doc.h"
#include "results/run_results.h"
#include "trace/summary.h"
#include "trace/tail.h"
#include "version.h"

static void json_intervals(FILE *f, const struct run_results *r)
{
	long i;

	fputs("  \"intervals\": [", f);
	for (i = 0; i < r->niv; i++) {
		const struct interval_sum *s = &r->iv[i];

		fprintf(f, "%s\n    {\"end\": %.3f, \"transactions\": %llu, "
			"\"bytes\": %llu, \"rate\": %.2f, \"mbps\": %.3f",
			i ? "," : "", s->t_end,
			(unsigned long long)s->transactions,
			(unsigned long long)s->bytes, s->rate, s->mbps);
		if (r->iv_lat)
			fprintf(f, ", \"p50_us\": %.3f, \"p90_us\": %.3f, "
				"\"p99_us\": %.3f", s->p50_us, s->p90_us,
				s->p99_us);
		fputc('}', f);
	}
	fputs(r->niv ? "\n  ]\n" : "]\n", f);
}

void json_buckets(FILE *f, const struct hist *h)
{
	uint64_t lo, hi;
	unsigned int i;
	int first = 1;

	fputc('[', f);
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		hist_bucket_range(i, &lo, &hi);
		fprintf(f, "%s[%.3f, %.3f, %llu]", first ? "" : ", ", lo / 1e3,
			hi / 1e3, (unsigned long long)h->bucket[i]);
		first = 0;
	}
	fputc(']', f);
}

static void json_hist(FILE *f, const struct hist *h)
{
	fprintf(f, "{\"count\": %llu, \"mean_us\": %.3f, \"p50_us\": %.3f, "
		"\"p90_us\": %.3f, \"p99_us\": %.3f, \"p99.9_us\": %.3f, "
		"\"max_us\": %.3f, \"buckets\": ", (unsigned long long)h->count,
		hist_mean(h) / 1e3, hist_percentile(h, 50) / 1e3,
		hist_percentile(h, 90) / 1e3, hist_percentile(h, 99) / 1e3,
		hist_percentile(h, 99.9) / 1e3, h->count ? h->max / 1e3 : 0);
	json_buckets(f, h);
	fputc('}', f);
}

/* The slowest kept transactions, stage by stage, and what held the CPU. */
static void json_tail(FILE *f, const struct trace_summary *ts)
{
	const struct stage_def *d = trace_stage_defs(ts);
	int i, j;

	fputs("  \"slowest\": [", f);
	for (i = 0; i < ts->ntail; i++) {
		const struct trace_rec *r = &ts->tail[i];

		fprintf(f, "%s\n    {\"flow\": %u, \"seq\": %llu, "
			"\"span_us\": %.3f, \"stages\": {", i ? "," : "",
			r->flow_id, (unsigned long long)r->seq, r->span / 1e3);
		for (j = 0; j < trace_stage_count(ts); j++) {
			fprintf(f, "%s", j ? ", " : "");
			json_string(f, d[j].name);
			fprintf(f, ": %.3f",
				(r->b[d[j].to] - r->b[d[j].from]) / 1e3);
		}
		fputc('}', f);
		if (r->held_comm[0]) {
			fputs(", \"held\": {\"comm\": ", f);
			json_string(f, r->held_comm);
			fprintf(f, ", \"pid\": %u, \"cpu\": %u}", r->held_pid,
				r->held_cpu);
		}
		fputc('}', f);
	}
	fputs(ts->ntail ? "\n  ],\n" : "],\n", f);
}

/* The tail explained (trace/tail.h): the tail_* keys, nested. */
static void json_tail_parts(FILE *f, const struct trace_summary *ts)
{
	const struct stage_def *d = stage_defs(ts->side);
	int q, j, first = 1;

	/* Made from records only: none under --trace=hist. */
	fputs("  \"tail\": {", f);
	for (q = 0; q < TAIL_QUANTILES; q++) {
		const struct tail_part *t = &ts->tailq[q];

		if (!t->n)
			continue;
		fprintf(f, "%s\n    \"%s\": {\"count\": %llu, \"above_us\": "
			"%.3f, \"top\": ", first ? "" : ",", tail_names[q],
			(unsigned long long)t->n, t->above_ns / 1e3);
		json_string(f, d[tail_top(t, ts->side)].name);
		fputs(", \"stages\": {", f);
		for (j = 0; j < stage_count(ts->side); j++) {
			fputs(j ? ", " : "", f);
			json_string(f, d[j].name);
			fprintf(f, ": {\"share\": %.4f, \"excess_us\": %.3f}",
				t->share[j], t->excess_ns[j] / 1e3);
		}
		fputs("}}", f);
		first = 0;
	}
	fputs(first ? "},\n" : "\n  },\n", f);
}

/* The latency and each stage as objects: the stage_* keys, nested. */
static void json_hists(FILE *f, const struct run_results *r)
{
	const struct trace_summary *ts = &r->ts;
	const struct stage_def *d;
	int i, n;

	if (r->has_lat) {
		fputs("  \"latency\": ", f);
		json_hist(f, &r->lat);
		fputs(",\n", f);
	}
	if (!r->traced)
		return;
	d = trace_stage_defs(ts);
	n = trace_stage_count(ts);
	fputs("  \"stages\": {", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_string(f, d[i].name);
		fputs(": ", f);
		json_hist(f, &ts->stage[i]);
	}
	fputs("\n  },\n", f);
	json_tail_parts(f, ts);
	json_tail(f, ts);
}

void write_json(FILE *f, const struct run_results *r)
{
	fputs("{\n  \"netstage\": {\"version\": ", f);
	json_string(f, NETSTAGE_VERSION);
	fputs(", \"workload\": ", f);
	json_string(f, r->workload);
	fputs(", \"role\": ", f);
	json_string(f, r->role);
	fputs("},\n  \"options\": {\n", f);
	kv_json_members(&r->options, f, 4);
	fputs("  },\n  \"results\": {\n", f);
	kv_json_members(&r->keys, f, 4);
	fputs("  },\n", f);
	json_hists(f, r);
	json_intervals(f, r);
	fputs("}\n", f);
}
