/*
 * Two clocks aligned from four stamps an exchange (trace/clock.h), on
 * exchanges made here with a known offset and drift: the fit recovers
 * them within the bound it states; an asymmetry of the wire legs'
 * minima shifts it by half their difference, which only the causal
 * bound covers; a clock that steps is seen.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "trace/clock.h"

#define N 20000
#define T0 1000000000000ULL		/* the client's clock at the start */
/* The server's clock: three days ahead and 5 ms, gaining 30 ppm. */
#define BASE (3 * 86400ULL * 1000000000ULL)
#define OFF 5000000.0
#define DRIFT 30e-6

struct link {
	double fwd_min, back_min;	/* ns */
	double step_at, step;		/* the server's clock jumps: ns */
};

static uint64_t rng = 88172645463325252ULL;

/* xorshift64: the same exchanges on every run. */
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

/* A wire leg: its minimum three times in ten, else up to 40 us more. */
static double leg(double min)
{
	return uniform() < 0.3 ? min : min + 40000 * uniform();
}

static uint64_t server_clock(double c, const struct link *l)
{
	double rel = c - (double)T0;
	double off = OFF + DRIFT * rel + (rel >= l->step_at ? l->step : 0);

	return BASE + (uint64_t)llround(c + off);
}

static struct clock_exchange *exchanges(const struct link *l)
{
	struct clock_exchange *x = calloc(N, sizeof(*x));
	int i;

	for (i = 0; i < N; i++) {
		/* 500 us apart: 10 s of them. */
		double c_tx = (double)T0 + 500000.0 * i + 1000 * uniform();
		double s_rx = c_tx + leg(l->fwd_min);
		double s_tx = s_rx + 5000 + 5000 * uniform();
		double c_rx = s_tx + leg(l->back_min);

		x[i].c_tx = (uint64_t)llround(c_tx);
		x[i].s_rx = server_clock(s_rx, l);
		x[i].s_tx = server_clock(s_tx, l);
		x[i].c_rx = (uint64_t)llround(c_rx);
	}
	return x;
}

/* The fit's offset at t0 less the true one, ns. */
static double offset_error(const struct clock_fit *f)
{
	double truth = OFF + DRIFT * (double)(f->t0 - T0);

	return (double)(f->base_ns - (int64_t)BASE) + f->offset_ns - truth;
}

static void t_offset_and_drift_recovered(void **state)
{
	struct link l = { 3000, 3000, INFINITY, 0 };
	struct clock_exchange *x = exchanges(&l);
	struct clock_fit f;
	double err;

	assert_int_equal(clock_fit(x, N, &f), 0);
	err = offset_error(&f);
	print_message("offset error %.2f ns, drift %.4f ppm, bound %.2f ns, "
		      "causal %.1f ns\n", err, f.drift_ppm, f.bound_ns,
		      f.causal_ns);
	assert_int_equal(f.windows, CLOCK_WINDOWS);
	assert_int_equal(f.exchanges, N);
	/* Within the bound, which is close to the stamps' 1 ns. */
	assert_true(fabs(err) <= f.bound_ns);
	assert_true(f.bound_ns < 5);
	assert_true(fabs(f.drift_ppm - DRIFT * 1e6) < 0.001);
	/* Causality alone: half the least round trip outside the server. */
	assert_true(fabs(f.causal_ns - 3000) < 5);
	assert_int_equal(f.negative, 0);
	/* A server stamp back on the client's clock, to the bound. */
	for (int i = 0; i < N; i += 997) {
		double c = (double)x[i].s_rx - (double)BASE - OFF;
		double want = (c + DRIFT * (double)T0) / (1 + DRIFT);
		double got = (double)clock_to_client(&f, x[i].s_rx);

		assert_true(fabs(got - want) <= f.bound_ns + 1);
	}
	free(x);
}

/* Minima of 5 us forward, 1 us back: the estimate moves by 2 us. */
static void t_asymmetry_is_half_the_difference(void **state)
{
	struct link l = { 5000, 1000, INFINITY, 0 };
	struct clock_exchange *x = exchanges(&l);
	struct clock_fit f;
	double err;

	assert_int_equal(clock_fit(x, N, &f), 0);
	err = offset_error(&f);
	assert_true(fabs(err - 2000) <= f.bound_ns);
	assert_true(fabs(err) > f.bound_ns);
	assert_true(fabs(err) <= f.causal_ns);
	assert_int_equal(f.negative, 0);
	free(x);
}

/* The server's clock jumps 20 us mid-run: no line fits; it says so. */
static void t_a_step_is_seen(void **state)
{
	struct link l = { 3000, 3000, 5e9, 20000 };
	struct clock_exchange *x = exchanges(&l);
	struct clock_fit f;

	assert_int_equal(clock_fit(x, N, &f), 0);
	assert_true(f.bound_ns > 3000);
	assert_true(f.negative > 0);
	free(x);
}

static void t_too_few_or_impossible(void **state)
{
	struct link l = { 3000, 3000, INFINITY, 0 };
	struct clock_exchange *x = exchanges(&l);
	struct clock_fit f;

	assert_int_equal(clock_fit(x, CLOCK_MIN_PER_WINDOW - 1, &f), -1);
	assert_int_equal(clock_fit(x, CLOCK_MIN_PER_WINDOW, &f), 0);
	assert_int_equal(f.windows, 1);
	/* A request the server saw 20 us before it was sent. */
	x[100].s_rx -= 20000 + 3000 + 40000;
	assert_int_equal(clock_fit(x, N, &f), -1);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_offset_and_drift_recovered),
		cmocka_unit_test(t_asymmetry_is_half_the_difference),
		cmocka_unit_test(t_a_step_is_seen),
		cmocka_unit_test(t_too_few_or_impossible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
