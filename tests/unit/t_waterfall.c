/*
 * The waterfall (trace/waterfall.h) on records made here, where every
 * stretch is known: the rows add up to the latency, transaction by
 * transaction; on one clock the fit is a check near 0; with the
 * server's clock 5 ms ahead and 40 ppm fast, taken for two clocks, the
 * server's stamps come back onto the client's and every row is as on
 * one clock; AUTO finds the two clocks and leaves one alone; and an
 * asymmetry of the wire legs' fastest moves the split by half of it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/common.h"
#include "core/kv.h"
#include "trace/waterfall.h"

#define N 400
#define T0 1000000000000ULL
#define STEP 100000ULL		/* a transaction every 100 us */

/* ns from the client's DEV_XMIT: the request's leg, then the response's */
static uint64_t leg(long i, int back, uint64_t extra_fwd)
{
	/* Queueing adds 0-499 ns; every 10th exchange none (the fastest). */
	uint64_t q = i % 10 ? (uint64_t)(i * 37 % 500) : 0;

	return 1000 + q + (back ? 0 : extra_fwd);
}

/* N transactions of a client and its server, the server's on its clock. */
static void make(struct waterfall *w, int64_t off, double ppm,
		 uint64_t extra_fwd)
{
	struct join_rec *c = xcalloc(N, sizeof(*c)), *s = xcalloc(N, sizeof(*s));
	long i;
	int b;

	memset(w, 0, sizeof(*w));
	w->n = 2;
	snprintf(w->t[0].name, sizeof(w->t[0].name), "client");
	snprintf(w->t[1].name, sizeof(w->t[1].name), "server");
	w->t[0].side = NS_CLIENT;
	w->t[1].side = NS_SERVER;
	for (i = 0; i < N; i++) {
		uint64_t t = T0 + i * STEP, srx;

		c[i].port = s[i].port = 40000;
		c[i].seq = s[i].seq = i;
		c[i].b[NS_B_APP_SEND] = t;
		c[i].b[NS_B_TCP_SEND] = t + 1000;
		c[i].b[NS_B_DEV_XMIT] = t + 2000;
		srx = t + 2000 + leg(i, 0, extra_fwd);
		s[i].b[NS_B_NETIF_RX] = srx;
		s[i].b[NS_B_TCP_RX] = srx + 500;
		s[i].b[NS_B_DATA_READY] = srx + 1000;
		s[i].b[NS_B_EPOLL_RET] = srx + 6000 + i % 7 * 100;
		s[i].b[NS_B_RECV_RET] = s[i].b[NS_B_EPOLL_RET] + 800;
		s[i].b[NS_B_APP_SEND] = s[i].b[NS_B_RECV_RET] + 100;
		s[i].b[NS_B_TCP_SEND] = s[i].b[NS_B_APP_SEND] + 900;
		s[i].b[NS_B_DEV_XMIT] = s[i].b[NS_B_TCP_SEND] + 1100;
		s[i].b[NS_B_APP_DONE] = s[i].b[NS_B_DEV_XMIT] + 3000;
		c[i].b[NS_B_NETIF_RX] = s[i].b[NS_B_DEV_XMIT] + leg(i + 5, 1, 0);
		c[i].b[NS_B_TCP_RX] = c[i].b[NS_B_NETIF_RX] + 600;
		c[i].b[NS_B_DATA_READY] = c[i].b[NS_B_NETIF_RX] + 1200;
		c[i].b[NS_B_EPOLL_RET] = c[i].b[NS_B_DATA_READY] + 7000;
		c[i].b[NS_B_RECV_RET] = c[i].b[NS_B_EPOLL_RET] + 900;
		c[i].b[NS_B_APP_DONE] = c[i].b[NS_B_RECV_RET] + 200;
		/* The server's clock: off ahead, gaining ppm since boot. */
		for (b = 0; b < NS_B_COUNT; b++)
			if (s[i].b[b])
				s[i].b[b] += (uint64_t)(off + llround(
					(double)s[i].b[b] * ppm * 1e-6));
	}
	w->t[0].r = c;
	w->t[0].n = N;
	w->t[1].r = s;
	w->t[1].n = N;
}

