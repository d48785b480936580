/*
 * The attribution arithmetic of bpf/msgnum.h on synthetic packet
 * streams: message starts in segments, arrivals tagged by sequence
 * number through coalescing, holes, reordering, retransmission and
 * sequence wrap-around, and which transmitted packet carries which
 * message's first byte.
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

static void t_arrivals_are_tagged_by_start(void **state)
{
	struct ns_arrivals a;
	const unsigned int isn = 1000;

	memset(&a, 0, sizeof(a));
	/* Not armed: nothing is known of where messages start. */
	ns_arrived(&a, 100, isn, 100, 5);
	assert_int_equal(ns_arrival_of(&a, 0, isn), 0);
	ns_arm(&a.rx, isn, 0);
	ns_arrived(&a, 100, isn, 100, 10);		/* message 0 */
	ns_arrived(&a, 100, isn + 100, 250, 20);	/* 1 and 2, GRO'd */
	ns_arrived(&a, 100, isn + 350, 50, 30);		/* 3's second half */
	assert_int_equal(ns_arrival_of(&a, 0, isn), 10);
	assert_int_equal(ns_arrival_of(&a, 1, isn + 100), 20);
	assert_int_equal(ns_arrival_of(&a, 2, isn + 200), 20);
	/* The packet with 3's start is [isn + 300, ...): it came with 1. */
	assert_int_equal(ns_arrival_of(&a, 3, isn + 300), 20);
	assert_int_equal(a.rx.next, isn + 400);
	assert_int_equal(a.rx.idx, 4);
	/* A retransmission of 1 and 2 is their arrival now (the first copy
	 * may have been dropped before TCP); the track stays. */
	ns_arrived(&a, 100, isn + 100, 200, 40);
	assert_int_equal(ns_arrival_of(&a, 1, isn + 100), 40);
	assert_int_equal(ns_arrival_of(&a, 2, isn + 200), 40);
	assert_int_equal(ns_arrival_of(&a, 0, isn), 10);
	assert_int_equal(ns_arrival_of(&a, 3, isn + 300), 20);
	assert_int_equal(a.rx.next, isn + 400);
	assert_int_equal(a.rx.idx, 4);
	/* A copy of 3's second half carries no start. */
	ns_arrived(&a, 100, isn + 350, 50, 50);
	assert_int_equal(ns_arrival_of(&a, 3, isn + 300), 20);
	/* The wrong start for a slot is no arrival. */
	assert_int_equal(ns_arrival_of(&a, 1, isn + 101), 0);
}

static void t_a_hole_loses_only_its_messages(void **state)
{
	struct ns_arrivals a;
	const unsigned int isn = 7;

	memset(&a, 0, sizeof(a));
	ns_arm(&a.rx, isn, 0);
	ns_arrived(&a, 1000, isn, 1000, 1);
	/* Message 1's packet is lost; 2's comes first (out of order). */
	ns_arrived(&a, 1000, isn + 2000, 1000, 3);
	assert_int_equal(ns_arrival_of(&a, 2, isn + 2000), 3);
	assert_int_equal(a.rx.idx, 3);
	/* 1's retransmission comes late: it is 1's arrival, not 2's. */
	ns_arrived(&a, 1000, isn + 1000, 1000, 4);
	assert_int_equal(ns_arrival_of(&a, 1, isn + 1000), 4);
	assert_int_equal(ns_arrival_of(&a, 2, isn + 2000), 3);
	assert_int_equal(a.rx.idx, 3);
	/* And the stream goes on in step. */
	ns_arrived(&a, 1000, isn + 3000, 1000, 5);
	assert_int_equal(ns_arrival_of(&a, 3, isn + 3000), 5);
}

static void t_sequence_numbers_wrap(void **state)
{
	struct ns_arrivals a;
	const unsigned int isn = 0xffffff00u;
	unsigned int tx_seq[NS_SLOTS], first, end;
	int i;

	memset(&a, 0, sizeof(a));
	ns_arm(&a.rx, isn, 0);
	/* 0x200-byte messages; message 1 starts at 0x100, past the wrap. */
	ns_arrived(&a, 0x200, isn, 0x180, 1);
	ns_arrived(&a, 0x200, isn + 0x180, 0x200, 2);
	assert_int_equal(ns_arrival_of(&a, 0, isn), 1);
	assert_int_equal(ns_arrival_of(&a, 1, 0x100), 2);
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
}

