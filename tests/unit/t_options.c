/* Option parsing and validation: defaults, spellings, every error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/options.h"
#include "config/workload.h"

static char err[320];

/* Parse and validate argv (NULL-terminated in ap) for workload bit wl. */
static int vparse(struct options *o, unsigned int wl, va_list ap)
{
	char *argv[64] = { "netstage" };
	int argc = 1, rc;

	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	err[0] = '\0';
	rc = options_parse(o, wl, argc, argv, err, sizeof(err));
	if (!rc)
		rc = options_validate(o, err, sizeof(err));
	return rc;
}

static int parse(struct options *o, unsigned int wl, ...)
{
	va_list ap;
	int rc;

	va_start(ap, wl);
	rc = vparse(o, wl, ap);
	va_end(ap);
	return rc;
}

/* The arguments fail with one line that contains needle. */
static void expect_error(unsigned int wl, const char *needle, ...)
{
	struct options o;
	va_list ap;
	int rc;

	va_start(ap, needle);
	rc = vparse(&o, wl, ap);
	va_end(ap);
	assert_int_equal(rc, -1);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not name '%s'", err, needle);
	assert_null(strchr(err, '\n'));
	options_free(&o);
}

static void t_defaults_follow_the_rushit_docs(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, NULL), 0);
	assert_int_equal(o.client, 0);
	assert_int_equal(o.control_port, 12866);
	assert_int_equal(o.port, 12867);
	assert_int_equal(o.num_flows, 1);
	assert_int_equal(o.num_threads, 1);
	assert_int_equal(o.test_length, 10);
	assert_int_equal(o.request_size, 1);
	assert_int_equal(o.response_size, 1);
	assert_int_equal(o.buffer_size, 65536);
	assert_int_equal(o.maxevents, 1000);
	assert_int_equal(o.listen_backlog, 4096);
	assert_int_equal(o.magic, 42);
	assert_true(o.interval == 1.0);
	assert_null(o.all_samples);
	assert_int_equal(o.percentiles.n, 0);
	/* A server reads by default. */
	assert_int_equal(o.enable_read, 1);
	options_free(&o);
}

static void t_buffer_size_default_depends_on_workload(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_STREAM, NULL), 0);
	assert_int_equal(o.buffer_size, 16384);
	options_free(&o);
	assert_int_equal(parse(&o, W_UDP_STREAM, NULL), 0);
	assert_int_equal(o.buffer_size, 1400);
	options_free(&o);
}

static void t_short_and_both_long_spellings(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, "-c", "-H", "127.0.0.1", "-F",
			       "10", "--num-threads", "2", "--test_length=3",
			       "-Q", "100", "--response-size=200", NULL), 0);
	assert_int_equal(o.client, 1);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.num_flows, 10);
	assert_int_equal(o.num_threads, 2);
	assert_int_equal(o.test_length, 3);
	assert_int_equal(o.request_size, 100);
	assert_int_equal(o.response_size, 200);
	/* A client writes by default. */
	assert_int_equal(o.enable_write, 1);
	options_free(&o);
}

static void t_R_means_what_the_workload_says(void **state)
{
	struct options o;

	/* neper: -R is response_size for rr, reuseaddr for stream. */
	assert_int_equal(parse(&o, W_TCP_RR, "-R", "7", NULL), 0);
	assert_int_equal(o.response_size, 7);
	assert_int_equal(o.reuseaddr, 0);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_STREAM, "-R", NULL), 0);
	assert_int_equal(o.reuseaddr, 1);
	options_free(&o);
}

static void t_all_samples_takes_an_optional_file(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, "-A", NULL), 0);
	assert_string_equal(o.all_samples, "samples.csv");
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "--all-samples=x.csv", NULL), 0);
	assert_string_equal(o.all_samples, "x.csv");
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "-Ay.csv", NULL), 0);
	assert_string_equal(o.all_samples, "y.csv");
	options_free(&o);
}

