/*
 * Joining a request's records along its path, on synthetic records:
 * the rows of a plan, which record of each hop belongs to a client
 * transaction, and rows that add up to the client's latency exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

#include "trace/join.h"
#include "trace/merge.h"

/* A client transaction from t0 to t0 + 100 us, on port. */
static void client(struct join_rec *r, uint64_t t0, uint16_t port)
{
	memset(r, 0, sizeof(*r));
	r->port = port;
	r->b[NS_B_APP_SEND] = t0;
	r->b[NS_B_TCP_SEND] = t0 + 1000;
	r->b[NS_B_DEV_XMIT] = t0 + 2000;
	r->b[NS_B_NETIF_RX] = t0 + 98000;
	r->b[NS_B_TCP_RX] = t0 + 98500;
	r->b[NS_B_DATA_READY] = t0 + 99000;
	r->b[NS_B_EPOLL_RET] = t0 + 99300;
	r->b[NS_B_RECV_RET] = t0 + 99600;
	r->b[NS_B_APP_DONE] = t0 + 100000;
}

/* An observed server's transaction from `in` to `out`. */
static void observed(struct join_rec *r, uint64_t in, uint64_t out,
		     uint16_t port, uint16_t next)
{
	uint64_t step = (out - in) / 8;
	int i;
	static const enum ns_boundary b[] = {
		NS_B_NETIF_RX, NS_B_TCP_RX, NS_B_DATA_READY, NS_B_POLL_RET,
		NS_B_RECV_RET, NS_B_TCP_SEND, NS_B_DEV_XMIT, NS_B_SEND_RET,
	};

	memset(r, 0, sizeof(*r));
	r->port = port;
	r->next_port = next;
	for (i = 0; i < 8; i++)
		r->b[b[i]] = in + i * step;
	r->b[NS_B_DEV_XMIT] = out;
	r->b[NS_B_SEND_RET] = out + 500;
}

static void table(struct join_table *t, const char *name, enum ns_side side,
		  struct join_rec *r, long n)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->side = side;
	t->r = r;
	t->n = n;
	join_sort(t);
}

static void t_plan_of_a_forwarder_path(void **state)
{
	struct join_table t[3];
	struct join_plan p;
	static const char *const names[] = {
		"client send", "wire to fwd", "fwd in", "fwd to server",
		"server softirq_rx", "server tcp_rx", "server wakeup",
		"server recv_call", "server app", "server send_call",
		"server tcp_tx", "server to fwd", "fwd out", "wire to client",
		"client receive",
	};
	int i;

	memset(t, 0, sizeof(t));
	table(&t[0], "client", NS_CLIENT, NULL, 0);
	table(&t[1], "fwd", NS_SERVER_OBS, NULL, 0);
	table(&t[2], "server", NS_SERVER, NULL, 0);
	assert_int_equal(join_plan(t, 1, &p), -1);
	assert_int_equal(join_plan(t, 3, &p), 0);
	assert_int_equal(p.nrows, 15);
	for (i = 0; i < p.nrows; i++)
		assert_string_equal(p.row[i].name, names[i]);
	/* Consecutive rows meet: each starts where the one before ends. */
	for (i = 1; i < p.nrows; i++) {
		assert_int_equal(p.row[i].fh, p.row[i - 1].th);
		assert_int_equal(p.row[i].fb, p.row[i - 1].tb);
	}
	assert_int_equal(p.row[0].fb, NS_B_APP_SEND);
	assert_int_equal(p.row[p.nrows - 1].tb, NS_B_APP_DONE);
}

