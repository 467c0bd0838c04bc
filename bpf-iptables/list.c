// SPDX-License-Identifier: GPL-2.0
/*
 * `iptables -L`: the rule listing, byte-identical to iptables-legacy v1.8.9.
 *
 * Every rule below was measured on the live iptables-legacy 1.8.9 (see the golden text in
 * test/unit/test_list.c); the C-like formats are the widths iptables prints with.
 *
 * Chain header (first line of a chain)
 *   builtin:        "Chain INPUT (policy ACCEPT)"
 *   builtin, -v:    "Chain INPUT (policy ACCEPT 123M packets, 988G bytes)"
 *                   the counters in the compact form of num() below but without padding
 *                   ("%llu ", "%lluK ", ...); with -x the exact value.
 *   user chain:     "Chain NAME (N references)"  (N counts -j and -g, also from
 *                   the chain itself), with or without -v.
 * Column header (second line), pieces concatenated:
 *   --line-numbers  "%-4s " "num"
 *   -v              "%5s %5s " "pkts" "bytes"        (-x: "%8s %10s ")
 *                   "%-9s " "target", " prot ", "opt"
 *   -v              " %-6s " "in", "%-6s " "out"
 *                   " %-19s " "source", " %-19s " "destination"
 * Rule line, pieces concatenated:
 *   --line-numbers  "%-4u " rule number (1-based; wider numbers just push the line)
 *   -v              num(pcnt) num(bcnt):
 *                     -x:              "%8llu " (both: the 10-wide bytes header is not
 *                                      matched by the values; iptables' own quirk)
 *                     <= 99999:        "%5llu "
 *                     else n = (n + 500) / 1000 with unit K, M, G, then T for the rest:
 *                     the first n <= 9999 prints "%4llu<unit> " ("100K", "9999K", "10M").
 *                     The +500 wraps for values near 2^64 ("0K"): iptables does the same.
 *                   "%-9s " target: ACCEPT/DROP/RETURN, the chain of -j or -g, the
 *                     extension target's name, "" without -j. Longer names are not cut.
 *                   '!' or ' ' (protocol inverted), then the protocol as "%-4s ":
 *                     -n: always the number ("0", "6", "17").
 *                     else: 0 is "all"; then getprotobynumber() (/etc/protocols, so
 *                     41 is "ipv6", 58 "ipv6-icmp"); then libxtables' own table; else the
 *                     number.
 *                   opt: "--", "-f" (-f), "!f" (! -f), then ' '.
 *   -v              " %-6s " in, "%-6s " out: the interface as typed ("eth0", "veth+"),
 *                     '!' prefixed when inverted; no interface: "*" with -n, "any" without.
 *                   '!' or ' ' (inverted), "%-19s " source; the same for destination.
 *                     (bpf-ip6tables: inet_ntop's text, the suffix "" for /128, "/N"
 *                     or "/MASK" in address form; "anywhere" when the address is ::,
 *                     names by getnameinfo(), as ip6tables 1.8.9.)
 *                     -n: "a.b.c.d" + mask suffix; else mask 0 is "anywhere", otherwise
 *                     gethostbyaddr(), then getnetbyaddr(), then the numeric address,
 *                     + mask suffix. Mask suffix: "" for /32, "/N" for a prefix mask (also
 *                     "/0": "0.0.0.0/0"), "/a.b.c.d" otherwise ("10.0.12.0/255.0.255.0").
 *   -g              "[goto] "
 *                   each match's print() in order, then the target extension's print();
 *                     each piece starts with its own space, so the text after the
 *                     destination column is "%-19s " + " tcp dpt:22": two spaces after a
 *                     full-width column ("[goto]  tcp dpt:80" with -g).
 *                     A match without print() shows "NAME " as iptables does.
 *                   "\n"
 * Listing
 *   all chains:     the chains in table order, "\n" before every chain but the first.
 *   -L CHAIN:       that chain only; unknown chain: error, nothing printed.
 *   -L CHAIN N:     rule N's line alone (no header lines); nothing when N > rule count.
 */
#include "list.h"
#include "ext.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

