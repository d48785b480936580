#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "results/results_wire.h"

/*
 * Each struct's fields are listed once, as X(type, field), and both
 * directions expand the one list: the order cannot differ. Signed
 * values travel as their two's complement in a u64.
 */
#define PUT_u8(f) wput_u8(b, (uint8_t)(x->f));
#define PUT_u32(f) wput_u32(b, (uint32_t)(x->f));
#define PUT_u64(f) wput_u64(b, (uint64_t)(x->f));
#define PUT_int(f) wput_u64(b, (uint64_t)(long long)(x->f));
#define PUT_f64(f) wput_f64(b, x->f);
#define GET_u8(f) x->f = wget_u8(b);
#define GET_u32(f) x->f = wget_u32(b);
#define GET_u64(f) x->f = wget_u64(b);
#define GET_int(f) x->f = (long long)wget_u64(b);
#define GET_f64(f) x->f = wget_f64(b);
#define PUT(t, f) PUT_##t(f)
#define GET(t, f) GET_##t(f)

#define REC_FIELDS(X) X(u32, flow_id) X(u32, worker) X(u32, port) \
	X(u32, next_port) X(u64, seq) X(u64, sw_tx) X(u64, sw_rx) \
	X(u64, prio) X(u64, span) X(u8, slowest) X(u32, held_pid) \
	X(u32, held_cpu)

static void put_rec(struct wbuf *b, const struct trace_rec *x)
{
	int i;

	REC_FIELDS(PUT)
	for (i = 0; i < NS_B_COUNT; i++)
		wput_u64(b, x->b[i]);
	wput_bytes(b, x->held_comm, sizeof(x->held_comm));
}

static void get_rec(struct rbuf *b, struct trace_rec *x)
{
	int i;

	REC_FIELDS(GET)
	for (i = 0; i < NS_B_COUNT; i++)
		x->b[i] = wget_u64(b);
	wget_bytes(b, x->held_comm, sizeof(x->held_comm));
	x->held_comm[sizeof(x->held_comm) - 1] = '\0';
}

#define INRUN_FIELDS(X) X(f64, p50_ns) X(f64, lo_ns) X(f64, hi_ns) \
	X(int, blocks) X(u64, timed) X(u64, untimed)
#define COST_FIELDS(X) X(f64, bpf_ns) X(f64, entry_ns) X(f64, user_ns) \
	X(f64, total_ns) X(f64, runs) X(u8, has_entry)
#define INTERVAL_FIELDS(X) X(f64, t_end) X(u64, transactions) \
	X(u64, bytes) X(f64, rate) X(f64, mbps) X(f64, p50_us) \
	X(f64, p90_us) X(f64, p99_us)
/* A trace summary's scalars, in the order of its struct. */
#define SUMMARY_FIELDS(X) X(u32, side) X(u8, hist_mode) X(u32, sample) \
	X(u32, control) X(f64, user_ns) X(u64, untimed) X(u64, complete) \
	X(u64, incomplete) X(u64, missing) X(u64, disorder) \
	X(u64, norecord) X(u64, lost) X(u64, records_kept) \
	X(u64, records_slowest) X(u64, records_offered) \
	X(u8, has_retrans) X(u8, retrans_partial) X(u64, retransmits) \
	X(u64, retransmitted) X(u8, has_inrun)
#define TOTALS_FIELDS(X) X(f64, throughput) X(u8, throughput_mbps) \
	X(u64, transactions) X(u64, bytes_read) X(u64, bytes_written) \
	X(u64, io_errors) X(int, flows) X(f64, duration_s) \
	X(f64, cpu_util) X(int, ncpus) X(f64, service_demand_us)

static void put_inrun(struct wbuf *b, const struct inrun_cost *x)
{
	INRUN_FIELDS(PUT)
}

static void get_inrun(struct rbuf *b, struct inrun_cost *x)
{
	INRUN_FIELDS(GET)
}

static void put_tail_part(struct wbuf *b, const struct tail_part *x)
{
	int j;

	wput_u64(b, x->n);
	wput_f64(b, x->above_ns);
	for (j = 0; j < NS_MAX_STAGES; j++) {
		wput_f64(b, x->share[j]);
		wput_f64(b, x->excess_ns[j]);
	}
}

