/* Least-squares line through (x, y): throughput is the slope of cumulative
 * transactions (or bytes) over time, as neper reports it. */
#ifndef NETSTAGE_FIT_H
#define NETSTAGE_FIT_H

/* slope and Pearson r; NAN where fewer than 2 points or no spread. */
void linear_fit(const double *x, const double *y, int n, double *slope,
		double *r);

#endif
