/*
 * The bottom-k store of trace records (src/trace/bottomk.h) against a
 * brute force: whatever the order and the ties, what it finishes with
 * is exactly the k records of lowest priority, equals by sequence
 * number, and it never holds more slots than it reserved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/bottomk.h"
#include "trace/collect.h"
#include "trace/keep.h"

/* Uniform priorities: the records' own hash of a sequence number. */
static uint64_t mix(uint64_t x)
{
	return trace_rec_priority(NS_CLIENT, 0, x, 0, -1);
}

struct offer { uint64_t prio, seq; };

static int by_prio_seq(const void *pa, const void *pb)
{
	const struct offer *a = pa, *b = pb;

	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_seq(const void *pa, const void *pb)
{
	const struct trace_rec *a = pa, *b = pb;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int offer_by_seq(const void *pa, const void *pb)
{
	const struct offer *a = pa, *b = pb;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * Offer n records of priority prio(i), sequence number i, to a store
 * of k (committed ahead if reserved); check the store finishes with the
 * brute force's k lowest.
 */
static void check_in(long n, long k, uint64_t (*prio)(long), int reserved)
{
	struct offer *all = calloc(n, sizeof(*all));
	struct bottomk s;
	struct trace_rec *r, *kept;
	long i, got, want = n < k ? n : k;

	memset(&s, 0, sizeof(s));
	if (reserved)
		bottomk_reserve(&s, k);
	for (i = 0; i < n; i++) {
		all[i] = (struct offer){ prio(i), i };
		r = bottomk_wants(&s, all[i].prio)
			    ? bottomk_take(&s, k, all[i].prio) : NULL;
		if (r) {
			assert_int_equal(r->prio, all[i].prio);
			r->seq = i;
			r->span = ~all[i].prio;
		}
		assert_true(s.used <= s.cap);
	}
	kept = bottomk_finish(&s, &got);
	assert_int_equal(got, want);
	assert_null(s.rec);
	qsort(all, n, sizeof(*all), by_prio_seq);
	qsort(all, want, sizeof(*all), offer_by_seq);
	if (got)
		qsort(kept, got, sizeof(*kept), by_seq);
	for (i = 0; i < want; i++) {
		assert_int_equal(kept[i].seq, all[i].seq);
		assert_int_equal(kept[i].prio, all[i].prio);
		assert_int_equal(kept[i].span, ~all[i].prio);
	}
	free(kept);
	free(all);
}

static void check(long n, long k, uint64_t (*prio)(long))
{
	check_in(n, k, prio, 0);
}

static uint64_t uniform(long i)
{
	return mix(i);
}

/* The worst order: each one lower than all before. */
static uint64_t falling(long i)
{
	return UINT64_MAX - (uint64_t)i * 1000003;
}

static uint64_t same(long i)
{
	(void)i;
	return 5;
}

/* 37 values, each offered again and again: ties past any room. */
static uint64_t few(long i)
{
	return mix(i % 37);
}

/*
 * 200 equal, then 50 lower in the same bucket, past the store's room:
 * each lower one displaces the latest of the equals.
 */
static uint64_t then_lower(long i)
{
	return i < 200 ? 1000 : 999;
}

/* Small priorities: the buckets below 16 hold one value each. */
static uint64_t tiny(long i)
{
	return mix(i) % 40;
}

static void t_keeps_exactly_the_k_lowest(void **state)
{
	(void)state;
	check(200000, 100, uniform);	/* the threshold falls 2000-fold */
	check(20000, 1000, uniform);
	check(50, 1000, uniform);	/* fewer than k: all */
	check(20000, 1000, falling);
	check(1000, 100, same);		/* the first 100 */
	check(250, 100, then_lower);	/* the 50 lower, the first 50 */
	check(5000, 100, few);
	check(5000, 1000, few);
	check(3000, 7, tiny);
	check(100, 1, uniform);
}

/* The process's resident set, from /proc/self/statm. */
static long resident_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, resident = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &resident), 2);
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

/*
 * A store committed before the run has its room and nothing in it, and
 * keeps what a store reserved at its first take keeps.
 */
static void t_a_store_reserved_ahead_keeps_the_same(void **state)
{
	struct bottomk s;
	long before;

	(void)state;
	memset(&s, 0, sizeof(s));
	bottomk_reserve(&s, 0);
	assert_null(s.rec);
	bottomk_reserve(&s, 1000);
	assert_non_null(s.rec);
	assert_int_equal(s.cap, 1000 + 1000 / 8 + 64);
	assert_int_equal(s.used, 0);
	assert_int_equal(s.live, 0);
	s.rec[s.cap - 1].prio = 1;	/* all of it is there to write */
	bottomk_free(&s);
	/* A limit far past the default commits what the default does. */
	before = resident_bytes();
	bottomk_reserve(&s, 20000000);	/* a 5.2 GB store */
	assert_true(resident_bytes() - before < (64L << 20));
	assert_int_equal(s.cap, 20000000 + 20000000 / 8 + 64);
	s.rec[s.cap - 1].prio = 1;
	bottomk_free(&s);
	check_in(200000, 100, uniform, 1);
	check_in(20000, 1000, falling, 1);
	check_in(5000, 100, few, 1);
	check_in(50, 1000, uniform, 1);
}

static void t_k_of_zero_keeps_none(void **state)
{
	struct bottomk s;
	long n = -1;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_null(bottomk_take(&s, 0, 1));
	assert_null(bottomk_finish(&s, &n));
	assert_int_equal(n, 0);
}

/*
 * Past k, a record above what is kept is not wanted, and the store
 * holds about a bucket more than k: a sixteenth, uniform priorities.
 */
static void t_wants_only_what_may_be_kept(void **state)
{
	struct bottomk s;
	struct trace_rec *r;
	long i, n;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < 100000; i++)
		if ((r = bottomk_take(&s, 1000, mix(i))))
			r->seq = i;
	assert_false(bottomk_wants(&s, UINT64_MAX));
	assert_true(bottomk_wants(&s, 0));
	assert_true(s.live >= 1000);
	assert_true(s.live <= 1000 + 1000 / 8);
	free(bottomk_finish(&s, &n));
	assert_int_equal(n, 1000);
}

static void t_buckets_are_log_linear(void **state)
{
	uint64_t a, b;
	int i;

	(void)state;
	assert_int_equal(bottomk_bucket(0), 0);
	assert_int_equal(bottomk_bucket(15), 15);
	assert_int_equal(bottomk_bucket(16), 16);
	assert_int_equal(bottomk_bucket(31), 31);
	assert_int_equal(bottomk_bucket(32), 32);
	assert_int_equal(bottomk_bucket(33), 32);
	assert_int_equal(bottomk_bucket(34), 33);
	assert_int_equal(bottomk_bucket(1ULL << 63), BK_BUCKETS - 16);
	assert_int_equal(bottomk_bucket(UINT64_MAX), BK_BUCKETS - 1);
	for (i = 0; i < 100000; i++) {
		a = mix(2 * i) >> (i % 64);
		b = mix(2 * i + 1) >> (i % 61);
		if (a > b)
			assert_true(bottomk_bucket(a) >= bottomk_bucket(b));
		else
			assert_true(bottomk_bucket(a) <= bottomk_bucket(b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_buckets_are_log_linear),
		cmocka_unit_test(t_keeps_exactly_the_k_lowest),
		cmocka_unit_test(t_a_store_reserved_ahead_keeps_the_same),
		cmocka_unit_test(t_k_of_zero_keeps_none),
		cmocka_unit_test(t_wants_only_what_may_be_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
