#include <stdlib.h>

#include "run_results.h"

void run_results_free(struct run_results *r)
{
	int i;

	for (i = 0; i < r->recs.nworkers; i++) {
		free(r->recs.recs[i]);
		r->recs.recs[i] = NULL;
		r->recs.n[i] = 0;
	}
	free(r->samples);
	r->samples = NULL;
	r->nsamples = 0;
}
