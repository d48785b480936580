#include <stdlib.h>
#include <string.h>

#include "core/kv.h"
#include "output/glance.h"
#include "results/run_results.h"

/* --rate: latencies run from each request's intended send. */
static int open_loop(const struct run_results *r)
{
	const char *rate = kv_get(&r->options, "rate");

	return rate && strtod(rate, NULL) > 0;
}

static void latency(const struct run_results *r, FILE *f)
{
	static const double pct[] = { 50, 90, 99, 99.9 };
	const struct hist *h = &r->lat;
	size_t i;

	if (!r->has_lat)
		return;
	if (open_loop(r))
		fprintf(f, "  latency     from each request's intended send "
			"(--rate: the queueing before it included)\n"
			"              ");
	else
		fputs("  latency     ", f);
	fprintf(f, "mean %.1f", hist_mean(h) / 1e3);
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		fprintf(f, " p%g %.1f", pct[i], hist_percentile(h, pct[i]) / 1e3);
	fprintf(f, " max %.1f us\n", h->count ? h->max / 1e3 : 0);
}

static void cpu(const struct run_results *r, FILE *f)
{
	if (r->cpu_util < 0)
		return;
	fprintf(f, "  cpu         %.1f%% of %d CPUs", r->cpu_util, r->ncpus);
	if (r->service_demand_us > 0)
		fprintf(f, ", %.2f us of CPU per %s", r->service_demand_us,
			r->throughput_mbps ? "KB" : "transaction");
	fputc('\n', f);
}

static void trace(const struct run_results *r, FILE *f)
{
	const struct trace_summary *ts = &r->ts;

	if (!r->trace_asked)
		return;
	if (!r->traced) {
		fprintf(f, "  trace       off: %s\n", r->trace_off);
		return;
	}
	fprintf(f, "  trace       %llu timed, %llu incomplete",
		(unsigned long long)ts->complete,
		(unsigned long long)ts->incomplete);
	if (!ts->hist_mode && ts->held.count)
		fprintf(f, " (%llu responses held back by TCP, p50 %.1f us)",
			(unsigned long long)ts->held.count,
			hist_percentile(&ts->held, 50) / 1e3);
	fprintf(f, ", %llu lost", (unsigned long long)ts->lost);
	if (r->has_cost)
		fprintf(f, "; tracing cost %.2f us per transaction (%s)",
			r->cost.total_ns / 1e3,
			r->cost_both_ends ? "both ends" : "this end");
	fputc('\n', f);
}

void glance_side(const struct run_results *r, FILE *f)
{
	/* observe is both the workload and the side: named once. */
	if (strcmp(r->workload, r->role))
		fprintf(f, "netstage %s %s: ", r->workload, r->role);
	else
		fprintf(f, "netstage %s: ", r->workload);
	if (r->throughput_mbps)
		fprintf(f, "%.1f MB written, %.1f MB read",
			r->bytes_written / 1e6, r->bytes_read / 1e6);
	else
		fprintf(f, "%llu transactions",
			(unsigned long long)r->transactions);
	/* observe has connections it met, not flows of its own. */
	if (r->flows >= 0)
		fprintf(f, ", %d flow%s", r->flows, r->flows == 1 ? "" : "s");
	fprintf(f, ", %.1f s\n", r->duration_s);
	if (r->throughput_mbps)
		fprintf(f, "  throughput  %.1f Mbps\n", r->throughput);
	else
		fprintf(f, "  throughput  %.0f transactions/s\n", r->throughput);
	latency(r, f);
	cpu(r, f);
	if (r->io_errors)
		fprintf(f, "  errors      %llu socket calls failed\n",
			(unsigned long long)r->io_errors);
	trace(r, f);
	if (r->error)
		fprintf(f, "  error       %s\n", r->error);
}
