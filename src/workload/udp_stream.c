#include <sys/socket.h>

#include "../options.h"
#include "../workload.h"

const struct workload udp_stream_workload = {
	.name = "udp_stream",
	.bit = W_UDP_STREAM,
	.socktype = SOCK_DGRAM,
	.start = stream_start,
	.event = stream_event,
};
