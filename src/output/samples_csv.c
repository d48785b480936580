/*
 * samples.csv (-A): a row a flow and interval, from the side's results
 * model; the columns follow the workload, the side and its tracing.
 */
#include <stdio.h>
#include <sys/resource.h>

#include "core/common.h"
#include "results/run_results.h"
#include "output/samples_csv.h"
#include "trace/merge.h"

static double tv(const struct timeval *t)
{
	return t->tv_sec + t->tv_usec / 1e6;
}

/* samples.csv's stage columns: a traced side with records. */
static int stage_columns(const struct run_results *r)
{
	return r->traced && !r->trace_hist;
}

static void csv_header(FILE *f, const struct run_results *r)
{
	const struct percentiles *pc = &r->pc;
	int i;

	fputs("time,tid,flow_id,bytes_read,", f);
	/* An rr server times no latency: no columns of zeros. */
	if (r->is_rr && !r->is_client) {
		fputs("bytes_written,transactions", f);
	} else if (r->is_rr) {
		fputs("transactions,latency_min,latency_mean,latency_max,"
		      "latency_stddev", f);
		for (i = 0; i < pc->n; i++)
			fprintf(f, ",latency_p%g", pc->p[i]);
	} else {
		fputs("bytes_written,transactions", f);
	}
	if (stage_columns(r)) {
		const struct stage_def *d = stage_defs(r->side);

		for (i = 0; i < stage_count(r->side); i++)
			fprintf(f, ",stage_%s_mean", d[i].name);
		fputs(",trace_lost", f);
	}
	fputs(",utime,stime,maxrss,minflt,majflt,nvcsw,nivcsw\n", f);
}

static void csv_row(FILE *f, const struct sample *s,
		    const struct run_results *r)
{
	int i;

	fprintf(f, "%.9f,%d,%d,%llu,", ns_to_s(s->time), s->tid, s->flow_id,
		(unsigned long long)s->bytes_read);
	if (r->is_rr && r->is_client) {
		fprintf(f, "%llu,%.9f,%.9f,%.9f,%.9f",
			(unsigned long long)s->transactions, s->lat_min,
			s->lat_mean, s->lat_max, s->lat_stddev);
		for (i = 0; i < r->pc.n; i++)
			fprintf(f, ",%.9f", s->pct[i]);
	} else {
		fprintf(f, "%llu,%llu", (unsigned long long)s->bytes_written,
			(unsigned long long)s->transactions);
	}
	for (i = 0; stage_columns(r) && i < stage_count(r->side); i++)
		fprintf(f, ",%.9f", s->stage_mean[i]);
	if (stage_columns(r))
		fprintf(f, ",%llu", (unsigned long long)s->trace_lost);
	fprintf(f, ",%.6f,%.6f,%ld,%ld,%ld,%ld,%ld\n", tv(&s->ru.ru_utime),
		tv(&s->ru.ru_stime), s->ru.ru_maxrss, s->ru.ru_minflt,
		s->ru.ru_majflt, s->ru.ru_nvcsw, s->ru.ru_nivcsw);
}

void write_samples_csv(FILE *f, const struct run_results *r)
{
	long j;
	int i;

	csv_header(f, r);
	for (i = 0; i < r->nsample_sets; i++)
		for (j = 0; j < r->samples[i].n; j++)
			csv_row(f, &r->samples[i].v[j], r);
}
