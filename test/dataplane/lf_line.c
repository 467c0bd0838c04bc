// SPDX-License-Identifier: GPL-2.0
/*
 * lf_line: the LOG line controlplane/logfmt.c prints for a packet given in hex,
 * for test/e2e/log6_kernel.py, which compares it with the kernel's LOG line for
 * the same packet. One event per line on stdin:
 *
 *   CHAIN IN OUT FLAGS MARK MACHEX PKTHEX
 *
 * CHAIN 0 INPUT, 1 FORWARD, 2 OUTPUT; IN/OUT interface names ("-": none);
 * FLAGS the XT_LOG_* bits; MACHEX the 14-byte link-layer header ("-": none);
 * PKTHEX the packet from its IP header. The prefix is "t6 ". Prints the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "logfmt.h"

static size_t unhex(const char *s, __u8 *out, size_t cap)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	for (; s[0] && s[1] && n < cap; s += 2) {
		unsigned int b;

		if (sscanf(s, "%2x", &b) != 1)
			break;
		out[n++] = (__u8)b;
	}
	return n;
}

int main(void)
{
	static char line[70000], in[64], out[64], mac[64], pkt[66000];
	struct strbuf sb = STRBUF_INIT;
	struct bpfipt_log_event ev;
	unsigned int chain, flags, mark;
	static __u8 bytes[33000];
	size_t n;

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%u %63s %63s %u %u %63s %65999s", &chain, in, out, &flags, &mark,
			   mac, pkt) != 7) {
			fprintf(stderr, "lf_line: bad input line\n");
			return 2;
		}
		memset(&ev, 0, sizeof(ev));
		ev.chain = chain;
		ev.flags = flags;
		ev.mark = mark;
		ev.iif = strcmp(in, "-") ? 2 : 0;	/* not lo: MAC decoding applies */
		snprintf(ev.prefix, sizeof(ev.prefix), "t6 ");
		ev.maclen = unhex(mac, ev.mac, sizeof(ev.mac));
		n = unhex(pkt, bytes, sizeof(bytes));
		ev.len = n;
		ev.caplen = n < BPFIPT_LOG_CAP ? n : BPFIPT_LOG_CAP - 1;
		memcpy(ev.pkt, bytes, ev.caplen);
		sb_reset(&sb);
		lf_format(&sb, &ev, strcmp(in, "-") ? in : "", strcmp(out, "-") ? out : "");
		printf("%s\n", sb_str(&sb));
		fflush(stdout);
	}
	sb_free(&sb);
	return 0;
}
