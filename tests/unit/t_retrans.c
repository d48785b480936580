/*
 * Retransmissions put into the records they belong to
 * (src/trace/retrans.h): by flow and number where those name a
 * transaction, by port, number and time where connections share them;
 * each record stamped with its first retransmission, the other side's
 * and other connections' left alone; transactions counted once however
 * many segments were resent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace/collect.h"
#include "trace/retrans.h"

static struct ns_retrans at(uint64_t t, uint64_t sk, uint32_t flow,
			    uint32_t first, uint16_t port, enum ns_side side,
			    uint8_t n)
{
	return (struct ns_retrans){ .t = t, .sk = sk, .flow_id = flow,
				    .first = first, .port = port,
				    .side = side, .n = n };
}

/* A record of flow/seq (port) beginning at `start` on side's chain. */
static struct trace_rec rec(enum ns_side side, uint32_t flow, uint64_t seq,
			    uint16_t port, uint64_t start)
{
	struct trace_rec r;

	memset(&r, 0, sizeof(r));
	r.flow_id = flow;
	r.seq = seq;
	r.port = port;
	r.b[stage_defs(side)[0].from] = start;
	return r;
}

static void t_tcp_rr_by_flow_and_number(void **state)
{
	struct trace_rec r[4] = {
		rec(NS_CLIENT, 1, 7, 0, 100), rec(NS_CLIENT, 1, 8, 0, 200),
		rec(NS_CLIENT, 2, 7, 0, 100), rec(NS_CLIENT, 1, 9, 0, 300),
	};
	struct ns_retrans log[] = {
		/* 7 resent twice: the first stamps */
		at(150, 10, 1, 7, 0, NS_CLIENT, 1),
		at(190, 10, 1, 7, 0, NS_CLIENT, 1),
		/* a segment of 8 and 9 both */
		at(350, 10, 1, 8, 0, NS_CLIENT, 2),
		/* the server's, and a flow with no record kept */
		at(120, 20, 2, 7, 0, NS_SERVER, 1),
		at(130, 30, 3, 7, 0, NS_CLIENT, 1),
	};

	(void)state;
	assert_int_equal(retrans_mark(r, 4, NS_CLIENT, log, 5), 3);
	assert_int_equal(r[0].b[NS_B_RETRANS], 150);
	assert_int_equal(r[1].b[NS_B_RETRANS], 350);
	assert_int_equal(r[2].b[NS_B_RETRANS], 0);
	assert_int_equal(r[3].b[NS_B_RETRANS], 350);
	/* 7, 8, 9 of socket 10 and 7 of socket 30 */
	assert_int_equal(retrans_transactions(log, 5, NS_CLIENT), 4);
	assert_int_equal(retrans_transactions(log, 5, NS_SERVER), 1);
	assert_int_equal(retrans_transactions(log, 5, NS_CLIENT_UDP), 0);
	/* --trace-sched's records are the same side's */
	memset(&r[0].b[NS_B_RETRANS], 0, sizeof(uint64_t));
	assert_int_equal(retrans_mark(r, 1, NS_CLIENT | NS_SCHED_BIT, log, 5),
			 1);
	assert_int_equal(r[0].b[NS_B_RETRANS], 150);
}

/*
 * tcp_crr: every connection's one transaction is message 0 and ports
 * come round again; a resent SYN or request belongs to the latest
 * connection of its port to begin before it.
 */
static void t_tcp_crr_by_port_and_time(void **state)
{
	struct trace_rec r[3] = {
		rec(NS_CLIENT_CRR, 0, 0, 40000, 1000),
		rec(NS_CLIENT_CRR, 0, 0, 40000, 5000),
		rec(NS_CLIENT_CRR, 0, 0, 40001, 1000),
	};
	struct ns_retrans log[] = {
		at(6000, 1, NS_NO_FLOW, 0, 40000, NS_CLIENT_CRR, 1),
		/* before any connection of the port in the records */
		at(500, 2, NS_NO_FLOW, 0, 40001, NS_CLIENT_CRR, 1),
	};

	(void)state;
	assert_int_equal(retrans_mark(r, 3, NS_CLIENT_CRR, log, 2), 1);
	assert_int_equal(r[0].b[NS_B_RETRANS], 0);
	assert_int_equal(r[1].b[NS_B_RETRANS], 6000);
	assert_int_equal(r[2].b[NS_B_RETRANS], 0);
	assert_int_equal(retrans_transactions(log, 2, NS_CLIENT_CRR), 2);
}

/* A retransmission at the very time a record begins is that record's. */
static void t_a_tie_goes_to_the_record(void **state)
{
	struct trace_rec r = rec(NS_SERVER_OBS, 0, 3, 5000, 700);
	struct ns_retrans e = at(700, 1, 0, 3, 5000, NS_SERVER_OBS, 1);

	(void)state;
	assert_int_equal(retrans_mark(&r, 1, NS_SERVER_OBS, &e, 1), 1);
	assert_int_equal(r.b[NS_B_RETRANS], 700);
}

static void t_an_empty_log_marks_nothing(void **state)
{
	struct trace_rec r = rec(NS_CLIENT, 1, 1, 0, 10);

	(void)state;
	assert_int_equal(retrans_mark(&r, 1, NS_CLIENT, NULL, 0), 0);
	assert_int_equal(retrans_transactions(NULL, 0, NS_CLIENT), 0);
	assert_int_equal(r.b[NS_B_RETRANS], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tcp_rr_by_flow_and_number),
		cmocka_unit_test(t_tcp_crr_by_port_and_time),
		cmocka_unit_test(t_a_tie_goes_to_the_record),
		cmocka_unit_test(t_an_empty_log_marks_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
