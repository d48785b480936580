/*
 * The kernel's own software timestamps (SO_TIMESTAMPING), an independent
 * check of the traced boundaries: TX_SOFTWARE is taken as the driver
 * gets the packet, RX_SOFTWARE as the packet enters the stack. They come
 * in CLOCK_REALTIME and are returned here in CLOCK_MONOTONIC ns, the
 * tracer's clock.
 */
#ifndef NETSTAGE_TSTAMP_H
#define NETSTAGE_TSTAMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CLOCK_REALTIME - CLOCK_MONOTONIC, in ns, from the tightest of a few
 * reads. */
int64_t tstamp_offset(void);

int tstamp_enable(int fd, char *err, size_t len);

/* recv() that also returns the software RX timestamp (0: none). */
ssize_t tstamp_recv(int fd, void *buf, size_t len, int64_t offset,
		    uint64_t *rx);

/* Drain the error queue; the last software TX timestamp, or 0. */
uint64_t tstamp_tx(int fd, int64_t offset);

#endif
