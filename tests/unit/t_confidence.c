/* Confidence intervals against values worked out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stats/confidence.h"

static void t_three_samples_at_95(void **state)
{
	/* mean 11, s = 1, t(2) = 4.303: 2 * 4.303 / sqrt(3) / 11 = 45.17% */
	double x[] = { 10, 12, 11 };

	assert_true(fabs(mean_of(x, 3) - 11) < 1e-12);
	assert_true(fabs(confidence_width_percent(x, 3, 95) -
			 2 * 4.303 / sqrt(3) / 11 * 100) < 1e-9);
}

static void t_more_samples_narrow_it_and_99_widens_it(void **state)
{
	double x[40];
	int i;

	for (i = 0; i < 40; i++)
		x[i] = 1000 + (i % 2 ? 10 : -10);	/* s = 10.13 */
	/* Past 30 degrees of freedom the normal's 2.576 stands in. */
	assert_true(fabs(confidence_width_percent(x, 40, 99) -
			 2 * 2.576 * sqrt(100.0 * 40 / 39) / sqrt(40) / 1000 *
				 100) < 1e-9);
	assert_true(confidence_width_percent(x, 40, 99) >
		    confidence_width_percent(x, 40, 95));
	assert_true(confidence_width_percent(x, 10, 95) >
		    confidence_width_percent(x, 40, 95));
}

static void t_undefined_cases(void **state)
{
	double x[] = { 5, 5 }, z[] = { 0, 0 }, about0[] = { -1, 1 };

	assert_true(confidence_width_percent(x, 1, 95) == -1);
	assert_true(confidence_width_percent(x, 2, 90) == -1);
	assert_true(confidence_width_percent(x, 2, 99) == 0);
	/* A stage that is always 0 has no spread: no width. */
	assert_true(confidence_width_percent(z, 2, 95) == 0);
	/* Spread about a zero mean: no width relative to it. */
	assert_true(confidence_width_percent(about0, 2, 95) == -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_three_samples_at_95),
		cmocka_unit_test(t_more_samples_narrow_it_and_99_widens_it),
		cmocka_unit_test(t_undefined_cases),
	};

	return cmocka_run_group_tests_name("confidence", tests, NULL, NULL);
}
