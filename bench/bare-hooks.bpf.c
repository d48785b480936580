// SPDX-License-Identifier: GPL-2.0
/*
 * One program that returns at once. bench/bare-hooks.c attaches a copy
 * of it to each tracepoint it is given: what the kernel charges for
 * entering a hook, with nothing of netstage's around it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Its tracepoint is set before it loads (bpf_program__set_attach_target). */
SEC("tp_btf")
int bare(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
