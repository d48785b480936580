/*
 * netstage compare's model on synthetic runs: each group's figure is
 * its runs' mean, the test is Welch's over them, the verdicts follow
 * Holm's adjustment over every figure, and one run a side takes its
 * noise from its own intervals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "results/compare.h"
#include "stats/tdist.h"

/* A run of rate r whose every latency is lat_ns, stage "app" app_ns. */
static void run(struct run_json *j, double r, uint64_t lat_ns,
		uint64_t app_ns, struct hist *stage)
{
	memset(j, 0, sizeof(*j));
	strcpy(j->workload, "tcp_rr");
	strcpy(j->role, "client");
	j->throughput = r;
	j->has_lat = 1;
	hist_reset(&j->lat);
	hist_add_n(&j->lat, lat_ns, 1000);
	j->nstages = 1;
	strcpy(j->stage[0], "app");
	hist_reset(stage);
	hist_add_n(stage, app_ns, 1000);
	j->stage_hist = stage;
}

static const struct cmp_fig *fig(const struct cmp *c, const char *name)
{
	int i;

	for (i = 0; i < c->nfig; i++)
		if (!strcmp(c->fig[i].name, name))
			return &c->fig[i];
	fail_msg("no figure %s", name);
	return NULL;
}

static void t_groups(void **state)
{
	static const double ra[] = { 10, 12, 11 }, rb[] = { 20, 22, 21, 19 };
	struct run_json a[3], b[4];
	const struct run_json *pa[3], *pb[4];
	struct hist sa[3], sb[4];
	struct cmp c = { 0 };
	const struct cmp_fig *f;
	double se, df, p;
	int i;

	for (i = 0; i < 3; i++) {
		run(&a[i], ra[i], 20000, 1000, &sa[i]);
		pa[i] = &a[i];
	}
	for (i = 0; i < 4; i++) {
		run(&b[i], rb[i], 20000, 101000, &sb[i]);
		pb[i] = &b[i];
	}
	compare_side(&c, "client", pa, 3, pb, 4);
	compare_finish(&c);
	assert_int_equal(c.within, 0);
	f = fig(&c, "throughput");
	assert_true(fabs(f->a - 11) < 1e-12 && fabs(f->b - 20.5) < 1e-12);
	assert_true(fabs(f->diff - 9.5) < 1e-12);
	/* Welch's p, times the figures tested (Holm, the smallest p). */
	welch(ra, 3, rb, 4, &se, &df);
	p = t_two_sided_p(9.5 / se, df);
	assert_true(f->p >= p && f->p <= p * c.ntested + 1e-12);
	assert_string_equal(compare_verdict(f), "up");
	assert_string_equal(compare_judgement(f), "better");
	/* Every run's latency alike: no change, level. */
	f = fig(&c, "latency_p50_us");
	assert_true(f->diff == 0 && !f->beyond);
	assert_string_equal(compare_verdict(f), "level");
	/* app: 1 us to 101 us in every run, far beyond a bucket's width. */
	f = fig(&c, "stage_app_p50_us");
	assert_true(f->beyond && f->diff > 99 && f->diff < 101);
	assert_string_equal(compare_judgement(f), "worse");
	/* 1 throughput, 5 latency, 3 app figures; all tested. */
	assert_int_equal(c.nfig, 9);
	assert_int_equal(c.ntested, 9);
	compare_free(&c);
}

static void t_one_run_a_side(void **state)
{
	double ia[] = { 100, 102, 98, 100 }, ib[] = { 100, 101, 99, 100 };
	struct run_json a, b;
	const struct run_json *pa = &a, *pb = &b;
	struct hist s1, s2;
	struct cmp c = { 0 };
	const struct cmp_fig *f;

	run(&a, 100, 20000, 1000, &s1);
	run(&b, 100, 20000, 1000, &s2);
	a.rate = ia;
	a.nrate = 4;
	b.rate = ib;
	b.nrate = 4;
	compare_side(&c, "client", &pa, 1, &pb, 1);
	compare_finish(&c);
	assert_int_equal(c.within, 1);
	assert_int_equal(c.nbeyond, 0);
	/* The intervals' spread gives throughput its interval. */
	f = fig(&c, "throughput");
	assert_false(isnan(f->low));
	assert_true(f->low < 0 && f->high > 0);
	compare_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_groups),
		cmocka_unit_test(t_one_run_a_side),
	};

	return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
