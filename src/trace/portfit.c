#include <stdlib.h>

#include "core/common.h"
#include "trace/portfit.h"

/* Client records the run's clock difference is looked for among, at most. */
#define PORTFIT_LOOK 20000

/*
 * One pass over the pairs of a client record and a server record of
 * its port: their clock differences (mid), or, fitting, the exchanges
 * of those whose difference lies in [lo, hi] (ex).
 */
struct pass {
	const struct join_table *c;
	const struct join_rec **srv;	/* s's records by port */
	long ns;
	long stride;			/* every stride-th client record */
	int fitting;
	int64_t lo, hi;
	int64_t *mid;
	struct clock_exchange *ex;
	long n, cap;
	uint64_t first, last;		/* the client's DEV_XMITs seen */
};

static int by_port(const void *a, const void *b)
{
	const struct join_rec *x = *(const struct join_rec *const *)a;
	const struct join_rec *y = *(const struct join_rec *const *)b;

	return (x->port > y->port) - (x->port < y->port);
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
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

/* A pair's four stamps, and its bracket's middle: 0 if one is missing. */
static int exchange(const struct join_rec *c, const struct join_rec *s,
		    struct clock_exchange *x, int64_t *mid)
{
	x->c_tx = c->b[NS_B_DEV_XMIT];
	x->c_rx = c->b[NS_B_NETIF_RX];
	x->s_rx = s->b[NS_B_NETIF_RX];
	x->s_tx = s->b[NS_B_DEV_XMIT];
	if (!x->c_tx || !x->c_rx || !x->s_rx || !x->s_tx)
		return 0;
	*mid = (int64_t)(x->s_rx - x->c_tx) / 2 +
	       (int64_t)(x->s_tx - x->c_rx) / 2;
	return 1;
}

static void add(struct pass *p, const struct clock_exchange *x, int64_t mid)
{
	if (p->fitting && (mid < p->lo || mid > p->hi))
		return;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		if (p->fitting)
			p->ex = xrealloc(p->ex, p->cap, sizeof(*p->ex));
		else
			p->mid = xrealloc(p->mid, p->cap, sizeof(*p->mid));
	}
	if (p->fitting)
		p->ex[p->n++] = *x;
	else
		p->mid[p->n++] = mid;
}

static void run(struct pass *p)
{
	const struct join_table *c = p->c;
	struct clock_exchange x;
	int64_t mid;
	long i, j;

	p->n = 0;
	for (i = 0; i < c->n; i += p->stride) {
		const struct join_rec *r = &c->r[i];

		if (r->slowest || !r->port)
			continue;
		for (j = first_of(p->srv, p->ns, r->port);
		     j < p->ns && p->srv[j]->port == r->port; j++)
			if (exchange(r, p->srv[j], &x, &mid))
				add(p, &x, mid);
		if (r->b[NS_B_DEV_XMIT] && (!p->first ||
					    r->b[NS_B_DEV_XMIT] < p->first))
			p->first = r->b[NS_B_DEV_XMIT];
		if (r->b[NS_B_DEV_XMIT] > p->last)
			p->last = r->b[NS_B_DEV_XMIT];
	}
}

/*
 * The middle of the most differences within width of each other (a
 * sliding window over them sorted), or -1 if there are none.
 */
static int mode(int64_t *v, long n, int64_t width, int64_t *at)
{
	long i, j = 0, best = 0;

	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), by_value);
	for (i = 0; i < n; i++) {
		while (v[i] - v[j] > width)
			j++;
		if (i - j + 1 > best) {
			best = i - j + 1;
			*at = v[j] + (v[i] - v[j]) / 2;
		}
	}
	return 0;
}

int portfit(const struct join_table *c, const struct join_table *s,
	    struct clock_fit *f)
{
	struct pass p = { .c = c, .ns = s->n };
	int64_t width, at = 0;
	long i;
	int rc = -1;

	p.srv = xcalloc(s->n ? s->n : 1, sizeof(*p.srv));
	for (i = 0; i < s->n; i++)
		p.srv[i] = &s->r[i];
	qsort(p.srv, s->n, sizeof(*p.srv), by_port);
	/* The difference from a few thousand records, spread over the run. */
	p.stride = c->n > PORTFIT_LOOK ? c->n / PORTFIT_LOOK : 1;
	run(&p);
	width = PORTFIT_WIDTH_NS + (int64_t)((p.last - p.first) / 1000000 *
					     PORTFIT_DRIFT_PPM);
	if (!mode(p.mid, p.n, width, &at)) {
		/* Every record's pairs of about that difference. */
		p.stride = 1;
		p.fitting = 1;
		p.lo = at - width;
		p.hi = at + width;
		p.cap = 0;
		run(&p);
		rc = clock_fit(p.ex, p.n, f);
	}
	free(p.mid);
	free(p.ex);
	free(p.srv);
	return rc;
}
