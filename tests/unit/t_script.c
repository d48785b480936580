/*
 * The script engine without a network: a stand-in for the test run
 * makes three workers' states, calls their hooks from three threads and
 * then from this one. The scripts assert what they must see after run()
 * (exact values), so script_main's status is the verdict; the C side
 * checks what the hooks hand back to the data path.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include <cmocka.h>

#include "core/common.h"
#include "net/net.h"
#include "config/options.h"
#include "script/script.h"
#include "side/side.h"
#include "sys/stop.h"
#include "config/workload.h"

#define NW 3
#define CALLS 5

static struct addr addr;
static int (*stage)(struct script *sc);

static void *worker_thread(void *arg)
{
	struct script_worker *sw = arg;
	int i;

	for (i = 0; i < CALLS; i++)
		script_socket_hook(sw, HOOK_CLIENT_SOCKET, 100 + i, &addr,
				   SOCK_STREAM);
	script_socket_hook(sw, HOOK_CLIENT_CLOSE, 100, &addr, SOCK_STREAM);
	return NULL;
}

/* What run() runs here: hooks in NW threads at once, then `stage`. */
static int fake_run(struct options *o, const struct workload *wl)
{
	struct script *sc = script_current();
	struct script_worker *sw[NW];
	pthread_t t[NW];
	int i;

	for (i = 0; i < NW; i++)
		sw[i] = script_worker(sc, i);
	for (i = 0; i < NW; i++)
		pthread_create(&t[i], NULL, worker_thread, sw[i]);
	for (i = 0; i < NW; i++)
		pthread_join(t[i], NULL);
	return stage ? stage(sc) : 0;
}

static int run_script(const char *text)
{
	char path[] = "/tmp/t_script.XXXXXX";
	int fd = mkstemp(path), rc;
	struct options o;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	memset(&o, 0, sizeof(o));
	o.script = path;
	rc = script_main(&o, &tcp_rr_workload, fake_run);
	unlink(path);
	return rc;
}

/*
 * Two hooks share an upvalue (a number) and a table; a table refers to
 * itself. Each worker has its own copies, shared between its hooks.
 */
static void t_hooks_share_upvalues_per_worker(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"local calls, sum = 0, 0\n"
		"local shared = { n = 0 }\n"
		"local cyc = {}; cyc.self = cyc\n"
		"local seen = collect({})\n"
		"client_socket(function(fd) calls = calls + 1; sum = sum + fd\n"
		"  shared.n = shared.n + 1 end)\n"
		"client_close(function(fd)\n"
		"  seen = { calls = calls, sum = sum, n = shared.n,\n"
		"           cyc = cyc.self == cyc and cyc.self.self == cyc } end)\n"
		"run()\n"
		"assert(#seen == 3, 'one value per worker')\n"
		"for i = 1, 3 do\n"
		"  assert(seen[i].calls == 5 and seen[i].n == 5)\n"
		"  assert(seen[i].sum == 100 + 101 + 102 + 103 + 104)\n"
		"  assert(seen[i].cyc == true)\n"
		"end\n"
		"assert(calls == 0 and shared.n == 0, 'main copy untouched')\n"),
		0);
}

/* A collected value never assigned in a worker: its initial value. */
static void t_collect_keeps_the_initial_value(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"local a = collect(7)\n"
		"local b = collect('x')\n"
		"client_socket(function(fd) a = fd end)\n"
		"run()\n"
		"assert(#a == 3 and a[1] == 104 and a[3] == 104)\n"
		"assert(#b == 3 and b[1] == 'x' and b[2] == 'x')\n"
		"assert(getmetatable(a) == nil)\n"), 0);
}

/* Globals the script set before run() reach the hooks, as copies. */
static void t_globals_are_copied(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"limit = 41\n"
		"function bump(x) return x + 1 end\n"
		"local got = collect(0)\n"
		"client_socket(function(fd) got = bump(limit) end)\n"
		"run()\n"
		"for i = 1, 3 do assert(got[i] == 42) end\n"), 0);
}

static char hook_buf[16];

/* Metatables come along; the standard files are the worker's own. */
static void t_metatables_and_std_files(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"local Point = {}\n"
		"Point.__index = Point\n"
		"function Point:norm1() return self.x + self.y end\n"
		"local p = setmetatable({ x = 3, y = 4 }, Point)\n"
		"local err = io.stderr\n"
		"local got = collect(0)\n"
		"client_socket(function(fd)\n"
		"  assert(err == io.stderr)\n"
		"  got = p:norm1() end)\n"
		"run()\n"
		"for i = 1, 3 do assert(got[i] == 7) end\n"), 0);
}

