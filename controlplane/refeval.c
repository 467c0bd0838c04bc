// SPDX-License-Identifier: GPL-2.0
/*
 * The reference evaluator: ipt_do_table() of the kernel on the rule model, rule
 * by rule, with the matches written after the kernel's xt_* modules. It shares no
 * code with the compiler on purpose: the two are tested against each other.
 *
 * Where the data plane knows less than the kernel (documented in compile.h):
 * limit counts as matching; conntrack and state read the packet's tracked
 * state (struct cp_packet, as conntrack/ct.bpf.h gives it); a tcp/udp/multiport/icmp match
 * on a packet whose header is missing does not match (the kernel would hotdrop).
 */
#include "compile.h"
#include "ext.h"
#include "proto_ext.h"
#include "misc_ext.h"

#include <arpa/inet.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/xt_conntrack.h>
#include <stdlib.h>
#include <string.h>

/* The name of an ifindex: all-zero for 0 and for an ifindex not in the env. */
static void if_name(const struct cp_env *env, __u32 ifindex, char out[IPT_IFNAMSIZ])
{
	memset(out, 0, IPT_IFNAMSIZ);
	if (!ifindex || !env)
		return;
	for (unsigned int i = 0; i < env->nlinks; i++) {
		if (env->links[i].ifindex == ifindex) {
			memcpy(out, env->links[i].name,
			       strnlen(env->links[i].name, IPT_IFNAMSIZ - 1));
			return;
		}
	}
}

/* iptables' xtables_parse_interface() mask, then the kernel's ifname_compare. */
static bool if_cmp(const char dev[IPT_IFNAMSIZ], const char *vianame)
{
	unsigned char mask[IPT_IFNAMSIZ];
	size_t len = strnlen(vianame, IPT_IFNAMSIZ);

	memset(mask, 0, sizeof(mask));
	if (len == 0)
		;
	else if (vianame[len - 1] == '+')
		memset(mask, 0xff, len - 1);
	else
		memset(mask, 0xff, len + 1 > IPT_IFNAMSIZ ? IPT_IFNAMSIZ : len + 1);
	for (int i = 0; i < IPT_IFNAMSIZ; i++) {
		char v = i < (int)len ? vianame[i] : 0;

		if ((dev[i] ^ v) & mask[i])
			return false;
	}
	return true;
}

#define FWINV(bool, flag) ((bool) ^ !!(ip->invflags & (flag)))

static bool ip_packet_match(const struct ipt_ip *ip, const struct cp_packet *p,
			    const char indev[IPT_IFNAMSIZ], const char outdev[IPT_IFNAMSIZ])
{
	if (FWINV((p->saddr & ip->smsk.v4) != ip->src.v4, IPT_INV_SRCIP) ||
	    FWINV((p->daddr & ip->dmsk.v4) != ip->dst.v4, IPT_INV_DSTIP))
		return false;
	if (FWINV(!if_cmp(indev, ip->iniface), IPT_INV_VIA_IN))
		return false;
	if (FWINV(!if_cmp(outdev, ip->outiface), IPT_INV_VIA_OUT))
		return false;
	if (ip->proto && FWINV(p->proto != ip->proto, IPT_INV_PROTO))
		return false;
	if (FWINV((ip->flags & IPT_F_FRAG) && !p->nonfirst_frag, IPT_INV_FRAG))
		return false;
	return true;
}

/* (a & m) != want over 16 bytes */
static bool masked_ne6(const __u8 a[16], const __u8 m[16], const __u8 want[16])
{
	for (int i = 0; i < 16; i++)
		if ((a[i] & m[i]) != want[i])
			return true;
	return false;
}

/* ip6_packet_match() of ip6_tables.c: 1 matches, 0 does not, -1 hotdrop (a rule
 * with -p, IP6T_F_PROTO, on a packet whose extension-header chain is cut). */
static int ip6_packet_match(const struct ipt_ip *ip, const struct cp_packet *p,
			    const char indev[IPT_IFNAMSIZ], const char outdev[IPT_IFNAMSIZ])
{
	if (FWINV(masked_ne6(p->saddr6, ip->smsk.b, ip->src.b), IPT_INV_SRCIP) ||
	    FWINV(masked_ne6(p->daddr6, ip->dmsk.b, ip->dst.b), IPT_INV_DSTIP))
		return 0;
	if (FWINV(!if_cmp(indev, ip->iniface), IPT_INV_VIA_IN))
		return 0;
	if (FWINV(!if_cmp(outdev, ip->outiface), IPT_INV_VIA_OUT))
		return 0;
	if (ip->flags & 0x01 /* IP6T_F_PROTO */) {
		if (p->cut)
			return -1;
		if (ip->proto == p->proto)
			return !(ip->invflags & IPT_INV_PROTO);
		if (ip->proto != 0 && !(ip->invflags & IPT_INV_PROTO))
			return 0;
	}
	return 1;
}

