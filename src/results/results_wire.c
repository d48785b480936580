#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "results/results_wire.h"

/* Signed values travel as their two's complement in a u64. */
static void put_int(struct wbuf *b, long long v)
{
	wput_u64(b, (uint64_t)v);
}

static long long get_int(struct rbuf *b)
{
	return (long long)wget_u64(b);
}

static void put_rec(struct wbuf *b, const struct trace_rec *r)
{
	int i;

	wput_u32(b, r->flow_id);
	wput_u32(b, r->worker);
	wput_u32(b, r->port);
	wput_u32(b, r->next_port);
	wput_u64(b, r->seq);
	for (i = 0; i < NS_B_COUNT; i++)
		wput_u64(b, r->b[i]);
	wput_u64(b, r->sw_tx);
	wput_u64(b, r->sw_rx);
	wput_u64(b, r->prio);
	wput_u64(b, r->span);
	wput_u8(b, (uint8_t)r->slowest);
	wput_u32(b, r->held_pid);
	wput_u32(b, r->held_cpu);
	wput_bytes(b, r->held_comm, sizeof(r->held_comm));
}

static void get_rec(struct rbuf *b, struct trace_rec *r)
{
	int i;

	r->flow_id = wget_u32(b);
	r->worker = (uint16_t)wget_u32(b);
	r->port = (uint16_t)wget_u32(b);
	r->next_port = (uint16_t)wget_u32(b);
	r->seq = wget_u64(b);
	for (i = 0; i < NS_B_COUNT; i++)
		r->b[i] = wget_u64(b);
	r->sw_tx = wget_u64(b);
	r->sw_rx = wget_u64(b);
	r->prio = wget_u64(b);
	r->span = wget_u64(b);
	r->slowest = wget_u8(b);
	r->held_pid = wget_u32(b);
	r->held_cpu = wget_u32(b);
	wget_bytes(b, r->held_comm, sizeof(r->held_comm));
	r->held_comm[sizeof(r->held_comm) - 1] = '\0';
}

static void put_inrun(struct wbuf *b, const struct inrun_cost *c)
{
	wput_f64(b, c->p50_ns);
	wput_f64(b, c->lo_ns);
	wput_f64(b, c->hi_ns);
	put_int(b, c->blocks);
	wput_u64(b, c->timed);
	wput_u64(b, c->untimed);
}

static void get_inrun(struct rbuf *b, struct inrun_cost *c)
{
	c->p50_ns = wget_f64(b);
	c->lo_ns = wget_f64(b);
	c->hi_ns = wget_f64(b);
	c->blocks = (int)get_int(b);
	c->timed = wget_u64(b);
	c->untimed = wget_u64(b);
}

/* The counts of a trace summary, in the order of its struct. */
#define TS_COUNTS(X) X(untimed) X(complete) X(incomplete) X(missing) \
	X(disorder) X(norecord) X(lost) X(records_kept) X(records_slowest) \
	X(records_offered) X(retransmits) X(retransmitted)

static void put_summary(struct wbuf *b, const struct trace_summary *ts)
{
	int i;

#define PUT(f) wput_u64(b, ts->f);
	wput_u32(b, ts->side);
	wput_u8(b, (uint8_t)ts->hist_mode);
	wput_u32(b, ts->sample);
	wput_u32(b, ts->control);
	wput_f64(b, ts->user_ns);
	TS_COUNTS(PUT)
#undef PUT
	for (i = 0; i < NS_B_COUNT; i++)
		wput_u64(b, ts->bad_at[i]);
	wput_u8(b, (uint8_t)ts->has_retrans);
	wput_u8(b, (uint8_t)ts->retrans_partial);
	wput_u8(b, (uint8_t)ts->has_inrun);
	put_inrun(b, &ts->inrun);
	wput_hist(b, &ts->held);
	for (i = 0; i < NS_MAX_STAGES; i++)
		wput_hist(b, &ts->stage[i]);
	wput_u64(b, (uint64_t)ts->ntail);
	for (i = 0; i < ts->ntail; i++)
		put_rec(b, &ts->tail[i]);
}