static void t_observed_server_joins_by_port_and_time(void **state)
{
	struct join_rec c[2], s[3];
	const struct join_rec *chain[2];
	struct join_table t[2];
	struct join_plan p;
	uint64_t sum = 0;
	int i, hop;

	client(&c[0], 1000000, 40001);
	client(&c[1], 1000000, 40002);	/* the same time, another flow */
	observed(&s[0], 1010000, 1090000, 40002, 0);
	observed(&s[1], 1005000, 1095000, 40001, 0);
	/* Port 40001's next request: outside the first one's remote. */
	observed(&s[2], 1150000, 1160000, 40001, 0);
	table(&t[0], "client", NS_CLIENT, c, 2);
	table(&t[1], "mc", NS_SERVER_OBS, s, 3);
	assert_int_equal(join_plan(t, 2, &p), 0);
	assert_int_equal(join_one(t, 2, &t[0].r[0], &p, chain, &hop),
			 JOIN_OK);
	assert_int_equal(chain[1]->port, t[0].r[0].port);
	assert_int_equal(chain[1]->b[NS_B_NETIF_RX],
			 t[0].r[0].port == 40001 ? 1005000 : 1010000);
	for (i = 0; i < p.nrows; i++)
		sum += join_row_ns(&p, i, chain);
	assert_int_equal(sum, 100000);
	/* wire to mc: from the client's hand-off to the server's arrival */
	assert_int_equal(join_row_ns(&p, 1, chain),
			 chain[1]->b[NS_B_NETIF_RX] - 1002000);
}

static void t_none_many_and_disorder(void **state)
{
	struct join_rec c, s[2];
	const struct join_rec *chain[2];
	struct join_table t[2];
	struct join_plan p;
	int hop;

	client(&c, 1000000, 40001);
	table(&t[0], "client", NS_CLIENT, &c, 1);
	/* Handed back after the client's arrival: not inside. */
	observed(&s[0], 1010000, 1099000, 40001, 0);
	table(&t[1], "mc", NS_SERVER_OBS, s, 1);
	join_plan(t, 2, &p);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_NONE);
	assert_int_equal(hop, 1);
	/* Two records of one connection inside: not one request. */
	observed(&s[0], 1010000, 1040000, 40001, 0);
	observed(&s[1], 1050000, 1090000, 40001, 0);
	table(&t[1], "mc", NS_SERVER_OBS, s, 2);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_MANY);
	/* A boundary missing in the server's record. */
	observed(&s[0], 1010000, 1040000, 40001, 0);
	s[0].b[NS_B_TCP_RX] = 0;
	table(&t[1], "mc", NS_SERVER_OBS, s, 1);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop),
			 JOIN_DISORDER);
}

static void t_the_hop_beyond_a_forwarder_is_on_its_connection(void **state)
{
	struct join_rec c, f, s[2];
	const struct join_rec *chain[3];
	struct join_table t[3];
	struct join_plan p;
	uint64_t sum = 0;
	int i, hop;

	client(&c, 1000000, 40001);
	observed(&f, 1004000, 1096000, 40001, 50007);
	/* It reads the request at 1010 us and answers at 1090 us. */
	f.b[NS_B_TCP_RX] = 1005000;
	f.b[NS_B_DATA_READY] = 1006000;
	f.b[NS_B_POLL_RET] = 1007000;
	f.b[NS_B_RECV_RET] = 1010000;
	f.b[NS_B_TCP_SEND] = 1090000;
	/* Two server transactions inside the forwarder's time, one on the
	 * connection it sent this request on. */
	observed(&s[0], 1030000, 1060000, 50003, 0);
	observed(&s[1], 1035000, 1065000, 50007, 0);
	table(&t[0], "client", NS_CLIENT, &c, 1);
	table(&t[1], "fwd", NS_SERVER_OBS, &f, 1);
	table(&t[2], "server", NS_SERVER_OBS, s, 2);
	join_plan(t, 3, &p);
	assert_int_equal(join_one(t, 3, &c, &p, chain, &hop), JOIN_OK);
	assert_int_equal(chain[2]->port, 50007);
	for (i = 0; i < p.nrows; i++)
		sum += join_row_ns(&p, i, chain);
	assert_int_equal(sum, 100000);
	/* Unknown next connection: both fit, so neither is taken. */
	f.next_port = 0;
	table(&t[1], "fwd", NS_SERVER_OBS, &f, 1);
	assert_int_equal(join_one(t, 3, &c, &p, chain, &hop), JOIN_MANY);
	assert_int_equal(hop, 2);
}

