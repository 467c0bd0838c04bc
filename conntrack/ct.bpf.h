/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection tracking in the data path, included by dataplane/bpfipt.bpf.c
 * (the structs it shares with userspace are in dataplane/bpfipt.h).
 *
 * Every hook, before the classifier, calls bpfipt_ct_track(): it finds the
 * packet's connection in bpfipt_ct and gives the packet its state (the LBVS
 * field BPFIPT_F_CTSTATE) and the connection's tuple, direction and status
 * (for -m conntrack's other options). As in Linux (nf_conntrack_in runs before
 * the filter), an existing connection is updated at once, whatever the verdict:
 * TCP state machine, SEEN_REPLY, ASSURED, timeout, counters. A NEW connection
 * is only written to the table when the packet is accepted (bpfipt_ct_confirm:
 * Linux confirms a connection after the last hook).
 *
 * Semantics follow Linux 6.x (nf_conntrack_proto_{tcp,udp,icmp,icmpv6,generic}.c)
 * with nf_conntrack_tcp_loose = 1, without TCP window tracking (documented in
 * docs/conntrack.md): an expired entry is absent; on `lo`, a packet is tracked
 * at egress (OUTPUT) and only looked up again at ingress (INPUT), as Linux
 * tracks it once.
 *
 * Both families share the code, each has its own table: an IPv4 key is the
 * first 16 bytes of the 40-byte key an IPv6 connection takes (bpfipt.h), so
 * IPv4 hashes, compares and copies one word per address where IPv6 takes four;
 * the family is a test on the packet (and the table it picks), never a copy of
 * the pipeline. ICMPv6 (nf_conntrack_proto_icmpv6.c): echo and node
 * information queries are tracked as ICMP echo; the error types (below 128)
 * are RELATED to the connection of the packet they quote; neighbour discovery
 * and MLD (130-136, 143: the kernel's noct_valid_new) are UNTRACKED; any other
 * type opens nothing (INVALID).
 */
#ifndef BPFIPT_CT_BPF_H
#define BPFIPT_CT_BPF_H

/* TCP flag bits */
#define TH_FIN	0x01
#define TH_SYN	0x02
#define TH_RST	0x04
#define TH_PSH	0x08
#define TH_ACK	0x10
#define TH_URG	0x20
#define TH_ECE	0x40
#define TH_CWR	0x80

/* entry.pad8: TCP bookkeeping of the reopen rule (tcp_packet's CLOSE_INIT,
 * last_index == RST and last_dir) */
#define CTF_CLOSE_INIT		0x01
#define CTF_LAST_RST		0x02
#define CTF_LAST_REPLY		0x04

#define CT_STREAM_NS		2000000000ull	/* UDP: a "stream" after 2 s */
#define IPPROTO_GRE_		47
#define IPPROTO_ICMPV6_		58
#define BPFIPT_CT_IPV6		1	/* IPv6 packets are tracked (bpfipt.bpf.c) */

/* A family's connection table sits in slot 0 of bpfipt_ct_slot (IPv4) or
 * bpfipt_ct6_slot. The loader creates it (bpfipt_ct, bpfipt_ct6, of
 * bpf-conntrack -T's max entries) with the family's first ruleset that tracks
 * connections, before its switch: a namespace whose rulesets never do holds no
 * table, and only a generation with BPFIPT_C_CT calls bpfipt_ct_track() for
 * packets of its family, so the code never finds the slot empty (it would
 * leave the packet without a state: INVALID). */
LAZY(bpfipt_ct_slot, struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* a hash's size is its own */
	__uint(key_size, BPFIPT_CT_KEY4);
	__type(value, struct bpfipt_ct_entry);
});

LAZY(bpfipt_ct6_slot, struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct bpfipt_ct_key);
	__type(value, struct bpfipt_ct_entry);
});

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfipt_ct_conf);
} bpfipt_ct_conf SEC(".maps");

