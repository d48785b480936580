/*
 * The in-run cost of timing (src/trace/inrun.h): the timed p50 less the
 * untimed p50, and its interval from the tenths of the run, on values
 * the histograms count exactly (under 256 ns).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "trace/inrun.h"

#define T0 1000
#define SPAN 10000
/* A time inside tenth i of the run. */
#define AT(i) (T0 + (uint64_t)(i) * (SPAN / INRUN_BLOCKS + 1))

static void t_a_constant_cost_has_no_spread(void **state)
{
	static struct inrun ir;
	struct inrun_cost c;
	int i, j;

	(void)state;
	inrun_init(&ir, T0, SPAN);
	for (i = 0; i < INRUN_BLOCKS; i++)
		for (j = 0; j < 9; j++) {
			inrun_add(&ir, AT(i), 150, 0);
			if (j % 3 == 0)
				inrun_add(&ir, AT(i), 200, 1);
		}
	assert_int_equal(inrun_cost(&ir, &c), 0);
	assert_int_equal(c.blocks, INRUN_BLOCKS);
	assert_int_equal(c.timed, 30);
	assert_int_equal(c.untimed, 90);
	assert_true(c.p50_ns == 50 && c.lo_ns == 50 && c.hi_ns == 50);
}

/*
 * Tenth i costs 2i ns: mean 9, standard error sqrt(330 / 9 / 10), and
 * Student's t of 9 degrees, 2.262, around the whole run's 8 (the fifth
 * of 100, 102, ... 118 less 100).
 */
static void t_the_tenths_give_the_interval(void **state)
{
	static struct inrun ir;
	struct inrun_cost c;
	double half = 2.262 * 1.914854;
	int i;

	(void)state;
	inrun_init(&ir, T0, SPAN);
	for (i = 0; i < INRUN_BLOCKS; i++) {
		inrun_add(&ir, AT(i), 100, 0);
		inrun_add(&ir, AT(i), 100 + 2 * i, 1);
	}
	assert_int_equal(inrun_cost(&ir, &c), 0);
	assert_true(c.p50_ns == 8);
	assert_true(c.lo_ns > 8 - half - 1e-3 && c.lo_ns < 8 - half + 1e-3);
	assert_true(c.hi_ns > 8 + half - 1e-3 && c.hi_ns < 8 + half + 1e-3);
}

/* Late transactions (past the run's length) count in the last tenth. */
static void t_one_tenth_gives_no_interval(void **state)
{
	static struct inrun ir, other;
	struct inrun_cost c;

	(void)state;
	inrun_init(&ir, T0, SPAN);
	inrun_init(&other, T0, SPAN);
	inrun_add(&ir, T0 + 5 * SPAN, 100, 0);
	inrun_add(&other, T0 + 5 * SPAN, 120, 1);
	inrun_merge(&ir, &other);
	assert_int_equal(ir.block[INRUN_BLOCKS - 1][1].count, 1);
	assert_int_equal(inrun_cost(&ir, &c), -1);
	assert_int_equal(c.blocks, 1);
	assert_true(c.p50_ns == 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_a_constant_cost_has_no_spread),
		cmocka_unit_test(t_the_tenths_give_the_interval),
		cmocka_unit_test(t_one_tenth_gives_no_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
