/*
 * The page of a merge: its figures as JSON in the page, drawn by
 * html/merge.js with the run report's style.
 */
#include <stdio.h>

#include "core/kv.h"
#include "output/json_doc.h"
#include "output/merge_report.h"

static const char merge_js[] =
#include "html/merge_js.inc"
;

static const char report_css[] =
#include "html/report_css.inc"
;

static void run_json(FILE *f, const struct merge_run *r)
{
	fputs("{\"name\": ", f);
	json_string(f, r->name);
	fprintf(f, ", \"transactions\": %llu, \"rate\": %.2f, \"cpu\": %.2f",
		(unsigned long long)r->transactions, r->rate, r->cpu_util);
	if (r->lat)
		fprintf(f, ", \"p50_us\": %.3f, \"p99_us\": %.3f, "
			"\"p999_us\": %.3f", hist_percentile(r->lat, 50) / 1e3,
			hist_percentile(r->lat, 99) / 1e3,
			hist_percentile(r->lat, 99.9) / 1e3);
	if (r->lat) {
		fputs(", \"buckets\": ", f);
		json_buckets(f, r->lat);
	}
	fputc('}', f);
}

static void data(FILE *f, const struct merge_page *p)
{
	int i;

	fputs("\"workload\": ", f);
	json_string(f, p->workload);
	fputs(", \"role\": ", f);
	json_string(f, p->role);
	fprintf(f, ", \"concurrent\": %s, \"mbps\": %s,\n\"runs\": [",
		p->concurrent ? "true" : "false", p->mbps ? "true" : "false");
	for (i = 0; i < p->nruns; i++) {
		fputs(i ? ",\n" : "\n", f);
		run_json(f, &p->run[i]);
	}
	fputs("],\n\"whole\": ", f);
	run_json(f, &p->whole);
	fputs(",\n\"stages\": [", f);
	for (i = 0; i < p->nstages; i++) {
		fputs(i ? ", {\"name\": " : "{\"name\": ", f);
		json_string(f, p->stage[i].name);
		fprintf(f, ", \"p50_us\": %.3f, \"p99_us\": %.3f}",
			hist_percentile(p->stage[i].h, 50) / 1e3,
			hist_percentile(p->stage[i].h, 99) / 1e3);
	}
	fputs("],\n\"missing\": [", f);
	for (i = 0; i < p->nmissing; i++) {
		if (i)
			fputs(", ", f);
		json_string(f, p->missing[i]);
	}
	fputc(']', f);
}

int merge_report_write(FILE *f, const struct merge_page *p)
{
	/* The title is set by the script: no file's text is HTML here. */
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		"<meta charset=\"utf-8\">\n<title>netstage merge</title>\n"
		"<style>\n%s</style></head>\n<body>\n<main id=\"app\"><p>This "
		"report draws itself with JavaScript.</p></main>\n<script "
		"id=\"netstage-data\" type=\"application/json\">\n{",
		report_css);
	data(f, p);
	fprintf(f, "}\n</script>\n<script>\n%s</script>\n</body></html>\n",
		merge_js);
	return ferror(f) ? -1 : 0;
}
