/*
 * A worker's intervals: each closes with a tick of its counts, a
 * sample per flow (-A) and, from the first worker, the progress line;
 * at the end what is left folds into the totals.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/common.h"
#include "trace/collect.h"
#include "trace/tracer.h"
#include "engine/worker.h"

/* Per-flow samples one worker keeps at most: memory stays bounded. */
#define MAX_SAMPLES_PER_WORKER (1L << 20)

static void record_sample(struct worker *w, struct flow *f, uint64_t now,
			  const struct rusage *ru, uint64_t lost)
{
	const struct percentiles *pc = &w->rs->o->percentiles;
	struct sample *s;
	int i;

	if (w->nsamples == MAX_SAMPLES_PER_WORKER)
		return;
	if (w->nsamples == w->samples_cap) {
		w->samples_cap = w->samples_cap ? 2 * w->samples_cap : 64;
		w->samples = xrealloc(w->samples, w->samples_cap,
				      sizeof(*w->samples));
	}
	s = &w->samples[w->nsamples++];
	memset(s, 0, sizeof(*s));
	s->time = now;
	s->tid = w->id;
	s->flow_id = f->id;
	s->bytes_read = f->bytes_read;
	s->bytes_written = f->bytes_written;
	s->transactions = f->transactions;
	s->ru = *ru;
	s->trace_lost = lost;
	for (i = 0; f->st_count && i < NS_MAX_STAGES; i++)
		s->stage_mean[i] = f->st_sum[i] / 1e9 / f->st_count;
	f->st_count = 0;
	memset(f->st_sum, 0, sizeof(f->st_sum));
	if (!f->own_lat || !f->lat->count)
		return;
	s->lat_min = f->lat->min / 1e9;
	s->lat_mean = hist_mean(f->lat) / 1e9;
	s->lat_max = f->lat->max / 1e9;
	s->lat_stddev = hist_stddev(f->lat) / 1e9;
	for (i = 0; i < pc->n; i++)
		s->pct[i] = hist_percentile(f->lat, pc->p[i]) / 1e9;
}

static void push_tick(struct worker *w, uint64_t time, uint64_t trans,
		      uint64_t bytes)
{
	if (w->nticks == w->ticks_cap) {
		w->ticks_cap = w->ticks_cap ? 2 * w->ticks_cap : 64;
		w->ticks = xrealloc(w->ticks, w->ticks_cap, sizeof(*w->ticks));
	}
	w->ticks[w->nticks++] = (struct tick){ time, trans, bytes };
}

/* The interval's latencies join the totals; a new interval begins. */
static void fold_interval(struct worker *w)
{
	hist_merge(&w->lat_total, &w->ilat);
	hist_reset(&w->ilat);
	hist_merge(&w->lat_unc_total, &w->ilat_unc);
	hist_reset(&w->ilat_unc);
}

void worker_finish(struct worker *w)
{
	for (int i = 0; i < w->nflows; i++)
		flow_close_interval(w->flows[i], &w->ilat);
	fold_interval(w);
}

/* Close interval k at `now`: one tick, samples, and the progress report. */
void worker_snapshot(struct worker *w, uint64_t now)
{
	struct run_shared *rs = w->rs;
	uint64_t trans = 0, bytes = 0, lost = 0;
	struct rusage ru;
	int i;

	if (rs->record_samples) {
		getrusage(RUSAGE_SELF, &ru);
		if (rs->tracer && !rs->trace_hist)
			lost = tracer_lost(rs->tracer);
	}
	trans = w->gone_transactions;
	bytes = w->gone_read + w->gone_written;
	for (i = 0; i < w->nflows; i++) {
		struct flow *f = w->flows[i];

		trans += f->transactions;
		bytes += f->bytes_read + f->bytes_written;
		if (rs->record_samples)
			record_sample(w, f, now, &ru, lost);
		flow_close_interval(f, &w->ilat);
	}
	if (!rs->no_history)
		push_tick(w, now, trans, bytes);
	intervals_report(&rs->iv, w->k, trans - w->prev_transactions,
			 bytes - w->prev_bytes, rs->wl->is_rr ? &w->ilat : NULL);
	fold_interval(w);
	w->prev_transactions = trans;
	w->prev_bytes = bytes;
	w->k++;
	w->next_snap = rs->t_start + (w->k + 1) * rs->interval_ns;
	/* A worker that slept through intervals reports them as empty. */
	while (now >= w->next_snap) {
		if (!rs->no_history)
			push_tick(w, w->next_snap, trans, bytes);
		intervals_report(&rs->iv, w->k, 0, 0, NULL);
		w->k++;
		w->next_snap = rs->t_start + (w->k + 1) * rs->interval_ns;
	}
}

void worker_final_snapshot(struct worker *w)
{
	uint64_t now = now_ns();

	if (now + w->rs->interval_ns / 10 >= w->next_snap)
		worker_snapshot(w, now);
}
