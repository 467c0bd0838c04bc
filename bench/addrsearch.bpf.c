// SPDX-License-Identifier: GPL-2.0
/*
 * addrsearch: the IPv4 source of a frame looked up (a) in an LPM trie, (b) by
 * binary search over sorted intervals; the value goes to out[0]. Plus the
 * empty program (the floor). as_loop searches the AS_ADDRS addresses of the map
 * addrs one after the other (as_loop_lpm: in the trie) and leaves the XOR of the values (each + its index)
 * in out[0]: with varied addresses the binary steps' branches are mispredicted,
 * as with real traffic, which a run of one repeated frame never shows.
 * as_dp_loop does the same with the data plane's own search (dataplane/ival.bpf.h)
 * over the pages the loader would write (controlplane/ival.c), as_dp_loop_nosep
 * without reading the pages' separators.
 * Userspace: bench/addrsearch.c.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "addrsearch.h"
#include "ival.bpf.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct as_addrs);
} addrs SEC(".maps");

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

/* The value of address a (host order): the top's 13 steps, then a page's 8;
 * AS_PAGE + 1 on a failed lookup. */
static __always_inline __u32 search(__u32 a)
{
	__u32 k = 0, i = 0, step;
	struct as_page *p;
	struct as_top *t;

	t = bpf_map_lookup_elem(&top, &k);
	if (!t)
		return AS_PAGE + 1;
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
		return AS_PAGE + 1;
	i = 0;
#pragma unroll
	for (step = AS_PAGE / 2; step; step >>= 1)
		if (p->start[(i + step) & (AS_PAGE - 1)] <= a)
			i += step;
	return p->val[i & (AS_PAGE - 1)];
}

SEC("xdp")
int as_ival(struct xdp_md *ctx)
{
	__be32 be;

	if (saddr(ctx, &be))
		return XDP_PASS;
	put(search(bpf_ntohl(be)));
	return XDP_PASS;
}

/* A loop program: cb over the AS_ADDRS addresses, the XOR of its values in out[0] */
#define LOOP_PROG(name, cb)							\
	SEC("xdp")								\
	int name(struct xdp_md *ctx)						\
	{									\
		__u32 acc = 0;							\
										\
		bpf_loop(AS_ADDRS, cb, &acc, 0);				\
		put(acc);							\
		return XDP_PASS;						\
	}

/* bpf_loop's callback: search address n of the map addrs */
static long loop_one(__u64 n, void *ctx)
{
	__u32 k = 0, *acc = ctx;
	struct as_addrs *as = bpf_map_lookup_elem(&addrs, &k);

	if (!as)
		return 1;
	*acc ^= search(as->a[n & (AS_ADDRS - 1)]) + (__u32)n;
	return 0;
}

LOOP_PROG(as_loop, loop_one)

/* the same loop over the LPM trie */
static long loop_one_lpm(__u64 n, void *ctx)
{
	struct as_lpm_key key = { .prefixlen = 32 };
	__u32 k = 0, *acc = ctx, *v;
	struct as_addrs *as = bpf_map_lookup_elem(&addrs, &k);

	if (!as)
		return 1;
	key.addr = bpf_htonl(as->a[n & (AS_ADDRS - 1)]);
	v = bpf_map_lookup_elem(&lpm, &key);
	*acc ^= (v ? *v : 0) + (__u32)n;
	return 0;
}

LOOP_PROG(as_loop_lpm, loop_one_lpm)

/* The data plane's pages (written through mmap, as the loader does) and the
 * set's descriptor, in a map: the verifier must not know it (FORGET()). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* set by userspace */
	__type(key, __u32);
	__type(value, struct bpfipt_ival_page);
} dpages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dpdesc SEC(".maps");

#define DP_ONE(name, sep)							\
	static long name(__u64 n, void *ctx)					\
	{									\
		__u32 k = 0, *acc = ctx, *desc = bpf_map_lookup_elem(&dpdesc, &k);	\
		struct as_addrs *as = bpf_map_lookup_elem(&addrs, &k);		\
										\
		if (!as || !desc)						\
			return 1;						\
		*acc ^= IVAL_FIND4_SEP(&dpages, *desc, as->a[n & (AS_ADDRS - 1)], sep) + \
			(__u32)n;						\
		return 0;							\
	}
DP_ONE(dp_one, 1)
DP_ONE(dp_one_nosep, 0)

LOOP_PROG(as_dp_loop, dp_one)
LOOP_PROG(as_dp_loop_nosep, dp_one_nosep)

char LICENSE[] SEC("license") = "GPL";
