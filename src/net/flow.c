#include <stdlib.h>
#include <unistd.h>

#include "core/common.h"
#include "net/flow.h"

struct flow *flow_new(int fd, int id, int with_latency)
{
	struct flow *f = xcalloc(1, sizeof(*f));

	f->fd = fd;
	f->id = id;
	f->open = 1;
	f->wants_lat = with_latency;
	return f;
}

void flow_attach_latency(struct flow *f, struct hist *shared, int own)
{
	if (!f->wants_lat)
		return;
	if (!own) {
		f->lat = shared;
		return;
	}
	f->lat = xcalloc(1, sizeof(*f->lat));
	f->own_lat = 1;
	hist_reset(f->lat);
}

void flow_close_interval(struct flow *f, struct hist *into)
{
	if (!f->own_lat)
		return;
	hist_merge(into, f->lat);
	hist_reset(f->lat);
}

void flow_free(struct flow *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	if (f->own_lat)
		free(f->lat);
	free(f->pend);
	free(f->sent_at);
	free(f->sent_seq);
	free(f->intended_at);
	free(f->peer_seq);
	free(f);
}
