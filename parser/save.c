// SPDX-License-Identifier: GPL-2.0
/* iptables-save / iptables -S text, in iptables-legacy's order and spelling. */
#include "save.h"
#include "ext.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* A mask as iptables-save prints it: prefix length when contiguous, else dotted. */
static void save_mask(struct strbuf *sb, __be32 mask)
{
	__u32 h = ntohl(mask);

	if (h == 0xffffffffu) {
		sb_adds(sb, "32");
		return;
	}
	for (int i = 31; i >= 0; i--)
		if (h == (__u32)(0xfffffffeu << (31 - i))) {
			sb_add_u64(sb, (unsigned int)i);
			return;
		}
	sb_add_ipv4(sb, &mask);
}

/* A chain name: as is, or quoted in the state when iptables-save's bare form
 * would not read back (empty, blanks, quotes: -E accepts such names). */
static void save_chain_name(struct strbuf *sb, const char *name, bool lossless)
{
	if (lossless && (!*name || name[strcspn(name, " \t\"'\\")]))
		ipt_save_string(sb, name);
	else
		sb_adds(sb, name);
}

static void save_addr(struct strbuf *sb, char letter, const union ipt_addr *addr,
		      const union ipt_addr *mask, bool invert)
{
	bool v6 = ipt_af == AF_INET6;

	if (v6 ? ipt_addr6_zero(mask) && !invert : !mask->v4 && !invert && !addr->v4)
		return;
	if (invert)
		sb_adds(sb, " !");
	sb_adds(sb, " -");
	sb_addc(sb, letter);
	sb_addc(sb, ' ');
	if (v6) {
		/* ip6tables-save: the address, then "/N" or the mask in address form */
		ipt_add_addr6(sb, addr);
		sb_addc(sb, '/');
		ipt_add_mask6(sb, mask);
		return;
	}
	sb_add_ipv4(sb, &addr->v4);
	sb_addc(sb, '/');
	save_mask(sb, mask->v4);
}

static void save_iface(struct strbuf *sb, char letter, const char *iface, bool invert,
		       bool lossless)
{
	if (!iface[0])
		return;
	/* "+" alone matches every interface: iptables keeps no mask and saves nothing */
	if (!lossless && !strcmp(iface, "+"))
		return;
	sb_addf(sb, "%s -%c ", invert ? " !" : "", letter);
	/* iptables-save prints odd names (with spaces) as they are; the state quotes */
	if (lossless && iface[strcspn(iface, " \t\"'\\")])
		ipt_save_string(sb, iface);
	else
		sb_adds(sb, iface);
}

static void save_rule(struct strbuf *sb, const char *chain, const struct ipt_rule *r,
		      bool counters, bool lossless)
{
	const struct ipt_ip *ip = &r->ip;

	sb_adds(sb, "-A ");
	save_chain_name(sb, chain, lossless);
	save_addr(sb, 's', &ip->src, &ip->smsk, ip->invflags & IPT_INV_SRCIP);
	save_addr(sb, 'd', &ip->dst, &ip->dmsk, ip->invflags & IPT_INV_DSTIP);
	save_iface(sb, 'i', ip->iniface, ip->invflags & IPT_INV_VIA_IN, lossless);
	save_iface(sb, 'o', ip->outiface, ip->invflags & IPT_INV_VIA_OUT, lossless);
	if (ip->proto) {
		const char *name = ipt_proto_to_name(ip->proto, false);

		if (ip->invflags & IPT_INV_PROTO)
			sb_adds(sb, " !");
		if (name)
			sb_addf(sb, " -p %s", name);
		else
			sb_addf(sb, " -p %u", ip->proto);
	}
	/* (family 6: flags holds IP6T_F_PROTO, ip6tables has no -f) */
	if (ipt_af != AF_INET6 && (ip->flags & IPT_F_FRAG))
		sb_addf(sb, "%s -f", ip->invflags & IPT_INV_FRAG ? " !" : "");
	for (unsigned int i = 0; i < r->nmatches; i++) {
		const struct ipt_match *m = &r->matches[i];

		sb_addf(sb, " -m %s", m->ext->name);
		m->ext->save(sb, m->data, ip);
	}
	if (counters)
		sb_addf(sb, " -c %llu %llu", (unsigned long long)r->pcnt,
			(unsigned long long)r->bcnt);
	switch (r->tkind) {
	case IPT_T_VERDICT:
		sb_adds(sb, " -j ");
		sb_adds(sb, ipt_verdict_name(r->verdict));
		break;
	case IPT_T_JUMP:
		sb_adds(sb, " -j ");
		save_chain_name(sb, r->chain, lossless);
		break;
	case IPT_T_GOTO:
		sb_adds(sb, " -g ");
		save_chain_name(sb, r->chain, lossless);
		break;
	case IPT_T_EXT:
		sb_addf(sb, " -j %s", r->target.ext->name);
		r->target.ext->save(sb, r->target.data, ip);
		break;
	default:
		break;
	}
}

