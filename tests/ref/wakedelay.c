// SPDX-License-Identifier: GPL-2.0
/*
 * Holds the wake-up calls of a network namespace's UDP sockets on one
 * CPU (tests/ref/wakedelay.bpf.c):
 *
 *   wakedelay NETNS_INODE CPU DELAY_NS
 *
 * attaches, prints "attached", and at SIGINT or SIGTERM prints
 * held=N, the wake-up calls it held: a test that counts on it can
 * see that it did.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "wakedelay.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct wakedelay_bpf *skel;

	if (argc != 4 || atoll(argv[1]) <= 0 || atoi(argv[2]) < 0 ||
	    atoll(argv[3]) <= 0) {
		fprintf(stderr, "usage: wakedelay NETNS_INODE CPU DELAY_NS\n");
		return 2;
	}
	skel = wakedelay_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->netns = strtoul(argv[1], NULL, 10);
	skel->rodata->cpu = atoi(argv[2]);
	skel->rodata->delay_ns = atoll(argv[3]);
	if (wakedelay_bpf__load(skel) || wakedelay_bpf__attach(skel)) {
		fprintf(stderr, "wakedelay: cannot load or attach: %s\n",
			strerror(errno));
		wakedelay_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	printf("held=%llu\n", (unsigned long long)skel->bss->held);
	wakedelay_bpf__destroy(skel);
	return 0;
}
