/*
 * The hooks of the stage model: which program serves each (fentry
 * where the kernel allows it, else the tracepoint inside the same
 * function), which sides use it, and what the kernel lacks of them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/common.h"
#include "trace/kbtf.h"
#include "trace/tracer_int.h"

const struct hook tracer_hook_table[NS_P_COUNT] = {
	/* Every packet the machine receives: NETIF_RX. */
	[NS_P_ARRIVAL] = { "netif_receive_skb", NULL, "netif_receive_skb", 0,
		"the kernel has no netif_receive_skb tracepoint: "
		"NETIF_RX is the kernel's receive stamp, which "
		"loopback and veth take after IP receive and "
		"netfilter" },
	[NS_P_DATA_READY] = { "sk_data_ready", NULL, "sk_data_ready", 0,
		NULL, 0, 1 },
	[NS_P_RECV] = { "sock_recv_length", NULL, "sock_recv_length", 0 },
	[NS_P_TCP_SEND] = { "tcp_sendmsg_locked", NULL, "tcp_sendmsg_locked",
		ONLY_OBSERVE },
	[NS_P_XMIT] = { "dev_hard_start_xmit", "dev_hard_start_xmit",
		"net_dev_start_xmit", 0, NULL, 1, 1 },
	[NS_P_SEND] = { "sock_send_length", NULL, "sock_send_length", 0 },
	[NS_P_STATE] = { "inet_sock_set_state", NULL, "inet_sock_set_state",
		ONLY_CONNECTIONS },
	/* Every syscall of the machine: only observe needs it (POLL_RET). */
	[NS_P_SYSEXIT] = { "sys_exit", NULL, "sys_exit", ONLY_OBSERVE,
		"the kernel has no sys_exit tracepoint: POLL_RET is "
		"not stamped, so wakeup is 0 and recv_call holds the "
		"wait" },
	/* Every wake-up and context switch of the machine: --trace-sched. */
	[NS_P_WAKEUP] = { "sched_wakeup", NULL, "sched_wakeup", ONLY_SCHED,
		"the kernel has no sched_wakeup tracepoint: WOKEN is "
		"not stamped, so the wake-up counts as busy" },
	[NS_P_SWITCH] = { "sched_switch", NULL, "sched_switch", ONLY_SCHED,
		"the kernel has no sched_switch tracepoint: ON_CPU is "
		"not stamped, so the wake-up counts as busy" },
	/* Runs only when TCP resends: RETRANS, and the counts. */
	[NS_P_RETRANS] = { "tcp_retransmit_skb", NULL, "tcp_retransmit_skb",
		ONLY_TCP, "the kernel has no tcp_retransmit_skb "
		"tracepoint: retransmissions are not counted or "
		"marked" },
};

/* Does this side (and --trace-sched) use hook h? */
int tracer_hook_used(const struct hook *h, enum ns_side side, int sched)
{
	if (h->only == ONLY_OBSERVE)
		return NS_IS_OBS(side);
	if (h->only == ONLY_SCHED)
		return sched;
	if (h->only == ONLY_CONNECTIONS)
		return NS_IS_CRR(side) || NS_IS_OBS(side);
	if (h->only == ONLY_TCP)
		return !NS_IS_UDP(side);
	return 1;
}

struct bpf_program *tracer_hook_prog(const struct bpf_object *obj,
				     const struct hook *h,
				     const struct tracer *t, int fentry)
{
	const char *name = fentry ? h->fentry : h->tp_btf;
	char own[64];

	if (!name)
		return NULL;
	if (h->obs_own && NS_IS_OBS(t->side)) {
		snprintf(own, sizeof(own), "obs_%s", name);
		name = own;
	} else if (h->many_own && !NS_IS_OBS(t->side) &&
		   t->batch >= TRACER_MANY) {
		snprintf(own, sizeof(own), "many_%s", name);
		name = own;
	}
	return bpf_object__find_program_by_name(obj, name);
}

/*
 * Does the kernel have this tracepoint (the BTF type tp_btf attaches
 * by)? NETSTAGE_TRACE_PRETEND_MISSING=a,b takes tracepoints a and b as
 * missing: how the tests run what an older kernel would.
 */
