/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by test/dataplane/grace_hold.bpf.c and test_grace.c. */
#ifndef GRACE_HOLD_H
#define GRACE_HOLD_H

#include <linux/types.h>

#define GH_ETHERTYPE	0x88b5

/* in the order a frame sent on one end of a veth meets them */
enum { GH_TC_OUT, GH_XDP, GH_TC_IN, GH_NHOOKS };

struct gh_times {
	__u64 begin, end;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

#endif
