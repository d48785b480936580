/*
 * --raw: a client for any request/response server, with no netstage at
 * the other end. The request is the user's bytes; a response ends at a
 * fixed size or at a terminator. This module holds that description and
 * the framing of response bytes; it does no I/O, so every edge of the
 * framing is unit-tested (tests/unit/t_raw.c).
 */
#ifndef NETSTAGE_RAW_H
#define NETSTAGE_RAW_H

#include <stddef.h>

struct options;

/* Longest terminator, and the longest response the framing accepts. */
#define RAW_END_MAX 256
#define RAW_RESPONSE_MAX (64u << 20)

struct raw_spec {
	char *req;		/* request bytes */
	size_t req_len;
	size_t resp_size;	/* a response's fixed size; 0: by terminator */
	/* --response-end: ends a response, or beside -R checks its end */
	char end[RAW_END_MAX];
	size_t end_len;
	/* Knuth-Morris-Pratt: how much of end still matches after a miss */
	size_t fail[RAW_END_MAX];
};

/* Where a flow is in the response it is reading. */
struct raw_rx {
	size_t len;		/* bytes of the response so far */
	size_t matched;		/* bytes of the terminator matched so far */
};

/*
 * C escapes of a command-line string into bytes: \r \n \t \\ \0 \xHH.
 * Returns the length, or -1 with a message naming the bad escape.
 */
long raw_unescape(const char *s, char *out, size_t cap, char *err,
		  size_t errlen);

/*
 * Build the description from --request-data or --request-file, -R and
 * --response-end. 0, or -1 with a one-line message.
 */
int raw_spec_init(struct raw_spec *r, const struct options *o,
		  int response_size_given, char *err, size_t errlen);
void raw_spec_free(struct raw_spec *r);

enum { RAW_MORE, RAW_DONE, RAW_BADEND, RAW_OVERLONG };

/*
 * n more bytes of a response: RAW_DONE when the response ends in them
 * (*used: how many of them belong to it; the rest follow it),
 * RAW_BADEND likewise for a response of -R bytes that does not end with
 * the terminator given beside -R, RAW_MORE when it goes on (*used = n),
 * RAW_OVERLONG when it passed RAW_RESPONSE_MAX without its end.
 */
int raw_frame(const struct raw_spec *r, struct raw_rx *s, const char *buf,
	      size_t n, size_t *used);

#endif
