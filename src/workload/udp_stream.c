#include <sys/socket.h>

#include "config/options.h"
#include "config/workload.h"

const struct workload udp_stream_workload = {
	.name = "udp_stream",
	.bit = W_UDP_STREAM,
	.socktype = SOCK_DGRAM,
	.start = stream_start,
	.event = stream_event,
};
