#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>

#include "engine/io.h"
#include "script/script.h"

static enum hook pick(const struct worker *w, enum hook client)
{
	return (enum hook)(client + (w->rs->is_client ? 0 : 1));
}

unsigned int io_hooks_of(const struct run_shared *rs)
{
	unsigned int h, bits = 0, c = rs->is_client ? 0 : 1;

	if (!rs->script)
		return 0;
	h = script_hooks(rs->script);
	if (h & (1u << (HOOK_CLIENT_SENDMSG + c)))
		bits |= IO_SEND;
	if (h & (1u << (HOOK_CLIENT_RECVMSG + c)))
		bits |= IO_RECV;
	if (h & (1u << (HOOK_CLIENT_RECVERR + c)))
		bits |= IO_RECVERR;
	return bits;
}

/*
 * Ready for `want` (POLLIN/POLLOUT): epoll just said so, or a poll()
 * that does not wait does. Blocking TCP sockets are always "ready": the
 * call waits, as the plain syscall would.
 */
static int ready(struct worker *w, int fd, short want, uint32_t epbit)
{
	struct pollfd p = { .fd = fd, .events = want };

	if (w->ev_fd == fd && (w->ev & epbit)) {
		w->ev &= ~epbit;
		return 1;
	}
	if (w->rs->o->io_mode == IO_BLOCKING &&
	    w->rs->wl->socktype == SOCK_STREAM)
		return 1;
	return poll(&p, 1, 0) == 1 && (p.revents & (want | POLLERR | POLLHUP));
}

ssize_t io_hooked_recv(struct worker *w, int fd, void *buf, size_t len,
		       int flags, struct sockaddr_storage *from,
		       socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (!ready(w, fd, POLLIN, EPOLLIN)) {
		errno = EAGAIN;
		return -1;
	}
	if (from) {
		m.msg_name = from;
		m.msg_namelen = *fromlen;
	}
	r = script_packet_hook(w->sw, pick(w, HOOK_CLIENT_RECVMSG), fd, &m,
			       flags);
	if (from)
		*fromlen = m.msg_namelen;
	return r;
}

ssize_t io_hooked_send(struct worker *w, int fd, const void *buf,
		       size_t len, int flags, const struct sockaddr *to,
		       socklen_t tolen)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_name = (void *)to, .msg_namelen = tolen };

	if (!w->rs->wl->is_rr && !ready(w, fd, POLLOUT, EPOLLOUT)) {
		errno = EAGAIN;
		return -1;
	}
	return script_packet_hook(w->sw, pick(w, HOOK_CLIENT_SENDMSG), fd, &m,
				  flags);
}

uint32_t io_event(struct worker *w, int fd, uint32_t events)
{
	struct iovec iov = { w->buf, w->rs->o->buffer_size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	socklen_t sl = sizeof(int);
	int soerr = 0;

	w->ev_fd = fd;
	w->ev = events;
	if (!(w->phooks & IO_RECVERR) || !(events & EPOLLERR))
		return events;
	script_packet_hook(w->sw, pick(w, HOOK_CLIENT_RECVERR), fd, &m,
			   MSG_ERRQUEUE | MSG_DONTWAIT);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && !soerr)
		events &= ~EPOLLERR;
	return events;
}
