/*
 * The results model as bytes and back (results_wire.h): every field
 * returns exactly, and a short, corrupt or foreign frame is refused
 * with a reason, never misread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/common.h"
#include "results/results_wire.h"

static void fill_rec(struct trace_rec *r, int k)
{
	int b;

	r->flow_id = 7 + k;
	r->worker = 1;
	r->port = 40000 + k;
	r->next_port = 11211;
	r->seq = 1000000007ULL * k;
	for (b = 0; b < NS_B_COUNT; b++)
		r->b[b] = 123456789012345ULL + 1000 * b + k;
	r->sw_tx = 5;
	r->sw_rx = 6;
	r->prio = UINT64_MAX - k;
	r->span = 42;
	r->slowest = k & 1;
	r->held_pid = 99;
	r->held_cpu = 1;
	strcpy(r->held_comm, "kworker/0:1");
}

/* A model with every part non-empty and values that would show a cut. */
static struct run_results *sample_model(void)
{
	struct run_results *r = xcalloc(1, sizeof(*r));
	int i;

	r->is_client = 0;
	strcpy(r->role, "server");
	strcpy(r->workload, "tcp_rr");
	r->is_rr = 1;
	r->side = NS_SERVER;
	kv_num(&r->keys, "throughput", 12345.678, 2);
	kv_str(&r->keys, "trace_status", "records");
	kv_uint(&r->keys, "num_transactions", UINT64_MAX);
	kv_str(&r->options, "congestion", "");
	kv_str(&r->header, "workload", "tcp_rr");
	r->throughput = 12345.678901234567;
	r->transactions = 1ULL << 40;
	r->bytes_read = 3;
	r->bytes_written = 4;
	r->io_errors = 5;
	r->throughput_mbps = 1;
	r->flows = -1;
	r->duration_s = 1.0 / 3;
	r->cpu_util = -1;
	r->ncpus = 2;
	r->service_demand_us = 0.1;
	r->error = xstrdup("the server answered no request");
	r->has_lat = 1;
	hist_reset(&r->lat);
	hist_add(&r->lat, 17);
	hist_add(&r->lat, 1000000);
	r->t_start = 987654321;
	snprintf(r->clock_id, sizeof(r->clock_id), "0b7c4e2a-boot+skew");
	r->realtime_ns = 1764300000123456789LL;
	r->tai_ns = -37;
	r->niv = 2;
	r->iv = xcalloc(2, sizeof(*r->iv));
	r->iv[1] = (struct interval_sum){ 2.0, 34, 35, 36.5, 37.5, 38.5,
					  39.5, 33.25 };
	r->iv_lat = 1;
	r->trace_asked = r->traced = 1;
	r->ts.side = NS_SERVER;
	/* Every scalar its own value: one the wire forgot comes back 0. */
	r->ts.hist_mode = 1;
	r->ts.sample = 10;
	r->ts.control = 11;
	r->ts.user_ns = 12.5;
	r->ts.untimed = 13;
	r->ts.complete = 14;
	r->ts.incomplete = 15;
	r->ts.missing = 16;
	r->ts.disorder = 17;
	r->ts.norecord = 18;
	r->ts.lost = 77;
	r->ts.records_kept = 19;
	r->ts.records_slowest = 20;
	r->ts.records_offered = 21;
	r->ts.has_retrans = 1;
	r->ts.retrans_partial = 1;
	r->ts.retransmits = 22;
	r->ts.retransmitted = 23;
	r->ts.inrun.p50_ns = 24.25;
	r->ts.inrun.hi_ns = 26.5;
	r->ts.inrun.blocks = -27;
	r->ts.inrun.timed = 28;
	r->ts.inrun.untimed = 29;
	r->ts.bad_at[NS_B_COUNT - 1] = 5;
	r->ts.has_inrun = 1;
	r->ts.inrun.lo_ns = -12.5;
	hist_reset(&r->ts.stage[3]);
	hist_add(&r->ts.stage[3], 2500);
	r->ts.ntail = 2;
	fill_rec(&r->ts.tail[0], 1);
	fill_rec(&r->ts.tail[1], 2);
	r->ts.tailq[1].n = 7;
	r->ts.tailq[1].above_ns = 123.5;
	r->ts.tailq[1].share[2] = 0.25;
	r->ts.tailq[1].excess_ns[NS_MAX_STAGES - 1] = -4.5;
	r->has_cost = 1;
	r->cost.bpf_ns = 30.5;
	r->cost.entry_ns = 31.5;
	r->cost.user_ns = 32.5;
	r->cost.total_ns = 812.5;
	r->cost.runs = 33;
	r->cost.has_entry = 1;
	r->cost_both_ends = 1;
	r->trace_hist = 1;
	r->recs.nworkers = 2;
	r->recs.n[1] = 3;
	r->recs.recs[1] = xcalloc(3, sizeof(struct trace_rec));
	for (i = 0; i < 3; i++)
		fill_rec(&r->recs.recs[1][i], i);
	r->pc.n = 2;
	r->pc.p[0] = 99.9;
	r->pc.p[1] = 50;
	return r;
}

