/*
 * The views of a comparison (compare_report.h): each built from the
 * same lists, the whole's and one a figure.
 */
#include <math.h>
#include <stdio.h>

#include "core/kv.h"
#include "output/compare_report.h"

static const char compare_js[] =
#include "html/compare_js.inc"
;

static const char report_css[] =
#include "html/report_css.inc"
;

static const char *noise_of(const struct cmp *c)
{
	return c->within ? "within" : "runs";
}

static void head_kv(const struct compare_page *p, struct kv_list *kv)
{
	const struct cmp *c = p->c;

	kv_str(kv, "workload", c->workload);
	kv_int(kv, "compare_runs_a", p->na);
	kv_int(kv, "compare_runs_b", p->nb);
	kv_str(kv, "compare_noise", noise_of(c));
	kv_num(kv, "compare_level", COMPARE_LEVEL, 2);
	kv_int(kv, "compare_figures", c->nfig);
	kv_int(kv, "compare_tested", c->ntested);
	kv_int(kv, "compare_beyond_noise", c->nbeyond);
}

static void fig_kv(const struct cmp_fig *f, struct kv_list *kv)
{
	kv_num(kv, "a", f->a, 3);
	kv_num(kv, "b", f->b, 3);
	kv_num(kv, "change", f->diff, 3);
	kv_num(kv, "change_pct", f->a ? 100 * f->diff / f->a : NAN, 2);
	kv_num(kv, "low", f->low, 3);
	kv_num(kv, "high", f->high, 3);
	kv_num(kv, "p", f->p, 6);
	kv_str(kv, "verdict", compare_verdict(f));
	kv_str(kv, "judgement", compare_judgement(f));
}

void compare_print_kv(FILE *f, const struct compare_page *p)
{
	struct kv_list kv = { 0 };
	char prefix[96];
	int i;

	head_kv(p, &kv);
	kv_print(&kv, f, "");
	kv_free(&kv);
	for (i = 0; i < p->c->nfig; i++) {
		const struct cmp_fig *g = &p->c->fig[i];

		fig_kv(g, &kv);
		snprintf(prefix, sizeof(prefix), "%s.%s.", g->side, g->name);
		kv_print(&kv, f, prefix);
		kv_free(&kv);
	}
}

static void files_json(FILE *f, const char *const *path, int n)
{
	int i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		json_string(f, path[i]);
	}
	fputc(']', f);
}

/* The document's members, without its braces (the page embeds them). */
static void members(FILE *f, const struct compare_page *p)
{
	struct kv_list kv = { 0 };
	int i;

	head_kv(p, &kv);
	fputs("\"compare\": {\n", f);
	kv_json_members(&kv, f, 2);
	kv_free(&kv);
	fputs("},\n\"a\": ", f);
	files_json(f, p->a, p->na);
	fputs(",\n\"b\": ", f);
	files_json(f, p->b, p->nb);
	fputs(",\n\"figures\": [", f);
	for (i = 0; i < p->c->nfig; i++) {
		const struct cmp_fig *g = &p->c->fig[i];

		kv_str(&kv, "side", g->side);
		kv_str(&kv, "name", g->name);
		fig_kv(g, &kv);
		fputs(i ? ",\n{" : "\n{", f);
		kv_json_members(&kv, f, 2);
		fputc('}', f);
		kv_free(&kv);
	}
	fputs("]", f);
}

void compare_print_json(FILE *f, const struct compare_page *p)
{
	fputc('{', f);
	members(f, p);
	fputs("}\n", f);
}

static void human_files(FILE *f, const char *label,
			const char *const *path, int n)
{
	int i;

	fprintf(f, "  %s: %d run%s:", label, n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++)
		fprintf(f, " %s", path[i]);
	fputc('\n', f);
}

void compare_print_human(FILE *f, const struct compare_page *p)
{
	const struct cmp *c = p->c;
	char pct[24];
	int i;

	fprintf(f, "netstage compare: %s, B against A\n", c->workload);
	human_files(f, "A", p->a, p->na);
	human_files(f, "B", p->b, p->nb);
	fprintf(f, "  noise: %s; beyond it: Holm-adjusted p < %.2f over the "
		"%d figures tested\n", c->within ? "each run's own (one run a "
		"side: repeat the runs for run-to-run noise)" :
		"run to run (Welch's t over the runs)", COMPARE_LEVEL,
		c->ntested);
	fprintf(f, "  %-34s %12s %12s %12s %9s  %s\n", "figure (us, or per s)",
		"A", "B", "change", "", "beyond noise?");
	for (i = 0; i < c->nfig; i++) {
		const struct cmp_fig *g = &c->fig[i];

		if (g->a)
			snprintf(pct, sizeof(pct), "%+.1f%%",
				 100 * g->diff / g->a);
		else
			snprintf(pct, sizeof(pct), "-");
		fprintf(f, "  %-6s %-27s %12.2f %12.2f %+12.2f %9s  ",
			g->side, g->name, g->a, g->b, g->diff, pct);
		if (isnan(g->p))
			fputs("untested\n", f);
		else if (g->beyond)
			fprintf(f, "yes, %s (%s)\n", compare_verdict(g),
				compare_judgement(g));
		else
			fputs("no\n", f);
	}
	fprintf(f, "  %d of %d figures changed beyond noise\n", c->nbeyond,
		c->ntested);
}

int compare_report_write(FILE *f, const struct compare_page *p)
{
	/* The title is set by the script: no file's text is HTML here. */
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		"<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
		"content=\"width=device-width\">\n<title>netstage compare"
		"</title>\n<style>\n%s</style></head>\n<body>\n<main id=\"app\">"
		"<p>This report draws itself with JavaScript.</p></main>\n"
		"<script id=\"netstage-data\" type=\"application/json\">\n{",
		report_css);
	members(f, p);
	fprintf(f, "}\n</script>\n<script>\n%s</script>\n</body></html>\n",
		compare_js);
	return ferror(f) ? -1 : 0;
}
