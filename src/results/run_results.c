#include <stdio.h>
#include <stdlib.h>

#include "results/run_results.h"
#include "trace/join.h"
#include "trace/recout.h"

void run_results_table(const struct run_results *r, struct join_table *t)
{
	t->side = r->side;
	snprintf(t->name, sizeof(t->name), "%s", r->role);
	recout_table(t, &r->recs);
	join_sort(t);
}

void run_results_free(struct run_results *r)
{
	int i;

	if (!r)
		return;
	kv_free(&r->keys);
	kv_free(&r->options);
	kv_free(&r->header);
	free(r->error);
	free(r->iv);
	for (i = 0; i < r->recs.nworkers; i++)
		free(r->recs.recs[i]);
	free(r->samples);
	free(r);
}