/* libxtables' fallback protocol names (xtables_chain_protos), after /etc/protocols. */
static const struct {
	const char *name;
	__u16 num;
} chain_protos[] = {
	{ "tcp", 6 },	  { "sctp", 132 }, { "udp", 17 },     { "udplite", 136 },
	{ "icmp", 1 },	  { "ipv6-icmp", 58 }, { "icmpv6", 58 }, { "esp", 50 },
	{ "ah", 51 },	  { "mobility-header", 135 }, { "ipv6-mh", 135 }, { "mh", 135 },
	{ "all", 0 },
};

static ipt_list_namer_fn namer;
static ipt_list_namer6_fn namer6;

void ipt_list_set_namer(ipt_list_namer_fn fn)
{
	namer = fn;
}

void ipt_list_set_namer6(ipt_list_namer6_fn fn)
{
	namer6 = fn;
}

/* ip6tables' xtables_ip6addr_to_anyname: getnameinfo() without NI_NAMEREQD, so
 * an address without a name comes back numeric (NULL here: the caller prints
 * it numeric the same way). */
static const char *libc_namer6(const union ipt_addr *addr)
{
	static char host[NI_MAXHOST];
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };

	memcpy(&sa.sin6_addr, addr->b, 16);
	if (getnameinfo((const struct sockaddr *)&sa, sizeof(sa), host, sizeof(host) - 1,
			NULL, 0, 0))
		return NULL;
	return host;
}

static const char *libc_namer(__be32 addr)
{
	struct in_addr in = { .s_addr = addr };
	struct hostent *h = gethostbyaddr(&in, sizeof(in), AF_INET);

	if (h && h->h_name)
		return h->h_name;
	struct netent *n = getnetbyaddr(ntohl(addr), AF_INET);
	if (n && n->n_name)
		return n->n_name;
	return NULL;
}

/*
 * Reverse lookups are slow (DNS) and a ruleset repeats its addresses: one listing asks
 * the resolver once per distinct address. The answers are those iptables would get.
 */
struct name_cache {
	struct name_entry {
		union ipt_addr addr;	/* IPv4 in .v4 */
		char *name;	/* NULL: no name */
	} *e;
	size_t n, cap;
};

static const char *cached_name(struct name_cache *nc, const union ipt_addr *addr)
{
	for (size_t i = 0; i < nc->n; i++)
		if (!memcmp(&nc->e[i].addr, addr, sizeof(*addr)))
			return nc->e[i].name;

	const char *name = ipt_af == AF_INET6 ? (namer6 ? namer6(addr) : libc_namer6(addr)) :
			   namer ? namer(addr->v4) : libc_namer(addr->v4);
	if (nc->n == nc->cap) {
		size_t cap = nc->cap ? nc->cap * 2 : 16;
		struct name_entry *e = realloc(nc->e, cap * sizeof(*e));

		if (!e)
			return name;	/* no room to remember: still answer */
		nc->e = e;
		nc->cap = cap;
	}
	nc->e[nc->n].addr = *addr;
	nc->e[nc->n].name = name ? strdup(name) : NULL;
	return nc->e[nc->n++].name;
}

static void name_cache_free(struct name_cache *nc)
{
	for (size_t i = 0; i < nc->n; i++)
		free(nc->e[i].name);
	free(nc->e);
	nc->e = NULL;
	nc->n = nc->cap = 0;
}

struct list_ctx {
	struct strbuf *sb;
	const struct ipt_table *t;
	unsigned int fmt;
	struct name_cache names;
	unsigned int *refs;	/* by chain index, when every chain is listed */
};

static bool has(const struct list_ctx *c, unsigned int f)
{
	return c->fmt & f;
}

/* Counters in a rule line (xtables_print_num in table mode). */
static void add_num(struct strbuf *sb, __u64 v, bool exact)
{
	static const char units[] = "KMG";
	unsigned long long n = v;

	if (exact) {
		sb_addf(sb, "%8llu ", n);
		return;
	}
	if (n <= 99999) {
		sb_addf(sb, "%5llu ", n);
		return;
	}
	for (int i = 0; i < 3; i++) {
		n = (n + 500) / 1000;
		if (n <= 9999) {
			sb_addf(sb, "%4llu%c ", n, units[i]);
			return;
		}
	}
	n = (n + 500) / 1000;
	sb_addf(sb, "%4lluT ", n);
}

