// SPDX-License-Identifier: GPL-2.0
/*
 * bench/overhead.sh's reference floor:
 *
 *   bare-hooks OBJ [-s] TRACEPOINT...
 *
 * attaches OBJ's empty program (bench/bare-hooks.bpf.c) to each
 * tracepoint, with -s also holds a socket with SO_TIMESTAMPNS (which
 * turns on the kernel's receive stamp of every packet, as --trace
 * does), prints "attached" and waits for SIGINT or SIGTERM. An
 * untraced run beside it pays what entering those hooks costs, whoever
 * loads them: the part of tracing's floor that is the kernel's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

struct bare {
	struct bpf_object *obj;
	struct bpf_link *link;
};

/*
 * Whether the kernel has tracepoint tp, from its BTF, as
 * src/trace/tracer.c looks (libbpf 1.1 keeps the BTF it loads for an
 * attach target it then cannot find).
 */
static int has_tracepoint(const struct btf *vmlinux, const char *tp)
{
	char name[256];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0;
}

static int attach_bare(const struct btf *vmlinux, const char *path,
		       const char *tp, struct bare *b)
{
	struct bpf_program *p;

	if (!has_tracepoint(vmlinux, tp)) {
		fprintf(stderr, "bare-hooks: no tracepoint %s in the kernel's "
			"BTF\n", tp);
		return -1;
	}
	b->obj = bpf_object__open_file(path, NULL);
	p = b->obj ? bpf_object__next_program(b->obj, NULL) : NULL;
	if (p && !bpf_program__set_attach_target(p, 0, tp) &&
	    !bpf_object__load(b->obj))
		b->link = bpf_program__attach(p);
	if (b->link)
		return 0;
	fprintf(stderr, "bare-hooks: cannot attach to %s: %s\n", tp,
		strerror(errno));
	return -1;
}

static void detach_all(struct bare *b, int n)
{
	while (n--) {
		bpf_link__destroy(b[n].link);
		bpf_object__close(b[n].obj);
	}
}

static int hold_stamps(void)
{
	int on = 1, fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on,
				 sizeof(on))) {
		fprintf(stderr, "bare-hooks: SO_TIMESTAMPNS: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct btf *vmlinux;
	struct bare *b;
	sigset_t set;
	int stamps, first, n, sig, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: bare-hooks OBJ [-s] TRACEPOINT...\n");
		return 2;
	}
	stamps = !strcmp(argv[2], "-s");
	if (stamps && hold_stamps() < 0)
		return 1;
	/* Blocked before any hook is on: no signal is lost to a race. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	first = 2 + stamps;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "bare-hooks: the kernel's BTF: %s\n",
			strerror(errno));
		return 1;
	}
	b = calloc(argc, sizeof(*b));
	if (!b) {
		btf__free(vmlinux);
		return 1;
	}
	for (n = 0; first + n < argc && !rc; n++)
		rc = attach_bare(vmlinux, argv[1], argv[first + n], &b[n]);
	btf__free(vmlinux);
	if (!rc) {
		printf("attached\n");
		fflush(stdout);
		sigwait(&set, &sig);
	}
	detach_all(b, n);
	free(b);
	return rc ? 1 : 0;
}
