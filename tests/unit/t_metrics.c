/*
 * observe's /metrics page (src/metrics.h) for known histograms: the
 * cumulative bucket counts, _sum and _count of each stage, the
 * counters, and the OpenMetrics framing Prometheus parses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/metrics.h"
#include "trace/merge.h"

static char *page(const struct metrics_view *v)
{
	FILE *f = tmpfile();
	char *buf = calloc(1, 1 << 20);

	metrics_write(f, v);
	rewind(f);
	assert_true(fread(buf, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	return buf;
}

static void t_bounds_are_ten_a_decade(void **state)
{
	assert_true(metrics_le(0) == 1e-7);
	assert_true(metrics_le(10) == 1e-6);
	assert_true(metrics_le(15) > 3.1e-6 && metrics_le(15) < 3.3e-6);
	assert_true(metrics_le(METRICS_BUCKETS - 1) == 10);
}

/*
 * Three values of 150 ns and one of 1 ms in `app`, the observed
 * server's fifth stage: exact below 256 ns, and 1 ms lands in the bucket
 * up to 1.25 ms (a histogram bucket ends 0.8% past it at most).
 */
static void t_a_stage_histogram(void **state)
{
	struct hist h[NS_MAX_STAGES];
	struct metrics_view v = {
		.port = 11211, .side = NS_SERVER_OBS, .stage = h,
		.transactions = 6, .incomplete = 2, .lost = 1,
	};
	char *p, *eof;
	int i;

	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&h[i]);
	for (i = 0; i < 3; i++)
		hist_add(&h[4], 150);
	hist_add(&h[4], 1000000);
	p = page(&v);
	assert_non_null(strstr(p, "# TYPE netstage_observe_stage_seconds "
			       "histogram\n# UNIT netstage_observe_stage_"
			       "seconds seconds\n"));
	assert_non_null(strstr(p, "{port=\"11211\",stage=\"app\",le=\"1.25e-07\"} 0\n"));
	assert_non_null(strstr(p, "{port=\"11211\",stage=\"app\",le=\"1.6e-07\"} 3\n"));
	assert_non_null(strstr(p, "{port=\"11211\",stage=\"app\",le=\"0.0008\"} 3\n"));
	assert_non_null(strstr(p, "{port=\"11211\",stage=\"app\",le=\"0.00125\"} 4\n"));
	assert_non_null(strstr(p, "{port=\"11211\",stage=\"app\",le=\"+Inf\"} 4\n"));
	assert_non_null(strstr(p, "_sum{port=\"11211\",stage=\"app\"} 0.001000450\n"));
	assert_non_null(strstr(p, "_count{port=\"11211\",stage=\"app\"} 4\n"));
	assert_non_null(strstr(p, "_count{port=\"11211\",stage=\"tcp_rx\"} 0\n"));
	assert_non_null(strstr(p, "\nnetstage_observe_transactions_total{port=\"11211\"} 6\n"));
	assert_non_null(strstr(p, "\nnetstage_observe_incomplete_transactions_total{port=\"11211\"} 2\n"));
	assert_non_null(strstr(p, "\nnetstage_observe_lost_events_total{port=\"11211\"} 1\n"));
	/* No cost measured: no gauge of zeros. */
	assert_null(strstr(p, "trace_cost"));
	eof = strstr(p, "# EOF\n");
	assert_non_null(eof);
	assert_int_equal(eof[6], '\0');
	free(p);
}

static void t_every_stage_and_the_cost(void **state)
{
	struct hist h[NS_MAX_STAGES];
	struct metrics_view v = {
		.port = 80, .side = NS_SERVER_OBS, .stage = h,
		.has_cost = 1, .cost_ns = { 1200, 500, 300, 2000 },
	};
	const struct stage_def *d = stage_defs(NS_SERVER_OBS);
	char want[128], *p;
	int i;

	for (i = 0; i < NS_MAX_STAGES; i++)
		hist_reset(&h[i]);
	p = page(&v);
	for (i = 0; i < stage_count(NS_SERVER_OBS); i++) {
		snprintf(want, sizeof(want), "stage=\"%s\",le=\"+Inf\"} 0\n",
			 d[i].name);
		assert_non_null(strstr(p, want));
	}
	assert_int_equal(stage_count(NS_SERVER_OBS), 7);
	assert_non_null(strstr(p, "{port=\"80\",part=\"bpf\"} 0.000001200000\n"));
	assert_non_null(strstr(p, "{port=\"80\",part=\"total\"} 0.000002000000\n"));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bounds_are_ten_a_decade),
		cmocka_unit_test(t_a_stage_histogram),
		cmocka_unit_test(t_every_stage_and_the_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
