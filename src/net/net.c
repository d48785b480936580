#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sys/busypoll.h"
#include "core/common.h"
#include "net/net.h"
#include "config/options.h"

#ifndef TCP_RTO_MIN_US
#define TCP_RTO_MIN_US 45	/* Linux 6.15; older headers lack it */
#endif

int net_family(const struct options *o)
{
	return o->ipv4 ? AF_INET : o->ipv6 ? AF_INET6 : AF_UNSPEC;
}

static int set_int(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

static int sys_fail(int fd, char *err, size_t len, const char *what)
{
	snprintf(err, len, "%s: %s", what, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static int call_cb(const struct options *o, const struct net_cb *cb, int fd,
		   const struct addr *a, int socktype, char *err, size_t len)
{
	if (cb && cb->data &&
	    net_set_congestion(o, fd, socktype, err, len)) {
		close(fd);
		return -1;
	}
	if (!cb || !cb->fn || !cb->fn(cb->arg, fd, a, socktype))
		return 0;
	snprintf(err, len, "a socket hook of the script failed");
	close(fd);
	return -1;
}

int net_listen(const struct options *o, int socktype, int port,
	       int reuseport, const struct net_cb *cb, char *err, size_t len)
{
	char where[80], what[120], host[NI_MAXHOST];
	struct addr a;
	int fd;

	if (net_resolve(o->local_host ? net_local_host(o->local_host, 0, host,
						      sizeof(host)) : NULL,
			port, net_family(o), &a, err, len))
		return -1;
	fd = socket(a.ss.ss_family, socktype | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sys_fail(-1, err, len, "socket");
	if (call_cb(o, cb, fd, &a, socktype, err, len))
		return -1;
	if (a.ss.ss_family == AF_INET6 && !o->ipv6)
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0);
	/* The control socket always reuses: a rerun must not wait out TIME_WAIT. */
	set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if ((reuseport || o->reuseport) &&
	    set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1))
		return sys_fail(fd, err, len, "setsockopt(SO_REUSEPORT)");
	net_addr_str(&a, where, sizeof(where));
	if (bind(fd, (struct sockaddr *)&a.ss, a.len)) {
		snprintf(what, sizeof(what), "bind %s", where);
		return sys_fail(fd, err, len, what);
	}
	if (socktype == SOCK_STREAM && listen(fd, o->listen_backlog))
		return sys_fail(fd, err, len, "listen");
	return fd;
}

static int wait_connected(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t sl = sizeof(int);
	int rc, soerr = 0;

	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
		return -1;
	errno = soerr;
	return soerr ? -1 : 0;
}

int net_connect(const struct options *o, int socktype, const struct addr *a,
		int from, int timeout_ms, const struct net_cb *cb, char *err,
		size_t len)
{
	char where[80], what[120], host[NI_MAXHOST];
	struct addr local;
	int fd;

	fd = socket(a->ss.ss_family, socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		return sys_fail(-1, err, len, "socket");
	if (call_cb(o, cb, fd, a, socktype, err, len))
		return -1;
	if (o->local_host) {
		if (net_resolve(net_local_host(o->local_host, from, host,
					       sizeof(host)),
				0, a->ss.ss_family, &local, err, len)) {
			close(fd);
			return -1;
		}
		/* The port is chosen at connect(), by the whole 4-tuple. */
		set_int(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1);
		if (bind(fd, (struct sockaddr *)&local.ss, local.len))
			return sys_fail(fd, err, len, "bind --local-host");
	}
	net_addr_str(a, where, sizeof(where));
	snprintf(what, sizeof(what), "connect to %s", where);
	if (connect(fd, (struct sockaddr *)&a->ss, a->len) &&
	    (errno != EINPROGRESS || wait_connected(fd, timeout_ms)))
		return sys_fail(fd, err, len, what);
	net_set_nonblock(fd, 0);
	return fd;
}

/* The algorithm the first TCP data connection had, read back from it. */
static char cc_seen[16];
static atomic_int cc_taken;

static void note_congestion(int fd)
{
	socklen_t n = sizeof(cc_seen) - 1;

	if (atomic_exchange(&cc_taken, 1))
		return;
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc_seen, &n))
		cc_seen[0] = '\0';
}

const char *net_congestion(void)
{
	return cc_seen[0] ? cc_seen : NULL;
}

/* --congestion refused: the kernel's errors, said in its terms. */
static int congestion_fail(const char *name, char *err, size_t len)
{
	const char *why = errno == ENOENT ? "no such algorithm in this kernel"
			  : errno == EPERM ? "not in net.ipv4.tcp_allowed_congestion_control for an unprivileged user"
			  : strerror(errno);

	snprintf(err, len, "option --congestion: '%s': %s", name, why);
	return -1;
}

int net_check_congestion(const struct options *o, char *err, size_t len)
{
	int fd, rc = 0;

	/* The option table gives it to TCP workloads alone. */
	if (!o->congestion)
		return 0;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sys_fail(-1, err, len, "socket");
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->congestion,
		       strlen(o->congestion)))
		rc = congestion_fail(o->congestion, err, len);
	close(fd);
	return rc;
}

int net_set_congestion(const struct options *o, int fd, int socktype,
		       char *err, size_t len)
{
	if (socktype != SOCK_STREAM || !o->congestion)
		return 0;
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->congestion,
		       strlen(o->congestion)))
		return congestion_fail(o->congestion, err, len);
	return 0;
}

int net_data_sockopts(const struct options *o, int fd, int socktype,
		      char *err, size_t len)
{
	/* Requests go out at once; bulk data is left to coalesce. */
	if (socktype == SOCK_STREAM && (o->workload & W_RR) &&
	    set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1))
		return sys_fail(-1, err, len, "setsockopt(TCP_NODELAY)");
	if (o->max_pacing_rate &&
	    setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &o->max_pacing_rate,
		       sizeof(o->max_pacing_rate)))
		return sys_fail(-1, err, len, "setsockopt(SO_MAX_PACING_RATE)");
	if (socktype == SOCK_STREAM && o->min_rto &&
	    set_int(fd, IPPROTO_TCP, TCP_RTO_MIN_US, o->min_rto * 1000))
		return sys_fail(-1, err, len,
				"setsockopt(TCP_RTO_MIN_US) for --min-rto");
	if (socktype == SOCK_STREAM)
		note_congestion(fd);
	if (o->debug && set_int(fd, SOL_SOCKET, SO_DEBUG, 1))
		return sys_fail(-1, err, len, "setsockopt(SO_DEBUG)");
	if (o->busy_poll)
		busy_poll_socket(fd, o->busy_poll);
	return 0;
}

int net_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

