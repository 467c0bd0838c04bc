// SPDX-License-Identifier: GPL-2.0
/*
 * addrsearch: the IPv4 source of a frame looked up (a) in an LPM trie, (b) by
 * binary search over sorted intervals; the value goes to out[0]. Plus the
 * empty program (the floor). Userspace: bench/addrsearch.c.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "addrsearch.h"

const volatile __u32 npages = 1;	/* pages in use, >= 1 */

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);		/* set by userspace */
	__type(key, struct as_lpm_key);
	__type(value, __u32);
} lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct as_top);
} top SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* set by userspace: npages */
	__type(key, __u32);
	__type(value, struct as_page);
} pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} out SEC(".maps");

static __always_inline int saddr(struct xdp_md *ctx, __be32 *a)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + sizeof(struct ethhdr);

	if ((void *)(ip + 1) > end)
		return -1;
	*a = ip->saddr;
	return 0;
}

static __always_inline void put(__u32 v)
{
	__u32 k = 0, *o = bpf_map_lookup_elem(&out, &k);

	if (o)
		*o = v;
}

SEC("xdp")
int as_floor(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int as_lpm(struct xdp_md *ctx)
{
	struct as_lpm_key k = { .prefixlen = 32 };
	__u32 *v;

	if (saddr(ctx, &k.addr))
		return XDP_PASS;
	v = bpf_map_lookup_elem(&lpm, &k);
	put(v ? *v : 0);
	return XDP_PASS;
}

SEC("xdp")
int as_ival(struct xdp_md *ctx)
{
	__u32 k = 0, a, i = 0, step;
	struct as_page *p;
	struct as_top *t;
	__be32 be;

	if (saddr(ctx, &be))
		return XDP_PASS;
	a = bpf_ntohl(be);
	t = bpf_map_lookup_elem(&top, &k);
	if (!t)
		return XDP_PASS;
	/*
	 * The last i with start[i] <= a: start[0] is 0, so i exists. Unrolled,
	 * fixed steps; the index is masked so the verifier sees it in bounds.
	 */
#pragma unroll
	for (step = AS_TOP / 2; step; step >>= 1)
		if (t->start[(i + step) & (AS_TOP - 1)] <= a)
			i += step;
	/* a = 0xffffffff would walk into padding pages: clamp */
	if (i >= npages)
		i = npages - 1;
	p = bpf_map_lookup_elem(&pages, &i);
	if (!p)
		return XDP_PASS;
	i = 0;
#pragma unroll
	for (step = AS_PAGE / 2; step; step >>= 1)
		if (p->start[(i + step) & (AS_PAGE - 1)] <= a)
			i += step;
	put(p->val[i & (AS_PAGE - 1)]);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
