#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys/heapwarm.h"

/* glibc's own default for both thresholds. */
#define HEAP_DEFAULT_THRESHOLD (128 * 1024)
/* Both while warm: blocks up to this stay on the heap, and freed ones. */
#define HEAP_WARM_MAX (64 << 20)

void heap_warm(size_t bytes)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a, e;
	char *p;

	mallopt(M_MMAP_THRESHOLD, HEAP_WARM_MAX);
	mallopt(M_TRIM_THRESHOLD, HEAP_WARM_MAX);
	p = malloc(bytes);
	if (!p)
		return;
	a = ((uintptr_t)p + page - 1) & ~(page - 1);
	e = ((uintptr_t)p + bytes) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
	/* Before Linux 5.14: EINVAL, and the faults come one by one. */
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#endif
	free(p);
}

void heap_cool(void)
{
	mallopt(M_MMAP_THRESHOLD, HEAP_DEFAULT_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, HEAP_DEFAULT_THRESHOLD);
	malloc_trim(0);
}
