/*
 * tcp_crr's two ends on two clocks: a connection's records carry its
 * client port on both ends, and nothing else they share (each end
 * numbers its own). TCP gives a port to another connection only after
 * its ephemeral range has gone round, seconds later: of the pairs of
 * records that share a port, those whose clock difference (the middle
 * of the bracket their four stamps make, clock.h) is the run's most
 * common one are each a connection's two records. The clocks are
 * fitted from those, and the ends then pair by port and time on the
 * client's clock as on one. The common difference is found among the
 * pairs of at most 20,000 client records spread over the run (a long
 * run reuses each port many times: every use pairs with every other),
 * then the pairs of every record within its window are fitted. Pure
 * arithmetic, no I/O.
 */
#ifndef NETSTAGE_TRACE_PORTFIT_H
#define NETSTAGE_TRACE_PORTFIT_H

#include "trace/clock.h"
#include "trace/join.h"

/*
 * The difference's spread the pairs are taken within: 2 ms, and 200
 * ppm of the client's records' span for the clocks' drift over it.
 */
#define PORTFIT_WIDTH_NS 2000000
#define PORTFIT_DRIFT_PPM 200

/*
 * Fit f from client records c and server records s (neither changed;
 * those kept as the slowest are left out). 0, or -1 if too few pairs
 * agree for clock_fit().
 */
int portfit(const struct join_table *c, const struct join_table *s,
	    struct clock_fit *f);

#endif
