/*
 * CPU utilisation and service demand, as netperf reports them: busy and
 * total time of the whole machine from /proc/stat, at start and end.
 */
#ifndef NETSTAGE_CPU_H
#define NETSTAGE_CPU_H

#include <stdint.h>

struct cpu_snap {
	uint64_t busy;		/* jiffies, all CPUs */
	uint64_t total;
	int ok;
};

void cpu_read(struct cpu_snap *s);
/* Percent of the machine busy between a and b (0..100), or -1. */
double cpu_util(const struct cpu_snap *a, const struct cpu_snap *b);
/* CPU seconds the machine spent busy between a and b. */
double cpu_busy_s(const struct cpu_snap *a, const struct cpu_snap *b);
int cpu_count(void);
/* CPUs this process may run on (taskset), all online ones if unknown. */
int cpu_allowed(void);

#endif
