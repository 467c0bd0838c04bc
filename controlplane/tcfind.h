/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Our tc filters on many interfaces over one netlink socket. libbpf's
 * bpf_tc_query() opens a socket of its own for every question (socket, bind,
 * getsockname, the request, close): a command that looks at each link before
 * attaching paid about 30 us a link for its two hooks, 3 ms on a host of 100
 * links (docs/performance.md). cp_tc_find() dumps each hook's filters instead,
 * all on one socket.
 */
#ifndef BPFIPT_TCFIND_H
#define BPFIPT_TCFIND_H

#include <linux/types.h>

struct cp_tc_found {
	__u32 id;	/* the filter's program id; 0: no such filter */
	__u32 handle;	/* its handle */
};

/* For each interface ifindex[i] and hook h (0: ingress, 1: egress of its
 * clsact qdisc), in out[2 * i + h]: the cls_bpf filter of chain 0, protocol
 * all and priority prio whose handle is one of the nh handles, the earliest
 * of them when several are there (bpf_tc_query() asked in that order).
 * 0, or a negative libnl error (nl_geterror()) when netlink failed; out is
 * then not to be used. */
int cp_tc_find(const int *ifindex, int n, __u16 prio, const __u32 *handles, int nh,
	       struct cp_tc_found *out);

#endif
