// SPDX-License-Identifier: GPL-2.0
/*
 * The IPv6 data plane on the real kernel (bpf_prog_test_run of bpfipt_test):
 * crafted IPv6 packets (extension-header chains, fragments, truncations at every
 * boundary, -p after the extension headers, ports, TCP flags, ICMPv6 types,
 * prefixes and negation, a deny-list group), the compiled-vs-reference
 * differential on random IPv6 rulesets, and IPv4 and IPv6 rulesets installed
 * together. Rules are built in C (struct ipt_rule of a family-6 table), as
 * ip6tables would give them: -p sets IP6T_F_PROTO. Needs root and BPF; never
 * skips.
 */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "compile.h"
#include "ext.h"
#include "loader.h"
#include "misc_ext.h"
#include "proto_ext.h"
#include "unaligned.h"

/* P6(.field = x): a field given twice on purpose (defaults, then the case's) */
#pragma GCC diagnostic ignored "-Woverride-init"

#define F_PROTO 0x01		/* IP6T_F_PROTO */
#define PASS DP_TEST_PASS
#define ACC BPFIPT_V_ACCEPT
#define DRP BPFIPT_V_DROP

/* ================================================================ rules */

static struct ipt_table *table6(void)
{
	struct ipt_table *t = NULL;

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	return t;
}

static void pfx6(const char *s, union ipt_addr *a, union ipt_addr *m)
{
	char buf[64];
	const char *sl = strchr(s, '/');
	int plen = 128;

	memset(a, 0, sizeof(*a));
	memset(m, 0, sizeof(*m));
	snprintf(buf, sizeof(buf), "%.*s", sl ? (int)(sl - s) : (int)strlen(s), s);
	if (sl)
		plen = atoi(sl + 1);
	ck_assert_msg(inet_pton(AF_INET6, buf, a->b) == 1, "%s", s);
	for (int i = 0; i < 16; i++) {
		int bits = plen - 8 * i;

		m->b[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 : (__u8)(0xff << (8 - bits));
		a->b[i] &= m->b[i];
	}
}

/* A rule: src/dst ("!" in front negates; NULL: any), proto (-1: no -p, 0: -p all). */
static struct ipt_rule *rule(const char *src, const char *dst, int proto, int verdict)
{
	struct ipt_rule *r = ipt_rule_new();

	if (src) {
		if (*src == '!') {
			r->ip.invflags |= IPT_INV_SRCIP;
			src++;
		}
		pfx6(src, &r->ip.src, &r->ip.smsk);
	}
	if (dst) {
		if (*dst == '!') {
			r->ip.invflags |= IPT_INV_DSTIP;
			dst++;
		}
		pfx6(dst, &r->ip.dst, &r->ip.dmsk);
	}
	if (proto >= 0) {
		r->ip.flags |= F_PROTO;
		r->ip.proto = (__u16)proto;
	}
	if (verdict >= 0) {
		r->tkind = IPT_T_VERDICT;
		r->verdict = verdict == ACC ? IPT_V_ACCEPT : verdict == DRP ? IPT_V_DROP : IPT_V_RETURN;
	}
	return r;
}

static void *match(struct ipt_rule *r, const char *name)
{
	const struct ipt_ext *e = ipt_ext_find(name, false);

	ck_assert_msg(e != NULL, "extension %s", name);
	return ipt_rule_add_match(r, e)->data;
}

static void tcp_ports(struct ipt_rule *r, int slo, int shi, int dlo, int dhi, int mask, int cmp)
{
	struct ipt_tcp_info *d = match(r, "tcp");

	d->spts[0] = slo;
	d->spts[1] = shi;
	d->dpts[0] = dlo;
	d->dpts[1] = dhi;
	d->flg_mask = mask;
	d->flg_cmp = cmp;
}

static void udp_ports(struct ipt_rule *r, int dlo, int dhi)
{
	struct ipt_udp_info *d = match(r, "udp");

	d->spts[1] = 65535;
	d->dpts[0] = dlo;
	d->dpts[1] = dhi;
}

/* -m icmp6 --icmpv6-type (ip6t_icmp: the payload of -m icmp) */
static void icmp6_type(struct ipt_rule *r, int type, int code)
{
	struct ipt_icmp_info *d = match(r, "icmp6");

	d->type = type;
	d->code[0] = code < 0 ? 0 : code;
	d->code[1] = code < 0 ? 255 : code;
}

static void add(struct ipt_table *t, const char *chain, struct ipt_rule *r)
{
	struct ipt_chain *c = ipt_chain_find(t, chain);

	if (!c)
		c = ipt_chain_new_user(t, chain);
	ipt_chain_insert_rule(c, c->nrules, r);
}

static struct cp_compiled *compile(const struct ipt_table *t)
{
	struct cp_compiled *cc = NULL;
	struct ipt_err err = { 0 };

	ck_assert_msg(cp_compile(t, NULL, &cc, &err) == 0, "cp_compile: %s", err.msg);
	ck_assert_int_eq(cc->family, t->family);
	return cc;
}

/* ================================================================ packets */

struct ext {
	int type;		/* 0 hbh, 43 routing, 44 fragment, 51 AH, 60 dstopts; 0 ends
				 * the list unless len is set */
	int len;		/* bytes (a multiple of 8; AH of 4), 0: the list ends */
	int fragoff;		/* fragment: offset in 8-byte units */
	int mf;
};

struct p6 {
	const char *src, *dst;
	int proto;		/* upper layer: 6, 17, 58, 50, 59, ... */
	int sport, dport, flags;
	int itype, icode;
	struct ext ext[10];
	int l4len;		/* bytes of the upper-layer header (0: full: 20 TCP, 8 others) */
	int payload;		/* bytes of payload after it */
	int plen;		/* override the payload length field (0: right) */
	int cut;		/* keep only this many bytes after Ethernet (0: all) */
	int ethertype;		/* 0: IPv6 */
	int ver;		/* 0: 6 */
};

#define P6(...) ((struct p6){ .src = "2001:db8:1::1", .dst = "2001:db8:2::2", .proto = 6, \
			      .sport = 40000, .dport = 22, .flags = 0x02, __VA_ARGS__ })

static size_t build6(const struct p6 *s, __u8 *buf, size_t cap, unsigned int *iplen)
{
	struct ethhdr *eth = (void *)buf;
	__u8 *ip = buf + ETH_HLEN, *h = ip + 40, *nhp = ip + 6;
	int l4n = s->l4len ? s->l4len : s->proto == 6 ? 20 : 8, tot;

	memset(buf, 0, cap);
	eth->h_proto = htons(s->ethertype ? s->ethertype : ETH_P_IPV6);
	eth->h_source[0] = 2;
	ip[0] = (s->ver ? s->ver : 6) << 4;
	ip[7] = 64;
	ck_assert(inet_pton(AF_INET6, s->src, ip + 8) == 1);
	ck_assert(inet_pton(AF_INET6, s->dst, ip + 24) == 1);
	for (int i = 0; i < 10 && s->ext[i].len; i++) {
		const struct ext *e = &s->ext[i];

		*nhp = e->type;
		nhp = h;
		if (e->type == 44) {
			h[2] = (e->fragoff << 3) >> 8;
			h[3] = ((e->fragoff << 3) & 0xf8) | (e->mf ? 1 : 0);
			h[4] = 0x12;
		} else if (e->type == 51) {
			h[1] = e->len / 4 - 2;
		} else {
			h[1] = e->len / 8 - 1;
		}
		h += e->len;
	}
	*nhp = s->proto;
	if (s->proto == 58) {
		h[0] = s->itype;
		h[1] = s->icode;
		h[4] = 0x12;
		h[5] = 0x34;
	} else if (s->proto != 59 && s->proto != 50) {
		h[0] = s->sport >> 8;
		h[1] = s->sport & 0xff;
		h[2] = s->dport >> 8;
		h[3] = s->dport & 0xff;
		if (s->proto == 6) {
			h[12] = 5 << 4;
			h[13] = s->flags;
		}
	}
	if (s->proto == 59)
		l4n = 0;
	tot = (int)(h - ip) + l4n + s->payload;
	ck_assert_uint_le(ETH_HLEN + tot, cap);
	ipt_st16(ip + 4, htons(s->plen ? s->plen : tot - 40));
	if (iplen)
		*iplen = (s->plen ? s->plen : tot - 40) + 40;
	return ETH_HLEN + (s->cut ? s->cut : tot);
}

/* ================================================================ running */

static struct dp_inst *inst_new(void)
{
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	int r = dp_inst_create(&in, 1u << DP_PROG_TEST, &err);

	ck_assert_msg(r == 0, "dp_inst_create: %d %s", r, err.msg);
	return in;
}

static void install(struct dp_inst *in, const struct cp_compiled *cc)
{
	struct ipt_err err = { 0 };
	int r = dp_inst_install(in, cc, NULL, 0, NULL, 0, &err);

	ck_assert_msg(r == 0, "dp_inst_install: %d %s", r, err.msg);
}

/* counters of family af's running ruleset */
static void counters(struct dp_inst *in, int af, __u64 (**c)[2], unsigned int *n)
{
	struct ipt_err err = { 0 };
	int saved = ipt_af;

	ipt_af = af;
	ck_assert_int_eq(dp_inst_counters(in, c, n, &err), 0);
	ipt_af = saved;
}

