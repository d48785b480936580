#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "stats/hist.h"
#include "core/kv.h"
#include "results/wire.h"

static unsigned char *room(struct wbuf *b, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->n + n)
			cap *= 2;
		b->p = xrealloc(b->p, cap, 1);
		b->cap = cap;
	}
	b->n += n;
	return b->p + b->n - n;
}

static void put_be(struct wbuf *b, uint64_t v, int bytes)
{
	unsigned char *p = room(b, bytes);
	int i;

	for (i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

void wput_u8(struct wbuf *b, uint8_t v)
{
	put_be(b, v, 1);
}

void wput_u32(struct wbuf *b, uint32_t v)
{
	put_be(b, v, 4);
}

void wput_u64(struct wbuf *b, uint64_t v)
{
	put_be(b, v, 8);
}

void wput_f64(struct wbuf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_be(b, bits, 8);
}

void wput_bytes(struct wbuf *b, const void *p, size_t n)
{
	if (n)
		memcpy(room(b, n), p, n);
}

void wput_str(struct wbuf *b, const char *s)
{
	size_t n;

	if (!s) {
		wput_u32(b, UINT32_MAX);
		return;
	}
	n = strlen(s);
	wput_u32(b, (uint32_t)n);
	wput_bytes(b, s, n);
}

void wbuf_free(struct wbuf *b)
{
	free(b->p);
	*b = (struct wbuf){ 0 };
}

/* n bytes to read, or NULL (and bad) if the buffer has fewer. */
static const unsigned char *take(struct rbuf *b, size_t n)
{
	if (b->bad || n > b->n - b->off) {
		b->bad = 1;
		return NULL;
	}
	b->off += n;
	return b->p + b->off - n;
}

static uint64_t get_be(struct rbuf *b, int bytes)
{
	const unsigned char *p = take(b, bytes);
	uint64_t v = 0;
	int i;

	for (i = 0; p && i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

uint8_t wget_u8(struct rbuf *b)
{
	return (uint8_t)get_be(b, 1);
}

uint32_t wget_u32(struct rbuf *b)
{
	return (uint32_t)get_be(b, 4);
}

uint64_t wget_u64(struct rbuf *b)
{
	return get_be(b, 8);
}

double wget_f64(struct rbuf *b)
{
	uint64_t bits = get_be(b, 8);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

void wget_bytes(struct rbuf *b, void *p, size_t n)
{
	const unsigned char *q = take(b, n);

	if (q)
		memcpy(p, q, n);
	else
		memset(p, 0, n);
}

char *wget_str(struct rbuf *b)
{
	uint32_t n = wget_u32(b);
	const unsigned char *q;
	char *s;

	if (n == UINT32_MAX || b->bad)
		return NULL;
	q = take(b, n);
	if (!q)
		return NULL;
	s = xcalloc(1, (size_t)n + 1);
	memcpy(s, q, n);
	return s;
}

void wget_strn(struct rbuf *b, char *buf, size_t len)
{
	char *s = wget_str(b);

	snprintf(buf, len, "%s", s ? s : "");
	free(s);
}

uint64_t wget_count(struct rbuf *b, uint64_t max)
{
	uint64_t n = wget_u64(b);

	if (n > max) {
		b->bad = 1;
		return 0;
	}
	return n;
}

void wput_kv(struct wbuf *b, const struct kv_list *l)
{
	size_t i;

	wput_u64(b, l->n);
	for (i = 0; i < l->n; i++) {
		wput_str(b, l->v[i].key);
		wput_str(b, l->v[i].text);
		wput_u8(b, (uint8_t)l->v[i].type);
	}
}

void wget_kv(struct rbuf *b, struct kv_list *l)
{
	uint64_t i, n = wget_count(b, b->n);
	char *key, *text;
	uint8_t type;

	for (i = 0; i < n && !b->bad; i++) {
		key = wget_str(b);
		text = wget_str(b);
		type = wget_u8(b);
		if (!key || !text || type > KV_NUM)
			b->bad = 1;
		else {
			kv_str(l, key, text);
			l->v[l->n - 1].type = type;
		}
		free(key);
		free(text);
	}
}

/* Only the buckets that counted: most of a histogram is zeros. */
void wput_hist(struct wbuf *b, const struct hist *h)
{
	uint32_t i, used = 0;

	wput_u64(b, h->count);
	wput_u64(b, h->min);
	wput_u64(b, h->max);
	wput_f64(b, h->sum);
	wput_f64(b, h->sumsq);
	for (i = 0; i < HIST_BUCKETS; i++)
		used += h->bucket[i] != 0;
	wput_u64(b, used);
	for (i = 0; i < HIST_BUCKETS; i++)
		if (h->bucket[i]) {
			wput_u32(b, i);
			wput_u64(b, h->bucket[i]);
		}
}

void wget_hist(struct rbuf *b, struct hist *h)
{
	uint32_t i, idx, used;

	memset(h, 0, sizeof(*h));
	h->count = wget_u64(b);
	h->min = wget_u64(b);
	h->max = wget_u64(b);
	h->sum = wget_f64(b);
	h->sumsq = wget_f64(b);
	used = (uint32_t)wget_count(b, HIST_BUCKETS);
	for (i = 0; i < used && !b->bad; i++) {
		idx = wget_u32(b);
		if (idx >= HIST_BUCKETS)
			b->bad = 1;
		else
			h->bucket[idx] = wget_u64(b);
	}
}
