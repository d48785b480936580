/*
 * Student's t through the regularized incomplete beta function, which
 * a continued fraction evaluated by the modified Lentz method gives to
 * double precision (Press et al., Numerical Recipes, 6.4).
 */
#include <math.h>
#include <stdlib.h>

#include "stats/tdist.h"

#define TINY 1e-300

static double beta_cf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h, aa, del;
	int m;

	d = 1 / (fabs(d) < TINY ? TINY : d);
	h = d;
	for (m = 1; m <= 300; m++) {
		/* The even step, then the odd one. */
		aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < TINY ? TINY : d);
		c = fabs(c) < TINY ? TINY : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < TINY ? TINY : d);
		c = fabs(c) < TINY ? TINY : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* I_x(a, b). */
static double beta_reg(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		    b * log1p(-x));
	/* The fraction converges fast on this side of the mean. */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double t_two_sided_p(double t, double df)
{
	if (isnan(t) || df <= 0)
		return NAN;
	if (isinf(t))
		return 0;
	return beta_reg(df / 2, 0.5, df / (df + t * t));
}

double t_quantile_two_sided(double p, double df)
{
	double lo = 0, hi = 1;
	int i;

	while (t_two_sided_p(hi, df) > p && hi < 1e12)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (t_two_sided_p(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double z_two_sided_p(double z)
{
	return erfc(fabs(z) / sqrt(2));
}

static void mean_var(const double *x, int n, double *m, double *v)
{
	double s = 0, ss = 0;
	int i;

	for (i = 0; i < n; i++)
		s += x[i];
	*m = s / n;
	for (i = 0; i < n; i++)
		ss += (x[i] - *m) * (x[i] - *m);
	*v = n > 1 ? ss / (n - 1) : NAN;
}

int welch(const double *a, int na, const double *b, int nb, double *se,
	  double *df)
{
	double ma, va, mb, vb, qa, qb;

	if (na < 1 || nb < 1 || (na < 2 && nb < 2))
		return -1;
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	if (na < 2 || nb < 2) {
		double v = na < 2 ? vb : va;

		*se = sqrt(v * (1.0 / na + 1.0 / nb));
		*df = (na < 2 ? nb : na) - 1;
		return 0;
	}
	qa = va / na;
	qb = vb / nb;
	*se = sqrt(qa + qb);
	*df = qa + qb > 0 ? (qa + qb) * (qa + qb) /
	      (qa * qa / (na - 1) + qb * qb / (nb - 1)) : na + nb - 2;
	return 0;
}

static int by_p(const void *x, const void *y, void *base)
{
	const double *p = base;
	double a = p[*(const int *)x], b = p[*(const int *)y];

	return (a > b) - (a < b);
}

void holm_adjust(double *p, int n)
{
	int *ix = malloc(sizeof(*ix) * (n ? n : 1)), i;
	double run = 0;

	if (!ix)
		abort();
	for (i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), by_p, p);
	for (i = 0; i < n; i++) {
		double q = p[ix[i]] * (n - i);

		/* Adjusted values never fall as the raw ones rise. */
		run = fmax(run, fmin(q, 1));
		p[ix[i]] = run;
	}
	free(ix);
}
