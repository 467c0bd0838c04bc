/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The line of a -j LOG event (struct bpfipt_log_event, dataplane/log.bpf.h) in
 * the format of the kernel's LOG target (net/netfilter/nf_log_syslog.c):
 *
 *   PREFIX IN=eth0 OUT= MAC=.. SRC=.. DST=.. LEN=.. TOS=.. PREC=.. TTL=.. ID=..
 *   [CE ][DF ][MF ][FRAG:n ][OPT (..) ]PROTO=TCP SPT=.. DPT=.. [SEQ=.. ACK=.. ]
 *   WINDOW=.. RES=.. flags URGP=.. [OPT (..) ][UID=.. GID=.. ][MARK=0x.. ]
 *
 * with the kernel's spacing (every field ends with a space, the line too), its
 * ICMP decoding (ID/SEQ, PARAMETER, GATEWAY, MTU, the quoted packet in [...]),
 * INCOMPLETE/TRUNCATED markers, and the --log-tcp-sequence, --log-tcp-options,
 * --log-ip-options, --log-uid and --log-macdecode flags. What the data plane
 * cannot know is documented in docs/log.md (VLAN tags on the wire).
 */
#ifndef BPFIPT_LOGFMT_H
#define BPFIPT_LOGFMT_H

#include <linux/bpf.h>
#include <stdbool.h>
#include "bpfipt.h"
#include "strbuf.h"

/* Append the line (no newline) for ev to sb. in/out: the names of ev->iif and
 * ev->oif ("" for none). */
void lf_format(struct strbuf *sb, const struct bpfipt_log_event *ev, const char *in,
	       const char *out);

#endif
