/* Small helpers every module uses: time, logging, allocation. */
#ifndef NETSTAGE_COMMON_H
#define NETSTAGE_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ULL

/* Exit statuses shared by every entry point. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/*
 * CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_ns() uses, so later
 * kernel timestamps subtract directly from these.
 */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * CLOCK_MONOTONIC as of the last tick: a few ns a read where now_ns()
 * costs 20-40 on a VM, never ahead of it, behind by about a tick.
 */
static inline uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline double ns_to_s(uint64_t ns)
{
	return (double)ns / NSEC_PER_SEC;
}

/* Who is speaking in log lines: "netstage" or "netstage server". */
void log_set_role(const char *role);
/*
 * NETSTAGE_PRETEND_ENOSYS=epoll_pwait2,EPIOCSPARAMS plays a kernel (or a
 * seccomp filter, or valgrind) without those calls: how the tests reach
 * the fallbacks.
 */
int pretend_enosys(const char *call);
/* One-line error on stderr, always printed. */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line, printed with --logtostderr only. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_enable_info(int on);

/* Allocation that cannot fail quietly: out of memory ends the process. */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n, size_t size);
char *xstrdup(const char *s);

#endif