void ipt_save_rule(struct strbuf *sb, const char *chain, const struct ipt_rule *r,
		   bool counters)
{
	save_rule(sb, chain, r, counters, false);
}

static void list_chain(struct strbuf *sb, const struct ipt_chain *c, bool counters)
{
	if (c->builtin) {
		sb_addf(sb, "-P %s %s", c->name, ipt_verdict_name(c->policy));
		if (counters)
			sb_addf(sb, " -c %llu %llu", (unsigned long long)c->pcnt,
				(unsigned long long)c->bcnt);
		sb_addc(sb, '\n');
	} else {
		sb_addf(sb, "-N %s\n", c->name);
	}
}

int ipt_save_list_rules(struct strbuf *sb, const struct ipt_table *t, const char *chain,
			unsigned int rulenum, bool counters)
{
	const struct ipt_chain *only = NULL;

	if (chain && !(only = ipt_chain_find(t, chain)))
		return -1;
	if (only && rulenum) {
		if (rulenum > only->nrules)
			return -2;
		ipt_save_rule(sb, only->name, only->rules[rulenum - 1], counters);
		sb_addc(sb, '\n');
		return 0;
	}
	/* policies and chain names first, then the rules chain by chain */
	for (unsigned int i = 0; i < t->nchains; i++)
		if (!only || t->chains[i] == only)
			list_chain(sb, t->chains[i], counters);
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i];

		if (only && c != only)
			continue;
		for (unsigned int j = 0; j < c->nrules; j++) {
			ipt_save_rule(sb, c->name, c->rules[j], counters);
			sb_addc(sb, '\n');
		}
	}
	return 0;
}

static void save_table(struct strbuf *sb, const struct ipt_table *t, bool counters,
		       bool lossless)
{
	sb_adds(sb, "*filter\n");
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i];

		sb_addc(sb, ':');
		save_chain_name(sb, c->name, lossless);
		sb_addf(sb, " %s [%llu:%llu]\n",
			c->builtin ? ipt_verdict_name(c->policy) : "-",
			c->builtin ? (unsigned long long)c->pcnt : 0ULL,
			c->builtin ? (unsigned long long)c->bcnt : 0ULL);
	}
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i];

		for (unsigned int j = 0; j < c->nrules; j++) {
			const struct ipt_rule *r = c->rules[j];

			if (counters) {
				sb_addc(sb, '[');
				sb_add_u64(sb, r->pcnt);
				sb_addc(sb, ':');
				sb_add_u64(sb, r->bcnt);
				sb_adds(sb, "] ");
			}
			save_rule(sb, c->name, r, false, lossless);
			sb_addc(sb, '\n');
		}
	}
	sb_adds(sb, "COMMIT\n");
}

void ipt_save_table(struct strbuf *sb, const struct ipt_table *t, bool counters)
{
	save_table(sb, t, counters, false);
}

bool ipt_save_lossless;

void ipt_save_table_state(struct strbuf *sb, const struct ipt_table *t)
{
	ipt_save_lossless = true;
	save_table(sb, t, true, true);
	ipt_save_lossless = false;
}
