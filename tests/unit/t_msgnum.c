/*
 * The attribution arithmetic of bpf/msgnum.h on synthetic packet
 * streams: message starts in segments, through coalescing, holes,
 * retransmission and sequence wrap-around, and which transmitted packet
 * carries which message's first byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "msgnum.h"

static void t_starts_in_a_stretch_of_stream(void **state)
{
	unsigned long long first;

	/* 100-byte messages: bytes [0, 100) hold message 0's start only. */
	assert_int_equal(ns_starts(0, 100, 100, NS_SLOTS, &first), 1);
	assert_int_equal(first, 0);
	/* [1, 100): message 0 began before, message 1 starts at 100. */
	assert_int_equal(ns_starts(1, 99, 100, NS_SLOTS, &first), 0);
	assert_int_equal(ns_starts(1, 100, 100, NS_SLOTS, &first), 1);
	assert_int_equal(first, 1);
	/* A coalesced stretch [150, 480): 200, 300 and 400. */
	assert_int_equal(ns_starts(150, 330, 100, NS_SLOTS, &first), 3);
	assert_int_equal(first, 2);
	/* Pure ACK: no bytes, no start. */
	assert_int_equal(ns_starts(200, 0, 100, NS_SLOTS, &first), 0);
	/* 1-byte messages in 64 KB: capped at what can be in flight. */
	assert_int_equal(ns_starts(7, 65536, 1, NS_SLOTS, &first), NS_SLOTS);
	assert_int_equal(first, 7);
	/* One in flight (tcp_rr): the first, and no more. */
	assert_int_equal(ns_starts(150, 330, 100, 1, &first), 1);
	assert_int_equal(first, 2);
	/* Past 4 GB of stream the offsets are 64-bit. */
	assert_int_equal(ns_starts(5ULL << 32, 100, 100, NS_SLOTS, &first), 1);
	assert_int_equal(first, (5ULL << 32) / 100 + ((5ULL << 32) % 100 != 0));
}

static void t_sequence_numbers_wrap(void **state)
{
	const unsigned int isn = 0xffffff00u;
	unsigned int tx_seq[NS_SLOTS], first, end;
	int i;

	/* 0x200-byte messages; message 1 starts at 0x100, past the wrap. */
	for (i = 0; i < 3; i++)
		tx_seq[i] = isn + i * 0x200;
	end = ns_xmit(tx_seq, 0, 3, 0xfffffff0u, 0x400, &first);
	assert_int_equal(first, 1);	/* 0 went before 0xfffffff0 */
	assert_int_equal(end, 3);
}

static void t_which_transmitted_packet_carries_a_start(void **state)
{
	unsigned int tx_seq[NS_SLOTS], first, end;
	const unsigned int s = 5000;
	int i;

	for (i = 0; i < 4; i++)
		tx_seq[i] = s + i * 100;
	/* Messages 0..3 entered TCP; the first packet holds 0 and 1. */
	end = ns_xmit(tx_seq, 0, 4, s, 200, &first);
	assert_int_equal(first, 0);
	assert_int_equal(end, 2);
	/* An ACK (no payload) at the next start carries nothing. */
	end = ns_xmit(tx_seq, 2, 4, s + 200, 0, &first);
	assert_int_equal(first, 2);
	assert_int_equal(end, 2);
	/* A retransmission of 0's bytes neither. */
	end = ns_xmit(tx_seq, 2, 4, s, 200, &first);
	assert_int_equal(end, 2);
	/* A packet from the middle of 2 on: 2's start went unseen, 3 is in. */
	end = ns_xmit(tx_seq, 2, 4, s + 250, 100, &first);
	assert_int_equal(first, 3);
	assert_int_equal(end, 4);
	/* Nothing waits: nothing to carry. */
	end = ns_xmit(tx_seq, 4, 4, s + 400, 100, &first);
	assert_int_equal(first, 4);
	assert_int_equal(end, 4);
}

