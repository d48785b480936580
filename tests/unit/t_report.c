/*
 * Throughput fit, key=value and JSON output (the incomplete keys among
 * them), output-file naming.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats/fit.h"
#include "core/kv.h"
#include "side/side.h"
#include "trace/merge.h"
#include "trace/summary.h"

static void t_fit_of_a_line_is_exact(void **state)
{
	double x[] = { 1, 2, 3, 4, 5 }, y[5], slope, r;
	int i;

	for (i = 0; i < 5; i++)
		y[i] = 30000 * x[i] + 17;
	linear_fit(x, y, 5, &slope, &r);
	assert_true(fabs(slope - 30000) < 1e-6);
	assert_true(fabs(r - 1) < 1e-12);
}

static void t_fit_correlation_of_noisy_data(void **state)
{
	/* Python's statistics.linear_regression and .correlation agree. */
	double x[] = { -1, 0, 1 }, y[] = { -1, 0.2, 0.6 }, slope, r;

	linear_fit(x, y, 3, &slope, &r);
	assert_true(fabs(slope - 0.8) < 1e-12);
	assert_true(fabs(r - 0.9607689228305228) < 1e-12);
}

static void t_fit_needs_two_points(void **state)
{
	double x[] = { 1, 1 }, y[] = { 5, 6 }, slope, r;

	linear_fit(x, y, 1, &slope, &r);
	assert_true(isnan(slope) && isnan(r));
	linear_fit(x, y, 2, &slope, &r);	/* no spread in x */
	assert_true(isnan(slope));
}

static char *capture(void (*fn)(FILE *, const struct kv_list *),
		     const struct kv_list *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, l);
	fclose(f);
	return buf;
}

static void print_plain(FILE *f, const struct kv_list *l)
{
	kv_print(l, f, "client.");
}

static void print_json(FILE *f, const struct kv_list *l)
{
	kv_json_members(l, f, 0);
}

static void t_kv_prints_and_escapes(void **state)
{
	struct kv_list l = { 0 };
	char *s;

	kv_int(&l, "num_transactions", 329605);
	kv_num(&l, "throughput", 33009.8412, 2);
	kv_num(&l, "correlation_coefficient", NAN, 2);
	kv_str(&l, "error", "say \"hi\"\\\n");
	s = capture(print_plain, &l);
	assert_string_equal(s, "client.num_transactions=329605\n"
			       "client.throughput=33009.84\n"
			       "client.correlation_coefficient=nan\n"
			       "client.error=say \"hi\"\\\n\n");
	free(s);
	s = capture(print_json, &l);
	assert_string_equal(s, "\"num_transactions\": 329605,\n"
			       "\"throughput\": 33009.84,\n"
			       "\"correlation_coefficient\": null,\n"
			       "\"error\": \"say \\\"hi\\\"\\\\\\u000a\"\n");
	free(s);
	kv_free(&l);
}

static void print_trace_json(FILE *f, const struct kv_list *l)
{
	kv_json_prefixed(l, "trace_", f, 2);
}

static void t_kv_json_prefixed_keeps_its_keys_alone(void **state)
{
	struct kv_list l = { 0 };
	char *s;

	kv_int(&l, "throughput", 5);
	kv_int(&l, "trace_incomplete", 3);
	kv_str(&l, "tracer", "x");
	kv_str(&l, "trace_incomplete_at", "app_done:3");
	kv_int(&l, "num_flows", 1);
	s = capture(print_trace_json, &l);
	assert_string_equal(s, "  \"trace_incomplete\": 3,\n"
			       "  \"trace_incomplete_at\": \"app_done:3\"\n");
	free(s);
	kv_free(&l);
	kv_int(&l, "throughput", 5);
	s = capture(print_trace_json, &l);
	assert_string_equal(s, "");
	free(s);
	kv_free(&l);
}

static void t_incomplete_keys_say_why_and_where(void **state)
{
	struct trace_summary *ts = calloc(1, sizeof(*ts));
	struct kv_list l = { 0 };
	char *s;
	int b;

	trace_incomplete_kv(ts, &l);
	s = capture(print_plain, &l);
	assert_string_equal(s, "client.trace_incomplete_missing=0\n"
			       "client.trace_incomplete_disorder=0\n"
			       "client.trace_incomplete_norecord=0\n");
	free(s);
	kv_free(&l);
	ts->missing = 2;
	ts->disorder = 5;
	ts->norecord = 1;
	ts->bad_at[NS_B_APP_DONE] = 5;	/* time order, not the order set */
	ts->bad_at[NS_B_TCP_RX] = 2;
	trace_incomplete_kv(ts, &l);
	assert_string_equal(kv_get(&l, "trace_incomplete_missing"), "2");
	assert_string_equal(kv_get(&l, "trace_incomplete_disorder"), "5");
	assert_string_equal(kv_get(&l, "trace_incomplete_norecord"), "1");
	assert_string_equal(kv_get(&l, "trace_incomplete_at"),
			    "TCP_RX:2,APP_DONE:5");
	assert_null(kv_get(&l, "trace_held_back_count"));	/* none */
	kv_free(&l);
	/* Responses held back: their count and how long, to the ns. */
	hist_reset(&ts->held);
	hist_add(&ts->held, 6800);
	hist_add(&ts->held, 1234567);
	trace_incomplete_kv(ts, &l);
	assert_string_equal(kv_get(&l, "trace_held_back_count"), "2");
	assert_string_equal(kv_get(&l, "trace_held_back_max_us"), "1234.567");
	assert_non_null(kv_get(&l, "trace_held_back_p50_us"));
	assert_non_null(kv_get(&l, "trace_held_back_p99_us"));
	kv_free(&l);
	hist_reset(&ts->held);
	/* Every boundary at the largest count: the whole list, no less. */
	for (b = 0; b < NS_B_COUNT; b++)
		ts->bad_at[b] = UINT64_MAX;
	trace_incomplete_kv(ts, &l);
	s = strdup(kv_get(&l, "trace_incomplete_at"));
	for (b = NS_B_COUNT - 1; b >= 0; b--) {
		char *last = strrchr(s, ',');
		char want[64];

		snprintf(want, sizeof(want), "%s:%llu", boundary_name(b),
			 (unsigned long long)UINT64_MAX);
		assert_string_equal(last ? last + 1 : s, want);
		if (last)
			*last = '\0';
	}
	free(s);
	kv_free(&l);
	free(ts);
}

static void t_server_file_names_in_local_mode(void **state)
{
	char *p;

	p = side_server_path("samples.csv");
	assert_string_equal(p, "samples.server.csv");
	free(p);
	p = side_server_path("/tmp/a.b/run");
	assert_string_equal(p, "/tmp/a.b/run.server");
	free(p);
	p = side_server_path("out/.hidden");
	assert_string_equal(p, "out/.hidden.server");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_fit_of_a_line_is_exact),
		cmocka_unit_test(t_fit_correlation_of_noisy_data),
		cmocka_unit_test(t_fit_needs_two_points),
		cmocka_unit_test(t_kv_prints_and_escapes),
		cmocka_unit_test(t_kv_json_prefixed_keeps_its_keys_alone),
		cmocka_unit_test(t_incomplete_keys_say_why_and_where),
		cmocka_unit_test(t_server_file_names_in_local_mode),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
