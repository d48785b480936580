/* Histogram: percentiles within the promised error of exact ones. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats/hist.h"

#define N 200000

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: deterministic, so a failure can be replayed. */
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static double unit(void)
{
	return (next() >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted data: the definition hist uses. */
static uint64_t exact(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * n);

	if (p <= 0)
		return sorted[0];
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void check_against_exact(uint64_t *v, size_t n)
{
	static const double ps[] = { 0, 1, 10, 25, 50, 75, 90, 99, 99.9,
				     99.99, 100 };
	struct hist *h = malloc(sizeof(*h));
	size_t i;

	hist_reset(h);
	for (i = 0; i < n; i++)
		hist_add(h, v[i]);
	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(h->count, n);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[n - 1]);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double want = exact(v, n, ps[i]);
		double got = hist_percentile(h, ps[i]);

		if (fabs(got - want) > 0.01 * want)
			fail_msg("p%g: got %.1f, exact %.1f", ps[i], got, want);
	}
	free(h);
}

static void t_log_uniform_1us_to_100s(void **state)
{
	uint64_t *v = malloc(N * sizeof(*v));
	size_t i;

	/* Spread evenly over every octave of the promised range. */
	for (i = 0; i < N; i++)
		v[i] = (uint64_t)(1e3 * pow(1e8, unit()));
	check_against_exact(v, N);
	free(v);
}

static void t_tight_cluster_with_a_tail(void **state)
{
	uint64_t *v = malloc(N * sizeof(*v));
	size_t i;

	/* Like loopback rr: ~10 us, one in a thousand at ~2 ms. */
	for (i = 0; i < N; i++)
		v[i] = next() % 1000 ? 9000 + next() % 3000
				     : 1500000 + next() % 1000000;
	check_against_exact(v, N);
	free(v);
}

static void t_small_values_are_exact(void **state)
{
	struct hist h;
	uint64_t v;

	hist_reset(&h);
	for (v = 1; v <= 100; v++)
		hist_add(&h, v);
	assert_true(hist_percentile(&h, 50) == 50.0);
	assert_true(hist_percentile(&h, 99) == 99.0);
	assert_true(hist_mean(&h) == 50.5);
	/* Population stddev of 1..100. */
	assert_true(fabs(hist_stddev(&h) - 28.866070) < 1e-5);
}

static void t_every_value_lies_in_its_bucket(void **state)
{
	uint64_t v, lo, hi;
	unsigned int i, prev = 0;
	int bit;

	for (bit = 0; bit < 38; bit++) {
		for (i = 0; i < 64; i++) {
			v = (1ULL << bit) + (next() % (1ULL << bit) + 1) - 1;
			hist_bucket_range(hist_index(v), &lo, &hi);
			if (v < lo || v > hi)
				fail_msg("%llu outside [%llu, %llu]",
					 (unsigned long long)v,
					 (unsigned long long)lo,
					 (unsigned long long)hi);
			/* A bucket is at most 1/HIST_SUB of its value wide. */
			assert_true((double)(hi - lo) <= (double)lo / HIST_SUB);
		}
	}
	/* Indexes grow with values and stay inside the array. */
	for (v = 0; v < (1ULL << 20); v += 37) {
		i = hist_index(v);
		assert_true(i >= prev);
		prev = i;
	}
	assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
}

/* User space's top bit is BPF's: one bucket means the same on both. */
static void t_msb_is_the_bpf_search(void **state)
{
	unsigned long long v;
	int bit, i, d;

	assert_int_equal(hist_msb(0), hist_msb_search(0));
	for (bit = 0; bit < 64; bit++) {
		for (d = -1; d <= 1; d++) {
			v = (1ULL << bit) + (unsigned long long)d;
			assert_int_equal(hist_msb(v), hist_msb_search(v));
		}
		assert_int_equal(hist_msb(1ULL << bit), bit);
	}
	for (i = 0; i < 100000; i++) {
		v = next() >> (next() % 64);
		assert_int_equal(hist_msb(v), hist_msb_search(v));
	}
}

static void t_merge_equals_one_histogram(void **state)
{
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct hist *all = malloc(sizeof(*all));
	int i;

	hist_reset(a);
	hist_reset(b);
	hist_reset(all);
	for (i = 0; i < 10000; i++) {
		uint64_t v = 1000 + next() % 1000000;

		hist_add(i % 3 ? a : b, v);
		hist_add(all, v);
	}
	hist_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_int_equal(a->min, all->min);
	assert_int_equal(a->max, all->max);
	assert_memory_equal(a->bucket, all->bucket, sizeof(a->bucket));
	assert_true(hist_percentile(a, 99) == hist_percentile(all, 99));
	free(a);
	free(b);
	free(all);
}

/* n values at once are n values added one by one, and 0 is none. */
static void t_add_n_equals_n_adds(void **state)
{
	static struct hist a, b;

	hist_reset(&a);
	hist_reset(&b);
	hist_add(&a, 700);
	hist_add(&b, 700);
	for (int i = 0; i < 3; i++)
		hist_add(&a, 123456);
	hist_add_n(&b, 123456, 3);
	hist_add_n(&b, 99, 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void t_empty_histogram_reports_zero(void **state)
{
	struct hist h;

	hist_reset(&h);
	assert_true(hist_percentile(&h, 50) == 0.0);
	assert_true(hist_mean(&h) == 0.0);
	assert_true(hist_stddev(&h) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_log_uniform_1us_to_100s),
		cmocka_unit_test(t_add_n_equals_n_adds),
		cmocka_unit_test(t_tight_cluster_with_a_tail),
		cmocka_unit_test(t_small_values_are_exact),
		cmocka_unit_test(t_every_value_lies_in_its_bucket),
		cmocka_unit_test(t_msb_is_the_bpf_search),
		cmocka_unit_test(t_merge_equals_one_histogram),
		cmocka_unit_test(t_empty_histogram_reports_zero),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