static int classify(struct dp_inst *in, const __u8 *pkt, size_t len, int chain, int iif, int oif)
{
	struct __sk_buff ctx = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int r;

	ctx.cb[0] = chain;
	ctx.cb[1] = iif;
	ctx.cb[2] = oif;
	r = bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TEST), &o);
	ck_assert_msg(r == 0, "test_run (%zu bytes): %s", len, strerror(errno));
	return o.retval;
}

struct tc6 {
	const char *what;
	struct p6 p;
	int verdict;
	int c[4];		/* counters that move by one, -1 ends */
};

#define C(...) { __VA_ARGS__, -1 }
#define NONE { -1 }
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Each case in INPUT: the verdict, and exactly the listed counters move (by one
 * packet of payload length + 40 bytes). */
static void run6(struct dp_inst *in, const struct tc6 *cs, int n)
{
	static __u8 buf[8192];

	for (int i = 0; i < n; i++) {
		const struct tc6 *t = &cs[i];
		unsigned int iplen, na, nb, want = 0, moved = 0;
		size_t len = build6(&t->p, buf, sizeof(buf), &iplen);
		__u64 (*a)[2], (*b)[2];
		int v;

		counters(in, AF_INET6, &a, &na);
		v = classify(in, buf, len, BPFIPT_INPUT, 2, 0);
		counters(in, AF_INET6, &b, &nb);
		ck_assert_msg(v == t->verdict, "case '%s': verdict %d, expected %d", t->what, v,
			      t->verdict);
		while (want < 4 && t->c[want] >= 0)
			want++;
		for (unsigned int k = 0; k < nb; k++) {
			__u64 dp = b[k][0] - a[k][0], db = b[k][1] - a[k][1];
			bool listed = false;

			if (!dp)
				continue;
			moved++;
			for (unsigned int j = 0; j < want; j++)
				listed |= t->c[j] == (int)k;
			ck_assert_msg(dp == 1 && listed, "case '%s': counter %u moved by %llu",
				      t->what, k, (unsigned long long)dp);
			ck_assert_msg(db == iplen, "case '%s': counter %u bytes %llu, expected %u",
				      t->what, k, (unsigned long long)db, iplen);
		}
		ck_assert_msg(moved == want, "case '%s': %u counters moved, expected %u", t->what,
			      moved, want);
		free(a);
		free(b);
	}
}

#define HBH(n) { 0, (n) }
#define RT(n) { 43, (n) }
#define DST(n) { 60, (n) }
#define AH(n) { 51, (n) }
#define FRAG(off, mf) { 44, 8, (off), (mf) }

/* ================================================================ tests */