/*
 * observe: messages of no size. The track waits for one start; every
 * copy of the packet carrying it until TCP takes it notes its arrival,
 * so a copy dropped before TCP (and its retransmission) leave the
 * retransmission's time, never the lost copy's.
 */
static void t_a_turn_keeps_the_copy_tcp_took(void **state)
{
	struct ns_arrivals a = { 0 };

	ns_arm(&a.rx, 0xfffffff0u, 7);
	/* A packet before the start, one after it: no arrival. */
	ns_arrived_turn(&a, 0xffffffe0u, 16, 100);
	ns_arrived_turn(&a, 0xfffffff1u, 100, 150);
	assert_int_equal(ns_arrival_of(&a, 7, 0xfffffff0u), 0);
	/* The first copy, dropped; its retransmission 200 ms later. */
	ns_arrived_turn(&a, 0xfffffff0u, 40, 1000);
	assert_int_equal(ns_arrival_of(&a, 7, 0xfffffff0u), 1000);
	ns_arrived_turn(&a, 0xffffffe8u, 48, 200001000ULL);
	assert_int_equal(ns_arrival_of(&a, 7, 0xfffffff0u), 200001000ULL);
	/* TCP took it: a later duplicate is no arrival of this message. */
	ns_turn_taken(&a);
	ns_arrived_turn(&a, 0xfffffff0u, 40, 300000000ULL);
	assert_int_equal(ns_arrival_of(&a, 7, 0xfffffff0u), 200001000ULL);
	/* The next turn, across the sequence wrap. */
	ns_arm(&a.rx, 0x20, 8);
	ns_arrived_turn(&a, 0x10, 0x20, 5);
	assert_int_equal(ns_arrival_of(&a, 8, 0x20), 5);
	assert_int_equal(ns_arrival_of(&a, 7, 0xfffffff0u), 200001000ULL);
}

/*
 * Issue 11: netfilter drops the copy of a response's first packet after
 * netif_receive_skb saw it; the retransmission 200 ms later is what TCP
 * takes, so it is the arrival, across the sequence wrap too.
 */
static void t_a_dropped_copy_is_superseded(void **state)
{
	struct ns_arrivals a;
	const unsigned int isn = 0xffffff00u;

	memset(&a, 0, sizeof(a));
	ns_arm(&a.rx, isn, 0);
	ns_arrived(&a, 256, isn, 256, 1000);		/* 0, taken */
	ns_arrived(&a, 256, isn + 256, 256, 2000);	/* 1, dropped */
	ns_arrived(&a, 256, isn + 256, 256, 200002000ULL);
	assert_int_equal(ns_arrival_of(&a, 0, isn), 1000);
	assert_int_equal(ns_arrival_of(&a, 1, isn + 256), 200002000ULL);
	/* More than NS_SLOTS messages back: the slot is a newer one's. */
	for (unsigned int m = 2; m < 2 + NS_SLOTS; m++)
		ns_arrived(&a, 256, isn + 256 * m, 256, 3000 + m);
	ns_arrived(&a, 256, isn + 256, 256, 999);
	assert_int_equal(ns_arrival_of(&a, 1 + NS_SLOTS,
					isn + 256 * (1 + NS_SLOTS)),
			 3000 + 1 + NS_SLOTS);
	assert_int_equal(ns_arrival_of(&a, 1, isn + 256), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_starts_in_a_stretch_of_stream),
		cmocka_unit_test(t_arrivals_are_tagged_by_start),
		cmocka_unit_test(t_a_hole_loses_only_its_messages),
		cmocka_unit_test(t_sequence_numbers_wrap),
		cmocka_unit_test(t_which_transmitted_packet_carries_a_start),
		cmocka_unit_test(t_a_track_counts_starts_in_order),
		cmocka_unit_test(t_a_turn_keeps_the_copy_tcp_took),
		cmocka_unit_test(t_a_dropped_copy_is_superseded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
