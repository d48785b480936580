/* Control messages: round trips, truncation, and bytes from a stranger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "control/ctl_msg.h"

static int encode(const struct ctl_msg *m, uint8_t *buf)
{
	int n = ctl_encode(m, buf, CTL_MAX_MSG);

	assert_true(n >= CTL_HDR_LEN);
	return n;
}

static void t_every_type_round_trips(void **state)
{
	uint8_t buf[CTL_MAX_MSG];
	struct ctl_msg in, out;
	unsigned int type;
	int i, n;

	for (type = CTL_HELLO; type < CTL_TYPE_END; type++) {
		memset(&in, 0, sizeof(in));
		in.type = type;
		for (i = 0; i < ctl_nfields(type); i++)
			in.f[i] = 0x0102030405060708ULL * (i + 1);
		/* Fields with a range take a value inside it. */
		if (type == CTL_HELLO) {
			in.f[H_FLAGS] = HF_CLIENT_WRITES;
			in.f[H_INFLIGHT] = CTL_INFLIGHT_MAX;
		}
		if (type == CTL_ACK) {
			in.f[A_STATUS] = 0;
			in.f[A_DATA_PORT] = 65535;
		}
		if (type == CTL_STOP || type == CTL_RESULT) {
			in.f[R_CPU_UTIL_PPM] = CTL_CPU_UTIL_MAX;
			in.f[R_SERVICE_DEMAND_NS] = UINT64_MAX;
		}
		if (type == CTL_NEXT)
			in.f[N_MORE] = 1;
		if (type == CTL_WAIT) {
			in.f[W_IN] = 1;
			in.f[W_NEEDED] = 4;
		}
		if (type == CTL_ACK)
			strcpy(in.text, "server runs tcp_rr");
		n = encode(&in, buf);
		assert_int_equal(n, CTL_HDR_LEN + 8 * ctl_nfields(type) +
					    (type == CTL_ACK ? 2 + 18 : 0));
		assert_int_equal(ctl_decode(buf, n, &out), n);
		assert_int_equal(out.type, type);
		assert_memory_equal(out.f, in.f, sizeof(in.f));
		assert_string_equal(out.text, in.text);
	}
}

static void t_hello_wire_layout_is_big_endian(void **state)
{
	struct ctl_msg m = { .type = CTL_HELLO };
	uint8_t buf[CTL_MAX_MSG];

	m.f[H_MAGIC] = 42;
	encode(&m, buf);
	assert_memory_equal(buf, "NSTG\0\3\0\1\0\0\0\x50", 12);
	assert_memory_equal(buf + 12, "\0\0\0\0\0\0\0\x2a", 8);
}

/* A peer of another build is told apart from a stranger. */
static void t_another_version_is_named(void **state)
{
	struct ctl_msg m = { .type = CTL_HELLO }, out;
	uint8_t buf[CTL_MAX_MSG];
	int n = encode(&m, buf);

	assert_int_equal(ctl_version_of(buf, n), CTL_VERSION);
	buf[5] = CTL_VERSION - 1;
	assert_int_equal(ctl_decode(buf, n, &out), -1);
	assert_int_equal(ctl_version_of(buf, n), CTL_VERSION - 1);
	assert_int_equal(ctl_version_of(buf, CTL_HDR_LEN - 1), -1);
	buf[0] = 'X';
	assert_int_equal(ctl_version_of(buf, n), -1);
}

static void t_every_truncation_asks_for_more(void **state)
{
	struct ctl_msg m = { .type = CTL_ACK, .f = { [A_STATUS] = 1 } }, out;
	uint8_t buf[CTL_MAX_MSG];
	int n, len;

	strcpy(m.text, "hello");
	n = encode(&m, buf);
	for (len = 0; len < n; len++)
		assert_int_equal(ctl_decode(buf, len, &out), 0);
	/* Trailing bytes of the next message are left alone. */
	assert_int_equal(ctl_decode(buf, n, &out), n);
}

static void t_strangers_bytes_are_malformed(void **state)
{
	struct ctl_msg m = { .type = CTL_STOP }, out;
	uint8_t buf[CTL_MAX_MSG], bad[CTL_MAX_MSG];
	int n = encode(&m, buf);

	/* "GET / HTTP/1.1" is what a stray client sends. */
	assert_int_equal(ctl_decode((const uint8_t *)"GET / HTTP/1.1\r\n\r\n",
				    18, &out), -1);
	memcpy(bad, buf, n);
	bad[0] ^= 1;		/* protocol magic */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	memcpy(bad, buf, n);
	bad[5] = 9;		/* version */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	memcpy(bad, buf, n);
	bad[7] = 0;		/* type 0 */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	bad[7] = CTL_TYPE_END;	/* type past the last */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	memcpy(bad, buf, n);
	bad[11] -= 8;		/* payload shorter than the type needs */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	memcpy(bad, buf, n);
	bad[11] += 8;		/* longer than the type carries */
	memset(bad + n, 0, 8);
	assert_int_equal(ctl_decode(bad, n + 8, &out), -1);
	memcpy(bad, buf, n);
	bad[8] = 0x7f;		/* a length meant to make us allocate */
	assert_int_equal(ctl_decode(bad, n, &out), -1);
	assert_int_equal(ctl_header_payload(bad), -1);
}

