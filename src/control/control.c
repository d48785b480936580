#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "core/common.h"
#include "control/control.h"

int ctl_send(int fd, const struct ctl_msg *m)
{
	uint8_t buf[CTL_MAX_MSG];
	int n = ctl_encode(m, buf, sizeof(buf)), off = 0;

	if (n < 0) {
		errno = EINVAL;
		return -1;
	}
	while (off < n) {
		ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += w;
	}
	return 0;
}

/* Read exactly len bytes before the deadline. */
static int read_full(int fd, uint8_t *buf, size_t len, uint64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int timeout = -1, rc;
		ssize_t r;

		if (deadline) {
			uint64_t now = now_ns();

			if (now >= deadline)
				return -ETIMEDOUT;
			timeout = (int)((deadline - now + 999999) / 1000000);
		}
		rc = poll(&p, 1, timeout);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		r = recv(fd, buf + off, len - off, 0);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return -EPIPE;
		off += r;
	}
	return 0;
}

int ctl_recv(int fd, struct ctl_msg *m, int timeout_ms)
{
	uint8_t buf[CTL_MAX_MSG];
	uint64_t deadline = 0;
	int plen, rc;

	if (timeout_ms >= 0)
		deadline = now_ns() + (uint64_t)timeout_ms * 1000000;
	rc = read_full(fd, buf, CTL_HDR_LEN, deadline);
	if (rc)
		return rc;
	plen = ctl_header_payload(buf);
	if (plen < 0)
		return -EBADMSG;
	rc = read_full(fd, buf + CTL_HDR_LEN, plen, deadline);
	if (rc)
		return rc;
	return ctl_decode(buf, CTL_HDR_LEN + plen, m) > 0 ? 0 : -EBADMSG;
}

int ctl_expect(int fd, unsigned int type, struct ctl_msg *m, int timeout_ms)
{
	int rc = ctl_recv(fd, m, timeout_ms);

	if (!rc && m->type != type)
		return -EBADMSG;
	return rc;
}
