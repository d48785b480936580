/*
 * The few answers the hooks' probe needs from the kernel's BTF: is
 * there a type of this name and kind, its id, and a type by id. One
 * pass over the types indexes them; libbpf's full parse of the same
 * 6 MB (every type checked, a hash of names built) took 50 ms of a
 * 215 ms trace start here, and libbpf parses it again when it loads
 * the object, which no API lets the two share.
 */
#ifndef NETSTAGE_KBTF_H
#define NETSTAGE_KBTF_H

#include <stddef.h>

#include <linux/btf.h>

struct kbtf {
	char *data;
	size_t len;
	int mapped;			/* data is the file mapped */
	const char *str;		/* the string section */
	__u32 str_len;
	__u32 *off;			/* type id -> offset in data */
	__u32 n;			/* ids 1..n-1 */
};

/*
 * /sys/kernel/btf/vmlinux, or path, read and indexed: 0; -1 when there
 * is none; -2 when it is not what this reader knows (a kind it has no
 * size for, a newer kernel's): loading, by libbpf, decides then.
 */
int kbtf_open(struct kbtf *k, const char *path);
/* The id of the first type of this name and kind, or -1. */
int kbtf_find(const struct kbtf *k, const char *name, int kind);
/* Type id's record, or NULL. */
const struct btf_type *kbtf_type(const struct kbtf *k, __u32 id);
void kbtf_close(struct kbtf *k);

#endif
