/*
 * The least-squares line (stats/fit.h) on points whose answer is known:
 * an exact line, a symmetric scatter, and the cases with no answer.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/fit.h"

static void t_an_exact_line(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5 }, y[] = { 7, 10, 13, 16, 19 };
	const double yd[] = { 19, 16, 13, 10, 7 };
	double slope, r;

	linear_fit(x, y, 5, &slope, &r);
	assert_true(slope == 3.0);
	assert_true(r == 1.0);
	/* Falling: r is -1. */
	linear_fit(x, yd, 5, &slope, &r);
	assert_true(slope == -3.0);
	assert_true(r == -1.0);
}

/*
 * (0,0) (1,2) (2,1) (3,3): mean x 1.5, mean y 1.5; sxx 5, sxy 4,
 * syy 5: slope 0.8, r 0.8.
 */
static void t_a_scatter(void **state)
{
	const double x[] = { 0, 1, 2, 3 }, y[] = { 0, 2, 1, 3 };
	double slope, r;

	linear_fit(x, y, 4, &slope, &r);
	assert_true(fabs(slope - 0.8) < 1e-15);
	assert_true(fabs(r - 0.8) < 1e-15);
}

static void t_no_answer_is_nan(void **state)
{
	const double x[] = { 2, 2, 2 }, y[] = { 1, 2, 3 }, flat[] = { 5, 5 };
	double slope, r;

	linear_fit(x, y, 1, &slope, &r);
	assert_true(isnan(slope) && isnan(r));
	/* No spread in x: no slope. */
	linear_fit(x, y, 3, &slope, &r);
	assert_true(isnan(slope) && isnan(r));
	/* No spread in y: slope 0, no correlation. */
	linear_fit(y, flat, 2, &slope, &r);
	assert_true(slope == 0.0);
	assert_true(isnan(r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_an_exact_line),
		cmocka_unit_test(t_a_scatter),
		cmocka_unit_test(t_no_answer_is_nan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
