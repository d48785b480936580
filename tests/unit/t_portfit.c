/*
 * tcp_crr's ends on two clocks (trace/portfit.h): records made here, a
 * connection every 100 us on ports that come round every 300, the
 * server's clock 5 ms ahead and 40 ppm fast. The fit finds both from
 * the pairs of a port that agree, though every port pairs with every
 * one of its uses on the other end, in a long run as in a short one;
 * too few pairs give no fit.
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
#include "trace/portfit.h"

#define N 3000
#define T0 1000000000000ULL
#define STEP 100000ULL

static void make_ports(struct join_table *c, struct join_table *s, long n,
		       int64_t off, double ppm, int ports)
{
	long i;
	int b;

	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	c->r = xcalloc(n, sizeof(*c->r));
	s->r = xcalloc(n, sizeof(*s->r));
	c->n = s->n = n;
	c->side = NS_CLIENT_CRR;
	s->side = NS_SERVER_CRR;
	for (i = 0; i < n; i++) {
		uint64_t t = T0 + i * STEP;
		/* Each leg 1-1.5 us: every 10th the fastest. */
		uint64_t q = i % 10 ? (uint64_t)(i * 37 % 500) : 0;

		c->r[i].port = s->r[i].port = 32768 + i % ports;
		c->r[i].seq = i;
		s->r[i].seq = n - i;	/* each end numbers its own */
		c->r[i].b[NS_B_DEV_XMIT] = t;
		s->r[i].b[NS_B_NETIF_RX] = t + 1000 + q;
		s->r[i].b[NS_B_DEV_XMIT] = t + 20000;
		c->r[i].b[NS_B_NETIF_RX] = t + 21000 + q;
		for (b = 0; b < NS_B_COUNT; b++)
			if (s->r[i].b[b])
				s->r[i].b[b] += (uint64_t)(off + llround(
					(double)s->r[i].b[b] * ppm * 1e-6));
	}
}

static void make(struct join_table *c, struct join_table *s, long n,
		 int64_t off, double ppm)
{
	make_ports(c, s, n, off, ppm, 300);
}

static void t_fits_from_the_pairs_that_agree(void **state)
{
	struct join_table c, s;
	struct clock_fit f;

	make(&c, &s, N, 5000000, 40);
	assert_int_equal(portfit(&c, &s, &f), 0);
	/* 5 ms, and 40 ppm of the clock's 1000 s since boot: 40 ms. */
	assert_true(fabs(clock_offset_ns(&f) - 45000000.0) < 10);
	assert_true(fabs(f.drift_ppm - 40) < 0.01);
	assert_int_equal(f.negative, 0);
	/* Every connection's pair, and none of a port's other uses. */
	assert_int_equal(f.exchanges, N);
	/* The slowest kept apart are not of the sample. */
	c.r[0].slowest = 1;
	assert_int_equal(portfit(&c, &s, &f), 0);
	assert_int_equal(f.exchanges, N - 1);
	free(c.r);
	free(s.r);
}

/*
 * A long run: 50,000 connections, each port used 17 times. The
 * difference is found from a spread of 20,000 records; every
 * connection's pair is fitted.
 */
static void t_a_long_run(void **state)
{
	struct join_table c, s;
	struct clock_fit f;

	make_ports(&c, &s, 50000, -3000000, -25, 3000);
	assert_int_equal(portfit(&c, &s, &f), 0);
	assert_true(fabs(clock_offset_ns(&f) + 3000000.0 + 25000000.0) < 10);
	assert_true(fabs(f.drift_ppm + 25) < 0.01);
	assert_int_equal(f.exchanges, 50000);
	free(c.r);
	free(s.r);
}

static void t_too_few_pairs_give_no_fit(void **state)
{
	struct join_table c, s;
	struct clock_fit f;

	make(&c, &s, CLOCK_MIN_PER_WINDOW - 1, 5000000, 40);
	assert_int_equal(portfit(&c, &s, &f), -1);
	free(c.r);
	free(s.r);
	make(&c, &s, 0, 0, 0);
	assert_int_equal(portfit(&c, &s, &f), -1);
	free(c.r);
	free(s.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_fits_from_the_pairs_that_agree),
		cmocka_unit_test(t_a_long_run),
		cmocka_unit_test(t_too_few_pairs_give_no_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
