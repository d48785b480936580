/*
 * The kernel BTF reader (trace/kbtf.h) against libbpf's: a BTF written
 * by libbpf read back type by type, a kind it does not know refused,
 * and this kernel's own answered as libbpf answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/btf.h>

#include "trace/kbtf.h"

static char path[] = "/tmp/t_kbtf.XXXXXX";

/* b's raw form written to path. */
static void write_btf(const struct btf *b, int break_kind)
{
	__u32 n;
	const void *raw = btf__raw_data(b, &n);
	char *copy = malloc(n);
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0 && raw && copy);
	memcpy(copy, raw, n);
	if (break_kind) {
		/* The first type's kind made 31: no kernel's yet. */
		struct btf_header *h = (void *)copy;
		struct btf_type *t = (void *)(copy + h->hdr_len + h->type_off);

		t->info = (t->info & ~(0x1fU << 24)) | (31U << 24);
	}
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(copy, 1, n, f), n);
	fclose(f);
	free(copy);
}

/* int, a struct, an enum, a proto of 3 and a pointer, a typedef. */
static struct btf *sample(int *td, int *fn)
{
	struct btf *b = btf__new_empty();
	int i, s, p, pr;

	i = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	s = btf__add_struct(b, "pair", 8);
	btf__add_field(b, "a", i, 0, 0);
	btf__add_field(b, "b", i, 32, 0);
	btf__add_enum(b, "colour", 4);
	btf__add_enum_value(b, "RED", 0);
	btf__add_enum_value(b, "GREEN", 1);
	pr = btf__add_func_proto(b, i);
	btf__add_func_param(b, "ctx", s);
	btf__add_func_param(b, "x", i);
	btf__add_func_param(b, "y", i);
	p = btf__add_ptr(b, pr);
	*td = btf__add_typedef(b, "btf_trace_thing", p);
	*fn = btf__add_func(b, "do_thing", BTF_FUNC_GLOBAL, pr);
	btf__add_array(b, i, i, 4);
	return b;
}

static void t_reads_what_libbpf_wrote(void **state)
{
	struct kbtf k;
	int td, fn;
	struct btf *b = sample(&td, &fn);
	const struct btf_type *t;

	write_btf(b, 0);
	assert_int_equal(kbtf_open(&k, path), 0);
	assert_int_equal(k.n, btf__type_cnt(b));
	assert_int_equal(kbtf_find(&k, "btf_trace_thing", BTF_KIND_TYPEDEF),
			 td);
	assert_int_equal(kbtf_find(&k, "do_thing", BTF_KIND_FUNC), fn);
	assert_int_equal(kbtf_find(&k, "do_thing", BTF_KIND_TYPEDEF), -1);
	assert_int_equal(kbtf_find(&k, "btf_trace_thin", BTF_KIND_TYPEDEF),
			 -1);
	/* The typedef, to its pointer, to the proto of three. */
	t = kbtf_type(&k, td);
	t = kbtf_type(&k, kbtf_type(&k, t->type)->type);
	assert_true(btf_is_func_proto(t));
	assert_int_equal(btf_vlen(t), 3);
	assert_null(kbtf_type(&k, k.n));
	kbtf_close(&k);
	unlink(path);
	strcpy(path, "/tmp/t_kbtf.XXXXXX");
	/* A kind it has no size for: not guessed at. */
	write_btf(b, 1);
	assert_int_equal(kbtf_open(&k, path), -2);
	unlink(path);
	strcpy(path, "/tmp/t_kbtf.XXXXXX");
	assert_int_equal(kbtf_open(&k, "/nonexistent/vmlinux"), -1);
	btf__free(b);
}

/* This kernel's BTF: every type libbpf finds, found at its id. */
static void t_this_kernel_as_libbpf_reads_it(void **state)
{
	static const char *const names[] = {
		"btf_trace_netif_receive_skb", "btf_trace_sk_data_ready",
		"btf_trace_net_dev_start_xmit", "btf_trace_tcp_retransmit_skb",
		"btf_trace_sched_switch", "btf_trace_no_such_thing",
	};
	struct btf *b = btf__load_vmlinux_btf();
	struct kbtf k;
	size_t i;

	if (!b || kbtf_open(&k, NULL)) {
		btf__free(b);
		skip();
	}
	assert_int_equal(k.n, btf__type_cnt(b));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int want = btf__find_by_name_kind(b, names[i],
						  BTF_KIND_TYPEDEF);

		assert_int_equal(kbtf_find(&k, names[i], BTF_KIND_TYPEDEF),
				 want > 0 ? want : -1);
	}
	assert_int_equal(kbtf_find(&k, "dev_hard_start_xmit", BTF_KIND_FUNC),
			 btf__find_by_name_kind(b, "dev_hard_start_xmit",
						BTF_KIND_FUNC));
	kbtf_close(&k);
	btf__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_reads_what_libbpf_wrote),
		cmocka_unit_test(t_this_kernel_as_libbpf_reads_it),
	};

	return cmocka_run_group_tests_name("kbtf", tests, NULL, NULL);
}