static void assert_kv_equal(const struct kv_list *a, const struct kv_list *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_string_equal(a->v[i].key, b->v[i].key);
		assert_string_equal(a->v[i].text, b->v[i].text);
		assert_int_equal(a->v[i].type, b->v[i].type);
	}
}

static void assert_same(const struct run_results *a,
			const struct run_results *b)
{
	int i;

	assert_string_equal(a->role, b->role);
	assert_string_equal(a->workload, b->workload);
	assert_int_equal(a->side, b->side);
	assert_kv_equal(&a->keys, &b->keys);
	assert_kv_equal(&a->options, &b->options);
	assert_kv_equal(&a->header, &b->header);
	/* Doubles come back bit for bit, not as printed. */
	assert_memory_equal(&a->throughput, &b->throughput, sizeof(double));
	assert_memory_equal(&a->duration_s, &b->duration_s, sizeof(double));
	assert_true(a->transactions == b->transactions);
	assert_true(a->bytes_read == b->bytes_read);
	assert_true(a->bytes_written == b->bytes_written);
	assert_true(a->io_errors == b->io_errors);
	assert_int_equal(a->throughput_mbps, b->throughput_mbps);
	assert_int_equal(a->flows, b->flows);
	assert_int_equal(a->ncpus, b->ncpus);
	assert_true(a->cpu_util == b->cpu_util);
	assert_true(a->service_demand_us == b->service_demand_us);
	assert_int_equal(a->is_rr, b->is_rr);
	assert_int_equal(a->has_lat, b->has_lat);
	assert_int_equal(a->traced, b->traced);
	assert_int_equal(a->trace_asked, b->trace_asked);
	assert_int_equal(a->trace_hist, b->trace_hist);
	assert_int_equal(a->has_cost, b->has_cost);
	assert_int_equal(a->cost_both_ends, b->cost_both_ends);
	assert_string_equal(a->error, b->error);
	assert_memory_equal(&a->lat, &b->lat, sizeof(a->lat));
	assert_true(a->t_start == b->t_start);
	assert_string_equal(a->clock_id, b->clock_id);
	assert_true(a->realtime_ns == b->realtime_ns);
	assert_true(a->tai_ns == b->tai_ns);
	assert_int_equal(a->niv, b->niv);
	assert_memory_equal(a->iv, b->iv, a->niv * sizeof(*a->iv));
	assert_int_equal(a->iv_lat, b->iv_lat);
	/* The summary, its pointer aside, is the same bytes. */
	assert_null(b->ts.cost);
	assert_memory_equal(&a->ts, &b->ts, sizeof(a->ts));
	assert_memory_equal(&a->cost, &b->cost, sizeof(a->cost));
	assert_int_equal(a->recs.nworkers, b->recs.nworkers);
	for (i = 0; i < a->recs.nworkers; i++) {
		assert_int_equal(a->recs.n[i], b->recs.n[i]);
		if (a->recs.n[i])
			assert_memory_equal(a->recs.recs[i], b->recs.recs[i],
					    a->recs.n[i] *
						    sizeof(struct trace_rec));
	}
	assert_memory_equal(&a->pc, &b->pc, sizeof(a->pc));
}

static struct wbuf encoded(struct run_results *r)
{
	struct wbuf b = { 0 };

	results_encode(r, &b);
	return b;
}

static void t_every_field_round_trips(void **state)
{
	struct run_results *a = sample_model(), *b;
	struct wbuf w = encoded(a);
	char err[128] = "";

	b = results_decode(w.p, w.n, err, sizeof(err));
	assert_non_null(b);
	assert_string_equal(err, "");
	assert_same(a, b);
	run_results_free(a);
	run_results_free(b);
	wbuf_free(&w);
}

/* Through a pipe as --local sends it, and an empty pipe is "nothing". */
static void t_a_pipe_carries_it(void **state)
{
	struct run_results *a = sample_model(), *b;
	char err[128];
	int fd[2];

	assert_int_equal(pipe(fd), 0);
	assert_int_equal(results_send(fd[1], a), 0);
	close(fd[1]);
	b = results_recv(fd[0], 1000, RESULTS_MAX_LEN, NULL, err, sizeof(err));
	assert_non_null(b);
	assert_same(a, b);
	run_results_free(b);
	/* The writer is gone and nothing more came: no model, no error. */
	b = results_recv(fd[0], 1000, RESULTS_MAX_LEN, NULL, err, sizeof(err));
	assert_null(b);
	assert_string_equal(err, "");
	close(fd[0]);
	run_results_free(a);
}

