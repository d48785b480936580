/*
 * A side's results model (run_results.h) as bytes and back: how
 * --local's server hands its whole results to the parent over one
 * pipe, and what the two ends of a run on two hosts will exchange over
 * the control connection. Everything the model owns goes (keys,
 * options, histograms, intervals, the trace summary, the kept records);
 * the samples, which it only lends, do not.
 *
 * Framed: u32 'NSRR', u32 version, u64 payload length, then the
 * payload in wire.h's encoding. A payload built from another stage list
 * (its boundary or stage count differs) is refused, not misread.
 */
#ifndef NETSTAGE_RESULTS_WIRE_H
#define NETSTAGE_RESULTS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "results/run_results.h"
#include "results/wire.h"

#define RESULTS_MAGIC 0x4e535252u	/* "NSRR" */
#define RESULTS_VERSION 3
#define RESULTS_HDR_LEN 16
/* A frame larger is refused (10 million records fit). */
#define RESULTS_MAX_LEN (4ULL << 30)

/* The whole frame, header first, appended to b. */
void results_encode(const struct run_results *r, struct wbuf *b);
/*
 * The frame in p (n bytes) as a new model, or NULL with a one-line
 * reason in err.
 */
struct run_results *results_decode(const void *p, size_t n, char *err,
				   size_t len);

/* r's frame written whole to fd: 0, or -1 with errno. */
int results_send(int fd, const struct run_results *r);
/*
 * The largest frame of a model with at most `records` kept records:
 * what a reader that does not trust its peer takes at most.
 */
uint64_t results_frame_cap(long records);
/*
 * One frame of at most max_len bytes read from fd within timeout_ms:
 * the model, or NULL with the reason in err ("" when fd ended before
 * any byte: nothing sent). A longer frame is refused before any of it
 * is allocated. *bytes (if not NULL): the frame's length.
 */
struct run_results *results_recv(int fd, int timeout_ms, uint64_t max_len,
				 uint64_t *bytes, char *err, size_t len);

#endif
