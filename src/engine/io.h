/*
 * The data path's socket calls. Without packet hooks they are the plain
 * syscalls (one predictable branch more); with --script packet hooks
 * the hook is called in their place, and only when the socket is ready,
 * so a hook that asserts on its recvmsg() never sees EAGAIN.
 */
#ifndef NETSTAGE_IO_H
#define NETSTAGE_IO_H

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "engine/worker.h"

/*
 * The socket syscalls themselves, not glibc's wrappers: in a process
 * with threads each wrapper is a cancellation point, switching the
 * thread's cancel type before and after the call (two atomic operations
 * a call). No worker is ever cancelled: they stop at rs->stop.
 */
static inline ssize_t sys_recvfrom(int fd, void *buf, size_t len, int flags,
				   struct sockaddr_storage *from,
				   socklen_t *fromlen)
{
	return syscall(SYS_recvfrom, fd, buf, len, flags, from, fromlen);
}

static inline ssize_t sys_sendto(int fd, const void *buf, size_t len,
				 int flags, const struct sockaddr *to,
				 socklen_t tolen)
{
	return syscall(SYS_sendto, fd, buf, len, flags, to, tolen);
}

/* w->phooks bits: which packet hooks this side's script registered. */
enum { IO_SEND = 1, IO_RECV = 2, IO_RECVERR = 4 };

ssize_t io_hooked_recv(struct worker *w, int fd, void *buf, size_t len,
		       int flags, struct sockaddr_storage *from,
		       socklen_t *fromlen);
ssize_t io_hooked_send(struct worker *w, int fd, const void *buf,
		       size_t len, int flags, const struct sockaddr *to,
		       socklen_t tolen);

static inline ssize_t io_recv(struct worker *w, int fd, void *buf,
			      size_t len, int flags)
{
	if (__builtin_expect(w->phooks & IO_RECV, 0))
		return io_hooked_recv(w, fd, buf, len, flags, NULL, NULL);
	return sys_recvfrom(fd, buf, len, flags, NULL, NULL);
}

static inline ssize_t io_send(struct worker *w, int fd, const void *buf,
			      size_t len, int flags)
{
	if (__builtin_expect(w->phooks & IO_SEND, 0))
		return io_hooked_send(w, fd, buf, len, flags, NULL, 0);
	return sys_sendto(fd, buf, len, flags, NULL, 0);
}

static inline ssize_t io_recvfrom(struct worker *w, int fd, void *buf,
				  size_t len, int flags,
				  struct sockaddr_storage *from,
				  socklen_t *fromlen)
{
	if (__builtin_expect(w->phooks & IO_RECV, 0))
		return io_hooked_recv(w, fd, buf, len, flags, from, fromlen);
	return sys_recvfrom(fd, buf, len, flags, from, fromlen);
}

static inline ssize_t io_sendto(struct worker *w, int fd, const void *buf,
				size_t len, int flags,
				const struct sockaddr *to, socklen_t tolen)
{
	if (__builtin_expect(w->phooks & IO_SEND, 0))
		return io_hooked_send(w, fd, buf, len, flags, to, tolen);
	return sys_sendto(fd, buf, len, flags, to, tolen);
}

/*
 * epoll reported `events` on fd: remember which readiness it brought,
 * and with a recverr hook let the hook read the error queue. Returns
 * the events the engine should see (EPOLLERR dropped when it only
 * meant a queued error message).
 */
uint32_t io_event(struct worker *w, int fd, uint32_t events);

/* This worker's packet hooks (0: none), from the side's script. */
unsigned int io_hooks_of(const struct run_shared *rs);

#endif