static bool port_match(__u16 min, __u16 max, __u16 port, bool invert)
{
	return (port >= min && port <= max) ^ invert;
}

static bool multiport_match(const struct ipt_multiport_info *m, __u16 src, __u16 dst)
{
	for (unsigned int i = 0; i < m->count; i++) {
		__u16 s = m->ports[i], e = s;

		if (m->pflags[i])
			e = m->ports[++i];
		switch (m->flags) {
		case IPT_MPORT_SOURCE:
			if (src >= s && src <= e)
				return !m->invert;
			break;
		case IPT_MPORT_DESTINATION:
			if (dst >= s && dst <= e)
				return !m->invert;
			break;
		case IPT_MPORT_EITHER:
			if ((src >= s && src <= e) || (dst >= s && dst <= e))
				return !m->invert;
			break;
		}
	}
	return m->invert;
}

/* xt_conntrack's state bit of the packet: INVALID without a connection, else
 * the bit of its ctinfo (no NAT: never SNAT/DNAT). */
static __u16 ct_statebit(const struct cp_packet *p)
{
	switch (p->ctstate) {
	case BPFIPT_CT_NEW: return XT_CONNTRACK_STATE_BIT(IP_CT_NEW);
	case BPFIPT_CT_ESTABLISHED: return XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED);
	case BPFIPT_CT_RELATED: return XT_CONNTRACK_STATE_BIT(IP_CT_RELATED);
	case BPFIPT_CT_UNTRACKED: return XT_CONNTRACK_STATE_UNTRACKED;
	default: return XT_CONNTRACK_STATE_INVALID;
	}
}

/* conntrack_mt() of xt_conntrack.c (revision 3), on the model's data. */
static bool conntrack_mt(const struct ipt_conntrack_info *d, const struct cp_packet *p)
{
	__u16 mf = d->match_flags, inv = d->invert_flags;
	/* without NAT the reply tuple is the original one reversed */
	__be32 rsrc = p->ct_odst, rdst = p->ct_osrc;
	__u16 rsport = p->ct_odport, rdport = p->ct_osport;

#define FAILS(flag, cond) ((mf & (flag)) && (!!(cond) ^ !(inv & (flag))))
	if (FAILS(XT_CONNTRACK_STATE, d->state_mask & ct_statebit(p)))
		return false;
	if (!p->has_ct)
		return mf & XT_CONNTRACK_STATE;
	if ((mf & XT_CONNTRACK_DIRECTION) && ((p->ctdir == 0) ^ !(inv & XT_CONNTRACK_DIRECTION)))
		return false;
	if (FAILS(XT_CONNTRACK_ORIGSRC, ((p->ct_osrc ^ d->origsrc_addr) & d->origsrc_mask) == 0) ||
	    FAILS(XT_CONNTRACK_ORIGDST, ((p->ct_odst ^ d->origdst_addr) & d->origdst_mask) == 0) ||
	    FAILS(XT_CONNTRACK_REPLSRC, ((rsrc ^ d->replsrc_addr) & d->replsrc_mask) == 0) ||
	    FAILS(XT_CONNTRACK_REPLDST, ((rdst ^ d->repldst_addr) & d->repldst_mask) == 0))
		return false;
	if (FAILS(XT_CONNTRACK_PROTO, p->ct_proto == d->l4proto))
		return false;
	if (FAILS(XT_CONNTRACK_ORIGSRC_PORT, p->ct_osport >= d->origsrc_port[0] &&
		  p->ct_osport <= d->origsrc_port[1]) ||
	    FAILS(XT_CONNTRACK_ORIGDST_PORT, p->ct_odport >= d->origdst_port[0] &&
		  p->ct_odport <= d->origdst_port[1]) ||
	    FAILS(XT_CONNTRACK_REPLSRC_PORT, rsport >= d->replsrc_port[0] &&
		  rsport <= d->replsrc_port[1]) ||
	    FAILS(XT_CONNTRACK_REPLDST_PORT, rdport >= d->repldst_port[0] &&
		  rdport <= d->repldst_port[1]))
		return false;
	if (FAILS(XT_CONNTRACK_STATUS, d->status_mask & p->ctstatus))
		return false;
	if (FAILS(XT_CONNTRACK_EXPIRES, p->ct_expire >= d->expires[0] &&
		  p->ct_expire <= d->expires[1]))
		return false;
#undef FAILS
	return true;
}

