// SPDX-License-Identifier: GPL-2.0
/* The link watcher: see linkwatch.h. */
#include "linkwatch.h"
#include "rtlocal.h"

#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/rtnl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The interface set: "index:name:master" of every link, from rtnetlink (a
 * link joining a bridge or bond changes where it is judged). */
static char *link_set(struct nl_sock *q)
{
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	size_t len = 1, off = 0;
	char *s;

	if (rtnl_link_alloc_cache(q, AF_UNSPEC, &cache))
		return strdup("?");
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o))
		len += IF_NAMESIZE + 24;
	s = malloc(len);
	if (!s)
		abort();
	s[0] = '\0';
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *name = rtnl_link_get_name(l);

		off += (size_t)snprintf(s + off, len - off, "%d:%s:%d ", rtnl_link_get_ifindex(l),
					name ? name : "", rtnl_link_get_master(l));
	}
	nl_cache_free(cache);
	return s;
}

/* The local routing table (-m addrtype's view of the addresses), as text. */
static char *local_set(void)
{
	struct cp_rt *v = NULL;
	unsigned int n = 0, i;
	struct ipt_err err;
	size_t off = 0;
	char *s;

	if (cp_rtlocal_read(&v, &n, &err))
		return strdup("?");
	s = malloc((size_t)n * 48 + 1);
	if (!s)
		abort();
	s[0] = '\0';
	for (i = 0; i < n; i++)
		off += (size_t)sprintf(s + off, "%08x/%u:%u:%u ", v[i].addr, v[i].plen, v[i].type,
				       v[i].ifindex);
	free(v);
	return s;
}

struct watch {
	bool seen;		/* a link event arrived since the last check */
	char what[IF_NAMESIZE + 16];
};

static void on_link(struct nl_object *obj, void *arg)
{
	struct watch *w = arg;
	struct rtnl_link *l = (struct rtnl_link *)obj;
	const char *name = rtnl_link_get_name(l);

	w->seen = true;
	snprintf(w->what, sizeof(w->what), "link %s", name ? name : "?");
}

static int on_msg(struct nl_msg *msg, void *arg)
{
	int type = nlmsg_hdr(msg)->nlmsg_type;

	if (type == RTM_NEWLINK || type == RTM_DELLINK)
		nl_msg_parse(msg, on_link, arg);
	else if ((type == RTM_NEWROUTE || type == RTM_DELROUTE) &&
		 nlmsg_hdr(msg)->nlmsg_len >= NLMSG_LENGTH(sizeof(struct rtmsg)) &&
		 ((struct rtmsg *)nlmsg_data(nlmsg_hdr(msg)))->rtm_table == RT_TABLE_LOCAL)
		((struct watch *)arg)->seen = true;	/* only the local table matters */
	return NL_OK;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int cp_linkwatch_run(volatile sig_atomic_t *stop,
		     void (*fn)(void *arg, enum cp_watch_event ev, const char *why),
		     void *arg, struct ipt_err *err)
{
	struct watch w = { 0 };
	struct nl_sock *sk = nl_socket_alloc(), *q = nl_socket_alloc();
	long long last = 0, first = 0;
	char *set = NULL, *local = NULL;
	int r = 0;

	if (!sk || !q) {
		nl_socket_free(sk);
		nl_socket_free(q);
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN, "out of memory");
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, &w);
	if ((r = nl_connect(sk, NETLINK_ROUTE)) || (r = nl_connect(q, NETLINK_ROUTE)) ||
	    (r = nl_socket_add_memberships(sk, RTNLGRP_LINK, RTNLGRP_IPV4_ROUTE, 0)) ||
	    (r = nl_socket_set_nonblocking(sk))) {
		ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN, "cannot listen to rtnetlink: %s",
			    nl_geterror(r));
		r = -1;
		goto out;
	}
	/* subscribed before the first look: nothing between the two is missed */
	set = link_set(q);
	local = local_set();
	fn(arg, CP_WATCH_LINKS, "start");
	while (!*stop) {
		struct pollfd pfd = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
		long long t;
		char *now;

		if (poll(&pfd, 1, w.seen ? CP_LINKWATCH_SETTLE_MS : 1000) < 0) {
			if (errno == EINTR)
				continue;
			r = ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN, "poll: %s",
					strerror(errno));
			break;
		}
		t = now_ms();
		if (pfd.revents & POLLIN) {
			bool was = w.seen;
			int n = nl_recvmsgs_default(sk);

			/* an overrun socket lost events: look at the links anyway */
			if (n < 0 && n != -NLE_AGAIN)
				w.seen = true;
			if (w.seen && !was)
				first = t;
			last = t;
		}
		/* wait for a burst to settle, but never longer than half a second */
		if (w.seen && t - last < CP_LINKWATCH_SETTLE_MS && t - first < 500)
			continue;
		/* also once a second without events: nothing missed stays missed */
		w.seen = false;
		now = link_set(q);
		if (strcmp(now, set)) {
			free(set);
			set = now;
			fn(arg, CP_WATCH_LINKS, w.what[0] ? w.what : "links changed");
		} else {
			free(now);
		}
		now = local_set();
		if (strcmp(now, local)) {
			free(local);
			local = now;
			fn(arg, CP_WATCH_LOCAL, "local addresses changed");
		} else {
			free(now);
		}
		w.what[0] = '\0';
	}
out:
	free(set);
	free(local);
	nl_socket_free(sk);
	nl_socket_free(q);
	return r ? -1 : 0;
}
