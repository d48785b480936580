/*
 * Two groups of runs figure by figure (compare.h): what each figure is
 * on a run, its noise, and the verdicts once all are in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "results/compare.h"
#include "stats/tdist.h"

/* A figure: the run's throughput, or a statistic of a histogram. */
struct spec {
	const char *stage;	/* NULL: the latency, or the throughput */
	int throughput;
	double pct;		/* < 0: the mean */
};

static const struct hist *hist_of(const struct run_json *r,
				  const struct spec *s)
{
	int k;

	if (!s->stage)
		return r->has_lat ? &r->lat : NULL;
	for (k = 0; k < r->nstages; k++)
		if (!strcmp(r->stage[k], s->stage))
			return &r->stage_hist[k];
	return NULL;
}

/* The figure on run r, us (or its rate); NAN when r lacks it. */
static double value(const struct run_json *r, const struct spec *s)
{
	const struct hist *h;

	if (s->throughput)
		return r->throughput;
	h = hist_of(r, s);
	if (!h || !h->count)
		return NAN;
	return (s->pct < 0 ? hist_mean(h) : hist_percentile(h, s->pct)) / 1e3;
}

/*
 * A run's own standard error of a histogram's figure, us: the mean's
 * from the spread, a percentile's from the order statistics one
 * standard deviation of its rank either side, and the bucket's width.
 */
static double hist_se(const struct hist *h, double pct)
{
	double n = (double)h->count, q = pct / 100, k, lo, hi, v, var;
	uint64_t blo, bhi;

	if (pct < 0) {
		var = h->sumsq / n - (h->sum / n) * (h->sum / n);
		return sqrt(fmax(var, 0) / n) / 1e3;
	}
	k = sqrt(n * q * (1 - q));
	lo = hist_percentile(h, fmax(0, 100 * (n * q - k) / n));
	hi = hist_percentile(h, fmin(100, 100 * (n * q + k) / n));
	v = hist_percentile(h, pct);
	hist_bucket_range(hist_index((uint64_t)llround(v)), &blo, &bhi);
	return sqrt((hi - lo) * (hi - lo) / 4 +
		    (double)(bhi - blo) * (bhi - blo) / 12) / 1e3;
}

/* se and df of b - a from one run a side; -1: cannot tell. */
static int within(const struct run_json *a, const struct run_json *b,
		  const struct spec *s, double *se, double *df)
{
	const struct hist *ha, *hb;

	if (s->throughput)
		return welch(a->rate, a->nrate, b->rate, b->nrate, se, df);
	ha = hist_of(a, s);
	hb = hist_of(b, s);
	if (!ha || !hb || ha->count < 2 || hb->count < 2)
		return -1;
	*se = hypot(hist_se(ha, s->pct), hist_se(hb, s->pct));
	*df = INFINITY;
	return 0;
}

/*
 * The least se of b - a over groups of runs: each run's own noise (a
 * percentile's bucket, its order statistics). Runs whose percentile
 * fell in one bucket each vary by nothing the spread of the runs can
 * see, and two such groups a bucket apart are not beyond noise.
 */
static double runs_floor(const struct run_json *const *a, int na,
			 const struct run_json *const *b, int nb,
			 const struct spec *s)
{
	double va = 0, vb = 0, e;
	int i;

	if (s->throughput)
		return 0;
	for (i = 0; i < na; i++) {
		e = hist_se(hist_of(a[i], s), s->pct);
		va += e * e / na;
	}
	for (i = 0; i < nb; i++) {
		e = hist_se(hist_of(b[i], s), s->pct);
		vb += e * e / nb;
	}
	return sqrt(va / na + vb / nb);
}

static struct cmp_fig *fig_new(struct cmp *c)
{
	if (c->nfig == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->fig = xrealloc(c->fig, c->cap, sizeof(*c->fig));
	}
	memset(&c->fig[c->nfig], 0, sizeof(c->fig[0]));
	return &c->fig[c->nfig++];
}

/* The raw p-value and interval of f from se and df. */
static void test(struct cmp_fig *f, double se, double df)
{
	double q = isinf(df) ? 1.959964 : t_quantile_two_sided(0.05, df);

	if (se == 0) {
		/* Every run gave the same: any change is beyond it. */
		f->p = f->diff == 0 ? 1 : 0;
		f->low = f->high = f->diff;
		return;
	}
	f->p = isinf(df) ? z_two_sided_p(f->diff / se) :
	       t_two_sided_p(f->diff / se, df);
	f->low = f->diff - q * se;
	f->high = f->diff + q * se;
}

