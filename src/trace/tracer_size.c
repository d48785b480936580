/*
 * How big a run's maps are and which of its programs load: lean
 * records, the flows and slots the workers share, the rings, the
 * arrivals table, the messages in flight. From the run's configuration
 * alone, before the object opens.
 */
#include <stdint.h>
#include <stdlib.h>

#include "stages.h"
#include "trace/tracer.h"
#include "trace/tracer_int.h"

/*
 * Records of tcp_rr can go without the recv and send length hooks
 * (bpf/stages.bpf.c, `lean`) where nothing else needs them.
 * NETSTAGE_BENCH_FULL_HOOKS=1 keeps them, for bench/overhead.sh.
 */
int tracer_can_be_lean(const struct tracer *t, const struct tracer_cfg *cfg)
{
	/* hist: a client that sends on its own clock reads unseen. */
	return !(cfg->hist_mode && cfg->open_loop) && !t->sched &&
	       !NS_IS_OBS(t->side) &&
	       !NS_IS_UDP(t->side) && !NS_IS_CRR(t->side) &&
	       !getenv("NETSTAGE_BENCH_FULL_HOOKS");
}

/*
 * Lean: the flows an end keeps stamps (hist) or records (records) for
 * in the maps BPF and the workers share. A server does not know its
 * clients' flows when it loads.
 */
uint32_t tracer_wcap(const struct tracer *t, const struct tracer_cfg *cfg)
{
	if (!t->lean)
		return 0;
	return cfg->flows ? cfg->flows : NS_FLOWS_UNKNOWN;
}

/*
 * Lean records: a flow's slots, more than the messages it can have in
 * flight (a worker reads message m's before m + slots can be written),
 * a power of two.
 */
uint32_t tracer_kslots(const struct tracer *t, const struct tracer_cfg *cfg)
{
	uint32_t n = 2;

	if (!t->lean || cfg->hist_mode)
		return 0;
	while (n <= cfg->inflight)
		n *= 2;
	return n;
}

/*
 * A worker's ring. observe's one ring holds a busy server's records
 * while its reader is off CPU: 4 MiB, about 20,000 records of 208
 * bytes, 0.19 s of memcached at the most this machine makes (105,000
 * gets a second) and 19 of observe's reads 10 ms apart. Not more: the
 * record is written where the ring's writer has come to, and a larger
 * ring is less often cached (16 MiB cost memcached's read 0.18 us more
 * a request here). The kernel lets a ring in the outer map differ in
 * size from the BPF object's template (Linux 5.10).
 */
uint32_t tracer_ring_bytes(const struct tracer *t)
{
	return NS_IS_OBS(t->side) ? NS_OBS_RING_BYTES : NS_RING_BYTES;
}

static uint32_t clamp_bits(int bits)
{
	if (bits < NS_ARRIVAL_SET_BITS_MIN)
		return NS_ARRIVAL_SET_BITS_MIN;
	return bits > NS_ARRIVAL_SET_BITS_MAX ? NS_ARRIVAL_SET_BITS_MAX : bits;
}

/*
 * The arrivals table's sets (bpf/arrival.bpf.h): one, four entries, for
 * each packet of the messages that can be in flight, so that a packet's
 * entry outlives the others that come before its socket takes it (1,000
 * flows on both ends lost none in 280,000 with 1,024 sets, at most 2
 * with 256); 4,096 sets when the flows are not known (observe; a
 * server knows its clients' from their HELLOs). A smaller table is
 * cheaper: its lines stay cached.
 */
uint32_t tracer_arrival_set_bits(const struct tracer_cfg *cfg)
{
	uint32_t size = cfg->rx_size > cfg->tx_size ? cfg->rx_size
						     : cfg->tx_size;
	uint32_t flows = cfg->flows ? cfg->flows : cfg->peer_flows;
	/* Packets a message, at 1,448 bytes (a veth's without GRO). */
	uint64_t want = (uint64_t)flows * (cfg->inflight + 1) *
			(cfg->both_ends ? 2 : 1) * (1 + size / 1448);
	uint32_t bits = NS_ARRIVAL_SET_BITS_MIN;
	const char *bench = getenv("NETSTAGE_BENCH_ARRIVAL_SET_BITS");

	/* bench/program-cost.sh: the table's cost by its size. */
	if (bench)
		return clamp_bits(atoi(bench));
	if (!flows)
		return NS_ARRIVAL_SET_BITS_UNKNOWN;
	while (bits < NS_ARRIVAL_SET_BITS_MAX && (1ull << bits) < want)
		bits++;
	return bits;
}

/*
 * The most messages a socket has in flight each way (bpf's `batch`):
 * a client's own; its server's from the client's HELLO (--local: the
 * same options). observe does not know its server's clients.
 */
uint32_t tracer_batch_of(const struct tracer *t, const struct tracer_cfg *cfg)
{
	if (NS_IS_OBS(t->side) || cfg->inflight > NS_SLOTS)
		return NS_SLOTS;
	return cfg->inflight;
}