/* The first fragments' results (struct ct_frag_key, dataplane/bpfipt.h) sit in
 * slot 0 of bpfipt_ctf_slot, an LRU the loader makes (bpfipt_ct_frag,
 * BPFIPT_CT_FRAG_MAX entries) with the connection table. */
LAZY(bpfipt_ctf_slot, struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct ct_frag_key);
	__type(value, struct ct_result);
});

#ifndef BPFIPT_MAPS_ONLY	/* the maps' object (bpfipt.bpf.c) ends here */

/* tcp_conntracks[dir][index][old state] of Linux: the new state, sIV (invalid)
 * or sIG (ignored). Index: SYN, SYN-ACK, FIN, ACK, RST, none. */
#define sNO BPFIPT_TCP_NONE
#define sSS BPFIPT_TCP_SYN_SENT
#define sSR BPFIPT_TCP_SYN_RECV
#define sES BPFIPT_TCP_ESTABLISHED
#define sFW BPFIPT_TCP_FIN_WAIT
#define sCW BPFIPT_TCP_CLOSE_WAIT
#define sLA BPFIPT_TCP_LAST_ACK
#define sTW BPFIPT_TCP_TIME_WAIT
#define sCL BPFIPT_TCP_CLOSE
#define sS2 BPFIPT_TCP_SYN_SENT2
#define sIV BPFIPT_TCP_MAX
#define sIG (BPFIPT_TCP_MAX + 1)

enum { TI_SYN, TI_SYNACK, TI_FIN, TI_ACK, TI_RST, TI_NONE, TI_MAX };

