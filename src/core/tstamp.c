#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* After <time.h>: the uapi headers use struct timespec. */
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#include "core/common.h"
#include "core/tstamp.h"

#ifndef SCM_TIMESTAMPING
#define SCM_TIMESTAMPING SO_TIMESTAMPING
#endif

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

int64_t tstamp_offset(void)
{
	int64_t best = INT64_MAX, off = 0;
	struct timespec a, m, b;
	int i;

	for (i = 0; i < 16; i++) {
		clock_gettime(CLOCK_REALTIME, &a);
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_REALTIME, &b);
		if (ts_ns(&b) - ts_ns(&a) < best) {
			best = ts_ns(&b) - ts_ns(&a);
			off = (ts_ns(&a) + ts_ns(&b)) / 2 - ts_ns(&m);
		}
	}
	return off;
}

int tstamp_enable(int fd, char *err, size_t len)
{
	int flags = SOF_TIMESTAMPING_TX_SOFTWARE |
		    SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY;

	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags,
		       sizeof(flags))) {
		snprintf(err, len, "setsockopt(SO_TIMESTAMPING): %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The software timestamp of a message's SCM_TIMESTAMPING, or 0. */
static uint64_t software_stamp(struct msghdr *m, int64_t offset)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct scm_timestamping ts;

		if (c->cmsg_level != SOL_SOCKET ||
		    c->cmsg_type != SCM_TIMESTAMPING)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		if (ts.ts[0].tv_sec || ts.ts[0].tv_nsec)
			return ts_ns(&ts.ts[0]) - offset;
	}
	return 0;
}

ssize_t tstamp_recv(int fd, void *buf, size_t len, int64_t offset,
		    uint64_t *rx)
{
	char control[256];
	struct iovec iov = { buf, len };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	ssize_t r = recvmsg(fd, &m, 0);

	if (r > 0)
		*rx = software_stamp(&m, offset);
	return r;
}

uint64_t tstamp_tx(int fd, int64_t offset)
{
	uint64_t last = 0, t;
	char control[256];

	for (;;) {
		struct msghdr m = {
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return last;
		t = software_stamp(&m, offset);
		if (t)
			last = t;
	}
}
