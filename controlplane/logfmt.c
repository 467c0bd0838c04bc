// SPDX-License-Identifier: GPL-2.0
/* The kernel's LOG line for a data-plane LOG event: see logfmt.h. */
#include "logfmt.h"

#include <arpa/inet.h>
#include <linux/netfilter/xt_LOG.h>
#include <netinet/in.h>
#include <string.h>

#define LO_IFINDEX 1

/* The captured packet, read as the kernel's skb_header_pointer() reads an skb:
 * a header is there when all its bytes are. len is the IP datagram's length
 * (what ip_rcv leaves of the frame: padding trimmed). */
struct view {
	const __u8 *b;
	__u32 cap, len;
};

static const __u8 *hp(const struct view *v, __u32 off, __u32 n)
{
	if (off + n > v->len || off + n > v->cap)
		return NULL;
	return v->b + off;
}

/* Bytes from off to the end of the datagram (the kernel's skb->len - off). */
static __u32 rest(const struct view *v, __u32 off)
{
	return off < v->len ? v->len - off : 0;
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static void hex_opt(struct strbuf *sb, const __u8 *p, __u32 n)
{
	sb_adds(sb, "OPT (");
	for (__u32 i = 0; i < n; i++)
		sb_addf(sb, "%02X", p[i]);
	sb_adds(sb, ") ");
}

static void addr(struct strbuf *sb, const char *name, const __u8 *p)
{
	sb_addf(sb, "%s=%u.%u.%u.%u ", name, p[0], p[1], p[2], p[3]);
}

/* Returns nonzero when the header was cut short (the kernel then ends the dump). */
static int dump_tcp(struct strbuf *sb, const struct view *v, __u32 off, bool frag,
		    unsigned int flags)
{
	static const char *const names[8] = { "FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR" };
	const __u8 *th;

	sb_adds(sb, "PROTO=TCP ");
	if (frag)
		return 0;
	th = hp(v, off, 20);
	if (!th) {
		sb_addf(sb, "INCOMPLETE [%u bytes] ", rest(v, off));
		return 1;
	}
	sb_addf(sb, "SPT=%u DPT=%u ", get16(th), get16(th + 2));
	if (flags & XT_LOG_TCPSEQ)
		sb_addf(sb, "SEQ=%u ACK=%u ", get32(th + 4), get32(th + 8));
	sb_addf(sb, "WINDOW=%u ", get16(th + 14));
	sb_addf(sb, "RES=0x%02x ", (th[12] & 0x0f) << 2);
	for (int i = 7; i >= 0; i--)
		if (th[13] & (1u << i))
			sb_addf(sb, "%s ", names[i]);
	sb_addf(sb, "URGP=%u ", get16(th + 18));
	if ((flags & XT_LOG_TCPOPT) && (th[12] >> 4) * 4u > 20) {
		__u32 n = (th[12] >> 4) * 4u - 20;
		const __u8 *op = hp(v, off + 20, n);

		if (!op) {
			sb_adds(sb, "OPT (TRUNCATED)");
			return 1;
		}
		hex_opt(sb, op, n);
	}
	return 0;
}

static int dump_udp(struct strbuf *sb, const struct view *v, __u32 off, bool frag, int proto)
{
	const __u8 *uh;

	sb_adds(sb, proto == IPPROTO_UDP ? "PROTO=UDP " : "PROTO=UDPLITE ");
	if (frag)
		return 0;
	uh = hp(v, off, 8);
	if (!uh) {
		sb_addf(sb, "INCOMPLETE [%u bytes] ", rest(v, off));
		return 1;
	}
	sb_addf(sb, "SPT=%u DPT=%u LEN=%u ", get16(uh), get16(uh + 2), get16(uh + 4));
	return 0;
}

/* Bytes an ICMP message of each type must have for the kernel to decode it. */
static const __u8 icmp_required[19] = {
	[0] = 4, [3] = 8 + 20, [4] = 8 + 20, [5] = 8 + 20, [8] = 4, [11] = 8 + 20,
	[12] = 8 + 20, [13] = 20, [14] = 20, [17] = 12, [18] = 12,
};

static void dump_ip(struct strbuf *sb, const struct view *v, __u32 iphoff,
		    const struct bpfipt_log_event *ev);

static void dump_icmp(struct strbuf *sb, const struct view *v, __u32 iphoff, __u32 off,
		      bool frag, const struct bpfipt_log_event *ev)
{
	const __u8 *ich;

	sb_adds(sb, "PROTO=ICMP ");
	if (frag)
		return;
	ich = hp(v, off, 8);
	if (!ich) {
		sb_addf(sb, "INCOMPLETE [%u bytes] ", rest(v, off));
		return;
	}
	sb_addf(sb, "TYPE=%u CODE=%u ", ich[0], ich[1]);
	if (ich[0] <= 18 && icmp_required[ich[0]] && rest(v, off) < icmp_required[ich[0]]) {
		sb_addf(sb, "INCOMPLETE [%u bytes] ", rest(v, off));
		return;
	}
	switch (ich[0]) {
	case 0:		/* echo reply */
	case 8:		/* echo request */
		sb_addf(sb, "ID=%u SEQ=%u ", get16(ich + 4), get16(ich + 6));
		break;
	case 12:	/* parameter problem */
		sb_addf(sb, "PARAMETER=%u ", ich[4]);
		break;
	case 5:		/* redirect */
		addr(sb, "GATEWAY", ich + 4);
		/* fall through */
	case 3:		/* destination unreachable */
	case 4:		/* source quench */
	case 11:	/* time exceeded */
		if (!iphoff) {	/* the quoted packet, one level only */
			sb_adds(sb, "[");
			dump_ip(sb, v, off + 8, ev);
			sb_adds(sb, "] ");
		}
		if (ich[0] == 3 && ich[1] == 4)
			sb_addf(sb, "MTU=%u ", get16(ich + 6));
		break;
	}
}

static void dump_ip(struct strbuf *sb, const struct view *v, __u32 iphoff,
		    const struct bpfipt_log_event *ev)
{
	const __u8 *ih = hp(v, iphoff, 20), *p;
	unsigned int flags = ev->flags;
	__u32 ihl, off, fo;
	__u8 ttl;
	bool frag;

	if (!ih) {
		sb_adds(sb, "TRUNCATED");
		return;
	}
	addr(sb, "SRC", ih + 12);
	addr(sb, "DST", ih + 16);
	ttl = ih[8];
	/* FORWARD: the kernel decrements the TTL before the hook (ip_forward) */
	if (!iphoff && ev->chain == BPFIPT_FORWARD && ttl > 0)
		ttl--;
	sb_addf(sb, "LEN=%u TOS=0x%02X PREC=0x%02X TTL=%u ID=%u ", get16(ih + 2),
		ih[1] & 0x1e, ih[1] & 0xe0, ttl, get16(ih + 4));
	fo = get16(ih + 6);
	if (fo & 0x8000)
		sb_adds(sb, "CE ");
	if (fo & 0x4000)
		sb_adds(sb, "DF ");
	if (fo & 0x2000)
		sb_adds(sb, "MF ");
	if (fo & 0x1fff)
		sb_addf(sb, "FRAG:%u ", fo & 0x1fff);
	frag = fo & 0x1fff;
	ihl = (ih[0] & 0x0f) * 4u;
	if ((flags & XT_LOG_IPOPT) && ihl > 20) {
		p = hp(v, iphoff + 20, ihl - 20);
		if (!p) {
			sb_adds(sb, "TRUNCATED");
			return;
		}
		hex_opt(sb, p, ihl - 20);
	}
	off = iphoff + ihl;
	switch (ih[9]) {
	case IPPROTO_TCP:
		if (dump_tcp(sb, v, off, frag, flags))
			return;
		break;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		if (dump_udp(sb, v, off, frag, ih[9]))
			return;
		break;
	case IPPROTO_ICMP:
		dump_icmp(sb, v, iphoff, off, frag, ev);
		break;
	case IPPROTO_AH:
	case IPPROTO_ESP:
		sb_adds(sb, ih[9] == IPPROTO_AH ? "PROTO=AH " : "PROTO=ESP ");
		if (frag)
			break;
		/* the SPI: after next header, length and reserved in AH, first in ESP */
		p = hp(v, off, ih[9] == IPPROTO_AH ? 12 : 8);
		if (!p) {
			sb_addf(sb, "INCOMPLETE [%u bytes] ", rest(v, off));
			break;
		}
		sb_addf(sb, "SPI=0x%x ", get32(ih[9] == IPPROTO_AH ? p + 4 : p));
		break;
	default:
		sb_addf(sb, "PROTO=%u ", ih[9]);
	}
	if ((flags & XT_LOG_UID) && !iphoff && ev->has_uid)
		sb_addf(sb, "UID=%u GID=%u ", ev->uid, ev->gid);
	if (!iphoff && ev->mark)
		sb_addf(sb, "MARK=0x%x ", ev->mark);
}

/* ---- IPv6: nf_log_syslog.c's dump_ipv6_packet() ---- */

/* skb->len - off as the kernel computes it: unsigned, it wraps when a header
 * length led past the end. */
static __u32 rest6(const struct view *v, __u32 off)
{
	return v->len - off;
}

/* %pI6: eight groups of four hex digits, nothing compressed */
static void addr6(struct strbuf *sb, const char *name, const __u8 *p)
{
	sb_addf(sb, "%s=", name);
	for (int i = 0; i < 16; i += 2)
		sb_addf(sb, "%02x%02x%s", p[i], p[i + 1], i < 14 ? ":" : " ");
}

static void dump_ip6(struct strbuf *sb, const struct view *v, __u32 ip6hoff,
		     const struct bpfipt_log_event *ev);

static void dump_icmp6(struct strbuf *sb, const struct view *v, __u32 ip6hoff, __u32 off,
		       bool frag, const struct bpfipt_log_event *ev)
{
	const __u8 *ic;

	sb_adds(sb, "PROTO=ICMPv6 ");
	if (frag)
		return;
	ic = hp(v, off, 8);
	if (!ic) {
		sb_addf(sb, "INCOMPLETE [%u bytes] ", rest6(v, off));
		return;
	}
	sb_addf(sb, "TYPE=%u CODE=%u ", ic[0], ic[1]);
	switch (ic[0]) {
	case 128:	/* echo request */
	case 129:	/* echo reply */
		sb_addf(sb, "ID=%u SEQ=%u ", get16(ic + 4), get16(ic + 6));
		break;
	case 4:		/* parameter problem */
		sb_addf(sb, "POINTER=%08x ", get32(ic + 4));
		/* fall through */
	case 1:		/* destination unreachable */
	case 2:		/* packet too big */
	case 3:		/* time exceeded */
		if (ip6hoff == 0) {	/* the quoted packet, one level only */
			sb_adds(sb, "[");
			dump_ip6(sb, v, off + 8, ev);
			sb_adds(sb, "] ");
		}
		if (ic[0] == 2)
			sb_addf(sb, "MTU=%u ", get32(ic + 4));
		break;
	}
}

static void dump_ip6(struct strbuf *sb, const struct view *v, __u32 ip6hoff,
		     const struct bpfipt_log_event *ev)
{
	const __u8 *ih = hp(v, ip6hoff, 40), *h, *p;
	bool ipopt = ev->flags & XT_LOG_IPOPT, frag = false;
	unsigned int flags = ev->flags;
	__u32 ptr, hdrlen, w;
	__u8 nh, hl;

	if (!ih) {
		sb_adds(sb, "TRUNCATED");
		return;
	}
	addr6(sb, "SRC", ih + 8);
	addr6(sb, "DST", ih + 24);
	w = get32(ih);
	hl = ih[7];
	/* FORWARD: ip6_forward() decrements the hop limit before the hook */
	if (!ip6hoff && ev->chain == BPFIPT_FORWARD && hl > 0)
		hl--;
	sb_addf(sb, "LEN=%u TC=%u HOPLIMIT=%u FLOWLBL=%u ", get16(ih + 4) + 40u,
		(w & 0x0ff00000) >> 20, hl, w & 0x000fffff);
	ptr = ip6hoff + 40;
	nh = ih[6];
	/* nf_ip6_ext_hdr() but NONE */
	while (nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_FRAGMENT ||
	       nh == IPPROTO_ESP || nh == IPPROTO_AH || nh == IPPROTO_DSTOPTS) {
		h = hp(v, ptr, 2);
		if (!h) {
			sb_adds(sb, "TRUNCATED");
			return;
		}
		if (ipopt)
			sb_adds(sb, "OPT ( ");
		switch (nh) {
		case IPPROTO_FRAGMENT:
			sb_adds(sb, "FRAG:");
			p = hp(v, ptr, 8);
			if (!p) {
				sb_adds(sb, "TRUNCATED ");
				return;
			}
			sb_addf(sb, "%u ", get16(p + 2) & 0xfff8);
			if (p[3] & 1)
				sb_adds(sb, "INCOMPLETE ");
			sb_addf(sb, "ID:%08x ", get32(p + 4));
			if (get16(p + 2) & 0xfff8)
				frag = true;
			hdrlen = 8;
			break;
		case IPPROTO_DSTOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_HOPOPTS:
			if (frag) {
				if (ipopt)
					sb_adds(sb, ")");
				return;
			}
			hdrlen = (h[1] + 1u) << 3;
			break;
		case IPPROTO_AH:
			if (ipopt) {
				sb_adds(sb, "AH ");
				if (frag) {
					sb_adds(sb, ")");
					return;
				}
				p = hp(v, ptr, 12);
				if (!p) {
					sb_addf(sb, "INCOMPLETE [%u bytes] )", rest6(v, ptr));
					return;
				}
				sb_addf(sb, "SPI=0x%x ", get32(p + 4));
			}
			hdrlen = (h[1] + 2u) << 2;
			break;
		default:	/* ESP: the end of what can be read */
			if (ipopt) {
				sb_adds(sb, "ESP ");
				if (frag) {
					sb_adds(sb, ")");
					return;
				}
				p = hp(v, ptr, 8);
				if (!p) {
					sb_addf(sb, "INCOMPLETE [%u bytes] )", rest6(v, ptr));
					return;
				}
				sb_addf(sb, "SPI=0x%x )", get32(p));
			}
			return;
		}
		if (ipopt)
			sb_adds(sb, ") ");
		nh = h[0];
		ptr += hdrlen;
	}
	switch (nh) {
	case IPPROTO_TCP:
		if (dump_tcp(sb, v, ptr, frag, flags))
			return;
		break;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		if (dump_udp(sb, v, ptr, frag, nh))
			return;
		break;
	case IPPROTO_ICMPV6:
		dump_icmp6(sb, v, ip6hoff, ptr, frag, ev);
		break;
	default:
		sb_addf(sb, "PROTO=%u ", nh);
	}
	if ((flags & XT_LOG_UID) && !ip6hoff && ev->has_uid)
		sb_addf(sb, "UID=%u GID=%u ", ev->uid, ev->gid);
	if (!ip6hoff && ev->mark)
		sb_addf(sb, "MARK=0x%x ", ev->mark);
}

static void mac_bytes(struct strbuf *sb, const __u8 *p, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sb_addf(sb, i ? ":%02x" : "%02x", p[i]);
}

void lf_format(struct strbuf *sb, const struct bpfipt_log_event *ev, const char *in,
	       const char *out)
{
	struct view v = { .b = ev->pkt, .cap = ev->caplen, .len = ev->len };
	char prefix[BPFIPT_LOG_PREFIX + 1];
	bool v6;

	if (v.cap > sizeof(ev->pkt))
		v.cap = sizeof(ev->pkt);
	v6 = v.cap >= 1 && (ev->pkt[0] >> 4) == 6;
	/* ip_rcv / ipv6_rcv trim the frame to the datagram: Ethernet padding is not
	 * packet */
	if (!v6 && v.cap >= 4 && get16(ev->pkt + 2) >= 20 && get16(ev->pkt + 2) < v.len)
		v.len = get16(ev->pkt + 2);
	if (v6 && v.cap >= 6 && get16(ev->pkt + 4) && get16(ev->pkt + 4) + 40u < v.len)
		v.len = get16(ev->pkt + 4) + 40u;
	memcpy(prefix, ev->prefix, BPFIPT_LOG_PREFIX);
	prefix[BPFIPT_LOG_PREFIX] = '\0';
	sb_addf(sb, "%sIN=%s OUT=%s ", prefix, in, out);
	/* the link-layer header: in INPUT and FORWARD (the kernel's `in`) */
	if (ev->chain != BPFIPT_OUTPUT) {
		if ((ev->flags & XT_LOG_MACDECODE) && ev->maclen == 14 && ev->iif != LO_IFINDEX) {
			sb_adds(sb, "MACSRC=");
			mac_bytes(sb, ev->mac + 6, 6);
			sb_adds(sb, " MACDST=");
			mac_bytes(sb, ev->mac, 6);
			sb_addf(sb, " MACPROTO=%04x ", get16(ev->mac + 12));
		} else {
			sb_adds(sb, "MAC=");
			mac_bytes(sb, ev->mac, ev->maclen <= 14 ? ev->maclen : 14);
			sb_adds(sb, " ");
		}
	}
	if (v6)
		dump_ip6(sb, &v, 0, ev);
	else
		dump_ip(sb, &v, 0, ev);
}