static const __u8 tcp_tr[2][TI_MAX][BPFIPT_TCP_MAX] = {
	{	/* original */
/*		 sNO, sSS, sSR, sES, sFW, sCW, sLA, sTW, sCL, sS2 */
/* syn */	{ sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2 },
/* synack */	{ sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR },
/* fin */	{ sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
/* ack */	{ sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV },
/* rst */	{ sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
/* none */	{ sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
	{	/* reply */
/* syn */	{ sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2 },
/* synack */	{ sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR },
/* fin */	{ sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
/* ack */	{ sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG },
/* rst */	{ sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
/* none */	{ sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
};

static __always_inline __u32 tcp_index(__u32 f)
{
	/* constants only: the verifier knows the result is < TI_MAX */
	if (f & TH_RST)
		return TI_RST;
	if (f & TH_SYN)
		return f & TH_ACK ? TI_SYNACK : TI_SYN;
	if (f & TH_FIN)
		return TI_FIN;
	return f & TH_ACK ? TI_ACK : TI_NONE;
}

/* tcp_error()'s tcp_valid_flags: the combinations a conntrack accepts (PSH, ECE
 * and CWR aside). */
static __always_inline bool tcp_flags_valid(__u32 f)
{
	switch (f & ~(TH_ECE | TH_CWR | TH_PSH) & 0xff) {
	case TH_SYN:
	case TH_SYN | TH_URG:
	case TH_SYN | TH_ACK:
	case TH_RST:
	case TH_RST | TH_ACK:
	case TH_FIN | TH_ACK:
	case TH_FIN | TH_ACK | TH_URG:
	case TH_ACK:
	case TH_ACK | TH_URG:
		return true;
	}
	return false;
}

/* ICMP: query request types and their replies; error types (icmp_is_err).
 * ICMPv6 (v6): the kernel's invmap (echo 128/129, node information 139/140)
 * and its errors, every type below 128 (icmpv6_error: "is not error message?"
 * is type >= 128). */
static __always_inline int icmp_req_of_reply(bool v6, __u32 type)
{
	if (v6)
		return type == 129 ? 128 : type == 140 ? 139 : -1;
	switch (type) {
	case 0: return 8;	/* echo reply */
	case 14: return 13;	/* timestamp reply */
	case 16: return 15;	/* information reply */
	case 18: return 17;	/* address mask reply */
	}
	return -1;
}

static __always_inline bool icmp_is_request(bool v6, __u32 type)
{
	if (v6)
		return type == 128 || type == 139;
	return type == 8 || type == 13 || type == 15 || type == 17;
}

static __always_inline bool icmp_is_error(bool v6, __u32 type)
{
	if (v6)
		return type < 128;
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

/* ICMPv6 messages conntrack leaves untracked (noct_valid_new): MLD query,
 * report, done (130-132), router/neighbour solicitation and advertisement,
 * redirect... 133-136, MLDv2 report (143). */
static __always_inline bool icmp6_untracked(__u32 type)
{
	return (type >= 130 && type <= 136) || type == 143;
}

static __always_inline bool is_icmp(__u32 proto)
{
	return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6_;
}

/* a > b for addresses as network-order bytes (4 words for IPv6) */
static __always_inline bool addr_gt(bool v6, const __be32 *a, const __be32 *b)
{
	__u32 x, y;

	if (!v6)
		return bpf_ntohl(a[0]) > bpf_ntohl(b[0]);
	for (int i = 0; i < 4; i++) {
		x = bpf_ntohl(a[i]);
		y = bpf_ntohl(b[i]);
		if (x != y)
			return x > y;
	}
	return false;
}

static __always_inline bool addr_eq(bool v6, const __be32 *a, const __be32 *b)
{
	if (!v6)
		return a[0] == b[0];
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* End i's address into a key, and out of it. */
static __always_inline void key_addr_set(bool v6, struct bpfipt_ct_key *k, __u32 i,
					 const __be32 *s)
{
	k->a[i & 1] = s[0];
	if (v6) {
		k->a6[i & 1][0] = s[1];
		k->a6[i & 1][1] = s[2];
		k->a6[i & 1][2] = s[3];
	}
}

static __always_inline void key_addr_get(bool v6, const struct bpfipt_ct_key *k, __u32 i,
					 __be32 *d)
{
	d[0] = k->a[i & 1];
	if (v6) {
		d[1] = k->a6[i & 1][0];
		d[2] = k->a6[i & 1][1];
		d[3] = k->a6[i & 1][2];
	}
}

/* The end of a family's own code: clang would otherwise merge the two families'
 * last map calls into one call site that sees both tables, which the verifier
 * can neither inline nor call directly (bpfipt_ct_track()). */
#define CT_SITE(f)	asm volatile("" : : "i"(f) : "memory")

/* The family's connection table (NULL: none yet). */
static __always_inline void *ct_table(bool v6)
{
	__u32 zero = 0;

	if (v6)
		return bpf_map_lookup_elem(&bpfipt_ct6_slot, &zero);
	return bpf_map_lookup_elem(&bpfipt_ct_slot, &zero);
}

static __always_inline bool proto_has_ports(__u32 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE_ ||
	       proto == IPPROTO_SCTP_ || proto == IPPROTO_DCCP_;
}

/* The canonical key of a tuple (bpfipt.h), and which end the tuple's source is.
 * saddr/daddr: one word (IPv4) or four (v6). */
static __always_inline bool ct_key_of(struct bpfipt_ct_key *k, bool v6, __u32 proto,
				      const __be32 *saddr, const __be32 *daddr, __u32 sport,
				      __u32 dport, __u32 icmp, __u8 *side)
{
	__u32 type = icmp >> 8;
	bool swap;

	/* IPv4: the key's head only (bpfipt_ct's key) */
	__builtin_memset(k, 0, BPFIPT_CT_KEY4);
	if (v6)
		__builtin_memset(k->a6, 0, sizeof(k->a6));
	k->proto = proto;
	k->family = v6 ? 6 : 4;
	if (proto == (v6 ? IPPROTO_ICMPV6_ : IPPROTO_ICMP)) {
		/* a query: end 0 is the requester; the identifier is sport's place */
		int req = icmp_req_of_reply(v6, type);

		if (icmp_is_request(v6, type)) {
			swap = false;
			k->type = type;
		} else if (req >= 0) {
			swap = true;
			k->type = req;
		} else {
			return false;
		}
		k->port[0] = k->port[1] = bpf_htons(sport);
	} else if (proto_has_ports(proto)) {
		swap = addr_gt(v6, saddr, daddr) ||
		       (addr_eq(v6, saddr, daddr) && sport > dport);
		k->port[swap] = bpf_htons(sport);
		k->port[!swap] = bpf_htons(dport);
	} else {
		swap = addr_gt(v6, saddr, daddr);
	}
	key_addr_set(v6, k, swap, saddr);
	key_addr_set(v6, k, !swap, daddr);
	*side = swap;
	return true;
}

/* The connection's original tuple, for -m conntrack. */
static __always_inline void ct_export(struct pkt *p, const struct bpfipt_ct_key *k, __u8 orig,
				      const bool v6)
{
	orig &= 1;
	/* IPv4: one word (p->ct was zeroed by bpfipt_ct_track) */
	key_addr_get(v6, k, orig, p->ct.osrc);
	key_addr_get(v6, k, orig ^ 1, p->ct.odst);
	p->ct.osport = bpf_ntohs(k->port[orig]);
	p->ct.odport = bpf_ntohs(k->port[orig ^ 1]);
	p->ct.proto = k->proto;
}

static __always_inline __u64 ct_timeout(const struct bpfipt_ct_conf *cf, __u32 i)
{
	_Static_assert(BPFIPT_CTT_MAX <= 32, "timeout_ns has 32 places");
	return cf->timeout_ns[i & 31];
}

/* An ICMP error: the state of the connection its quoted packet belongs to.
 * RELATED when it is tracked and the error goes back to the quoted packet's
 * source (nf_conntrack_inet_error), else INVALID. */
static __always_inline void ct_related(struct scratch *sc, void *tab, __u64 now, const bool v6)
{
	struct pkt *p = &sc->p;
	struct bpfipt_ct_key *k = &sc->ctk;
	struct bpfipt_ct_entry *e;
	__u8 side;

	if (!p->inner_ok)
		return;
	if (v6 ? !addr_eq(true, p->daddr6, p->inner_saddr6) : p->daddr != p->inner_saddr)
		return;
	if (!ct_key_of(k, v6, p->inner_proto, v6 ? p->inner_saddr6 : &p->inner_saddr,
		       v6 ? p->inner_daddr6 : &p->inner_daddr, p->inner_sport, p->inner_dport,
		       p->inner_icmp, &side))
		return;
	e = bpf_map_lookup_elem(tab, k);
	if (!e || e->expires <= now)
		return;
	p->ct.state = BPFIPT_CT_RELATED;
	p->ct.has = 1;
	/* the error travels against the quoted packet */
	p->ct.dir = side == e->orig;
	p->ct.status = e->status;
	p->ct.expire = (e->expires - now) / 1000000000ull;
	ct_export(p, k, e->orig, v6);
}

/* The state of a packet of family v6 (a constant at each call site) that is
 * not a later fragment (bpfipt_ct_track). */
static __always_inline void ct_track(struct scratch *sc, __u32 update, const bool v6)
{
	struct bpfipt_ct_entry *e;
	struct bpfipt_ct_conf *cf;
	struct bpfipt_ct_key *k;
	struct pkt *p;
	void *tab;
	__u32 zero = 0, f, old = 0, nst = sIV, ti, dir;	/* set: clang reloads p->proto, the verifier cannot tie the two tests */
	__u64 now, tmo;
	__u8 side;

	p = &sc->p;
	k = &sc->ctk;
	cf = bpf_map_lookup_elem(&bpfipt_ct_conf, &zero);
	tab = ct_table(v6);
	if (!cf || !tab)
		return;
	/* the tick's time (CLOCK_MONOTONIC_COARSE, behind CLOCK_MONOTONIC by less
	 * than a tick): timeouts are seconds, and reading the clock source cost
	 * 20-35 ns a packet here (docs/conntrack.md) */
	now = bpf_ktime_get_coarse_ns();
	/* nf_conntrack_in: no transport header found (ipv6_skip_exthdr fails on a
	 * cut chain and on "no next header"): no connection, INVALID */
	if (v6 && (p->cut || p->proto == 59))
		return;
	if (p->proto == (v6 ? IPPROTO_ICMPV6_ : IPPROTO_ICMP)) {
		if (p->icmp == BPFIPT_NO_ICMP)
			return;
		if (v6 && icmp6_untracked(p->icmp >> 8)) {
			p->ct.state = BPFIPT_CT_UNTRACKED;	/* no connection */
			return;
		}
		if (icmp_is_error(v6, p->icmp >> 8)) {
			ct_related(sc, tab, now, v6);
			return;
		}
	} else if (proto_has_ports(p->proto) && p->sport == BPFIPT_NO_PORT) {
		return;	/* header cut short: no tuple */
	}
	if (p->proto == IPPROTO_TCP && (!tcp_flags_valid(p->tcpflags) || p->tcp_bad))
		return;
	if (!ct_key_of(k, v6, p->proto, v6 ? p->saddr6 : &p->saddr, v6 ? p->daddr6 : &p->daddr,
		       is_icmp(p->proto) ? p->icmp_id : p->sport, p->dport, p->icmp, &side))
		return;	/* an ICMP type that opens nothing */

	e = bpf_map_lookup_elem(tab, k);
	/* expired: absent (the sweep or the LRU reclaims it). A connection killed
	 * at lo's egress stays visible to lo's ingress for a second: Linux tracks
	 * a loopback packet once, so INPUT sees the state OUTPUT saw. */
	if (e && (e->expires <= now || ((e->flags & BPFIPT_CTF_KILLED) && update)))
		e = NULL;
	if (e && p->proto == IPPROTO_TCP) {
		dir = (side != e->orig) & 1;
		old = e->tcp_state;
		if (old >= BPFIPT_TCP_MAX)
			old = BPFIPT_TCP_NONE;
		nst = tcp_tr[dir][tcp_index(p->tcpflags)][old];
		/* a SYN on a closed connection reopens it when it was closed by a FIN,
		 * or reset from this side (tcp_packet: kill and look up again); else
		 * the SYN is ignored */
		if (nst == sSS && old >= BPFIPT_TCP_TIME_WAIT) {
			if ((e->flags & CTF_CLOSE_INIT) ||
			    ((e->flags & CTF_LAST_RST) && !(e->flags & CTF_LAST_REPLY) == !dir))
				e = NULL;
			else
				nst = sIG;
		}
	}
	if (!e) {
		/* a new connection: TCP only from a SYN or (loose pickup) an ACK */
		nst = BPFIPT_TCP_NONE;
		if (p->proto == IPPROTO_TCP) {
			nst = tcp_tr[0][tcp_index(p->tcpflags)][BPFIPT_TCP_NONE];
			if (nst >= BPFIPT_TCP_MAX)
				return;
		} else if (is_icmp(p->proto) && side) {
			return;	/* a reply without a request */
		}
		p->ct.state = BPFIPT_CT_NEW;
		p->ct.has = 1;
		p->ct.dir = 0;
		p->ct.status = 0;
		p->ct.expire = 0;
		ct_export(p, k, side, v6);
		sc->ct_create = 1;
		sc->ct_side = side;
		sc->ct_tcp = nst;
		return;
	}

	dir = (side != e->orig) & 1;
	p->ct.has = 1;
	p->ct.dir = dir;
	p->ct.state = dir || (e->status & BPFIPT_CTS_SEEN_REPLY) ? BPFIPT_CT_ESTABLISHED :
								  BPFIPT_CT_NEW;
	ct_export(p, k, e->orig, v6);
	if (p->proto == IPPROTO_TCP) {
		if (nst == sIV) {
			p->ct.state = BPFIPT_CT_INVALID;	/* tcp_packet: -NF_ACCEPT, ct dropped */
			p->ct.has = 0;
			return;
		}
		if (nst == sIG || !update)
			goto seen;
		ti = nst;
		tmo = ct_timeout(cf, ti);
		if (p->tcpflags & TH_RST)
			tmo = ct_timeout(cf, BPFIPT_TCP_CLOSE);
		if (!(e->status & BPFIPT_CTS_SEEN_REPLY)) {
			if (p->tcpflags & TH_RST) {
				/* only a RST answered: no connection (nf_ct_kill) */
				e->flags |= BPFIPT_CTF_KILLED;
				e->expires = now + 1000000000ull;
				goto seen;
			}
			/* picked up mid-stream: no 5-day timeout before a reply */
			if (nst == BPFIPT_TCP_ESTABLISHED && tmo > ct_timeout(cf, BPFIPT_CTT_TCP_UNACK))
				tmo = ct_timeout(cf, BPFIPT_CTT_TCP_UNACK);
		} else if (!(e->status & BPFIPT_CTS_ASSURED) && nst == BPFIPT_TCP_ESTABLISHED &&
			   (old == BPFIPT_TCP_SYN_RECV || old == BPFIPT_TCP_ESTABLISHED)) {
			e->status |= BPFIPT_CTS_ASSURED;
		}
		f = e->flags & ~(CTF_LAST_RST | CTF_LAST_REPLY);
		if (nst == BPFIPT_TCP_FIN_WAIT && old != nst)
			f |= CTF_CLOSE_INIT;
		if (p->tcpflags & TH_RST)
			f |= CTF_LAST_RST;
		if (dir)
			f |= CTF_LAST_REPLY;
		e->flags = f;
		e->tcp_state = nst;
		e->expires = now + tmo;
	} else if (update) {
		if (p->proto == IPPROTO_ICMP) {
			tmo = ct_timeout(cf, BPFIPT_CTT_ICMP);
		} else if (p->proto == IPPROTO_ICMPV6_) {
			tmo = ct_timeout(cf, BPFIPT_CTT_ICMPV6);
		} else if (p->proto == IPPROTO_UDP || p->proto == IPPROTO_UDPLITE_) {
			/* replied and older than 2 s: a stream (nf_conntrack_udp_packet) */
			tmo = ct_timeout(cf, BPFIPT_CTT_UDP);
			if ((e->status & BPFIPT_CTS_SEEN_REPLY) && now > e->start + CT_STREAM_NS) {
				tmo = ct_timeout(cf, BPFIPT_CTT_UDP_STREAM);
				e->status |= BPFIPT_CTS_ASSURED;
			}
		} else if (p->proto == IPPROTO_GRE_) {
			/* replied: a stream, assured (gre_packet) */
			tmo = ct_timeout(cf, BPFIPT_CTT_GRE);
			if (e->status & BPFIPT_CTS_SEEN_REPLY) {
				tmo = ct_timeout(cf, BPFIPT_CTT_GRE_STREAM);
				e->status |= BPFIPT_CTS_ASSURED;
			}
		} else {
			tmo = ct_timeout(cf, BPFIPT_CTT_GENERIC);
		}
		e->expires = now + tmo;
	}
seen:
	/* Linux sets SEEN_REPLY before the filter runs: the first reply sees it */
	if (update && dir && !(e->status & BPFIPT_CTS_SEEN_REPLY))
		e->status |= BPFIPT_CTS_SEEN_REPLY;
	p->ct.status = e->status;
	p->ct.expire = e->expires > now ? (e->expires - now) / 1000000000ull : 0;
	if (!update)
		return;
	/* Plain adds, as the rest of the entry's update: two atomic adds cost an
	 * ESTABLISHED packet 8-10 ns (docs/conntrack.md). A direction's packets
	 * take one CPU (one flow, one receive queue), so a count is lost only where
	 * two CPUs send the same direction of one connection at the same instant;
	 * the counters are shown, never matched on. */
	e->packets[dir] += 1;
	e->bytes[dir] += p->len;
	return;
}

/* A fragment's key in bpfipt_ct_frag. */
static __always_inline void ct_frag_key(struct ct_frag_key *fk, const struct pkt *p)
{
	__builtin_memset(fk, 0, sizeof(*fk));
	if (p->family == 6) {
		__builtin_memcpy(fk->saddr, p->saddr6, sizeof(fk->saddr));
		__builtin_memcpy(fk->daddr, p->daddr6, sizeof(fk->daddr));
		fk->id = p->ipid6;
		fk->family = 6;
	} else {
		fk->saddr[0] = p->saddr;
		fk->daddr[0] = p->daddr;
		fk->id = p->ipid;
		fk->family = 4;
	}
	fk->proto = p->proto;
}

/*
 * The packet's state, and the update of an existing connection (update: false
 * on lo ingress, where the packet was tracked at egress). Leaves sc->ct_create
 * set when the packet opens a connection that bpfipt_ct_confirm() writes if the
 * packet is accepted. A global function: verified once, on its own.
 */
__noinline int bpfipt_ct_track(struct scratch *sc, __u32 update)
{
	struct ct_frag_key fk;
	struct ct_result *fr;
	void *frags;
	__u32 zero = 0;
	struct pkt *p;

	if (!sc)
		return 0;
	p = &sc->p;
	sc->ct_create = 0;
	__builtin_memset(&p->ct, 0, sizeof(p->ct));	/* INVALID */
	if (p->frag) {
		ct_frag_key(&fk, p);
		frags = bpf_map_lookup_elem(&bpfipt_ctf_slot, &zero);
		fr = frags ? bpf_map_lookup_elem(frags, &fk) : NULL;
		if (fr)
			p->ct = *fr;
		return 0;
	}
	/* A call site per family: each of its map calls then sees one table, which
	 * the verifier inlines (calls that see both tables go through the map's
	 * ops, ~20 ns a packet: docs/conntrack.md). */
	if (p->family == 6)
		ct_track(sc, update, true);
	else
		ct_track(sc, update, false);
	if (p->mf) {
		ct_frag_key(&fk, p);
		frags = bpf_map_lookup_elem(&bpfipt_ctf_slot, &zero);
		if (frags)
			bpf_map_update_elem(frags, &fk, &p->ct, BPF_ANY);
	}
	return 0;
}

/* The packet was accepted: write the connection it opens. */
__noinline int bpfipt_ct_confirm(struct scratch *sc)
{
	struct bpfipt_ct_entry *n;
	struct bpfipt_ct_conf *cf;
	__u32 zero = 0, ti;
	void *tab;
	__u64 now;

	if (!sc || !sc->ct_create)
		return 0;
	cf = bpf_map_lookup_elem(&bpfipt_ct_conf, &zero);
	if (!cf)
		return 0;
	n = &sc->cte;
	__builtin_memset(n, 0, sizeof(*n));
	now = bpf_ktime_get_coarse_ns();
	switch (sc->p.proto) {
	case IPPROTO_TCP:
		ti = sc->ct_tcp;
		n->tcp_state = ti;
		if (ti == BPFIPT_TCP_ESTABLISHED)	/* picked up: unreplied */
			ti = BPFIPT_CTT_TCP_UNACK;
		break;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE_:
		ti = BPFIPT_CTT_UDP;
		break;
	case IPPROTO_ICMP:
		ti = BPFIPT_CTT_ICMP;
		break;
	case IPPROTO_ICMPV6_:
		ti = BPFIPT_CTT_ICMPV6;
		break;
	case IPPROTO_GRE_:
		ti = BPFIPT_CTT_GRE;
		break;
	default:
		ti = BPFIPT_CTT_GENERIC;
	}
	n->expires = now + ct_timeout(cf, ti);
	n->start = now;
	n->orig = sc->ct_side & 1;
	n->status = BPFIPT_CTS_CONFIRMED;
	n->packets[0] = 1;
	n->bytes[0] = sc->p.len;
	/* a call site per family, as in bpfipt_ct_track() */
	if (sc->p.family == 6) {
		tab = ct_table(true);
		if (tab)
			bpf_map_update_elem(tab, &sc->ctk, n, BPF_ANY);
		CT_SITE(6);
	} else {
		tab = ct_table(false);
		if (tab)
			bpf_map_update_elem(tab, &sc->ctk, n, BPF_ANY);
		CT_SITE(4);
	}
	return 0;
}

#endif /* BPFIPT_MAPS_ONLY */

#endif
