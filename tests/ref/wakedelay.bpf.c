// SPDX-License-Identifier: GPL-2.0
/*
 * A test's late wake-up (tests/ref/wakedelay.c): on one CPU, each
 * wake-up call of a UDP socket in network namespace `netns` (the
 * test's own) is held `delay_ns`
 * before the kernel goes on, and with it the programs attached after
 * this one (netstage's). A datagram queued meanwhile on the other CPU
 * wakes the socket first: two senders' wake-up calls in the other
 * order than their datagrams queued, which on a busy host a vCPU
 * taken away between the two does now and then.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 netns;	/* its inode number */
const volatile __u32 cpu;
const volatile __u64 delay_ns;

__u64 held;	/* wake-up calls held */

static long until(__u64 i, void *end)
{
	return bpf_ktime_get_ns() >= *(__u64 *)end;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(hold, const struct sock *sk)
{
	__u64 end;

	if (bpf_get_smp_processor_id() != cpu ||
	    sk->sk_protocol != IPPROTO_UDP ||
	    sk->__sk_common.skc_net.net->ns.inum != netns)
		return 0;
	end = bpf_ktime_get_ns() + delay_ns;
	bpf_loop(1 << 20, until, &end, 0);
	__sync_fetch_and_add(&held, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
