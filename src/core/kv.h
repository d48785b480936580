/*
 * An ordered list of key=value results. Every report is built once as a
 * kv list and then printed as key=value lines or written as JSON, so the
 * two forms can never disagree.
 */
#ifndef NETSTAGE_KV_H
#define NETSTAGE_KV_H

#include <stdint.h>
#include <stdio.h>

enum kv_type { KV_STR, KV_INT, KV_NUM };

struct kv {
	char *key;
	char *text;		/* value as printed after '=' */
	enum kv_type type;
};

struct kv_list {
	struct kv *v;
	size_t n, cap;
};

void kv_str(struct kv_list *l, const char *key, const char *val);
void kv_int(struct kv_list *l, const char *key, long long val);
void kv_uint(struct kv_list *l, const char *key, uint64_t val);
/* Printed with `prec` decimals; non-finite values become JSON null. */
void kv_num(struct kv_list *l, const char *key, double val, int prec);
void kv_free(struct kv_list *l);
/* The text of key's value, or NULL when the list has no such key. */
const char *kv_get(const struct kv_list *l, const char *key);

/* key=value lines, each key preceded by `prefix` (may be ""). */
void kv_print(const struct kv_list *l, FILE *f, const char *prefix);
/* The list as the members of a JSON object, without the braces. */
void kv_json_members(const struct kv_list *l, FILE *f, int indent);
/* The same for the keys that begin with `prefix` alone. */
void kv_json_prefixed(const struct kv_list *l, const char *prefix, FILE *f,
		      int indent);

/* A JSON string literal with escapes. */
void json_string(FILE *f, const char *s);
/* One CSV field, quoted when it holds a comma, a quote or a newline. */
void csv_field(FILE *f, const char *text, int not_first);

#endif