static void get_summary(struct rbuf *b, struct trace_summary *ts)
{
	int i;

#define GET(f) ts->f = wget_u64(b);
	ts->side = wget_u32(b);
	ts->hist_mode = wget_u8(b);
	ts->sample = wget_u32(b);
	ts->control = wget_u32(b);
	ts->user_ns = wget_f64(b);
	TS_COUNTS(GET)
#undef GET
	for (i = 0; i < NS_B_COUNT; i++)
		ts->bad_at[i] = wget_u64(b);
	ts->has_retrans = wget_u8(b);
	ts->retrans_partial = wget_u8(b);
	ts->has_inrun = wget_u8(b);
	get_inrun(b, &ts->inrun);
	wget_hist(b, &ts->held);
	for (i = 0; i < NS_MAX_STAGES; i++)
		wget_hist(b, &ts->stage[i]);
	ts->ntail = (int)wget_count(b, TRACE_TAIL);
	for (i = 0; i < ts->ntail; i++)
		get_rec(b, &ts->tail[i]);
	ts->cost = NULL;
}

static void put_cost(struct wbuf *b, const struct trace_cost_parts *c)
{
	wput_f64(b, c->bpf_ns);
	wput_f64(b, c->entry_ns);
	wput_f64(b, c->user_ns);
	wput_f64(b, c->total_ns);
	wput_f64(b, c->runs);
	wput_u8(b, (uint8_t)c->has_entry);
}

static void get_cost(struct rbuf *b, struct trace_cost_parts *c)
{
	c->bpf_ns = wget_f64(b);
	c->entry_ns = wget_f64(b);
	c->user_ns = wget_f64(b);
	c->total_ns = wget_f64(b);
	c->runs = wget_f64(b);
	c->has_entry = wget_u8(b);
}

static void put_intervals(struct wbuf *b, const struct run_results *r)
{
	long i;

	wput_u64(b, (uint64_t)r->niv);
	for (i = 0; i < r->niv; i++) {
		const struct interval_sum *s = &r->iv[i];

		wput_f64(b, s->t_end);
		wput_u64(b, s->transactions);
		wput_u64(b, s->bytes);
		wput_f64(b, s->rate);
		wput_f64(b, s->mbps);
		wput_f64(b, s->p50_us);
		wput_f64(b, s->p90_us);
		wput_f64(b, s->p99_us);
	}
	wput_u8(b, (uint8_t)r->iv_lat);
}

static void get_intervals(struct rbuf *b, struct run_results *r)
{
	long i;

	/* Each takes 64 bytes: a count past the buffer is corrupt. */
	r->niv = (long)wget_count(b, (b->n - b->off) / 64);
	r->iv = xcalloc(r->niv ? r->niv : 1, sizeof(*r->iv));
	for (i = 0; i < r->niv; i++) {
		struct interval_sum *s = &r->iv[i];

		s->t_end = wget_f64(b);
		s->transactions = wget_u64(b);
		s->bytes = wget_u64(b);
		s->rate = wget_f64(b);
		s->mbps = wget_f64(b);
		s->p50_us = wget_f64(b);
		s->p90_us = wget_f64(b);
		s->p99_us = wget_f64(b);
	}
	r->iv_lat = wget_u8(b);
}

static void put_records(struct wbuf *b, const struct rec_set *s)
{
	long j;
	int i;

	wput_u64(b, (uint64_t)s->nworkers);
	for (i = 0; i < s->nworkers; i++) {
		wput_u64(b, (uint64_t)s->n[i]);
		for (j = 0; j < s->n[i]; j++)
			put_rec(b, &s->recs[i][j]);
	}
}

/* A record is at least this many bytes on the wire. */
#define REC_MIN_BYTES (8 * NS_B_COUNT)

static void get_records(struct rbuf *b, struct rec_set *s)
{
	long j;
	int i;

	s->nworkers = (int)wget_count(b, NS_MAX_RINGS);
	for (i = 0; i < s->nworkers && !b->bad; i++) {
		s->n[i] = (long)wget_count(b, (b->n - b->off) / REC_MIN_BYTES);
		if (!s->n[i])
			continue;
		s->recs[i] = xcalloc(s->n[i], sizeof(*s->recs[i]));
		for (j = 0; j < s->n[i]; j++)
			get_rec(b, &s->recs[i][j]);
	}
}