static double key(const struct kv_list *kv, const char *k)
{
	const char *v = kv_get(kv, k);

	assert_non_null(v);
	return strtod(v, NULL);
}

/* The top rows' means add up to the latency's, as each transaction's do. */
static void assert_adds_up(const struct waterfall *w)
{
	double sum = 0;
	int k;

	for (k = 0; k < w->plan.nrows; k++)
		if (!w->plan.row[k].depth)
			sum += hist_mean(&w->row[k]);
	assert_true(fabs(sum - hist_mean(&w->total)) < 1e-6 * sum);
}

static const struct hist *row(const struct waterfall *w, const char *name)
{
	int k;

	for (k = 0; k < w->plan.nrows; k++)
		if (!strcmp(w->plan.row[k].name, name))
			return &w->row[k];
	fail_msg("no row %s", name);
	return NULL;
}

/* Each row's p50 in kv, us. */
static void keys_of(struct waterfall *w, struct kv_list *kv)
{
	assert_int_equal(waterfall_join(w, 1), 0);
	assert_int_equal(w->joined, N);
	assert_adds_up(w);
	waterfall_kv(w, "", kv);
}

static void t_one_clock(void **state)
{
	struct waterfall w;
	struct kv_list kv = { 0 };

	make(&w, 0, 0, 0);
	w.clocks = WATERFALL_CLOCKS_ONE;
	keys_of(&w, &kv);
	assert_int_equal(w.aligned, 0);
	assert_true(w.has_clock);
	/* Equal fastest legs: the fit is the truth to the ns. */
	assert_true(fabs(key(&kv, "clock_offset_us")) <= 0.002);
	assert_true(fabs(key(&kv, "clock_offset_us")) <=
		    key(&kv, "clock_causal_bound_us"));
	assert_int_equal(key(&kv, "clock_negative_legs"), 0);
	/* 5 us of server wake-up from 6.0-6.6 us after arrival. */
	assert_true(fabs(key(&kv, "server_wakeup_p50_us") - 5.3) < 0.31);
	kv_free(&kv);
	waterfall_free(&w);
}

/* Two clocks, the server's aligned: every row as on one clock. */
static void t_two_clocks_aligned(void **state)
{
	struct waterfall one, two;
	struct kv_list a = { 0 }, b = { 0 };
	size_t i;

	make(&one, 0, 0, 0);
	one.clocks = WATERFALL_CLOCKS_ONE;
	keys_of(&one, &a);
	make(&two, 5000000, 40, 0);
	two.clocks = WATERFALL_CLOCKS_TWO;
	keys_of(&two, &b);
	assert_int_equal(two.aligned, 1);
	/* 5 ms, and 40 ppm of the clock's 1000 s since boot: 40 ms. */
	assert_true(fabs(key(&b, "clock_offset_us") - 45000.0) < 0.01);
	assert_true(fabs(key(&b, "clock_drift_ppm") - 40) < 0.01);
	for (i = 0; i < a.n; i++) {
		const char *k = a.v[i].key;

		if (strstr(k, "_us") && !strstr(k, "clock_"))
			/* The line's 1 ns rounding: a bucket at most. */
			if (fabs(key(&a, k) - key(&b, k)) >
			    key(&a, k) / HIST_SUB + 0.001)
				fail_msg("%s: %g against %g", k, key(&a, k),
					 key(&b, k));
	}
	kv_free(&a);
	kv_free(&b);
	waterfall_free(&one);
	waterfall_free(&two);
}

