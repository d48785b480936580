#include <math.h>
#include <string.h>

#include "trace/inrun.h"

/* Student's t, two-sided 95%, by degrees of freedom (1..9). */
static const double t95[INRUN_BLOCKS] = {
	0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
};

void inrun_init(struct inrun *ir, uint64_t t0, uint64_t span_ns)
{
	int i, k;

	memset(ir, 0, sizeof(*ir));
	ir->t0 = t0;
	ir->span_ns = span_ns ? span_ns : 1;
	for (k = 0; k < 2; k++) {
		hist_reset(&ir->all[k]);
		for (i = 0; i < INRUN_BLOCKS; i++)
			hist_reset(&ir->block[i][k]);
	}
}

void inrun_add(struct inrun *ir, uint64_t done, uint64_t lat_ns, int timed)
{
	uint64_t at = done > ir->t0 ? done - ir->t0 : 0;
	uint64_t i = at / (ir->span_ns / INRUN_BLOCKS + 1);

	if (i >= INRUN_BLOCKS)
		i = INRUN_BLOCKS - 1;
	timed = !!timed;
	hist_add(&ir->all[timed], lat_ns);
	hist_add(&ir->block[i][timed], lat_ns);
}

void inrun_merge(struct inrun *dst, const struct inrun *src)
{
	int i, k;

	for (k = 0; k < 2; k++) {
		hist_merge(&dst->all[k], &src->all[k]);
		for (i = 0; i < INRUN_BLOCKS; i++)
			hist_merge(&dst->block[i][k], &src->block[i][k]);
	}
}

static double p50_diff(const struct hist *h)
{
	return hist_percentile(&h[1], 50) - hist_percentile(&h[0], 50);
}

int inrun_cost(const struct inrun *ir, struct inrun_cost *c)
{
	double d[INRUN_BLOCKS], mean = 0, var = 0, half;
	int i, n = 0;

	memset(c, 0, sizeof(*c));
	c->timed = ir->all[1].count;
	c->untimed = ir->all[0].count;
	if (c->timed && c->untimed)
		c->p50_ns = p50_diff(ir->all);
	for (i = 0; i < INRUN_BLOCKS; i++)
		if (ir->block[i][0].count && ir->block[i][1].count)
			d[n++] = p50_diff(ir->block[i]);
	c->blocks = n;
	if (n < 2)
		return -1;
	for (i = 0; i < n; i++)
		mean += d[i] / n;
	for (i = 0; i < n; i++)
		var += (d[i] - mean) * (d[i] - mean) / (n - 1);
	half = t95[n - 1] * sqrt(var / n);
	/* Around the whole run's figure: the tenths give its spread. */
	c->lo_ns = c->p50_ns - half;
	c->hi_ns = c->p50_ns + half;
	return 0;
}