static void put_totals(struct wbuf *b, const struct run_results *r)
{
	wput_f64(b, r->throughput);
	wput_u8(b, (uint8_t)r->throughput_mbps);
	wput_u64(b, r->transactions);
	wput_u64(b, r->bytes_read);
	wput_u64(b, r->bytes_written);
	wput_u64(b, r->io_errors);
	put_int(b, r->flows);
	wput_f64(b, r->duration_s);
	wput_f64(b, r->cpu_util);
	put_int(b, r->ncpus);
	wput_f64(b, r->service_demand_us);
	wput_str(b, r->error);
}

static void get_totals(struct rbuf *b, struct run_results *r)
{
	r->throughput = wget_f64(b);
	r->throughput_mbps = wget_u8(b);
	r->transactions = wget_u64(b);
	r->bytes_read = wget_u64(b);
	r->bytes_written = wget_u64(b);
	r->io_errors = wget_u64(b);
	r->flows = (int)get_int(b);
	r->duration_s = wget_f64(b);
	r->cpu_util = wget_f64(b);
	r->ncpus = (int)get_int(b);
	r->service_demand_us = wget_f64(b);
	r->error = wget_str(b);
}

static void put_trace(struct wbuf *b, const struct run_results *r)
{
	wput_u8(b, (uint8_t)r->trace_asked);
	wput_u8(b, (uint8_t)r->traced);
	wput_str(b, r->trace_off);
	wput_u8(b, (uint8_t)r->trace_hist);
	put_summary(b, &r->ts);
	wput_u8(b, (uint8_t)r->has_cost);
	put_cost(b, &r->cost);
	wput_u8(b, (uint8_t)r->cost_both_ends);
	put_records(b, &r->recs);
}

static void get_trace(struct rbuf *b, struct run_results *r)
{
	r->trace_asked = wget_u8(b);
	r->traced = wget_u8(b);
	wget_strn(b, r->trace_off, sizeof(r->trace_off));
	r->trace_hist = wget_u8(b);
	get_summary(b, &r->ts);
	r->has_cost = wget_u8(b);
	get_cost(b, &r->cost);
	r->cost_both_ends = wget_u8(b);
	get_records(b, &r->recs);
}

static void put_payload(struct wbuf *b, const struct run_results *r)
{
	int i;

	/* The stage list's shape: another build's is refused. */
	wput_u32(b, NS_B_COUNT);
	wput_u32(b, NS_MAX_STAGES);
	wput_u32(b, HIST_BUCKETS);
	wput_u8(b, (uint8_t)r->is_client);
	wput_str(b, r->role);
	wput_str(b, r->workload);
	wput_u8(b, (uint8_t)r->is_rr);
	wput_u32(b, r->side);
	wput_kv(b, &r->keys);
	wput_kv(b, &r->options);
	wput_kv(b, &r->header);
	put_totals(b, r);
	wput_u8(b, (uint8_t)r->has_lat);
	wput_hist(b, &r->lat);
	wput_u64(b, r->t_start);
	put_intervals(b, r);
	put_trace(b, r);
	wput_u64(b, (uint64_t)r->pc.n);
	for (i = 0; i < r->pc.n; i++)
		wput_f64(b, r->pc.p[i]);
}

static void get_payload(struct rbuf *b, struct run_results *r)
{
	int i;

	if (wget_u32(b) != NS_B_COUNT || wget_u32(b) != NS_MAX_STAGES ||
	    wget_u32(b) != HIST_BUCKETS) {
		b->bad = 2;
		return;
	}
	r->is_client = wget_u8(b);
	wget_strn(b, r->role, sizeof(r->role));
	wget_strn(b, r->workload, sizeof(r->workload));
	r->is_rr = wget_u8(b);
	r->side = wget_u32(b);
	wget_kv(b, &r->keys);
	wget_kv(b, &r->options);
	wget_kv(b, &r->header);
	get_totals(b, r);
	r->has_lat = wget_u8(b);
	wget_hist(b, &r->lat);
	r->t_start = wget_u64(b);
	get_intervals(b, r);
	get_trace(b, r);
	r->pc.n = (int)wget_count(b, MAX_PERCENTILES);
	for (i = 0; i < r->pc.n; i++)
		r->pc.p[i] = wget_f64(b);
}

