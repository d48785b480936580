#include <math.h>

#include "stats/confidence.h"

/* Two-sided critical values of Student's t for 1..30 degrees of freedom. */
static const double t95[30] = {
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};
static const double t99[30] = {
	63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
	3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
	2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
};

static double t_crit(int level, int df)
{
	const double *t = level == 95 ? t95 : t99;

	if (df <= 30)
		return t[df - 1];
	return level == 95 ? 1.960 : 2.576;	/* the normal's */
}

double mean_of(const double *x, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += x[i];
	return n ? s / n : 0;
}

double confidence_width_percent(const double *x, int n, int level)
{
	double m = mean_of(x, n), ss = 0, sd;
	int i;

	if (n < 2 || (level != 95 && level != 99))
		return -1;
	for (i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	sd = sqrt(ss / (n - 1));
	/* No spread: no width, even about 0 (a stage that is always 0). */
	if (sd == 0)
		return 0;
	if (m == 0)
		return -1;
	return 2 * t_crit(level, n - 1) * sd / sqrt(n) / fabs(m) * 100;
}
