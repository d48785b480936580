#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "core/common.h"
#include "config/options.h"
#include "config/workload.h"

static const struct workload *const all[] = {
	&tcp_rr_workload,
	&tcp_stream_workload,
	&udp_stream_workload,
	&tcp_crr_workload,
	&udp_rr_workload,
	&observe_workload,
};

/* observe: no engine; observe.c runs it. */
const struct workload observe_workload = {
	.name = "observe",
	.bit = W_OBSERVE,
	.socktype = SOCK_STREAM,
	.is_rr = 1,
};

const struct workload *workload_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct workload *workload_by_bit(unsigned int bit)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (all[i]->bit == bit)
			return all[i];
	return NULL;
}

const char *workload_names(void)
{
	return "tcp_rr, tcp_crr, udp_rr, tcp_stream, udp_stream";
}
