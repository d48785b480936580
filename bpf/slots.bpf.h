/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A message's slot of kernel stamps: which messages are timed, where
 * each one's stamps live in its socket's storage, and the kernel stages
 * measured from them.
 * Part of stages.bpf.c, included in this order: config, maps, slots,
 * record, arrival, udp.
 */
#ifndef NETSTAGE_SLOTS_BPF_H
#define NETSTAGE_SLOTS_BPF_H

/* Is message m timed? */
static __always_inline int sampled(__u32 m)
{
	return ns_timed(m, sample, control);
}

/*
 * Can a message that may be arriving now, from `next` (the first not
 * read whole) on, be timed? Without reading the TCP socket.
 */
static __always_inline int sampled_ahead(__u32 next)
{
	return sample <= 1 || (sample - next % sample) % sample < inflight;
}

/* Message m's stamps, by enum ns_kboundary. */
static __always_inline __u64 *slot(struct ns_sk *st, __u32 m)
{
	return st->slot[NS_SLOT(m)];
}

static __always_inline void clear_slot(__u64 *sl)
{
	int i;

	for (i = 0; i < NS_K_COUNT; i++)
		sl[i] = 0;
}

static __always_inline void stamp_once(__u64 *sl, int k, __u64 now)
{
	if (!sl[k])
		sl[k] = now;
}

struct kstage {
	__u8 side, from, to;
};

#define KDEF(s, name, f, t) { NS_##s, NS_K_##f, NS_K_##t },
static const struct kstage kstages[] = { NS_KSTAGES(KDEF) };
#undef KDEF

/* Each kernel boundary's enum ns_boundary, for the record. */
static const __u8 kb[NS_K_COUNT] = NS_K_TO_B;

static __always_inline void count(const struct ns_sk *st, __u32 which)
{
	bump(&kcounts, (st->side & 1) * 2 + which);
}

#define NKSTAGES (sizeof(kstages) / sizeof(kstages[0]))

/* Side s's stages are consecutive in kstages[]: the first, and how many. */
static __always_inline __u32 kfirst(int s)
{
	__u32 i;

	for (i = 0; i < NKSTAGES; i++)
		if (kstages[i].side == s)
			return i;
	return 0;
}

static __always_inline __u32 kcount(int s)
{
	__u32 i, n = 0;

	for (i = 0; i < NKSTAGES; i++)
		n += kstages[i].side == s;
	return n;
}

/*
 * Where side's stages start in kstages[], and how many. Each case is a
 * constant the compiler folds from kstages[] itself: account() walks
 * its own side's stages, not the whole table (10 ns of the hand-off's
 * 250 at a server, bpf_stats).
 */
static __always_inline __u32 kstages_of(int side, __u32 *first)
{
	switch (side) {
#define KRANGE(s) case s: *first = kfirst(s); return kcount(s);
	KRANGE(NS_CLIENT)
	KRANGE(NS_SERVER)
	KRANGE(NS_CLIENT_UDP)
	KRANGE(NS_SERVER_UDP)
	KRANGE(NS_CLIENT_CRR)
	KRANGE(NS_SERVER_CRR)
#undef KRANGE
	}
	return 0;
}

/* A kernel stage's duration, or 0 if a boundary is missing or misordered. */
static __always_inline __u64 kspan(const __u64 *sl, __u32 i, int *bad)
{
	__u32 f = kstages[i].from, t = kstages[i].to;
	__u64 from, to;

	if (f >= NS_K_COUNT || t >= NS_K_COUNT) {
		*bad = 1;
		return 0;
	}
	from = sl[f];
	to = sl[t];
	if (!from || !to || to < from)
		*bad = 1;
	return to - from;
}

/*
 * --trace=hist: time the kernel stages of transaction m here. A reader
 * faster than its wake-up call saw the data by RECV_RET at the latest.
 * A global function: the verifier checks it once, on its own, instead
 * of once per path of every program that ends a transaction.
 */
__noinline int account(struct ns_sk *st, __u32 m)
{
	__u32 i, n, k, b, first = 0;
	__u64 d[NS_MAX_KSTAGES], *sl;
	struct khist *h;
	int bad = 0;

	if (!st)
		return 0;
	k = (st->side & 1) * NS_MAX_KSTAGES;
	sl = slot(st, m);
	if (!sl[NS_K_DATA_READY] || sl[NS_K_DATA_READY] > sl[NS_K_RECV_RET])
		sl[NS_K_DATA_READY] = sl[NS_K_RECV_RET];
	n = kstages_of(st->side, &first);
	for (i = 0; i < NS_MAX_KSTAGES && i < n; i++)
		d[i] = kspan(sl, first + i, &bad);
	if (bad) {
		count(st, 1);
		return 0;
	}
	for (i = 0; i < NS_MAX_KSTAGES && i < n; i++, k++) {
		h = bpf_map_lookup_elem(&khists, &k);
		b = hist_index(d[i]);
		if (h && b < HIST_BUCKETS)
			h->b[b]++;
	}
	count(st, 0);
	return 0;
}

/*
 * The message a recv or a send of the socket is part of. UDP pairs a
 * response with its request by turn, not by counting each way: a lost
 * request has no response, and the next one's must not take its slot.
 */
static __always_inline __u32 rx_msg(const struct ns_sk *st)
{
	if (NS_IS_UDP(side) && !NS_IS_SERVER(st->side))
		return st->tx_msgs - 1;
	return st->rx_msgs;
}

static __always_inline __u32 tx_msg(const struct ns_sk *st)
{
	if (NS_IS_UDP(side) && NS_IS_SERVER(st->side))
		return st->rx_msgs - 1;
	return st->tx_msgs;
}

#endif
