#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net/netaddr.h"

int net_resolve(const char *host, int port, int family, struct addr *out,
		char *err, size_t len)
{
	struct addrinfo hints = { .ai_family = family }, *ai;
	char service[16];
	int rc;

	if (!host && family == AF_UNSPEC)
		hints.ai_family = AF_INET6;
	hints.ai_flags = host ? AI_ADDRCONFIG : AI_PASSIVE;
	snprintf(service, sizeof(service), "%d", port);
	rc = getaddrinfo(host, service, &hints, &ai);
	if (rc == EAI_ADDRFAMILY || (rc && !host && !family)) {
		hints.ai_family = host ? family : AF_INET;
		hints.ai_flags &= ~AI_ADDRCONFIG;
		rc = getaddrinfo(host, service, &hints, &ai);
	}
	if (rc) {
		snprintf(err, len, "cannot resolve '%s': %s",
			 host ? host : "*", gai_strerror(rc));
		return -1;
	}
	memcpy(&out->ss, ai->ai_addr, ai->ai_addrlen);
	out->len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

const char *net_local_host(const char *list, int i, char *buf, size_t len)
{
	const char *p = list, *end;
	int n = 1;

	for (end = list; *end; end++)
		n += *end == ',';
	for (i %= n; i > 0; i--)
		p = strchr(p, ',') + 1;
	end = strchrnul(p, ',');
	snprintf(buf, len, "%.*s", (int)(end - p), p);
	return buf;
}

uint16_t net_port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

int net_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -1;
	return net_port_of(&ss);
}

void net_addr_str(const struct addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&a->ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%d", host, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)&a->ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%d", host, ntohs(s4->sin_port));
	}
}
