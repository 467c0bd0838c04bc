// SPDX-License-Identifier: GPL-2.0
/* The local routing table, mirrored for -m addrtype: see rtlocal.h. */
#include "rtlocal.h"

#include <linux/bpf.h>	/* struct bpf_spin_lock of bpfipt.h */
#include "bpfipt.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <netlink/netlink.h>
#include <netlink/route/route.h>
#include <stdlib.h>
#include <string.h>

static int rt_cmp(const void *a, const void *b)
{
	const struct cp_rt *x = a, *y = b;

	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return memcmp(&x->addr, &y->addr, 4);
}

struct dump {
	struct cp_rt *v;
	unsigned int n, cap;
};

static int on_route(struct nl_msg *msg, void *arg)
{
	struct dump *d = arg;
	struct rtnl_route *rt = NULL;
	struct rtnl_nexthop *nh;
	struct nl_addr *dst;
	__u32 a = 0, plen;

	if (rtnl_route_parse(nlmsg_hdr(msg), &rt) < 0)
		return NL_SKIP;
	dst = rtnl_route_get_dst(rt);
	plen = dst ? nl_addr_get_prefixlen(dst) : 0;
	/* the kernel filtered on the table; be sure */
	if (rtnl_route_get_table(rt) != RT_TABLE_LOCAL || rtnl_route_get_family(rt) != AF_INET ||
	    plen > 32)
		goto out;
	if (dst && nl_addr_get_len(dst) == 4)
		memcpy(&a, nl_addr_get_binary_addr(dst), 4);
	if (plen < 32)
		a &= plen ? htonl(~0u << (32 - plen)) : 0;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->v = realloc(d->v, d->cap * sizeof(*d->v));
		if (!d->v)
			abort();
	}
	nh = rtnl_route_nexthop_n(rt, 0);
	d->v[d->n++] = (struct cp_rt){ .addr = a, .plen = plen, .type = rtnl_route_get_type(rt),
				       .ifindex = nh ? (__u32)rtnl_route_nh_get_ifindex(nh) : 0 };
out:
	rtnl_route_put(rt);
	return NL_OK;
}

int cp_rtlocal_read(struct cp_rt **out, unsigned int *n, struct ipt_err *err)
{
	struct rtmsg rtm = { .rtm_family = AF_INET, .rtm_table = RT_TABLE_LOCAL };
	struct nl_sock *q = nl_socket_alloc();
	struct dump d = { 0 };
	unsigned int i, k;
	int one = 1, r;

	*out = NULL;
	*n = 0;
	if (!q)
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN, "out of memory");
	/* a strict dump request: the kernel sends table 255 only, not a router's
	 * full table */
	if ((r = nl_connect(q, NETLINK_ROUTE)) == 0 &&
	    setsockopt(nl_socket_get_fd(q), SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
		       sizeof(one)) == 0 &&
	    (r = nl_socket_modify_cb(q, NL_CB_VALID, NL_CB_CUSTOM, on_route, &d)) == 0 &&
	    (r = nl_send_simple(q, RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm))) >= 0)
		r = nl_recvmsgs_default(q);
	nl_socket_free(q);
	if (r < 0) {
		free(d.v);
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
				   "cannot read the local routing table: %s", nl_geterror(r));
	}
	/* one route per prefix: the kernel's lookup takes the first alias it lists */
	qsort(d.v, d.n, sizeof(*d.v), rt_cmp);
	for (i = k = 0; i < d.n; i++)
		if (!k || rt_cmp(&d.v[k - 1], &d.v[i]))
			d.v[k++] = d.v[i];
	*out = d.v;
	*n = k;
	return 0;
}

static void rt_key(struct bpfipt_rt_key *k, const struct cp_rt *r)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = r->plen;
	memcpy(k->addr, &r->addr, 4);
}

int cp_rtlocal_write(int fd, const struct cp_rt *v, unsigned int n, struct ipt_err *err)
{
	struct bpfipt_rt_key k, next, *prev = NULL;
	unsigned int i;

	if (n > BPFIPT_RTLOCAL_MAX)
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
				   "the local routing table has %u routes, -m addrtype handles "
				   "%u", n, BPFIPT_RTLOCAL_MAX);
	/* first what is there and should not be (the new routes never go missing) */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct cp_rt want = { .plen = next.prefixlen };

		k = next;
		prev = &k;
		memcpy(&want.addr, next.addr, 4);
		if (!bsearch(&want, v, n, sizeof(*v), rt_cmp) && bpf_map_delete_elem(fd, &next))
			return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
					   "cannot write bpfipt_rtlocal: %s", strerror(errno));
	}
	for (i = 0; i < n; i++) {
		struct bpfipt_rt_val val = { .type = v[i].type, .ifindex = v[i].ifindex };

		rt_key(&k, &v[i]);
		if (bpf_map_update_elem(fd, &k, &val, BPF_ANY))
			return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
					   "cannot write bpfipt_rtlocal: %s", strerror(errno));
	}
	return 0;
}
