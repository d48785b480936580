#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "stats/cpu.h"

void cpu_read(struct cpu_snap *s)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	s->ok = 0;
	if (!f)
		return;
	/* user nice system idle iowait irq softirq steal (guest is in user) */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return;
	s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	s->busy = s->total - v[3] - v[4];
	s->ok = 1;
}

double cpu_util(const struct cpu_snap *a, const struct cpu_snap *b)
{
	if (!a->ok || !b->ok || b->total <= a->total)
		return -1;
	return 100.0 * (double)(b->busy - a->busy) / (b->total - a->total);
}

double cpu_busy_s(const struct cpu_snap *a, const struct cpu_snap *b)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (!a->ok || !b->ok || hz <= 0)
		return 0;
	return (double)(b->busy - a->busy) / hz;
}

int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

int cpu_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return cpu_count();
	return CPU_COUNT(&set);
}
