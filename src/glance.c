#include <stdlib.h>
#include <string.h>

#include "glance.h"

static double num(const struct kv_list *l, const char *key)
{
	const char *s = kv_get(l, key);

	return s ? strtod(s, NULL) : 0;
}

static void latency(const struct kv_list *l, FILE *f)
{
	static const char *const stat[] = { "mean", "p50", "p90", "p99",
					    "p99.9", "max" };
	char key[32];
	size_t i;

	if (!kv_get(l, "latency_p50_us"))
		return;
	fputs("  latency    ", f);
	for (i = 0; i < sizeof(stat) / sizeof(stat[0]); i++) {
		snprintf(key, sizeof(key), "latency_%s_us", stat[i]);
		fprintf(f, " %s %.1f", stat[i], num(l, key));
	}
	fputs(" us\n", f);
}

static void cpu(const struct kv_list *l, FILE *f)
{
	if (!kv_get(l, "local_cpu_util") || num(l, "local_cpu_util") < 0)
		return;
	fprintf(f, "  cpu         %.1f%% of %.0f CPUs", num(l, "local_cpu_util"),
		num(l, "num_cpus"));
	if (num(l, "local_service_demand_us") > 0)
		fprintf(f, ", %.2f us of CPU per %s",
			num(l, "local_service_demand_us"),
			kv_get(l, "throughput_Mbps") ? "KB" : "transaction");
	fputc('\n', f);
}

static void trace(const struct kv_list *l, FILE *f)
{
	const char *status = kv_get(l, "trace_status");

	if (!status)
		return;
	if (!strcmp(status, "off")) {
		fprintf(f, "  trace       off: %s\n", kv_get(l, "trace_error"));
		return;
	}
	fprintf(f, "  trace       %s timed, %s incomplete",
		kv_get(l, "trace_transactions"), kv_get(l, "trace_incomplete"));
	if (kv_get(l, "trace_held_back_count"))
		fprintf(f, " (%s responses held back by TCP, p50 %.1f us)",
			kv_get(l, "trace_held_back_count"),
			num(l, "trace_held_back_p50_us"));
	fprintf(f, ", %s lost", kv_get(l, "trace_lost"));
	if (kv_get(l, "trace_cost_ns"))
		fprintf(f, "; tracing cost %.2f us per transaction (%s)",
			num(l, "trace_cost_ns") / 1e3,
			strcmp(kv_get(l, "trace_cost_covers"), "both_ends")
				? "this end" : "both ends");
	fputc('\n', f);
}

void glance_side(const struct kv_list *l, const char *workload,
		 const char *who, FILE *f)
{
	const char *mbps = kv_get(l, "throughput_Mbps");

	/* observe is both the workload and the side: named once. */
	if (strcmp(workload, who))
		fprintf(f, "netstage %s %s: ", workload, who);
	else
		fprintf(f, "netstage %s: ", workload);
	if (mbps)
		fprintf(f, "%.1f MB written, %.1f MB read",
			num(l, "bytes_written") / 1e6,
			num(l, "bytes_read") / 1e6);
	else
		fprintf(f, "%s transactions", kv_get(l, "num_transactions"));
	/* observe has connections it met, not flows of its own. */
	if (kv_get(l, "flows"))
		fprintf(f, ", %.0f flow%s", num(l, "flows"),
			num(l, "flows") == 1 ? "" : "s");
	fprintf(f, ", %.1f s\n", num(l, "time_end") - num(l, "time_start"));
	if (mbps)
		fprintf(f, "  throughput  %.1f Mbps\n", strtod(mbps, NULL));
	else if (kv_get(l, "throughput"))
		fprintf(f, "  throughput  %.0f transactions/s\n",
			num(l, "throughput"));
	latency(l, f);
	cpu(l, f);
	if (num(l, "io_errors") > 0)
		fprintf(f, "  errors      %s socket calls failed\n",
			kv_get(l, "io_errors"));
	trace(l, f);
	if (kv_get(l, "error"))
		fprintf(f, "  error       %s\n", kv_get(l, "error"));
}
