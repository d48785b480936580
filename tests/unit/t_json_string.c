/*
 * JSON strings from whatever bytes netstage is given (paths, host
 * names, request data, a server's answers): valid UTF-8 passes as it
 * is, every other byte becomes U+FFFD, so that any JSON parser reads
 * the document.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/kv.h"

static void check(const char *in, const char *want)
{
	char out[256] = { 0 };
	FILE *f = tmpfile();

	json_string(f, in);
	rewind(f);
	assert_true(fread(out, 1, sizeof(out) - 1, f) > 0);
	fclose(f);
	assert_string_equal(out, want);
}

static void t_valid_utf8_passes(void **state)
{
	check("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	check("\xe2\x82\xac 5", "\"\xe2\x82\xac 5\"");
	check("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	check("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF */
}

static void t_other_bytes_are_replaced(void **state)
{
	check("bad\xff" "dir", "\"bad\\ufffddir\"");
	/* Overlong forms, a surrogate, past U+10FFFF. */
	check("\xc0\x80", "\"\\ufffd\\ufffd\"");
	check("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	check("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	check("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* Cut short at the end, or by an ASCII byte. */
	check("a\xe2\x82", "\"a\\ufffd\\ufffd\"");
	check("\xe2x", "\"\\ufffdx\"");
}

static void t_json_and_html_specials(void **state)
{
	check("a\"b\\c", "\"a\\\"b\\\\c\"");
	check("</script>&\n", "\"\\u003c/script\\u003e\\u0026\\u000a\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_valid_utf8_passes),
		cmocka_unit_test(t_other_bytes_are_replaced),
		cmocka_unit_test(t_json_and_html_specials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
