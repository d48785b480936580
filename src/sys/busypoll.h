/*
 * The kernel's own busy polling (--busy-poll=US): recv() on a socket
 * (SO_BUSY_POLL) and epoll_wait() on a worker's set (EPIOCSPARAMS,
 * Linux 6.9) poll the receiving device's queue, its NAPI context, for
 * up to US microseconds before they sleep: sockperf's --lls. Only
 * packets a NAPI device received carry the id this needs: on loopback
 * the setting is accepted and changes nothing.
 */
#ifndef NETSTAGE_BUSYPOLL_H
#define NETSTAGE_BUSYPOLL_H

/* What this process set since the last busy_poll_take(). */
struct busy_poll_counts {
	int sockets;		/* SO_BUSY_POLL set and read back */
	int epolls;		/* EPIOCSPARAMS set */
};

/*
 * Set them on a data socket or an epoll set; a refusal is said once a
 * process (naming the errno and what it means) and the test goes on.
 */
void busy_poll_socket(int fd, int usecs);
void busy_poll_epoll(int epfd, int usecs);

/* The counts so far, which start again from 0. */
struct busy_poll_counts busy_poll_take(void);

#endif
