/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -m addrtype needs the type the kernel gives an address (inet_dev_addr_type()):
 * that is the LOCAL routing table (255), where the kernel puts a "local" route
 * for every address of the namespace and a "broadcast" route for every subnet
 * broadcast. This module reads that table over rtnetlink (libnl-route-3) and
 * mirrors it into the data plane's bpfipt_rtlocal LPM trie (dataplane/bpfipt.h).
 * The loader writes it with every ruleset that uses addrtype; bpf-iptables
 * --watch rewrites it when the table changes (an address added or removed).
 */
#ifndef BPFIPT_RTLOCAL_H
#define BPFIPT_RTLOCAL_H

#include <linux/types.h>
#include "errors.h"

struct cp_rt {
	__be32 addr;		/* masked, network order */
	__u32 plen;
	__u32 type;		/* RTN_* */
	__u32 ifindex;		/* first next hop's device, 0 = none */
};

/* The IPv4 routes of table 255, sorted by (plen, addr), one per prefix (the
 * first the kernel lists, as its lookup takes). *out is malloc'ed. */
int cp_rtlocal_read(struct cp_rt **out, unsigned int *n, struct ipt_err *err);

/* Make the LPM trie fd hold exactly these routes. */
int cp_rtlocal_write(int fd, const struct cp_rt *v, unsigned int n, struct ipt_err *err);

#endif