/* Counters in the chain header: the same units, no padding. */
static void add_num_plain(struct strbuf *sb, __u64 v, bool exact)
{
	static const char units[] = "KMG";
	unsigned long long n = v;

	if (exact || n <= 99999) {
		sb_addf(sb, "%llu ", n);
		return;
	}
	for (int i = 0; i < 3; i++) {
		n = (n + 500) / 1000;
		if (n <= 9999) {
			sb_addf(sb, "%llu%c ", n, units[i]);
			return;
		}
	}
	n = (n + 500) / 1000;
	sb_addf(sb, "%lluT ", n);
}

static void add_header(struct list_ctx *c, const struct ipt_chain *ch)
{
	struct strbuf *sb = c->sb;
	bool exact = has(c, IPT_FMT_EXACT);

	sb_addf(sb, "Chain %s", ch->name);
	if (ch->builtin) {
		sb_addf(sb, " (policy %s", ipt_verdict_name(ch->policy));
		if (has(c, IPT_FMT_VERBOSE)) {
			sb_addc(sb, ' ');
			add_num_plain(sb, ch->pcnt, exact);
			sb_adds(sb, "packets, ");
			add_num_plain(sb, ch->bcnt, exact);
			sb_adds(sb, "bytes");
		}
		sb_adds(sb, ")\n");
	} else {
		int i = c->refs ? ipt_chain_index(c->t, ch->name) : -1;

		sb_addf(sb, " (%u references)\n", i >= 0 ? c->refs[i] : ipt_chain_refs(c->t, ch));
	}

	if (has(c, IPT_FMT_LINENUMBERS))
		sb_addf(sb, "%-4s ", "num");
	if (has(c, IPT_FMT_VERBOSE)) {
		if (exact)
			sb_addf(sb, "%8s %10s ", "pkts", "bytes");
		else
			sb_addf(sb, "%5s %5s ", "pkts", "bytes");
	}
	sb_addf(sb, "%-9s ", "target");
	sb_adds(sb, " prot opt");
	if (has(c, IPT_FMT_VERBOSE))
		sb_addf(sb, " %-6s %-6s ", "in", "out");
	sb_addf(sb, " %-19s  %-19s \n", "source", "destination");
}

static const char *target_name(const struct ipt_rule *r)
{
	switch (r->tkind) {
	case IPT_T_VERDICT:
		return ipt_verdict_name(r->verdict);
	case IPT_T_JUMP:
	case IPT_T_GOTO:
		return r->chain;
	case IPT_T_EXT:
		return r->target.ext ? r->target.ext->name : "";
	default:
		return "";
	}
}

static void add_proto(struct list_ctx *c, __u16 proto)
{
	const char *name = NULL;

	if (!has(c, IPT_FMT_NUMERIC)) {
		if (proto) {
			struct protoent *p = getprotobynumber(proto);

			if (p)
				name = p->p_name;
		}
		for (size_t i = 0; !name && i < sizeof(chain_protos) / sizeof(chain_protos[0]); i++)
			if (chain_protos[i].num == proto)
				name = chain_protos[i].name;
	}
	if (name)
		sb_addf(c->sb, "%-4s ", name);
	else
		sb_addf(c->sb, "%-4hu ", proto);
}

static void add_iface(struct list_ctx *c, const char *name, bool inv, const char *fmt)
{
	char buf[IPT_IFNAMSIZ + 2];

	snprintf(buf, sizeof(buf), "%s%.*s", inv ? "!" : "",
		 IPT_IFNAMSIZ, name[0] ? name : has(c, IPT_FMT_NUMERIC) ? "*" : "any");
	sb_addf(c->sb, fmt, buf);
}