/* AUTO: two clocks when one cannot explain the stamps, else one. */
static void t_auto(void **state)
{
	struct waterfall w;

	make(&w, 5000000, 40, 0);
	assert_int_equal(waterfall_join(&w, 1), 0);
	assert_int_equal(w.aligned, 1);
	assert_int_equal(w.joined, N);
	waterfall_free(&w);
	make(&w, 0, 0, 0);
	assert_int_equal(waterfall_join(&w, 1), 0);
	assert_int_equal(w.aligned, 0);
	waterfall_free(&w);
}

/*
 * The request's fastest leg 200 ns longer than the response's: taken
 * for two clocks, half of it goes into the offset (past the symmetric
 * bound, inside the causal one) and the legs come out split evenly.
 */
static void t_asymmetry_is_halved(void **state)
{
	struct waterfall w;
	struct kv_list kv = { 0 };
	double off;

	make(&w, 0, 0, 200);
	w.clocks = WATERFALL_CLOCKS_TWO;
	keys_of(&w, &kv);
	off = key(&kv, "clock_offset_us");
	assert_true(fabs(off - 0.1) <= 0.002);
	assert_true(off > key(&kv, "clock_bound_us"));
	assert_true(off <= key(&kv, "clock_causal_bound_us"));
	/* The legs' fastest, 1.2 and 1.0 us on one clock, both 1.1 now. */
	assert_true(llabs((long long)row(&w, "wire to server")->min - 1100) <=
		    2);
	assert_true(llabs((long long)row(&w, "wire to client")->min - 1100) <=
		    2);
	kv_free(&kv);
	waterfall_free(&w);
}

/*
 * A clock both hosts keep (--clock realtime or tai): the server's
 * stamps moved by the caller's shift, then one clock; records that
 * pair only by time refuse two clocks: tcp_crr's whose ports tell no
 * connection apart (all on one here; t_portfit has them apart).
 */
static void t_shared_clock_and_time_pairs(void **state)
{
	struct waterfall w;
	struct kv_list kv = { 0 };

	make(&w, 5000000, 0, 0);
	w.clocks = WATERFALL_CLOCKS_ONE;
	w.server_shift_ns = -5000000;
	keys_of(&w, &kv);
	assert_int_equal(w.aligned, 0);
	assert_true(fabs(key(&kv, "clock_offset_us")) <= 0.002);
	kv_free(&kv);
	waterfall_free(&w);
	make(&w, 0, 0, 0);
	w.t[0].side = NS_CLIENT_CRR;
	w.t[1].side = NS_SERVER_CRR;
	w.clocks = WATERFALL_CLOCKS_TWO;
	assert_int_equal(waterfall_join(&w, 1), WATERFALL_NEEDS_ONE_CLOCK);
	waterfall_free(&w);
}

/*
 * udp_rr: a server's record carries the client's port and number, so
 * the two ends pair by them on two clocks as tcp_rr's do, and the
 * fit finds the server's 5 ms and 40 ppm.
 */
static void t_udp_pairs_by_number_on_two_clocks(void **state)
{
	struct waterfall w;
	struct kv_list kv = { 0 };

	make(&w, 5000000, 40, 0);
	w.t[0].side = NS_CLIENT_UDP;
	w.t[1].side = NS_SERVER_UDP;
	w.clocks = WATERFALL_CLOCKS_TWO;
	keys_of(&w, &kv);
	assert_int_equal(w.aligned, 1);
	assert_true(fabs(key(&kv, "clock_offset_us") - 45000.0) < 0.01);
	assert_true(fabs(key(&kv, "clock_drift_ppm") - 40) < 0.01);
	assert_int_equal(key(&kv, "clock_negative_legs"), 0);
	kv_free(&kv);
	waterfall_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_one_clock),
		cmocka_unit_test(t_two_clocks_aligned),
		cmocka_unit_test(t_auto),
		cmocka_unit_test(t_asymmetry_is_halved),
		cmocka_unit_test(t_shared_clock_and_time_pairs),
		cmocka_unit_test(t_udp_pairs_by_number_on_two_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
