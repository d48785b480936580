#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "core/infile.h"

/*
 * Whatever comes on fd (non-blocking), up to want bytes: a fifo with no
 * writer reads 0 at once; a writer silent for INFILE_WAIT_MS times out.
 */
static int read_all(int fd, char *buf, size_t want, size_t *n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;
	int rc;

	*n = 0;
	while (*n < want) {
		r = read(fd, buf + *n, want - *n);
		if (r > 0) {
			*n += r;
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -1;
		rc = poll(&p, 1, INFILE_WAIT_MS);
		if (rc == 0)
			errno = ETIMEDOUT;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return -1;
	}
	return 0;
}

int infile_read(const char *path, void *buf, size_t max, size_t *n,
		mode_t *mode)
{
	/* Not blocked at open() by a fifo with no writer yet. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc, e;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return -1;
	}
	if (mode)
		*mode = st.st_mode;
	rc = read_all(fd, buf, max + 1, n);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

FILE *infile_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), e;
	FILE *f;

	if (fd < 0)
		return NULL;
	/* Blocking again: a writer that is there is waited for. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "r");
	if (!f) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
