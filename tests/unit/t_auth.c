/* --auth-key: answers that prove the key, and keys that are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/auth.h"

static struct auth_key *key_of(const char *text)
{
	char path[] = "/tmp/netstage-auth-XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct auth_key *k;

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	k = auth_load(path, err, sizeof(err));
	unlink(path);
	return k;
}

static void t_the_right_key_answers(void **state)
{
	struct auth_key *k = key_of("sixteen bytes ok"), *other;
	uint64_t nonce[AUTH_FIELDS], mac[AUTH_FIELDS];

	assert_non_null(k);
	auth_challenge(nonce);
	auth_answer(k, nonce, mac);
	assert_true(auth_check(k, nonce, mac));
	/* A final newline is not part of the key. */
	other = key_of("sixteen bytes ok\n");
	assert_true(auth_check(other, nonce, mac));
	auth_free(other);
	/* Another key, another challenge, a flipped bit: no. */
	other = key_of("sixteen bytes OK");
	assert_false(auth_check(other, nonce, mac));
	auth_free(other);
	nonce[3] ^= 1;
	assert_false(auth_check(k, nonce, mac));
	nonce[3] ^= 1;
	mac[0] ^= 1ULL << 63;
	assert_false(auth_check(k, nonce, mac));
	auth_free(k);
}

/*
 * The answer to a known challenge, as Python's hmac module computes it:
 * HMAC-SHA-256(key, "netstage auth 1" | 32 zero bytes). Another program
 * speaking the protocol must get the same.
 */
static void t_the_answer_is_hmac_sha256(void **state)
{
	struct auth_key *k = key_of("sixteen bytes ok");
	const uint64_t want[AUTH_FIELDS] = {
		0x1311ffd5e322056aULL, 0x91ef1867fcec50f9ULL,
		0xec233bf88d98d915ULL, 0x119c03030bac7d87ULL,
	};
	uint64_t nonce[AUTH_FIELDS] = { 0 }, mac[AUTH_FIELDS];

	auth_answer(k, nonce, mac);
	assert_memory_equal(mac, want, sizeof(want));
	auth_free(k);
}

/* Each challenge is new: an answer recorded once is worth nothing. */
static void t_challenges_differ(void **state)
{
	uint64_t a[AUTH_FIELDS], b[AUTH_FIELDS];

	auth_challenge(a);
	auth_challenge(b);
	assert_memory_not_equal(a, b, sizeof(a));
}

static void t_bad_keys_are_named(void **state)
{
	char err[256];

	assert_null(key_of("fifteen bytes!!"));
	assert_null(key_of("fifteen bytes!!\n"));
	assert_null(auth_load("/nonexistent/key", err, sizeof(err)));
	assert_string_equal(err, "option --auth-key: /nonexistent/key: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_the_right_key_answers),
		cmocka_unit_test(t_the_answer_is_hmac_sha256),
		cmocka_unit_test(t_challenges_differ),
		cmocka_unit_test(t_bad_keys_are_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
