#include <sys/socket.h>

#include "config/options.h"
#include "config/workload.h"

const struct workload tcp_stream_workload = {
	.name = "tcp_stream",
	.bit = W_TCP_STREAM,
	.socktype = SOCK_STREAM,
	.start = stream_start,
	.event = stream_event,
	.run_blocking = stream_run_blocking,
};
