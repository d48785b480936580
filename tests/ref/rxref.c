// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' reference timer of the receive stages and of tcp_tx's bounds
 * (tests/ref/rxref.bpf.c):
 *
 *   rxref PORT [SAMPLE]
 *
 * attaches, prints "attached", and at SIGINT or SIGTERM prints for each
 * side and stage (softirq_rx, tcp_rx, udp_rx; tcp_tx_queued and
 * tcp_tx_sent, tcp_tx's bounds; the worker's stages' bounds, wakeup_lo
 * and wakeup_hi and so on; udp_rr's app and to_app too) its count, p50
 * and p90 in us, as key=value lines (client.softirq_rx_p50_us=0.805):
 * what the tests hold netstage's stages against. With SAMPLE, the worker's stages are those of the
 * messages netstage's --trace-sample SAMPLE times.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rxref.skel.h"

#define BUCKETS 10000	/* as rxref.bpf.c: 10 ns each */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Bucket b's middle, in us: buckets are 10 ns wide. */
static double quantile(const unsigned long long *h, unsigned long long n,
		       double q)
{
	unsigned long long acc = 0;
	int b;

	for (b = 0; b < BUCKETS; b++) {
		acc += h[b];
		if (acc && acc >= q * n)
			return (b * 10 + 5) / 1000.0;
	}
	return 0;
}

static void print_hist(int fd, int ncpu, int row, const char *name)
{
	unsigned long long h[BUCKETS] = { 0 }, n = 0, v[ncpu];
	__u32 k;
	int b, c;

	for (b = 0; b < BUCKETS; b++) {
		k = row * BUCKETS + b;
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (c = 0; c < ncpu; c++)
			h[b] += v[c];
		n += h[b];
	}
	printf("%s_count=%llu\n", name, n);
	printf("%s_p50_us=%.3f\n", name, quantile(h, n, 0.5));
	printf("%s_p90_us=%.3f\n", name, quantile(h, n, 0.9));
}

int main(int argc, char **argv)
{
	static const char *rows[] = { "client.softirq_rx", "server.softirq_rx",
				      "client.tcp_rx", "server.tcp_rx",
				      "client.udp_rx", "server.udp_rx",
				      "client.tcp_tx_queued", "server.tcp_tx_queued",
				      "client.tcp_tx_sent", "server.tcp_tx_sent",
				      "client.wakeup_lo", "server.wakeup_lo",
				      "client.wakeup_hi", "server.wakeup_hi",
				      "client.recv_call_lo", "server.recv_call_lo",
				      "client.recv_call_hi", "server.recv_call_hi",
				      "client.send_call_lo", "server.send_call_lo",
				      "client.send_call_hi", "server.send_call_hi",
				      "client.send_return_lo",
				      "server.send_return_lo",
				      "client.send_return_hi",
				      "server.send_return_hi",
				      "client.to_app_lo", "server.app_lo",
				      "client.to_app_hi", "server.app_hi" };
	struct rxref_bpf *skel;
	int ncpu = libbpf_num_possible_cpus(), i;

	if (argc < 2 || argc > 3 || atoi(argv[1]) <= 0 ||
	    atoi(argv[1]) > 65535 || (argc == 3 && atoi(argv[2]) <= 0)) {
		fprintf(stderr, "usage: rxref PORT [SAMPLE]\n");
		return 2;
	}
	skel = rxref_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->port = atoi(argv[1]);
	skel->rodata->sample = argc == 3 ? atoi(argv[2]) : 0;
	if (rxref_bpf__load(skel) || rxref_bpf__attach(skel)) {
		fprintf(stderr, "rxref: cannot load or attach: %s\n",
			strerror(errno));
		rxref_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	for (i = 0; i < (int)(sizeof(rows) / sizeof(rows[0])); i++)
		print_hist(bpf_map__fd(skel->maps.hist), ncpu, i, rows[i]);
	rxref_bpf__destroy(skel);
	return 0;
}
