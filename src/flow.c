#include <stdlib.h>
#include <unistd.h>

#include "common.h"
#include "flow.h"

struct flow *flow_new(int fd, int id, int with_latency)
{
	struct flow *f = xcalloc(1, sizeof(*f));

	f->fd = fd;
	f->id = id;
	f->open = 1;
	if (with_latency) {
		f->lat = xcalloc(1, sizeof(*f->lat));
		f->lat_total = xcalloc(1, sizeof(*f->lat_total));
		hist_reset(f->lat);
		hist_reset(f->lat_total);
	}
	return f;
}

void flow_close_interval(struct flow *f)
{
	if (f->lat_unc) {
		hist_merge(f->lat_unc_total, f->lat_unc);
		hist_reset(f->lat_unc);
	}
	if (!f->lat)
		return;
	hist_merge(f->lat_total, f->lat);
	hist_reset(f->lat);
}

void flow_free(struct flow *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->lat);
	free(f->lat_total);
	free(f->pend);
	free(f->sent_at);
	free(f->intended_at);
	free(f->lat_unc);
	free(f->lat_unc_total);
	free(f);
}
