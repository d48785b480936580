#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "trace/clock.h"

/* Fits after the first: each takes out the drift the last one found. */
#define REFITS 3

/* An exchange's bracket, relative to t0 and to the base offset. */
struct bracket {
	double t_up, up;	/* at the request's send: offset <= up */
	double t_lo, lo;	/* at the response's arrival: offset >= lo */
};

struct window {
	double t;		/* its exchanges' mean send time */
	double mid, half;	/* its tightest bracket's middle, half width */
};

static int by_send(const void *a, const void *b)
{
	const struct clock_exchange *x = a, *y = b;

	return (x->c_tx > y->c_tx) - (x->c_tx < y->c_tx);
}

/* Differences as int64 first: two uint64 stamps far apart stay exact. */
static struct bracket bracket_of(const struct clock_exchange *x,
				 uint64_t t0, int64_t base)
{
	struct bracket b;

	b.t_up = (double)(int64_t)(x->c_tx - t0);
	b.up = (double)((int64_t)(x->s_rx - x->c_tx) - base);
	b.t_lo = (double)(int64_t)(x->c_rx - t0);
	b.lo = (double)((int64_t)(x->s_tx - x->c_rx) - base);
	return b;
}

/*
 * Window w's tightest bracket once drift d is taken out; -1 if empty
 * (its middle still given: before the drift is known, drift inside a
 * window crosses the two ends, and the middle is still the best guess).
 */
static int window_of(const struct bracket *br, long from, long to,
		     double d, struct window *w)
{
	double up = INFINITY, lo = -INFINITY, t = 0;
	long i;

	for (i = from; i < to; i++) {
		up = fmin(up, br[i].up - d * br[i].t_up);
		lo = fmax(lo, br[i].lo - d * br[i].t_lo);
		t += br[i].t_up;
	}
	w->t = t / (to - from);
	w->mid = (up + lo) / 2;
	w->half = (up - lo) / 2;
	return up < lo ? -1 : 0;
}

/* Least squares through the windows' middles: intercept and slope. */
static void line(const struct window *w, int k, double *a, double *s)
{
	double mt = 0, mm = 0, stt = 0, stm = 0;
	int i;

	for (i = 0; i < k; i++) {
		mt += w[i].t / k;
		mm += w[i].mid / k;
	}
	for (i = 0; i < k; i++) {
		stt += (w[i].t - mt) * (w[i].t - mt);
		stm += (w[i].t - mt) * (w[i].mid - mm);
	}
	*s = stt > 0 ? stm / stt : 0;
	*a = mm - *s * mt;
}

/* The windows after drift d; -1 if a bracket is empty. */
static int windows(const struct bracket *br, long n, int k, double d,
		   struct window *w)
{
	int i, rc = 0;

	for (i = 0; i < k; i++)
		if (window_of(br, n * i / k, n * (i + 1) / k, d, &w[i]))
			rc = -1;
	return rc;
}

/* Stamps are whole ns: no bound is finer. */
#define RESOLUTION_NS 1.0

static void bounds(const struct window *w, int k, double a, double s,
		   struct clock_fit *f)
{
	int i;

	f->bound_ns = f->causal_ns = RESOLUTION_NS;
	for (i = 0; i < k; i++) {
		double r = fabs(w[i].mid - (a + s * w[i].t));

		f->bound_ns = fmax(f->bound_ns, r + RESOLUTION_NS);
		f->causal_ns = fmax(f->causal_ns, w[i].half + r + RESOLUTION_NS);
	}
}

/* Exchanges a wire leg of which is below zero on the fitted clocks. */
static long negatives(const struct bracket *br, long n, double a, double d)
{
	long i, k = 0;

	for (i = 0; i < n; i++)
		if (br[i].up < a + d * br[i].t_up ||
		    br[i].lo > a + d * br[i].t_lo)
			k++;
	return k;
}

int clock_fit(const struct clock_exchange *x, long n, struct clock_fit *f)
{
	struct clock_exchange *s;
	struct window w[CLOCK_WINDOWS];
	struct bracket *br;
	double a = 0, d = 0, ds;
	int k, i, rc = -1;
	long j;

	memset(f, 0, sizeof(*f));
	if (n < CLOCK_MIN_PER_WINDOW)
		return -1;
	s = xcalloc(n, sizeof(*s));
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), by_send);
	f->t0 = s[0].c_tx;
	f->base_ns = (int64_t)(s[0].s_rx - s[0].c_tx);
	br = xcalloc(n, sizeof(*br));
	for (j = 0; j < n; j++)
		br[j] = bracket_of(&s[j], f->t0, f->base_ns);
	k = n / CLOCK_MIN_PER_WINDOW;
	k = k < CLOCK_WINDOWS ? k : CLOCK_WINDOWS;
	for (i = 0; i <= REFITS; i++) {
		/* Only the last fit's brackets must hold. */
		if (windows(br, n, k, d, w) && i == REFITS)
			goto out;
		line(w, k, &a, &ds);
		if (i < REFITS)
			d += ds;
	}
	bounds(w, k, a, ds, f);
	d += ds;
	f->offset_ns = a;
	f->drift_ppm = d * 1e6;
	f->windows = k;
	f->exchanges = n;
	f->negative = negatives(br, n, a, d);
	rc = 0;
out:
	free(br);
	free(s);
	return rc;
}

uint64_t clock_to_client(const struct clock_fit *f, uint64_t server_ns)
{
	/* s = c + base + offset + d (c - t0): solved for c - t0. */
	double d = f->drift_ppm * 1e-6;
	double rel = (double)((int64_t)(server_ns - f->t0) - f->base_ns);

	return f->t0 + (int64_t)llround((rel - f->offset_ns) / (1 + d));
}
