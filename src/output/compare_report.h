/*
 * What `netstage compare` shows (results/compare.h is its model):
 * key=value lines, JSON, a table for a terminal, and one
 * self-contained HTML page (inline SVG drawn by html/compare.js,
 * nothing fetched). Every view reads the same key=value lists, so
 * none can disagree with another.
 */
#ifndef NETSTAGE_COMPARE_REPORT_H
#define NETSTAGE_COMPARE_REPORT_H

#include <stdio.h>

#include "results/compare.h"

struct compare_page {
	const struct cmp *c;
	const char *const *a, *const *b;	/* the files of each group */
	int na, nb;
};

void compare_print_kv(FILE *f, const struct compare_page *p);
void compare_print_json(FILE *f, const struct compare_page *p);
void compare_print_human(FILE *f, const struct compare_page *p);
/* 0, or -1 if writing failed. */
int compare_report_write(FILE *f, const struct compare_page *p);

#endif
