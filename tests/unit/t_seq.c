/*
 * The sequence numbers rr messages carry (src/workload/seq.h): the
 * bytes a request holds, and a udp_rr server following each client's
 * numbers from the low bytes of them (its records pair with the
 * client's by number, whatever the two clocks say).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "workload/seq.h"

static void t_width_and_bytes(void **state)
{
	uint8_t buf[8];
	uint64_t s;

	assert_int_equal(seq_width(1, 100), 1);
	assert_int_equal(seq_width(64, 3), 3);
	assert_int_equal(seq_width(100, 200), 8);
	seq_put(buf, 2, 0x1234567);
	seq_take(&s, 2, buf, 0, 2);
	assert_int_equal(s, 0x4567);
	assert_int_equal(seq_trunc(0x1234567, 2), 0x4567);
	/* In pieces: the second byte read on its own. */
	seq_take(&s, 2, buf, 0, 1);
	seq_take(&s, 2, buf + 1, 1, 1);
	assert_int_equal(s, 0x4567);
}

static void t_unwrap_follows_one_sender(void **state)
{
	uint64_t last = 0, s;

	/* One byte: 1, 2, ... 600 come back whole from their low byte. */
	for (s = 1; s <= 600; s++) {
		last = seq_unwrap(last, s & 0xff, 1);
		assert_int_equal(last, s);
	}
	/* 100 lost in a row: still under half of 256. */
	assert_int_equal(seq_unwrap(600, 701 & 0xff, 1), 701);
	/* 200 lost: taken for one 56 before (the limit, said in seq.h). */
	assert_int_equal(seq_unwrap(600, 801 & 0xff, 1), 545);
	/* A late one, from before the wrap. */
	assert_int_equal(seq_unwrap(513, 254, 1), 510);
	/* Near 0 nothing goes below it. */
	assert_int_equal(seq_unwrap(0, 200, 1), 200);
	assert_int_equal(seq_unwrap(2, 255, 1), 255);
	/* Two bytes, and eight (whole). */
	assert_int_equal(seq_unwrap(70000, 70005 & 0xffff, 2), 70005);
	assert_int_equal(seq_unwrap(7, 1ULL << 40, 8), 1ULL << 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_width_and_bytes),
		cmocka_unit_test(t_unwrap_follows_one_sender),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
