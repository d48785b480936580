/*
 * The file descriptor limit: a flow is a descriptor, and the default
 * soft limit (1024 on many systems) is far below what -F asks for.
 */
#ifndef NETSTAGE_FDLIMIT_H
#define NETSTAGE_FDLIMIT_H

#include <stddef.h>

/* Descriptors a side needs beyond its flows: control, epoll, files. */
#define FD_SPARE 64

/*
 * Make room for `need` descriptors: raise the soft limit, and the hard
 * one where privileges allow. -1 and a sentence naming both in err if
 * the limit stays below need.
 */
int fd_limit_ensure(unsigned long need, char *err, size_t len);

#endif