/*
 * TCP receive, at the wake-up after each segment: which messages
 * became readable, where each one's first byte is, and whether the
 * queue's tail segment carries it.
 */
static void t_messages_made_readable(void **state)
{
	const unsigned int isn = 0xfffffff0u;	/* rcv_nxt wraps below */
	unsigned int first = 99;

	/* 100-byte messages, 250 bytes readable: 0, 1 and 2 have begun. */
	assert_int_equal(ns_readable(250, 100, 0, NS_SLOTS, &first), 3);
	assert_int_equal(first, 0);
	/* Seen up to 2: nothing new until byte 300 arrives. */
	assert_int_equal(ns_readable(300, 100, 3, NS_SLOTS, &first), 0);
	assert_int_equal(ns_readable(301, 100, 3, NS_SLOTS, &first), 1);
	assert_int_equal(first, 3);
	/* Nothing readable, or a size not known: none. */
	assert_int_equal(ns_readable(0, 100, 0, NS_SLOTS, &first), 0);
	assert_int_equal(ns_readable(500, 0, 0, NS_SLOTS, &first), 0);
	/* 1-byte messages, 100 made readable at once: the latest 32. */
	assert_int_equal(ns_readable(1100, 1, 1000, NS_SLOTS, &first), NS_SLOTS);
	assert_int_equal(first, 1100 - NS_SLOTS);
	/* Four in flight at most: the latest four. */
	assert_int_equal(ns_readable(1100, 1, 1000, 4, &first), 4);
	assert_int_equal(first, 1096);
	/* Message numbers wrap with the offset past 2^32 messages. */
	assert_int_equal(ns_readable((1ULL << 32) + 2, 1, 0xffffffffu, NS_SLOTS,
				     &first), 3);
	assert_int_equal(first, 0xffffffffu);

	/*
	 * 100-byte messages; the stream's byte 250 is rcv_nxt = isn + 250
	 * (past the wrap). Message 2 starts at byte 200: isn + 200.
	 */
	assert_int_equal(ns_first_seq(250, isn + 250, 100, 2), isn + 200);
	assert_int_equal(ns_first_seq(250, isn + 250, 100, 0), isn);
	/* Past 4 GB, message m of the last 32 before end. */
	assert_int_equal(ns_first_seq((5ULL << 32) + 50, 77, 100,
				      (unsigned int)(((5ULL << 32) + 49) / 100)),
			 77 - (unsigned int)(((5ULL << 32) + 50) % 100));

	/* The tail [isn + 200, isn + 250) carries 200, not 199 or 250. */
	assert_true(ns_carries(isn + 200, isn + 250, isn + 200));
	assert_true(ns_carries(isn + 200, isn + 250, isn + 249));
	assert_false(ns_carries(isn + 200, isn + 250, isn + 199));
	assert_false(ns_carries(isn + 200, isn + 250, isn + 250));
}

/* --trace-sample: one message in N by number, 0 and 1 meaning all. */
static void t_one_message_in_n_is_sampled(void **state)
{
	(void)state;
	assert_true(ns_sampled(0, 7));
	assert_true(ns_sampled(14, 7));
	assert_false(ns_sampled(15, 7));
	assert_false(ns_sampled(6, 7));
	assert_true(ns_sampled(5, 0));
	assert_true(ns_sampled(5, 1));
	/* Numbers wrap at 2^32: 2^32 - 1 = 3 * 1431655765. */
	assert_true(ns_sampled(0xffffffffu, 3));
	assert_false(ns_sampled(0xfffffffeu, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_starts_in_a_stretch_of_stream),
		cmocka_unit_test(t_sequence_numbers_wrap),
		cmocka_unit_test(t_which_transmitted_packet_carries_a_start),
		cmocka_unit_test(t_messages_made_readable),
		cmocka_unit_test(t_one_message_in_n_is_sampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