/*
 * A reader that does not trust its peer takes a frame up to its cap,
 * and refuses a longer one from its header, before allocating it.
 */
static void t_a_frame_past_the_cap_is_refused(void **state)
{
	struct run_results *a = sample_model(), *b;
	struct wbuf w = encoded(a);
	uint64_t payload = w.n - RESULTS_HDR_LEN;
	char err[128];
	int fd[2];

	assert_int_equal(pipe(fd), 0);
	assert_int_equal(results_send(fd[1], a), 0);
	b = results_recv(fd[0], 1000, payload - 1, NULL, err, sizeof(err));
	assert_null(b);
	assert_non_null(strstr(err, "more than the"));
	assert_int_equal(results_send(fd[1], a), 0);
	close(fd[1]);
	/* The refused frame's payload is still in the pipe: skip it. */
	{
		char skip[4096];
		uint64_t left = payload;

		while (left) {
			ssize_t k = read(fd[0], skip, left < sizeof(skip) ?
					 left : sizeof(skip));
			assert_true(k > 0);
			left -= (uint64_t)k;
		}
	}
	b = results_recv(fd[0], 1000, payload, NULL, err, sizeof(err));
	assert_non_null(b);
	assert_same(a, b);
	run_results_free(b);
	close(fd[0]);
	run_results_free(a);
	wbuf_free(&w);
}

/* The cap counts 512 bytes a record: one record's frame is less. */
static void t_a_record_fits_the_cap(void **state)
{
	struct run_results *a = sample_model();
	struct wbuf w0, w1;
	long n = a->recs.n[1];

	assert_true(n > 0);
	w1 = encoded(a);
	a->recs.n[1] = 0;
	w0 = encoded(a);
	a->recs.n[1] = n;
	assert_true((w1.n - w0.n) / n < 512);
	assert_true(results_frame_cap(n) >= w1.n);
	assert_int_equal(results_frame_cap(100000000), RESULTS_MAX_LEN);
	wbuf_free(&w0);
	wbuf_free(&w1);
	run_results_free(a);
}

/* Every cut of a frame is refused, never read as a shorter model. */
static void t_every_truncation_is_refused(void **state)
{
	struct run_results *a = sample_model(), *b;
	struct wbuf w = encoded(a);
	char err[128];
	size_t n;

	for (n = 0; n < w.n; n++) {
		err[0] = '\0';
		b = results_decode(w.p, n, err, sizeof(err));
		assert_null(b);
		assert_true(err[0] != '\0');
	}
	run_results_free(a);
	wbuf_free(&w);
}

static void t_foreign_frames_say_why(void **state)
{
	struct run_results *a = sample_model();
	struct wbuf w = encoded(a);
	char err[128];

	w.p[0] ^= 0xff;
	assert_null(results_decode(w.p, w.n, err, sizeof(err)));
	assert_string_equal(err, "not a netstage results frame");
	w.p[0] ^= 0xff;
	w.p[7] = RESULTS_VERSION + 1;
	assert_null(results_decode(w.p, w.n, err, sizeof(err)));
	assert_string_equal(err, "results of format version 4, this "
				 "netstage reads 3");
	w.p[7] = RESULTS_VERSION;
	/* Another build's stage list: the boundary count differs. */
	w.p[RESULTS_HDR_LEN + 3] ^= 1;
	assert_null(results_decode(w.p, w.n, err, sizeof(err)));
	assert_string_equal(err,
			    "results from a netstage of another stage list");
	run_results_free(a);
	wbuf_free(&w);
}

/* A count that claims more than the frame holds is corrupt. */
static void t_a_lying_count_is_refused(void **state)
{
	struct run_results *a = xcalloc(1, sizeof(*a)), *b;
	struct wbuf w;
	char err[128];
	size_t at;

	kv_str(&a->keys, "k", "v");
	w = encoded(a);
	/* The keys' count follows the shape, the side and two names. */
	at = RESULTS_HDR_LEN + 12 + 1 + 4 + 4 + 1 + 4;
	assert_int_equal(w.p[at + 7], 1);
	w.p[at + 3] = 0x10;
	b = results_decode(w.p, w.n, err, sizeof(err));
	assert_null(b);
	assert_non_null(strstr(err, "corrupt"));
	run_results_free(a);
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_field_round_trips),
		cmocka_unit_test(t_a_pipe_carries_it),
		cmocka_unit_test(t_a_frame_past_the_cap_is_refused),
		cmocka_unit_test(t_a_record_fits_the_cap),
		cmocka_unit_test(t_every_truncation_is_refused),
		cmocka_unit_test(t_foreign_frames_say_why),
		cmocka_unit_test(t_a_lying_count_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
