/* Student's t, Welch and Holm against values from published tables. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stats/tdist.h"

static void near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.9g, want %.9g", got, want);
}

static void t_tables(void **state)
{
	/* Two-sided 5% points: t(1) 12.706, t(4) 2.776, t(30) 2.042. */
	near(t_two_sided_p(12.7062047, 1), 0.05, 1e-7);
	near(t_two_sided_p(2.7764451, 4), 0.05, 1e-7);
	near(t_two_sided_p(2.0422725, 30), 0.05, 1e-7);
	/* 1%: t(10) 3.169. One degree is Cauchy's: P(|T| >= 1) = 1/2. */
	near(t_two_sided_p(3.1692727, 10), 0.01, 1e-7);
	near(t_two_sided_p(1, 1), 0.5, 1e-12);
	near(t_two_sided_p(0, 7), 1, 1e-12);
	near(t_two_sided_p(-2.7764451, 4), 0.05, 1e-7);
	near(t_quantile_two_sided(0.05, 4), 2.7764451, 1e-6);
	near(t_quantile_two_sided(0.01, 10), 3.1692727, 1e-6);
	near(z_two_sided_p(1.959964), 0.05, 1e-6);
	assert_true(isnan(t_two_sided_p(1, 0)));
}

static void t_welch(void **state)
{
	double a[] = { 10, 12, 11 }, b[] = { 20, 22, 21, 19 }, one[] = { 5 };
	double se, df;

	/* var 1/3 + 5/3/4 = 0.75; df 0.75^2 / ((1/3)^2/2 + (5/12)^2/3) */
	assert_int_equal(welch(a, 3, b, 4, &se, &df), 0);
	near(se, sqrt(1.0 / 3 + 5.0 / 12), 1e-12);
	near(df, 0.5625 / (1.0 / 18 + 25.0 / 432), 1e-9);
	/* One run a side takes the other's variance. */
	assert_int_equal(welch(one, 1, a, 3, &se, &df), 0);
	near(se, sqrt(1 * (1 + 1.0 / 3)), 1e-12);
	near(df, 2, 0);
	assert_int_equal(welch(one, 1, one, 1, &se, &df), -1);
}

static void t_holm(void **state)
{
	/* Sorted 0.01 0.02 0.03 0.5 times 4, 3, 2, 1, never falling. */
	double p[] = { 0.03, 0.01, 0.5, 0.02 };

	holm_adjust(p, 4);
	near(p[1], 0.04, 1e-12);
	near(p[3], 0.06, 1e-12);
	near(p[0], 0.06, 1e-12);
	near(p[2], 0.5, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tables),
		cmocka_unit_test(t_welch),
		cmocka_unit_test(t_holm),
	};

	return cmocka_run_group_tests_name("tdist", tests, NULL, NULL);
}
