/*
 * A library call that allocates and touches many MiB at once faults a
 * page at a time: libbpf parsing the kernel's BTF touches about 11 MiB
 * (2,900 faults), and on a guest where a fault costs about 8 us that
 * is 24 ms of its 63. Pages populated in bulk beforehand cost a tenth
 * of that. heap_warm() keeps large blocks on the heap and freed memory
 * in it, and populates `bytes` of it in one call; heap_cool() gives
 * back what is free and sets malloc's thresholds to glibc's defaults
 * (fixed from then on: glibc no longer raises the mmap threshold as
 * large blocks are freed, which nothing of netstage's relies on).
 * Around a call made once, at start-up.
 */
#ifndef NETSTAGE_HEAPWARM_H
#define NETSTAGE_HEAPWARM_H

#include <stddef.h>

void heap_warm(size_t bytes);
void heap_cool(void);

#endif
