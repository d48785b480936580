#include <string.h>

#include "control/ctl_msg.h"

static const int nfields[CTL_TYPE_END] = {
	[CTL_HELLO] = H_NFIELDS,
	[CTL_ACK] = A_NFIELDS,
	[CTL_READY] = 0,
	[CTL_START] = 0,
	[CTL_STOP] = R_NFIELDS,
	[CTL_RESULT] = R_NFIELDS,
	[CTL_NEXT] = N_NFIELDS,
	[CTL_CHALLENGE] = CTL_AUTH_FIELDS,
	[CTL_AUTH] = CTL_AUTH_FIELDS,
	[CTL_WAIT] = W_NFIELDS,
};

int ctl_nfields(unsigned int type)
{
	if (type < CTL_HELLO || type >= CTL_TYPE_END)
		return -1;
	return nfields[type];
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static size_t payload_len(const struct ctl_msg *m)
{
	size_t n = 8 * (size_t)ctl_nfields(m->type);

	if (m->type == CTL_ACK)
		n += 2 + strnlen(m->text, CTL_TEXT_MAX);
	return n;
}

int ctl_encode(const struct ctl_msg *m, uint8_t *buf, size_t len)
{
	int i, nf = ctl_nfields(m->type);
	size_t plen, tlen;
	uint8_t *p;

	if (nf < 0)
		return -1;
	plen = payload_len(m);
	if (len < CTL_HDR_LEN + plen)
		return -1;
	put_be(buf, CTL_PROTO_MAGIC, 4);
	put_be(buf + 4, CTL_VERSION, 2);
	put_be(buf + 6, m->type, 2);
	put_be(buf + 8, plen, 4);
	p = buf + CTL_HDR_LEN;
	for (i = 0; i < nf; i++, p += 8)
		put_be(p, m->f[i], 8);
	if (m->type == CTL_ACK) {
		tlen = strnlen(m->text, CTL_TEXT_MAX);
		put_be(p, tlen, 2);
		memcpy(p + 2, m->text, tlen);
	}
	return (int)(CTL_HDR_LEN + plen);
}

int ctl_version_of(const uint8_t *buf, size_t len)
{
	if (len < CTL_HDR_LEN || get_be(buf, 4) != CTL_PROTO_MAGIC)
		return -1;
	return (int)get_be(buf + 4, 2);
}

int ctl_header_payload(const uint8_t *hdr)
{
	uint64_t plen = get_be(hdr + 8, 4);
	int nf = ctl_nfields(get_be(hdr + 6, 2));

	if (get_be(hdr, 4) != CTL_PROTO_MAGIC ||
	    get_be(hdr + 4, 2) != CTL_VERSION || nf < 0)
		return -1;
	if (plen > CTL_MAX_MSG - CTL_HDR_LEN || plen < 8 * (uint64_t)nf)
		return -1;
	return (int)plen;
}

static int decode_text(const uint8_t *p, size_t avail, struct ctl_msg *m)
{
	size_t tlen;

	if (avail < 2)
		return -1;
	tlen = get_be(p, 2);
	if (tlen > CTL_TEXT_MAX || tlen != avail - 2)
		return -1;
	memcpy(m->text, p + 2, tlen);
	m->text[tlen] = '\0';
	/*
	 * Text is shown to users: printable ASCII only, so no C0 or C1
	 * control (0x9b starts an escape sequence on some terminals), no
	 * DEL, and no bytes a terminal could read as either.
	 */
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)m->text[i] < 0x20 ||
		    (unsigned char)m->text[i] > 0x7e)
			m->text[i] = '?';
	return 0;
}

/* A figure that is a count, or UINT64_MAX for "unknown", up to max. */
static int figure(uint64_t v, uint64_t max)
{
	return v == UINT64_MAX || v <= max;
}

/*
 * Field values the protocol can carry: a peer's message with any other
 * is malformed, rather than printed or used as it came.
 */
static int fields_valid(const struct ctl_msg *m)
{
	const uint64_t *f = m->f;

	switch (m->type) {
	case CTL_HELLO:
		return f[H_FLAGS] <= (HF_CLIENT_READS | HF_CLIENT_WRITES |
				     HF_WANTS_RESULTS) &&
		       f[H_INFLIGHT] >= 1 && f[H_INFLIGHT] <= CTL_INFLIGHT_MAX;
	case CTL_ACK:
		return f[A_STATUS] <= 1 && f[A_DATA_PORT] <= 65535 &&
		       (f[A_STATUS] || f[A_DATA_PORT] >= 1);
	case CTL_STOP:
	case CTL_RESULT:
		/* Counts a side can sum; utilisation of at most 100%. */
		return f[R_TRANSACTIONS] <= INT64_MAX &&
		       f[R_BYTES_READ] <= INT64_MAX &&
		       f[R_BYTES_WRITTEN] <= INT64_MAX &&
		       figure(f[R_CPU_UTIL_PPM], CTL_CPU_UTIL_MAX) &&
		       figure(f[R_SERVICE_DEMAND_NS], CTL_DEMAND_MAX_NS);
	case CTL_NEXT:
		return f[N_MORE] <= 1;
	case CTL_WAIT:
		return f[W_IN] < f[W_NEEDED] && f[W_NEEDED] <= INT32_MAX;
	}
	return 1;
}

int ctl_decode(const uint8_t *buf, size_t len, struct ctl_msg *m)
{
	int plen, nf, i;
	const uint8_t *p;

	if (len < CTL_HDR_LEN)
		return 0;
	plen = ctl_header_payload(buf);
	if (plen < 0)
		return -1;
	if (len < (size_t)CTL_HDR_LEN + plen)
		return 0;
	memset(m, 0, sizeof(*m));
	m->type = get_be(buf + 6, 2);
	nf = ctl_nfields(m->type);
	p = buf + CTL_HDR_LEN;
	for (i = 0; i < nf; i++, p += 8)
		m->f[i] = get_be(p, 8);
	if (m->type == CTL_ACK) {
		if (decode_text(p, plen - 8 * nf, m))
			return -1;
	} else if (plen != 8 * nf) {
		return -1;
	}
	if (!fields_valid(m))
		return -1;
	return CTL_HDR_LEN + plen;
}
