#include <stdlib.h>

#include "run_results.h"

void run_results_free(struct run_results *r)
{
	int i;

	for (i = 0; i < r->recs.nworkers; i++)
		free(r->recs.recs[i]);
	free(r->samples);
	free(r);
}
