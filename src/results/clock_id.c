/*
 * Whose clock a side's stamps are on, and the test-only skew that
 * makes one side's clock another's (clock_id.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "results/clock_id.h"

static int64_t ns_of(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* `id` minus CLOCK_MONOTONIC, from the read with the least around it. */
static int64_t ahead_of_monotonic(clockid_t id)
{
	int64_t best = INT64_MAX, off = 0, a, x, b;
	int i;

	for (i = 0; i < 8; i++) {
		a = ns_of(CLOCK_MONOTONIC);
		x = ns_of(id);
		b = ns_of(CLOCK_MONOTONIC);
		if (b - a < best) {
			best = b - a;
			off = x - (a + (b - a) / 2);
		}
	}
	return off;
}

void clock_offsets_read(int64_t *realtime_ns, int64_t *tai_ns)
{
	*realtime_ns = ahead_of_monotonic(CLOCK_REALTIME);
	*tai_ns = ahead_of_monotonic(CLOCK_TAI);
}

void clock_id_read(char *id, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	id[0] = '\0';
	if (!f)
		return;
	if (!fgets(id, (int)len, f))
		id[0] = '\0';
	id[strcspn(id, "\n")] = '\0';
	fclose(f);
}

int clock_skew_from_env(struct clock_skew *s, char *err, size_t len)
{
	const char *v = getenv("NETSTAGE_TEST_CLOCK_SKEW");
	char *end;

	*s = (struct clock_skew){ 0 };
	if (!v)
		return 0;
	errno = 0;
	s->offset_ns = strtoll(v, &end, 10);
	if (errno || end == v || *end != ',')
		goto bad;
	v = end + 1;
	s->ppm = strtod(v, &end);
	/* A drift past 1% is no clock's; the test asks tens of ppm. */
	if (errno || end == v || *end || !isfinite(s->ppm) ||
	    fabs(s->ppm) > 10000)
		goto bad;
	s->on = 1;
	return 0;
bad:
	snprintf(err, len, "NETSTAGE_TEST_CLOCK_SKEW=%s: not OFFSET_NS,PPM "
		 "(an integer, a number of at most 10000)",
		 getenv("NETSTAGE_TEST_CLOCK_SKEW"));
	return -1;
}

static uint64_t skewed(const struct clock_skew *s, uint64_t t)
{
	return t + (uint64_t)(s->offset_ns + llround((double)t * s->ppm * 1e-6));
}

void clock_skew_apply(const struct clock_skew *s, struct rec_set *set,
		      char *id, size_t len)
{
	size_t n = strlen(id);
	int i, b;
	long r;

	if (!s->on)
		return;
	for (i = 0; i < set->nworkers; i++)
		for (r = 0; r < set->n[i]; r++) {
			struct trace_rec *x = &set->recs[i][r];

			for (b = 0; b < NS_B_COUNT; b++)
				if (x->b[b])
					x->b[b] = skewed(s, x->b[b]);
			if (x->sw_tx)
				x->sw_tx = skewed(s, x->sw_tx);
			if (x->sw_rx)
				x->sw_rx = skewed(s, x->sw_rx);
		}
	snprintf(id + n, len - n, "+skew");
}
