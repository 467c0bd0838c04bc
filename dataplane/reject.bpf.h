/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -j REJECT: the reply is generated in the data plane, as the kernel's
 * nf_send_unreach() / nf_send_reset() would build it, so the sender sees the
 * same error as with iptables. Included by dataplane/bpfipt.bpf.c.
 *
 * Everything is done at tc, on the skb: the rejected packet itself becomes the
 * reply (ICMP: 28 bytes of new IP + ICMP header in front of the quoted packet,
 * cut to 548 bytes; TCP: the header rewritten into a RST, the payload cut), and
 * is sent back: out of the interface it came in on (INPUT, FORWARD: bpf_redirect),
 * or, for a locally generated packet (OUTPUT), into the stack as if received on
 * the interface it was leaving by (BPF_F_INGRESS), where INPUT judges it as
 * iptables' loopback reply would be judged. XDP cannot grow a packet into an skb
 * nor send to the local stack: it passes a rejected packet to tc with a mark in
 * the XDP metadata (struct reject_meta), and tc ingress rejects it.
 *
 * No reply (the packet is only dropped), as in the kernel: for a non-first
 * fragment, an ICMP error, a broadcast or multicast destination, a source that
 * cannot be answered (0.0.0.0, broadcast, multicast), a TCP RST, tcp-reset for a
 * non-TCP packet; also (documented limits) for a TCP packet with IP options asked
 * to be reset, and when a helper fails. Replies are not rate limited (Linux
 * limits ICMP errors per destination: icmp_ratelimit).
 *
 * IPv6 (ip6t_REJECT: nf_send_unreach6() -> icmpv6_send(), nf_send_reset6()):
 * the reply is IPv6 + ICMPv6 destination unreachable (the code of
 * --reject-with) quoting the packet from its IPv6 header, as much as fits in the
 * minimum MTU (1280 - 40 - 8 = 1232 bytes), the checksum over the pseudo-header;
 * or a TCP RST (20 bytes, no options, seq/ack as IPv4's). Hop limit 64 (the
 * default of the route the kernel's reply takes), traffic class and flow label
 * 0 (the kernel's icmpv6_send() puts an automatic flow label: a hash, not
 * reproducible; documented). No reply, as the kernel: an ICMPv6 error (type <
 * 128) or an ICMPv6 header cut short (is_ineligible), a multicast destination
 * or a packet not for this host (PACKET_HOST), an unspecified or multicast
 * source, a fragment (the kernel checks the transport checksum first,
 * reject6_csum_ok / nf_reject_ip6_tcphdr_get: a fragment never has the
 * datagram's), an extension-header chain cut short, --reject-with echo-reply
 * (the kernel does nothing); tcp-reset: a source or destination that is not
 * unicast (::, multicast, IPv4-mapped), a RST, a header shorter than 20 bytes.
 * The transport checksum itself is not verified (documented).
 */
#ifndef BPFIPT_REJECT_BPF_H
#define BPFIPT_REJECT_BPF_H

#define BPFIPT_REJECT_IPV6	1	/* IPv6 packets are answered (bpfipt.bpf.c) */
#define REJECT_MAGIC		0xb1f4e1ec
#define ICMP_QUOTE_MAX		548	/* 576 - 20 - 8: what icmp_send() quotes */

struct reject_meta {
	__u32 magic;
	__u32 with;		/* enum bpfipt_reject_with */
};

/* The ICMP code of --reject-with (ipt_reject_with -> ICMP_* of dest unreach). */
static __always_inline int reject_icmp_code(__u32 with)
{
	switch (with) {
	case BPFIPT_REJ_NET_UNREACH: return 0;
	case BPFIPT_REJ_HOST_UNREACH: return 1;
	case BPFIPT_REJ_PROT_UNREACH: return 2;
	case BPFIPT_REJ_PORT_UNREACH: return 3;
	case BPFIPT_REJ_NET_PROHIB: return 9;
	case BPFIPT_REJ_HOST_PROHIB: return 10;
	case BPFIPT_REJ_ADMIN_PROHIB: return 13;
	}
	return -1;
}

static __always_inline bool addr_unanswerable(__be32 a)
{
	__u32 h = bpf_ntohl(a);

	return h == 0 || h == 0xffffffffu || (h >> 28) == 0xe;
}

/* One's-complement sum folded to 16 bits. */
static __always_inline __u16 csum_fold32(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* The source address of our reply: INPUT and OUTPUT answer from the address the
 * packet was for / came from; FORWARD from our preferred source toward the
 * sender (icmp_send()'s route lookup). 0 when there is none. */
static __always_inline __be32 reject_saddr(struct __sk_buff *skb, struct scratch *sc, __u32 chain)
{
	struct bpf_fib_lookup *f = &sc->fib;

	if (chain == BPFIPT_INPUT)
		return sc->p.daddr;
	/* OUTPUT: the reply enters our stack by the interface the packet was leaving
	 * by, where a local source address would be a martian: it comes from the
	 * address the packet was for (the application sees the same error) */
	if (chain == BPFIPT_OUTPUT)
		return sc->p.daddr;
	__builtin_memset(f, 0, sizeof(*f));
	f->family = AF_INET;
	f->ipv4_dst = sc->p.saddr;
	f->ifindex = skb->ifindex;
	if (bpf_fib_lookup(skb, f, sizeof(*f), BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_SRC |
			   BPF_FIB_LOOKUP_SKIP_NEIGH) < 0)
		return 0;
	return f->ipv4_src;
}

/* Swap the Ethernet addresses: the reply goes back to the previous hop (or, at
 * egress, to us). */
static __always_inline int reject_eth(struct __sk_buff *skb, __u32 l2)
{
	__u8 mac[12], sw[12];

	if (!l2)
		return 0;
	if (bpf_skb_load_bytes(skb, 0, mac, 12))
		return -1;
	__builtin_memcpy(sw, mac + 6, 6);
	__builtin_memcpy(sw + 6, mac, 6);
	return bpf_skb_store_bytes(skb, 0, sw, 12, 0);
}

/* The IP header of a reply, checksummed. */
static __always_inline void reject_iph(struct iphdr *ip, __be32 saddr, __be32 daddr, __u32 tot,
				       __u8 proto, __u8 tos, __be16 frag)
{
	__u32 s = 0;

	__builtin_memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tos;
	ip->tot_len = bpf_htons(tot);
	ip->frag_off = frag;
	ip->ttl = 64;
	ip->protocol = proto;
	ip->saddr = saddr;
	ip->daddr = daddr;
	for (int i = 0; i < 10; i++)
		s += ((__u16 *)ip)[i];
	ip->check = csum_fold32(s);
}

/* icmp_send() answers ICMP queries and replies only: every other type, the
 * unassigned ones (1, 2, 6, 7, 9, 10, above 18) included, counts as an error
 * there (icmp_pointers[].error), and an error is never answered. */
static __always_inline bool icmp_no_answer(__u32 type)
{
	return !(type == 0 || type == 8 || (type >= 13 && type <= 18));
}

/* icmp-*: the packet becomes IP + ICMP destination unreachable + the quote. */
static __always_inline int reject_icmp(struct __sk_buff *skb, struct scratch *sc, __u32 l2,
				       __u32 chain, int code)
{
	struct {
		struct iphdr ip;
		__u8 icmp[8];
	} h;
	__u32 q = sc->p.len, len, s, n1, n2;
	__be32 saddr;
	__s64 c;
	__u16 ck;

	if (sc->p.proto == IPPROTO_ICMP && sc->p.icmp != BPFIPT_NO_ICMP &&
	    icmp_no_answer(sc->p.icmp >> 8))
		return -1;
	saddr = reject_saddr(skb, sc, chain);
	if (!saddr)
		return -1;
	/* quote at most 548 bytes, a multiple of 4 (bpf_csum_diff) */
	if (q > ICMP_QUOTE_MAX)
		q = ICMP_QUOTE_MAX;
	if (q > skb->len - l2)
		q = skb->len - l2;
	q &= ~3u;
	if (q < 28)
		return -1;
	if (bpf_skb_change_tail(skb, l2 + q, 0) ||
	    bpf_skb_adjust_room(skb, sizeof(h), BPF_ADJ_ROOM_MAC, 0) ||
	    reject_eth(skb, l2))
		return -1;
	len = l2 + sizeof(h) + q;
	if (bpf_skb_pull_data(skb, len))
		return -1;
	reject_iph(&h.ip, saddr, sc->p.saddr, sizeof(h) + q, IPPROTO_ICMP,
		   (sc->p.tos & 0x1e) | 0xc0, 0);
	h.icmp[0] = 3;
	h.icmp[1] = code;
	h.icmp[2] = h.icmp[3] = 0;
	__builtin_memset(h.icmp + 4, 0, 4);
	if (bpf_skb_store_bytes(skb, l2, &h, sizeof(h), 0))
		return -1;
	/* the ICMP checksum over header + quote: copied to the scratch, summed by
	 * bpf_csum_diff() in two parts of <= 512 bytes. The sizes are bounded by
	 * construction (36 + a masked value; the buffer holds the largest): clang
	 * moves explicit bound checks away from the calls they guard. */
	s = 36 + ((q - 28) & 0x3fc);	/* 8 + q: 36 .. 556 here, <= 1056 for the verifier */
	if (bpf_skb_load_bytes(skb, l2 + sizeof(h.ip), sc->buf, s))
		return -1;
	n1 = s;
	if (n1 > 512)
		n1 = 512;
	n2 = (s - n1) & 0x1fc;	/* 0 .. 44 here */
	c = bpf_csum_diff(NULL, 0, (__be32 *)sc->buf, n1, 0);
	if (c < 0)
		return -1;
	c = bpf_csum_diff(NULL, 0, (__be32 *)(sc->buf + 512), n2, (__u32)c);
	if (c < 0)
		return -1;
	ck = csum_fold32((__u32)c);
	if (bpf_skb_store_bytes(skb, l2 + sizeof(h.ip) + 2, &ck, 2, 0))
		return -1;
	return 0;
}

/* tcp-reset: nf_send_reset()'s RST (no options, no payload). */
static __always_inline int reject_tcp(struct __sk_buff *skb, struct scratch *sc, __u32 l2)
{
	struct {
		struct iphdr ip;
		__u8 th[20];
	} h;
	__u8 o[20];
	__u32 seq, ack, dlen, s = 0;
	__u8 fl;

	if (sc->p.proto != IPPROTO_TCP || sc->p.tcpflags == BPFIPT_NO_TCP ||
	    (sc->p.tcpflags & TH_RST))
		return -1;
	/* IP options: not supported (dropped without a reply, documented) */
	if (bpf_skb_load_bytes(skb, l2, &h.ip, sizeof(h.ip)) || h.ip.ihl != 5 ||
	    bpf_skb_load_bytes(skb, l2 + 20, o, 20))
		return -1;
	fl = o[13];
	dlen = sc->p.len - 20 - (o[12] >> 4) * 4;
	seq = (__u32)o[4] << 24 | (__u32)o[5] << 16 | (__u32)o[6] << 8 | o[7];
	ack = (__u32)o[8] << 24 | (__u32)o[9] << 16 | (__u32)o[10] << 8 | o[11];
	__builtin_memset(h.th, 0, sizeof(h.th));
	__builtin_memcpy(h.th, o + 2, 2);	/* ports swapped */
	__builtin_memcpy(h.th + 2, o, 2);
	if (fl & TH_ACK) {
		*(__be32 *)(h.th + 4) = bpf_htonl(ack);
		h.th[13] = TH_RST;
	} else {
		ack = seq + dlen + !!(fl & TH_SYN) + !!(fl & TH_FIN);
		*(__be32 *)(h.th + 8) = bpf_htonl(ack);
		h.th[13] = TH_RST | TH_ACK;
	}
	h.th[12] = 5 << 4;
	/* pseudo header + TCP header */
	s += (sc->p.daddr & 0xffff) + (sc->p.daddr >> 16);
	s += (sc->p.saddr & 0xffff) + (sc->p.saddr >> 16);
	s += bpf_htons(IPPROTO_TCP) + bpf_htons(20);
	for (int i = 0; i < 10; i++)
		s += ((__u16 *)h.th)[i];
	*(__u16 *)(h.th + 16) = csum_fold32(s);
	reject_iph(&h.ip, sc->p.daddr, sc->p.saddr, 40, IPPROTO_TCP, 0, bpf_htons(0x4000));
	if (bpf_skb_change_tail(skb, l2 + 40, 0) || reject_eth(skb, l2) ||
	    bpf_skb_store_bytes(skb, l2, &h, sizeof(h), 0))
		return -1;
	return 0;
}

/* ---- IPv6 ---- */

#define ICMP6_QUOTE_MAX		1232	/* IPV6_MIN_MTU - 40 - 8: what icmp6_send() quotes */
#define REJECT6_HOPLIMIT	64

/* The ICMPv6 destination unreachable code of --reject-with (ip6t_REJECT's
 * switch), -1: no reply (echo-reply, or an IPv4 code). */
static __always_inline int reject6_icmp_code(__u32 with)
{
	switch (with) {
	case BPFIPT_REJ6_NO_ROUTE: return 0;
	case BPFIPT_REJ6_ADM_PROHIBITED: return 1;
	case BPFIPT_REJ6_NOT_NEIGHBOUR: return 2;
	case BPFIPT_REJ6_ADDR_UNREACH: return 3;
	case BPFIPT_REJ6_PORT_UNREACH: return 4;
	case BPFIPT_REJ6_POLICY_FAIL: return 5;
	case BPFIPT_REJ6_REJECT_ROUTE: return 6;
	}
	return -1;
}

static __always_inline bool addr6_multicast(const __be32 *a)
{
	return (bpf_ntohl(a[0]) >> 24) == 0xff;
}

static __always_inline bool addr6_any(const __be32 *a)
{
	return !(a[0] | a[1] | a[2] | a[3]);
}

/* ipv6_addr_type() & IPV6_ADDR_UNICAST: not ::, multicast nor ::ffff:0:0/96 */
static __always_inline bool addr6_unicast(const __be32 *a)
{
	if (addr6_any(a) || addr6_multicast(a))
		return false;
	return !(a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff));
}

/* Sum of the 16-bit words of two addresses, as bpf_csum_diff() adds them. */
static __always_inline __u32 sum_addr6(const __be32 *a, const __be32 *b)
{
	__u32 s = 0;

	for (int i = 0; i < 4; i++) {
		s += (a[i] & 0xffff) + (a[i] >> 16);
		s += (b[i] & 0xffff) + (b[i] >> 16);
	}
	return s;
}

/* The reply's source (icmp6_send()): INPUT the address the packet was for;
 * OUTPUT the same, as IPv4 (the reply enters our stack); FORWARD our preferred
 * source toward the sender. 0 when there is none. */
static __always_inline int reject6_saddr(struct __sk_buff *skb, struct scratch *sc, __u32 chain,
					 __be32 *out)
{
	struct bpf_fib_lookup *f = &sc->fib;

	if (chain == BPFIPT_INPUT || chain == BPFIPT_OUTPUT) {
		__builtin_memcpy(out, sc->p.daddr6, 16);
		return 0;
	}
	__builtin_memset(f, 0, sizeof(*f));
	f->family = AF_INET6;
	__builtin_memcpy(f->ipv6_dst, sc->p.saddr6, 16);
	f->ifindex = skb->ifindex;
	if (bpf_fib_lookup(skb, f, sizeof(*f), BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_SRC |
			   BPF_FIB_LOOKUP_SKIP_NEIGH) < 0)
		return -1;
	__builtin_memcpy(out, f->ipv6_src, 16);
	return addr6_any(out) ? -1 : 0;
}

static __always_inline void reject_ip6h(struct ipv6hdr *ip6, const __be32 *saddr,
					const __be32 *daddr, __u32 plen, __u8 nh)
{
	__builtin_memset(ip6, 0, sizeof(*ip6));
	ip6->version = 6;
	ip6->payload_len = bpf_htons(plen);
	ip6->nexthdr = nh;
	ip6->hop_limit = REJECT6_HOPLIMIT;
	__builtin_memcpy(&ip6->saddr, saddr, 16);
	__builtin_memcpy(&ip6->daddr, daddr, 16);
}

/* icmp6-*: IPv6 + ICMPv6 destination unreachable + the quote. */
static __always_inline int reject6_icmp(struct __sk_buff *skb, struct scratch *sc, __u32 l2,
					__u32 chain, int code)
{
	struct {
		struct ipv6hdr ip6;
		__u8 icmp[8];
	} h;
	__be32 saddr[4];
	__u32 q = sc->p.len, s, s4, n1, n2, n3, ph;
	__u64 s64;
	__s64 c;
	__u16 ck;

	/* is_ineligible(): an ICMPv6 error, or no type to tell */
	if (sc->p.proto == IPPROTO_ICMPV6 &&
	    (sc->p.icmp == BPFIPT_NO_ICMP || (sc->p.icmp >> 8) < 128))
		return -1;
	if (reject6_saddr(skb, sc, chain, saddr))
		return -1;
	if (q > ICMP6_QUOTE_MAX)
		q = ICMP6_QUOTE_MAX;
	if (q > skb->len - l2)
		q = skb->len - l2;
	if (q < 40)
		return -1;
	if (bpf_skb_change_tail(skb, l2 + q, 0) ||
	    bpf_skb_adjust_room(skb, sizeof(h), BPF_ADJ_ROOM_MAC, 0) ||
	    reject_eth(skb, l2))
		return -1;
	reject_ip6h(&h.ip6, saddr, sc->p.saddr6, sizeof(h.icmp) + q, IPPROTO_ICMPV6);
	h.icmp[0] = 1;		/* destination unreachable */
	h.icmp[1] = code;
	__builtin_memset(h.icmp + 2, 0, 6);
	if (bpf_skb_store_bytes(skb, l2, &h, sizeof(h), 0))
		return -1;
	/* the checksum: ICMPv6 header + quote copied to the scratch, a zero pad to
	 * 4 bytes (an odd length sums as if padded), summed by bpf_csum_diff() in
	 * parts of <= 512 bytes over the pseudo-header's sum. Sizes are bounded by
	 * masks (the buffer holds the largest), as reject_icmp() explains. */
	/* 48 .. 1240 here, 8 .. 2055 for the verifier: masked in asm, where clang
	 * cannot move the bound away from the helper's length register */
	s64 = q;
	asm volatile("%[c] &= %[m]" : [c] "+r"(s64) : [m] "i"(0x7ff));
	s64 += 8;
	s = s64;
	if (bpf_skb_load_bytes(skb, l2 + sizeof(h.ip6), sc->buf, s64))
		return -1;
	sc->buf[s] = 0;
	sc->buf[s + 1] = 0;
	sc->buf[s + 2] = 0;
	s4 = (s + 3) & 0xffc;
	n1 = s4 > 512 ? 512 : s4;
	n2 = s4 - n1 > 512 ? 512 : s4 - n1;
	n3 = (s4 - n1 - n2) & 0x3fc;	/* 0 .. 216 here */
	n2 &= 0x3fc;
	ph = sum_addr6(saddr, sc->p.saddr6) + bpf_htons(8 + q) + bpf_htons(IPPROTO_ICMPV6);
	c = bpf_csum_diff(NULL, 0, (__be32 *)sc->buf, n1, ph);
	if (c < 0)
		return -1;
	c = bpf_csum_diff(NULL, 0, (__be32 *)(sc->buf + 512), n2, (__u32)c);
	if (c < 0)
		return -1;
	c = bpf_csum_diff(NULL, 0, (__be32 *)(sc->buf + 1024), n3, (__u32)c);
	if (c < 0)
		return -1;
	ck = csum_fold32((__u32)c);
	if (bpf_skb_store_bytes(skb, l2 + sizeof(h.ip6) + 2, &ck, 2, 0))
		return -1;
	return 0;
}

/* tcp-reset: nf_send_reset6()'s RST (no options, no payload, no extension
 * headers). */
static __always_inline int reject6_tcp(struct __sk_buff *skb, struct scratch *sc, __u32 l2)
{
	struct {
		struct ipv6hdr ip6;
		__u8 th[20];
	} h;
	__u8 o[20];
	__u32 seq, ack, dlen, off = sc->p.l4off, s;
	__u8 fl;

	if (sc->p.proto != IPPROTO_TCP || sc->p.tcpflags == BPFIPT_NO_TCP ||
	    (sc->p.tcpflags & TH_RST) || !addr6_unicast(sc->p.saddr6) ||
	    !addr6_unicast(sc->p.daddr6) || off + 20 > sc->p.len)
		return -1;
	if (bpf_skb_load_bytes(skb, l2 + (off & 0xfff), o, 20))
		return -1;
	fl = o[13];
	/* otcplen - doff: the payload after the TCP header */
	dlen = sc->p.len - off - (o[12] >> 4) * 4;
	seq = (__u32)o[4] << 24 | (__u32)o[5] << 16 | (__u32)o[6] << 8 | o[7];
	ack = (__u32)o[8] << 24 | (__u32)o[9] << 16 | (__u32)o[10] << 8 | o[11];
	__builtin_memset(h.th, 0, sizeof(h.th));
	__builtin_memcpy(h.th, o + 2, 2);	/* ports swapped */
	__builtin_memcpy(h.th + 2, o, 2);
	if (fl & TH_ACK) {
		*(__be32 *)(h.th + 4) = bpf_htonl(ack);
		h.th[13] = TH_RST;
	} else {
		ack = seq + dlen + !!(fl & TH_SYN) + !!(fl & TH_FIN);
		*(__be32 *)(h.th + 8) = bpf_htonl(ack);
		h.th[13] = TH_RST | TH_ACK;
	}
	h.th[12] = 5 << 4;
	s = sum_addr6(sc->p.daddr6, sc->p.saddr6) + bpf_htons(IPPROTO_TCP) + bpf_htons(20);
	for (int i = 0; i < 10; i++)
		s += ((__u16 *)h.th)[i];
	*(__u16 *)(h.th + 16) = csum_fold32(s);
	reject_ip6h(&h.ip6, sc->p.daddr6, sc->p.saddr6, 20, IPPROTO_TCP);
	if (bpf_skb_change_tail(skb, l2 + 60, 0) || reject_eth(skb, l2) ||
	    bpf_skb_store_bytes(skb, l2, &h, sizeof(h), 0))
		return -1;
	return 0;
}

/* The IPv6 reply of --reject-with: 0 when the packet became it. */
static __always_inline int reject6(struct __sk_buff *skb, struct scratch *sc, __u32 l2,
				   __u32 chain, __u32 with)
{
	const struct pkt *p = &sc->p;
	int code;

	/* icmp6_send(): multicast destination, not PACKET_HOST, :: or multicast
	 * source; a fragment or a cut chain (reject6_csum_ok) */
	if (p->frag || p->mf || p->cut || addr6_multicast(p->daddr6) ||
	    addr6_any(p->saddr6) || addr6_multicast(p->saddr6) ||
	    (skb->pkt_type >= 1 && skb->pkt_type <= 3))	/* broadcast, multicast, otherhost */
		return -1;
	if (with == BPFIPT_REJ6_TCP_RESET)
		return reject6_tcp(skb, sc, l2);
	code = reject6_icmp_code(with);
	return code < 0 ? -1 : reject6_icmp(skb, sc, l2, chain, code);
}

/* Turn the packet into its REJECT reply and send it: TC_ACT_REDIRECT, or
 * TC_ACT_SHOT when there is no reply to send. A packet leaving (chain OUTPUT):
 * the reply goes into the local stack. A function of its own (a static one:
 * verified at its calls, only in programs that reject): inline, its headers
 * and checksums took 104 of the tc programs' 224 bytes of stack, which the walk
 * needs below them (bpfipt_step() holds find_slot()'s pool pointers). */
static __noinline int tc_reject(struct __sk_buff *skb, struct scratch *sc, __u32 l2,
			    __u32 chain, __u32 with)
{
	bool egress = chain == BPFIPT_OUTPUT;
	const struct pkt *p = &sc->p;
	int code, r;

	if (p->family == 6) {
		if (reject6(skb, sc, l2, chain, with))
			goto drop;
		goto send;
	}
	if (p->frag || addr_unanswerable(p->saddr) || addr_unanswerable(p->daddr))
		goto drop;
	if (skb->pkt_type == 1 /* PACKET_BROADCAST */ || skb->pkt_type == 2 /* MULTICAST */)
		goto drop;
	if (with == BPFIPT_REJ_TCP_RESET) {
		r = reject_tcp(skb, sc, l2);
	} else {
		code = reject_icmp_code(with);
		r = code < 0 ? -1 : reject_icmp(skb, sc, l2, chain, code);
	}
	if (r)
		goto drop;
send:
	r = bpf_redirect(skb->ifindex, egress ? BPF_F_INGRESS : 0);
	if (r != TC_ACT_REDIRECT)
		goto drop;
	stat_inc(BPFIPT_ST_REJECT_SENT);
	return r;
drop:
	stat_inc(BPFIPT_ST_REJECT_DROPPED);
	return TC_ACT_SHOT;
}

#endif
