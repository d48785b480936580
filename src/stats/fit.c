#include <math.h>

#include "stats/fit.h"

void linear_fit(const double *x, const double *y, int n, double *slope,
		double *r)
{
	double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
	int i;

	*slope = *r = NAN;
	if (n < 2)
		return;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		double dx = x[i] - mx, dy = y[i] - my;

		sxx += dx * dx;
		syy += dy * dy;
		sxy += dx * dy;
	}
	if (sxx <= 0)
		return;
	*slope = sxy / sxx;
	if (syy > 0)
		*r = sxy / sqrt(sxx * syy);
}