/* Packet hooks: what they return and write reaches the data path. */
static int packet_stage(struct script *sc)
{
	struct script_worker *sw = script_worker(sc, 0);
	struct iovec iov = { hook_buf, sizeof(hook_buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	memset(hook_buf, 0, sizeof(hook_buf));
	r = script_packet_hook(sw, HOOK_CLIENT_RECVMSG, 5, &m, 0);
	assert_int_equal(r, 5);
	assert_string_equal(hook_buf, "hello");
	/* -1 after a failed call: errno is that call's. */
	errno = 0;
	r = script_packet_hook(sw, HOOK_CLIENT_SENDMSG, -1, &m, 0);
	assert_int_equal(r, -1);
	assert_int_equal(errno, EBADF);
	assert_false(script_failed(sc));
	return 0;
}

static void t_packet_hooks_fill_and_fail(void **state)
{
	stage = packet_stage;
	assert_int_equal(run_script(
		"client_recvmsg(function(fd, msg, flags)\n"
		"  assert(fd == 5 and msg.msg_iov[0].iov_len == 16)\n"
		"  return msg.msg_iov[0].iov_base:fill('hello') end)\n"
		"client_sendmsg(function(fd, msg, flags)\n"
		"  local n, err = sendmsg(fd, msg, flags)\n"
		"  assert(not n and err.errno == EBADF and err.name == 'EBADF')\n"
		"  return -1 end)\n"), 0);
}

static int wrong_type_stage(struct script *sc)
{
	struct script_worker *sw = script_worker(sc, 1);
	struct iovec iov = { hook_buf, sizeof(hook_buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	assert_int_equal(script_packet_hook(sw, HOOK_SERVER_RECVMSG, 5, &m, 0),
			 -1);
	assert_int_equal(errno, ECANCELED);
	assert_true(script_failed(sc));
	assert_non_null(strstr(script_error(sc), "returned a table"));
	/* A failed state calls no hook again. */
	assert_int_equal(script_packet_hook(sw, HOOK_SERVER_RECVMSG, 5, &m, 0),
			 -1);
	return 0;
}

static void t_hook_returning_a_table_fails_the_run(void **state)
{
	stage = wrong_type_stage;
	assert_int_equal(run_script(
		"server_recvmsg(function() return {} end)\n"), EXIT_RUNTIME);
}

/* An error in one worker's hook fails the run; the others ran. */
static void t_hook_error_fails_the_run(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"client_close(function(fd) error('closing') end)\n"
		"run()\n"
		"error('not reached: run() raises the hook error')\n"),
		EXIT_RUNTIME);
}

/* Copy failures: a coroutine in an upvalue, a hook registered late. */
static void t_uncopyable_upvalue_fails(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"local co = coroutine.create(print)\n"
		"client_socket(function() return co end)\n"), EXIT_RUNTIME);
	assert_int_equal(run_script("run()\nclient_socket(print)\n"),
			 EXIT_RUNTIME);
}

/* Socket API pieces that need no traffic: addresses and options. */
static void t_socket_api_values(void **state)
{
	stage = NULL;
	assert_int_equal(run_script(
		"local a = sockaddr_in(80, '10.1.2.3')\n"
		"assert(tostring(a) == '10.1.2.3:80' and a.port == 80)\n"
		"assert(a.sin_addr == in_addr('10.1.2.3'))\n"
		"assert(tostring(sockaddr_in6(9, '::1')) == '[::1]:9')\n"
		"assert(S.AF_INET == AF_INET and S.c.AF.INET == AF_INET)\n"
		"assert(bit.bor(1, 2, 4) == 7 and bit.band(-1, 0xff) == 255)\n"
		"assert(bit.lshift(1, 31) == -2147483648)\n"
		"assert(bit.rshift(-1, 28) == 15 and bit.arshift(-16, 2) == -4)\n"
		"assert(table.maxn({ [3] = 1, [10] = 2, x = 3 }) == 10)\n"
		"local fd = assert(socket(AF_INET, SOCK_DGRAM))\n"
		"assert(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 65536))\n"
		"assert(getsockopt(fd, SOL_SOCKET, SO_RCVBUF) >= 65536)\n"
		"assert(setsockopt(fd, SOL_SOCKET, SO_LINGER, {onoff=1, linger=3}))\n"
		"local lg = getsockopt(fd, SOL_SOCKET, SO_LINGER)\n"
		"assert(lg.onoff == 1 and lg.linger == 3)\n"
		"assert(bind(fd, sockaddr_in(0, '127.0.0.1')))\n"
		"local me = getsockname(fd)\n"
		"assert(sendto(fd, 'ping', 4, 0, me) == 4)\n"
		"local m = msghdr(16)\n"
		"assert(recvmsg(fd, m, 0) == 4 and m:data(4) == 'ping')\n"
		"assert(m.msg_name == me)\n"
		"local n, err = recv(fd, 4, MSG_DONTWAIT)\n"
		"assert(n == nil and err.errno == EAGAIN)\n"
		"assert(tostring(err) == 'Resource temporarily unavailable')\n"
		"assert(close(fd))\n"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_hooks_share_upvalues_per_worker),
		cmocka_unit_test(t_collect_keeps_the_initial_value),
		cmocka_unit_test(t_globals_are_copied),
		cmocka_unit_test(t_metatables_and_std_files),
		cmocka_unit_test(t_packet_hooks_fill_and_fail),
		cmocka_unit_test(t_hook_returning_a_table_fails_the_run),
		cmocka_unit_test(t_hook_error_fails_the_run),
		cmocka_unit_test(t_uncopyable_upvalue_fails),
		cmocka_unit_test(t_socket_api_values),
	};

	install_signal_handlers();
	addr.ss.ss_family = AF_INET;
	addr.len = sizeof(struct sockaddr_in);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
