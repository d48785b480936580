/*
 * --auth-key FILE: a pre-shared key the server checks every client
 * against before it takes the test. The server answers a HELLO with a
 * CHALLENGE of 32 random bytes; the client proves the key with AUTH,
 * HMAC-SHA-256(key, "netstage auth 1" | challenge), compared in
 * constant time. The key never crosses the wire, and a recorded answer
 * is worth nothing against the next challenge. libsodium does the
 * cryptography.
 */
#ifndef NETSTAGE_AUTH_H
#define NETSTAGE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "control/ctl_msg.h"

#define AUTH_FIELDS CTL_AUTH_FIELDS	/* 32 bytes */
#define AUTH_KEY_MIN 16
#define AUTH_KEY_MAX 4096

struct auth_key {
	unsigned char *bytes;
	size_t len;
};

/*
 * The key is the file's bytes, a final newline dropped: 16 to 4096 of
 * them. NULL and a sentence naming the file and the fault in err.
 */
struct auth_key *auth_load(const char *path, char *err, size_t len);
void auth_free(struct auth_key *k);

void auth_challenge(uint64_t nonce[AUTH_FIELDS]);
void auth_answer(const struct auth_key *k,
		 const uint64_t nonce[AUTH_FIELDS], uint64_t mac[AUTH_FIELDS]);
/* 1 if mac answers nonce under k. */
int auth_check(const struct auth_key *k, const uint64_t nonce[AUTH_FIELDS],
	       const uint64_t mac[AUTH_FIELDS]);

#endif
