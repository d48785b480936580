#include <errno.h>
#include <linux/ioctl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sys/busypoll.h"
#include "core/common.h"

/* Debian 12's headers predate it: the Linux 6.9 ABI. */
#ifndef EPIOCSPARAMS
struct epoll_params {
	uint32_t busy_poll_usecs;
	uint16_t busy_poll_budget;
	uint8_t prefer_busy_poll;
	uint8_t pad;
};
#define EPIOCSPARAMS _IOW(0x8A, 0x01, struct epoll_params)
#endif

/* Packets a poll may take: the kernel's own busy-poll budget. */
#define BUDGET 8

static atomic_int sockets, epolls, socket_said, epoll_said;

void busy_poll_socket(int fd, int usecs)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, &len)) {
		if (!atomic_exchange(&socket_said, 1))
			log_err("--busy-poll: SO_BUSY_POLL refused: %s",
				strerror(errno));
		return;
	}
	if (v == usecs)
		atomic_fetch_add(&sockets, 1);
}

void busy_poll_epoll(int epfd, int usecs)
{
	struct epoll_params p = { .busy_poll_usecs = usecs,
				  .busy_poll_budget = BUDGET };

	if (pretend_enosys("EPIOCSPARAMS"))
		errno = ENOTTY;
	else if (!ioctl(epfd, EPIOCSPARAMS, &p)) {
		atomic_fetch_add(&epolls, 1);
		return;
	}
	if (!atomic_exchange(&epoll_said, 1))
		log_err("--busy-poll: epoll busy polling refused: %s%s",
			strerror(errno), errno == ENOTTY ?
			" (EPIOCSPARAMS needs Linux 6.9)" : "");
}

struct busy_poll_counts busy_poll_take(void)
{
	return (struct busy_poll_counts){
		.sockets = atomic_exchange(&sockets, 0),
		.epolls = atomic_exchange(&epolls, 0),
	};
}
