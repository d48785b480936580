/*
 * The test-only clock skew (results/clock_id.h): what it accepts, and
 * that it moves every stamp of the records by the offset plus the
 * drift since boot, the unstamped left 0, and names the clock anew.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/common.h"
#include "results/clock_id.h"

static int parse(const char *v, struct clock_skew *s)
{
	char err[160] = "";
	int rc;

	setenv("NETSTAGE_TEST_CLOCK_SKEW", v, 1);
	rc = clock_skew_from_env(s, err, sizeof(err));
	unsetenv("NETSTAGE_TEST_CLOCK_SKEW");
	if (rc)
		assert_non_null(strstr(err, "NETSTAGE_TEST_CLOCK_SKEW="));
	return rc;
}

static void t_values(void **state)
{
	struct clock_skew s;
	char err[160];

	assert_int_equal(clock_skew_from_env(&s, err, sizeof(err)), 0);
	assert_int_equal(s.on, 0);
	assert_int_equal(parse("-5000000,30.5", &s), 0);
	assert_int_equal(s.on, 1);
	assert_true(s.offset_ns == -5000000);
	assert_true(s.ppm == 30.5);
	assert_int_equal(parse("", &s), -1);
	assert_int_equal(parse("5000000", &s), -1);
	assert_int_equal(parse("5ms,30", &s), -1);
	assert_int_equal(parse("5000000,30x", &s), -1);
	assert_int_equal(parse("5000000,10001", &s), -1);
	assert_int_equal(parse("5000000,nan", &s), -1);
}

static void t_every_stamp_moves(void **state)
{
	struct clock_skew s = { 1, 5000000, 40 };
	struct trace_rec r[2] = { { 0 } };
	struct rec_set set = { .nworkers = 1 };
	char id[CLOCK_ID_LEN] = "boot";

	set.recs[0] = r;
	set.n[0] = 2;
	r[0].b[0] = 1;
	r[0].b[1] = 1000000000;		/* 1 s since boot: +40 us */
	r[0].sw_tx = 500000000;
	r[1].b[2] = 3600000000000ULL;	/* an hour: +144 ms */
	clock_skew_apply(&s, &set, id, sizeof(id));
	assert_true(r[0].b[0] == 1 + 5000000);
	assert_true(r[0].b[1] == 1000000000 + 5000000 + 40000);
	assert_true(r[0].sw_tx == 500000000 + 5000000 + 20000);
	assert_true(r[0].sw_rx == 0);
	assert_true(r[0].b[2] == 0);
	assert_true(r[1].b[2] == 3600000000000ULL + 5000000 + 144000000);
	assert_string_equal(id, "boot+skew");
}

/* Off, nothing moves and the clock keeps its name. */
static void t_off_changes_nothing(void **state)
{
	struct clock_skew s = { 0 };
	struct trace_rec r = { .b = { 7 } };
	struct rec_set set = { .nworkers = 1 };
	char id[CLOCK_ID_LEN] = "boot";

	set.recs[0] = &r;
	set.n[0] = 1;
	clock_skew_apply(&s, &set, id, sizeof(id));
	assert_true(r.b[0] == 7);
	assert_string_equal(id, "boot");
}

/* The host's id is its boot id: 36 characters, the same each time. */
static void t_the_host_id(void **state)
{
	char a[CLOCK_ID_LEN], b[CLOCK_ID_LEN];

	clock_id_read(a, sizeof(a));
	clock_id_read(b, sizeof(b));
	assert_int_equal(strlen(a), 36);
	assert_string_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_values),
		cmocka_unit_test(t_every_stamp_moves),
		cmocka_unit_test(t_off_changes_nothing),
		cmocka_unit_test(t_the_host_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