static int kernel_has(const struct kbtf *vmlinux, const char *tp)
{
	const char *p = getenv("NETSTAGE_TRACE_PRETEND_MISSING");
	size_t n = strlen(tp);
	char type[128];

	while (p && *p) {
		if (!strncmp(p, tp, n) && (p[n] == ',' || !p[n]))
			return 0;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	snprintf(type, sizeof(type), "btf_trace_%s", tp);
	return kbtf_find(vmlinux, type, BTF_KIND_TYPEDEF) > 0;
}

/* The arguments tracepoint tp passes (its BTF prototype's), or -1. */
static int tp_args(const struct kbtf *vmlinux, const char *tp)
{
	const struct btf_type *p;
	char type[128];
	int id;

	snprintf(type, sizeof(type), "btf_trace_%s", tp);
	id = kbtf_find(vmlinux, type, BTF_KIND_TYPEDEF);
	p = id > 0 ? kbtf_type(vmlinux, id) : NULL;
	/* The typedef (and any qualifier) to the pointer, to the proto. */
	while (p && (btf_is_typedef(p) || btf_is_mod(p)))
		p = kbtf_type(vmlinux, p->type);
	if (!p || !btf_is_ptr(p))
		return -1;
	p = kbtf_type(vmlinux, p->type);
	/* The first is the tracepoint's own data. */
	return p && btf_is_func_proto(p) ? btf_vlen(p) - 1 : -1;
}

/*
 * Does the kernel take an fentry program on function fn? A refused
 * fentry costs a whole load of the object (its BTF parsed again, its
 * programs verified up to the refused one, 0.1 s here): a program of
 * two instructions asks first. 1 when it cannot tell: loading decides.
 */
static int fentry_taken(const struct kbtf *vmlinux, const char *fn)
{
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int id = kbtf_find(vmlinux, fn, BTF_KIND_FUNC), fd;
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = id);

	if (id <= 0)
		return 1;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ns_fentry_probe", "GPL",
			   ret0, 2, &o);
	/* 524: the kernel's own ENOTSUPP, which user space has no name for. */
	if (fd < 0)
		return errno != EPERM && errno != EOPNOTSUPP && errno != 524;
	close(fd);
	return 1;
}

/*
 * Which used hooks' tracepoints the kernel lacks. A hook that can be
 * done without is left out with a note; any other ends tracing: 0, or
 * -1 with `why`. Without kernel BTF, loading says why. A hook with an
 * fentry program may serve without its tracepoint: loading decides.
 */
int tracer_find_missing(struct tracer *t, char *why, size_t len)
{
	struct kbtf btf, *vmlinux = &btf;
	size_t i;

	if (kbtf_open(vmlinux, NULL)) {
		log_info("kernel BTF not read: loading will say what is "
			 "missing");
		return 0;
	}
	t->retrans_err = tp_args(vmlinux, "tcp_retransmit_skb") >= 3;
	t->no_fentry = !fentry_taken(vmlinux, "dev_hard_start_xmit");
	for (i = 0; i < NS_P_COUNT; i++) {
		const struct hook *h = &tracer_hook_table[i];

		if (!tracer_hook_used(h, t->side, t->sched) || h->fentry ||
		    kernel_has(vmlinux, h->tp_btf))
			continue;
		if (!h->without) {
			snprintf(why, len, "tracing off: the kernel has no %s "
				 "tracepoint", h->tp_btf);
			kbtf_close(vmlinux);
			return -1;
		}
		t->missing[i] = 1;
		t->note = h->without;
	}
	kbtf_close(vmlinux);
	return 0;
}

void tracer_kernel_features(FILE *f)
{
	struct kbtf btf, *vmlinux = &btf;
	struct utsname u;
	size_t i;

	if (uname(&u))
		strcpy(u.release, "?");
	if ((i = kbtf_open(vmlinux, NULL)) == (size_t)-2) {
		fprintf(f, "kernel %s: BTF this netstage cannot read ahead "
			"of loading: hooks not probed\n", u.release);
		return;
	}
	if (i) {
		fprintf(f, "kernel %s: no BTF (/sys/kernel/btf/vmlinux): "
			"--trace and observe cannot run\n", u.release);
		return;
	}
	fprintf(f, "kernel %s: BTF; fentry %s\n", u.release,
		geteuid() ? "not known (ask as root)"
		: fentry_taken(vmlinux, "dev_hard_start_xmit") ? "taken"
		: "refused (the tracepoints serve)");
	fprintf(f, "tracepoints:");
	for (i = 0; i < NS_P_COUNT; i++)
		fprintf(f, " %s%s", tracer_hook_table[i].tp_btf,
			kernel_has(vmlinux, tracer_hook_table[i].tp_btf) ? ""
			: " (missing)");
	fprintf(f, "\n");
	kbtf_close(vmlinux);
}