static bool match_one(const struct ipt_match *m, const struct cp_packet *p)
{
	const char *name = m->ext->name;
	bool frag = p->nonfirst_frag;

	if (!strcmp(name, "tcp")) {
		const struct ipt_tcp_info *d = m->data;

		if (frag || !p->has_tcp || !p->has_ports)
			return false;
		if (!port_match(d->spts[0], d->spts[1], p->sport, d->invflags & IPT_TCP_INV_SRCPT))
			return false;
		if (!port_match(d->dpts[0], d->dpts[1], p->dport, d->invflags & IPT_TCP_INV_DSTPT))
			return false;
		if ((((p->tcpflags & d->flg_mask) == d->flg_cmp) ^
		     !!(d->invflags & IPT_TCP_INV_FLAGS)) == 0)
			return false;
		return true;	/* --tcp-option: refused by the compiler */
	}
	if (!strcmp(name, "udp")) {
		const struct ipt_udp_info *d = m->data;

		if (frag || !p->has_ports)
			return false;
		return port_match(d->spts[0], d->spts[1], p->sport, d->invflags & IPT_UDP_INV_SRCPT) &&
		       port_match(d->dpts[0], d->dpts[1], p->dport, d->invflags & IPT_UDP_INV_DSTPT);
	}
	if (!strcmp(name, "multiport")) {
		if (frag || !p->has_ports)
			return false;
		return multiport_match(m->data, p->sport, p->dport);
	}
	if (!strcmp(name, "icmp") || !strcmp(name, "icmp6")) {
		const struct ipt_icmp_info *d = m->data;

		if (frag || !p->has_icmp)
			return false;
		/* type 0xFF is any for icmp only: icmp6 has no "any" */
		bool any = d->type == 0xFF && !strcmp(name, "icmp");

		return (any || (p->icmp_type == d->type && p->icmp_code >= d->code[0] &&
				p->icmp_code <= d->code[1])) ^ !!d->invert;
	}
	if (!strcmp(name, "iprange") && p->family == 6) {
		const struct iprange6_data *d = m->data;

		if (d->v4.flags & IPR_SRC) {
			bool in = memcmp(p->saddr6, d->src_min.b, 16) >= 0 &&
				  memcmp(p->saddr6, d->src_max.b, 16) <= 0;

			if (!(in ^ !!(d->v4.flags & IPR_SRC_INV)))
				return false;
		}
		if (d->v4.flags & IPR_DST) {
			bool in = memcmp(p->daddr6, d->dst_min.b, 16) >= 0 &&
				  memcmp(p->daddr6, d->dst_max.b, 16) <= 0;

			if (!(in ^ !!(d->v4.flags & IPR_DST_INV)))
				return false;
		}
		return true;
	}
	if (!strcmp(name, "iprange")) {
		const struct iprange_data *d = m->data;

		if (d->flags & IPR_SRC) {
			__u32 a = ntohl(p->saddr);
			bool in = a >= d->src_min && a <= d->src_max;

			if (!(in ^ !!(d->flags & IPR_SRC_INV)))
				return false;
		}
		if (d->flags & IPR_DST) {
			__u32 a = ntohl(p->daddr);
			bool in = a >= d->dst_min && a <= d->dst_max;

			if (!(in ^ !!(d->flags & IPR_DST_INV)))
				return false;
		}
		return true;
	}
	if (!strcmp(name, "length")) {
		const struct length_data *d = m->data;

		return (p->len >= d->min && p->len <= d->max) ^ !!d->invert;
	}
	if (!strcmp(name, "mark")) {
		const struct mark_data *d = m->data;

		return ((p->mark & d->mask) == d->mark) ^ !!d->invert;
	}
	if (!strcmp(name, "mac")) {
		const struct mac_data *d = m->data;

		if (!p->has_mac)
			return false;
		return (memcmp(p->mac, d->addr, 6) == 0) ^ !!d->invert;
	}
	if (!strcmp(name, "state")) {
		const struct ipt_state_info *d = m->data;

		return !!(d->state_mask & ct_statebit(p)) ^ !!d->invert;
	}
	if (!strcmp(name, "conntrack"))
		return conntrack_mt(m->data, p);
	if (!strcmp(name, "addrtype")) {
		const struct addrtype_data *d = m->data;

		return cp_addrtype_ok(d->source, d->dest, (__u8)d->flags, p);
	}
	/* limit: matches (see compile.h); comment */
	return true;
}

