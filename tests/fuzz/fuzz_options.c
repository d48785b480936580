/*
 * Option parsing, fed argument vectors: the first byte picks the
 * workload, the rest is split at NUL bytes into arguments. Parsing
 * either succeeds or says why in a line; it never crashes or leaks.
 * (Validation is left out: it resolves host names.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/options.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int wls[] = { W_TCP_RR, W_TCP_CRR, W_UDP_RR,
					    W_TCP_STREAM, W_UDP_STREAM,
					    W_OBSERVE };
	char *argv[MAX_ARGS + 2], *buf, *p, err[256];
	struct options o;
	int argc = 1;

	if (!size)
		return 0;
	buf = malloc(size);
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	argv[0] = "netstage";
	for (p = buf; p < buf + size - 1 && argc <= MAX_ARGS;
	     p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	err[0] = '\0';
	if (options_parse(&o, wls[data[0] % (sizeof(wls) / sizeof(wls[0]))],
			  argc, argv, err, sizeof(err)) && !err[0])
		abort();	/* a failure always says why */
	options_free(&o);
	free(buf);
	return 0;
}
