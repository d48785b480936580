/*
 * `netstage compare`: two groups of runs (A, the baseline, and B), each
 * figure side by side with its change and whether that change is
 * beyond the runs' noise.
 *
 * Noise: with two runs or more on a side, run-to-run: Welch's t over
 * the runs' figures (a side of one run takes the other's spread), and
 * never less than the runs' own noise (below: a percentile whose runs
 * all fell in one bucket still has the bucket's width). With
 * one run a side, what the run shows of itself: throughput over its
 * intervals, a mean from its histogram's spread, a percentile from the
 * order statistics around its rank (and its bucket's width). That is
 * narrower than run-to-run noise, and the result says which it used.
 * A change is beyond noise when Holm's adjusted p-value over every
 * figure tested is below the level: 5% for the comparison as a whole,
 * not for each of its figures.
 */
#ifndef NETSTAGE_COMPARE_H
#define NETSTAGE_COMPARE_H

#include "results/run_json.h"

#define COMPARE_LEVEL 0.05

struct cmp_fig {
	char side[8];		/* client or server */
	char name[64];		/* as its key=value key: latency_p99_us */
	int higher_better;	/* throughput; latencies are better lower */
	double a, b;		/* each group's: the mean over its runs */
	double diff;		/* b - a */
	double low, high;	/* diff's 95% interval; NAN: none */
	double p;		/* Holm-adjusted; NAN: not tested */
	int beyond;		/* p < COMPARE_LEVEL */
};

struct cmp {
	int na, nb;		/* runs a side */
	int within;		/* one run a side: its own noise */
	const char *workload;
	struct cmp_fig *fig;
	int nfig, cap;
	int ntested, nbeyond;
};

/*
 * Adds side's figures: a[0..na-1] and b[0..nb-1] are that side of each
 * run. Stages count when every run has them.
 */
void compare_side(struct cmp *c, const char *side,
		  const struct run_json *const *a, int na,
		  const struct run_json *const *b, int nb);
/* Once every side is in: the p-values adjusted, the verdicts. */
void compare_finish(struct cmp *c);
/* "up", "down" or "level"; "better"/"worse" ("" when level). */
const char *compare_verdict(const struct cmp_fig *f);
const char *compare_judgement(const struct cmp_fig *f);
void compare_free(struct cmp *c);

#endif
