/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Payloads of the protocol matches (tcp, udp, icmp, multiport, conntrack, state),
 * for the parser files and for the data plane that evaluates them.
 *
 * All ports are host byte order, ranges inclusive [lo, hi]; an absent port
 * option is the full range 0:65535. Addresses and masks are network order.
 * Bit values follow the kernel's xt_* structures so the meaning is the kernel's.
 */
#ifndef BPFIPT_PROTO_EXT_H
#define BPFIPT_PROTO_EXT_H

#include <linux/types.h>
#include "ext.h"

/* -m tcp (xt_tcp) */
enum {
	IPT_TCP_INV_SRCPT = 0x01,
	IPT_TCP_INV_DSTPT = 0x02,
	IPT_TCP_INV_FLAGS = 0x04,
	IPT_TCP_INV_OPTION = 0x08,
};

struct ipt_tcp_info {
	__u16 spts[2], dpts[2];
	__u8 option;		/* 0 = no --tcp-option */
	__u8 flg_mask, flg_cmp;	/* match when (flags & mask) == cmp */
	__u8 invflags;		/* IPT_TCP_INV_* */
};

/* -m udp (xt_udp) */
enum {
	IPT_UDP_INV_SRCPT = 0x01,
	IPT_UDP_INV_DSTPT = 0x02,
};

struct ipt_udp_info {
	__u16 spts[2], dpts[2];
	__u8 invflags;		/* IPT_UDP_INV_* */
	__u8 pad;
};

/* -m icmp (ipt_icmp): match type == type && code[0] <= code <= code[1] */
struct ipt_icmp_info {
	__u8 type;		/* 0xFF with codes 0:255 = any */
	__u8 code[2];
	__u8 invert;		/* 1 = ! --icmp-type */
};

/* -m multiport, revision 1 (xt_multiport_v1) */
#define IPT_MULTI_PORTS 15
enum {
	IPT_MPORT_SOURCE = 0,
	IPT_MPORT_DESTINATION = 1,
	IPT_MPORT_EITHER = 2,
};

struct ipt_multiport_info {
	__u8 flags;		/* IPT_MPORT_* */
	__u8 count;		/* used slots of ports[] */
	__u8 invert;
	__u8 pflags[IPT_MULTI_PORTS];	/* pflags[i]: ports[i]:ports[i+1] is a range */
	__u16 ports[IPT_MULTI_PORTS];
};

/* -m conntrack, revision 3 (xt_conntrack_mtinfo3). Flag and state/status bit
 * values are XT_CONNTRACK_* / IPS_* of <linux/netfilter/xt_conntrack.h>. */
struct ipt_conntrack_info {
	__be32 origsrc_addr, origsrc_mask, origdst_addr, origdst_mask;
	__be32 replsrc_addr, replsrc_mask, repldst_addr, repldst_mask;
	__u32 expires[2];		/* remaining lifetime range, seconds */
	__u16 origsrc_port[2], origdst_port[2], replsrc_port[2], repldst_port[2];
	__u16 l4proto;
	__u16 match_flags, invert_flags;	/* XT_CONNTRACK_* */
	__u16 state_mask;			/* XT_CONNTRACK_STATE_* bits */
	__u16 status_mask;			/* IPS_* bits */
	__u16 pad;
};

/* -m conntrack in an IPv6 table (bpf-ip6tables): the IPv4 payload (every field
 * but the four addresses, which stay 0) followed by the 16-byte addresses and
 * masks, network order, each address as written (not masked), as ip6tables
 * keeps them. The IPv4 payload is unchanged. */
enum { IPT_CT_ORIGSRC, IPT_CT_ORIGDST, IPT_CT_REPLSRC, IPT_CT_REPLDST, IPT_CT_NADDR };

struct ipt_conntrack6_info {
	struct ipt_conntrack_info c;
	union ipt_addr addr[IPT_CT_NADDR][2];	/* [IPT_CT_*][0: address, 1: mask] */
};

/* -m state: the conntrack states of -m conntrack --ctstate */
struct ipt_state_info {
	__u16 state_mask;	/* XT_CONNTRACK_STATE_* bits */
	__u8 invert;
	__u8 pad;
};

/* " spt:22" / " dpts:!1:1023" as tcp and udp print them (parser/ext/tcp.c) */
void ipt_print_ports(struct strbuf *sb, const char *name, const __u16 p[2], bool inv,
		     const char *proto, bool numeric);

#endif
