/*
 * Confidence intervals of a mean over repeated tests (netperf -i/-I):
 * Student's t, two-sided, at 95% or 99%.
 */
#ifndef NETSTAGE_CONFIDENCE_H
#define NETSTAGE_CONFIDENCE_H

/*
 * Full width of the interval around the mean of x[0..n-1], as a percent
 * of the mean; 0 when all samples are equal (0 too); -1 when it is
 * undefined (n < 2, a spread about a zero mean, or a level other than 95
 * or 99).
 */
double confidence_width_percent(const double *x, int n, int level);
double mean_of(const double *x, int n);

#endif
