/*
 * Two hosts' clocks aligned from the traffic itself (issue 42): each
 * traced transaction carries the four stamps NTP is built on, the
 * client's DEV_XMIT of the request and NETIF_RX of the response on its
 * clock, the server's NETIF_RX of the request and DEV_XMIT of the
 * response on its own. A wire leg is never below zero, so each
 * exchange brackets the clocks' difference: from above by the request
 * (server NETIF_RX - client DEV_XMIT), from below by the response
 * (server DEV_XMIT - client NETIF_RX).
 *
 * The estimator: the run cut into windows of equal counts; in each the
 * tightest bracket (the least forward difference, the greatest
 * backward one: a minimum filter, as NTP's and Huygens' are) after the
 * drift fitted so far is taken out; its middle is the window's offset
 * if the two wire legs' minima are equal; a least-squares line through
 * the windows' middles gives offset and drift, refitted three times so
 * that the drift inside a window does not widen its bracket. Pure
 * arithmetic, no I/O.
 */
#ifndef NETSTAGE_TRACE_CLOCK_H
#define NETSTAGE_TRACE_CLOCK_H

#include <stdint.h>

/* One transaction's stamps, ns: c_ on the client's clock, s_ on the server's. */
struct clock_exchange {
	uint64_t c_tx;		/* client DEV_XMIT of the request */
	uint64_t s_rx;		/* server NETIF_RX of it */
	uint64_t s_tx;		/* server DEV_XMIT of the response */
	uint64_t c_rx;		/* client NETIF_RX of it */
};

/* Windows the run is cut into, at most; each has CLOCK_MIN_PER_WINDOW. */
#define CLOCK_WINDOWS 16
#define CLOCK_MIN_PER_WINDOW 8

struct clock_fit {
	uint64_t t0;		/* client ns the offset is given at */
	/*
	 * Server clock - client clock at t0: base_ns + offset_ns (two
	 * hosts' monotonic clocks can be days apart, past a double's ns).
	 */
	int64_t base_ns;
	double offset_ns;
	double drift_ppm;	/* what the server's clock gains a second */
	/*
	 * If the wire legs' minima are equal (symmetric): how far the
	 * fitted line can be from the clocks' difference, the farthest
	 * window middle from it, plus the stamps' 1 ns.
	 */
	double bound_ns;
	/*
	 * Without that assumption, from causality alone: half the least
	 * round trip outside the server, plus the above. An asymmetry of
	 * the minima shifts the estimate by half their difference, which
	 * only this covers.
	 */
	double causal_ns;
	int windows;
	long exchanges;
	/* Exchanges with a wire leg below zero on the fitted clocks. */
	long negative;
};

/*
 * Fit the n exchanges (in any order; x is not changed). 0, or -1 if
 * there are fewer than CLOCK_MIN_PER_WINDOW or a window's bracket is
 * empty (its tightest request came before its tightest response could
 * allow: the stamps are not of one exchange, or a clock jumped).
 */
int clock_fit(const struct clock_exchange *x, long n, struct clock_fit *f);

/* Server clock - client clock at t0, ns, as one number (for show). */
static inline double clock_offset_ns(const struct clock_fit *f)
{
	return (double)f->base_ns + f->offset_ns;
}

/* A server stamp on the client's clock, by the fit, to the ns. */
uint64_t clock_to_client(const struct clock_fit *f, uint64_t server_ns);

#endif
