/*
 * What a run's configuration makes of the tracer's maps and programs
 * (trace/tracer_size.c): exact sizes for known runs, the bench's
 * overrides clamped, and which sides go lean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "trace/tracer.h"
#include "trace/tracer_int.h"

static struct tracer_cfg cfg(uint32_t flows, uint32_t inflight,
			     uint32_t size, int both_ends)
{
	struct tracer_cfg c = { .rx_size = size, .tx_size = size,
				.flows = flows, .inflight = inflight,
				.both_ends = both_ends };
	return c;
}

/* One set of four entries a packet in flight, at least 2^6, at most 2^14. */
static void test_arrival_set_bits(void **state)
{
	struct tracer_cfg c;

	(void)state;
	c = cfg(1, 1, 1, 0);		/* 2 packets */
	assert_int_equal(tracer_arrival_set_bits(&c), 6);
	c = cfg(1000, 1, 1, 1);		/* 4,000 packets */
	assert_int_equal(tracer_arrival_set_bits(&c), 12);
	c = cfg(10, 1, 20000, 0);	/* 14 packets a message: 280 */
	assert_int_equal(tracer_arrival_set_bits(&c), 9);
	c = cfg(100000, 31, 1, 1);	/* more than 2^14 */
	assert_int_equal(tracer_arrival_set_bits(&c), 14);
	/* A server knows its clients' flows from their HELLOs. */
	c = cfg(0, 1, 1, 0);
	assert_int_equal(tracer_arrival_set_bits(&c), 12);
	c.peer_flows = 1;
	assert_int_equal(tracer_arrival_set_bits(&c), 6);
}

static void test_arrival_set_bits_bench(void **state)
{
	struct tracer_cfg c = cfg(1, 1, 1, 0);

	(void)state;
	setenv("NETSTAGE_BENCH_ARRIVAL_SET_BITS", "3", 1);
	assert_int_equal(tracer_arrival_set_bits(&c), 6);
	setenv("NETSTAGE_BENCH_ARRIVAL_SET_BITS", "20", 1);
	assert_int_equal(tracer_arrival_set_bits(&c), 14);
	setenv("NETSTAGE_BENCH_ARRIVAL_SET_BITS", "10", 1);
	assert_int_equal(tracer_arrival_set_bits(&c), 10);
	unsetenv("NETSTAGE_BENCH_ARRIVAL_SET_BITS");
}

/* Lean records: a power of two above the messages in flight. */
static void test_lean_slots(void **state)
{
	struct tracer t = { .side = NS_CLIENT, .lean = 1 };
	struct tracer_cfg c = cfg(3, 1, 1, 0);

	(void)state;
	assert_int_equal(tracer_kslots(&t, &c), 2);
	c.inflight = 2;
	assert_int_equal(tracer_kslots(&t, &c), 4);
	c.inflight = 4;
	assert_int_equal(tracer_kslots(&t, &c), 8);
	assert_int_equal(tracer_wcap(&t, &c), 3);
	c.flows = 0;
	assert_int_equal(tracer_wcap(&t, &c), NS_FLOWS_UNKNOWN);
	c.hist_mode = 1;
	assert_int_equal(tracer_kslots(&t, &c), 0);
	t.lean = 0;
	assert_int_equal(tracer_wcap(&t, &c), 0);
}

static void test_lean_sides(void **state)
{
	struct tracer t = { .side = NS_CLIENT };
	struct tracer_cfg c = cfg(1, 1, 1, 0);

	(void)state;
	assert_true(tracer_can_be_lean(&t, &c));
	t.side = NS_SERVER;
	assert_true(tracer_can_be_lean(&t, &c));
	t.side = NS_CLIENT_UDP;
	assert_false(tracer_can_be_lean(&t, &c));
	t.side = NS_SERVER_CRR;
	assert_false(tracer_can_be_lean(&t, &c));
	t.side = NS_SERVER_OBS;
	assert_false(tracer_can_be_lean(&t, &c));
	t.side = NS_CLIENT;
	t.sched = 1;
	assert_false(tracer_can_be_lean(&t, &c));
	t.sched = 0;
	/* hist under --rate: the client reads responses it never timed. */
	c.hist_mode = c.open_loop = 1;
	assert_false(tracer_can_be_lean(&t, &c));
	c.open_loop = 0;
	assert_true(tracer_can_be_lean(&t, &c));
	setenv("NETSTAGE_BENCH_FULL_HOOKS", "1", 1);
	assert_false(tracer_can_be_lean(&t, &c));
	unsetenv("NETSTAGE_BENCH_FULL_HOOKS");
}

/* Messages in flight each way; observe's server, and past NS_SLOTS, all. */
static void test_batch_and_rings(void **state)
{
	struct tracer t = { .side = NS_CLIENT };
	struct tracer_cfg c = cfg(1, 8, 1, 0);

	(void)state;
	assert_int_equal(tracer_batch_of(&t, &c), 8);
	c.inflight = NS_SLOTS + 1;
	assert_int_equal(tracer_batch_of(&t, &c), NS_SLOTS);
	assert_int_equal(tracer_ring_bytes(&t), NS_RING_BYTES);
	t.side = NS_SERVER_OBS;
	c.inflight = 1;
	assert_int_equal(tracer_batch_of(&t, &c), NS_SLOTS);
	assert_int_equal(tracer_ring_bytes(&t), NS_OBS_RING_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arrival_set_bits),
		cmocka_unit_test(test_arrival_set_bits_bench),
		cmocka_unit_test(test_lean_slots),
		cmocka_unit_test(test_lean_sides),
		cmocka_unit_test(test_batch_and_rings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
