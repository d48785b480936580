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
	assert_int_equal(ns_starts(0, 100, 100, &first), 1);
	assert_int_equal(first, 0);
	/* [1, 100): message 0 began before, message 1 starts at 100. */
	assert_int_equal(ns_starts(1, 99, 100, &first), 0);
	assert_int_equal(ns_starts(1, 100, 100, &first), 1);
	assert_int_equal(first, 1);
	/* A coalesced stretch [150, 480): 200, 300 and 400. */
	assert_int_equal(ns_starts(150, 330, 100, &first), 3);
	assert_int_equal(first, 2);
	/* Pure ACK: no bytes, no start. */
	assert_int_equal(ns_starts(200, 0, 100, &first), 0);
	/* 1-byte messages in 64 KB: capped at what can be in flight. */
	assert_int_equal(ns_starts(7, 65536, 1, &first), NS_SLOTS);
	assert_int_equal(first, 7);
	/* Past 4 GB of stream the offsets are 64-bit. */
	assert_int_equal(ns_starts(5ULL << 32, 100, 100, &first), 1);
	assert_int_equal(first, (5ULL << 32) / 100 + ((5ULL << 32) % 100 != 0));
}

static void t_sequence_numbers_wrap(void **state)
{
	const unsigned int isn = 0xffffff00u;
	unsigned int tx_seq[NS_SLOTS], first, end;
	struct ns_track t = { 0 };
	int i;

	/* 0x200-byte messages; message 1 starts at 0x100, past the wrap. */
	ns_arm(&t, isn, 0);
	assert_int_equal(ns_track(&t, 0x200, isn, 0x180, &first), 1);
	assert_int_equal(ns_track(&t, 0x200, isn + 0x180, 0x200, &first), 1);
	assert_int_equal(first, 1);
	assert_int_equal(t.next, 0x300);
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

/* The transmit track of a kernel without tcp_sendmsg_locked. */
static void t_a_track_counts_starts_in_order(void **state)
{
	struct ns_track t = { 0 };
	unsigned int first = 99;

	/* Not armed: nothing counted. */
	assert_int_equal(ns_track(&t, 100, 0, 100, &first), 0);
	ns_arm(&t, 4000, 0);
	/* The handshake's ACK and an ACK later carry no bytes. */
	assert_int_equal(ns_track(&t, 100, 4000, 0, &first), 0);
	/* Requests 0 and 1 in one segment, then 2's first half alone. */
	assert_int_equal(ns_track(&t, 100, 4000, 200, &first), 2);
	assert_int_equal(first, 0);
	assert_int_equal(ns_track(&t, 100, 4200, 50, &first), 1);
	assert_int_equal(first, 2);
	/* Its second half, and a retransmission of 1, start nothing. */
	assert_int_equal(ns_track(&t, 100, 4250, 50, &first), 0);
	assert_int_equal(ns_track(&t, 100, 4100, 100, &first), 0);
	assert_int_equal(t.next, 4300);
	assert_int_equal(t.idx, 3);
	/* 3's packet went by unseen: 4's start is counted as 4. */
	assert_int_equal(ns_track(&t, 100, 4400, 100, &first), 1);
	assert_int_equal(first, 4);
	assert_int_equal(t.idx, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_starts_in_a_stretch_of_stream),
		cmocka_unit_test(t_sequence_numbers_wrap),
		cmocka_unit_test(t_which_transmitted_packet_carries_a_start),
		cmocka_unit_test(t_a_track_counts_starts_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
