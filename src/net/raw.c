#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "config/options.h"
#include "core/infile.h"
#include "net/raw.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long raw_unescape(const char *s, char *out, size_t cap, char *err,
		  size_t errlen)
{
	size_t n = 0;
	int hi, lo;

	for (; *s; s++) {
		char c = *s;

		if (c == '\\') {
			switch (*++s) {
			case 'r': c = '\r'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '0': c = '\0'; break;
			case '\\': c = '\\'; break;
			case 'x':
				hi = hexval(s[1]);
				lo = hi < 0 ? -1 : hexval(s[2]);
				if (lo < 0) {
					snprintf(err, errlen,
						 "'\\x' needs two hex digits");
					return -1;
				}
				c = (char)(hi << 4 | lo);
				s += 2;
				break;
			case '\0':
				snprintf(err, errlen, "a lone '\\' at the end");
				return -1;
			default:
				snprintf(err, errlen,
					 "unknown escape '\\%c' (\\r \\n \\t \\\\ \\0 \\xHH)",
					 *s);
				return -1;
			}
		}
		if (n == cap) {
			snprintf(err, errlen, "longer than %zu bytes", cap);
			return -1;
		}
		out[n++] = c;
	}
	return (long)n;
}

/* The whole of a request file: at most 64 MiB, not empty. */
static int read_file(const char *path, struct raw_spec *r, char *err,
		     size_t errlen)
{
	size_t n;

	r->req = xcalloc(1, RAW_RESPONSE_MAX + 1);
	if (infile_read(path, r->req, RAW_RESPONSE_MAX, &n, NULL))
		return snprintf(err, errlen, "option --request-file: %s: %s",
				path, errno == ETIMEDOUT ?
				"nothing written to it for 5 s" :
				strerror(errno)), -1;
	if (!n || n > RAW_RESPONSE_MAX)
		return snprintf(err, errlen, "option --request-file: %s: %s",
				path, n ? "larger than 64 MiB" : "empty"), -1;
	r->req = xrealloc(r->req, n, 1);
	r->req_len = n;
	return 0;
}

static void kmp_table(struct raw_spec *r)
{
	size_t i, k = 0;

	r->fail[0] = 0;
	for (i = 1; i < r->end_len; i++) {
		while (k && r->end[i] != r->end[k])
			k = r->fail[k - 1];
		if (r->end[i] == r->end[k])
			k++;
		r->fail[i] = k;
	}
}

int raw_spec_init(struct raw_spec *r, const struct options *o,
		  int response_size_given, char *err, size_t errlen)
{
	char why[160];
	long n;

	memset(r, 0, sizeof(*r));
	if (!!o->request_data == !!o->request_file)
		return snprintf(err, errlen,
				"option --raw: give the request as --request-data or --request-file (one of them)"),
		       -1;
	if (o->request_file) {
		if (read_file(o->request_file, r, err, errlen))
			return raw_spec_free(r), -1;
	} else {
		r->req = xcalloc(1, strlen(o->request_data) + 1);
		n = raw_unescape(o->request_data, r->req,
				 strlen(o->request_data), why, sizeof(why));
		if (n <= 0) {
			snprintf(err, errlen, "option --request-data: %s",
				 n ? why : "empty request");
			return raw_spec_free(r), -1;
		}
		r->req_len = n;
	}
	if (o->response_end) {
		n = raw_unescape(o->response_end, r->end, sizeof(r->end), why,
				 sizeof(why));
		if (n <= 0) {
			snprintf(err, errlen, "option --response-end: %s",
				 n ? why : "empty terminator");
			return raw_spec_free(r), -1;
		}
		r->end_len = n;
		kmp_table(r);
	}
	/* A datagram is a whole response: -R only checks its size. */
	if (!response_size_given && !r->end_len && o->workload != W_UDP_RR)
		return snprintf(err, errlen,
				"option --raw: say where a response ends: -R BYTES or --response-end STRING"),
		       raw_spec_free(r), -1;
	r->resp_size = response_size_given ? (size_t)o->response_size : 0;
	return 0;
}

void raw_spec_free(struct raw_spec *r)
{
	free(r->req);
	r->req = NULL;
}

/*
 * Feed n bytes to the terminator's matcher; the index just past the
 * first byte that completes it, or 0. Matches may overlap.
 */
static size_t match_end(const struct raw_spec *r, struct raw_rx *s,
			const char *buf, size_t n, int stop_at_end)
{
	size_t i, k = s->matched, at = 0;

	for (i = 0; i < n; i++) {
		while (k && buf[i] != r->end[k])
			k = r->fail[k - 1];
		if (buf[i] == r->end[k])
			k++;
		if (k == r->end_len) {
			at = i + 1;
			if (stop_at_end)
				break;
			k = r->fail[k - 1];
		}
	}
	s->matched = k;
	return at;
}

/* -R: the size ends it; a terminator, if given, must be its last bytes. */
static int frame_sized(const struct raw_spec *r, struct raw_rx *s,
		       const char *buf, size_t n, size_t *used)
{
	size_t left = r->resp_size - s->len, at = 0;

	*used = n < left ? n : left;
	if (r->end_len)
		at = match_end(r, s, buf, *used, 0);
	s->len += *used;
	if (s->len < r->resp_size)
		return RAW_MORE;
	s->len = s->matched = 0;
	return !r->end_len || at == *used ? RAW_DONE : RAW_BADEND;
}

int raw_frame(const struct raw_spec *r, struct raw_rx *s, const char *buf,
	      size_t n, size_t *used)
{
	size_t at;

	if (r->resp_size)
		return frame_sized(r, s, buf, n, used);
	at = match_end(r, s, buf, n, 1);
	if (at) {
		*used = at;
		s->len = s->matched = 0;
		return RAW_DONE;
	}
	*used = n;
	s->len += n;
	return s->len > RAW_RESPONSE_MAX ? RAW_OVERLONG : RAW_MORE;
}
