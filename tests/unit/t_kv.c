/*
 * Key=value lists (core/kv.h): the three printed forms (key=value,
 * JSON members, CSV fields) say the same values, typed as they were
 * made, and what CSV or JSON cannot hold bare is quoted or null.
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

#include "core/kv.h"

/* What fill(f) wrote, as a string the caller frees. */
static char *written(void (*fill)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	fill(f, arg);
	fclose(f);
	return buf;
}

static void sample(struct kv_list *l)
{
	kv_str(l, "name", "a,b \"c\"");
	kv_int(l, "delta", -12);
	kv_uint(l, "count", UINT64_MAX);
	kv_num(l, "mean_us", 2.0 / 3, 3);
	kv_num(l, "r", NAN, 2);
	kv_str(l, "trace_status", "records");
}

static void print_kv(FILE *f, const void *arg)
{
	kv_print(arg, f, "client.");
}

static void print_json(FILE *f, const void *arg)
{
	kv_json_members(arg, f, 2);
}

static void print_trace_json(FILE *f, const void *arg)
{
	kv_json_prefixed(arg, "trace_", f, 0);
}

static void t_each_form_says_the_values(void **state)
{
	struct kv_list l = { 0 };
	char *s;

	sample(&l);
	s = written(print_kv, &l);
	assert_string_equal(s, "client.name=a,b \"c\"\n"
			       "client.delta=-12\n"
			       "client.count=18446744073709551615\n"
			       "client.mean_us=0.667\n"
			       "client.r=nan\n"
			       "client.trace_status=records\n");
	free(s);
	/* Numbers bare, strings quoted and escaped, not-a-number null. */
	s = written(print_json, &l);
	assert_string_equal(s, "  \"name\": \"a,b \\\"c\\\"\",\n"
			       "  \"delta\": -12,\n"
			       "  \"count\": 18446744073709551615,\n"
			       "  \"mean_us\": 0.667,\n"
			       "  \"r\": null,\n"
			       "  \"trace_status\": \"records\"\n");
	free(s);
	s = written(print_trace_json, &l);
	assert_string_equal(s, "\"trace_status\": \"records\"\n");
	free(s);
	kv_free(&l);
}

static void t_types_and_lookup(void **state)
{
	struct kv_list l = { 0 };

	sample(&l);
	assert_int_equal(l.v[0].type, KV_STR);
	assert_int_equal(l.v[1].type, KV_INT);
	assert_int_equal(l.v[2].type, KV_INT);
	assert_int_equal(l.v[3].type, KV_NUM);
	assert_int_equal(l.v[4].type, KV_NUM);
	assert_string_equal(kv_get(&l, "mean_us"), "0.667");
	assert_null(kv_get(&l, "mean"));
	kv_free(&l);
	assert_int_equal(l.n, 0);
}

struct fields {
	const char *const *v;
	int n;
};

static void print_csv(FILE *f, const void *arg)
{
	const struct fields *fl = arg;
	int i;

	for (i = 0; i < fl->n; i++)
		csv_field(f, fl->v[i], i);
}

/* RFC 4180: a comma, a quote or a newline makes a quoted field. */
static void t_csv_quotes_what_it_must(void **state)
{
	static const char *const v[] = { "plain", "a,b", "say \"hi\"",
					  "two\nlines", "" };
	struct fields fl = { v, 5 };
	char *s = written(print_csv, &fl);

	assert_string_equal(s, "plain,\"a,b\",\"say \"\"hi\"\"\","
			       "\"two\nlines\",");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_each_form_says_the_values),
		cmocka_unit_test(t_types_and_lookup),
		cmocka_unit_test(t_csv_quotes_what_it_must),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
