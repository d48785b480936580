#include <stdio.h>
#include <sys/resource.h>

#include "sys/fdlimit.h"

int fd_limit_ensure(unsigned long need, char *err, size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;	/* nothing known: let the sockets say */
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max >= need &&
	    !setrlimit(RLIMIT_NOFILE, &(struct rlimit){ need, rl.rlim_max }))
		return 0;
	/* Root (CAP_SYS_RESOURCE) may raise the hard limit up to nr_open. */
	if (rl.rlim_max < need &&
	    !setrlimit(RLIMIT_NOFILE, &(struct rlimit){ need, need }))
		return 0;
	snprintf(err, len,
		 "%lu flows need %lu file descriptors; the hard limit is %llu (ulimit -Hn; raising it needs CAP_SYS_RESOURCE)",
		 need - FD_SPARE, need, (unsigned long long)rl.rlim_max);
	return -1;
}
