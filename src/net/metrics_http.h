/*
 * `observe --listen ADDR:PORT`: GET /metrics over HTTP (libmicrohttpd),
 * answered from observe's own loop, with no thread of its own: the
 * figures are read where they are written, with no lock, at most one
 * read of the ring (20 ms) late.
 */
#ifndef NETSTAGE_METRICS_HTTP_H
#define NETSTAGE_METRICS_HTTP_H

#include <stddef.h>
#include <stdio.h>

#include "net/netaddr.h"

struct metrics_http;

/* "ADDR:PORT" or "[ADDR6]:PORT" resolved; -1 with what is wrong in err. */
int metrics_http_parse(const char *where, struct addr *a, char *err,
		       size_t len);
/*
 * Listen there; render(arg, f) writes the page of each GET /metrics.
 * NULL with why in err (the address is taken, say).
 */
struct metrics_http *metrics_http_open(const char *where,
				       void (*render)(void *arg, FILE *f),
				       void *arg, char *err, size_t len);
/* Answer the requests that have come, without waiting. */
void metrics_http_serve(struct metrics_http *h);
/* Its listening socket, to wait on with the ring. */
int metrics_http_fd(const struct metrics_http *h);
void metrics_http_close(struct metrics_http *h);

#endif
