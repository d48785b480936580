/*
 * Whose clock a side's stamps are on. Every stamp netstage takes is
 * CLOCK_MONOTONIC, which two processes share exactly when they run
 * under one kernel since one boot: the boot id names it. Two models of
 * one id compare directly; of two ids, the waterfall aligns the
 * server's clock to the client's from the traffic (trace/clock.h).
 *
 * NETSTAGE_TEST_CLOCK_SKEW=OFFSET_NS,PPM (for tests only) makes a
 * side's clock wrong on purpose: every stamp t of its kept records,
 * kernel and user alike, becomes t + OFFSET_NS + t * PPM / 10^6 (a
 * clock that gained PPM since boot), and its id is made its own, so
 * that one host shows what two hosts' clocks do and a test can undo
 * it exactly.
 */
#ifndef NETSTAGE_CLOCK_ID_H
#define NETSTAGE_CLOCK_ID_H

#include <stddef.h>
#include <stdint.h>

#include "trace/rec.h"

#define CLOCK_ID_LEN 48

struct clock_skew {
	int on;
	int64_t offset_ns;
	double ppm;
};

/*
 * How far CLOCK_REALTIME and CLOCK_TAI are ahead of CLOCK_MONOTONIC
 * now, ns, each read between two monotonic reads (the tightest of a
 * few): what moves a side's stamps onto a clock two hosts share when
 * PTP disciplines it (--clock).
 */
void clock_offsets_read(int64_t *realtime_ns, int64_t *tai_ns);

/* This host's id (its boot id) into id; "" if it cannot be read. */
void clock_id_read(char *id, size_t len);
/*
 * The skew NETSTAGE_TEST_CLOCK_SKEW asks for into s (s->on 0 if none):
 * 0, or -1 with a one-line reason in err.
 */
int clock_skew_from_env(struct clock_skew *s, char *err, size_t len);
/* s applied to every stamp of set, and to id. */
void clock_skew_apply(const struct clock_skew *s, struct rec_set *set,
		      char *id, size_t len);

#endif
