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
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>

static int attach_bare(const char *obj, const char *tp)
{
	struct bpf_object *o = bpf_object__open_file(obj, NULL);
	struct bpf_program *p = o ? bpf_object__next_program(o, NULL) : NULL;

	if (!p || bpf_program__set_attach_target(p, 0, tp) ||
	    bpf_object__load(o) || !bpf_program__attach(p)) {
		fprintf(stderr, "bare-hooks: %s: %s\n", tp, strerror(errno));
		return -1;
	}
	return 0;	/* the links go with the process */
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
	sigset_t set;
	int stamps, i, sig;

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
	for (i = 2 + stamps; i < argc; i++)
		if (attach_bare(argv[1], argv[i]) < 0)
			return 1;
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