static void t_ack_text_is_bounded_and_printable(void **state)
{
	struct ctl_msg m = { .type = CTL_ACK, .f = { [A_STATUS] = 1 } }, out;
	uint8_t buf[CTL_MAX_MSG];
	int n;

	strcpy(m.text, "bad\n\033[31mred");
	n = encode(&m, buf);
	assert_int_equal(ctl_decode(buf, n, &out), n);
	assert_string_equal(out.text, "bad??[31mred");
	/* A text length that disagrees with the payload length. */
	buf[CTL_HDR_LEN + 8 * A_NFIELDS + 1] += 1;
	assert_int_equal(ctl_decode(buf, n, &out), -1);
	/* The longest text fits; encode never writes past the buffer. */
	memset(m.text, 'x', CTL_TEXT_MAX);
	m.text[CTL_TEXT_MAX] = '\0';
	n = encode(&m, buf);
	assert_int_equal(ctl_decode(buf, n, &out), n);
	assert_int_equal(strlen(out.text), CTL_TEXT_MAX);
	assert_int_equal(ctl_encode(&m, buf, n - 1), -1);
}

/* decode() of m with field i set to v: the bytes, or -1 (refused). */
static int with_field(unsigned int type, int i, uint64_t v)
{
	struct ctl_msg m = { .type = type }, out;
	uint8_t buf[CTL_MAX_MSG];
	int n;

	if (type == CTL_ACK)
		m.f[A_DATA_PORT] = 12867;
	if (type == CTL_HELLO)
		m.f[H_INFLIGHT] = 1;
	m.f[i] = v;
	n = encode(&m, buf);
	return ctl_decode(buf, n, &out);
}

/* Issue 13: a peer's figures are checked, not printed as they came. */
static void t_fields_out_of_range_are_malformed(void **state)
{
	/* A data port of 65558 was truncated to 22 and connected to. */
	assert_int_equal(with_field(CTL_ACK, A_DATA_PORT, 65558), -1);
	assert_int_equal(with_field(CTL_ACK, A_DATA_PORT, 0), -1);
	assert_true(with_field(CTL_ACK, A_DATA_PORT, 65535) > 0);
	assert_int_equal(with_field(CTL_ACK, A_STATUS, 2), -1);
	/* remote_cpu_util=1844674407370955.25 */
	assert_int_equal(with_field(CTL_RESULT, R_CPU_UTIL_PPM,
				    UINT64_MAX - 1), -1);
	assert_int_equal(with_field(CTL_STOP, R_CPU_UTIL_PPM,
				    CTL_CPU_UTIL_MAX + 1), -1);
	assert_true(with_field(CTL_STOP, R_CPU_UTIL_PPM, UINT64_MAX) > 0);
	assert_int_equal(with_field(CTL_RESULT, R_SERVICE_DEMAND_NS,
				    CTL_DEMAND_MAX_NS + 1), -1);
	assert_int_equal(with_field(CTL_RESULT, R_TRANSACTIONS,
				    (uint64_t)INT64_MAX + 1), -1);
	assert_int_equal(with_field(CTL_NEXT, N_MORE, 2), -1);
	/* A WAIT says fewer are in than needed, and a count that fits. */
	assert_true(with_field(CTL_WAIT, W_NEEDED, 2) > 0);
	assert_int_equal(with_field(CTL_WAIT, W_IN, 1), -1);
	assert_int_equal(with_field(CTL_WAIT, W_NEEDED,
				    (uint64_t)INT32_MAX + 1), -1);
	assert_true(with_field(CTL_HELLO, H_FLAGS, 7) > 0);
	assert_int_equal(with_field(CTL_HELLO, H_FLAGS, 8), -1);
	assert_int_equal(with_field(CTL_HELLO, H_INFLIGHT, 0), -1);
	assert_int_equal(with_field(CTL_HELLO, H_INFLIGHT,
				    CTL_INFLIGHT_MAX + 1), -1);
}

/* DEL and C1 controls (0x9b is CSI) never reach a terminal either. */
static void t_ack_text_keeps_printable_ascii_only(void **state)
{
	struct ctl_msg m = { .type = CTL_ACK }, out;
	uint8_t buf[CTL_MAX_MSG];
	int n;

	m.f[A_STATUS] = 1;
	strcpy(m.text, "a\x7f" "b\x9b" "31mc\xc3\xa9");
	n = encode(&m, buf);
	assert_int_equal(ctl_decode(buf, n, &out), n);
	assert_string_equal(out.text, "a?b?31mc??");
}

static void t_random_bytes_never_decode_out_of_bounds(void **state)
{
	uint64_t x = 88172645463325252ULL;
	uint8_t buf[CTL_MAX_MSG];
	struct ctl_msg out;
	int i, j, rc;

	for (i = 0; i < 100000; i++) {
		int len = (int)(x % sizeof(buf));

		for (j = 0; j < len; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[j] = (uint8_t)x;
		}
		/* Half the time, a valid header in front of the noise. */
		if (i & 1 && len >= CTL_HDR_LEN)
			memcpy(buf, "NSTG\0\1", 6);
		rc = ctl_decode(buf, len, &out);
		assert_true(rc >= -1 && rc <= len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_type_round_trips),
		cmocka_unit_test(t_hello_wire_layout_is_big_endian),
		cmocka_unit_test(t_another_version_is_named),
		cmocka_unit_test(t_every_truncation_asks_for_more),
		cmocka_unit_test(t_strangers_bytes_are_malformed),
		cmocka_unit_test(t_ack_text_is_bounded_and_printable),
		cmocka_unit_test(t_fields_out_of_range_are_malformed),
		cmocka_unit_test(t_ack_text_keeps_printable_ascii_only),
		cmocka_unit_test(t_random_bytes_never_decode_out_of_bounds),
	};

	return cmocka_run_group_tests_name("ctl_msg", tests, NULL, NULL);
}
