/*
 * The kept records (keep.c): a uniform sample of a run's complete
 * transactions that both ends draw alike, and the slowest apart.
 * Workers account into their own store as they go
 * (trace_worker_account() of collect.h, which keep.c implements);
 * trace_keep() makes one set after the run.
 */
#ifndef NETSTAGE_TRACE_KEEP_H
#define NETSTAGE_TRACE_KEEP_H

#include <stdint.h>

#include "trace/collect.h"

/*
 * After the run (no record is accounted after it): the workers' kept
 * records together are at most `max`, each worker's in flow and
 * sequence order: all their complete transactions if there are no
 * more, else the TRACE_SLOWEST_PCT % of `max` longest (slowest set)
 * and a uniform sample (lowest priority) for the rest. Returns how
 * many they offered in all.
 */
uint64_t trace_keep(struct trace_worker **tw, int n, long max);
/*
 * A transaction's place in the sample: a hash of what names it on both
 * ends, so that they keep the same ones. A TCP request is named by its
 * connection's client port and the offset of its first byte in the
 * stream (off), which a client, a netstage server and an observer of
 * any server all know alike; off < 0 where it is not known (udp_rr):
 * by flow and number. A tcp_crr connection's one request: by its port.
 * Exposed for the unit tests.
 */
uint64_t trace_rec_priority(enum ns_side side, uint32_t flow_id,
			    uint64_t seq, uint16_t port, int64_t off);


#endif
