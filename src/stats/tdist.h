/*
 * Whether two sets of figures differ beyond their noise: Student's t
 * (Welch's, for two groups of runs), the normal distribution (for one
 * run a side, whose noise is estimated within it), and Holm's step-down
 * so that a comparison of many figures at once keeps its family-wise
 * error at the level asked for.
 */
#ifndef NETSTAGE_TDIST_H
#define NETSTAGE_TDIST_H

/* P(|T| >= |t|) for Student's t with df > 0 degrees of freedom. */
double t_two_sided_p(double t, double df);
/* The t with P(|T| >= t) = p, 0 < p < 1. */
double t_quantile_two_sided(double p, double df);
/* P(|Z| >= |z|) for the standard normal. */
double z_two_sided_p(double z);

/*
 * Welch's test of mean(a) - mean(b). A side of one figure takes the
 * other's variance (the runs are taken to vary alike), df then that
 * side's n - 1. Fills *se and *df; -1 when neither side has two
 * figures.
 */
int welch(const double *a, int na, const double *b, int nb, double *se,
	  double *df);

/*
 * Holm's step-down: p[0..n-1] replaced by adjusted p-values, each to be
 * read against the family's level as it stands.
 */
void holm_adjust(double *p, int n);

#endif
