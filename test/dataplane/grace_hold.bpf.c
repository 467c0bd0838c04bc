// SPDX-License-Identifier: GPL-2.0
/* Program runs that last (test/dataplane/test_grace.c): on a frame of the local
 * experimental EtherType 0x88b5, each of the three programs writes when it
 * began, keeps its CPU for hold_ns, and writes when it ended, as a packet's
 * long run would be under way at a switch. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "grace_hold.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GH_NHOOKS);
	__type(key, __u32);
	__type(value, struct gh_times);
} gh_times SEC(".maps");

const volatile __u64 hold_ns = 50000000;	/* 50 ms */
__u32 armed;	/* 1 + the hook that holds (the others let frames by); 0: none */

static long spin(__u64 i, void *ctx)
{
	(void)i;
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

static __always_inline void hold(void *data, void *data_end, __u32 hook)
{
	struct ethhdr *eth = data;
	struct gh_times *t;
	__u64 until;

	if (armed != hook + 1 || (void *)(eth + 1) > data_end ||
	    eth->h_proto != bpf_htons(GH_ETHERTYPE))
		return;
	t = bpf_map_lookup_elem(&gh_times, &hook);
	if (!t)
		return;
	t->begin = bpf_ktime_get_ns();
	until = t->begin + hold_ns;
	bpf_loop(1 << 23, spin, &until, 0);
	t->end = bpf_ktime_get_ns();
}

SEC("tc")
int gh_tc_out(struct __sk_buff *skb)
{
	hold((void *)(long)skb->data, (void *)(long)skb->data_end, GH_TC_OUT);
	return TC_ACT_OK;
}

SEC("xdp")
int gh_xdp(struct xdp_md *x)
{
	hold((void *)(long)x->data, (void *)(long)x->data_end, GH_XDP);
	return XDP_PASS;
}

SEC("tc")
int gh_tc_in(struct __sk_buff *skb)
{
	hold((void *)(long)skb->data, (void *)(long)skb->data_end, GH_TC_IN);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
