/*
 * Plain data as bytes and back: a growing buffer that appends
 * big-endian integers, doubles (their IEEE bits, so a value comes back
 * exactly) and length-prefixed strings, and a reader that takes them
 * off in the same order. The reader never reads past its end: a short
 * or corrupt buffer sets `bad` and yields zeros from then on, so a
 * decoder checks once at the end. Netstage's two containers, key=value
 * lists and histograms, go the same way. No I/O here.
 */
#ifndef NETSTAGE_WIRE_H
#define NETSTAGE_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	unsigned char *p;
	size_t n, cap;
};

void wput_u8(struct wbuf *b, uint8_t v);
void wput_u32(struct wbuf *b, uint32_t v);
void wput_u64(struct wbuf *b, uint64_t v);
void wput_f64(struct wbuf *b, double v);
/* A u32 length, then the bytes (no terminator); NULL as length ~0. */
void wput_str(struct wbuf *b, const char *s);
void wput_bytes(struct wbuf *b, const void *p, size_t n);
void wbuf_free(struct wbuf *b);

struct rbuf {
	const unsigned char *p;
	size_t n, off;
	int bad;		/* ran past the end, or a value out of range */
};

uint8_t wget_u8(struct rbuf *b);
uint32_t wget_u32(struct rbuf *b);
uint64_t wget_u64(struct rbuf *b);
double wget_f64(struct rbuf *b);
/* A new string (NULL if one was put), or NULL with bad set. */
char *wget_str(struct rbuf *b);
/* The string into buf of len, cut to fit. */
void wget_strn(struct rbuf *b, char *buf, size_t len);
void wget_bytes(struct rbuf *b, void *p, size_t n);
/* A count (put as a u64) that must be <= max: bad if not. */
uint64_t wget_count(struct rbuf *b, uint64_t max);

struct kv_list;
struct hist;
/* A key=value list: each key, text and type, in order. */
void wput_kv(struct wbuf *b, const struct kv_list *l);
void wget_kv(struct rbuf *b, struct kv_list *l);
/* A histogram: its totals and only the buckets that counted. */
void wput_hist(struct wbuf *b, const struct hist *h);
void wget_hist(struct rbuf *b, struct hist *h);

#endif
