/*
 * A run's JSON document read back for netstage merge
 * (results/run_json.h): every field it takes, the histograms rebuilt
 * bucket by bucket so that their percentiles are the writer's, --local's
 * document by its client, and what is no results document refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/run_json.h"
#include "stats/hist.h"

/* Three latency buckets (100, 150 and 50 transactions), one stage. */
#define SIDE "{\"netstage\": {\"workload\": \"tcp_rr\", \"role\": " \
	"\"client\"}, \"options\": {\"request_size\": \"1\", " \
	"\"response_size\": \"64\"}, \"results\": {\"time_start\": 100.5, " \
	"\"time_end\": 102.5, \"num_transactions\": 300, " \
	"\"throughput\": 150.25, \"local_cpu_util\": 12.5}, " \
	"\"latency\": {\"mean_us\": 21.0, \"max_us\": 40.1, \"buckets\": " \
	"[[10.0, 10.078, 100], [20.0, 20.156, 150], [40.0, 40.312, 50]]}, " \
	"\"stages\": {\"wakeup\": {\"mean_us\": 5.0, \"max_us\": 5.0, " \
	"\"buckets\": [[5.0, 5.039, 300]]}}}"

static char path[64];

static const char *write_doc(const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/t_run_json.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* v's bucket: where a percentile read from the rebuilt histogram lies. */
static void assert_in_bucket(double got_ns, uint64_t v_ns)
{
	uint64_t lo, hi;

	hist_bucket_range(hist_index(v_ns), &lo, &hi);
	assert_true(got_ns >= (double)lo && got_ns <= (double)hi);
}

static void check_side(const struct run_json *r)
{
	assert_string_equal(r->workload, "tcp_rr");
	assert_string_equal(r->role, "client");
	assert_string_equal(r->request, "1");
	assert_string_equal(r->response, "64");
	assert_true(r->time_start == 100.5 && r->time_end == 102.5);
	assert_int_equal(r->transactions, 300);
	assert_true(r->throughput == 150.25);
	assert_int_equal(r->mbps, 0);
	assert_true(r->cpu_util == 12.5);
	assert_int_equal(r->has_lat, 1);
	assert_int_equal(r->lat.count, 300);
	/* Ranks 150 and 297 of 300: the second and third buckets. */
	assert_in_bucket(hist_percentile(&r->lat, 50), 20000);
	assert_in_bucket(hist_percentile(&r->lat, 99), 40000);
	assert_in_bucket(hist_percentile(&r->lat, 1), 10000);
	assert_true(hist_mean(&r->lat) > 20999 && hist_mean(&r->lat) < 21001);
	assert_int_equal(r->nstages, 1);
	assert_string_equal(r->stage[0], "wakeup");
	assert_int_equal(r->stage_hist[0].count, 300);
	assert_in_bucket(hist_percentile(&r->stage_hist[0], 50), 5000);
}

/* text read whole, and each field of its run as SIDE has it. */
static void reads_as_side(const char *text)
{
	struct run_json r;
	char err[256] = "";

	assert_int_equal(run_json_read(write_doc(text), &r, err, sizeof(err)),
			 0);
	unlink(path);
	check_side(&r);
	run_json_free(&r);
}

static void t_reads_every_field(void **state)
{
	(void)state;
	reads_as_side(SIDE);
}

/* --local's document: its client's side is the run. */
static void t_local_document_gives_its_client(void **state)
{
	(void)state;
	reads_as_side("{\"client\": " SIDE ", \"server\": {}}");
}

/* A stream's rate is Mbit/s, and says so. */
static void t_stream_rate(void **state)
{
	struct run_json r;
	char err[256] = "";

	(void)state;
	assert_int_equal(run_json_read(write_doc(
		"{\"netstage\": {\"workload\": \"tcp_stream\", \"role\": "
		"\"client\"}, \"options\": {}, \"results\": {\"time_start\": "
		"1, \"time_end\": 2, \"num_transactions\": 9, "
		"\"throughput_Mbps\": 940.5}}"), &r, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(r.mbps, 1);
	assert_true(r.throughput == 940.5);
	assert_int_equal(r.has_lat, 0);
	assert_true(r.cpu_util < 0);
	run_json_free(&r);
}

static void refused(const char *text, const char *says)
{
	struct run_json r;
	char err[256] = "";

	assert_int_equal(run_json_read(write_doc(text), &r, err, sizeof(err)),
			 -1);
	unlink(path);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, says));
}

static void t_refusals(void **state)
{
	struct run_json r;
	char err[256] = "";

	(void)state;
	refused("{\"a\": 1}", "is no netstage results document");
	refused("{\"netstage\": ", "merge: ");
	/* A bucket of no transactions is no histogram netstage writes. */
	refused("{\"netstage\": {\"workload\": \"tcp_rr\"}, \"options\": {}, "
		"\"results\": {\"time_start\": 1, \"time_end\": 2, "
		"\"throughput\": 3}, \"latency\": {\"mean_us\": 1, "
		"\"max_us\": 1, \"buckets\": [[1.0, 1.007, 0]]}}",
		"is no netstage results document");
	/* No times: whether runs were at once cannot be said. */
	refused("{\"netstage\": {\"workload\": \"tcp_rr\"}, \"options\": {}, "
		"\"results\": {\"throughput\": 3}}",
		"is no netstage results document");
	assert_int_equal(run_json_read("/nonexistent/r.json", &r, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/r.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_reads_every_field),
		cmocka_unit_test(t_local_document_gives_its_client),
		cmocka_unit_test(t_stream_rate),
		cmocka_unit_test(t_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
