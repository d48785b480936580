/*
 * A --trace-records file read back into a model (records_in.h): what
 * recout_csv() writes comes back field for field, by worker, the
 * workload's side from its stage columns, and a file that is not one is
 * refused with its name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/common.h"
#include "results/records_in.h"
#include "trace/recout.h"

#define PATH "t_records_in.csv"

static void fill(struct trace_rec *r, int w, int k)
{
	int b;

	memset(r, 0, sizeof(*r));
	r->worker = w;
	r->flow_id = 3 * w + k;
	r->seq = 1000 + k;
	r->port = 40000 + k;
	r->next_port = k ? 11211 : 0;
	/* Every boundary stamped but one: an empty field is 0. */
	for (b = 1; b < NS_B_COUNT; b++)
		r->b[b] = 9000000000000ULL + 100 * b + k;
	r->sw_tx = k ? 77 : 0;
	r->sw_rx = 88;
	r->slowest = k == 1;
	if (k == 2) {
		/* A name with a comma and a quote: CSV quotes it. */
		strcpy(r->held_comm, "a,\"b\" c");
		r->held_pid = 4242;
		r->held_cpu = 1;
	}
}

static void t_written_records_read_back(void **state)
{
	struct trace_rec recs[2][3];
	struct rec_set s = { .nworkers = 2, .n = { 3, 2 } };
	struct run_results *m;
	char err[256] = "";
	FILE *f = fopen(PATH, "w");
	int w, k;

	for (w = 0; w < 2; w++) {
		for (k = 0; k < 3; k++)
			fill(&recs[w][k], w, k);
		s.recs[w] = recs[w];
	}
	recout_csv(f, &s, NS_SERVER);
	fclose(f);
	m = records_read(PATH, err, sizeof(err));
	assert_non_null(m);
	assert_string_equal(m->role, "server");
	assert_int_equal(m->side, NS_SERVER);
	assert_int_equal(m->recs.nworkers, 2);
	for (w = 0; w < 2; w++) {
		assert_int_equal(m->recs.n[w], s.n[w]);
		/* span and prio are not in the file; the rest is. */
		for (k = 0; k < s.n[w]; k++)
			assert_memory_equal(&m->recs.recs[w][k], &recs[w][k],
					    sizeof(recs[w][k]));
	}
	run_results_free(m);
	remove(PATH);
}

/* A file names its end; its stage columns say udp_rr's or tcp_crr's. */
static void t_the_workload_from_the_stage_columns(void **state)
{
	static const enum ns_side sides[] = {
		NS_CLIENT, NS_SERVER, NS_CLIENT_UDP, NS_SERVER_UDP,
		NS_CLIENT_CRR, NS_SERVER_CRR,
	};
	struct trace_rec rec;
	struct rec_set s = { .nworkers = 1, .n = { 1 } };
	struct run_results *m;
	char err[256] = "";
	size_t i;

	fill(&rec, 0, 0);
	rec.b[NS_B_INTENDED] = 0;	/* not --rate's */
	s.recs[0] = &rec;
	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		FILE *f = fopen(PATH, "w");

		recout_csv(f, &s, sides[i]);
		fclose(f);
		m = records_read(PATH, err, sizeof(err));
		assert_non_null(m);
		assert_int_equal(m->side, sides[i]);
		run_results_free(m);
	}
	remove(PATH);
}

static void t_a_file_that_is_not_records_is_named(void **state)
{
	struct run_results *m;
	char err[256];
	FILE *f = fopen(PATH, "w");

	fputs("side,worker,flow_id,seq\nclient,0,1,2\n", f);
	fclose(f);
	m = records_read(PATH, err, sizeof(err));
	assert_null(m);
	assert_string_equal(err, "join: " PATH " is no --trace-records file "
				 "of this netstage (no side, port or boundary "
				 "columns)");
	f = fopen(PATH, "w");
	fclose(f);
	assert_null(records_read(PATH, err, sizeof(err)));
	assert_string_equal(err, "join: " PATH " is empty");
	remove(PATH);
	assert_null(records_read(PATH, err, sizeof(err)));
	assert_string_equal(err, "join: " PATH ": No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_written_records_read_back),
		cmocka_unit_test(t_the_workload_from_the_stage_columns),
		cmocka_unit_test(t_a_file_that_is_not_records_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
