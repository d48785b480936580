/*
 * The page of a merge (output/merge_report.h): its figures are the
 * page's JSON, each run's and the whole's, and no file name a merge
 * was given can end the page's script or open markup of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/merge_report.h"
#include "stats/hist.h"

/* The page, in memory: the caller frees *buf. */
static void page(const struct merge_page *p, char **buf)
{
	size_t len = 0;
	FILE *f = open_memstream(buf, &len);

	assert_non_null(f);
	assert_int_equal(merge_report_write(f, p), 0);
	assert_int_equal(fclose(f), 0);
}

/* The JSON between the data script's tags. */
static char *data_of(char *html)
{
	char *a = strstr(html, "type=\"application/json\">");
	char *b = a ? strstr(a, "</script>") : NULL;

	assert_non_null(b);
	*b = '\0';
	return a + strlen("type=\"application/json\">");
}

static void t_figures_and_names(void **state)
{
	struct hist h;
	struct merge_run run[2] = {
		{ "h1</script><img src=x>/client.json", 100, 50.5, 10.25, &h },
		{ "h2/client.json", 200, 99.75, -1, NULL },
	};
	const char *missing[] = { "h3<b>" };
	struct hist sh;
	struct merge_stage stage = { "wakeup", &sh };
	struct merge_page p = {
		.workload = "tcp_rr", .role = "client", .concurrent = 1,
		.run = run, .nruns = 2,
		.whole = { "merged", 300, 150.25, -1, &h },
		.stage = &stage, .nstages = 1,
		.missing = missing, .nmissing = 1,
	};
	char *html = NULL, *d;
	int i;

	(void)state;
	hist_reset(&h);
	hist_reset(&sh);
	for (i = 0; i < 100; i++)
		hist_add(&h, 20000);
	hist_add(&sh, 5000);
	page(&p, &html);
	/* One script of data, one of code: no name closed either early. */
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "h3<b>"));
	d = data_of(html);
	assert_non_null(strstr(d, "\"name\": \"h1\\u003c/script\\u003e"
				  "\\u003cimg src=x\\u003e/client.json\", "
				  "\"transactions\": 100, \"rate\": 50.50, "
				  "\"cpu\": 10.25"));
	assert_non_null(strstr(d, "\"name\": \"h2/client.json\", "
				  "\"transactions\": 200, \"rate\": 99.75, "
				  "\"cpu\": -1.00}"));
	assert_non_null(strstr(d, "\"whole\": {\"name\": \"merged\", "
				  "\"transactions\": 300, \"rate\": 150.25"));
	assert_non_null(strstr(d, "\"concurrent\": true, \"mbps\": false"));
	assert_non_null(strstr(d, "\"stages\": [{\"name\": \"wakeup\""));
	assert_non_null(strstr(d, "\"missing\": [\"h3\\u003cb\\u003e\"]"));
	/* A run without latency has no percentiles to draw. */
	assert_null(strstr(strstr(d, "h2/client.json"), "\"p50_us\": "
		    "0.000"));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_figures_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
