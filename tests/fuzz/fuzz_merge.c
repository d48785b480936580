/*
 * The trace merge, fed any kernel record and user stamps: every side's
 * result is one of the three, and a merge it accepts has stages that
 * add up to its span exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ns_side sides[] = {
		NS_CLIENT, NS_SERVER, NS_CLIENT_UDP, NS_SERVER_UDP,
		NS_CLIENT_CRR, NS_SERVER_CRR, NS_SERVER_OBS,
		NS_CLIENT | NS_SCHED_BIT, NS_SERVER | NS_SCHED_BIT,
		NS_CLIENT_UDP | NS_SCHED_BIT, NS_SERVER_UDP | NS_SCHED_BIT,
		NS_CLIENT_CRR | NS_SCHED_BIT, NS_SERVER_CRR | NS_SCHED_BIT,
	};
	struct ns_krecord k;
	struct ustamps u;
	struct merged m;
	uint64_t sum;
	size_t i;
	int j;

	if (size < sizeof(k) + 7 * sizeof(uint64_t))
		return 0;
	memcpy(&k, data, sizeof(k));
	memcpy(&u.app_send, data + sizeof(k), 8);
	memcpy(&u.epoll_ret, data + sizeof(k) + 8, 8);
	memcpy(&u.app_done, data + sizeof(k) + 16, 8);
	memcpy(&u.sw_tx, data + sizeof(k) + 24, 8);
	memcpy(&u.sw_rx, data + sizeof(k) + 32, 8);
	memcpy(&u.connect, data + sizeof(k) + 40, 8);
	memcpy(&u.accept_ret, data + sizeof(k) + 48, 8);
	/* Lean records: RECV_RET is the worker's stamp, when there is one. */
	if (size >= sizeof(k) + 64)
		memcpy(&u.recv_ret, data + sizeof(k) + 56, 8);
	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		enum merge_result r = merge_transaction(sides[i], &k, &u, &m);

		if (r != MERGE_OK && r != MERGE_MISSING && r != MERGE_DISORDER)
			abort();
		if (r != MERGE_OK)
			continue;
		for (sum = 0, j = 0; j < stage_count(sides[i]); j++)
			sum += m.stage[j];
		if (sum != m.total)
			abort();
	}
	return 0;
}
