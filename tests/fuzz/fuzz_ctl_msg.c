/*
 * The control-message decoder, fed what a hostile peer could send: it
 * never reads past the bytes it was given, and what it accepts encodes
 * back to as many bytes (text it made printable keeps its length) and
 * decodes to the same message again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/ctl_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1), buf[CTL_MAX_MSG];
	struct ctl_msg m, again;
	int n, e;

	/* An exact-size heap copy: ASan sees any read past the end. */
	memcpy(copy, data, size);
	n = ctl_decode(copy, size, &m);
	if (n < -1 || n > (int)size)
		abort();
	if (size >= CTL_HDR_LEN)
		(void)ctl_header_payload(copy);
	if (n > 0) {
		e = ctl_encode(&m, buf, sizeof(buf));
		if (e != n || ctl_decode(buf, e, &again) != e ||
		    again.type != m.type ||
		    memcmp(again.f, m.f, sizeof(m.f)) ||
		    strcmp(again.text, m.text))
			abort();
	}
	free(copy);
	return 0;
}