/* 1 matches, 0 does not, -1 hotdrop (IPv6) */
static int rule_match(const struct ipt_rule *r, const struct cp_packet *p,
		      const char indev[IPT_IFNAMSIZ], const char outdev[IPT_IFNAMSIZ])
{
	int m = p->family == 6 ? ip6_packet_match(&r->ip, p, indev, outdev) :
				 ip_packet_match(&r->ip, p, indev, outdev);

	if (m <= 0)
		return m;
	for (unsigned int i = 0; i < r->nmatches; i++)
		if (!match_one(&r->matches[i], p))
			return 0;
	return 1;
}

static void count(struct cp_trace *tr, __u32 counter)
{
	if (tr->ncounted < CP_TRACE_MAX)
		tr->counted[tr->ncounted] = counter;
	tr->ncounted++;
}

#define REF_STACK 1024
#define REF_STEPS 10000000u

int cp_ref_eval(const struct ipt_table *t, const struct cp_env *env, enum bpfipt_chain c,
		const struct cp_packet *p, struct cp_trace *tr)
{
	static const char *const names[BPFIPT_NCHAINS] = { "INPUT", "FORWARD", "OUTPUT" };
	char indev[IPT_IFNAMSIZ], outdev[IPT_IFNAMSIZ];
	unsigned int nrules = 0, *base = calloc(t->nchains + 1, sizeof(*base));
	struct { int chain; unsigned int rule; } *stack = malloc(REF_STACK * sizeof(*stack));
	int bc = ipt_chain_index(t, names[c]), ci;
	unsigned int sp = 0, ri = 0;
	int rc = -1;

	tr->verdict = BPFIPT_V_DROP;
	tr->ncounted = 0;
	if (!base || !stack || bc < 0)
		goto out;
	for (unsigned int i = 0; i < t->nchains; i++) {
		base[i] = nrules;
		nrules += t->chains[i]->nrules;
	}
	if_name(env, p->iif, indev);
	if_name(env, p->oif, outdev);

	ci = bc;
	for (unsigned int steps = 0; steps < REF_STEPS; steps++) {
		const struct ipt_chain *ch = t->chains[ci];

		if (ri >= ch->nrules) {
			/* end of chain: the policy of a builtin one, or the implicit RETURN */
			if (ch->builtin || sp == 0)
				goto policy;
			sp--;
			ci = stack[sp].chain;
			ri = stack[sp].rule + 1;
			continue;
		}
		const struct ipt_rule *r = ch->rules[ri];
		int m = rule_match(r, p, indev, outdev);

		if (m < 0) {
			/* hotdrop: dropped, nothing counted */
			tr->verdict = BPFIPT_V_DROP;
			rc = 0;
			goto out;
		}
		if (!m) {
			ri++;
			continue;
		}
		count(tr, base[ci] + ri);
		switch (r->tkind) {
		case IPT_T_NONE:
			ri++;
			break;
		case IPT_T_VERDICT:
			if (r->verdict == IPT_V_ACCEPT || r->verdict == IPT_V_DROP) {
				tr->verdict = r->verdict == IPT_V_ACCEPT ? BPFIPT_V_ACCEPT
									 : BPFIPT_V_DROP;
				rc = 0;
				goto out;
			}
			/* RETURN */
			if (sp == 0)
				goto policy;
			sp--;
			ci = stack[sp].chain;
			ri = stack[sp].rule + 1;
			break;
		case IPT_T_JUMP:
		case IPT_T_GOTO: {
			int target = ipt_chain_index(t, r->chain);

			if (target < 0)
				goto out;
			if (r->tkind == IPT_T_JUMP) {
				if (sp == REF_STACK)
					goto out;
				stack[sp].chain = ci;
				stack[sp].rule = ri;
				sp++;
			}
			ci = target;
			ri = 0;
			break;
		}
		case IPT_T_EXT:
			if (!strcmp(r->target.ext->name, "REJECT")) {
				tr->verdict = BPFIPT_V_REJECT;
				rc = 0;
				goto out;
			}
			ri++;	/* LOG, NFLOG, TCPMSS: XT_CONTINUE */
			break;
		default:
			goto out;
		}
	}
	goto out;	/* a loop */
policy:
	count(tr, nrules + c);
	tr->verdict = t->chains[bc]->policy == IPT_V_DROP ? BPFIPT_V_DROP : BPFIPT_V_ACCEPT;
	rc = 0;
out:
	free(base);
	free(stack);
	return rc;
}
