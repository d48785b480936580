#include <stdlib.h>

#include "core/common.h"
#include "trace/portfit.h"

struct pair {
	int64_t mid;		/* server clock - client clock, ns */
	struct clock_exchange x;
};

static int by_port(const void *a, const void *b)
{
	const struct join_rec *x = *(const struct join_rec *const *)a;
	const struct join_rec *y = *(const struct join_rec *const *)b;

	return (x->port > y->port) - (x->port < y->port);
}

static int by_mid(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->mid > y->mid) - (x->mid < y->mid);
}

/* The first of the n port-sorted records with port p, or n. */
static long first_of(const struct join_rec **r, long n, uint16_t p)
{
	long a = 0, b = n;

	while (a < b) {
		long m = a + (b - a) / 2;

		if (r[m]->port < p)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Both ends' stamps of a possible pair, and its bracket's middle. */
static int pair_of(const struct join_rec *c, const struct join_rec *s,
		   struct pair *p)
{
	p->x.c_tx = c->b[NS_B_DEV_XMIT];
	p->x.c_rx = c->b[NS_B_NETIF_RX];
	p->x.s_rx = s->b[NS_B_NETIF_RX];
	p->x.s_tx = s->b[NS_B_DEV_XMIT];
	if (!p->x.c_tx || !p->x.c_rx || !p->x.s_rx || !p->x.s_tx)
		return 0;
	p->mid = (int64_t)(p->x.s_rx - p->x.c_tx) / 2 +
		 (int64_t)(p->x.s_tx - p->x.c_rx) / 2;
	return 1;
}

/* Every pair of a client record and a server record of its port. */
static long pairs(const struct join_table *c, const struct join_table *s,
		  struct pair **out, uint64_t *span)
{
	const struct join_rec **srv = xcalloc(s->n ? s->n : 1, sizeof(*srv));
	uint64_t lo = UINT64_MAX, hi = 0, t;
	struct pair *p = NULL;
	long i, j, n = 0, cap = 0;

	for (i = 0; i < s->n; i++)
		srv[i] = &s->r[i];
	qsort(srv, s->n, sizeof(*srv), by_port);
	for (i = 0; i < c->n; i++) {
		if (c->r[i].slowest || !c->r[i].port)
			continue;
		for (j = first_of(srv, s->n, c->r[i].port);
		     j < s->n && srv[j]->port == c->r[i].port; j++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				p = xrealloc(p, cap, sizeof(*p));
			}
			n += pair_of(&c->r[i], srv[j], &p[n]);
		}
		t = c->r[i].b[NS_B_DEV_XMIT];
		if (t && t < lo)
			lo = t;
		if (t > hi)
			hi = t;
	}
	free(srv);
	*out = p;
	*span = hi > lo ? hi - lo : 0;
	return n;
}

int portfit(const struct join_table *c, const struct join_table *s,
	    struct clock_fit *f)
{
	struct clock_exchange *ex;
	struct pair *p;
	uint64_t span;
	int64_t width;
	long n = pairs(c, s, &p, &span), i, j = 0, best = 0, at = 0;
	int rc;

	qsort(p, n, sizeof(*p), by_mid);
	width = PORTFIT_WIDTH_NS + (int64_t)(span / 1000000 *
					     PORTFIT_DRIFT_PPM);
	/* The most pairs within width of each other: a sliding window. */
	for (i = 0; i < n; i++) {
		while (p[i].mid - p[j].mid > width)
			j++;
		if (i - j + 1 > best) {
			best = i - j + 1;
			at = j;
		}
	}
	ex = xcalloc(best ? best : 1, sizeof(*ex));
	for (i = 0; i < best; i++)
		ex[i] = p[at + i].x;
	rc = clock_fit(ex, best, f);
	free(ex);
	free(p);
	return rc;
}