static void t_percentiles_and_durations(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, "--percentiles=25,50,99.9",
			       "-D", "20us", NULL), 0);
	assert_int_equal(o.percentiles.n, 3);
	assert_true(o.percentiles.p[0] == 25);
	assert_true(o.percentiles.p[2] == 99.9);
	assert_int_equal(o.delay, 20000);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "-D", "1.5ms", NULL), 0);
	assert_int_equal(o.delay, 1500000);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "--work", "100us", NULL), 0);
	assert_int_equal(o.work, 100000);
	options_free(&o);
	/* -i MIN,MAX, or netperf's MAX,MIN: the least is the minimum. */
	assert_int_equal(parse(&o, W_TCP_RR, "-i", "3,10", NULL), 0);
	assert_true(o.iter_min == 3 && o.iter_max == 10);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "-i", "10,3", NULL), 0);
	assert_true(o.iter_min == 3 && o.iter_max == 10);
	options_free(&o);
	expect_error(W_TCP_RR, "'10,31' is not MIN,MAX (or netperf's MAX,MIN) "
		     "of 1 to 30", "-i", "10,31", NULL);
	expect_error(W_TCP_STREAM, "unknown option '--work' for tcp_stream",
		     "--work", "5us", NULL);
}

static void t_epoll_trigger_and_io_mode(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, "--epoll-trigger=edge", NULL), 0);
	assert_int_equal(o.edge_trigger, 1);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "-c", "-H", "::1", "-F", "2",
			       "-T", "2", "--io-mode=blocking", NULL), 0);
	assert_int_equal(o.io_mode, IO_BLOCKING);
	options_free(&o);
	assert_int_equal(parse(&o, W_TCP_RR, "--io-mode=spin", NULL), 0);
	assert_int_equal(o.io_mode, IO_SPIN);
	options_free(&o);
	assert_int_equal(parse(&o, W_UDP_STREAM, "--io-mode=busy", NULL), 0);
	assert_int_equal(o.io_mode, IO_BUSY);
	options_free(&o);
}

static void t_local_needs_no_host(void **state)
{
	struct options o;

	assert_int_equal(parse(&o, W_TCP_RR, "--local", NULL), 0);
	assert_int_equal(o.client, 1);
	assert_int_equal(o.local, 1);
	options_free(&o);
}