/* An address with its mask suffix, as -L shows it (name NULL: numeric). */
static void addr_text(char *buf, size_t bufsz, __be32 addr, __be32 mask, const char *name)
{
	__u32 m = ntohl(mask);
	size_t len;

	if (name) {
		snprintf(buf, bufsz, "%s", name);
	} else {
		struct in_addr in = { .s_addr = addr };

		inet_ntop(AF_INET, &in, buf, (socklen_t)bufsz);
	}
	len = strlen(buf);

	if (m != 0xffffffffu) {
		/* A prefix mask is ones then zeros: its complement plus one is a power of two. */
		__u32 inv_m = ~m;

		if ((inv_m & (inv_m + 1)) == 0) {
			snprintf(buf + len, bufsz - len, "/%d", __builtin_popcount(m));
		} else {
			struct in_addr in = { .s_addr = mask };

			buf[len] = '/';
			inet_ntop(AF_INET, &in, buf + len + 1, (socklen_t)(bufsz - len - 1));
		}
	}
}

/* The same for IPv6 (xtables_ip6mask_to_numeric): no suffix for /128, "/N" for
 * a prefix, else "/" and the mask in address form. */
static void addr6_text(char *buf, size_t bufsz, const union ipt_addr *addr,
		       const union ipt_addr *mask, const char *name)
{
	int bits = ipt_mask6_cidr(mask);
	size_t len;

	if (name)
		snprintf(buf, bufsz, "%s", name);
	else
		inet_ntop(AF_INET6, addr->b, buf, (socklen_t)bufsz);
	len = strlen(buf);
	if (bits < 0) {
		buf[len] = '/';
		inet_ntop(AF_INET6, mask->b, buf + len + 1, (socklen_t)(bufsz - len - 1));
	} else if (bits != 128) {
		snprintf(buf + len, bufsz - len, "/%d", bits);
	}
}

/* An address as text in the family run (name NULL: numeric). */
static void any_addr_text(char *buf, size_t bufsz, const union ipt_addr *addr,
			  const union ipt_addr *mask, const char *name)
{
	if (ipt_af == AF_INET6)
		addr6_text(buf, bufsz, addr, mask, name);
	else
		addr_text(buf, bufsz, addr->v4, mask->v4, name);
}

static void add_addr(struct list_ctx *c, const union ipt_addr *addr,
		     const union ipt_addr *mask, bool inv)
{
	char buf[NI_MAXHOST + 64];
	/* "anywhere": iptables asks whether the mask is 0, ip6tables whether the
	 * address is :: ("-s ::/23" is anywhere too) */
	bool zero = ipt_af == AF_INET6 ? ipt_addr6_zero(addr) : !mask->v4;

	sb_addc(c->sb, inv ? '!' : ' ');
	if (zero && !has(c, IPT_FMT_NUMERIC)) {
		sb_addf(c->sb, "%-19s ", "anywhere");
		return;
	}
	any_addr_text(buf, sizeof(buf), addr, mask,
		      has(c, IPT_FMT_NUMERIC) ? NULL : cached_name(&c->names, addr));
	sb_addf(c->sb, "%-19s ", buf);
}

/* -f (family 4 only: in family 6 the bit is IP6T_F_PROTO, and ip6tables prints
 * "--" in the opt column) */
static bool frag(const struct ipt_ip *ip)
{
	return ipt_af != AF_INET6 && (ip->flags & IPT_F_FRAG);
}

/* The text after the address columns: [goto], the matches, the target. */
static void add_extensions(struct strbuf *sb, const struct ipt_rule *r, bool numeric)
{
	if (r->tkind == IPT_T_GOTO)
		sb_adds(sb, "[goto] ");
	for (unsigned int i = 0; i < r->nmatches; i++) {
		const struct ipt_match *m = &r->matches[i];

		if (!m->ext)
			continue;
		if (m->ext->print)
			m->ext->print(sb, m->data, &r->ip, numeric);
		else
			sb_addf(sb, "%s ", m->ext->name);
	}
	if (r->tkind == IPT_T_EXT && r->target.ext && r->target.ext->print)
		r->target.ext->print(sb, r->target.data, &r->ip, numeric);
}

