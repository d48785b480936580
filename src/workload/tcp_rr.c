#include <sys/socket.h>

#include "config/options.h"
#include "config/workload.h"

const struct workload tcp_rr_workload = {
	.name = "tcp_rr",
	.bit = W_TCP_RR,
	.socktype = SOCK_STREAM,
	.is_rr = 1,
	.start = rr_start,
	.event = rr_event,
	.run_blocking = rr_run_blocking,
	.tick = rr_tick,
};
