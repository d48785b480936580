/*
 * A run's JSON document read back for `netstage merge` (run_json.h),
 * with jansson: the document is netstage's own, but a merge takes
 * files from other hosts and days, so every field it uses is checked.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "results/run_json.h"

/* The histogram's buckets back into h: [lo_us, hi_us, count] each. */
static int hist_of(json_t *j, struct hist *h)
{
	json_t *b = json_object_get(j, "buckets"), *x;
	json_t *mean = json_object_get(j, "mean_us");
	json_t *max = json_object_get(j, "max_us");
	size_t i;

	hist_reset(h);
	if (!json_is_array(b) || !json_is_number(mean) || !json_is_number(max))
		return -1;
	json_array_foreach(b, i, x) {
		double lo = json_number_value(json_array_get(x, 0));
		json_int_t n = json_integer_value(json_array_get(x, 2));

		if (!json_is_array(x) || lo < 0 || n < 1)
			return -1;
		/* Bucket bounds are whole ns, written to the ns. */
		uint64_t blo, bhi;
		unsigned int ix = hist_index(llround(lo * 1e3));

		h->bucket[ix] += (uint64_t)n;
		/* The spread, from the buckets' midpoints (compare's noise). */
		hist_bucket_range(ix, &blo, &bhi);
		h->sumsq += (double)n * ((blo + bhi) / 2.0) * ((blo + bhi) / 2.0);
		if (!h->count)
			h->min = llround(lo * 1e3);
		h->count += (uint64_t)n;
	}
	h->max = llround(json_number_value(max) * 1e3);
	h->sum = json_number_value(mean) * 1e3 * (double)h->count;
	return 0;
}

static const char *str_of(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static double num_of(json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int stages_of(json_t *side, struct run_json *r)
{
	json_t *st = json_object_get(side, "stages"), *h;
	const char *name;

	if (!json_is_object(st))
		return 0;
	r->stage_hist = xcalloc(RUN_JSON_STAGES, sizeof(*r->stage_hist));
	json_object_foreach(st, name, h) {
		if (r->nstages == RUN_JSON_STAGES)
			return -1;
		snprintf(r->stage[r->nstages], sizeof(r->stage[0]), "%s", name);
		if (hist_of(h, &r->stage_hist[r->nstages++]))
			return -1;
	}
	return 0;
}

/* Each interval's rate (transactions/s, or Mbit/s for a stream). */
static void rates_of(json_t *side, struct run_json *r)
{
	json_t *iv = json_object_get(side, "intervals"), *x;
	size_t i;

	if (!json_is_array(iv) || !json_array_size(iv))
		return;
	r->rate = xcalloc(json_array_size(iv), sizeof(*r->rate));
	json_array_foreach(iv, i, x) {
		json_t *v = json_object_get(x, r->mbps ? "mbps" : "rate");

		if (json_is_number(v))
			r->rate[r->nrate++] = json_number_value(v);
	}
}

static int side_of(json_t *side, struct run_json *r)
{
	json_t *nsd = json_object_get(side, "netstage");
	json_t *res = json_object_get(side, "results");
	json_t *opt = json_object_get(side, "options");
	json_t *lat = json_object_get(side, "latency");
	const char *s;

	if (!json_is_object(nsd) || !json_is_object(res) ||
	    !json_is_object(opt))
		return -1;
	snprintf(r->workload, sizeof(r->workload), "%s",
		 str_of(nsd, "workload") ?: "");
	snprintf(r->role, sizeof(r->role), "%s", str_of(nsd, "role") ?: "");
	s = str_of(opt, "request_size");
	snprintf(r->request, sizeof(r->request), "%s", s ?: "");
	s = str_of(opt, "response_size");
	snprintf(r->response, sizeof(r->response), "%s", s ?: "");
	if (!*r->request)
		snprintf(r->request, sizeof(r->request), "%g",
			 num_of(opt, "request_size", -1));
	if (!*r->response)
		snprintf(r->response, sizeof(r->response), "%g",
			 num_of(opt, "response_size", -1));
	r->time_start = num_of(res, "time_start", NAN);
	r->time_end = num_of(res, "time_end", NAN);
	r->transactions = (uint64_t)num_of(res, "num_transactions", 0);
	r->mbps = json_object_get(res, "throughput_Mbps") != NULL;
	r->throughput = num_of(res, r->mbps ? "throughput_Mbps" :
				   "throughput", NAN);
	r->cpu_util = num_of(res, "local_cpu_util", -1);
	if (!*r->workload || isnan(r->time_start) || isnan(r->time_end) ||
	    isnan(r->throughput))
		return -1;
	if (json_is_object(lat)) {
		if (hist_of(lat, &r->lat))
			return -1;
		r->has_lat = 1;
	}
	rates_of(side, r);
	return stages_of(side, r);
}

/*
 * The sides of path's document into r[0..max-1]: a --local document's
 * client and server, another its one side. The count, or -1.
 */
static int read_doc(const char *path, const char *who, struct run_json *r,
		    int max, char *err, size_t len)
{
	static const char *const local[] = { "client", "server" };
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je), *side;
	int n = 0, i, rc = 0;

	memset(r, 0, sizeof(*r) * max);
	if (!doc) {
		snprintf(err, len, "%s: %s: %s (line %d)", who, path, je.text,
			 je.line);
		return -1;
	}
	for (i = 0; i < 2 && n < max && !rc; i++)
		if ((side = json_object_get(doc, local[i])))
			rc = side_of(side, &r[n++]);
	if (!n)
		rc = side_of(doc, &r[n++]);
	json_decref(doc);
	if (rc) {
		snprintf(err, len, "%s: %s is no netstage results document "
			 "(docs/netstage.schema.json)", who, path);
		for (i = 0; i < n; i++)
			run_json_free(&r[i]);
		return -1;
	}
	return n;
}

int run_json_read(const char *path, struct run_json *r, char *err,
		  size_t len)
{
	/* --local's document: its client's side. */
	return read_doc(path, "merge", r, 1, err, len) < 0 ? -1 : 0;
}

int run_json_read_sides(const char *path, const char *who,
			struct run_json r[2], char *err, size_t len)
{
	return read_doc(path, who, r, 2, err, len);
}

void run_json_free(struct run_json *r)
{
	free(r->rate);
	r->rate = NULL;
	r->nrate = 0;
	free(r->stage_hist);
	r->stage_hist = NULL;
	r->nstages = 0;
}
