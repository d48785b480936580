#include <stdio.h>
#include <stdlib.h>

#include "trace/join.h"
#include "trace/merge.h"

static int by_arrival(const void *a, const void *b)
{
	uint64_t x = ((const struct join_rec *)a)->b[NS_B_NETIF_RX];
	uint64_t y = ((const struct join_rec *)b)->b[NS_B_NETIF_RX];

	return x < y ? -1 : x > y;
}

void join_sort(struct join_table *t)
{
	/* A hop with no records may have no array at all. */
	if (t->n > 1)
		qsort(t->r, t->n, sizeof(*t->r), by_arrival);
}

static int by_port_seq(const void *a, const void *b)
{
	const struct join_rec *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int join_by_seq(const struct join_table *t, int n)
{
	enum ns_side c = NS_BPF_SIDE(t[0].side);

	return n == 2 && (c == NS_CLIENT || c == NS_CLIENT_UDP) &&
	       NS_BPF_SIDE(t[1].side) == (c | NS_SERVER);
}

void join_prepare(struct join_table *t, int n)
{
	int k;

	for (k = 0; k < n; k++)
		join_sort(&t[k]);
	if (join_by_seq(t, n) && t[1].n > 1)
		qsort(t[1].r, t[1].n, sizeof(*t[1].r), by_port_seq);
}

/* The records of connection port and number seq: the first, and how many. */
static const struct join_rec *numbered(const struct join_table *t,
				       uint16_t port, uint64_t seq, int *count)
{
	struct join_rec key = { .port = port, .seq = seq };
	long a = 0, b = t->n, i;

	while (a < b) {
		long m = a + (b - a) / 2;

		if (by_port_seq(&t->r[m], &key) < 0)
			a = m + 1;
		else
			b = m;
	}
	for (i = a; i < t->n && !by_port_seq(&t->r[i], &key); i++)
		;
	*count = i - a;
	return *count ? &t->r[a] : NULL;
}

const struct join_rec *join_numbered(const struct join_table *s,
				     const struct join_rec *c)
{
	const struct join_rec *r;
	int count;

	r = numbered(s, c->port, c->seq, &count);
	if (count != 1 || !r->b[NS_B_NETIF_RX] || !r->b[NS_B_DEV_XMIT])
		return NULL;
	return r;
}

/*
 * Hop 1 by the client's connection and number: JOIN_OK, or what is
 * wrong. A server record with no DEV_XMIT (a response held back) is not
 * timed to its hand-off: none.
 */
static int by_number(const struct join_table *s, const struct join_rec *c,
		     const struct join_rec **r)
{
	uint64_t lo = c->b[NS_B_DEV_XMIT], hi = c->b[NS_B_NETIF_RX];
	int count;

	*r = numbered(s, c->port, c->seq, &count);
	if (count != 1)
		return count ? JOIN_MANY : JOIN_NONE;
	if (!(*r)->b[NS_B_NETIF_RX] || !(*r)->b[NS_B_DEV_XMIT])
		return JOIN_NONE;
	if ((*r)->b[NS_B_NETIF_RX] < lo || (*r)->b[NS_B_DEV_XMIT] > hi)
		return JOIN_MISPAIR;
	return JOIN_OK;
}

static void add(struct join_plan *p, int depth, int fh, enum ns_boundary fb,
		int th, enum ns_boundary tb, const char *a, const char *b)
{
	struct join_row *r = &p->row[p->nrows++];

	snprintf(r->name, sizeof(r->name), "%.40s%s%.23s", a, b ? " " : "",
		 b ? b : "");
	r->fh = fh;
	r->fb = fb;
	r->th = th;
	r->tb = tb;
	r->depth = depth;
}

/*
 * The answering server's own stages, from the request's arrival up to
 * its response's hand-off. A tcp_crr server's chain starts at the
 * handshake, before the request arrives: from the arrival, its stages
 * up to the read are one row.
 */
static void server_rows(const struct join_table *s, int h, int depth,
			struct join_plan *p)
{
	const struct stage_def *d = stage_defs(s->side);
	int i = 0, n = stage_count(s->side);

	if (n && d[0].from != NS_B_NETIF_RX) {
		add(p, depth, h, NS_B_NETIF_RX, h, NS_B_RECV_RET, s->name,
		    "in");
		while (i < n && d[i].from != NS_B_RECV_RET)
			i++;
	}
	for (; i < n && d[i].from != NS_B_DEV_XMIT; i++)
		add(p, depth, h, d[i].from, h, d[i].to, s->name, d[i].name);
}

/* From the client's hand-off to the response's arrival back at it. */
static void path_rows(const struct join_table *t, int n, int depth,
		      struct join_plan *p)
{
	char a[2 * JOIN_NAME + 8];
	int k, last = n - 1;

	add(p, depth, 0, NS_B_DEV_XMIT, 1, NS_B_NETIF_RX, "wire to",
	    t[1].name);
	for (k = 1; k < last; k++) {
		add(p, depth, k, NS_B_NETIF_RX, k, NS_B_RECV_RET, t[k].name,
		    "in");
		snprintf(a, sizeof(a), "%s to", t[k].name);
		add(p, depth, k, NS_B_RECV_RET, k + 1, NS_B_NETIF_RX, a,
		    t[k + 1].name);
	}
	server_rows(&t[last], last, depth, p);
	for (k = last - 1; k >= 1; k--) {
		snprintf(a, sizeof(a), "%s to", t[k + 1].name);
		add(p, depth, k + 1, NS_B_DEV_XMIT, k, NS_B_TCP_SEND, a,
		    t[k].name);
		add(p, depth, k, NS_B_TCP_SEND, k, NS_B_DEV_XMIT, t[k].name,
		    "out");
	}
	add(p, depth, 1, NS_B_DEV_XMIT, 0, NS_B_NETIF_RX, "wire to",
	    t[0].name);
}

int join_plan(const struct join_table *t, int n, struct join_plan *p)
{
	if (n < 2 || n > JOIN_MAX_HOPS)
		return -1;
	p->nrows = 0;
	add(p, 0, 0, NS_B_APP_SEND, 0, NS_B_DEV_XMIT, t[0].name, "send");
	path_rows(t, n, 0, p);
	add(p, 0, 0, NS_B_NETIF_RX, 0, NS_B_APP_DONE, t[0].name, "receive");
	return 0;
}

int join_plan_nested(const struct join_table *t, int n, struct join_plan *p)
{
	const struct stage_def *d = stage_defs(t[0].side);
	int i, split = 0;

	if (n < 1 || n > JOIN_MAX_HOPS)
		return -1;
	p->nrows = 0;
	for (i = 0; i < stage_count(t[0].side); i++) {
		add(p, 0, 0, d[i].from, 0, d[i].to, d[i].name, NULL);
		if (n > 1 && d[i].from == NS_B_DEV_XMIT &&
		    d[i].to == NS_B_NETIF_RX) {
			path_rows(t, n, 1, p);
			split = 1;
		}
	}
	return split || n == 1 ? 0 : -1;
}

/*
 * The one record of t arriving no earlier than lo and handed back no
 * later than hi (on connection port, unless 0): *count says how many.
 */
static const struct join_rec *within(const struct join_table *t,
				     uint64_t lo, uint64_t hi, uint16_t port,
				     int *count)
{
	const struct join_rec *found = NULL;
	long a = 0, b = t->n, i;

	*count = 0;
	while (a < b) {
		long m = a + (b - a) / 2;

		if (t->r[m].b[NS_B_NETIF_RX] < lo)
			a = m + 1;
		else
			b = m;
	}
	for (i = a; i < t->n && t->r[i].b[NS_B_NETIF_RX] <= hi; i++) {
		const struct join_rec *r = &t->r[i];

		if ((port && r->port != port) || !r->b[NS_B_DEV_XMIT] ||
		    r->b[NS_B_DEV_XMIT] > hi)
			continue;
		if (!found)
			found = r;
		(*count)++;
	}
	return found;
}

int join_one(const struct join_table *t, int n, const struct join_rec *c,
	     const struct join_plan *p, const struct join_rec **chain,
	     int *hop)
{
	uint64_t lo = c->b[NS_B_DEV_XMIT], hi = c->b[NS_B_NETIF_RX];
	int k, count, i;

	chain[0] = c;
	for (k = 1; k < n; k++) {
		*hop = k;
		if (!lo || !hi)
			return JOIN_NONE;
		if (k == 1 && join_by_seq(t, n)) {
			int rc = by_number(&t[1], c, &chain[1]);

			if (rc != JOIN_OK)
				return rc;
			continue;
		}
		/* Hop 1 is on the client's own connection. */
		chain[k] = within(&t[k], lo, hi,
				  k == 1 ? c->port : chain[k - 1]->next_port,
				  &count);
		if (count != 1)
			return count ? JOIN_MANY : JOIN_NONE;
		lo = chain[k]->b[NS_B_RECV_RET];
		hi = chain[k]->b[NS_B_TCP_SEND];
	}
	for (i = 0; i < p->nrows; i++) {
		const struct join_row *r = &p->row[i];
		uint64_t from = chain[r->fh]->b[r->fb];
		uint64_t to = chain[r->th]->b[r->tb];

		*hop = r->th;
		if (!from || !to || to < from)
			return JOIN_DISORDER;
	}
	return JOIN_OK;
}
