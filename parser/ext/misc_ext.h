/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Payloads of the other extensions (iprange, length, mark, mac, limit, comment and
 * the targets REJECT, LOG, NFLOG, TCPMSS), for their parser files and for the
 * control plane that compiles them (controlplane/compile.c).
 *
 * Byte order and meaning are given per structure; the values follow the kernel's
 * xt_* / ipt_* structures so the meaning is the kernel's.
 */
#ifndef BPFIPT_MISC_EXT_H
#define BPFIPT_MISC_EXT_H

#include <linux/types.h>
#include "ext.h"

/* -m iprange (xt_iprange revision 1): addr in [min, max], inverted by *_INV */
enum {
	IPR_SRC = 0x01,
	IPR_DST = 0x02,
	IPR_SRC_INV = 0x10,
	IPR_DST_INV = 0x20,
};

struct iprange_data {
	__u32 src_min, src_max;	/* host byte order */
	__u32 dst_min, dst_max;
	__u8 flags;		/* IPR_* */
	__u8 pad[3];
};

/* The payload of -m iprange in an IPv6 table (bpf-ip6tables): the IPv4 payload
 * (flags; its addresses stay 0) followed by the 16-byte bounds, network order.
 * The IPv4 payload is unchanged (its snapshots read as before). */
struct iprange6_data {
	struct iprange_data v4;
	union ipt_addr src_min, src_max, dst_min, dst_max;
};

/* -m length: min <= IP total length <= max, xor invert */
struct length_data {
	__u16 min, max;
	__u8 invert;
	__u8 pad[3];
};

/* -m mark: ((skb mark & mask) == mark) xor invert */
struct mark_data {
	__u32 mark, mask;
	__u8 invert;
	__u8 pad[3];
};

/* -m mac: source MAC == addr, xor invert (never matches without a MAC header) */
struct mac_data {
	__u8 addr[6];
	__u8 invert;
	__u8 pad;
};

/* -m limit (struct xt_rateinfo's user part) */
#define LIMIT_SCALE 10000u	/* XT_LIMIT_SCALE */
#define LIMIT_BURST_DEFAULT 5u

struct limit_data {
	__u32 avg;	/* period in 1/LIMIT_SCALE seconds */
	__u32 burst;
};

/* -m addrtype (xt_addrtype_info_v1): masks of 1 << RTN_* type numbers */
enum {
	ADDRTYPE_INVERT_SOURCE = 0x1,
	ADDRTYPE_INVERT_DEST = 0x2,
	ADDRTYPE_LIMIT_IFACE_IN = 0x4,
	ADDRTYPE_LIMIT_IFACE_OUT = 0x8,
};

struct addrtype_data {
	__u16 source, dest;	/* 0: that address is not tested */
	__u32 flags;		/* ADDRTYPE_* */
};

/* -m recent (xt_recent_mtinfo_v1); check_set: the kernel's XT_RECENT_* bits */
#define RECENT_NAME_LEN 200	/* XT_RECENT_NAME_LEN, NUL included */
enum {
	RECENT_CHECK = 1 << 0,
	RECENT_SET = 1 << 1,
	RECENT_UPDATE = 1 << 2,
	RECENT_REMOVE = 1 << 3,
	RECENT_TTL = 1 << 4,
	RECENT_REAP = 1 << 5,
};

struct recent_data {
	__u32 seconds, hit_count;
	__u8 check_set;		/* RECENT_* */
	__u8 invert;
	__u8 side;		/* 0: --rsource, 1: --rdest */
	__u8 pad;
	__be32 mask;		/* --mask, network order */
	char name[RECENT_NAME_LEN];
};

/* -m recent in an IPv6 table: the IPv4 payload (mask unused, 0) and the
 * 16-byte --mask. */
struct recent6_data {
	struct recent_data v4;
	union ipt_addr mask;
};

/* -m comment */
#define COMMENT_SIZE 256	/* XT_MAX_COMMENT_LEN */

struct comment_data {
	char comment[COMMENT_SIZE];
};

/* -j REJECT: enum ipt_reject_with of <linux/netfilter_ipv4/ipt_REJECT.h> */
enum {
	REJ_NET_UNREACH = 0,
	REJ_HOST_UNREACH = 1,
	REJ_PROT_UNREACH = 2,
	REJ_PORT_UNREACH = 3,
	REJ_NET_PROHIB = 5,
	REJ_HOST_PROHIB = 6,
	REJ_TCP_RESET = 7,
	REJ_ADMIN_PROHIB = 8,
};

/* family 6 (bpf-ip6tables): enum ip6t_reject_with of
 * <linux/netfilter_ipv6/ip6t_REJECT.h> */
enum {
	REJ6_NO_ROUTE = 0,
	REJ6_ADM_PROHIBITED = 1,
	REJ6_NOT_NEIGHBOUR = 2,
	REJ6_ADDR_UNREACH = 3,
	REJ6_PORT_UNREACH = 4,
	REJ6_ECHOREPLY = 5,
	REJ6_TCP_RESET = 6,
	REJ6_POLICY_FAIL = 7,
	REJ6_REJECT_ROUTE = 8,
};

struct reject_data {
	__u32 with;	/* REJ_* (IPv4 table), REJ6_* (IPv6 table) */
};

/* -j LOG */
#define LOG_PREFIX_SIZE 30
#define LOG_LEVEL_DEFAULT 4	/* warning */
#define LOG_FLAGS_MASK 0x2f

struct log_data {
	__u8 level;
	__u8 logflags;		/* XT_LOG_* bits */
	char prefix[LOG_PREFIX_SIZE];
};

/* -j NFLOG */
#define NFLOG_PREFIX_SIZE 64
#define NFLOG_F_COPY_LEN 0x1

struct nflog_data {
	__u32 len;
	__u16 group;
	__u16 threshold;
	__u16 flags;		/* NFLOG_F_* */
	__u16 pad;
	char prefix[NFLOG_PREFIX_SIZE];
};

/* -j TCPMSS */
#define TCPMSS_CLAMP_PMTU 0xffff

struct tcpmss_data {
	__u16 mss;		/* or TCPMSS_CLAMP_PMTU */
};

#endif
