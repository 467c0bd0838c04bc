// SPDX-License-Identifier: GPL-2.0
/* The xdp-features of a device over generic netlink: see xdpfeat.h. Plain
 * netlink sockets: two requests (the family's id, once per process, then the
 * device), no library of their own. */
#include "xdpfeat.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* include/uapi/linux/netdev.h (Linux 6.3), not in every distribution's headers */
#define NETDEV_FAMILY	"netdev"
#define NETDEV_CMD_DEV_GET		1
#define NETDEV_A_DEV_IFINDEX		1
#define NETDEV_A_DEV_XDP_FEATURES	3

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[64];
};

static void put_attr(struct req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send r on a fresh socket and find attribute want in the answer: its payload
 * (up to len bytes) in out. 0, or -errno (-ENOENT: answered without it). */
static int ask(struct req *r, __u16 want, void *out, size_t len)
{
	union { struct nlmsghdr n; char b[4096]; } buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), res = -ENOENT;
	ssize_t got;

	if (fd < 0)
		return -errno;
	r->n.nlmsg_flags = NLM_F_REQUEST;
	r->n.nlmsg_seq = 1;
	if (sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		res = -errno;
		goto out;
	}
	got = recv(fd, &buf, sizeof(buf), 0);
	if (got < 0) {
		res = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = &buf.n; NLMSG_OK(h, (size_t)got); h = NLMSG_NEXT(h, got)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			res = e->error ? e->error : -ENOENT;
			break;
		}
		if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
			continue;
		char *p = (char *)NLMSG_DATA(h) + GENL_HDRLEN, *end = (char *)h + h->nlmsg_len;

		while (p + NLA_HDRLEN <= end) {
			const struct nlattr *a = (const struct nlattr *)p;

			if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
				break;
			if ((a->nla_type & NLA_TYPE_MASK) == want) {
				size_t n = a->nla_len - NLA_HDRLEN;

				memset(out, 0, len);
				memcpy(out, p + NLA_HDRLEN, n < len ? n : len);
				res = 0;
				goto out;
			}
			p += NLA_ALIGN(a->nla_len);
		}
	}
out:
	close(fd);
	return res;
}

/* The netdev family's id: once per process (0: not asked yet). */
static int family_id(void)
{
	static int id;
	struct req r = { .n = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = GENL_ID_CTRL },
			 .g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
	__u16 v;
	int e;

	if (id)
		return id;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY, sizeof(NETDEV_FAMILY));
	e = ask(&r, CTRL_ATTR_FAMILY_ID, &v, sizeof(v));
	/* an unknown family: ENOENT from the controller */
	id = e == -ENOENT ? -EOPNOTSUPP : e ? e : v;
	return id;
}

int cp_xdp_features(int ifindex, __u64 *f)
{
	int fam = family_id();
	struct req r;
	__u32 idx = (__u32)ifindex;

	*f = 0;
	if (fam < 0)
		return fam;
	memset(&r, 0, sizeof(r));
	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = (__u16)fam;
	r.g.cmd = NETDEV_CMD_DEV_GET;
	r.g.version = 1;
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	return ask(&r, NETDEV_A_DEV_XDP_FEATURES, f, sizeof(*f));
}
