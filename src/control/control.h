/* Control connection I/O: whole messages over a socket, with deadlines. */
#ifndef NETSTAGE_CONTROL_H
#define NETSTAGE_CONTROL_H

#include "control/ctl_msg.h"

/* 0, or -1 with errno set. */
int ctl_send(int fd, const struct ctl_msg *m);

/*
 * Wait up to timeout_ms (-1: forever) for one whole message.
 * 0 on success; -ETIMEDOUT; -EPIPE when the peer closed or reset;
 * -EBADMSG for bytes that are not our protocol.
 */
int ctl_recv(int fd, struct ctl_msg *m, int timeout_ms);

/* Receive a message of one expected type; other types are -EBADMSG. */
int ctl_expect(int fd, unsigned int type, struct ctl_msg *m, int timeout_ms);

#endif
