// SPDX-License-Identifier: GPL-2.0
/* Our tc filters on many interfaces over one netlink socket: see tcfind.h.
 *
 * The questions are bpf_tc_query()'s (RTM_GETTFILTER of one handle, priority
 * and protocol on a hook; the kernel answers each without the RTNL lock), sent
 * CHUNK to a datagram: the kernel answers them in order while the sendmsg()
 * runs, each answer a datagram of its own queued on the socket (a filter, or
 * an error: no qdisc, no such filter), told apart by sequence number. A chunk's
 * answers fit the socket's default receive buffer (a filter's answer takes a
 * page), so none is dropped. A dump of each hook instead took two datagrams and
 * the lock a hook, no faster than the separate sockets. */
#include "tcfind.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#define CHUNK 16

/* RTM_GETTFILTER with its TCA_KIND "bpf", as bpf_tc_query() asks */
struct ask {
	struct nlmsghdr h;
	struct tcmsg t;
	struct nlattr kind;
	char bpf[4];
};

/* An answer to question seq (1 + 2 * link + hook): the filter's program id in
 * out[seq - 1] when it is a cls_bpf filter with options. */
static void on_answer(const struct nlmsghdr *h, int nq, struct cp_tc_found *out)
{
	struct nlattr *tb[TCA_MAX + 1], *ob[TCA_BPF_MAX + 1];
	const struct tcmsg *t;
	int q = (int)h->nlmsg_seq - 1;

	if (q < 0 || q >= nq || h->nlmsg_type != RTM_NEWTFILTER ||
	    nlmsg_parse((struct nlmsghdr *)h, sizeof(*t), tb, TCA_MAX, NULL) < 0 ||
	    !tb[TCA_OPTIONS] || nla_parse_nested(ob, TCA_BPF_MAX, tb[TCA_OPTIONS], NULL) < 0 ||
	    !ob[TCA_BPF_ID])
		return;
	t = nlmsg_data(h);
	out[q].id = nla_get_u32(ob[TCA_BPF_ID]);
	out[q].handle = t->tcm_handle;
}

/* Questions q[0..m) (indexes into out) for handle: sent, every answer read. */
static int ask_chunk(int fd, const int *ifindex, __u16 prio, __u32 handle, const int *q, int m,
		     struct cp_tc_found *out, int nq)
{
	static const __u32 mins[2] = { TC_H_MIN_INGRESS, TC_H_MIN_EGRESS };
	struct ask a[CHUNK];
	char buf[16384];
	int i, left = m;

	memset(a, 0, m * sizeof(a[0]));
	for (i = 0; i < m; i++) {
		a[i].h.nlmsg_len = sizeof(a[i]);
		a[i].h.nlmsg_type = RTM_GETTFILTER;
		a[i].h.nlmsg_flags = NLM_F_REQUEST;
		a[i].h.nlmsg_seq = q[i] + 1;
		a[i].t.tcm_family = AF_UNSPEC;
		a[i].t.tcm_ifindex = ifindex[q[i] / 2];
		a[i].t.tcm_parent = TC_H_MAKE(TC_H_CLSACT, mins[q[i] % 2]);
		a[i].t.tcm_handle = handle;
		a[i].t.tcm_info = TC_H_MAKE((__u32)prio << 16, htons(ETH_P_ALL));
		a[i].kind.nla_len = NLA_HDRLEN + 4;
		a[i].kind.nla_type = TCA_KIND;
		memcpy(a[i].bpf, "bpf", 4);
	}
	if (send(fd, a, m * sizeof(a[0]), 0) != (ssize_t)(m * sizeof(a[0])))
		return -1;
	while (left > 0) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int rem = (int)len;

		if (len <= 0)
			return -1;	/* ENOBUFS (an answer dropped), or no answer */
		for (; nlmsg_ok(h, rem); h = nlmsg_next(h, &rem)) {
			if (h->nlmsg_type == NLMSG_ERROR)
				left--;	/* not there: no qdisc, filter or link */
			else if (h->nlmsg_type == RTM_NEWTFILTER)
				left--, on_answer(h, nq, out);
		}
	}
	return 0;
}

int cp_tc_find(const int *ifindex, int n, __u16 prio, const __u32 *handles, int nh,
	       struct cp_tc_found *out)
{
	struct nl_sock *sk = nl_socket_alloc();
	int q[CHUNK], k, i, m, r = -NLE_NOMEM;

	if (!sk)
		goto out;
	memset(out, 0, 2 * n * sizeof(*out));
	if ((r = nl_connect(sk, NETLINK_ROUTE)) < 0)
		goto out;
	/* room for a chunk's answers where the default is small (best effort);
	 * an answer that never comes fails the search, not the command (its
	 * caller asks one by one) */
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVBUF, &(int){ 1 << 18 }, sizeof(int));
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = 2 }, sizeof(struct timeval));
	/* each handle in turn, for the hooks where none before it was found */
	for (k = 0; k < nh; k++)
		for (i = m = 0; i <= 2 * n; i++) {
			if (i < 2 * n && !out[i].id)
				q[m++] = i;
			if (m == CHUNK || (i == 2 * n && m)) {
				if (ask_chunk(nl_socket_get_fd(sk), ifindex, prio, handles[k], q, m,
					      out, 2 * n)) {
					r = -NLE_FAILURE;
					goto out;
				}
				m = 0;
			}
		}
	r = 0;
out:
	nl_socket_free(sk);
	return r;
}
