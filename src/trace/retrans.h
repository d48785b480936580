/*
 * Retransmissions, named where they happened. BPF logs each one TCP
 * makes on a traced connection (struct ns_retrans: the connection and
 * the messages whose bytes it resent); after the run this counts the
 * transactions they touched and marks the kept records of those with
 * RETRANS, the time of the first. A server's response is resent after
 * its record has gone, so the mark cannot travel with the record. Pure:
 * tests/unit/t_retrans.c checks it on synthetic logs.
 */
#ifndef NETSTAGE_TRACE_RETRANS_H
#define NETSTAGE_TRACE_RETRANS_H

#include <stdint.h>

#include "stages.h"

struct trace_rec;

/* The transactions of `side` the log names: distinct (connection, message). */
uint64_t retrans_transactions(const struct ns_retrans *log, uint32_t n,
			      enum ns_side side);

/*
 * Put RETRANS into the records of `side` the log names, each the time
 * of its first retransmission. A record is named by its flow and
 * sequence number; where connections share numbers (tcp_crr, observe:
 * the client's port, message 0 on each), by the port and number of the
 * latest record to begin before the retransmission. How many marked.
 */
long retrans_mark(struct trace_rec *recs, long nrecs, enum ns_side side,
		  const struct ns_retrans *log, uint32_t n);

#endif