/* A netstage server's transaction (tcp_rr stages) from `in` to `out`. */
static void server(struct join_rec *r, uint64_t in, uint64_t out,
		   uint16_t port)
{
	static const enum ns_boundary b[] = {
		NS_B_NETIF_RX, NS_B_TCP_RX, NS_B_DATA_READY, NS_B_EPOLL_RET,
		NS_B_RECV_RET, NS_B_APP_SEND, NS_B_TCP_SEND, NS_B_DEV_XMIT,
	};
	int i;

	memset(r, 0, sizeof(*r));
	r->port = port;
	for (i = 0; i < 8; i++)
		r->b[b[i]] = in + i * (out - in) / 7;
	r->b[NS_B_APP_DONE] = out + 3000;
}

/*
 * A netstage server's records of connection 40001: request 6 from
 * 1050000 to `out`, request `other` from 1003000 to 1040000, both inside
 * the client's time of request 6 when out is; and request 6 of another
 * connection.
 */
static void own_server(struct join_rec *s, uint64_t out, uint64_t other)
{
	server(&s[0], 1050000, out, 40001);
	s[0].seq = 6;
	server(&s[1], 1003000, 1040000, 40001);
	s[1].seq = other;
	server(&s[2], 1050000, 1090000, 40002);
	s[2].seq = 6;
}

/*
 * Netstage's own tcp_rr ends: the server's record is the one of the
 * client's connection and number, even where another request's record
 * fits the client's time too (several in flight, --rate); one of that
 * number outside it is a mis-pair, not a join.
 */
static void t_own_ends_join_by_connection_and_number(void **state)
{
	struct join_rec c, s[3];
	const struct join_rec *chain[2];
	struct join_table t[2];
	struct join_plan p;
	int hop;

	client(&c, 1000000, 40001);
	c.seq = 6;
	own_server(s, 1090000, 5);
	table(&t[0], "client", NS_CLIENT, &c, 1);
	table(&t[1], "server", NS_SERVER, s, 3);
	assert_true(join_by_seq(t, 2));
	join_prepare(t, 2);
	assert_int_equal(join_plan_nested(t, 2, &p), 0);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_OK);
	assert_int_equal(chain[1]->seq, 6);
	assert_int_equal(chain[1]->port, 40001);
	assert_int_equal(chain[1]->b[NS_B_NETIF_RX], 1050000);
	/* By time alone, both of port 40001 would fit. */
	t[1].side = NS_SERVER_OBS;
	assert_false(join_by_seq(t, 2));
	join_prepare(t, 2);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_MANY);
	/* That number handed back after the client's arrival: mis-paired. */
	t[1].side = NS_SERVER;
	own_server(s, 1099000, 5);
	join_prepare(t, 2);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_MISPAIR);
	/* No record of that number: none; two: many. */
	c.seq = 7;
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_NONE);
	c.seq = 6;
	own_server(s, 1090000, 6);
	join_prepare(t, 2);
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_MANY);
	/* tcp_crr's ends number apart: by time. */
	t[0].side = NS_CLIENT_CRR;
	t[1].side = NS_SERVER_CRR;
	assert_false(join_by_seq(t, 2));
	/* A udp_rr server names the client's number; not across kinds. */
	t[0].side = NS_CLIENT_UDP;
	t[1].side = NS_SERVER_UDP;
	assert_true(join_by_seq(t, 2));
	t[1].side = NS_SERVER;
	assert_false(join_by_seq(t, 2));
	t[0].side = NS_CLIENT;
	t[1].side = NS_SERVER_UDP;
	assert_false(join_by_seq(t, 2));
}

/*
 * --local's waterfall: the client's own stages, its remote split into
 * the wire legs and the server's stages. Depth-0 rows add up to the
 * latency, depth-1 rows to remote, exactly.
 */
