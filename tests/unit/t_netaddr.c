/*
 * Addresses (net/netaddr.h) without the network: literal addresses
 * resolve to themselves and print back, the --local-host list goes
 * round, a socket's local port is the one it was bound to.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/netaddr.h"

static void round_trip(const char *host, int family, int port,
		       const char *want)
{
	struct addr a;
	char err[128] = "", buf[80];

	assert_int_equal(net_resolve(host, port, family, &a, err, sizeof(err)),
			 0);
	assert_int_equal(net_port_of(&a.ss), port);
	net_addr_str(&a, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void t_literals_print_back(void **state)
{
	round_trip("127.0.0.1", AF_UNSPEC, 12865, "127.0.0.1:12865");
	round_trip("::1", AF_INET6, 1, "[::1]:1");
	round_trip("192.0.2.7", AF_INET, 65535, "192.0.2.7:65535");
	/* The wildcard for a listener: IPv6, made dual-stack later. */
	round_trip(NULL, AF_UNSPEC, 80, "[::]:80");
	round_trip(NULL, AF_INET, 80, "0.0.0.0:80");
}

static void t_a_bad_name_is_said(void **state)
{
	struct addr a;
	char err[128] = "";

	/* Not a literal of the family asked: no lookup can make it one. */
	assert_int_equal(net_resolve("::1", 1, AF_INET, &a, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "cannot resolve '::1': "));
}

static void t_the_local_host_list_goes_round(void **state)
{
	const char *list = "127.0.0.1,127.0.0.2,::1";
	char buf[64];

	assert_string_equal(net_local_host(list, 0, buf, sizeof(buf)),
			    "127.0.0.1");
	assert_string_equal(net_local_host(list, 2, buf, sizeof(buf)), "::1");
	assert_string_equal(net_local_host(list, 4, buf, sizeof(buf)),
			    "127.0.0.2");
	assert_string_equal(net_local_host("10.0.0.1", 7, buf, sizeof(buf)),
			    "10.0.0.1");
	/* Cut to the buffer, never past it. */
	assert_string_equal(net_local_host(list, 0, buf, 4), "127");
}

static void t_a_socket_s_local_port(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(net_local_port(fd), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	assert_int_equal(net_local_port(fd), ntohs(sin.sin_port));
	close(fd);
	assert_int_equal(net_local_port(fd), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_literals_print_back),
		cmocka_unit_test(t_a_bad_name_is_said),
		cmocka_unit_test(t_the_local_host_list_goes_round),
		cmocka_unit_test(t_a_socket_s_local_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