static void t_parse_errors_name_the_option(void **state)
{
	expect_error(W_TCP_RR, "unknown option '--bogus'", "--bogus", NULL);
	expect_error(W_TCP_RR, "unknown option '-x'", "-x", NULL);
	expect_error(W_TCP_RR, "--num-flows: 'abc' is not an integer", "-F",
		     "abc", NULL);
	expect_error(W_TCP_RR, "--num-flows: 0 is out of range", "-F", "0",
		     NULL);
	expect_error(W_TCP_RR, "--num-threads: -1 is out of range", "-T", "-1",
		     NULL);
	expect_error(W_TCP_RR, "--test-length: '1x' is not an integer", "-l",
		     "1x", NULL);
	expect_error(W_TCP_RR, "--port: 70000 is out of range", "-P", "70000",
		     NULL);
	expect_error(W_TCP_RR, "--interval", "-I", "0", NULL);
	expect_error(W_TCP_RR, "--interval", "-I", "nan", NULL);
	expect_error(W_TCP_RR, "--request-size", "-Q", "0", NULL);
	expect_error(W_TCP_RR, "--percentiles", "-p", "50,101", NULL);
	expect_error(W_TCP_RR, "--percentiles", "-p", "50,,x", NULL);
	expect_error(W_TCP_RR, "--delay", "-D", "5parsecs", NULL);
	expect_error(W_TCP_RR, "--max-pacing-rate", "-m", "-5", NULL);
	expect_error(W_TCP_RR, "--epoll-trigger", "--epoll-trigger=up", NULL);
	expect_error(W_TCP_RR, "--io-mode", "--io-mode=poll", NULL);
	expect_error(W_TCP_RR, "'-l' needs a value", "-l", NULL);
	expect_error(W_TCP_RR, "'--host' needs a value", "--host", NULL);
	expect_error(W_TCP_RR, "unexpected argument 'extra'", "extra", NULL);
	expect_error(W_UDP_STREAM, "--buffer-size", "-B", "70000", NULL);
	/* Options of another workload are unknown here. */
	expect_error(W_TCP_STREAM, "unknown option '--request-size'",
		     "--request-size=5", NULL);
	expect_error(W_TCP_RR, "unknown option '-r'", "-r", NULL);
	/* Whose it is, or what was meant. */
	expect_error(W_TCP_STREAM, "unknown option '--request-size' for "
		     "tcp_stream (tcp_rr, tcp_crr and udp_rr take it)",
		     "--request-size=5", NULL);
	expect_error(W_UDP_STREAM, "unknown option '--read-size' for "
		     "udp_stream (only tcp_stream takes it)",
		     "--read-size=5", NULL);
	expect_error(W_TCP_RR, "unknown option '--trase' (did you mean "
		     "'--trace'?)", "--trase", NULL);
	expect_error(W_TCP_RR, "unknown option '--nmu-flows' (did you mean "
		     "'--num-flows'?)", "--nmu-flows=2", NULL);
	/* Three edits from every option: no guess. */
	expect_error(W_TCP_RR, "unknown option '--bogus'", "--bogus", NULL);
	assert_null(strstr(err, "did you mean"));
	/* An optional value set apart from its option: how to give it. */
	expect_error(W_TCP_RR, "unexpected argument 's.csv' (--all-samples "
		     "takes its value joined: --all-samples=s.csv or -As.csv)",
		     "-A", "s.csv", NULL);
	expect_error(W_TCP_RR, "unexpected argument 'hist' (--trace takes "
		     "its value joined: --trace=hist)", "--trace", "hist", NULL);
}

static void t_validation_errors(void **state)
{
	expect_error(W_TCP_RR, "exclude each other", "-4", "-6", NULL);
	expect_error(W_TCP_RR, "--clock: 'ptp' is not monotonic, realtime or tai",
		     "--clock=ptp", NULL);
	expect_error(W_TCP_RR, "--host: needed with --client", "-c", NULL);
	expect_error(W_TCP_RR, "cannot resolve 'no-such-host.invalid'", "-c",
		     "-H", "no-such-host.invalid", NULL);
	expect_error(W_TCP_RR, "--local-host: cannot resolve", "-L",
		     "no-such-host.invalid", NULL);
	expect_error(W_TCP_RR, "0 is only valid for a server", "-c", "-H",
		     "127.0.0.1", "-C", "0", NULL);
	expect_error(W_TCP_CRR, "'blocking' is only for tcp_rr and tcp_stream",
		     "--io-mode=blocking", NULL);
	expect_error(W_UDP_STREAM,
		     "'blocking' is only for tcp_rr and tcp_stream",
		     "--io-mode=blocking", NULL);
	expect_error(W_TCP_STREAM, "'blocking' moves a flow's data one way",
		     "-c", "-H", "127.0.0.1", "-r", "--io-mode=blocking", NULL);
	expect_error(W_TCP_STREAM, "'blocking' moves a flow's data one way",
		     "-w", "--io-mode=blocking", NULL);
	expect_error(W_TCP_STREAM, "'spin' is only for tcp_rr",
		     "--io-mode=spin", NULL);
	expect_error(W_TCP_RR, "--num-threads >= --num-flows", "-c", "-H",
		     "127.0.0.1", "-F", "4", "--io-mode=blocking", NULL);
	expect_error(W_TCP_RR, "no --edge-trigger", "-E",
		     "--io-mode=blocking", NULL);
	expect_error(W_TCP_RR, "--raw has no control connection", "--raw",
		     "-c", "-H", "127.0.0.1", "-R", "4", "--request-data=x",
		     "--auth-key=k", NULL);
	expect_error(W_UDP_RR, "'spin' is only for tcp_rr", "--io-mode=spin",
		     NULL);
	expect_error(W_TCP_RR, "'spin' needs --num-threads >= --num-flows",
		     "-c", "-H", "127.0.0.1", "-F", "2", "--io-mode=spin", NULL);
	expect_error(W_TCP_RR, "--rate: not with --burst or --io-mode spin",
		     "--rate=10", "--io-mode=spin", NULL);
	expect_error(W_TCP_RR, "cannot resolve '::1'", "-4", "-c", "-H",
		     "::1", NULL);
	expect_error(W_TCP_RR, "--timestamping: needs --trace",
		     "--timestamping", NULL);
	expect_error(W_TCP_RR, "--trace-records: needs --trace",
		     "--trace-records=x.csv", NULL);
	expect_error(W_TCP_RR, "--trace-records: needs --trace (records)",
		     "--trace=hist", "--trace-records=x.csv", NULL);
	expect_error(W_TCP_RR, "--trace: 'all' is neither 'records' nor 'hist'",
		     "--trace=all", NULL);
	expect_error(W_TCP_STREAM, "unknown option '--trace'", "--trace",
		     NULL);
	expect_error(W_UDP_STREAM, "unknown option '--trace'", "--trace",
		     NULL);
	/* tcp_crr and udp_rr trace too: what they refuse is another thing. */
	expect_error(W_TCP_CRR, "unknown option '--timestamping'", "--trace",
		     "--timestamping", NULL);
	expect_error(W_UDP_RR, "--trace-records: needs --trace (records)",
		     "--trace=hist", "--trace-records=x.csv", NULL);
}