static void get_tail_part(struct rbuf *b, struct tail_part *x)
{
	int j;

	x->n = wget_u64(b);
	x->above_ns = wget_f64(b);
	for (j = 0; j < NS_MAX_STAGES; j++) {
		x->share[j] = wget_f64(b);
		x->excess_ns[j] = wget_f64(b);
	}
}

static void put_summary(struct wbuf *b, const struct trace_summary *x)
{
	int i;

	SUMMARY_FIELDS(PUT)
	for (i = 0; i < NS_B_COUNT; i++)
		wput_u64(b, x->bad_at[i]);
	put_inrun(b, &x->inrun);
	wput_hist(b, &x->held);
	for (i = 0; i < NS_MAX_STAGES; i++)
		wput_hist(b, &x->stage[i]);
	wput_u64(b, (uint64_t)x->ntail);
	for (i = 0; i < x->ntail; i++)
		put_rec(b, &x->tail[i]);
	for (i = 0; i < TAIL_QUANTILES; i++)
		put_tail_part(b, &x->tailq[i]);
}

static void get_summary(struct rbuf *b, struct trace_summary *x)
{
	int i;

	SUMMARY_FIELDS(GET)
	for (i = 0; i < NS_B_COUNT; i++)
		x->bad_at[i] = wget_u64(b);
	get_inrun(b, &x->inrun);
	wget_hist(b, &x->held);
	for (i = 0; i < NS_MAX_STAGES; i++)
		wget_hist(b, &x->stage[i]);
	x->ntail = (int)wget_count(b, TRACE_TAIL);
	for (i = 0; i < x->ntail; i++)
		get_rec(b, &x->tail[i]);
	for (i = 0; i < TAIL_QUANTILES; i++)
		get_tail_part(b, &x->tailq[i]);
	x->cost = NULL;
}

static void put_cost(struct wbuf *b, const struct trace_cost_parts *x)
{
	COST_FIELDS(PUT)
}

static void get_cost(struct rbuf *b, struct trace_cost_parts *x)
{
	COST_FIELDS(GET)
}

static void put_intervals(struct wbuf *b, const struct run_results *r)
{
	long i;

	wput_u64(b, (uint64_t)r->niv);
	for (i = 0; i < r->niv; i++) {
		const struct interval_sum *x = &r->iv[i];

		INTERVAL_FIELDS(PUT)
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
		struct interval_sum *x = &r->iv[i];

		INTERVAL_FIELDS(GET)
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

static void put_totals(struct wbuf *b, const struct run_results *x)
{
	TOTALS_FIELDS(PUT)
	wput_str(b, x->error);
}

static void get_totals(struct rbuf *b, struct run_results *x)
{
	TOTALS_FIELDS(GET)
	x->error = wget_str(b);
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
	wput_str(b, r->clock_id);
	wput_u64(b, (uint64_t)r->realtime_ns);
	wput_u64(b, (uint64_t)r->tai_ns);
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
	wget_strn(b, r->clock_id, sizeof(r->clock_id));
	r->realtime_ns = (int64_t)wget_u64(b);
	r->tai_ns = (int64_t)wget_u64(b);
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

/*
 * Everything but the records is bounded by the stage list and the run
 * (histograms, keys, a day of intervals): 64 MiB is far past it. A
 * record on the wire is under 512 bytes; the slowest are kept beside
 * the sample, so twice the count.
 */
uint64_t results_frame_cap(long records)
{
	uint64_t cap = (64ULL << 20) + 2 * 512ULL * (uint64_t)records;

	return cap < RESULTS_MAX_LEN ? cap : RESULTS_MAX_LEN;
}

struct run_results *results_recv(int fd, int timeout_ms, uint64_t max_len,
				 uint64_t *bytes, char *err, size_t len)
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
	if (max_len > RESULTS_MAX_LEN)
		max_len = RESULTS_MAX_LEN;
	if (plen > max_len) {
		snprintf(err, len, "a results frame of %llu bytes, more than "
			 "the %llu taken", (unsigned long long)plen,
			 (unsigned long long)max_len);
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
	if (bytes)
		*bytes = sizeof(hdr) + plen;
	return r;
}
