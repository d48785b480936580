/* --raw: escapes, the request description, and response framing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "config/options.h"
#include "net/raw.h"

static void t_escapes_become_bytes(void **state)
{
	char out[32], err[128];
	long n = raw_unescape("get k\\r\\n\\t\\\\\\x00\\xfF", out, sizeof(out),
			      err, sizeof(err));

	assert_int_equal(n, 11);
	assert_memory_equal(out, "get k\r\n\t\\\0\xff", 11);
}

static void t_bad_escapes_are_named(void **state)
{
	char out[32], err[128];

	assert_int_equal(raw_unescape("a\\q", out, sizeof(out), err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "\\q"));
	assert_int_equal(raw_unescape("\\x4", out, sizeof(out), err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "two hex digits"));
	assert_int_equal(raw_unescape("ab\\", out, sizeof(out), err,
				      sizeof(err)), -1);
	assert_int_equal(raw_unescape("abcd", out, 3, err, sizeof(err)), -1);
}

static struct options opts(const char *req, const char *end, int rsize)
{
	struct options o = { 0 };

	o.workload = W_TCP_RR;
	o.request_data = (char *)req;
	o.response_end = (char *)end;
	o.response_size = rsize;
	return o;
}

static void t_a_response_must_end_somewhere(void **state)
{
	struct options o = opts("get k\\r\\n", NULL, 1);
	struct raw_spec r;
	char err[200];

	assert_int_equal(raw_spec_init(&r, &o, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "-R BYTES or --response-end"));
	/* UDP: a datagram is a whole response. */
	o.workload = W_UDP_RR;
	assert_int_equal(raw_spec_init(&r, &o, 0, err, sizeof(err)), 0);
	assert_int_equal(r.resp_size, 0);
	raw_spec_free(&r);
	o = opts(NULL, NULL, 1);
	assert_int_equal(raw_spec_init(&r, &o, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--request-data or --request-file"));
}

/* Feed the chunks; count the responses and where each ended. */
static int frame_all(const struct raw_spec *r, const char **chunks,
		     size_t *ends, int *bad)
{
	struct raw_rx s = { 0 };
	size_t used, total = 0;
	int n = 0, rc;

	*bad = 0;
	for (; *chunks; chunks++) {
		const char *p = *chunks;
		size_t left = strlen(p);

		while (left) {
			rc = raw_frame(r, &s, p, left, &used);
			assert_true(used <= left);
			total += used;
			if (rc == RAW_DONE || rc == RAW_BADEND) {
				ends[n++] = total;
				*bad += rc == RAW_BADEND;
			}
			p += used;
			left -= used;
		}
	}
	return n;
}

static void t_terminator_split_across_reads(void **state)
{
	struct options o = opts("get k\\r\\n", "END\\r\\n", 1);
	/* "EN" + "D\r\n": the end straddles two reads; the second response
	 * begins in the same read as the first one's end. */
	const char *chunks[] = { "VALUE k 0 1\r\nx\r\nEN", "D\r\nEND\r",
				 "\nVAL", "UE k 0 0\r\n\r\nEND\r\n", NULL };
	struct raw_spec r;
	size_t ends[8];
	char err[200];
	int bad;

	assert_int_equal(raw_spec_init(&r, &o, 0, err, sizeof(err)), 0);
	assert_int_equal(frame_all(&r, chunks, ends, &bad), 3);
	assert_int_equal(ends[0], 21);
	assert_int_equal(ends[1], 26);
	assert_int_equal(ends[2], 26 + 20);
	assert_int_equal(bad, 0);
	raw_spec_free(&r);
}

static void t_overlapping_terminator(void **state)
{
	/* "\r\n\r\n" after "\r\n\r": the matcher must fall back, not reset. */
	struct options o = opts("x", "\\r\\n\\r\\n", 1);
	const char *chunks[] = { "a\r\n\r\r\n\r\n", "b\r\n\r\n", NULL };
	struct raw_spec r;
	size_t ends[4];
	char err[200];
	int bad;

	assert_int_equal(raw_spec_init(&r, &o, 0, err, sizeof(err)), 0);
	assert_int_equal(frame_all(&r, chunks, ends, &bad), 2);
	assert_int_equal(ends[0], 8);
	assert_int_equal(ends[1], 13);
	raw_spec_free(&r);
}

static void t_sized_responses_checked_against_the_end(void **state)
{
	struct options o = opts("get k\\r\\n", "END\\r\\n", 8);
	/* Three responses of 8 bytes; the second does not end in END\r\n. */
	const char *chunks[] = { "abcEND\r\nab", "cdefghxyzEN",
				 "D\r\nabcEND\r\n", NULL };
	struct raw_spec r;
	size_t ends[8];
	char err[200];
	int bad;

	assert_int_equal(raw_spec_init(&r, &o, 1, err, sizeof(err)), 0);
	assert_int_equal(frame_all(&r, chunks, ends, &bad), 4);
	assert_int_equal(ends[0], 8);
	assert_int_equal(ends[1], 16);
	assert_int_equal(ends[2], 24);
	assert_int_equal(ends[3], 32);
	assert_int_equal(bad, 1);
	raw_spec_free(&r);
}

static void t_a_response_without_its_end_is_overlong(void **state)
{
	struct options o = opts("x", "Z", 1);
	static char big[1 << 20];
	struct raw_spec r;
	struct raw_rx s = { 0 };
	size_t used;
	char err[200];
	int i, rc = RAW_MORE;

	memset(big, 'a', sizeof(big));
	assert_int_equal(raw_spec_init(&r, &o, 0, err, sizeof(err)), 0);
	for (i = 0; i < 64 && rc == RAW_MORE; i++)
		rc = raw_frame(&r, &s, big, sizeof(big), &used);
	assert_int_equal(rc, RAW_MORE);
	rc = raw_frame(&r, &s, big, 1, &used);
	assert_int_equal(rc, RAW_OVERLONG);
	raw_spec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_escapes_become_bytes),
		cmocka_unit_test(t_bad_escapes_are_named),
		cmocka_unit_test(t_a_response_must_end_somewhere),
		cmocka_unit_test(t_terminator_split_across_reads),
		cmocka_unit_test(t_overlapping_terminator),
		cmocka_unit_test(t_sized_responses_checked_against_the_end),
		cmocka_unit_test(t_a_response_without_its_end_is_overlong),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