static void t_dump_lists_every_option_once(void **state)
{
	struct kv_list kv = { 0 };
	struct options o;
	size_t i, j;

	assert_int_equal(parse(&o, W_TCP_RR, "-F", "3", NULL), 0);
	options_dump(&o, &kv);
	for (i = 0; i < kv.n; i++)
		for (j = i + 1; j < kv.n; j++)
			if (!strcmp(kv.v[i].key, kv.v[j].key))
				fail_msg("key %s twice", kv.v[i].key);
	for (i = 0; i < kv.n; i++)
		if (!strcmp(kv.v[i].key, "num_flows"))
			assert_string_equal(kv.v[i].text, "3");
	kv_free(&kv);
	options_free(&o);
}

/* config/ names the workloads as their registry does, bit by bit. */
static void t_workload_names_are_the_registry_s(void **state)
{
	unsigned int bit, n = 0;

	for (bit = 1; bit <= W_OBSERVE; bit <<= 1) {
		const struct workload *wl = workload_by_bit(bit);

		assert_non_null(wl);
		assert_non_null(options_workload_name(bit));
		assert_string_equal(options_workload_name(bit), wl->name);
		n++;
	}
	assert_int_equal(n, 6);
	assert_null(options_workload_name(W_RR));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_defaults_follow_the_rushit_docs),
		cmocka_unit_test(t_buffer_size_default_depends_on_workload),
		cmocka_unit_test(t_short_and_both_long_spellings),
		cmocka_unit_test(t_R_means_what_the_workload_says),
		cmocka_unit_test(t_all_samples_takes_an_optional_file),
		cmocka_unit_test(t_percentiles_and_durations),
		cmocka_unit_test(t_epoll_trigger_and_io_mode),
		cmocka_unit_test(t_local_needs_no_host),
		cmocka_unit_test(t_parse_errors_name_the_option),
		cmocka_unit_test(t_validation_errors),
		cmocka_unit_test(t_dump_lists_every_option_once),
		cmocka_unit_test(t_workload_names_are_the_registry_s),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
