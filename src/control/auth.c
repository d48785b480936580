#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "control/auth.h"
#include "core/infile.h"
#include "core/common.h"

/* Binds an answer to this use: the same key used elsewhere gives none. */
static const char context[] = "netstage auth 1";

static void fail(char *err, size_t len, const char *path, const char *why)
{
	snprintf(err, len, "option --auth-key: %s: %s", path, why);
}

/* A secret others may read is no secret. */
struct auth_key *auth_load(const char *path, char *err, size_t len)
{
	unsigned char buf[AUTH_KEY_MAX + 2];
	struct auth_key *k;
	size_t n;
	mode_t mode;
	int open_to_others;

	if (sodium_init() < 0) {
		fail(err, len, path, "libsodium cannot start");
		return NULL;
	}
	if (infile_read(path, buf, sizeof(buf) - 1, &n, &mode)) {
		fail(err, len, path, errno == ETIMEDOUT ?
		     "nothing written to it for 5 s" : strerror(errno));
		sodium_memzero(buf, sizeof(buf));
		return NULL;
	}
	open_to_others = S_ISREG(mode) && (mode & 077);
	if (n && buf[n - 1] == '\n')
		n--;
	if (n < AUTH_KEY_MIN || n > AUTH_KEY_MAX) {
		fail(err, len, path, n < AUTH_KEY_MIN ?
		     "shorter than 16 bytes" : "longer than 4096 bytes");
		sodium_memzero(buf, sizeof(buf));
		return NULL;
	}
	if (open_to_others)
		log_err("--auth-key: %s can be read by others (chmod 600 it)",
			path);
	k = xcalloc(1, sizeof(*k));
	k->bytes = xcalloc(1, n);
	memcpy(k->bytes, buf, n);
	k->len = n;
	sodium_memzero(buf, sizeof(buf));
	return k;
}

void auth_free(struct auth_key *k)
{
	if (!k)
		return;
	sodium_memzero(k->bytes, k->len);
	free(k->bytes);
	free(k);
}

static void to_bytes(const uint64_t f[AUTH_FIELDS], unsigned char *b)
{
	for (int i = 0; i < AUTH_FIELDS * 8; i++)
		b[i] = f[i / 8] >> (56 - 8 * (i % 8));
}

static void to_fields(const unsigned char *b, uint64_t f[AUTH_FIELDS])
{
	memset(f, 0, AUTH_FIELDS * sizeof(*f));
	for (int i = 0; i < AUTH_FIELDS * 8; i++)
		f[i / 8] |= (uint64_t)b[i] << (56 - 8 * (i % 8));
}

void auth_challenge(uint64_t nonce[AUTH_FIELDS])
{
	unsigned char b[AUTH_FIELDS * 8];

	randombytes_buf(b, sizeof(b));
	to_fields(b, nonce);
}

static void mac_of(const struct auth_key *k,
		   const uint64_t nonce[AUTH_FIELDS],
		   unsigned char out[crypto_auth_hmacsha256_BYTES])
{
	crypto_auth_hmacsha256_state st;
	unsigned char b[AUTH_FIELDS * 8];

	to_bytes(nonce, b);
	crypto_auth_hmacsha256_init(&st, k->bytes, k->len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)context,
				      sizeof(context) - 1);
	crypto_auth_hmacsha256_update(&st, b, sizeof(b));
	crypto_auth_hmacsha256_final(&st, out);
}

void auth_answer(const struct auth_key *k,
		 const uint64_t nonce[AUTH_FIELDS], uint64_t mac[AUTH_FIELDS])
{
	unsigned char out[crypto_auth_hmacsha256_BYTES];

	mac_of(k, nonce, out);
	to_fields(out, mac);
}

int auth_check(const struct auth_key *k, const uint64_t nonce[AUTH_FIELDS],
	       const uint64_t mac[AUTH_FIELDS])
{
	unsigned char want[crypto_auth_hmacsha256_BYTES], got[sizeof(want)];

	mac_of(k, nonce, want);
	to_bytes(mac, got);
	return sodium_memcmp(want, got, sizeof(want)) == 0;
}