void ipt_list_rule_echo(struct strbuf *sb, const struct ipt_rule *r)
{
	const struct ipt_ip *ip = &r->ip;
	const char *pname = ipt_proto_to_name(ip->proto, true);
	char buf[128];

	sb_addf(sb, "%s ", target_name(r));
	sb_addc(sb, ip->invflags & IPT_INV_PROTO ? '!' : ' ');
	if (pname)
		sb_addf(sb, "%s ", pname);
	else
		sb_addf(sb, "%hu ", ip->proto);
	sb_addf(sb, "opt %c%c ", ip->invflags & IPT_INV_FRAG ? '!' : '-',
		frag(ip) ? 'f' : '-');
	sb_addf(sb, "in %s%s ", ip->invflags & IPT_INV_VIA_IN ? "!" : "",
		ip->iniface[0] ? ip->iniface : "*");
	sb_addf(sb, "out %s%s ", ip->invflags & IPT_INV_VIA_OUT ? "!" : "",
		ip->outiface[0] ? ip->outiface : "*");
	any_addr_text(buf, sizeof(buf), &ip->src, &ip->smsk, NULL);
	sb_addf(sb, "%c%s ", ip->invflags & IPT_INV_SRCIP ? '!' : ' ', buf);
	any_addr_text(buf, sizeof(buf), &ip->dst, &ip->dmsk, NULL);
	sb_addf(sb, "%c-> %s", ip->invflags & IPT_INV_DSTIP ? '!' : ' ', buf);
	sb_adds(sb, "  ");
	add_extensions(sb, r, true);
	sb_addc(sb, '\n');
}

static void add_rule(struct list_ctx *c, const struct ipt_rule *r, unsigned int num)
{
	struct strbuf *sb = c->sb;
	const struct ipt_ip *ip = &r->ip;
	bool numeric = has(c, IPT_FMT_NUMERIC);

	if (has(c, IPT_FMT_LINENUMBERS))
		sb_addf(sb, "%-4u ", num);
	if (has(c, IPT_FMT_VERBOSE)) {
		add_num(sb, r->pcnt, has(c, IPT_FMT_EXACT));
		add_num(sb, r->bcnt, has(c, IPT_FMT_EXACT));
	}
	sb_addf(sb, "%-9s ", target_name(r));

	sb_addc(sb, ip->invflags & IPT_INV_PROTO ? '!' : ' ');
	add_proto(c, ip->proto);

	sb_addc(sb, ip->invflags & IPT_INV_FRAG ? '!' : '-');
	sb_addc(sb, frag(ip) ? 'f' : '-');
	sb_addc(sb, ' ');

	if (has(c, IPT_FMT_VERBOSE)) {
		add_iface(c, ip->iniface, ip->invflags & IPT_INV_VIA_IN, " %-6s ");
		add_iface(c, ip->outiface, ip->invflags & IPT_INV_VIA_OUT, "%-6s ");
	}

	add_addr(c, &ip->src, &ip->smsk, ip->invflags & IPT_INV_SRCIP);
	add_addr(c, &ip->dst, &ip->dmsk, ip->invflags & IPT_INV_DSTIP);

	add_extensions(sb, r, numeric);
	sb_addc(sb, '\n');
}

static void add_chain(struct list_ctx *c, const struct ipt_chain *ch, unsigned int rulenum)
{
	if (!rulenum)
		add_header(c, ch);
	for (unsigned int i = 0; i < ch->nrules; i++)
		if (!rulenum || rulenum == i + 1)
			add_rule(c, ch->rules[i], i + 1);
}

int ipt_list(struct strbuf *sb, const struct ipt_table *t, const char *chain,
	     unsigned int rulenum, unsigned int fmt)
{
	struct list_ctx c = { .sb = sb, .t = t, .fmt = fmt };

	if (chain) {
		const struct ipt_chain *ch = ipt_chain_find(t, chain);

		if (!ch)
			return -1;
		add_chain(&c, ch, rulenum);
	} else {
		/* As iptables: the separating empty line comes even when only rule
		 * lines are printed (rulenum with every chain, which its CLI cannot ask). */
		c.refs = ipt_table_refs(t);
		for (unsigned int i = 0; i < t->nchains; i++) {
			if (i)
				sb_addc(sb, '\n');
			add_chain(&c, t->chains[i], rulenum);
		}
		free(c.refs);
	}
	name_cache_free(&c.names);
	return 0;
}
