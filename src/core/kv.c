#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/kv.h"

static void push(struct kv_list *l, const char *key, char *text,
		 enum kv_type type)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = xrealloc(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n].key = xstrdup(key);
	l->v[l->n].text = text;
	l->v[l->n].type = type;
	l->n++;
}

void kv_str(struct kv_list *l, const char *key, const char *val)
{
	push(l, key, xstrdup(val ? val : ""), KV_STR);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return xstrdup(buf);
}

void kv_int(struct kv_list *l, const char *key, long long val)
{
	push(l, key, fmt("%lld", val), KV_INT);
}

void kv_uint(struct kv_list *l, const char *key, uint64_t val)
{
	push(l, key, fmt("%" PRIu64, val), KV_INT);
}

void kv_num(struct kv_list *l, const char *key, double val, int prec)
{
	if (!isfinite(val))
		push(l, key, xstrdup("nan"), KV_NUM);
	else
		push(l, key, fmt("%.*f", prec, val), KV_NUM);
}

void kv_free(struct kv_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].text);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void kv_print(const struct kv_list *l, FILE *f, const char *prefix)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		fprintf(f, "%s%s=%s\n", prefix, l->v[i].key, l->v[i].text);
}

/*
 * The length of the valid UTF-8 sequence at p (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0.
 */
static int utf8_len(const unsigned char *p)
{
	int n, i;
	unsigned int c;

	if (*p < 0xc2 || *p > 0xf4)
		return 0;
	n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
	c = *p & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

void csv_field(FILE *f, const char *text, int not_first)
{
	if (not_first)
		fputc(',', f);
	if (!strpbrk(text, ",\"\n")) {
		fputs(text, f);
		return;
	}
	fputc('"', f);
	for (; *text; text++) {
		if (*text == '"')
			fputc('"', f);
		fputc(*text, f);
	}
	fputc('"', f);
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
			/* <>& too: the text may sit in an HTML <script>. */
			fprintf(f, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, f);
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			/* Not UTF-8 (a path's byte, a server's answer): U+FFFD. */
			fputs("\\ufffd", f);
			p++;
		}
	}
	fputc('"', f);
}

void kv_json_prefixed(const struct kv_list *l, const char *prefix, FILE *f,
		      int indent)
{
	size_t i, plen = strlen(prefix);
	int first = 1;

	for (i = 0; i < l->n; i++) {
		const struct kv *kv = &l->v[i];

		if (strncmp(kv->key, prefix, plen))
			continue;
		fprintf(f, "%s%*s", first ? "" : ",\n", indent, "");
		json_string(f, kv->key);
		fputs(": ", f);
		if (kv->type == KV_STR)
			json_string(f, kv->text);
		else if (!strcmp(kv->text, "nan"))
			fputs("null", f);
		else
			fputs(kv->text, f);
		first = 0;
	}
	if (!first)
		fputc('\n', f);
}

void kv_json_members(const struct kv_list *l, FILE *f, int indent)
{
	kv_json_prefixed(l, "", f, indent);
}

const char *kv_get(const struct kv_list *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].text;
	return NULL;
}
