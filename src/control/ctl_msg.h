/*
 * Control-connection messages: encoding and decoding only, no I/O.
 *
 * Wire format, all big-endian: a 12-byte header
 *   u32 'NSTG' | u16 version | u16 type | u32 payload length
 * then the payload: the type's fixed number of u64 fields, and for
 * CTL_ACK a u16-length-prefixed text. A payload whose length is not
 * exactly what its type needs is malformed.
 *
 * Conversation: client HELLO -> [with --auth-key: server CHALLENGE ->
 * client AUTH] -> server ACK (status, data port, text)
 * -> client opens the data flows -> server READY -> client START ...
 * client STOP (its counts) -> server RESULT (its counts) -> client NEXT
 * (whether another test follows, for --iterations). A client whose HELLO
 * has HF_WANTS_RESULTS then reads, after its last NEXT, the server's
 * whole results model (results_wire.h's frame) on the same connection.
 */
#ifndef NETSTAGE_CTL_MSG_H
#define NETSTAGE_CTL_MSG_H

#include <stddef.h>
#include <stdint.h>

#define CTL_PROTO_MAGIC 0x4e535447u	/* "NSTG" */
#define CTL_VERSION 3
#define CTL_HDR_LEN 12
#define CTL_TEXT_MAX 200
#define CTL_MAX_FIELDS 12
#define CTL_MAX_MSG (CTL_HDR_LEN + 8 * CTL_MAX_FIELDS + 2 + CTL_TEXT_MAX)

enum ctl_type {
	CTL_HELLO = 1,
	CTL_ACK,
	CTL_READY,
	CTL_START,
	CTL_STOP,
	CTL_RESULT,
	CTL_NEXT,	/* client, after RESULT: N_MORE, another test follows */
	CTL_CHALLENGE,	/* server, after HELLO: 32 random bytes (auth.h) */
	CTL_AUTH,	/* client: its answer to them */
	CTL_WAIT,	/* server, before ACK: other clients still awaited */
	CTL_TYPE_END,
};

/* HELLO fields: the test parameters the server must share. */
enum {
	H_MAGIC,	/* the user's --magic */
	H_WORKLOAD,	/* W_* bit */
	H_FLOWS,
	H_THREADS,
	H_REQUEST,
	H_RESPONSE,
	H_BUFFER,
	H_LENGTH,	/* test length, s */
	H_FLAGS,	/* HF_* */
	H_INFLIGHT,	/* requests a flow keeps in flight at most (2) */
	H_NFIELDS
};

/* The most H_INFLIGHT can say: an open-loop client's (OPEN_INFLIGHT). */
#define CTL_INFLIGHT_MAX 4096

/*
 * HF_WANTS_RESULTS: the client joins the two ends' records (a run on
 * two hosts), so the server sends its model at the end. A server that
 * does not know the bit ignores it and closes: the client says so.
 */
enum { HF_CLIENT_READS = 1, HF_CLIENT_WRITES = 2, HF_WANTS_RESULTS = 4 };

/* ACK fields, then a text explaining a non-zero status. */
enum { A_STATUS, A_DATA_PORT, A_NFIELDS };

enum { N_MORE, N_NFIELDS };

/*
 * WAIT fields: W_IN of the W_NEEDED clients --num-clients asks for are
 * in. Sent every few seconds to those in, so that a client started long
 * before the last one keeps waiting for as long as its server does.
 */
enum { W_IN, W_NEEDED, W_NFIELDS };

/* CHALLENGE and AUTH: 32 bytes as big-endian u64 fields. */
#define CTL_AUTH_FIELDS 4

/*
 * STOP and RESULT: one side's totals, its machine's CPU utilisation in
 * millionths of the machine (-1 unknown: all ones) and its service
 * demand in ns of CPU per transaction (rr) or per KB (stream).
 */
/* The largest R_CPU_UTIL_PPM (100%) and R_SERVICE_DEMAND_NS (a day). */
#define CTL_CPU_UTIL_MAX 1000000ULL
#define CTL_DEMAND_MAX_NS (86400ULL * 1000000000ULL)

enum {
	R_TRANSACTIONS,
	R_BYTES_READ,
	R_BYTES_WRITTEN,
	R_CPU_UTIL_PPM,
	R_SERVICE_DEMAND_NS,
	R_NFIELDS
};

struct ctl_msg {
	uint16_t type;
	uint64_t f[CTL_MAX_FIELDS];
	char text[CTL_TEXT_MAX + 1];
};

/* Number of u64 fields a type carries; -1 for an unknown type. */
int ctl_nfields(unsigned int type);

/* Encode into buf; returns the byte count or -1 if buf is too small. */
int ctl_encode(const struct ctl_msg *m, uint8_t *buf, size_t len);

/*
 * Decode one message from buf. Returns the bytes consumed, 0 if buf
 * holds only part of a message (read more), or -1 if it is malformed:
 * not our magic or version, an unknown type, a wrong length, or a field
 * out of its range (a port past 65535, more than 100% CPU).
 */
int ctl_decode(const uint8_t *buf, size_t len, struct ctl_msg *m);

/*
 * The protocol version a header of ours announces (our magic), -1 for
 * a stranger's or too few bytes: a peer of another build is named.
 */
int ctl_version_of(const uint8_t *buf, size_t len);

/* Payload length a header announces, or -1 if the header is bad. */
int ctl_header_payload(const uint8_t *hdr);

#endif
