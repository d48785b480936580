/*
 * The log-linear histogram layout, shared by user space (src/hist.c) and
 * the BPF program (--trace=hist), so a bucket means the same on both
 * sides and BPF's counts copy straight into a struct hist.
 *
 * Values are nanoseconds. Below 2 * HIST_SUB they are counted exactly;
 * above, each power of two is split into HIST_SUB equal buckets.
 * Self-contained and branch-bounded: BPF has no count-leading-zeros,
 * so it finds the top bit by binary search (hist_msb_search()).
 */
#ifndef NETSTAGE_HIST_LAYOUT_H
#define NETSTAGE_HIST_LAYOUT_H

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Values up to 2^39 ns (549 s): past the 100 s the contract promises. */
#define HIST_TOP_BIT 38
#define HIST_BUCKETS (2 * HIST_SUB + (HIST_TOP_BIT - HIST_SUB_BITS) * HIST_SUB)
#define HIST_MAX_NS ((1ULL << (HIST_TOP_BIT + 1)) - 1)

/* Index of the highest set bit of v > 0, by binary search. */
static inline unsigned int hist_msb_search(unsigned long long v)
{
	unsigned int r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/*
 * User space has the instruction, and the client finds a bucket after
 * every transaction: one instruction where the search takes six
 * branches. Both give the same answer (tests/unit/t_hist.c).
 */
static inline unsigned int hist_msb(unsigned long long v)
{
#ifdef __bpf__
	return hist_msb_search(v);
#else
	return 63 - (unsigned int)__builtin_clzll(v | 1);
#endif
}

static inline unsigned int hist_index(unsigned long long ns)
{
	unsigned int msb, shift;

	if (ns > HIST_MAX_NS)
		ns = HIST_MAX_NS;
	if (ns < 2 * HIST_SUB)
		return (unsigned int)ns;
	msb = hist_msb(ns);
	shift = msb - HIST_SUB_BITS;
	/* (ns >> shift) is in [HIST_SUB, 2 * HIST_SUB). */
	return 2 * HIST_SUB + (msb - HIST_SUB_BITS - 1) * HIST_SUB +
	       (unsigned int)((ns >> shift) - HIST_SUB);
}

#endif
