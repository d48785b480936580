/* Sockets: resolution, listening, connecting, per-socket options. */
#ifndef NETSTAGE_NET_H
#define NETSTAGE_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/netaddr.h"

struct options;

/* AF_INET, AF_INET6 or AF_UNSPEC from -4/-6. */
int net_family(const struct options *o);

/*
 * What a socket gets right after socket(), before bind or connect.
 * `data`: it is a data socket, which takes --congestion now (see
 * net_set_congestion()). fn, if any, is called with the address the
 * socket will have or reach (--script socket hooks); non-zero fails
 * the call.
 */
struct net_cb {
	int (*fn)(void *arg, int fd, const struct addr *a, int socktype);
	void *arg;
	int data;
};

/*
 * A listening TCP socket or a bound UDP socket on `port` (0: any).
 * reuseport makes several sockets share a port (one per server thread).
 */
int net_listen(const struct options *o, int socktype, int port,
	       int reuseport, const struct net_cb *cb, char *err, size_t len);

/*
 * Connect, bounded by timeout_ms; the socket is left blocking. With
 * --local-host, from its address number `from` (modulo the list's
 * length): each source address has a port space of its own.
 */
int net_connect(const struct options *o, int socktype, const struct addr *a,
		int from, int timeout_ms, const struct net_cb *cb, char *err,
		size_t len);

/*
 * Can this process give its TCP connections --congestion's algorithm?
 * Asked of a socket of its own before the run, so that a name the
 * kernel lacks, or refuses this user, is a usage error and not a run
 * that fails at its first connection. 0 if so (or no --congestion).
 */
int net_check_congestion(const struct options *o, char *err, size_t len);
/*
 * The congestion control this process's first TCP data connection had
 * (read back from the socket, whether --congestion chose it or the
 * system did), or NULL before any.
 */
const char *net_congestion(void);
/*
 * --congestion on a TCP data socket before its connection exists (a
 * connecting socket, or a listener whose connections inherit it). TCP
 * starts a connection's algorithm as the connection is established,
 * and BBR then turns on pacing, which a later change of algorithm
 * leaves on. 0, or -1 with err filled.
 */
int net_set_congestion(const struct options *o, int fd, int socktype,
		       char *err, size_t len);
/*
 * Options every data socket gets: TCP_NODELAY (rr), pacing, RTO,
 * SO_DEBUG.
 */
int net_data_sockopts(const struct options *o, int fd, int socktype,
		      char *err, size_t len);

int net_set_nonblock(int fd, int on);

#endif
