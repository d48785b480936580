/*
 * Addresses: resolving a host and port, the --local-host list, ports
 * and text for messages. Nothing of the options: what parses or checks
 * an address before a test (options, /metrics) needs no socket code.
 */
#ifndef NETSTAGE_NETADDR_H
#define NETSTAGE_NETADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/*
 * Resolve host (NULL: the wildcard address) and port. The wildcard with
 * AF_UNSPEC is IPv6, made dual-stack by net_listen.
 */
int net_resolve(const char *host, int port, int family, struct addr *out,
		char *err, size_t len);

/* Address number i (modulo the count) of the --local-host list, in buf. */
const char *net_local_host(const char *list, int i, char *buf, size_t len);

/* The port of an IPv4 or IPv6 address, host order. */
uint16_t net_port_of(const struct sockaddr_storage *ss);

/* The local port of socket fd, host order; -1 if it has none. */
int net_local_port(int fd);

/* "addr:port" (IPv6 as "[addr]:port") for messages. */
void net_addr_str(const struct addr *a, char *buf, size_t len);

#endif