START_TEST(t_ext_headers)
{
	struct ipt_table *t = table6();
	struct ipt_rule *r;
	struct cp_compiled *cc;
	struct dp_inst *in = inst_new();

	/* 0: a trusted source, no -p: judged before any -p rule */
	add(t, "INPUT", rule("2001:db8:ffff::/48", NULL, -1, ACC));
	/* 1: -p tcp --dport 22 --syn */
	r = rule(NULL, NULL, 6, ACC);
	tcp_ports(r, 0, 65535, 22, 22, 0x17, 0x02);
	add(t, "INPUT", r);
	/* 2: -p udp --dport 53 DROP */
	r = rule(NULL, NULL, 17, DRP);
	udp_ports(r, 53, 53);
	add(t, "INPUT", r);
	add(t, "INPUT", rule(NULL, NULL, 59, ACC));		/* 3: -p 59 (no next header) */
	add(t, "INPUT", rule(NULL, NULL, 50, ACC));		/* 4: -p esp */
	r = rule(NULL, NULL, 58, ACC);				/* 5: echo request */
	icmp6_type(r, 128, -1);
	add(t, "INPUT", r);
	r = rule(NULL, NULL, 58, DRP);				/* 6: -p icmpv6 ! 129 */
	icmp6_type(r, 129, 0);
	((struct ipt_icmp_info *)r->matches[0].data)->invert = 1;
	add(t, "INPUT", r);
	add(t, "INPUT", rule(NULL, NULL, 17, ACC));		/* 7: -p udp */
	ipt_chain_find(t, "INPUT")->policy = IPT_V_DROP;	/* policy: counter 8 + 0 */
	cc = compile(t);
	install(in, cc);

	const int POL = 8;
	struct tc6 cs[] = {
		{ "tcp 22", P6(), ACC, C(1) },
		{ "tcp 22, not a SYN", P6(.flags = 0x10), DRP, C(POL) },
		{ "tcp 23", P6(.dport = 23), DRP, C(POL) },
		{ "hop-by-hop, tcp", P6(.ext = { HBH(8) }), ACC, C(1) },
		{ "hbh 16, routing 24, dstopts 8, tcp", P6(.ext = { HBH(16), RT(24), DST(8) }), ACC,
		  C(1) },
		{ "dstopts 2048, tcp", P6(.ext = { DST(2048) }), ACC, C(1) },
		{ "AH, udp 53", P6(.proto = 17, .dport = 53, .ext = { AH(24) }), DRP, C(2) },
		{ "AH 12, dstopts, udp 54", P6(.proto = 17, .dport = 54, .ext = { AH(12), DST(8) }),
		  ACC, C(7) },
		{ "first fragment, tcp 22", P6(.ext = { FRAG(0, 1) }), ACC, C(1) },
		{ "hbh, first fragment, dstopts, tcp 22",
		  P6(.ext = { HBH(8), FRAG(0, 1), DST(8) }), ACC, C(1) },
		{ "non-first fragment of tcp: no ports", P6(.ext = { FRAG(100, 0) }), DRP, C(POL) },
		{ "non-first fragment of udp: -p udp matches", P6(.proto = 17, .dport = 53,
		  .ext = { FRAG(7, 1) }), ACC, C(7) },
		{ "ESP", P6(.proto = 50, .payload = 16), ACC, C(4) },
		{ "dstopts, ESP", P6(.proto = 50, .payload = 16, .ext = { DST(8) }), ACC, C(4) },
		{ "no next header", P6(.proto = 59), ACC, C(3) },
		{ "hbh, no next header", P6(.proto = 59, .ext = { HBH(8) }), ACC, C(3) },
		{ "echo request", P6(.proto = 58, .itype = 128), ACC, C(5) },
		{ "echo reply", P6(.proto = 58, .itype = 129), DRP, C(POL) },
		{ "neighbour solicitation", P6(.proto = 58, .itype = 135), DRP, C(6) },
		{ "routing, echo request", P6(.proto = 58, .itype = 128, .ext = { RT(8) }), ACC,
		  C(5) },
		{ "icmpv6 header cut short", P6(.proto = 58, .itype = 128, .l4len = 4), DRP,
		  C(POL) },
		{ "tcp header cut short: no ports (as IPv4)", P6(.l4len = 10), DRP, C(POL) },
		/* cut chains: the first -p rule drops them, nothing counted */
		{ "hbh past the payload", P6(.ext = { HBH(8) }, .plen = 1), DRP, NONE },
		{ "routing header's first byte only", P6(.ext = { RT(8) }, .plen = 1), DRP, NONE },
		{ "fragment header cut at 3 bytes", P6(.ext = { FRAG(0, 1) }, .plen = 3), DRP,
		  NONE },
		{ "second header past the payload", P6(.ext = { HBH(8), DST(8) }, .plen = 8), DRP,
		  NONE },
		{ "non-first fragment, then dstopts", P6(.ext = { FRAG(9, 0), DST(8) }), DRP, NONE },
		{ "nine extension headers", P6(.ext = { DST(8), DST(8), DST(8), DST(8), DST(8),
		  DST(8), DST(8), DST(8), DST(8) }), DRP, NONE },
		{ "eight extension headers", P6(.ext = { DST(8), DST(8), DST(8), DST(8), DST(8),
		  DST(8), DST(8), DST(8) }), ACC, C(1) },
		{ "cut, from the trusted source: rule 0 first", P6(.src = "2001:db8:ffff::9",
		  .ext = { HBH(8) }, .plen = 1), ACC, C(0) },
		{ "frame cut inside the hbh header (payload length larger)",
		  P6(.ext = { HBH(8) }, .cut = 41), DRP, NONE },
		/* not judged here */
		{ "ARP", P6(.ethertype = ETH_P_ARP), PASS, NONE },
		{ "IPv4 (no IPv4 ruleset)", P6(.ethertype = ETH_P_IP, .ver = 4), PASS, NONE },
		{ "version 4 in an IPv6 frame", P6(.ver = 4), DRP, NONE },
	};
	run6(in, cs, N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Every truncation of a chain hbh(8), routing(16), fragment, dstopts(8), tcp: the
 * payload length stops at each byte. Before the upper-layer header: cut (the -p
 * rule drops, uncounted); inside it: no ports (policy); whole: the rule. */
START_TEST(t_truncated)
{
	struct ipt_table *t = table6();
	struct ipt_rule *r = rule(NULL, NULL, 6, ACC);
	struct dp_inst *in = inst_new();
	struct cp_compiled *cc;
	static __u8 buf[512];

	tcp_ports(r, 0, 65535, 22, 22, 0, 0);
	add(t, "INPUT", rule("2001:db8:9::/48", NULL, -1, DRP));
	add(t, "INPUT", r);
	cc = compile(t);
	install(in, cc);
	for (int plen = 0; plen <= 8 + 16 + 8 + 8 + 20; plen++) {
		struct p6 s = P6(.ext = { HBH(8), RT(16), FRAG(0, 0), DST(8) }, .plen = plen);
		size_t len = build6(&s, buf, sizeof(buf), NULL);
		int want = plen < 34 ? DRP : ACC;
		__u64 (*c)[2];
		unsigned int n;

		/* payload < 34: an extension header cut (-p: hotdrop); 34..59: the
		 * chain is whole (dstopts' first 2 bytes are what the walk reads) but
		 * the tcp header is cut: no ports, the policy ACCEPTs; 60: the rule */
		len = ETH_HLEN + 40 + plen;
		ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), want);
		/* the same bytes in a longer frame (payload length says less) */
		ck_assert_int_eq(classify(in, buf, len + 30, BPFIPT_INPUT, 2, 0), want);
		counters(in, AF_INET6, &c, &n);
		ck_assert_uint_eq(c[1][0], plen >= 60 ? 2 * (plen - 59) : 0);
		ck_assert_uint_eq(c[0][0], 0);
		free(c);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

START_TEST(t_addresses)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct cp_compiled *cc;

	add(t, "INPUT", rule("2001:db8:1::1/128", NULL, -1, DRP));		/* 0 */
	add(t, "INPUT", rule("2001:db8:1::/64", "!2001:db8:2::/48", -1, DRP));	/* 1 */
	add(t, "INPUT", rule("2001:db8:1::/48", "2001:db8:2::/64", -1, ACC));	/* 2 */
	add(t, "INPUT", rule("!2001:db8::/32", NULL, -1, ACC));			/* 3 */
	add(t, "INPUT", rule("::/0", "2001:db8:2:1::/64", 17, DRP));		/* 4 */
	add(t, "INPUT", rule(NULL, "2001:db8:2::2", -1, -1));			/* 5: counter only */
	{
		/* 6: -m iprange --src-range 2001:db8:5::10-2001:db8:5::1:f -j ACCEPT */
		struct ipt_rule *r = rule(NULL, NULL, -1, ACC);
		struct iprange6_data *d = match(r, "iprange");

		d->v4.flags = IPR_SRC;
		inet_pton(AF_INET6, "2001:db8:5::10", d->src_min.b);
		inet_pton(AF_INET6, "2001:db8:5::1:f", d->src_max.b);
		add(t, "INPUT", r);
	}
	ipt_chain_find(t, "INPUT")->policy = IPT_V_DROP;			/* 7 + 0 */
	cc = compile(t);
	install(in, cc);

	struct tc6 cs[] = {
		{ "/128", P6(.src = "2001:db8:1::1"), DRP, C(0) },
		{ "/64 to the excluded /48", P6(.src = "2001:db8:1::5", .dst = "2001:db8:2::2"), ACC,
		  C(2) },
		{ "/64 elsewhere", P6(.src = "2001:db8:1::5", .dst = "2001:db8:3::2"), DRP, C(1) },
		{ "/48 not /64, to the /64", P6(.src = "2001:db8:1:2::5", .dst = "2001:db8:2::7"),
		  ACC, C(2) },
		{ "/48 not /64, to the /48 not /64", P6(.src = "2001:db8:1:2::5",
		  .dst = "2001:db8:2:5::7"), DRP, C(7) },
		{ "iprange: low end", P6(.src = "2001:db8:5::10"), ACC, C(5, 6) },
		{ "iprange: high end", P6(.src = "2001:db8:5::1:f"), ACC, C(5, 6) },
		{ "iprange: inside", P6(.src = "2001:db8:5::ff"), ACC, C(5, 6) },
		{ "iprange: below", P6(.src = "2001:db8:5::f"), DRP, C(5, 7) },
		{ "iprange: above", P6(.src = "2001:db8:5::1:10"), DRP, C(5, 7) },
		{ "outside 2001:db8::/32", P6(.src = "2001:db9::1"), ACC, C(3) },
		{ "udp to the /64 of rule 4", P6(.src = "2001:db8:7::1", .dst = "2001:db8:2:1::1",
		  .proto = 17), DRP, C(4) },
		{ "tcp to it: counter 5 then the policy", P6(.src = "2001:db8:7::1",
		  .dst = "2001:db8:2::2"), DRP, C(5, 7) },
		{ "fe80::1 to ff02::1", P6(.src = "fe80::1", .dst = "ff02::1"), ACC, C(3) },
	};
	run6(in, cs, N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A deny list of IPv6 prefixes: one group slot, counted per rule. */
START_TEST(t_group)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct cp_compiled *cc;
	char a[64];

	for (int i = 0; i < 200; i++) {
		snprintf(a, sizeof(a), "2001:db8:%x::/%d", i, i % 2 ? 48 : 64);
		add(t, "INPUT", rule(a, NULL, -1, DRP));
	}
	add(t, "INPUT", rule("2001:db8:7::/56", NULL, -1, DRP));	/* 200: inside rule 7 */
	add(t, "INPUT", rule("2001:db8::/32", NULL, -1, DRP));		/* 201 */
	cc = compile(t);
	ck_assert_uint_ge(cc->ngroups, 1);
	ck_assert_uint_lt(cc->nslots[BPFIPT_INPUT], 10);
	install(in, cc);

	struct tc6 cs[] = {
		{ "rule 0", P6(.src = "2001:db8::1"), DRP, C(0) },
		{ "rule 0, outside its /64", P6(.src = "2001:db8:0:1::1"), DRP, C(201) },
		{ "rule 7 (/48)", P6(.src = "2001:db8:7:ff::1"), DRP, C(7) },
		{ "rule 199", P6(.src = "2001:db8:c7:1::1"), DRP, C(199) },
		{ "rule 200 is shadowed by 7", P6(.src = "2001:db8:7::1"), DRP, C(7) },
		{ "none", P6(.src = "2001:db9::1"), ACC, C(202) },
	};
	run6(in, cs, N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* The folded lists' filters (bpfipt_conf.gfold_g, bpfipt_ghash()) of IPv6: a
 * list on -s of /128s, every tenth a /64 (g 64: the address's high word), then
 * one on -d of /128s, every tenth a /100 (g 100: its low word too). Addresses
 * listed, near a listed one (in its /g block) and far from all of them. */
START_TEST(t_fold_filter6)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct ipt_err err = { 0 };
	struct bpfipt_conf cf;
	struct cp_compiled *cc;
	char a[64];

	for (int i = 0; i < 100; i++) {
		if (i % 10)
			snprintf(a, sizeof(a), "2001:db8:a:%x::%x/128", i, i + 1);
		else
			snprintf(a, sizeof(a), "2001:db8:a:%x::/64", i);
		add(t, "INPUT", rule(a, NULL, -1, DRP));
	}
	for (int i = 0; i < 100; i++) {
		if (i % 10 == 3)
			snprintf(a, sizeof(a), "2001:db8:b::%x:1000:0/100", i);
		else
			snprintf(a, sizeof(a), "2001:db8:b::%x:1000:%x/128", i, i + 1);
		add(t, "INPUT", rule(NULL, a, -1, DRP));
	}
	cc = compile(t);
	install(in, cc);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert(cf.gfold[BPFIPT_INPUT][0] && cf.gfold[BPFIPT_INPUT][1]);
	ck_assert_uint_eq(cf.gfold_g[BPFIPT_INPUT][0][0], 64);	/* /64 and /128 */
	ck_assert_uint_eq(cf.gfold_g[BPFIPT_INPUT][0][1], 128);
	ck_assert_uint_eq(cf.gfold_g[BPFIPT_INPUT][1][0], 100);	/* /100 and /128 */
	ck_assert_uint_eq(cf.gfold_g[BPFIPT_INPUT][1][1], 128);
	ck_assert(cf.flags & BPFIPT_C_TBITS);
	ck_assert(cf.flags & BPFIPT_C_IVAL_FIXED);	/* bpfipt_ival6fx's pages */

	struct tc6 cs[] = {
		{ "-s /128", P6(.src = "2001:db8:a:5::6"), DRP, C(5) },
		{ "-s /64", P6(.src = "2001:db8:a:14::77"), DRP, C(20) },
		{ "-s near a /128", P6(.src = "2001:db8:a:5::7"), ACC, C(200) },
		{ "-s far", P6(.src = "2001:db8:c::1"), ACC, C(200) },
		{ "-d /100", P6(.src = "2001:db8:c::1", .dst = "2001:db8:b::3:1fff:abcd"), DRP,
		  C(103) },
		{ "-d /128", P6(.src = "2001:db8:c::1", .dst = "2001:db8:b::7:1000:8"), DRP,
		  C(107) },
		{ "-d near a /128", P6(.src = "2001:db8:c::1", .dst = "2001:db8:b::7:1000:9"), ACC,
		  C(200) },
		{ "-d far", P6(.src = "2001:db8:c::1", .dst = "2001:db8:b::7:2000:8"), ACC, C(200) },
		{ "both: -s first", P6(.src = "2001:db8:a:5::6", .dst = "2001:db8:b::7:1000:8"), DRP,
		  C(5) },
		{ "-s near, -d", P6(.src = "2001:db8:a:5::7", .dst = "2001:db8:b::63:1000:64"), DRP,
		  C(199) },
	};
	run6(in, cs, N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Two lists on the source in one chain (two fail2ban jails, the second's sources
 * overlapping the first's): neither is the chain's folded one, so the slot
 * prefix searches each one's own set (loader.c list_alone(),
 * bpfipt_pfx_tuple(): IPv6's interval search), every packet judged before the
 * walk (the FAST statistic), verdicts and counters as the rules say. */
START_TEST(t_lists_prefix6)
{
	static char a[2][100][64], p[6][64];
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	__u64 st0[BPFIPT_ST_MAX], st1[BPFIPT_ST_MAX];
	struct ipt_err err = { 0 };
	struct cp_compiled *cc;

	/* list 0: 2001:db8:1:i::/64 DROP; list 1: 2001:db8:1:i+50::/64 ACCEPT */
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < 100; i++) {
			snprintf(a[l][i], sizeof(a[l][i]), "2001:db8:1:%x::/64", i + 50 * l);
			add(t, "INPUT", rule(a[l][i], NULL, -1, l ? ACC : DRP));
		}
	cc = compile(t);
	ck_assert_uint_eq(cc->ngroups, 2);
	install(in, cc);
	snprintf(p[0], 64, "2001:db8:1:%x::1", 5);
	snprintf(p[1], 64, "2001:db8:1:%x::9", 60);	/* in both: list 0's */
	snprintf(p[2], 64, "2001:db8:1:%x::1", 120);	/* list 1's only */
	snprintf(p[3], 64, "2001:db8:1:%x:ffff:ffff:ffff:ffff", 149);
	snprintf(p[4], 64, "2001:db8:1:%x::", 150);	/* after both */
	snprintf(p[5], 64, "2001:db8:2::1");

	struct tc6 cs[] = {
		{ "list 0", P6(.src = p[0]), DRP, C(5) },
		{ "both lists: the first's", P6(.src = p[1]), DRP, C(60) },
		{ "list 1 only", P6(.src = p[2]), ACC, C(100 + 70) },
		{ "list 1's last address", P6(.src = p[3]), ACC, C(100 + 99) },
		{ "after both", P6(.src = p[4]), ACC, C(200) },
		{ "neither", P6(.src = p[5]), ACC, C(200) },
	};
	ck_assert_int_eq(dp_inst_stats(in, st0, &err), 0);
	run6(in, cs, N(cs));
	ck_assert_int_eq(dp_inst_stats(in, st1, &err), 0);
	ck_assert_uint_eq(st1[BPFIPT_ST_FAST] - st0[BPFIPT_ST_FAST], N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A deny list deep enough for a tree of three levels (over 65 536 intervals):
 * 40 000 /128s that share their high 64 bits, then prefixes around the boundary
 * between the two words of a key (bpfipt_ival6_find() compares the high word,
 * then the low one). */
START_TEST(t_group_deep)
{
	enum { NL = 40000 };
	static char addr[NL + 16][64];
	static const char *const edge[] = {
		"2001:db8:1:3::/64",	/* NL */
		"2001:db8:1:4::/63",	/* NL + 1: the high word's last bit */
		"2001:db8:1:7::/64",	/* NL + 2 */
		"2001:db8:1:8::/128",	/* NL + 3: right after it */
	};
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct tc6 cs[2 * 60 + 12];
	struct ipt_err err = { 0 };
	struct bpfipt_conf cf;
	struct cp_compiled *cc;
	int n = 0, k;

	/* rule i: low 64 bits i * 4, the three after it unlisted */
	for (k = 0; k < NL; k++) {
		snprintf(addr[k], sizeof(addr[k]), "2001:db8:1:1::%x:%x", (k * 4) >> 16,
			 (k * 4) & 0xffff);
		add(t, "INPUT", rule(addr[k], NULL, -1, DRP));
	}
	for (k = 0; k < N(edge); k++)
		add(t, "INPUT", rule(edge[k], NULL, -1, DRP));
	cc = compile(t);
	install(in, cc);
	/* its pages in the array of their own size (not bpfipt_ival6fx) */
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert_uint_gt(cf.npages, BPFIPT_IVAL_FIXED);
	ck_assert_uint_eq(cf.flags & BPFIPT_C_IVAL_FIXED, 0);

	for (k = 0; k < 60; k++) {
		int i = k == 59 ? NL - 1 : k * (NL / 59);
		char *next = addr[NL + 4 + (k % 8)];

		snprintf(next, 64, "2001:db8:1:1::%x:%x", (i * 4 + 1) >> 16, (i * 4 + 1) & 0xffff);
		cs[n++] = (struct tc6){ "listed", P6(.src = addr[i]), DRP, C(i) };
		cs[n++] = (struct tc6){ "after a listed one", P6(.src = next), ACC, C(NL + 4) };
		run6(in, cs + n - 2, 2);
	}
	n = 0;
	cs[n++] = (struct tc6){ "the low word of rule 1, a high word below",
				P6(.src = "2001:db8:1:0::4"), ACC, C(NL + 4) };
	cs[n++] = (struct tc6){ "the same, a high word above",
				P6(.src = "2001:db8:1:2::4"), ACC, C(NL + 4) };
	cs[n++] = (struct tc6){ "the /64: first", P6(.src = "2001:db8:1:3::"), DRP, C(NL) };
	cs[n++] = (struct tc6){ "the /64: last",
				P6(.src = "2001:db8:1:3:ffff:ffff:ffff:ffff"), DRP, C(NL) };
	cs[n++] = (struct tc6){ "the /63: its second /64",
				P6(.src = "2001:db8:1:5:ffff:ffff:ffff:ffff"), DRP, C(NL + 1) };
	cs[n++] = (struct tc6){ "after the /63", P6(.src = "2001:db8:1:6::"), ACC, C(NL + 4) };
	cs[n++] = (struct tc6){ "the /64 before the /128",
				P6(.src = "2001:db8:1:7:ffff:ffff:ffff:ffff"), DRP, C(NL + 2) };
	cs[n++] = (struct tc6){ "the /128 after it", P6(.src = "2001:db8:1:8::"), DRP, C(NL + 3) };
	cs[n++] = (struct tc6){ "after the /128", P6(.src = "2001:db8:1:8::1"), ACC, C(NL + 4) };
	cs[n++] = (struct tc6){ "::", P6(.src = "::"), ACC, C(NL + 4) };
	cs[n++] = (struct tc6){ "all ones", P6(.src = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
				ACC, C(NL + 4) };
	run6(in, cs, n);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* ================================================================ differential */

static __u64 rng_state = 0x9e3779b97f4a7c15ull;

static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (__u32)(rng_state >> 16);
}

static unsigned int rn(unsigned int n)
{
	return rnd() % n;
}

/* addresses from a few nested prefixes so rules overlap */
static void raddr(char *out, size_t n)
{
	static const char *const base[] = { "2001:db8:1:1::", "2001:db8:1:2::", "2001:db8:2::",
					    "fe80::", "2001:db9::" };

	snprintf(out, n, "%s%x", base[rn(5)], rn(4));
}

static const char *rpfx(char *buf, size_t n)
{
	static const int plens[] = { 0, 16, 32, 48, 56, 64, 96, 127, 128 };
	char a[64];

	if (rn(3) == 0)
		return NULL;
	raddr(a, sizeof(a));
	snprintf(buf, n, "%s%s/%d", rn(5) ? "" : "!", a, plens[rn(9)]);
	return buf;
}

static struct ipt_table *rruleset(void)
{
	static const char *const chains[] = { "INPUT", "INPUT", "FORWARD", "OUTPUT", "u1", "u2" };
	static const int protos[] = { -1, -1, 0, 6, 17, 58, 50 };
	struct ipt_table *t = table6();
	int nr = 1 + rn(24);

	ipt_chain_new_user(t, "u1");
	ipt_chain_new_user(t, "u2");
	for (int i = 0; i < nr; i++) {
		char s[80], d[80];
		const char *sp = rpfx(s, sizeof(s)), *dp = rpfx(d, sizeof(d));
		int proto = protos[rn(7)], v = rn(10);
		const char *ch = chains[rn(6)];
		struct ipt_rule *r = rule(sp, dp, proto, v < 4 ? ACC : v < 7 ? DRP : -1);

		if (proto > 0 && rn(4) == 0)
			r->ip.invflags |= IPT_INV_PROTO;
		if (proto == 6 && !(r->ip.invflags & IPT_INV_PROTO) && rn(2))
			tcp_ports(r, 0, 65535, 20 + rn(4), 22 + rn(4), rn(2) ? 0x12 : 0, 0x02);
		if (proto == 17 && !(r->ip.invflags & IPT_INV_PROTO) && rn(2))
			udp_ports(r, 50 + rn(6), 53 + rn(4));
		if (proto == 58 && !(r->ip.invflags & IPT_INV_PROTO) && rn(2))
			icmp6_type(r, rn(2) ? 128 : 135, rn(2) ? 0 : -1);
		if (rn(8) == 0) {
			struct iprange6_data *ir = match(r, "iprange");
			char lo[64], hi[64];

			raddr(lo, sizeof(lo));
			raddr(hi, sizeof(hi));
			ir->v4.flags = rn(2) ? IPR_SRC : IPR_DST;
			if (rn(3) == 0)
				ir->v4.flags |= ir->v4.flags == IPR_SRC ? IPR_SRC_INV : IPR_DST_INV;
			inet_pton(AF_INET6, lo, ir->src_min.b);
			inet_pton(AF_INET6, hi, ir->src_max.b);
			ir->dst_min = ir->src_min;
			ir->dst_max = ir->src_max;
		}
		if (rn(6) == 0) {
			struct length_data *l = match(r, "length");

			l->min = 60 + rn(40);
			l->max = l->min + rn(40);
		}
		if (v == 7 && strcmp(ch, "u2")) {
			r->tkind = IPT_T_JUMP;
			snprintf(r->chain, sizeof(r->chain), "%s", strcmp(ch, "u1") ? "u1" : "u2");
		} else if (v == 8 && ch[0] == 'u') {
			r->tkind = IPT_T_VERDICT;
			r->verdict = IPT_V_RETURN;
		}
		add(t, ch, r);
	}
	ipt_chain_find(t, "INPUT")->policy = rn(2) ? IPT_V_DROP : IPT_V_ACCEPT;
	ipt_chain_find(t, "FORWARD")->policy = rn(2) ? IPT_V_DROP : IPT_V_ACCEPT;
	ipt_chain_find(t, "OUTPUT")->policy = rn(2) ? IPT_V_DROP : IPT_V_ACCEPT;
	return t;
}

/* A random packet, as a frame and as the evaluators see it. */
static size_t rpacket6(__u8 *buf, size_t cap, struct cp_packet *p)
{
	static const int protos[] = { 6, 17, 58, 50, 59, 6, 17 };
	char sa[64], da[64];
	struct p6 s = P6();
	unsigned int iplen;
	size_t len;
	int ne = rn(3) ? 0 : 1 + rn(3);

	raddr(sa, sizeof(sa));
	raddr(da, sizeof(da));
	s.src = sa;
	s.dst = da;
	s.proto = protos[rn(7)];
	s.sport = 1000 + rn(3);
	s.dport = 20 + rn(40);
	s.flags = rn(2) ? 0x02 : 0x12;
	s.itype = rn(2) ? 128 : 135;
	s.payload = rn(3) ? 0 : rn(40);
	for (int i = 0; i < ne; i++) {
		static const int types[] = { 0, 43, 60, 51, 44 };
		int ty = types[rn(5)];

		s.ext[i] = (struct ext){ ty, ty == 44 ? 8 : ty == 51 ? 12 + 4 * rn(3) : 8 * (1 + rn(3)),
					 ty == 44 && rn(2) ? 1 + rn(50) : 0, 0 };
	}
	if (rn(8) == 0)
		s.plen = 1 + rn(30);	/* maybe cut */
	len = build6(&s, buf, cap, &iplen);
	memset(p, 0, sizeof(*p));
	p->family = 6;
	inet_pton(AF_INET6, sa, p->saddr6);
	inet_pton(AF_INET6, da, p->daddr6);
	p->len = iplen;
	p->iif = 2;
	/* what ipv6_find_hdr() gives: walk the built chain against the payload length */
	{
		unsigned int off = 40, end = iplen;
		bool cut = false, nonfirst = false;
		int i;

		for (i = 0; i < ne; i++) {
			const struct ext *e = &s.ext[i];

			if (off + (e->type == 44 ? 4 : 2) > end) {
				cut = true;
				break;
			}
			if (e->type == 44 && e->fragoff) {
				if (i + 1 < ne)
					cut = true;	/* another extension header follows */
				else
					nonfirst = true;
				break;
			}
			off += e->len;
		}
		p->cut = cut;
		p->nonfirst_frag = nonfirst;
		p->proto = cut ? 0 : s.proto;
		if (!cut && !nonfirst) {
			unsigned int l4 = s.proto == 6 ? 20 : 8;

			if (s.proto == 6 || s.proto == 17) {
				p->has_ports = off + l4 <= end;
				p->has_tcp = s.proto == 6 && p->has_ports;
				p->sport = s.sport;
				p->dport = s.dport;
				p->tcpflags = s.flags;
			} else if (s.proto == 58 && off + 8 <= end) {
				p->has_icmp = true;
				p->icmp_type = s.itype;
			}
		}
	}
	return len;
}

static void dump(const struct ipt_table *t, const struct cp_packet *p)
{
	char a[64], b[64];

	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++) {
			const struct ipt_rule *r = t->chains[i]->rules[j];

			inet_ntop(AF_INET6, r->ip.src.b, a, sizeof(a));
			inet_ntop(AF_INET6, r->ip.dst.b, b, sizeof(b));
			printf("%s: s %s%s/%d d %s%s/%d p %s%d fl %d nm %u tk %d v %d %s\n",
			       t->chains[i]->name, r->ip.invflags & IPT_INV_SRCIP ? "!" : "", a,
			       __builtin_popcountll(*(__u64 *)r->ip.smsk.b) +
			       __builtin_popcountll(*(__u64 *)(r->ip.smsk.b + 8)),
			       r->ip.invflags & IPT_INV_DSTIP ? "!" : "", b,
			       __builtin_popcountll(*(__u64 *)r->ip.dmsk.b) +
			       __builtin_popcountll(*(__u64 *)(r->ip.dmsk.b + 8)),
			       r->ip.invflags & IPT_INV_PROTO ? "!" : "", r->ip.proto, r->ip.flags,
			       r->nmatches, r->tkind, r->verdict, r->chain);
		}
	inet_ntop(AF_INET6, p->saddr6, a, sizeof(a));
	inet_ntop(AF_INET6, p->daddr6, b, sizeof(b));
	printf("packet %s -> %s proto %u cut %d nf %d ports %d %u/%u tcp %d fl %x icmp %d %u len %u\n",
	       a, b, p->proto, p->cut, p->nonfirst_frag, p->has_ports, p->sport, p->dport,
	       p->has_tcp, p->tcpflags, p->has_icmp, p->icmp_type, p->len);
}

/* Rulesets from gen(), compiled with env, against cp_ref_eval() and
 * cp_lbvs_eval(): verdicts and counters of random packets, in C and through the
 * data plane. *ntg: the tuple groups the rulesets made. */
static int diff_sets = 300;	/* rulesets a differential() draws */
static unsigned int nvmaps;	/* ... their verdict map slots (BPFIPT_X_VMAP) */

static void differential(const char *what, struct ipt_table *(*gen)(void),
			 const struct cp_env *env, unsigned int *ntg)
{
	static __u8 buf[2048];
	unsigned int nsets = 0, npk = 0, refused = 0, hot = 0;
	struct dp_inst *in = inst_new();

	*ntg = 0;
	if (getenv("BPFIPT_DIFF_SEED"))
		rng_state = strtoull(getenv("BPFIPT_DIFF_SEED"), NULL, 0) | 1;
	for (int it = 0; it < diff_sets; it++) {
		struct ipt_table *t = gen();
		struct cp_compiled *cc = NULL;
		struct ipt_err err = { 0 };

		if (cp_compile(t, env, &cc, &err)) {
			refused++;	/* too deep, a loop: the data plane's limits */
			ipt_table_free(&t);
			continue;
		}
		install(in, cc);
		nsets++;
		*ntg += cc->ntgroups;
		for (int c = 0; c < BPFIPT_NCHAINS; c++)
			for (unsigned int k = 0; k < cc->nslots[c]; k++)
				nvmaps += !!(cc->slots[c][k].xflags & BPFIPT_X_VMAP);
		for (int k = 0; k < 60; k++) {
			struct cp_packet p;
			struct cp_trace rt, lt;
			size_t len = rpacket6(buf, sizeof(buf), &p);
			enum bpfipt_chain ch = rn(3);
			__u64 (*a)[2], (*b)[2];
			unsigned int na, nb;
			int rr, lr;

			if (ch == BPFIPT_OUTPUT)
				p.iif = 0;
			rr = cp_ref_eval(t, NULL, ch, &p, &rt);
			lr = cp_lbvs_eval(cc, ch, &p, &lt);
			int v;

			if (rr)
				continue;
			npk++;
			if (rt.verdict != lt.verdict || rt.ncounted != lt.ncounted)
				dump(t, &p);
			hot += p.cut;
			ck_assert_int_eq(lr, 0);
			ck_assert_msg(rt.verdict == lt.verdict, "set %d packet %d chain %d: ref %d lbvs %d",
				      it, k, ch, rt.verdict, lt.verdict);
			ck_assert_uint_eq(rt.ncounted, lt.ncounted);
			for (unsigned int j = 0; j < rt.ncounted && j < CP_TRACE_MAX; j++)
				ck_assert_uint_eq(rt.counted[j], lt.counted[j]);
			counters(in, AF_INET6, &a, &na);
			v = classify(in, buf, len, ch, p.iif, 0);
			counters(in, AF_INET6, &b, &nb);
			if (v != (int)rt.verdict)
				dump(t, &p);
			ck_assert_msg(v == (int)rt.verdict, "set %d packet %d: data plane %d, ref %d",
				      it, k, v, rt.verdict);
			for (unsigned int j = 0; j < nb; j++) {
				__u64 d = b[j][0] - a[j][0], want = 0;

				for (unsigned int q = 0; q < rt.ncounted && q < CP_TRACE_MAX; q++)
					want += rt.counted[q] == j;
				if (d != want) {
					dump(t, &p);
					for (size_t q = 0; q < len; q++)
						printf("%02x%s", buf[q], q % 16 == 15 ? "\n" : " ");
					printf("\n");
				}
				ck_assert_msg(d == want, "set %d packet %d: counter %u moved %llu, "
					      "ref %llu", it, k, j, (unsigned long long)d,
					      (unsigned long long)want);
			}
			free(a);
			free(b);
		}
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	printf("ipv6 %s: %u rulesets (%u refused), %u packets (%u cut chains), %u tuple groups, "
	       "%u verdict map slots so far\n", what, nsets, refused, npk, hot, *ntg, nvmaps);
	ck_assert_uint_gt(nsets, (unsigned int)diff_sets * 2 / 3);
	dp_inst_free(&in);
}

START_TEST(t_differential)
{
	unsigned int ntg;

	differential("differential", rruleset, NULL, &ntg);
}
END_TEST

/* rruleset() with 4 200 rules appended to INPUT (sources no packet has, no run
 * alike: two protocols, two verdicts): vectors of two chunks, the user chains'
 * blocks in the second. */
static struct ipt_table *rwide(void)
{
	struct ipt_table *t = rruleset();
	char src[64];

	for (int i = 0; i < 4200; i++) {
		snprintf(src, sizeof(src), "2001:db8:ff:%x::/64", i);
		add(t, "INPUT", rule(src, NULL, i % 2 ? 6 : 17, i % 3 ? DRP : ACC));
	}
	return t;
}

/* The same differential in a windowed pool (BPF_IPTABLES_POOL=windows, which
 * these would not take on their own): chunks past a vector's window read from
 * its base, the slot prefix's and a cut chain's lookups through the header. */
START_TEST(t_windows_diff)
{
	unsigned int ntg;

	ck_assert_int_eq(setenv("BPF_IPTABLES_POOL", "windows", 1), 0);
	diff_sets = 45;
	differential("windowed", rwide, NULL, &ntg);
	diff_sets = 300;
	ck_assert_int_eq(unsetenv("BPF_IPTABLES_POOL"), 0);
}
END_TEST

/* Runs of rules alike but for their addresses (one prefix length each along the
 * run) and exact ports, the shapes of tuple groups, among random rules: with
 * -p and ports or without, one address varying or both (with -p both: the
 * group's address pairs judge a cut chain, bpfipt.h), now and then a tuple
 * repeated; a third of them jump or go to u1 or u2, a chain each (a verdict
 * map, a -j run cut at a repeated tuple). */
static struct ipt_table *rruns(void)
{
	static const char *const chains[] = { "INPUT", "FORWARD", "OUTPUT", "u1" };
	static const int plens[] = { 48, 64, 96, 127, 128 };
	struct ipt_table *t = rruleset();	/* random rules, u1 and u2 made */
	int nruns = 1 + rn(4);

	for (int r = 0; r < nruns; r++) {
		const char *ch = chains[rn(4)];
		int vary = 1 + rn(3);		/* 1: -s, 2: -d, 3: both */
		int splen = plens[rn(5)], dplen = plens[rn(5)];
		int proto = rn(3) ? (rn(2) ? 6 : 17) : -1;
		int ports = proto > 0 ? rn(4) : 0;	/* bit 0: --sport, bit 1: --dport */
		int verdict = rn(2) ? DRP : ACC, len = 2 + rn(10);
		int call = rn(3) ? 0 : rn(3) ? IPT_T_JUMP : IPT_T_GOTO;	/* a chain each */
		char fixs[64], fixd[64];

		raddr(fixs, sizeof(fixs));
		raddr(fixd, sizeof(fixd));
		for (int i = 0; i < len; i++) {
			char sa[64], s[96], d[96];
			struct ipt_rule *x;
			int sp = 1000 + rn(3), dp = 20 + rn(40);

			raddr(sa, sizeof(sa));
			snprintf(s, sizeof(s), "%s/%d", vary & 1 ? sa : fixs, splen);
			raddr(sa, sizeof(sa));
			snprintf(d, sizeof(d), "%s/%d", vary & 2 ? sa : fixd, dplen);
			x = rule(vary & 1 || rn(2) ? s : NULL, vary & 2 || rn(2) ? d : NULL, proto,
				 verdict);
			if (call) {
				x->tkind = call;
				snprintf(x->chain, sizeof(x->chain), "%s",
					 !strcmp(ch, "u1") || rn(2) ? "u2" : "u1");
			}
			if (proto == 6)
				tcp_ports(x, ports & 1 ? sp : 0, ports & 1 ? sp : 65535,
					  ports & 2 ? dp : 0, ports & 2 ? dp : 65535, 0, 0);
			else if (proto == 17)
				udp_ports(x, ports & 2 ? dp : 0, ports & 2 ? dp : 65535);
			add(t, ch, x);
		}
	}
	return t;
}

START_TEST(t_tuple_diff)
{
	struct cp_env env = { .tuple_min = 2 };
	unsigned int ntg;

	nvmaps = 0;
	differential("tuple runs", rruns, &env, &ntg);
	ck_assert_uint_gt(ntg, 100);
	ck_assert_uint_gt(nvmaps, 30);
}
END_TEST

/* Runs of rules alike but for one address and the chain each jumps (or goes)
 * to, u1 or u2 (a verdict map while the addresses are disjoint: /127s, /64s
 * and the same address twice cut it), or without a target, with -p or
 * without (a cut chain drops at a -p run), among random rules. */
static struct ipt_table *rvmaps(void)
{
	static const char *const chains[] = { "INPUT", "FORWARD", "OUTPUT" };
	static const int plens[] = { 128, 128, 128, 127, 64 };
	struct ipt_table *t = rruleset();	/* random rules, u1 and u2 made */
	int nruns = 1 + rn(3);

	for (int r = 0; r < nruns; r++) {
		const char *ch = chains[rn(3)];
		int dst = rn(2), proto = rn(2) ? 6 : -1, kind = rn(4), len = 4 + rn(8);

		for (int i = 0; i < len; i++) {
			char a[64], p[96];
			struct ipt_rule *x;

			raddr(a, sizeof(a));
			snprintf(p, sizeof(p), "%s/%d", a, plens[rn(5)]);
			x = rule(dst ? NULL : p, dst ? p : NULL, proto, -1);
			if (kind < 3) {
				x->tkind = kind == 1 ? IPT_T_GOTO : IPT_T_JUMP;
				snprintf(x->chain, sizeof(x->chain), "%s",
					 kind == 2 || rn(2) ? "u1" : "u2");
			}
			add(t, ch, x);
		}
	}
	return t;
}

START_TEST(t_vmap_diff)
{
	unsigned int ntg;

	nvmaps = 0;
	differential("verdict maps", rvmaps, NULL, &ntg);
	ck_assert_uint_gt(nvmaps, 50);
}
END_TEST

/* A tuple group of rules with -p whose source and destination both vary: a
 * packet whose extension-header chain is cut drops at it only when one rule
 * has both its addresses, not for a source of one rule and the destination of
 * another (the slot's unions hold both). */
START_TEST(t_tuple_pairs)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct cp_compiled *cc;
	char s[64], d[64];

	for (int i = 1; i <= 8; i++) {
		struct ipt_rule *r;

		snprintf(s, sizeof(s), "2001:db8:a::%d/128", i);
		snprintf(d, sizeof(d), "2001:db8:b::%d/128", i);
		r = rule(s, d, 6, DRP);
		tcp_ports(r, 0, 65535, 22, 22, 0, 0);
		add(t, "INPUT", r);				/* 0 .. 7; policy 8 */
	}
	cc = compile(t);
	ck_assert_uint_eq(cc->ntgroups, 1);
	ck_assert_uint_eq(cc->nslots[BPFIPT_INPUT], 2);
	install(in, cc);

	struct tc6 cs[] = {
		{ "rule 2", P6(.src = "2001:db8:a::3", .dst = "2001:db8:b::3"), DRP, C(2) },
		{ "rule 2's source, rule 3's destination", P6(.src = "2001:db8:a::3",
		  .dst = "2001:db8:b::4"), ACC, C(8) },
		{ "cut, rule 2's pair: hotdrop, uncounted", P6(.src = "2001:db8:a::3",
		  .dst = "2001:db8:b::3", .ext = { HBH(8) }, .plen = 1), DRP, NONE },
		{ "cut, rule 2's source, rule 3's destination", P6(.src = "2001:db8:a::3",
		  .dst = "2001:db8:b::4", .ext = { HBH(8) }, .plen = 1), ACC, C(8) },
		{ "cut, neither", P6(.src = "2001:db8:c::3", .dst = "2001:db8:b::3",
		  .ext = { HBH(8) }, .plen = 1), ACC, C(8) },
	};
	run6(in, cs, N(cs));
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* -s src -d dst -p udp --dport port -j DROP appended to chain */
static void add_udp_drop(struct ipt_table *t, const char *chain, const char *src,
			 const char *dst, int port)
{
	struct ipt_rule *r = rule(src, dst, 17, DRP);

	udp_ports(r, port, port);
	add(t, chain, r);
}

/* A tuple group at the top of a chain is searched first, and a packet outside
 * its keys' bounds skips the hash: IPv6 addresses are bounded by their word
 * BPFIPT_TB_WORD6 (bits 32-63). INPUT: sixteen /64s 2001:db8:1:10::/64 ..
 * 2001:db8:1:1f::/64; OUTPUT: ten /48s 2001:db8:5::/48 .. 2001:db8:e::/48 (the
 * top of the range is the last /48's last address); FORWARD: ten /32s, which
 * leave the word free. Packets at both edges, outside them, and in the bounds under
 * another first word (the bounds pass it, the hash does not). */
START_TEST(t_tuple_bounds)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct cp_compiled *cc;
	struct bpfipt_conf cf;
	struct ipt_err err = { 0 };
	static __u8 buf[512];
	char a[64];

	for (int i = 0; i < 16; i++) {
		snprintf(a, sizeof(a), "2001:db8:1:%x::/64", 0x10 + i);
		add_udp_drop(t, "INPUT", a, NULL, 1000 + i);
	}
	for (int i = 0; i < 10; i++) {
		snprintf(a, sizeof(a), "2001:db8:%x::/48", 5 + i);
		add_udp_drop(t, "OUTPUT", NULL, a, 50 + i);
		snprintf(a, sizeof(a), "2001:%x::/32", 0xdb8 + i);
		add_udp_drop(t, "FORWARD", NULL, a, 50 + i);
	}
	cc = compile(t);
	ck_assert_uint_eq(cc->ntgroups, 3);
	install(in, cc);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT] & BPFIPT_FAST_TUPLE, BPFIPT_FAST_TUPLE);
	ck_assert_uint_eq(cf.tfast[BPFIPT_INPUT].lo[BPFIPT_TB_SRC], 0x00010010);
	ck_assert_uint_eq(cf.tfast[BPFIPT_INPUT].span[BPFIPT_TB_SRC], 0xf);
	ck_assert_uint_eq(cf.tfast[BPFIPT_INPUT].span[BPFIPT_TB_DST], ~0u);
	ck_assert_uint_eq(cf.tfast[BPFIPT_OUTPUT].lo[BPFIPT_TB_DST], 0x00050000);
	ck_assert_uint_eq(cf.tfast[BPFIPT_OUTPUT].span[BPFIPT_TB_DST], 0x000effff - 0x00050000);
	ck_assert_uint_eq(cf.tfast[BPFIPT_FORWARD].lo[BPFIPT_TB_DST], 0);
	ck_assert_uint_eq(cf.tfast[BPFIPT_FORWARD].span[BPFIPT_TB_DST], ~0u);

	struct {
		int chain;
		struct p6 p;
		int verdict;
	} cs[] = {
		{ BPFIPT_INPUT, P6(.src = "2001:db8:1:10::1", .proto = 17, .dport = 1000), DRP },
		{ BPFIPT_INPUT, P6(.src = "2001:db8:1:1f:ffff:ffff:ffff:ffff", .proto = 17,
				   .dport = 1015), DRP },
		{ BPFIPT_INPUT, P6(.src = "2001:db8:1:f::1", .proto = 17, .dport = 1000), ACC },
		{ BPFIPT_INPUT, P6(.src = "2001:db8:1:20::1", .proto = 17, .dport = 1000), ACC },
		{ BPFIPT_INPUT, P6(.src = "2001:db9:1:10::1", .proto = 17, .dport = 1000), ACC },
		{ BPFIPT_INPUT, P6(.src = "2001:db8:1:10::1", .proto = 17, .dport = 1001), ACC },
		{ BPFIPT_OUTPUT, P6(.dst = "2001:db8:5::", .proto = 17, .dport = 50), DRP },
		{ BPFIPT_OUTPUT, P6(.dst = "2001:db8:e:ffff:ffff::1", .proto = 17, .dport = 59),
		  DRP },
		{ BPFIPT_OUTPUT, P6(.dst = "2001:db8:4:ffff::1", .proto = 17, .dport = 50), ACC },
		{ BPFIPT_OUTPUT, P6(.dst = "2001:db8:f::", .proto = 17, .dport = 59), ACC },
		{ BPFIPT_FORWARD, P6(.dst = "2001:dc1:ffff::1", .proto = 17, .dport = 59), DRP },
		{ BPFIPT_FORWARD, P6(.dst = "2001:dc2::1", .proto = 17, .dport = 59), ACC },
	};
	for (int i = 0; i < N(cs); i++) {
		size_t len = build6(&cs[i].p, buf, sizeof(buf), NULL);
		int iif = cs[i].chain == BPFIPT_OUTPUT ? 0 : 2;
		int oif = cs[i].chain == BPFIPT_INPUT ? 0 : 3;

		ck_assert_msg(classify(in, buf, len, cs[i].chain, iif, oif) == cs[i].verdict,
			      "case %d", i);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* ================================================================ families */

/* IPv4 and IPv6 rulesets in one instance: each family's packets meet their own
 * ruleset, counters stay apart, and installing one family leaves the other's
 * generation and counters as they were. */
START_TEST(t_families)
{
	struct ipt_table *t6 = table6(), *t4 = NULL;
	struct cp_compiled *c6, *c4, *c4b;
	struct dp_inst *in = inst_new();
	struct ipt_rule *r;
	static __u8 buf[256];
	unsigned int n;
	__u64 (*c)[2];
	size_t len;

	add(t6, "INPUT", rule("2001:db8:1::/48", NULL, -1, DRP));	/* 0; policy 1 */
	c6 = compile(t6);
	ipt_af = AF_INET;
	ipt_table_new(&t4);
	r = ipt_rule_new();
	r->ip.src.v4 = htonl(0x0a000001);
	r->ip.smsk.v4 = 0xffffffff;
	r->tkind = IPT_T_VERDICT;
	r->verdict = IPT_V_DROP;
	add(t4, "INPUT", r);						/* 0; policy 1 */
	add(t4, "INPUT", ipt_rule_dup(r));				/* 1; policy 2 */
	ipt_chain_find(t4, "INPUT")->policy = IPT_V_ACCEPT;
	c4 = compile(t4);

	/* IPv6 alone: IPv4 passes untouched */
	install(in, c6);
	len = build6(&P6(), buf, sizeof(buf), NULL);
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), DRP);
	{
		__u8 v4[64] = { 0 };

		v4[12] = 0x08;
		v4[14] = 0x45;
		v4[17] = 20;
		v4[22] = 64;
		ipt_st32(v4 + 26, htonl(0x0a000001));
		ipt_st32(v4 + 30, htonl(0x0a000002));
		ck_assert_int_eq(classify(in, v4, 34, BPFIPT_INPUT, 2, 0), PASS);
		install(in, c4);
		ck_assert_int_eq(classify(in, v4, 34, BPFIPT_INPUT, 2, 0), DRP);
		ipt_st32(v4 + 26, htonl(0x0a000003));
		ck_assert_int_eq(classify(in, v4, 34, BPFIPT_INPUT, 2, 0), ACC);
	}
	/* IPv6 still judged by its ruleset, its counters untouched by IPv4's */
	len = build6(&P6(.src = "2001:db9::1"), buf, sizeof(buf), NULL);
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), ACC);
	counters(in, AF_INET6, &c, &n);
	ck_assert_uint_eq(n, 1 + BPFIPT_NCHAINS);
	ck_assert_uint_eq(c[0][0], 1);
	ck_assert_uint_eq(c[1][0], 1);
	free(c);
	counters(in, AF_INET, &c, &n);
	ck_assert_uint_eq(n, 2 + BPFIPT_NCHAINS);
	ck_assert_uint_eq(c[0][0], 1);
	ck_assert_uint_eq(c[1][0], 0);
	ck_assert_uint_eq(c[2][0], 1);
	free(c);
	/* a new IPv4 generation: IPv6's is the same (its counters go on) */
	ipt_chain_find(t4, "INPUT")->policy = IPT_V_DROP;
	c4b = compile(t4);
	install(in, c4b);
	counters(in, AF_INET6, &c, &n);
	ck_assert_uint_eq(c[0][0], 1);
	ck_assert_uint_eq(c[1][0], 1);
	free(c);
	len = build6(&P6(), buf, sizeof(buf), NULL);
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), DRP);
	counters(in, AF_INET6, &c, &n);
	ck_assert_uint_eq(c[0][0], 2);
	free(c);
	counters(in, AF_INET, &c, &n);
	ck_assert_uint_eq(c[0][0], 0);		/* a fresh IPv4 generation, no carry */
	free(c);
	/* and the other way round: a new IPv6 generation keeps IPv4's */
	install(in, c6);
	{
		__u8 v4[64] = { 0 };

		v4[12] = 0x08;
		v4[14] = 0x45;
		v4[17] = 20;
		v4[22] = 64;
		ipt_st32(v4 + 26, htonl(0x0a000009));
		ck_assert_int_eq(classify(in, v4, 34, BPFIPT_INPUT, 2, 0), DRP);
	}
	counters(in, AF_INET, &c, &n);
	ck_assert_uint_eq(c[2][0], 1);
	free(c);
	dp_inst_free(&in);
	cp_compiled_free(&c6);
	cp_compiled_free(&c4);
	cp_compiled_free(&c4b);
	ipt_table_free(&t6);
	ipt_table_free(&t4);
}
END_TEST

/* Masks that are not prefixes: expanded (2001:db8::/ffff:fff9:: holds 4
 * prefixes), refused beyond 16 holes. */
START_TEST(t_masks)
{
	struct ipt_table *t = table6();
	struct dp_inst *in = inst_new();
	struct ipt_rule *r = rule("2001:db8::/32", NULL, -1, DRP);
	struct cp_compiled *cc = NULL;
	struct ipt_err err = { 0 };

	inet_pton(AF_INET6, "ffff:fff9::", r->ip.smsk.b);
	add(t, "INPUT", r);
	cc = compile(t);
	install(in, cc);

	struct tc6 cs[] = {
		{ "2001:db8::1", P6(.src = "2001:db8::1"), DRP, C(0) },
		{ "2001:dba::1", P6(.src = "2001:dba::1"), DRP, C(0) },
		{ "2001:dbe:ff::1", P6(.src = "2001:dbe:ff::1"), DRP, C(0) },
		{ "2001:db9::1 (bit 0 is in the mask)", P6(.src = "2001:db9::1"), ACC, C(1) },
		{ "2001:dbf::1", P6(.src = "2001:dbf::1"), ACC, C(1) },
	};
	run6(in, cs, N(cs));
	cp_compiled_free(&cc);
	/* 17 holes */
	inet_pton(AF_INET6, "ffff:0000:8000::1", r->ip.smsk.b);
	memset(&r->ip.src, 0, sizeof(r->ip.src));
	ck_assert_int_ne(cp_compile(t, NULL, &cc, &err), 0);
	ck_assert_msg(strstr(err.msg, "16 holes") != NULL, "%s", err.msg);
	dp_inst_free(&in);
	ipt_table_free(&t);
}
END_TEST

/* What the compiler refuses for IPv6, with a clear message. */
START_TEST(t_refused)
{
	static const char *const names[] = { "addrtype", "recent" };

	for (int i = 0; i < 2; i++) {
		struct ipt_table *t = table6();
		struct ipt_rule *r = rule(NULL, NULL, -1, ACC);
		struct cp_compiled *cc = NULL;
		struct ipt_err err = { 0 };
		const struct ipt_ext *e = ipt_ext_find(names[i], false);

		if (!e) {	/* not even parsed for IPv6: the compiler never sees it */
			ipt_rule_free(&r);
			ipt_table_free(&t);
			continue;
		}
		ipt_rule_add_match(r, e);
		add(t, "INPUT", r);
		ck_assert_int_ne(cp_compile(t, NULL, &cc, &err), 0);
		ck_assert_msg(strstr(err.msg, names[i]) != NULL, "%s", err.msg);
		ipt_table_free(&t);
	}
}
END_TEST

/* ================================================================ on the wire */

static char peer[64];		/* the peer namespace (main removes it) */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	return r == -1 ? -1 : WEXITSTATUS(r);
}

static void load_mode(const struct ipt_table *t, enum dp_ingress mode)
{
	struct cp_compiled *cc = compile(t);
	struct ipt_err err = { 0 };
	struct dp_opts o = { .ingress = mode };
	int r = dp_load(cc, NULL, 0, &o, &err);

	ck_assert_msg(r == 0, "dp_load: %d %s", r, err.msg);
	cp_compiled_free(&cc);
}

static void load(const struct ipt_table *t)
{
	load_mode(t, DP_INGRESS_XDP);
}

static __u64 packets(int idx)
{
	__u64 (*c)[2] = NULL, v;
	unsigned int n = 0;
	struct ipt_err err = { 0 };

	ipt_af = AF_INET6;
	ck_assert_int_eq(dp_read_counters(&c, &n, &err), 0);
	ck_assert_uint_gt(n, (unsigned int)idx);
	v = c[idx][0];
	free(c);
	return v;
}

/* Real packets: this namespace and a peer over a veth pair, IPv6 addresses
 * (nodad), rulesets installed by the control plane (dp_load, XDP ingress): ping -6
 * and UDP datagrams pass or are dropped as the rules say. */
START_TEST(t_wire)
{
	const char *ping = "ip netns exec %s ping -6 -n -c1 -W1 2001:db8:77::1 >/dev/null 2>&1";
	const char *ping_ll = "ip netns exec %s ping -6 -n -c1 -W1 "
			      "$(ip -6 -o addr show dev v6a scope link | awk '{print $4}' | "
			      "cut -d/ -f1)%%v6b >/dev/null 2>&1";
	const char *udp = "ip netns exec %s bash -c 'echo x >/dev/udp/2001:db8:77::1/%d'";
	struct ipt_table *t;
	struct ipt_rule *r;
	__u64 before;

	ck_assert_int_eq(sh("ip link set lo up && ip netns add %s && "
			    "ip link add v6a type veth peer name v6b netns %s && "
			    "sysctl -qw net.ipv6.conf.v6a.accept_dad=0 && "
			    "ip addr add 2001:db8:77::1/64 dev v6a nodad && ip link set v6a up && "
			    "ip netns exec %s sh -c 'ip link set lo up && "
			    "sysctl -qw net.ipv6.conf.v6b.accept_dad=0 && "
			    "ip addr add 2001:db8:77::2/64 dev v6b nodad && ip link set v6b up'",
			    peer, peer, peer), 0);
	/* the link needs a moment: retried while nothing filters */
	char cmd[512];

	snprintf(cmd, sizeof(cmd), ping_ll, peer);
	ck_assert_int_eq(sh("for i in 1 2 3 4 5 6; do %s && exit 0; sleep 0.5; done; exit 1", cmd),
			 0);
	ck_assert_int_eq(sh(ping, peer), 0);

	/* 0: -p icmpv6 --icmpv6-type echo-request -j DROP */
	t = table6();
	r = rule(NULL, NULL, 58, DRP);
	icmp6_type(r, 128, -1);
	add(t, "INPUT", r);
	load(t);
	ck_assert_int_ne(sh(ping, peer), 0);
	ck_assert_uint_eq(packets(0), 1);
	/* to our link-local address: a local route, INPUT (as ip6tables) */
	ck_assert_int_ne(sh(ping_ll, peer), 0);
	ck_assert_uint_eq(packets(0), 2);
	ipt_table_free(&t);

	/* 0: -s the peer -p udp --dport 9999 -j DROP; 1: -p udp -j ACCEPT */
	t = table6();
	r = rule("2001:db8:77::2/128", NULL, 17, DRP);
	udp_ports(r, 9999, 9999);
	add(t, "INPUT", r);
	add(t, "INPUT", rule(NULL, NULL, 17, ACC));
	load(t);
	ck_assert_int_eq(sh(ping, peer), 0);
	before = packets(1);
	ck_assert_int_eq(sh(udp, peer, 9999), 0);
	ck_assert_int_eq(sh(udp, peer, 9998), 0);
	usleep(200000);
	ck_assert_uint_eq(packets(0), 1);
	ck_assert_uint_eq(packets(1), before + 1);
	ipt_table_free(&t);

	/* the same at tc ingress (the ruleset judged there instead of XDP) */
	t = table6();
	r = rule(NULL, NULL, 58, DRP);
	icmp6_type(r, 128, -1);
	add(t, "INPUT", r);
	load_mode(t, DP_INGRESS_TC);
	ck_assert_int_ne(sh(ping, peer), 0);
	ck_assert_int_ne(sh(ping_ll, peer), 0);
	ck_assert_uint_eq(packets(0), 2);
	ipt_table_free(&t);
	t = table6();
	load_mode(t, DP_INGRESS_XDP);
	ck_assert_int_eq(sh(ping, peer), 0);
	ipt_table_free(&t);

	/* a DROP policy with nothing else breaks neighbour discovery too, as with
	 * ip6tables: a neighbour entry flushed cannot come back */
	t = table6();
	ipt_chain_find(t, "INPUT")->policy = IPT_V_DROP;
	load(t);
	sh("ip netns exec %s ip -6 neigh flush dev v6b", peer);
	ck_assert_int_ne(sh(ping, peer), 0);
	ipt_table_free(&t);
	t = table6();
	load(t);
	/* neighbour discovery starts over (a FAILED entry waits): retried */
	snprintf(cmd, sizeof(cmd), ping, peer);
	ck_assert_int_eq(sh("for i in 1 2 3 4 5 6; do %s && exit 0; sleep 0.5; done; exit 1", cmd),
			 0);
	ipt_table_free(&t);
	{
		struct ipt_err err = { 0 };

		ck_assert_int_eq(dp_remove(&err), 0);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ipv6");
	TCase *t = tcase_create("ipv6");

	tcase_set_timeout(t, 600);
	tcase_add_test(t, t_ext_headers);
	tcase_add_test(t, t_truncated);
	tcase_add_test(t, t_addresses);
	tcase_add_test(t, t_group);
	tcase_add_test(t, t_fold_filter6);
	tcase_add_test(t, t_group_deep);
	tcase_add_test(t, t_lists_prefix6);
	tcase_add_test(t, t_families);
	tcase_add_test(t, t_refused);
	tcase_add_test(t, t_masks);
	tcase_add_test(t, t_differential);
	tcase_add_test(t, t_windows_diff);
	tcase_add_test(t, t_tuple_diff);
	tcase_add_test(t, t_vmap_diff);
	tcase_add_test(t, t_tuple_pairs);
	tcase_add_test(t, t_tuple_bounds);
	suite_add_tcase(s, t);
	t = tcase_create("wire");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, t_wire);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ipv6: FAILED: needs root (BPF, a network namespace); "
			"this test never skips\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "test_ipv6: FAILED: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return 1;
	}
	snprintf(peer, sizeof(peer), "v6dp-peer-%d", (int)getpid());
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	sh("ip netns del %s 2>/dev/null", peer);	/* also after a failure */
	srunner_free(sr);
	return failed ? 1 : 0;
}
