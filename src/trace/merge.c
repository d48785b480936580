#include <pthread.h>
#include <string.h>

#include "trace/merge.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define DEF(side, stage, from_b, to_b)					\
	{ NS_##side, { #stage, NS_B_##from_b, NS_B_##to_b } },

static const struct {
	enum ns_side side;
	struct stage_def def;
} all_stages[] = { NS_STAGES(DEF) };

#define NAME(name, where) #name,
static const char *const bnames[NS_B_COUNT] = { NS_BOUNDARIES(NAME) };
#undef NAME

static const struct {
	enum ns_side side;
	struct stage_def def;
} all_kstages[] = { NS_KSTAGES(DEF) };
#undef DEF

static struct stage_def by_side[NS_SIDES][NS_MAX_STAGES];
static int nby_side[NS_SIDES];
static struct stage_def kby_side[NS_SIDES][NS_MAX_KSTAGES];
static int nkby_side[NS_SIDES];
static pthread_once_t indexed = PTHREAD_ONCE_INIT;

#define SCHED_DEF(stage, from_b, to_b) { #stage, NS_B_##from_b, NS_B_##to_b },
static const struct stage_def sched_stages[] = { NS_SCHED_STAGES(SCHED_DEF) };
#undef SCHED_DEF

/* side | NS_SCHED_BIT: side's stages, wakeup split (NS_SCHED_STAGES). */
static void sched_side(int s)
{
	int i, k, t = s | NS_SCHED_BIT;
	const struct stage_def *d = by_side[s];

	for (i = 0; i < nby_side[s]; i++) {
		if (d[i].from != NS_B_DATA_READY || (d[i].to != NS_B_EPOLL_RET &&
						      d[i].to != NS_B_POLL_RET)) {
			by_side[t][nby_side[t]++] = d[i];
			continue;
		}
		for (k = 0; k < (int)ARRAY_LEN(sched_stages); k++)
			by_side[t][nby_side[t]++] = sched_stages[k];
		/* An observed server's wait ends at its poll's return. */
		by_side[t][nby_side[t] - 1].to = d[i].to;
	}
}

/* side | NS_RATE_BIT: `queue`, from the intended send, then side's. */
static void rate_side(int s)
{
	int t = s | NS_RATE_BIT;

	if (!nby_side[s] || NS_IS_SERVER(s))
		return;
	by_side[t][0] = (struct stage_def){ "queue", NS_B_INTENDED,
					    by_side[s][0].from };
	memcpy(&by_side[t][1], by_side[s], nby_side[s] * sizeof(by_side[s][0]));
	nby_side[t] = nby_side[s] + 1;
}

static void build_index(void)
{
	size_t i;

	for (i = 0; i < sizeof(all_stages) / sizeof(all_stages[0]); i++) {
		int s = all_stages[i].side;

		by_side[s][nby_side[s]++] = all_stages[i].def;
	}
	for (i = 0; i < NS_SCHED_BIT; i++)
		sched_side((int)i);
	for (i = 0; i < NS_RATE_BIT; i++)
		rate_side((int)i);
	for (i = 0; i < sizeof(all_kstages) / sizeof(all_kstages[0]); i++) {
		int s = all_kstages[i].side;

		kby_side[s][nkby_side[s]++] = all_kstages[i].def;
	}
}

/*
 * Split the stage lists by side, once: every worker thread asks, and two
 * building the tables at once overran them (UBSan caught it).
 */
static void index_stages(void)
{
	pthread_once(&indexed, build_index);
}

int kstage_count(enum ns_side side)
{
	index_stages();
	return nkby_side[side];
}

const struct stage_def *kstage_defs(enum ns_side side)
{
	index_stages();
	return kby_side[side];
}

int stage_count(enum ns_side side)
{
	index_stages();
	return nby_side[side];
}

const struct stage_def *stage_defs(enum ns_side side)
{
	index_stages();
	return by_side[side];
}

const char *boundary_name(enum ns_boundary b)
{
	return b < NS_B_COUNT ? bnames[b] : "?";
}

/*
 * --trace-sched: the worker's last wake-up and its CPU after it (the
 * record's WOKEN, ON_CPU) are this transaction's if they lie between
 * its DATA_READY and its EPOLL_RET (observed: POLL_RET): it slept until
 * the data came. Otherwise it was running, behind other work.
 */
static void split_wakeup(enum ns_side side, struct merged *m,
			 const struct ns_krecord *k)
{
	enum ns_boundary end = NS_IS_OBS(side) ? NS_B_POLL_RET : NS_B_EPOLL_RET;
	uint64_t ready = m->b[NS_B_DATA_READY], ret = m->b[end];
	uint64_t woken = m->b[NS_B_WOKEN], on = m->b[NS_B_ON_CPU];

	/* No epoll wait of its own (blocking I/O, a later read of a batch). */
	if (!ret)
		ret = m->b[end] = ready;

	if (ready && woken >= ready && on >= woken && ret >= on) {
		m->b[NS_B_BUSY_END] = ready;
		m->held_pid = k->held_pid;
		m->held_cpu = k->held_cpu;
		memcpy(m->held_comm, k->held_comm, sizeof(m->held_comm));
		m->held_comm[sizeof(m->held_comm) - 1] = '\0';
		return;
	}
	m->b[NS_B_BUSY_END] = m->b[NS_B_WOKEN] = m->b[NS_B_ON_CPU] = ret;
}

enum merge_result merge_transaction(enum ns_side side,
				    const struct ns_krecord *k,
				    const struct ustamps *u, struct merged *m)
{
	const struct stage_def *d = stage_defs(side);
	int i, n = stage_count(side);

	uint64_t seen, queued;

	memset(m, 0, sizeof(*m));
	memcpy(m->b, k->t, sizeof(m->b));
	m->b[NS_B_APP_SEND] = u->app_send;
	m->b[NS_B_EPOLL_RET] = u->epoll_ret;
	m->b[NS_B_APP_DONE] = u->app_done;
	m->b[NS_B_CONNECT] = u->connect;
	m->b[NS_B_ACCEPT_RET] = u->accept_ret;
	m->b[NS_B_INTENDED] = u->intended;
	if (u->recv_ret)
		m->b[NS_B_RECV_RET] = u->recv_ret;
	m->sw_tx = u->sw_tx;
	m->sw_rx = u->sw_rx;
	/*
	 * The data is queued before sk_data_ready runs; a reader already
	 * entering epoll_wait or recv can find it in between, unwoken, or
	 * even before the call. The data was ready when the reader saw it,
	 * whichever came first.
	 */
	seen = u->epoll_ret ? u->epoll_ret :
	       m->b[NS_B_POLL_RET] ? m->b[NS_B_POLL_RET] : m->b[NS_B_RECV_RET];
	queued = m->b[NS_IS_UDP(side) ? NS_B_NETIF_RX : NS_B_TCP_RX];
	if (seen && queued && queued <= seen &&
	    (!m->b[NS_B_DATA_READY] || m->b[NS_B_DATA_READY] > seen))
		m->b[NS_B_DATA_READY] = seen;
	/* First: its EPOLL_RET may be missing, and it knows whence. */
	if (NS_IS_SCHED(side))
		split_wakeup(side, m, k);
	/*
	 * No epoll (or, observed, a thread that did not wait for this
	 * request): the wait ends where the recv that follows starts.
	 */
	for (i = 0; i < n; i++)
		if ((d[i].to == NS_B_EPOLL_RET || d[i].to == NS_B_POLL_RET) &&
		    !m->b[d[i].to])
			m->b[d[i].to] = m->b[d[i].from];
	for (i = 0; i < n; i++) {
		if (!m->b[d[i].from] || !m->b[d[i].to]) {
			m->bad = m->b[d[i].from] ? d[i].to : d[i].from;
			return MERGE_MISSING;
		}
	}
	for (i = 0; i < n; i++) {
		if (m->b[d[i].to] < m->b[d[i].from]) {
			m->bad = d[i].to;
			return MERGE_DISORDER;
		}
		m->stage[i] = m->b[d[i].to] - m->b[d[i].from];
	}
	m->total = m->b[d[n - 1].to] - m->b[d[0].from];
	return MERGE_OK;
}

int merge_held_back_side(enum ns_side side)
{
	return NS_BPF_SIDE(side) == NS_SERVER;
}

uint64_t merge_held_back_ns(enum ns_side side, enum merge_result r,
			    const struct merged *m)
{
	uint64_t done = m->b[NS_B_APP_DONE], xmit = m->b[NS_B_DEV_XMIT];

	if (r != MERGE_DISORDER || m->bad != NS_B_APP_DONE ||
	    !merge_held_back_side(side) || !done || xmit <= done)
		return 0;
	return xmit - done;
}
