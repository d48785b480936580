/*
 * Privileges. A traced run needs root's rights for one thing: loading
 * its BPF programs. So a privileged netstage keeps, from start-up,
 * only the capabilities its options need (as the invoking user when
 * run by sudo), and drops those that loading needed once it is done.
 * kernel.bpf_stats (the trace cost window) and finding another
 * process's BPF map need CAP_SYS_ADMIN: a helper process keeps it
 * alone and hands out those descriptors.
 * docs/usage.md says what runs with which rights.
 */
#ifndef NETSTAGE_PRIVS_H
#define NETSTAGE_PRIVS_H

#include <stddef.h>

#include "config/options.h"
#include "config/workload.h"

/*
 * Before anything else runs, single-threaded: keep what the run needs,
 * as SUDO_UID/SUDO_GID when root runs for sudo, with no new privileges
 * from exec. Nothing to do for an unprivileged process. 0, or -1 and
 * a sentence in err.
 */
int privs_start(const struct options *o, const struct workload *wl,
		char *err, size_t len);

/* A command that loads nothing (join): no rights at all, as privs_start. */
int privs_none(char *err, size_t len);

/*
 * The tracer is loaded for the rest of the run and the flows are open:
 * drop what only that needed. A process that loads BPF again for each
 * test (a standalone traced server, a traced client's --iterations)
 * keeps CAP_BPF and CAP_PERFMON. Call while single-threaded.
 */
void privs_loaded(void);

/* May this process load BPF tracing programs (CAP_BPF, CAP_PERFMON)? */
int privs_may_load(void);

/* bpf_enable_stats(BPF_STATS_RUN_TIME), by the helper where there is one. */
int privs_stats_fd(void);

/*
 * The oldest netstage object's packet clock map on the host (NS_RX_CLOCK
 * in bpf/stages.h), by the helper where there is one; -1 with errno
 * (ESRCH: none loaded).
 */
int privs_rx_clock_fd(void);

#endif