static void add(struct cmp *c, const char *side, const char *name,
		const struct spec *s, const struct run_json *const *a, int na,
		const struct run_json *const *b, int nb)
{
	double *va = xcalloc(na, sizeof(double)), *vb = xcalloc(nb, sizeof(double));
	double sa = 0, sb = 0, se, df;
	struct cmp_fig *f;
	int i, ok;

	for (i = 0; i < na; i++)
		sa += va[i] = value(a[i], s);
	for (i = 0; i < nb; i++)
		sb += vb[i] = value(b[i], s);
	if (isnan(sa) || isnan(sb))
		goto out;
	f = fig_new(c);
	snprintf(f->side, sizeof(f->side), "%s", side);
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->higher_better = s->throughput;
	f->a = sa / na;
	f->b = sb / nb;
	f->diff = f->b - f->a;
	f->p = f->low = f->high = NAN;
	ok = c->within ? within(a[0], b[0], s, &se, &df)
		       : welch(va, na, vb, nb, &se, &df);
	/* Noise the runs' spread missed, at the spread's df. */
	if (!ok && !c->within)
		se = fmax(se, runs_floor(a, na, b, nb, s));
	if (!ok)
		test(f, se, df);
out:
	free(va);
	free(vb);
}

/* Every run of both groups has it. */
static int all_have(const char *stage, const struct run_json *const *r,
		    int n)
{
	struct spec s = { stage, 0, -1 };
	int i;

	for (i = 0; i < n; i++)
		if (!hist_of(r[i], &s))
			return 0;
	return 1;
}

void compare_side(struct cmp *c, const char *side,
		  const struct run_json *const *a, int na,
		  const struct run_json *const *b, int nb)
{
	static const double lat_pct[] = { -1, 50, 90, 99, 99.9 };
	static const double stage_pct[] = { -1, 50, 99 };
	struct spec s = { NULL, 1, -1 };
	char name[64], stat[16];
	size_t q;
	int k;

	c->within = na == 1 && nb == 1;
	add(c, side, a[0]->mbps ? "throughput_Mbps" : "throughput", &s, a, na,
	    b, nb);
	s.throughput = 0;
	for (q = 0; q < ARRAY_SIZE(lat_pct); q++) {
		s.pct = lat_pct[q];
		snprintf(stat, sizeof(stat), s.pct < 0 ? "mean" : "p%g", s.pct);
		snprintf(name, sizeof(name), "latency_%s_us", stat);
		add(c, side, name, &s, a, na, b, nb);
	}
	for (k = 0; k < a[0]->nstages; k++) {
		s.stage = a[0]->stage[k];
		if (!all_have(s.stage, a, na) || !all_have(s.stage, b, nb))
			continue;
		for (q = 0; q < ARRAY_SIZE(stage_pct); q++) {
			s.pct = stage_pct[q];
			snprintf(stat, sizeof(stat), s.pct < 0 ? "mean" : "p%g",
				 s.pct);
			snprintf(name, sizeof(name), "stage_%.24s_%s_us",
				 s.stage, stat);
			add(c, side, name, &s, a, na, b, nb);
		}
	}
}

void compare_finish(struct cmp *c)
{
	double *p = xcalloc(c->nfig ? c->nfig : 1, sizeof(*p));
	int i, n = 0;

	for (i = 0; i < c->nfig; i++)
		if (!isnan(c->fig[i].p))
			p[n++] = c->fig[i].p;
	holm_adjust(p, n);
	c->ntested = n;
	c->nbeyond = 0;
	for (i = 0, n = 0; i < c->nfig; i++) {
		if (isnan(c->fig[i].p))
			continue;
		c->fig[i].p = p[n++];
		c->fig[i].beyond = c->fig[i].p < COMPARE_LEVEL;
		c->nbeyond += c->fig[i].beyond;
	}
	free(p);
}

const char *compare_verdict(const struct cmp_fig *f)
{
	if (!f->beyond)
		return "level";
	return f->diff > 0 ? "up" : "down";
}

const char *compare_judgement(const struct cmp_fig *f)
{
	if (!f->beyond)
		return "";
	return (f->diff > 0) == f->higher_better ? "better" : "worse";
}

void compare_free(struct cmp *c)
{
	free(c->fig);
	memset(c, 0, sizeof(*c));
}