static void t_nested_plan_splits_remote(void **state)
{
	static const char *const names[] = {
		"send_call", "tcp_tx", "remote", "wire to server",
		"server softirq_rx", "server tcp_rx", "server wakeup",
		"server recv_call", "server app", "server send_call",
		"server tcp_tx", "wire to client", "softirq_rx", "tcp_rx",
		"wakeup", "recv_call", "to_app",
	};
	struct join_rec c, s;
	const struct join_rec *chain[2];
	struct join_table t[2];
	struct join_plan p;
	uint64_t top = 0, inner = 0;
	int i, hop, remote = -1;

	client(&c, 1000000, 40001);
	server(&s, 1003000, 1097000, 40001);
	table(&t[0], "client", NS_CLIENT, &c, 1);
	table(&t[1], "server", NS_SERVER, &s, 1);
	assert_int_equal(join_plan_nested(t, 2, &p), 0);
	assert_int_equal(p.nrows, ARRAY_LEN(names));
	for (i = 0; i < p.nrows; i++) {
		assert_string_equal(p.row[i].name, names[i]);
		assert_int_equal(p.row[i].depth, i >= 3 && i <= 11);
	}
	assert_int_equal(join_one(t, 2, &c, &p, chain, &hop), JOIN_OK);
	for (i = 0; i < p.nrows; i++) {
		if (!strcmp(p.row[i].name, "remote"))
			remote = i;
		if (p.row[i].depth)
			inner += join_row_ns(&p, i, chain);
		else
			top += join_row_ns(&p, i, chain);
	}
	assert_int_equal(top, 100000);
	assert_int_equal(inner, join_row_ns(&p, remote, chain));
	assert_int_equal(join_row_ns(&p, 3, chain), 1000);	/* wire to */
	assert_int_equal(join_row_ns(&p, 11, chain), 1000);	/* and back */
	/* A server (its side) with no remote to split is no plan. */
	assert_int_equal(join_plan_nested(&t[1], 2, &p), -1);
	/* One side alone: its stages, which join to its own span. */
	assert_int_equal(join_plan_nested(&t[1], 1, &p), 0);
	assert_int_equal(p.nrows, 8);
	assert_string_equal(p.row[7].name, "send_return");
	assert_int_equal(join_one(&t[1], 1, &s, &p, chain, &hop), JOIN_OK);
}

/* tcp_crr's server chain starts at the handshake: from the arrival, one
 * row up to the read, then its own stages. */
static void t_nested_plan_of_tcp_crr(void **state)
{
	struct join_table t[2];
	struct join_plan p;
	int i;

	memset(t, 0, sizeof(t));
	table(&t[0], "client", NS_CLIENT_CRR, NULL, 0);
	table(&t[1], "server", NS_SERVER_CRR, NULL, 0);
	assert_int_equal(join_plan_nested(t, 2, &p), 0);
	for (i = 0; strcmp(p.row[i].name, "wire to server"); i++)
		;
	assert_string_equal(p.row[i + 1].name, "server in");
	assert_int_equal(p.row[i + 1].fb, NS_B_NETIF_RX);
	assert_int_equal(p.row[i + 1].tb, NS_B_RECV_RET);
	assert_string_equal(p.row[i + 2].name, "server app");
	assert_int_equal(p.row[0].fb, NS_B_CONNECT);
	for (i = 1; i < p.nrows; i++) {
		/* Consecutive rows meet, nested or not. */
		if (p.row[i].depth != p.row[i - 1].depth)
			continue;
		assert_int_equal(p.row[i].fb, p.row[i - 1].tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_plan_of_a_forwarder_path),
		cmocka_unit_test(t_observed_server_joins_by_port_and_time),
		cmocka_unit_test(t_none_many_and_disorder),
		cmocka_unit_test(t_the_hop_beyond_a_forwarder_is_on_its_connection),
		cmocka_unit_test(t_nested_plan_splits_remote),
		cmocka_unit_test(t_own_ends_join_by_connection_and_number),
		cmocka_unit_test(t_nested_plan_of_tcp_crr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