void results_encode(const struct run_results *r, struct wbuf *b)
{
	size_t at = b->n;
	struct wbuf len = { 0 };

	wput_u32(b, RESULTS_MAGIC);
	wput_u32(b, RESULTS_VERSION);
	wput_u64(b, 0);
	put_payload(b, r);
	/* The length, now known, over the placeholder. */
	wput_u64(&len, b->n - at - RESULTS_HDR_LEN);
	memcpy(b->p + at + 8, len.p, 8);
	wbuf_free(&len);
}

struct run_results *results_decode(const void *p, size_t n, char *err,
				   size_t len)
{
	struct rbuf b = { .p = p, .n = n };
	struct run_results *r;
	uint32_t magic, version;
	uint64_t plen;

	magic = wget_u32(&b);
	version = wget_u32(&b);
	plen = wget_u64(&b);
	if (b.bad || magic != RESULTS_MAGIC) {
		snprintf(err, len, "not a netstage results frame");
		return NULL;
	}
	if (version != RESULTS_VERSION) {
		snprintf(err, len, "results of format version %u, this "
			 "netstage reads %u", version, RESULTS_VERSION);
		return NULL;
	}
	if (plen != n - RESULTS_HDR_LEN) {
		snprintf(err, len, "results frame of %llu bytes, %zu given",
			 (unsigned long long)plen, n - RESULTS_HDR_LEN);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	get_payload(&b, r);
	if (!b.bad && b.off != b.n)
		b.bad = 1;
	if (b.bad) {
		snprintf(err, len, b.bad == 2 ?
			 "results from a netstage of another stage list" :
			 "results frame corrupt at byte %zu of %zu", b.off, n);
		run_results_free(r);
		return NULL;
	}
	return r;
}

int results_send(int fd, const struct run_results *r)
{
	struct wbuf b = { 0 };
	size_t off = 0;
	ssize_t k;

	results_encode(r, &b);
	while (off < b.n) {
		k = write(fd, b.p + off, b.n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			wbuf_free(&b);
			return -1;
		}
		off += (size_t)k;
	}
	wbuf_free(&b);
	return 0;
}

/* n bytes into p by the deadline: 0, 1 at end of file, -1 (errno). */
static int read_full(int fd, unsigned char *p, size_t n, uint64_t deadline)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	size_t off = 0;
	uint64_t now;
	ssize_t k;

	while (off < n) {
		now = now_ns();
		if (now >= deadline)
			return errno = ETIMEDOUT, -1;
		if (poll(&pf, 1, (int)((deadline - now) / 1000000 + 1)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		k = read(fd, p + off, n - off);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			return off ? (errno = EPIPE, -1) : 1;
		off += (size_t)k;
	}
	return 0;
}

struct run_results *results_recv(int fd, int timeout_ms, char *err,
				 size_t len)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000;
	unsigned char hdr[RESULTS_HDR_LEN], *p;
	struct rbuf b = { .p = hdr, .n = sizeof(hdr) };
	struct run_results *r;
	uint64_t plen;
	int rc;

	rc = read_full(fd, hdr, sizeof(hdr), deadline);
	if (rc) {
		snprintf(err, len, "%s", rc > 0 ? "" : strerror(errno));
		return NULL;
	}
	b.off = 8;
	plen = wget_u64(&b);
	if (plen > RESULTS_MAX_LEN) {
		snprintf(err, len, "a results frame of %llu bytes",
			 (unsigned long long)plen);
		return NULL;
	}
	p = xcalloc(1, sizeof(hdr) + plen);
	memcpy(p, hdr, sizeof(hdr));
	rc = read_full(fd, p + sizeof(hdr), plen, deadline);
	if (rc) {
		snprintf(err, len, "the results ended early: %s",
			 rc > 0 ? "end of file" : strerror(errno));
		free(p);
		return NULL;
	}
	r = results_decode(p, sizeof(hdr) + plen, err, len);
	free(p);
	return r;
}
