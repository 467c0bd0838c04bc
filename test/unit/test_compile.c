// SPDX-License-Identifier: GPL-2.0
/*
 * The rule compiler (controlplane/compile.c) against the reference evaluator
 * (controlplane/refeval.c):
 *  - table-driven cases for every match, negation, range, jump kind and group,
 *    each checked in both evaluators (verdict and counter trace);
 *  - a randomized differential (fixed seed): random rulesets x random packets,
 *    zero disagreements, a reproducer printed on failure;
 *  - large deny lists (groups): compile time, memory, sampled classification;
 *  - the refusals: --tcp-option, nesting depth, the memory limit.
 */
#include <check.h>
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>

#include "compile.h"
#include "restore.h"
#include "save.h"
#include "strbuf.h"

static const struct cp_link links[] = {
	{ 1, "lo" }, { 2, "eth0" }, { 3, "eth1" }, { 4, "veth0" }, { 5, "veth1" },
	{ 6, "ppp0" }, { 7, "br-lan" }, { 8, "eth10" },
};
static const struct cp_env env = { links, sizeof(links) / sizeof(links[0]), 0, 0, 0 };
static const struct cp_env env_g2 = { links, sizeof(links) / sizeof(links[0]), 2, 0, 0 };
/* tuple groups from runs of 2 rules (the default needs 4096) */
static const struct cp_env env_t2 = { links, sizeof(links) / sizeof(links[0]), 2, 0, 2 };

static const char *const vname[] = { "ACCEPT", "DROP", "REJECT" };
static const char *const cname[] = { "INPUT", "FORWARD", "OUTPUT" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- tables */

static bool quiet = true;	/* silence the parser's warnings (reversed ranges) */

static struct ipt_table *load_err(const char *body, struct ipt_err *err)
{
	int saved = -1;

	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t = NULL;
	struct ipt_restore_opts o = { .prog = "bpf-iptables-restore" };
	unsigned int line = 0;

	/* body: policy lines (":INPUT DROP") and rule lines */
	sb_adds(&sb, "*filter\n");
	if (!strstr(body, ":INPUT "))
		sb_adds(&sb, ":INPUT ACCEPT [0:0]\n");
	if (!strstr(body, ":FORWARD "))
		sb_adds(&sb, ":FORWARD ACCEPT [0:0]\n");
	if (!strstr(body, ":OUTPUT "))
		sb_adds(&sb, ":OUTPUT ACCEPT [0:0]\n");
	sb_adds(&sb, body);
	sb_adds(&sb, "\nCOMMIT\n");
	ipt_table_new(&t);
	ipt_err_clear(err);
	if (quiet) {
		int null = open("/dev/null", O_WRONLY);

		fflush(stderr);
		saved = dup(2);
		dup2(null, 2);
		close(null);
	}
	if (ipt_restore(sb_str(&sb), sb.len, &t, &o, err, &line)) {
		ipt_table_free(&t);
		t = NULL;
	}
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	sb_free(&sb);
	return t;
}

static struct ipt_table *load(const char *body)
{
	struct ipt_err err;
	struct ipt_table *t = load_err(body, &err);

	ck_assert_msg(t != NULL, "restore failed: %s\n%s", err.msg, body);
	return t;
}

/* ---------------------------------------------------------------- packets */

static struct cp_packet pkt(const char *src, const char *dst, int proto)
{
	struct cp_packet p;

	memset(&p, 0, sizeof(p));
	p.saddr = inet_addr(src);
	p.daddr = inet_addr(dst);
	p.proto = (__u8)proto;
	p.len = 100;
	if (proto == 6 || proto == 17 || proto == 132 || proto == 33 || proto == 136) {
		p.has_ports = true;
		p.sport = 40000;
		p.dport = 80;
	}
	if (proto == 6) {
		p.has_tcp = true;
		p.tcpflags = 0x10;	/* ACK */
	}
	if (proto == 1) {
		p.has_icmp = true;
		p.icmp_type = 8;
	}
	return p;
}

static struct cp_packet tcp(const char *src, const char *dst, int sport, int dport, int flags)
{
	struct cp_packet p = pkt(src, dst, 6);

	p.sport = (__u16)sport;
	p.dport = (__u16)dport;
	p.tcpflags = (__u8)flags;
	return p;
}

static struct cp_packet udp(const char *src, const char *dst, int sport, int dport)
{
	struct cp_packet p = pkt(src, dst, 17);

	p.sport = (__u16)sport;
	p.dport = (__u16)dport;
	return p;
}

static struct cp_packet icmp(const char *src, const char *dst, int type, int code)
{
	struct cp_packet p = pkt(src, dst, 1);

	p.icmp_type = (__u8)type;
	p.icmp_code = (__u8)code;
	return p;
}

static void fmt_packet(char *buf, size_t n, const struct cp_packet *p)
{
	char s[16], d[16];

	inet_ntop(AF_INET, &p->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &p->daddr, d, sizeof(d));
	snprintf(buf, n, "src=%s dst=%s proto=%u ports=%d:%u:%u tcp=%d:0x%02x icmp=%d:%u/%u "
		 "frag=%d len=%u iif=%u oif=%u mark=0x%x mac=%d:%02x:%02x:%02x:%02x:%02x:%02x",
		 s, d, p->proto, p->has_ports, p->sport, p->dport, p->has_tcp, p->tcpflags,
		 p->has_icmp, p->icmp_type, p->icmp_code, p->nonfirst_frag, p->len, p->iif, p->oif,
		 p->mark, p->has_mac, p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4],
		 p->mac[5]);
}

/* "INPUT:0 u1:2 INPUT:P" */
static void fmt_trace(char *buf, size_t n, const struct ipt_table *t, const struct cp_trace *tr)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < tr->ncounted && i < CP_TRACE_MAX && o < n; i++) {
		unsigned int ci;
		int ri;

		cp_counter_owner(t, tr->counted[i], &ci, &ri);
		if (ci >= t->nchains)
			o += snprintf(buf + o, n - o, "%s?%u", i ? " " : "", tr->counted[i]);
		else if (ri < 0)
			o += snprintf(buf + o, n - o, "%s%s:P", i ? " " : "", t->chains[ci]->name);
		else
			o += snprintf(buf + o, n - o, "%s%s:%d", i ? " " : "", t->chains[ci]->name, ri);
	}
	if (tr->ncounted > CP_TRACE_MAX && o < n)
		snprintf(buf + o, n - o, " ...(%u)", tr->ncounted);
}

static bool same_trace(const struct cp_trace *a, const struct cp_trace *b)
{
	if (a->verdict != b->verdict || a->ncounted != b->ncounted)
		return false;
	for (unsigned int i = 0; i < a->ncounted && i < CP_TRACE_MAX; i++)
		if (a->counted[i] != b->counted[i])
			return false;
	return true;
}

/* ---------------------------------------------------------------- table-driven */

/* Both evaluators on one packet; the verdict and trace must be want_v / want_tr
 * (NULL: do not check the trace) and the same in both. */
static void expect_cc(const struct ipt_table *t, const struct cp_compiled *cc,
		      const struct cp_env *e, enum bpfipt_chain c, struct cp_packet p,
		      const char *want_v, const char *want_tr, const char *what)
{
	struct cp_trace rt, lt;
	char rs[1024], ls[1024], ps[512];
	int rr = cp_ref_eval(t, e, c, &p, &rt);
	int lr = cp_lbvs_eval(cc, c, &p, &lt);

	fmt_trace(rs, sizeof(rs), t, &rt);
	fmt_trace(ls, sizeof(ls), t, &lt);
	fmt_packet(ps, sizeof(ps), &p);
	ck_assert_msg(rr == 0 && lr == 0, "%s: eval rc ref %d lbvs %d", what, rr, lr);
	ck_assert_msg(!strcmp(vname[rt.verdict], want_v), "%s: %s: ref verdict %s, want %s [%s]",
		      what, ps, vname[rt.verdict], want_v, rs);
	ck_assert_msg(same_trace(&rt, &lt), "%s: %s: ref %s [%s] lbvs %s [%s]", what, ps,
		      vname[rt.verdict], rs, vname[lt.verdict], ls);
	if (want_tr)
		ck_assert_msg(!strcmp(rs, want_tr), "%s: %s: trace [%s], want [%s]", what, ps, rs,
			      want_tr);
}

struct fixture {
	struct ipt_table *t;
	struct cp_compiled *cc;
	const struct cp_env *env;
};

static struct fixture fx(const char *rules, const struct cp_env *e)
{
	struct fixture f = { load(rules), NULL, e };
	struct ipt_err err;

	ipt_err_clear(&err);
	ck_assert_msg(cp_compile(f.t, e, &f.cc, &err) == 0, "compile: %s\n%s", err.msg, rules);
	return f;
}

static void fx_free(struct fixture *f)
{
	cp_compiled_free(&f->cc);
	ipt_table_free(&f->t);
}

#define EXPECT(f, c, p, v, tr) expect_cc((f).t, (f).cc, (f).env, c, p, v, tr, #p)

START_TEST(t_addresses)
{
	struct fixture f = fx("-A INPUT -s 10.1.0.0/16 -j ACCEPT\n"
			      "-A INPUT ! -s 10.0.0.0/8 -d 192.168.1.1 -j REJECT\n"
			      "-A INPUT -s 10.0.1.0/255.0.255.0 -j DROP\n"
			      "-A INPUT -d 172.16.0.0/12 ! -s 10.2.0.0/16 -j DROP\n"
			      "-A INPUT -s 0.0.0.0/0 -d 10.9.9.9 -j ACCEPT\n"
			      ":INPUT DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, pkt("10.1.2.3", "1.1.1.1", 47), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, pkt("11.1.2.3", "192.168.1.1", 47), "REJECT", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, pkt("10.3.2.3", "192.168.1.1", 47), "DROP", "INPUT:P");
	/* non-contiguous mask: 10.x.1.y */
	EXPECT(f, BPFIPT_INPUT, pkt("10.77.1.200", "1.1.1.1", 47), "DROP", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, pkt("10.77.2.200", "1.1.1.1", 47), "DROP", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("10.2.0.1", "172.20.0.1", 47), "DROP", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("10.3.0.1", "172.20.0.1", 47), "DROP", "INPUT:3");
	EXPECT(f, BPFIPT_INPUT, pkt("10.3.0.1", "10.9.9.9", 47), "ACCEPT", "INPUT:4");
	/* other chains: policy ACCEPT, nothing counted but the policy */
	EXPECT(f, BPFIPT_OUTPUT, pkt("10.1.2.3", "1.1.1.1", 47), "ACCEPT", "OUTPUT:P");
	EXPECT(f, BPFIPT_FORWARD, pkt("10.1.2.3", "1.1.1.1", 47), "ACCEPT", "FORWARD:P");
	/* the REJECT slot */
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].kind, BPFIPT_S_VERDICT);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].verdict, BPFIPT_V_REJECT);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].reject_with, BPFIPT_REJ_PORT_UNREACH);
	ck_assert_uint_eq(f.cc->policy_slot[BPFIPT_INPUT], 5);
	ck_assert_uint_eq(f.cc->ncounters, 5 + 3);
	fx_free(&f);
}
END_TEST

START_TEST(t_iprange)
{
	struct fixture f = fx("-A INPUT -m iprange --src-range 10.0.0.5-10.0.1.3 -j ACCEPT\n"
			      "-A INPUT -s 10.0.0.0/8 -m iprange ! --dst-range 1.0.0.0-1.255.255.255 "
			      "-j REJECT --reject-with tcp-reset -p tcp\n"
			      "-A INPUT -m iprange --src-range 20.0.0.9-20.0.0.1 -j ACCEPT\n"
			      "-A INPUT -m iprange ! --src-range 20.0.0.9-20.0.0.1 -d 5.5.5.5 -j DROP\n",
			      &env);

	EXPECT(f, BPFIPT_INPUT, pkt("10.0.0.5", "1.1.1.1", 6), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, pkt("10.0.1.3", "1.1.1.1", 6), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, pkt("10.0.0.4", "1.1.1.1", 6), "ACCEPT", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("10.0.1.4", "2.1.1.1", 6), "REJECT", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, pkt("10.0.1.4", "2.1.1.1", 17), "ACCEPT", "INPUT:P");
	/* reversed: never matches, negated: always */
	EXPECT(f, BPFIPT_INPUT, pkt("20.0.0.5", "5.5.5.5", 17), "DROP", "INPUT:3");
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].reject_with, BPFIPT_REJ_TCP_RESET);
	fx_free(&f);
}
END_TEST

START_TEST(t_proto_ports)
{
	struct fixture f = fx("-A INPUT -p tcp --dport 22 -j ACCEPT\n"
			      "-A INPUT -p tcp ! --sport 1000:2000 --dport 23 -j ACCEPT\n"
			      "-A INPUT -p udp --sport 53 --dport 1024: -j ACCEPT\n"
			      "-A INPUT -p udp ! --dport 0:1023 -j DROP\n"
			      "-A INPUT ! -p tcp -s 9.9.9.9 -j DROP\n"
			      "-A INPUT -p 47 -j ACCEPT\n"
			      "-A INPUT -p tcp -m tcp -j LOG\n"
			      ":INPUT DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 5000, 22, 2), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 5000, 23, 2), "ACCEPT", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1500, 23, 2), "DROP", "INPUT:6 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 53, 1024), "ACCEPT", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 53, 1023), "DROP", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 54, 4000), "DROP", "INPUT:3");
	EXPECT(f, BPFIPT_INPUT, pkt("9.9.9.9", "2.2.2.2", 17), "DROP", "INPUT:4");
	EXPECT(f, BPFIPT_INPUT, pkt("9.9.9.9", "2.2.2.2", 6), "DROP", "INPUT:6 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("9.9.9.8", "2.2.2.2", 47), "ACCEPT", "INPUT:5");

	/* a non-first fragment has no ports: no tcp/udp match (even negated) */
	struct cp_packet p = tcp("1.1.1.1", "2.2.2.2", 5000, 22, 2);

	p.nonfirst_frag = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	p = udp("1.1.1.1", "2.2.2.2", 54, 4000);
	p.nonfirst_frag = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	/* a truncated header: no match */
	p = udp("1.1.1.1", "2.2.2.2", 54, 4000);
	p.has_ports = false;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_tcpflags)
{
	struct fixture f = fx("-A INPUT -p tcp --syn -j DROP\n"
			      "-A INPUT -p tcp ! --syn --dport 80 -j ACCEPT\n"
			      "-A INPUT -p tcp --tcp-flags ALL NONE -j REJECT\n"
			      "-A INPUT -p tcp ! --tcp-flags SYN,FIN SYN,FIN -j ACCEPT\n", &env);

	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 80, 0x02), "DROP", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 80, 0x12), "ACCEPT", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 80, 0x2A), "DROP", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 81, 0x00), "REJECT", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 81, 0x03), "ACCEPT", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 81, 0x11), "ACCEPT", "INPUT:3");
	/* has_tcp false (truncated): no tcp match */
	struct cp_packet p = tcp("1.1.1.1", "2.2.2.2", 1, 80, 0x02);

	p.has_tcp = false;
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_multiport)
{
	struct fixture f = fx("-A INPUT -p tcp -m multiport --dports 22,80:90,443 -j ACCEPT\n"
			      "-A INPUT -p udp -m multiport ! --sports 53,123 -j DROP\n"
			      "-A INPUT -p tcp -m multiport --ports 7000:7010,9 -j REJECT\n"
			      "-A INPUT -p udp -m multiport ! --ports 1:10 -j ACCEPT\n"
			      ":INPUT DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 85, 0), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 443, 0), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 444, 0), "DROP", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 7005, 444, 0), "REJECT", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 444, 9, 0), "REJECT", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 54, 1), "DROP", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 53, 1), "DROP", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 53, 11), "ACCEPT", "INPUT:3");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 123, 11), "ACCEPT", "INPUT:3");
	struct cp_packet p = udp("1.1.1.1", "2.2.2.2", 53, 11);

	p.nonfirst_frag = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_icmp)
{
	struct fixture f = fx("-A INPUT -p icmp --icmp-type echo-request -j ACCEPT\n"
			      "-A INPUT -p icmp --icmp-type 3/1 -j DROP\n"
			      "-A INPUT -p icmp ! --icmp-type destination-unreachable -j REJECT\n"
			      "-A INPUT -p icmp --icmp-type any -j LOG\n"
			      "-A INPUT -p icmp ! --icmp-type any -j ACCEPT\n"
			      ":INPUT DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, icmp("1.1.1.1", "2.2.2.2", 8, 0), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, icmp("1.1.1.1", "2.2.2.2", 3, 1), "DROP", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, icmp("1.1.1.1", "2.2.2.2", 3, 2), "DROP", "INPUT:3 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, icmp("1.1.1.1", "2.2.2.2", 0, 0), "REJECT", "INPUT:2");
	struct cp_packet p = icmp("1.1.1.1", "2.2.2.2", 0, 0);

	p.has_icmp = false;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	p = icmp("1.1.1.1", "2.2.2.2", 8, 0);
	p.nonfirst_frag = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_frag_len)
{
	struct fixture f = fx("-A INPUT -f -j DROP\n"
			      "-A INPUT ! -f -m length --length 0:99 -j REJECT\n"
			      "-A INPUT -m length ! --length 100:1500 -j ACCEPT\n"
			      "-A INPUT -m length --length 1000 -j LOG\n", &env);
	struct cp_packet p = pkt("1.1.1.1", "2.2.2.2", 17);

	p.nonfirst_frag = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:0");
	p.nonfirst_frag = false;
	p.len = 99;
	EXPECT(f, BPFIPT_INPUT, p, "REJECT", "INPUT:1");
	p.len = 1501;
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:2");
	p.len = 1000;
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:3 INPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_interfaces)
{
	struct fixture f = fx("-N in\n-N out\n"
			      "-A INPUT -i eth0 -j DROP\n"
			      "-A INPUT -i veth+ -p udp -j REJECT\n"
			      "-A INPUT ! -i eth+ -p tcp -j DROP\n"
			      "-A INPUT -j out\n"
			      "-A FORWARD -i eth1 -o eth0 -j ACCEPT\n"
			      "-A FORWARD ! -o eth+ -j DROP\n"
			      "-A FORWARD -j in\n"
			      "-A OUTPUT -o ppp0 -j REJECT\n"
			      "-A OUTPUT -j in\n"
			      "-A in -i + -j LOG\n"
			      "-A in -i eth10 -j DROP\n"
			      "-A in ! -i wg0 -p 47 -j REJECT\n"
			      "-A out -o eth0 -j DROP\n"
			      "-A out ! -o eth0 -p 47 -j REJECT\n"
			      ":FORWARD DROP\n", &env);
	struct cp_packet p = pkt("1.1.1.1", "2.2.2.2", 17);

	p.iif = 2;	/* eth0 */
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:0");
	p.iif = 5;	/* veth1 */
	EXPECT(f, BPFIPT_INPUT, p, "REJECT", "INPUT:1");
	p.proto = 6;
	p.has_tcp = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:2");
	p.iif = 8;	/* eth10 */
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:3 INPUT:P");
	p.iif = 99;	/* unknown ifindex: no name pattern matches it */
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:2");
	/* -o in a chain called from INPUT: no output interface */
	p = pkt("1.1.1.1", "2.2.2.2", 47);
	p.iif = 3;
	EXPECT(f, BPFIPT_INPUT, p, "REJECT", "INPUT:3 out:1");

	p = pkt("1.1.1.1", "2.2.2.2", 47);
	p.iif = 3;
	p.oif = 2;
	EXPECT(f, BPFIPT_FORWARD, p, "ACCEPT", "FORWARD:0");
	p.oif = 6;
	EXPECT(f, BPFIPT_FORWARD, p, "DROP", "FORWARD:1");
	p.oif = 3;
	EXPECT(f, BPFIPT_FORWARD, p, "REJECT", "FORWARD:2 in:0 in:2");
	p.iif = 8;
	EXPECT(f, BPFIPT_FORWARD, p, "DROP", "FORWARD:2 in:0 in:1");
	/* OUTPUT: no input interface; "-i +" matches it, "! -i wg0" too */
	p = pkt("1.1.1.1", "2.2.2.2", 47);
	p.oif = 6;
	EXPECT(f, BPFIPT_OUTPUT, p, "REJECT", "OUTPUT:0");
	p.oif = 1;
	EXPECT(f, BPFIPT_OUTPUT, p, "REJECT", "OUTPUT:1 in:0 in:2");
	p.proto = 17;
	EXPECT(f, BPFIPT_OUTPUT, p, "ACCEPT", "OUTPUT:1 in:0 OUTPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_extras)
{
	struct fixture f = fx("-A INPUT -m mark --mark 0x10/0xf0 -j DROP\n"
			      "-A INPUT -m mark ! --mark 0x1 -m mac --mac-source 00:11:22:33:44:55 "
			      "-j REJECT\n"
			      "-A INPUT -m mac ! --mac-source 00:11:22:33:44:55 -j ACCEPT\n"
			      "-A INPUT -m limit --limit 1/s -m comment --comment hi -j LOG\n"
			      "-A INPUT -m conntrack --ctstate INVALID -p 50 -j DROP\n"
			      "-A INPUT -m state --state NEW -p 51 -j DROP\n"
			      "-A INPUT -m conntrack --ctstate ESTABLISHED --ctorigsrc 9.9.0.0/16 "
			      "--ctdir REPLY -p 52 -j ACCEPT\n"
			      "-A INPUT -m conntrack ! --ctstatus ASSURED -p 52 -j REJECT\n"
			      ":INPUT DROP\n", &env);
	struct cp_packet p = pkt("1.1.1.1", "2.2.2.2", 17);
	static const __u8 mac[6] = { 0, 0x11, 0x22, 0x33, 0x44, 0x55 };

	p.mark = 0x1f;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:0");
	p.mark = 0x20;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");
	p.has_mac = true;
	memcpy(p.mac, mac, 6);
	EXPECT(f, BPFIPT_INPUT, p, "REJECT", "INPUT:1");
	p.mark = 1;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");
	p.mac[5] = 0x56;
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:2");
	p.proto = 50;
	p.has_mac = false;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:4");
	p.proto = 51;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");	/* INVALID, not NEW */
	p.ctstate = BPFIPT_CT_NEW;
	p.has_ct = true;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:5");
	/* --ctorigsrc/--ctdir: an extra check; --ctstatus alone: no state test, so
	 * a packet without a connection does not match (xt_conntrack) */
	p.proto = 52;
	p.ctstate = BPFIPT_CT_ESTABLISHED;
	p.ct_osrc = inet_addr("9.9.1.1");
	p.ctdir = 1;
	EXPECT(f, BPFIPT_INPUT, p, "ACCEPT", "INPUT:3 INPUT:6");
	p.ctdir = 0;
	EXPECT(f, BPFIPT_INPUT, p, "REJECT", "INPUT:3 INPUT:7");
	p.ctstatus = BPFIPT_CTS_ASSURED;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");
	p.ctdir = 1;
	p.ct_osrc = inet_addr("9.8.1.1");
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");
	p.ctstate = BPFIPT_CT_INVALID;
	p.has_ct = false;
	EXPECT(f, BPFIPT_INPUT, p, "DROP", "INPUT:3 INPUT:P");

	const struct bpfipt_slot *s = &f.cc->slots[BPFIPT_INPUT][3];

	ck_assert(s->xflags & BPFIPT_X_LIMIT);
	ck_assert_uint_lt(s->extra, f.cc->nextras);
	ck_assert_uint_eq(f.cc->extras[s->extra].limit_cost, 1000000000ull);
	ck_assert_uint_eq(f.cc->extras[s->extra].limit_credit_cap, 5000000000ull);
	ck_assert_uint_eq(s->kind, BPFIPT_S_CONTINUE);
	ck_assert_uint_eq(s->log, 1);
	ck_assert(!(f.cc->slots[BPFIPT_INPUT][4].xflags & BPFIPT_X_CT));	/* a field */
	ck_assert(f.cc->slots[BPFIPT_INPUT][6].xflags & BPFIPT_X_CT);
	ck_assert(f.cc->slots[BPFIPT_INPUT][7].xflags & BPFIPT_X_CT);
	fx_free(&f);
}
END_TEST

START_TEST(t_targets)
{
	struct fixture f = fx("-A INPUT -p 47 -j NFLOG --nflog-group 3\n"
			      "-A INPUT -p 47\n"
			      "-A INPUT -p tcp --syn -j TCPMSS --set-mss 1400\n"
			      "-A INPUT -p 47 -j RETURN\n"
			      "-A INPUT -j DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, pkt("1.1.1.1", "2.2.2.2", 47), "ACCEPT",
	       "INPUT:0 INPUT:1 INPUT:3 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 2, 2), "DROP", "INPUT:2 INPUT:4");
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][0].log, 2);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].log, 0);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][2].kind, BPFIPT_S_CONTINUE);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][3].kind, BPFIPT_S_RETURN);
	fx_free(&f);
}
END_TEST

START_TEST(t_chains)
{
	struct fixture f = fx("-N a\n-N b\n-N c\n-N unused\n"
			      "-A INPUT -p tcp -j a\n"
			      "-A INPUT -p udp -g b\n"
			      "-A INPUT -p 47 -j c\n"
			      "-A INPUT -j LOG\n"
			      "-A FORWARD -j b\n"
			      "-A FORWARD -j ACCEPT\n"
			      "-A a -p tcp --dport 22 -j ACCEPT\n"
			      "-A a -j b\n"
			      "-A a -p tcp --dport 23 -j DROP\n"
			      "-A b -p tcp --sport 1 -j RETURN\n"
			      "-A b -p tcp --sport 2 -j REJECT\n"
			      "-A b -p udp --sport 3 -j c\n"
			      "-A b -p udp --sport 4 -g c\n"
			      "-A c -j LOG\n"
			      "-A c -s 9.0.0.0/8 -j DROP\n"
			      "-A unused -j DROP\n"
			      ":INPUT DROP\n", &env);

	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 22, 2), "ACCEPT", "INPUT:0 a:0");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 23, 2), "DROP",
	       "INPUT:0 a:1 b:0 a:2");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 2, 23, 2), "REJECT", "INPUT:0 a:1 b:1");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 5, 24, 2), "DROP",
	       "INPUT:0 a:1 INPUT:3 INPUT:P");
	/* goto b, b falls off its end: back to INPUT's caller = the policy */
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 5, 24), "DROP", "INPUT:1 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 3, 24), "DROP",
	       "INPUT:1 b:2 c:0 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("9.1.1.1", "2.2.2.2", 4, 24), "DROP", "INPUT:1 b:3 c:0 c:1");
	EXPECT(f, BPFIPT_INPUT, pkt("1.1.1.1", "2.2.2.2", 47), "DROP",
	       "INPUT:2 c:0 INPUT:3 INPUT:P");
	EXPECT(f, BPFIPT_FORWARD, udp("1.1.1.1", "2.2.2.2", 3, 24), "ACCEPT",
	       "FORWARD:0 b:2 c:0 FORWARD:1");
	EXPECT(f, BPFIPT_FORWARD, tcp("1.1.1.1", "2.2.2.2", 1, 24, 0), "ACCEPT",
	       "FORWARD:0 b:0 FORWARD:1");
	/* layout: INPUT 4 rules, policy, then a (3+1), b (4+1), c (2+1); unused absent */
	ck_assert_uint_eq(f.cc->nslots[BPFIPT_INPUT], 4 + 1 + 4 + 5 + 3);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][0].kind, BPFIPT_S_JUMP);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][0].target, 5);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].kind, BPFIPT_S_GOTO);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].target, 9);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][8].kind, BPFIPT_S_RETURN);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][8].counter, BPFIPT_NO_COUNTER);
	ck_assert_uint_eq(f.cc->nslots[BPFIPT_FORWARD], 2 + 1 + 5 + 3);
	ck_assert_uint_eq(f.cc->nslots[BPFIPT_OUTPUT], 1);
	fx_free(&f);

	/* a jump to a chain without rules: a rule the packet goes on from (its
	 * counter), the chain not laid out; a goto to it is still a goto */
	f = fx("-N e\n-N g\n-A INPUT -p tcp -j e\n-A INPUT -p udp -g e\n-A INPUT -j g\n"
	       "-A g -p tcp -j e\n-A g -p tcp -j DROP\n:INPUT ACCEPT\n", &env);
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "2.2.2.2", 1, 22, 2), "DROP",
	       "INPUT:0 INPUT:2 g:0 g:1");
	EXPECT(f, BPFIPT_INPUT, udp("1.1.1.1", "2.2.2.2", 5, 24), "ACCEPT", "INPUT:1 INPUT:P");
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][0].kind, BPFIPT_S_CONTINUE);
	ck_assert_uint_ne(f.cc->slots[BPFIPT_INPUT][0].counter, BPFIPT_NO_COUNTER);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][1].kind, BPFIPT_S_GOTO);
	/* INPUT 3 rules, policy, e's block (the goto's: its end), g (2 + 1) */
	ck_assert_uint_eq(f.cc->nslots[BPFIPT_INPUT], 3 + 1 + 1 + 3);
	fx_free(&f);
}
END_TEST

START_TEST(t_first_match)
{
	struct fixture f = fx("-A OUTPUT -d 10.0.0.0/8 -j LOG\n"
			      "-A OUTPUT -d 10.1.0.0/16 -j ACCEPT\n"
			      "-A OUTPUT -d 10.1.1.0/24 -j DROP\n"
			      "-A OUTPUT -d 10.0.0.0/8 -j REJECT\n", &env);

	EXPECT(f, BPFIPT_OUTPUT, pkt("1.1.1.1", "10.1.1.1", 17), "ACCEPT", "OUTPUT:0 OUTPUT:1");
	EXPECT(f, BPFIPT_OUTPUT, pkt("1.1.1.1", "10.2.1.1", 17), "REJECT", "OUTPUT:0 OUTPUT:3");
	EXPECT(f, BPFIPT_OUTPUT, pkt("1.1.1.1", "11.2.1.1", 17), "ACCEPT", "OUTPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_tuples)
{
	/* INPUT: a run alike but for -s (/24) and --dport, one tuple twice (the
	 * first rule counts), ended by another prefix length; svc, reached from
	 * INPUT and OUTPUT: a run alike but for -d, --sport and --dport */
	static const char rules[] =
		"-N svc\n"
		"-A INPUT -p udp -s 10.1.1.0/24 --dport 53 -j DROP\n"
		"-A INPUT -p udp -s 10.1.2.0/24 --dport 53 -j DROP\n"
		"-A INPUT -p udp -s 10.1.1.0/24 --dport 123 -j DROP\n"
		"-A INPUT -p udp -s 10.1.1.0/24 --dport 53 -j DROP\n"
		"-A INPUT -p udp -s 10.1.3.0/24 --dport 9 -j DROP\n"
		"-A INPUT -p udp -s 10.1.0.0/16 --dport 53 -j DROP\n"
		"-A INPUT -p udp --dport 53 -j ACCEPT\n"
		"-A INPUT -j svc\n"
		"-A OUTPUT -j svc\n"
		"-A svc -p tcp -d 192.168.0.1 --sport 1000 --dport 22 -j REJECT --reject-with tcp-reset\n"
		"-A svc -p tcp -d 192.168.0.2 --sport 1000 --dport 22 -j REJECT --reject-with tcp-reset\n"
		"-A svc -p tcp -d 192.168.0.1 --sport 1001 --dport 80 -j REJECT --reject-with tcp-reset\n"
		"-A svc -p tcp -d 192.168.0.3 --sport 1002 --dport 443 -j REJECT --reject-with tcp-reset\n"
		":INPUT ACCEPT\n";
	static const struct cp_env env_t4 = { links, sizeof(links) / sizeof(links[0]), 0, 0, 4 };
	const struct cp_env *envs[2] = { &env_t4, &env };

	for (int e = 0; e < 2; e++) {
		struct fixture f = fx(rules, envs[e]);
		struct cp_packet frag = udp("10.1.1.5", "9.9.9.9", 1, 53);

		if (e == 0) {
			const struct bpfipt_slot *g = &f.cc->slots[BPFIPT_INPUT][0];

			ck_assert_uint_eq(f.cc->ntgroups, 2);
			ck_assert_uint_eq(f.cc->ntuples, 4 + 4);	/* the repeated tuple once */
			ck_assert(g->xflags & BPFIPT_X_GROUP_TUPLE);
			ck_assert_uint_eq(g->tp_splen, 24);
			ck_assert_uint_eq(g->tp_dplen, 0);
			ck_assert_uint_eq(g->tp_ports, BPFIPT_TP_DPORT | BPFIPT_TP_PROTO);
			ck_assert(!(f.cc->slots[BPFIPT_INPUT][1].xflags & BPFIPT_X_GROUP_TUPLE));
			ck_assert_uint_eq(f.cc->nslots[BPFIPT_INPUT], 4 + 1 + 1 + 1);
			g = &f.cc->slots[BPFIPT_OUTPUT][2];
			ck_assert(g->xflags & BPFIPT_X_GROUP_TUPLE);
			ck_assert_uint_eq(g->tp_dplen, 32);
			ck_assert_uint_eq(g->tp_ports,
					  BPFIPT_TP_SPORT | BPFIPT_TP_DPORT | BPFIPT_TP_PROTO);
		} else {
			ck_assert_uint_eq(f.cc->ntgroups, 0);
		}
		EXPECT(f, BPFIPT_INPUT, udp("10.1.1.5", "9.9.9.9", 1, 53), "DROP", "INPUT:0");
		EXPECT(f, BPFIPT_INPUT, udp("10.1.2.255", "9.9.9.9", 1, 53), "DROP", "INPUT:1");
		EXPECT(f, BPFIPT_INPUT, udp("10.1.1.0", "9.9.9.9", 1, 123), "DROP", "INPUT:2");
		EXPECT(f, BPFIPT_INPUT, udp("10.1.3.7", "9.9.9.9", 1, 9), "DROP", "INPUT:4");
		/* a source and a port of the run, never in one rule */
		EXPECT(f, BPFIPT_INPUT, udp("10.1.2.5", "9.9.9.9", 1, 123), "ACCEPT",
		       "INPUT:7 INPUT:P");
		EXPECT(f, BPFIPT_INPUT, udp("10.1.3.7", "9.9.9.9", 1, 53), "DROP", "INPUT:5");
		EXPECT(f, BPFIPT_INPUT, udp("10.2.0.1", "9.9.9.9", 1, 53), "ACCEPT", "INPUT:6");
		EXPECT(f, BPFIPT_INPUT, tcp("10.1.1.5", "9.9.9.9", 1, 53, 2), "ACCEPT",
		       "INPUT:7 INPUT:P");
		/* a fragment has no ports: no rule with a port matches */
		frag.nonfirst_frag = true;
		frag.has_ports = false;
		EXPECT(f, BPFIPT_INPUT, frag, "ACCEPT", "INPUT:7 INPUT:P");
		EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "192.168.0.2", 1000, 22, 2), "REJECT",
		       "INPUT:7 svc:1");
		EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "192.168.0.1", 1000, 80, 2), "ACCEPT",
		       "INPUT:7 INPUT:P");
		EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.1", "192.168.0.1", 1001, 80, 2), "REJECT",
		       "INPUT:7 svc:2");
		EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "192.168.0.3", 1002, 443, 2), "REJECT",
		       "OUTPUT:0 svc:3");
		EXPECT(f, BPFIPT_OUTPUT, udp("1.1.1.1", "192.168.0.3", 1002, 443), "ACCEPT",
		       "OUTPUT:0 OUTPUT:P");
		fx_free(&f);
	}

	/* by default: a run of 64 that begins a base chain is a group (searched
	 * first, BPFIPT_FAST_TUPLE), and so is one among a few plain rules (from
	 * the slot prefix, BPFIPT_FAST_PFX_TUPLE), a jump to a chain of plain rules
	 * among them, a deny list there counted as one (fail2ban's chain); after a
	 * jump to a chain with a rule of five fields (-s, -d, -p --dport, --sport,
	 * --length: not in the prefix) it takes 4096; Docker's published port
	 * (-d, ! -i, -o, -p tcp --dport) is four; a goto counts as a jump, an
	 * iprange and a length match as fields, TCPMSS (counted, the packet goes
	 * on) as a LOG */
	for (int first = 0; first < 9; first++) {
		static const char *const head[] = {
			"", "-A FORWARD -p tcp --dport 22 -j ACCEPT\n",
			"-N svc\n-A svc -s 10.9.0.0/16 -d 10.8.0.0/16 -p udp --sport 1 --dport 2 "
			"-m length --length 20:1500 -j DROP\n-A FORWARD -p tcp -j svc\n",
			"-N svc\n-A svc -p tcp --dport 9 -j ACCEPT\n-A svc -j RETURN\n"
			"-A svc -s 10.9.0.0/16 -d 10.8.0.0/16 -p udp --sport 1 --dport 2 "
			"-m length --length 20:1500 -j DROP\n-A FORWARD -p tcp -j svc\n",
			"-N svc\n-A FORWARD -p tcp -j svc\n",
			"-N svc\n-A svc -d 172.17.0.2/32 ! -i docker0 -o docker0 -p tcp -m tcp "
			"--dport 80 -j ACCEPT\n-A FORWARD -p tcp -j svc\n",
			"-N svc\n-A svc -p tcp --dport 9 -j ACCEPT\n-A FORWARD -p udp -g svc\n",
			"-A FORWARD -p tcp -m iprange --src-range 10.1.0.1-10.1.0.9 -m length "
			"--length 40:1500 -j ACCEPT\n",
			"-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS "
			"--clamp-mss-to-pmtu\n" };
		static const char *const hit[] = { "FORWARD:7", "FORWARD:8", "FORWARD:0 FORWARD:8",
						   "FORWARD:0 svc:1 FORWARD:8",
						   "FORWARD:0 svc:20 FORWARD:8", "FORWARD:0 FORWARD:8",
						   "FORWARD:8", "FORWARD:8", "FORWARD:0 FORWARD:8" };
		static const char *const miss[] = { "FORWARD:P", "FORWARD:P", "FORWARD:0 FORWARD:P",
						    "FORWARD:0 svc:1 FORWARD:P",
						    "FORWARD:0 svc:20 FORWARD:P",
						    "FORWARD:0 FORWARD:P", "FORWARD:P", "FORWARD:P",
						    "FORWARD:0 FORWARD:P" };
		struct strbuf sb = STRBUF_INIT;
		struct fixture g;

		sb_adds(&sb, head[first]);
		for (unsigned int i = 0; first == 4 && i < 20; i++)
			sb_addf(&sb, "-A svc -s 10.9.%u.1 -j REJECT\n", i);
		if (first == 4)
			sb_adds(&sb, "-A svc -j RETURN\n");
		for (unsigned int i = 0; i < 64; i++)
			sb_addf(&sb, "-A FORWARD -d 10.0.%u.1 -p tcp --dport %u -j DROP\n", i, 80 + i);
		g = fx(sb_str(&sb), &env);
		ck_assert_uint_eq(g.cc->ntgroups, first != 2);
		EXPECT(g, BPFIPT_FORWARD, tcp("1.1.1.1", "10.0.7.1", 1, 87, 2), "DROP", hit[first]);
		EXPECT(g, BPFIPT_FORWARD, tcp("1.1.1.1", "10.0.7.1", 1, 88, 2), "ACCEPT",
		       miss[first]);
		fx_free(&g);
		sb_free(&sb);
	}

	/* IPv6: an ICMPv6 type (-m icmp6) is a field of the prefix as ICMP's is, so
	 * a block beside the rule is a group */
	for (int icmp6 = 0; icmp6 < 2; icmp6++) {
		struct strbuf sb = STRBUF_INIT;
		struct fixture g;

		ipt_af = AF_INET6;
		sb_adds(&sb, "-A INPUT -i lo -j ACCEPT\n");
		sb_adds(&sb, icmp6 ? "-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT\n"
				   : "-A INPUT -p ipv6-icmp -j ACCEPT\n");
		for (unsigned int i = 0; i < 64; i++)
			sb_addf(&sb, "-A INPUT -d 2001:db8::%x -p tcp --dport %u -j DROP\n", i + 1,
				80 + i);
		g = fx(sb_str(&sb), &env);
		ck_assert_int_eq(g.t->family, AF_INET6);
		ck_assert_uint_eq(g.cc->ntgroups, 1);
		fx_free(&g);
		sb_free(&sb);
		ipt_af = AF_INET;
	}

	/* not grouped: an inverted port, a port range, two port matches, and a run
	 * alike in everything (a single-field group takes it); the LOG rules are a
	 * tuple group (their tuples differ: a packet matches one of them) */
	struct fixture f = fx("-A INPUT -p tcp -s 1.1.1.1 ! --dport 22 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.2 ! --dport 23 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.3 --dport 20:21 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.4 --dport 20:22 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.5 -m tcp --dport 1 -m tcp --sport 2 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.6 -m tcp --dport 3 -m tcp --sport 4 -j DROP\n"
			      "-A INPUT -p tcp -s 1.1.1.7 --dport 5 -j LOG\n"
			      "-A INPUT -p tcp -s 1.1.1.8 --dport 6 -j LOG\n"
			      "-A INPUT -p tcp -s 1.1.1.9 --dport 7 -j ACCEPT\n"
			      "-A INPUT -p tcp -s 1.1.1.10 --dport 7 -j ACCEPT\n", &env_t2);
	ck_assert_uint_eq(f.cc->ntgroups, 1);
	ck_assert_uint_eq(f.cc->ngroups, 1);
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.8", "9.9.9.9", 1, 6, 2), "ACCEPT", "INPUT:7 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.8", "9.9.9.9", 1, 5, 2), "ACCEPT", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.2", "9.9.9.9", 1, 22, 2), "DROP", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.4", "9.9.9.9", 1, 22, 2), "DROP", "INPUT:3");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.6", "9.9.9.9", 4, 3, 2), "DROP", "INPUT:5");
	EXPECT(f, BPFIPT_INPUT, tcp("1.1.1.10", "9.9.9.9", 4, 7, 2), "ACCEPT", "INPUT:9");
	fx_free(&f);
}
END_TEST

START_TEST(t_groups)
{
	/* a src run (5 rules, overlapping prefixes), a dst run in a user chain reached
	 * from two base chains, runs broken by a different target */
	struct fixture f = fx("-N deny\n"
			      "-A INPUT -p tcp --dport 22 -j ACCEPT\n"
			      "-A INPUT -s 10.1.2.3 -j DROP\n"
			      "-A INPUT -s 10.0.0.0/8 -j DROP\n"
			      "-A INPUT -s 10.1.0.0/16 -j DROP\n"
			      "-A INPUT -s 192.168.0.0/24 -j DROP\n"
			      "-A INPUT -s 10.1.2.3 -j DROP\n"
			      "-A INPUT -s 10.1.2.3 -j ACCEPT\n"
			      "-A INPUT -j deny\n"
			      "-A OUTPUT -j deny\n"
			      "-A deny -p udp -d 1.1.1.1 -j REJECT\n"
			      "-A deny -p udp -d 1.1.1.0/24 -j REJECT\n"
			      "-A deny -p udp -d 2.0.0.0/8 -j REJECT\n"
			      "-A deny -p udp -d 3.3.3.3 -j REJECT\n"
			      "-A deny -p udp -d 4.4.4.4 -j DROP\n", &env);
	const struct bpfipt_slot *s = &f.cc->slots[BPFIPT_INPUT][1];

	ck_assert(s->xflags & BPFIPT_X_GROUP_SRC);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_INPUT][2].kind, BPFIPT_S_VERDICT);
	ck_assert(!(f.cc->slots[BPFIPT_INPUT][2].xflags & BPFIPT_X_GROUP_SRC));
	ck_assert_uint_eq(f.cc->nslots[BPFIPT_INPUT], 4 + 1 + 2 + 1);
	ck_assert_uint_eq(f.cc->ngroups, 2);
	ck_assert(f.cc->slots[BPFIPT_INPUT][5].xflags & BPFIPT_X_GROUP_DST);
	ck_assert(f.cc->slots[BPFIPT_OUTPUT][2].xflags & BPFIPT_X_GROUP_DST);
	ck_assert_uint_eq(f.cc->slots[BPFIPT_OUTPUT][2].group, f.cc->slots[BPFIPT_INPUT][5].group);

	EXPECT(f, BPFIPT_INPUT, tcp("10.1.2.3", "9.9.9.9", 1, 22, 2), "ACCEPT", "INPUT:0");
	EXPECT(f, BPFIPT_INPUT, pkt("10.1.2.3", "9.9.9.9", 47), "DROP", "INPUT:1");
	EXPECT(f, BPFIPT_INPUT, pkt("10.1.2.4", "9.9.9.9", 47), "DROP", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, pkt("10.2.2.4", "9.9.9.9", 47), "DROP", "INPUT:2");
	EXPECT(f, BPFIPT_INPUT, pkt("192.168.0.9", "9.9.9.9", 47), "DROP", "INPUT:4");
	EXPECT(f, BPFIPT_INPUT, udp("192.168.1.9", "1.1.1.1", 1, 1), "REJECT", "INPUT:7 deny:0");
	EXPECT(f, BPFIPT_INPUT, udp("192.168.1.9", "1.1.1.2", 1, 1), "REJECT", "INPUT:7 deny:1");
	EXPECT(f, BPFIPT_INPUT, udp("192.168.1.9", "2.1.1.2", 1, 1), "REJECT", "INPUT:7 deny:2");
	EXPECT(f, BPFIPT_INPUT, udp("192.168.1.9", "4.4.4.4", 1, 1), "DROP", "INPUT:7 deny:4");
	EXPECT(f, BPFIPT_INPUT, udp("192.168.1.9", "4.4.4.5", 1, 1), "ACCEPT", "INPUT:7 INPUT:P");
	EXPECT(f, BPFIPT_OUTPUT, udp("192.168.1.9", "3.3.3.3", 1, 1), "REJECT", "OUTPUT:0 deny:3");
	EXPECT(f, BPFIPT_OUTPUT, pkt("192.168.1.9", "3.3.3.3", 47), "ACCEPT",
	       "OUTPUT:0 OUTPUT:P");
	fx_free(&f);

	/* LOG and -j CHAIN runs whose addresses overlap are not grouped (several
	 * rules of the run may act; t_vmaps); limit neither */
	f = fx("-N x\n"
	       "-A INPUT -s 1.0.0.0/8 -j LOG\n-A INPUT -s 1.1.0.0/16 -j LOG\n"
	       "-A INPUT -s 1.0.0.0/8 -j LOG\n-A INPUT -s 1.1.0.0/16 -j LOG\n"
	       "-A INPUT -s 1.0.0.0/8 -j x\n-A INPUT -s 1.1.0.0/16 -j x\n"
	       "-A INPUT -s 1.0.0.0/8 -j x\n-A INPUT -s 1.1.0.0/16 -j x\n"
	       "-A INPUT -s 1.0.0.0/8 -m limit -j DROP\n-A INPUT -s 1.1.0.0/16 -m limit -j DROP\n"
	       "-A INPUT -s 1.0.0.0/8 -m limit -j DROP\n-A INPUT -s 1.1.0.0/16 -m limit -j DROP\n"
	       "-A x -j LOG\n", &env_g2);
	ck_assert_uint_eq(f.cc->ngroups, 0);
	EXPECT(f, BPFIPT_INPUT, pkt("1.1.1.1", "9.9.9.9", 47), "DROP",
	       "INPUT:0 INPUT:1 INPUT:2 INPUT:3 INPUT:4 x:0 INPUT:5 x:0 INPUT:6 x:0 INPUT:7 x:0 "
	       "INPUT:8");
	fx_free(&f);
}
END_TEST

/* A run of -j rules to different chains is one group slot (a verdict map):
 * its member slots after the chain's say where each rule goes. Runs of LOG
 * rules and of rules without a target group too; each such run ends where an
 * address overlaps an earlier one of the run (nested, repeated), and a -g
 * does not continue a -j run. */
START_TEST(t_vmaps)
{
	struct fixture f = fx("-N a\n-N b\n-N c\n"
			      "-A INPUT -s 10.0.0.1 -p udp -j a\n"
			      "-A INPUT -s 10.0.0.2 -p udp -j b\n"
			      "-A INPUT -s 10.0.1.0/24 -p udp -j c\n"
			      "-A INPUT -s 10.0.0.4/30 -p udp -j a\n"
			      "-A INPUT -s 10.0.0.5 -p udp -j b\n"
			      "-A INPUT -s 10.0.0.9 -p udp -g c\n"
			      "-A INPUT -d 10.9.0.1 -j LOG\n-A INPUT -d 10.9.0.2 -j LOG\n"
			      "-A INPUT -d 10.9.0.3 -j LOG\n-A INPUT -d 10.9.0.4 -j LOG\n"
			      "-A INPUT -s 10.8.0.1\n-A INPUT -s 10.8.0.2\n-A INPUT -s 10.8.0.3\n"
			      "-A INPUT -s 10.8.0.4\n-A INPUT -s 10.8.0.1\n"
			      "-A a -p udp --dport 1 -j DROP\n"
			      "-A b -j ACCEPT\n"
			      "-A c -p udp --dport 2 -j DROP\n", &env);
	const struct bpfipt_slot *sl = f.cc->slots[BPFIPT_INPUT];
	unsigned int n = f.cc->nslots[BPFIPT_INPUT];

	ck_assert_uint_eq(n, 7 + 3 * 2);
	ck_assert_uint_eq(f.cc->nmslots[BPFIPT_INPUT], 4);
	ck_assert_uint_eq(sl[0].kind, BPFIPT_S_JUMP);
	ck_assert_uint_eq(sl[0].xflags, BPFIPT_X_GROUP_SRC | BPFIPT_X_VMAP);
	ck_assert_uint_eq(sl[0].target, n);
	for (unsigned int k = 0; k < 4; k++) {
		ck_assert_uint_eq(sl[n + k].kind, BPFIPT_S_JUMP);
		ck_assert_uint_eq(sl[n + k].counter, sl[0].counter + k);
	}
	ck_assert_uint_eq(sl[n].target, sl[n + 3].target);
	ck_assert_uint_ne(sl[n].target, sl[n + 1].target);
	ck_assert_uint_ne(sl[n + 1].target, sl[n + 2].target);
	ck_assert_uint_eq(sl[1].kind, BPFIPT_S_JUMP);	/* 10.0.0.5: in 10.0.0.4/30 */
	ck_assert_uint_eq(sl[1].xflags, 0);
	ck_assert_uint_eq(sl[2].kind, BPFIPT_S_GOTO);
	ck_assert_uint_eq(sl[3].kind, BPFIPT_S_CONTINUE);
	ck_assert_uint_eq(sl[3].xflags, BPFIPT_X_GROUP_DST);
	ck_assert_uint_eq(sl[4].xflags, BPFIPT_X_GROUP_SRC);
	ck_assert_uint_eq(sl[5].xflags, 0);		/* 10.8.0.1 again */
	ck_assert_uint_eq(f.cc->nmslots[BPFIPT_OUTPUT], 0);

	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.1", "9.9.9.9", 5, 1), "DROP", "INPUT:0 a:0");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.2", "9.9.9.9", 5, 1), "ACCEPT", "INPUT:1 b:0");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.1.7", "9.9.9.9", 5, 2), "DROP", "INPUT:2 c:0");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.5", "9.9.9.9", 5, 1), "DROP", "INPUT:3 a:0");
	/* back from a: the rule after the group, which holds the address too */
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.5", "9.9.9.9", 5, 9), "ACCEPT", "INPUT:3 INPUT:4 b:0");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.9", "9.9.9.9", 5, 2), "DROP", "INPUT:5 c:0");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.9", "9.9.9.9", 5, 9), "ACCEPT", "INPUT:5 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, udp("10.0.0.3", "9.9.9.9", 5, 1), "ACCEPT", "INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("1.2.3.4", "10.9.0.3", 47), "ACCEPT", "INPUT:8 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("10.8.0.1", "10.9.0.2", 47), "ACCEPT",
	       "INPUT:7 INPUT:10 INPUT:14 INPUT:P");
	EXPECT(f, BPFIPT_INPUT, pkt("10.8.0.4", "10.9.0.9", 47), "ACCEPT", "INPUT:13 INPUT:P");
	fx_free(&f);

	/* rules that differ in their comments too (kube-proxy's): one verdict map;
	 * a rule without the comment match ends the run */
	f = fx("-N a\n-N b\n"
	       "-A OUTPUT -d 10.96.0.1 -p tcp --dport 443 -m comment --comment \"ns/a\" -j a\n"
	       "-A OUTPUT -d 10.96.0.2 -p tcp --dport 443 -m comment --comment \"ns/b\" -j b\n"
	       "-A OUTPUT -d 10.96.0.3 -p tcp --dport 443 -m comment --comment \"ns/c\" -j a\n"
	       "-A OUTPUT -d 10.96.0.4 -p tcp --dport 443 -m comment --comment \"ns/d\" -j b\n"
	       "-A OUTPUT -d 10.96.0.5 -p tcp --dport 443 -j a\n"
	       "-A a -j DROP\n-A b -j ACCEPT\n", &env);
	sl = f.cc->slots[BPFIPT_OUTPUT];
	ck_assert_uint_eq(sl[0].xflags, BPFIPT_X_GROUP_DST | BPFIPT_X_VMAP);
	ck_assert_uint_eq(sl[1].xflags, 0);
	ck_assert_uint_eq(f.cc->nmslots[BPFIPT_OUTPUT], 4);
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.3", 5, 443, 2), "DROP", "OUTPUT:2 a:0");
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.4", 5, 443, 2), "ACCEPT", "OUTPUT:3 b:0");
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.5", 5, 443, 2), "DROP", "OUTPUT:4 a:0");
	fx_free(&f);

	/* and with a port each, a tuple group (kube-proxy's KUBE-SERVICES); the
	 * run ends before a tuple it repeats */
	f = fx("-N a\n-N b\n"
	       "-A OUTPUT -d 10.96.0.1 -p tcp --dport 443 -m comment --comment \"ns/a\" -j a\n"
	       "-A OUTPUT -d 10.96.0.2 -p tcp --dport 53 -m comment --comment \"ns/b\" -j b\n"
	       "-A OUTPUT -d 10.96.0.1 -p tcp --dport 80 -m comment --comment \"ns/c\" -j b\n"
	       "-A OUTPUT -d 10.96.0.2 -p tcp --dport 53 -m comment --comment \"ns/d\" -j a\n"
	       "-A a -j DROP\n-A b -p tcp --dport 80 -j ACCEPT\n", &env_t2);
	sl = f.cc->slots[BPFIPT_OUTPUT];
	ck_assert_uint_eq(sl[0].xflags, BPFIPT_X_GROUP_TUPLE | BPFIPT_X_VMAP);
	ck_assert_uint_eq(f.cc->nmslots[BPFIPT_OUTPUT], 3);
	ck_assert_uint_eq(sl[1].xflags, 0);
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.1", 5, 443, 2), "DROP", "OUTPUT:0 a:0");
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.1", 5, 80, 2), "ACCEPT", "OUTPUT:2 b:0");
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.2", 5, 53, 2), "DROP",
	       "OUTPUT:1 OUTPUT:3 a:0");
	EXPECT(f, BPFIPT_OUTPUT, tcp("1.1.1.1", "10.96.0.2", 5, 443, 2), "ACCEPT", "OUTPUT:P");
	fx_free(&f);
}
END_TEST

START_TEST(t_refusals)
{
	struct ipt_table *t = load("-A INPUT -p tcp --tcp-option 2 -j DROP\n");
	struct cp_compiled *cc = NULL;
	struct ipt_err err;

	ipt_err_clear(&err);
	ck_assert_int_eq(cp_compile(t, &env, &cc, &err), -1);
	ck_assert_ptr_null(cc);
	ck_assert_int_eq(err.code, IPT_EXIT_OTHER);
	ck_assert_msg(strstr(err.msg, "--tcp-option") && strstr(err.msg, "-A INPUT"), "%s", err.msg);
	ipt_table_free(&t);

	/* nesting: 16 levels of -j are fine, 17 are not; -g does not nest */
	struct strbuf sb = STRBUF_INIT;

	for (int depth = 16; depth <= 17; depth++) {
		sb_reset(&sb);
		for (int i = 0; i < depth; i++)
			sb_addf(&sb, "-N c%02d\n-N g%02d\n", i, i);
		sb_adds(&sb, "-A INPUT -j c00\n");
		for (int i = 0; i + 1 < depth; i++)
			sb_addf(&sb, "-A c%02d -j c%02d\n-A c%02d -g c%02d\n", i, i + 1, i, i + 1);
		/* a chain of gotos at the bottom adds no depth */
		sb_addf(&sb, "-A c%02d -g g00\n", depth - 1);
		for (int i = 0; i + 1 < depth; i++)
			sb_addf(&sb, "-A g%02d -g g%02d\n", i, i + 1);
		sb_addf(&sb, "-A g%02d -j DROP\n", depth - 1);
		t = load(sb_str(&sb));
		ipt_err_clear(&err);
		int rc = cp_compile(t, &env, &cc, &err);

		if (depth == 16) {
			ck_assert_msg(rc == 0, "%s", err.msg);
			struct cp_trace tr;
			struct cp_packet p = pkt("1.1.1.1", "2.2.2.2", 17);

			ck_assert_int_eq(cp_lbvs_eval(cc, BPFIPT_INPUT, &p, &tr), 0);
			ck_assert_int_eq(tr.verdict, BPFIPT_V_DROP);
			ck_assert_uint_eq(tr.ncounted, 1 + 15 + 1 + 15 + 1);
			cp_compiled_free(&cc);
		} else {
			ck_assert_int_eq(rc, -1);
			ck_assert_msg(strstr(err.msg, "nested"), "%s", err.msg);
		}
		ipt_table_free(&t);
	}
	sb_free(&sb);
}
END_TEST

/* ---------------------------------------------------------------- random differential */

static __u64 rng_state;

static __u32 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (__u32)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static unsigned int rn(unsigned int n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return rn(100) < pct;
}

static const char *const pfx_pool[] = {
	"10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.2.3", "10.1.2.128/25", "10.1.2.4/30",
	"192.168.0.0/16", "192.168.1.0/24", "192.168.1.1", "0.0.0.0/0", "172.16.0.0/12",
	"10.0.1.0/255.0.255.0", "1.2.3.4", "10.200.0.0/13",
};
static const char *const range_pool[] = {
	"10.1.2.0-10.1.2.200", "10.0.255.250-10.1.0.5", "192.168.1.1", "172.16.5.5-172.31.0.0",
	"10.1.2.5-10.1.2.2", "0.0.0.0-9.255.255.255",
};
static const char *const ctstates[] = { "NEW", "ESTABLISHED,RELATED", "INVALID",
					 "RELATED", "NEW,UNTRACKED" };
static const int port_pool[] = { 0, 1, 22, 53, 80, 443, 1000, 1023, 1024, 2000, 8080, 65535 };
static const char *const if_pool[] = { "eth0", "eth+", "veth1", "veth+", "lo", "ppp0",
				       "+", "wg0", "eth1", "br-lan", "e+" };
static const char *const mac_pool[] = { "00:11:22:33:44:55", "02:00:00:00:00:01" };
static const __u8 mac_bytes[][6] = { { 0, 0x11, 0x22, 0x33, 0x44, 0x55 }, { 2, 0, 0, 0, 0, 1 } };
static const unsigned int mark_pool[] = { 0, 1, 0x10, 0xff, 0x1f };

static void add_ports(struct strbuf *sb, const char *opt)
{
	int a = port_pool[rn(12)], b = port_pool[rn(12)];

	sb_addf(sb, " %s--%s ", chance(25) ? "! " : "", opt);
	if (chance(50) || a == b)
		sb_addf(sb, "%d", a);
	else
		sb_addf(sb, "%d:%d", a < b ? a : b, a < b ? b : a);
}

static void add_multiport(struct strbuf *sb)
{
	static const char *const kinds[] = { "sports", "dports", "ports" };
	unsigned int n = 1 + rn(4);

	sb_addf(sb, " -m multiport %s--%s ", chance(25) ? "! " : "", kinds[rn(3)]);
	for (unsigned int i = 0; i < n; i++) {
		int a = port_pool[rn(12)], b = port_pool[rn(12)];

		if (i)
			sb_addc(sb, ',');
		if (a != b && chance(40))
			sb_addf(sb, "%d:%d", a < b ? a : b, a < b ? b : a);
		else
			sb_addf(sb, "%d", a);
	}
}

/* One random rule in chain `chain` (0..2 base, 3.. user u0..); user chains may only
 * be targeted by chains before them, so there is no loop. */
static void gen_rule(struct strbuf *sb, unsigned int chain, unsigned int nuser, bool no_addr)
{
	static const char *const base[] = { "INPUT", "FORWARD", "OUTPUT" };
	int proto = -1;

	if (chain < 3)
		sb_addf(sb, "-A %s", base[chain]);
	else
		sb_addf(sb, "-A u%u", chain - 3);
	if (!no_addr && chance(40))
		sb_addf(sb, " %s-s %s", chance(20) ? "! " : "", pfx_pool[rn(14)]);
	if (!no_addr && chance(25))
		sb_addf(sb, " %s-d %s", chance(20) ? "! " : "", pfx_pool[rn(14)]);
	if (chain != 2 && chance(15))
		sb_addf(sb, " %s-i %s", chance(25) ? "! " : "", if_pool[rn(11)]);
	if (chain != 0 && chance(15))
		sb_addf(sb, " %s-o %s", chance(25) ? "! " : "", if_pool[rn(11)]);
	if (chance(65)) {
		static const int protos[] = { 6, 6, 17, 17, 1, 47 };

		proto = protos[rn(6)];
	}
	if (proto >= 0) {
		bool inv = chance(10);

		sb_addf(sb, " %s-p %d", inv ? "! " : "", proto);
		if (inv)
			proto = -1;
	}
	if (chance(8))
		sb_addf(sb, " %s-f", chance(40) ? "! " : "");
	if (proto == 6) {
		if (chance(60)) {
			sb_adds(sb, " -m tcp");
			if (chance(50))
				add_ports(sb, "sport");
			if (chance(60))
				add_ports(sb, "dport");
			if (chance(20))
				sb_addf(sb, " %s--syn", chance(30) ? "! " : "");
			else if (chance(15))
				sb_addf(sb, " %s--tcp-flags SYN,ACK,FIN %s", chance(30) ? "! " : "",
					chance(50) ? "SYN" : "ACK,FIN");
		}
		if (chance(15))
			add_multiport(sb);
	} else if (proto == 17) {
		if (chance(60)) {
			sb_adds(sb, " -m udp");
			if (chance(50))
				add_ports(sb, "sport");
			if (chance(60))
				add_ports(sb, "dport");
		}
		if (chance(15))
			add_multiport(sb);
	} else if (proto == 1 && chance(60)) {
		static const char *const types[] = { "echo-request", "3/1", "3", "any", "0",
						     "11/0:1" };

		sb_addf(sb, " -m icmp %s--icmp-type %s", chance(25) ? "! " : "", types[rn(6)]);
	}
	/* one instance: a second -m iprange would not get the options (getopt gives
	 * them to the first instance, as iptables) */
	bool ips = chance(8), ipd = chance(6);

	if (ips || ipd)
		sb_adds(sb, " -m iprange");
	if (ips)
		sb_addf(sb, " %s--src-range %s", chance(25) ? "! " : "", range_pool[rn(6)]);
	if (ipd)
		sb_addf(sb, " %s--dst-range %s", chance(25) ? "! " : "", range_pool[rn(6)]);
	if (chance(8)) {
		int a = rn(4) * 50 + 40, b = a + rn(3) * 30;

		sb_addf(sb, " -m length %s--length %d:%d", chance(30) ? "! " : "", a, b);
	}
	if (chance(8))
		sb_addf(sb, " -m mark %s--mark 0x%x%s", chance(30) ? "! " : "", mark_pool[rn(5)],
			chance(50) ? "/0xf0" : "");
	if (chain < 2 && chance(6))
		sb_addf(sb, " -m mac %s--mac-source %s", chance(30) ? "! " : "", mac_pool[rn(2)]);
	if (chance(4))
		sb_adds(sb, " -m limit --limit 10/s");
	if (chance(4))
		sb_addf(sb, " -m conntrack %s--ctstate %s", chance(25) ? "! " : "",
			ctstates[rn(5)]);
	if (chance(4)) {
		sb_adds(sb, " -m conntrack");
		if (chance(50))
			sb_addf(sb, " --ctstate %s", ctstates[rn(5)]);
		if (chance(40))
			sb_addf(sb, " %s--ctproto %s", chance(25) ? "! " : "",
				chance(50) ? "tcp" : "udp");
		if (chance(40))
			sb_addf(sb, " %s--ctorigsrc %s", chance(25) ? "! " : "", pfx_pool[rn(14)]);
		if (chance(30))
			sb_addf(sb, " %s--ctrepldst %s", chance(25) ? "! " : "", pfx_pool[rn(14)]);
		if (chance(30))
			sb_addf(sb, " %s--ctorigdstport %u", chance(25) ? "! " : "",
				port_pool[rn(12)]);
		if (chance(30))
			sb_addf(sb, " --ctdir %s", chance(50) ? "ORIGINAL" : "REPLY");
		if (chance(30))
			sb_addf(sb, " %s--ctstatus %s", chance(25) ? "! " : "",
				chance(50) ? "ASSURED" : "SEEN_REPLY,CONFIRMED");
		if (chance(20))
			sb_addf(sb, " %s--ctexpire 10:%u", chance(25) ? "! " : "", rn(3) * 100);
		if (chance(10) || sb->buf[sb->len - 1] == 'k')
			sb_adds(sb, " --ctstate NEW");
	}
	if (chance(3))
		sb_addf(sb, " -m state %s--state %s", chance(25) ? "! " : "", ctstates[rn(5)]);
	if (chance(3))
		sb_adds(sb, " -m comment --comment x");

	/* target */
	unsigned int k = rn(100);
	unsigned int first_user = chain < 3 ? 0 : chain - 3 + 1;

	if (k < 22)
		sb_adds(sb, " -j ACCEPT");
	else if (k < 44)
		sb_adds(sb, " -j DROP");
	else if (k < 52)
		sb_addf(sb, " -j REJECT");
	else if (k < 60)
		sb_adds(sb, " -j RETURN");
	else if (k < 68)
		sb_adds(sb, " -j LOG");
	else if (k < 71)
		sb_adds(sb, " -j NFLOG");
	else if (k < 76)
		; /* no target */
	else if (first_user < nuser)
		sb_addf(sb, " -%c u%u", k < 90 ? 'j' : 'g', first_user + rn(nuser - first_user));
	else
		sb_adds(sb, " -j DROP");
	sb_addc(sb, '\n');
}

/* A run of rules identical but for -s (or -d). */
static void gen_run(struct strbuf *sb, unsigned int chain, unsigned int len)
{
	struct strbuf one = STRBUF_INIT;
	bool dst = chance(50);
	const char *rest;

	gen_rule(&one, chain, 0, true);
	/* insert the address after "-A CHAIN" */
	rest = strchr(strchr(sb_str(&one), ' ') + 1, ' ');
	if (!rest)
		rest = strchr(sb_str(&one), '\n');
	for (unsigned int i = 0; i < len; i++) {
		const char *pfx = pfx_pool[rn(14)];
		char buf[64];

		if (!strchr(pfx, '/') || chance(50))
			snprintf(buf, sizeof(buf), "%s", pfx);
		else
			snprintf(buf, sizeof(buf), "10.%u.%u.0/24", rn(3), rn(4));
		if (strstr(pfx, "255.0"))	/* non-contiguous: not groupable */
			snprintf(buf, sizeof(buf), "10.1.%u.%u", rn(4), rn(8));
		sb_addn(sb, sb_str(&one), rest - sb_str(&one));
		sb_addf(sb, " %s %s%s", dst ? "-d" : "-s", buf, rest);
	}
	sb_free(&one);
}

/* A run of rules alike but for their source /24 (or destination /32) and exact
 * ports: a tuple group (env_t2). Only when gen_tuples is set, so that the
 * recorded digests (t_digests) keep their rulesets. */
static bool gen_tuples;

static void gen_trun(struct strbuf *sb, unsigned int chain, unsigned int nuser, unsigned int len)
{
	static const char *const base[] = { "INPUT", "FORWARD", "OUTPUT" };
	static const char *const tgt[] = { "ACCEPT", "DROP", "REJECT", "RETURN", "LOG", "" };
	static const char *const net[] = { "10.1.2", "192.168.1", "10.0.1", "10.1.3" };
	bool dst = chance(40), sp = chance(40), dp = !sp || chance(60), tcp = chance(50);
	const char *t = tgt[rn(6)], *iif = chance(20) ? if_pool[rn(11)] : NULL;
	unsigned int first_user = chain < 3 ? 0 : chain - 3 + 1;
	/* -j/-g to a chain each (a verdict map; -j: cut at a repeated tuple) */
	int call = first_user < nuser && chance(40) ? (chance(70) ? 'j' : 'g') : 0;

	for (unsigned int i = 0; i < len; i++) {
		if (chain < 3)
			sb_addf(sb, "-A %s", base[chain]);
		else
			sb_addf(sb, "-A u%u", chain - 3);
		if (iif && chain != 2)
			sb_addf(sb, " -i %s", iif);
		sb_addf(sb, " -p %s", tcp ? "tcp" : "udp");
		if (dst)
			sb_addf(sb, " -d %s.%u", net[rn(4)], rn(2) ? 1 : rn(8));
		else
			sb_addf(sb, " -s %s.0/24", net[rn(4)]);
		if (sp)
			sb_addf(sb, " --sport %d", port_pool[rn(11)] + rn(2));
		if (dp)
			sb_addf(sb, " --dport %d", port_pool[rn(11)] + rn(2));
		if (call)
			sb_addf(sb, " -%c u%u\n", call, first_user + rn(nuser - first_user));
		else
			sb_addf(sb, "%s%s\n", *t ? " -j " : "", t);
	}
}

/* A run of rules alike but for -s (or -d) and the chain each jumps (or goes) to:
 * a verdict map when their addresses are disjoint, cut where one overlaps an
 * earlier one (nested prefixes, the same address twice). Only when gen_vmaps is
 * set (t_digests keeps its rulesets). */
static bool gen_vmaps;

static void gen_vrun(struct strbuf *sb, unsigned int chain, unsigned int nuser, unsigned int len)
{
	unsigned int first_user = chain < 3 ? 0 : chain - 3 + 1;
	struct strbuf one = STRBUF_INIT;
	bool dst = chance(50), go = chance(25), named = chance(30);
	const char *rest, *tgt;

	gen_rule(&one, chain, 0, true);
	/* the rule without its target; the address after "-A CHAIN" */
	tgt = strstr(sb_str(&one), " -j ");
	if (!tgt)
		tgt = strchr(sb_str(&one), '\n');
	rest = strchr(strchr(sb_str(&one), ' ') + 1, ' ');
	if (!rest || rest > tgt)
		rest = tgt;
	for (unsigned int i = 0; i < len; i++) {
		char buf[64];

		switch (rn(6)) {
		case 0:
			snprintf(buf, sizeof(buf), "10.1.2.%u/30", 4 * rn(64));
			break;
		case 1:
			snprintf(buf, sizeof(buf), "10.1.2.%u", rn(256));
			break;
		case 2:
			snprintf(buf, sizeof(buf), "10.1.%u.0/24", rn(4));
			break;
		case 3:
			snprintf(buf, sizeof(buf), "192.168.1.%u", rn(4));
			break;
		default:
			snprintf(buf, sizeof(buf), "10.1.2.%u/29", 8 * rn(32));
			break;
		}
		sb_addn(sb, sb_str(&one), rest - sb_str(&one));
		sb_addf(sb, " %s %s", dst ? "-d" : "-s", buf);
		sb_addn(sb, rest, tgt - rest);
		if (named)	/* a comment of its own (kube-proxy's) */
			sb_addf(sb, " -m comment --comment r%u", i);
		sb_addf(sb, " -%c u%u\n", go ? 'g' : 'j', first_user + rn(nuser - first_user));
	}
	sb_free(&one);
}

static void gen_ruleset(struct strbuf *sb, unsigned int *nrules_out)
{
	unsigned int nuser = rn(5), nrules = chance(3) ? 61 + rn(240) : 1 + rn(60);
	static const char *const pol[] = { "ACCEPT", "DROP" };

	sb_reset(sb);
	sb_addf(sb, ":INPUT %s [0:0]\n:FORWARD %s [0:0]\n:OUTPUT %s [0:0]\n", pol[rn(2)],
		pol[rn(2)], pol[rn(2)]);
	for (unsigned int i = 0; i < nuser; i++)
		sb_addf(sb, ":u%u - [0:0]\n", i);
	for (unsigned int i = 0; i < nrules;) {
		unsigned int chain = rn(3 + nuser);

		if (gen_vmaps && chance(15) && (chain < 3 ? 0 : chain - 2) < nuser) {
			unsigned int len = 2 + rn(30);

			gen_vrun(sb, chain, nuser, len);
			i += len;
		} else if (gen_tuples && chance(10)) {
			unsigned int len = 2 + rn(8);

			gen_trun(sb, chain, nuser, len);
			i += len;
		} else if (chance(10)) {
			unsigned int len = 2 + rn(5);

			gen_run(sb, chain, len);
			i += len;
		} else {
			gen_rule(sb, chain, nuser, false);
			i++;
		}
	}
	*nrules_out = nrules;
}

static __be32 addr_in(const char *spec)
{
	char buf[64];
	char *slash;
	__u32 a, m = 0xffffffffu;

	snprintf(buf, sizeof(buf), "%s", spec);
	slash = strchr(buf, '-');
	if (slash) {	/* a range: one of the ends or the middle */
		*slash = '\0';
		__u32 lo = ntohl(inet_addr(buf)), hi = ntohl(inet_addr(slash + 1));

		a = rn(3) == 0 ? lo : rn(2) ? hi : lo + (hi - lo) / 2;
		a += rn(3) - 1;
		return htonl(a);
	}
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (strchr(slash + 1, '.'))
			m = ntohl(inet_addr(slash + 1));
		else
			m = atoi(slash + 1) ? 0xffffffffu << (32 - atoi(slash + 1)) : 0;
	}
	a = ntohl(inet_addr(buf));
	a = (a & m) | (rnd() & ~m);
	if (chance(20))
		a ^= 1u << rn(32);
	return htonl(a);
}

static struct cp_packet gen_packet(void)
{
	struct cp_packet p;
	static const int protos[] = { 6, 6, 6, 17, 17, 17, 1, 1, 47, 50 };

	memset(&p, 0, sizeof(p));
	p.saddr = chance(80) ? addr_in(chance(70) ? pfx_pool[rn(14)] : range_pool[rn(6)]) : rnd();
	p.daddr = chance(80) ? addr_in(chance(70) ? pfx_pool[rn(14)] : range_pool[rn(6)]) : rnd();
	p.proto = chance(95) ? (__u8)protos[rn(10)] : (__u8)rn(256);
	p.nonfirst_frag = chance(8);
	if (p.proto == 6 || p.proto == 17) {
		p.has_ports = chance(97);
		p.sport = chance(85) ? (__u16)(port_pool[rn(12)] + rn(3) - 1) : (__u16)rnd();
		p.dport = chance(85) ? (__u16)(port_pool[rn(12)] + rn(3) - 1) : (__u16)rnd();
	}
	if (p.proto == 6) {
		static const __u8 fl[] = { 0x02, 0x12, 0x10, 0x11, 0x01, 0x03, 0x04, 0x18 };

		p.has_tcp = p.has_ports ? chance(98) : false;
		p.tcpflags = chance(80) ? fl[rn(8)] : (__u8)rnd();
	}
	if (p.proto == 1) {
		static const __u8 ty[][2] = { { 8, 0 }, { 0, 0 }, { 3, 1 }, { 3, 3 }, { 11, 1 },
					      { 11, 2 } };
		unsigned int k = rn(6);

		p.has_icmp = chance(97);
		p.icmp_type = chance(85) ? ty[k][0] : (__u8)rnd();
		p.icmp_code = chance(85) ? ty[k][1] : (__u8)rnd();
	}
	p.len = chance(70) ? (__u16)(rn(5) * 50 + 40 + rn(61) - 30) : (__u16)rnd();
	p.iif = rn(11);		/* 0 = none, 1..8 links, 9, 10 unknown */
	p.oif = rn(11);
	p.mark = chance(70) ? mark_pool[rn(5)] : rnd();
	p.has_mac = chance(80);
	if (p.has_mac)
		memcpy(p.mac, mac_bytes[rn(2)], 6);
	if (chance(20))
		p.mac[rn(6)] ^= 1;
	/* as conntrack/ct.bpf.h gives them: INVALID has no connection */
	p.ctstate = (__u8)rn(4);
	p.has_ct = p.ctstate != BPFIPT_CT_INVALID;
	if (p.has_ct) {
		p.ctdir = (__u8)rn(2);
		p.ctstatus = (__u8)(rn(8) << 1);
		p.ct_proto = p.proto;
		p.ct_osrc = chance(50) ? p.saddr : p.daddr;
		p.ct_odst = chance(50) ? p.daddr : p.saddr;
		p.ct_osport = p.sport;
		p.ct_odport = chance(70) ? p.dport : (__u16)port_pool[rn(12)];
		p.ct_expire = rn(300);
	}
	return p;
}

START_TEST(t_random_differential)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long pairs = 0, evals = 0, skipped = 0, bad_sets = 0, fails = 0, groups = 0;
	unsigned long tgroups = 0, by_rule = 0, long_traces = 0, verdicts[3] = { 0, 0, 0 };
	unsigned long vmaps = 0;
	double t0 = now();

	rng_state = getenv("BPFIPT_DIFF_SEED") ? strtoull(getenv("BPFIPT_DIFF_SEED"), NULL, 0)
					      : 0x5eed1234abcdULL;
	if (!rng_state)
		rng_state = 1;
	unsigned long want = getenv("BPFIPT_DIFF_PAIRS") ? strtoul(getenv("BPFIPT_DIFF_PAIRS"), NULL, 0)
							   : 100000;

	for (unsigned int set = 0; pairs < want; set++) {
		unsigned int nrules;
		struct ipt_err err;
		struct ipt_table *t;
		struct cp_compiled *cc = NULL;
		/* every third ruleset with tuple runs, grouped from 2 rules on */
		const struct cp_env *e = set % 3 == 2 ? &env_t2 : set % 3 ? &env_g2 : &env;

		gen_tuples = set % 3 == 2;
		gen_vmaps = set % 3 == 1;
		gen_ruleset(&sb, &nrules);
		gen_tuples = gen_vmaps = false;
		t = load_err(sb_str(&sb), &err);
		if (!t) {
			/* a combination iptables refuses: fine, but it must stay rare */
			bad_sets++;
			ck_assert_msg(bad_sets < 50 + set / 10, "too many refused rulesets; last: %s\n%s",
				      err.msg, sb_str(&sb));
			continue;
		}
		ipt_err_clear(&err);
		ck_assert_msg(cp_compile(t, e, &cc, &err) == 0, "compile failed: %s\n%s", err.msg,
			      sb_str(&sb));
		groups += cc->ngroups;
		tgroups += cc->ntgroups;
		for (int c = 0; c < BPFIPT_NCHAINS; c++)
			for (unsigned int s = 0; s < cc->nslots[c]; s++)
				vmaps += !!(cc->slots[c][s].xflags & BPFIPT_X_VMAP);
		for (unsigned int k = 0; k < 50; k++, pairs++) {
			struct cp_packet p = gen_packet();

			for (int c = 0; c < BPFIPT_NCHAINS; c++) {
				struct cp_trace rt, lt;
				int rr = cp_ref_eval(t, e, c, &p, &rt);
				int lr = cp_lbvs_eval(cc, c, &p, &lt);

				evals++;
				if (lr == 1 && rr == 0 && rt.ncounted >= 16) {
					skipped++;	/* BPFIPT_MAX_STEPS: a documented limit */
					continue;
				}
				if (rr == 0 && lr == 0 && same_trace(&rt, &lt)) {
					verdicts[rt.verdict]++;
					by_rule += rt.ncounted && rt.counted[rt.ncounted - 1] <
						   cc->ncounters - BPFIPT_NCHAINS;
					long_traces += rt.ncounted >= 3;
					continue;
				}
				char rs[2048], ls[2048], ps[512];

				fmt_trace(rs, sizeof(rs), t, &rt);
				fmt_trace(ls, sizeof(ls), t, &lt);
				fmt_packet(ps, sizeof(ps), &p);
				fprintf(stderr, "DISAGREEMENT (set %u, group_min %u) in %s\n"
					"ruleset:\n%spacket: %s\nref  rc %d %s [%s]\nlbvs rc %d %s [%s]\n\n",
					set, e->group_min, cname[c], sb_str(&sb), ps, rr,
					vname[rt.verdict], rs, lr, vname[lt.verdict], ls);
				fails++;
			}
			if (fails)
				break;
		}
		cp_compiled_free(&cc);
		ipt_table_free(&t);
		if (fails)
			break;
	}
	fprintf(stderr, "random differential: %lu (ruleset, packet) pairs, %lu evaluations, "
		"%lu skipped (step limit), %lu refused rulesets, %lu groups, %lu tuple groups, "
		"%lu verdict map slots, %.2f s; decided by a rule %lu, traces >= 3 counters %lu, "
		"ACCEPT %lu DROP %lu REJECT %lu\n", pairs, evals, skipped, bad_sets, groups, tgroups,
		vmaps, now() - t0, by_rule, long_traces, verdicts[0], verdicts[1], verdicts[2]);
	ck_assert_uint_eq(fails, 0);
	ck_assert_uint_ge(pairs, want);
	ck_assert_uint_lt(skipped, evals / 1000 + 1);
	ck_assert_uint_gt(groups, 100);
	ck_assert_uint_gt(tgroups, 100);
	ck_assert_uint_gt(vmaps, 100);
	sb_free(&sb);
}
END_TEST

/* ---------------------------------------------------------------- large deny lists */

static long maxrss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* n distinct /32 or /24 prefixes in 11.0.0.0/8 .. : rule i */
static void deny_prefix(unsigned int i, char *buf, size_t n)
{
	if (i % 4 == 3)
		snprintf(buf, n, "%u.%u.%u.0/24", 100 + (i >> 16) % 100, (i >> 8) & 0xff, i & 0xff);
	else
		snprintf(buf, n, "%u.%u.%u.%u", 11 + (i >> 24), (i >> 16) & 0xff, (i >> 8) & 0xff,
			 (i & 0xff));
}

static void deny_list(unsigned int n, bool expect_ok, bool alternate, size_t mem_limit)
{
	struct cp_env e = env;

	struct strbuf sb = STRBUF_INIT;
	char buf[64];
	struct ipt_table *t;
	struct cp_compiled *cc = NULL;
	struct ipt_err err;
	double t0, t1, t2;

	sb_adds(&sb, ":INPUT DROP [0:0]\n-A INPUT -i lo -j ACCEPT\n"
		"-A INPUT -p tcp --dport 22 -j ACCEPT\n-A INPUT -s 11.0.0.0/8 -p udp -j LOG\n");
	for (unsigned int i = 0; i < n; i++) {
		deny_prefix(i, buf, sizeof(buf));
		sb_addf(&sb, "-A INPUT -s %s -j %s\n", buf, alternate && i % 2 ? "ACCEPT" : "DROP");
	}
	sb_adds(&sb, "-A INPUT -p icmp -j ACCEPT\n-A INPUT -s 12.0.0.0/8 -j ACCEPT\n");
	t0 = now();
	t = load(sb_str(&sb));
	t1 = now();
	ipt_err_clear(&err);
	e.mem_limit = mem_limit;
	int rc = cp_compile(t, &e, &cc, &err);

	t2 = now();
	if (!expect_ok) {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err.msg, "too large"), "%s", err.msg);
		fprintf(stderr, "%u ungroupable rules: refused in %.2f s: %s\n", n, t2 - t1, err.msg);
		goto out;
	}
	ck_assert_msg(rc == 0, "%s", err.msg);
	fprintf(stderr, "deny list %6u rules: restore %.3f s, compile %.3f s, compiled %.1f MB "
		"(%u slots, %u vectors, %u src LPM, %u group LPM), max RSS %ld MB\n", n, t1 - t0,
		t2 - t1, cc->mem / 1e6, cc->nslots[0], cc->nvecs, cc->src.n, cc->group_src.n,
		maxrss_mb());
	ck_assert_double_lt(t2 - t1, 10.0);
	ck_assert_uint_lt(cc->mem, 300u << 20);
	if (!alternate)
		ck_assert_uint_eq(cc->nslots[BPFIPT_INPUT], 3 + 1 + 2 + 1);

	/* sampled: hits of every kind, misses, around the LOG rule */
	rng_state = 42;
	for (unsigned int k = 0; k < 400; k++) {
		struct cp_packet p = pkt("1.1.1.1", "2.2.2.2", k % 3 ? 17 : 6);
		unsigned int i = rn(n);

		deny_prefix(i, buf, sizeof(buf));
		if (strchr(buf, '/'))
			buf[strlen(buf) - 4] = '\0', strcat(buf, "7");
		p.saddr = inet_addr(buf);
		if (k % 5 == 0)
			p.saddr ^= htonl(1u << rn(32));
		if (k % 7 == 0)
			p.iif = 1;
		if (k % 11 == 0)
			p.proto = 1, p.has_icmp = true, p.has_ports = false, p.has_tcp = false;
		for (int c = 0; c < BPFIPT_NCHAINS; c++) {
			struct cp_trace rt;

			ck_assert_int_eq(cp_ref_eval(t, &env, c, &p, &rt), 0);
			expect_cc(t, cc, &env, c, p, vname[rt.verdict], NULL, "deny list sample");
			/* a plain hit: the deny rule's own counter */
			if (c == BPFIPT_INPUT && k % 5 && k % 7 && k % 11) {
				ck_assert_int_eq(rt.verdict, alternate && i % 2 ? BPFIPT_V_ACCEPT
									 : BPFIPT_V_DROP);
				ck_assert_uint_eq(rt.counted[rt.ncounted - 1], 3 + i);
			}
		}
	}
out:
	cp_compiled_free(&cc);
	ipt_table_free(&t);
	sb_free(&sb);
}

START_TEST(t_deny_1k)
{
	deny_list(1000, true, false, 0);
}
END_TEST

START_TEST(t_deny_10k)
{
	deny_list(10000, true, false, 0);
}
END_TEST

START_TEST(t_deny_100k)
{
	deny_list(100000, true, false, 0);
}
END_TEST

START_TEST(t_mem_limit)
{
	/* rules that cannot be grouped (alternating verdicts): each source's vector
	 * is the others' but for its rule's chunk, a window of one chunk (n^2/8
	 * bytes of whole vectors, 50 MB for 20 000 rules) */
	deny_list(5000, true, true, 32u << 20);
	deny_list(20000, true, true, 32u << 20);

	/* each source named twice, 20 000 rules apart: its vector differs from any
	 * other in two chunks half the chain apart, stored whole (40 000 rules:
	 * 20 000 vectors of 625 words, 100 MB): refused under a 32 MiB limit */
	struct strbuf sb = STRBUF_INIT;
	struct cp_env e = env;
	struct cp_compiled *cc = NULL;
	struct ipt_table *t;
	struct ipt_err err;
	char buf[64];

	sb_adds(&sb, ":INPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < 40000; i++) {
		deny_prefix(i % 20000, buf, sizeof(buf));
		sb_addf(&sb, "-A INPUT -s %s -j %s\n", buf, i % 2 ? "ACCEPT" : "DROP");
	}
	t = load(sb_str(&sb));
	ipt_err_clear(&err);
	e.mem_limit = 32u << 20;
	ck_assert_int_eq(cp_compile(t, &e, &cc, &err), -1);
	ck_assert_msg(strstr(err.msg, "too large"), "%s", err.msg);
	fprintf(stderr, "40000 rules, each source twice: refused: %s\n", err.msg);
	e.mem_limit = 0;
	ck_assert_msg(cp_compile(t, &e, &cc, &err) == 0, "%s", err.msg);
	ck_assert_uint_gt(cc->mem, 64u << 20);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
	sb_free(&sb);
}
END_TEST

/* ---------------------------------------------------------------- output digests */

/* FNV-1a over everything the loader reads from a cp_compiled, so that a change
 * of the compiler's algorithms (not of its output) can be checked to keep the
 * output identical. Two digests: "lbvs" covers the slots, extras, recent lists,
 * counters and the range/interface fields with each key's vector by its
 * contents (not its pool id); "full" adds the pool, the ids and the address
 * LPMs (build_lpm/build_group), and the memory count. */
struct digest {
	__u64 lbvs, full;
};

static void fnv(__u64 *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ull;
	}
}

static void fnv_u32(__u64 *h, __u32 v)
{
	fnv(h, &v, sizeof(v));
}

/* Vector id's words, whole (the digests were recorded before vectors were
 * stored as windows). */
static void fnv_words(__u64 *h, const struct cp_compiled *cc, __u32 id)
{
	for (unsigned int k = 0; k < cc->nchunks; k++) {
		size_t n = cc->nwords - (size_t)k * BPFIPT_CHUNK_WORDS;

		fnv(h, cp_vec_chunk(cc, id, k),
		    (n < BPFIPT_CHUNK_WORDS ? n : BPFIPT_CHUNK_WORDS) * sizeof(__u64));
	}
}

static void fnv_vec(__u64 *h, const struct cp_compiled *cc, __u32 id)
{
	fnv_u32(h, id < cc->nvecs);
	if (id < cc->nvecs)
		fnv_words(h, cc, id);
}

static void fnv_lpm(__u64 *h, const struct cp_lpm *l)
{
	fnv_u32(h, l->n);
	for (unsigned int i = 0; i < l->n; i++) {
		fnv_u32(h, l->e[i].key);
		fnv_u32(h, l->e[i].plen);
		fnv_u32(h, l->e[i].addr);
		fnv_u32(h, l->e[i].value);
	}
}

/* An extra in the layout of ABI 5 (IPv4-only -m conntrack addresses: one word
 * each), so the digests recorded before IPv6 still say whether the compiler's
 * output changed. The IPv6 words of an IPv4 ruleset are 0. */
#define EXTRA5_SIZE (sizeof(struct bpfipt_extra) - 2 * 4 * 3 * sizeof(__be32))

static void fnv_extra5(__u64 *h, const struct bpfipt_extra *e)
{
	const size_t a = offsetof(struct bpfipt_extra, ct_addr);
	const size_t b = offsetof(struct bpfipt_extra, ct_port);
	unsigned char buf[sizeof(*e)];
	size_t n = 0;

	memcpy(buf, e, a);
	n = a;
	for (int i = 0; i < 4; i++, n += 4) {
		memcpy(buf + n, &e->ct_addr[i][0], 4);
		ck_assert(!e->ct_addr[i][1] && !e->ct_addr[i][2] && !e->ct_addr[i][3]);
	}
	for (int i = 0; i < 4; i++, n += 4) {
		memcpy(buf + n, &e->ct_mask[i][0], 4);
		ck_assert(!e->ct_mask[i][1] && !e->ct_mask[i][2] && !e->ct_mask[i][3]);
	}
	memcpy(buf + n, (const unsigned char *)e + b, sizeof(*e) - b);
	n += sizeof(*e) - b;
	ck_assert_uint_eq(n, EXTRA5_SIZE);
	fnv(h, buf, n);
}

static struct digest digest(const struct cp_compiled *cc)
{
	const struct cp_array_field *af[] = { &cc->proto, &cc->sport, &cc->dport, &cc->tcpflags,
					      &cc->icmp, &cc->frag, &cc->len, &cc->ctstate };
	const struct cp_if_field *ifs[] = { &cc->iif, &cc->oif };
	__u64 h = 0xcbf29ce484222325ull, f = h;

	for (int c = 0; c < BPFIPT_NCHAINS; c++) {
		fnv_u32(&h, cc->nslots[c]);
		fnv_u32(&h, cc->policy_slot[c]);
		fnv_u32(&h, cc->policy_counter[c]);
		for (unsigned int s = 0; s < cc->nslots[c]; s++) {
			const struct bpfipt_slot *sl = &cc->slots[c][s];

			fnv_u32(&h, sl->kind);
			fnv_u32(&h, sl->verdict);
			fnv_u32(&h, sl->reject_with);
			fnv_u32(&h, sl->log);
			fnv_u32(&h, sl->xflags);
			fnv_u32(&h, sl->target);
			fnv_u32(&h, sl->counter);
			fnv_u32(&h, sl->extra);
			fnv_u32(&h, sl->group);
		}
		/* verdict maps' member slots (none before them: the digests of
		 * rulesets without stay) */
		for (unsigned int s = cc->nslots[c]; s < cc->nslots[c] + cc->nmslots[c]; s++) {
			fnv_u32(&h, cc->slots[c][s].kind);
			fnv_u32(&h, cc->slots[c][s].target);
			fnv_u32(&h, cc->slots[c][s].counter);
		}
	}
	fnv_u32(&h, cc->ncounters);
	fnv_u32(&h, cc->ngroups);
	fnv_u32(&h, cc->nextras);
	for (unsigned int i = 0; i < cc->nextras; i++)
		fnv_extra5(&h, &cc->extras[i]);
	fnv_u32(&h, cc->nrecent);
	fnv(&h, cc->recent, cc->nrecent * sizeof(*cc->recent));
	fnv_u32(&h, cc->nwords);
	for (unsigned int i = 0; i < sizeof(af) / sizeof(af[0]); i++) {
		fnv_u32(&h, af[i]->nkeys);
		/* each key's vector (f); a run of keys with the same vector: its
		 * start and the vector (h) */
		for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++)
			for (unsigned int j = 0; j < af[i]->nrun[c]; j++) {
				const struct cp_key_run *r = &af[i]->run[c][j];
				unsigned int end = cp_run_end(af[i], c, j);

				fnv_u32(&h, c * af[i]->nkeys + r->start);
				fnv_vec(&h, cc, r->vid);
				for (unsigned int k = r->start; k < end; k++)
					fnv_u32(&f, r->vid);
			}
	}
	/* each link's vector in each chain, whether it has an entry or takes
	 * the default (links without one since build_if() leaves them out) */
	for (int F = 0; F < 2; F++) {
		unsigned int nl = sizeof(links) / sizeof(links[0]);

		fnv_u32(&h, BPFIPT_NCHAINS * nl);
		for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++)
			for (unsigned int l = 0; l < nl; l++) {
				__u32 vec = ifs[F]->dflt[c];

				for (unsigned int i = 0; i < ifs[F]->n; i++)
					if (ifs[F]->e[i].chain == c &&
					    ifs[F]->e[i].ifindex == links[l].ifindex)
						vec = ifs[F]->e[i].vec;
				fnv_u32(&h, c);
				fnv_u32(&h, links[l].ifindex);
				fnv_vec(&h, cc, vec);
				fnv_u32(&f, vec);
			}
		for (int c = 0; c < BPFIPT_NCHAINS; c++) {
			fnv_vec(&h, cc, ifs[F]->dflt[c]);
			fnv_u32(&f, ifs[F]->dflt[c]);
		}
	}
	fnv_u32(&f, cc->nvecs);
	for (__u32 id = 0; id < cc->nvecs; id++)
		fnv_words(&f, cc, id);
	fnv_lpm(&f, &cc->src);
	fnv_lpm(&f, &cc->dst);
	fnv_lpm(&f, &cc->group_src);
	fnv_lpm(&f, &cc->group_dst);
	{
		/* the memory count as with ABI 5's struct bpfipt_extra (see fnv_extra5):
		 * the extras array is counted for (capacity - 32) entries, the
		 * capacity 64 doubled as needed */
		size_t mem = cc->mem, cap = 64;

		while (cc->nextras > cap)
			cap *= 2;
		if (cc->nextras)
			mem -= (cap - 32) * (sizeof(struct bpfipt_extra) - EXTRA5_SIZE);
		fnv(&f, &mem, sizeof(mem));
	}
	fnv(&f, &h, sizeof(h));
	return (struct digest){ h, f };
}

/* CP_DIGEST_FILES="a b ...": print the digests of those restore files (the
 * corpus of bench/rules.py outputs compared before and after a compiler change). */
static void digest_files(void)
{
	char *list = getenv("CP_DIGEST_FILES") ? strdup(getenv("CP_DIGEST_FILES")) : NULL;

	for (char *sp, *p = list ? strtok_r(list, " ", &sp) : NULL; p; p = strtok_r(NULL, " ", &sp)) {
		struct ipt_restore_opts o = { .prog = "bpf-iptables-restore" };
		struct strbuf sb = STRBUF_INIT;
		struct ipt_table *t = NULL;
		struct cp_compiled *cc = NULL;
		struct ipt_err err;
		unsigned int line = 0;
		char buf[65536];
		size_t n;
		FILE *fp = fopen(p, "r");

		ck_assert_msg(fp != NULL, "%s", p);
		while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
			sb_addn(&sb, buf, n);
		fclose(fp);
		ipt_table_new(&t);
		ipt_err_clear(&err);
		ck_assert_msg(ipt_restore(sb_str(&sb), sb.len, &t, &o, &err, &line) == 0, "%s: %s",
			      p, err.msg);
		double t0 = now();

		ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "%s: %s", p, err.msg);
		double t1 = now();
		struct digest d = digest(cc);

		printf("%s lbvs %016llx full %016llx compile %.1f ms (%u vectors of %u words, "
		       "%zu chunks of %u owned, %zu bytes)\n", p, (unsigned long long)d.lbvs,
		       (unsigned long long)d.full, (t1 - t0) * 1e3, cc->nvecs, cc->nwords, cc->nowned,
		       cc->nchunks, cc->mem);
		cp_compiled_free(&cc);
		ipt_table_free(&t);
		sb_free(&sb);
	}
	free(list);
}

/* Random rulesets (gen_ruleset) and deny lists, compiled with and without small
 * groups: the digests recorded from the compiler before its speed-ups (15 of
 * them again when runs of rules without a target, with LOG or NFLOG became
 * groups where their addresses are disjoint; 4 when a jump to a chain without
 * rules became a rule the packet goes on from). */
START_TEST(t_digests)
{
	static const __u64 want[] = {
		0xdc89fd7ab9a7ff34ull,
		0xf4197b64c41f75f9ull,
		0xa60294424dce808aull,
		0xf352f4ef02bae895ull,
		0x643ac8518aeee8abull,
		0xe0599b9b7e461b2dull,
		0x753cd4c02bb73dd0ull,
		0x384721f8f0db9776ull,
		0x50cf4629e0df3d55ull,
		0xa27da6a8f81fc95dull,
		0xfa30223bf5cb302dull,
		0xe81b08900dc9ad06ull,
		0x0da109eace0abf50ull,
		0xf81970e1811150a4ull,
		0x851c5bcbd963a8feull,
		0x959dfe6df2fae1c0ull,
		0xc36ecc811a87b20aull,
		0xc36ecc811a87b20aull,
		0xd02be6f08d3156b2ull,
		0x7de160f4a662f300ull,
		0xadcb0c74f3424c5aull,
		0xadcb0c74f3424c5aull,
		0x9ae9b6caa5876254ull,
		0x9ae9b6caa5876254ull,
		0x5c97bd5efcccbed6ull,
		0x6735f404670c1e3bull,
		0x376787bd68f9472bull,
		0x376787bd68f9472bull,
		0x83dc33153e1ad91eull,
		0x102be6d34458a304ull,
		0xea3de568e5841030ull,
		0xea3de568e5841030ull,
		0x00a351c1b914cb80ull,
		0x04a6af72ac658fa3ull,
		0xeaeccc5c74d9563eull,
		0x691853ea864388a9ull,
		0x3786b03564d05af7ull,
		0x3786b03564d05af7ull,
		0xd6387ec49d5e5fa1ull,
		0xd6387ec49d5e5fa1ull,
		0xcb0dafcb5aaa8377ull,
		0x37a2097d251146a5ull,
		0xc5251b3b674bca03ull,
		0x07a3d42ffef40bf8ull,
		0xe66241ac5f7ef6f5ull,
		0x5c4bf29864b46012ull,
		0xcd0569a8618ba17dull,
		0x2915e7b14cd812fcull,
		0x92abca3eca3040b4ull,
		0x92abca3eca3040b4ull,
		0x073e48f69fce1acaull,
		0x7973891238a2109eull,
		0x53e1ada1c6d70c62ull,
		0x53e1ada1c6d70c62ull,
		0xf5fe61372df75bdcull,
		0x337d73b17e00de82ull,
		0x86d5f8e24f2974a0ull,
		0x5ff1198aa3e866c8ull,
		0x477bf29014552b26ull,
		0x477bf29014552b26ull,
		0x4b2772685ebfbe4cull,
		0xef3dfb629c4f4902ull,
		0xad9be42dfd0a1b42ull,
		0x17ebf323fd3b1de7ull,
		0x6787c09a99180ac8ull,
		0x9f82265d2fa32ce7ull,
		0xcd588be412c89cbcull,
		0xcd588be412c89cbcull,
		0x7b7b588d897e0631ull,
		0x7b7b588d897e0631ull,
		0x1832052a8fa3a4faull,
		0x1832052a8fa3a4faull,
		0x7b9de4cf648a3b08ull,
		0xbc2a4e1ea9be7f20ull,
		0x75442ea6b148569aull,
		0x96c7104b627d76cdull,
		0x96c7104b627d76cdull,
		0x96c7104b627d76cdull,
	};
	struct strbuf sb = STRBUF_INIT;
	unsigned int nrules, k = 0;
	bool print = getenv("CP_DIGEST_PRINT");

	digest_files();
	rng_state = 7;
	for (unsigned int set = 0; set < 2 * 40; set++) {
		const struct cp_env *e = set % 2 ? &env_g2 : &env;
		struct cp_compiled *cc = NULL;
		struct ipt_table *t;
		struct ipt_err err;

		if (set % 2 == 0)
			gen_ruleset(&sb, &nrules);
		if (set >= 76) {
			char buf[64];

			sb_reset(&sb);
			sb_adds(&sb, ":INPUT DROP [0:0]\n-A INPUT -i lo -j ACCEPT\n"
				"-A INPUT -p tcp --dport 22 -j ACCEPT\n");
			for (unsigned int i = 0; i < (set == 76 ? 3000u : 700u); i++) {
				deny_prefix(i, buf, sizeof(buf));
				sb_addf(&sb, "-A INPUT -s %s -p %s --dport %u -j %s\n", buf,
					i % 3 ? "tcp" : "udp", 1 + i % 7,
					i % 5 ? "DROP" : "ACCEPT");
			}
		}
		t = load_err(sb_str(&sb), &err);
		if (!t)
			continue;
		if (cp_compile(t, e, &cc, &err) == 0) {
			struct digest d = digest(cc);

			if (print)
				printf("\t\t0x%016llxull,\n", (unsigned long long)d.lbvs);
			else if (k < sizeof(want) / sizeof(want[0]))
				ck_assert_msg(d.lbvs == want[k], "set %u: digest %016llx", set,
					      (unsigned long long)d.lbvs);
			k++;
			cp_compiled_free(&cc);
		}
		ipt_table_free(&t);
	}
	if (!print)
		ck_assert_uint_eq(k, sizeof(want) / sizeof(want[0]));
	sb_free(&sb);
}
END_TEST

/* cp_lpm_sort6(): the order of a stable sort by (key, address bytes, plen),
 * below RSORT_MIN (qsort) and above it (by keys), with many ties so that a
 * wrong digit order or an unstable step shows. */
static int lpm6_ref_cmp(const void *a, const void *b)
{
	const struct cp_lpm_entry6 *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	c = memcmp(x->addr, y->addr, 16);
	if (c)
		return c;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	/* the value is the entry's first position: ties keep their order */
	return (x->value > y->value) - (x->value < y->value);
}

START_TEST(t_lpm_sort6)
{
	static const size_t sizes[] = { 300, 5000 };
	unsigned int seed = 11;

	for (size_t z = 0; z < 2; z++) {
		size_t n = sizes[z];
		struct cp_lpm_entry6 *e = calloc(n, sizeof(*e)), *ref = calloc(n, sizeof(*e));
		struct cp_lpm l = { .e6 = e, .n = n, .cap = n };

		ck_assert(e && ref);
		for (size_t i = 0; i < n; i++) {
			e[i].key = (__u32)rand_r(&seed) % 3 * 0x10001u;
			e[i].plen = (__u8)(rand_r(&seed) % 4 * 40);
			e[i].value = (__u32)i;
			/* each of the 16 bytes from a few values: equal addresses, and
			 * addresses that differ in one digit only */
			for (int b = 0; b < 16; b++)
				e[i].addr[b] = (__u8)(rand_r(&seed) % 3 == 0 ?
						      (rand_r(&seed) % 2) << (b % 8) : 0);
		}
		memcpy(ref, e, n * sizeof(*e));
		qsort(ref, n, sizeof(*ref), lpm6_ref_cmp);
		cp_lpm_sort6(&l);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(!memcmp(&e[i], &ref[i], sizeof(*e)),
				      "%zu entries: entry %zu is the given %u, not %u", n, i,
				      e[i].value, ref[i].value);
		free(e);
		free(ref);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("compile");
	TCase *tc = tcase_create("cases");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_addresses);
	tcase_add_test(tc, t_iprange);
	tcase_add_test(tc, t_proto_ports);
	tcase_add_test(tc, t_tcpflags);
	tcase_add_test(tc, t_multiport);
	tcase_add_test(tc, t_icmp);
	tcase_add_test(tc, t_frag_len);
	tcase_add_test(tc, t_interfaces);
	tcase_add_test(tc, t_extras);
	tcase_add_test(tc, t_targets);
	tcase_add_test(tc, t_chains);
	tcase_add_test(tc, t_first_match);
	tcase_add_test(tc, t_groups);
	tcase_add_test(tc, t_vmaps);
	tcase_add_test(tc, t_tuples);
	tcase_add_test(tc, t_refusals);
	tcase_add_test(tc, t_lpm_sort6);
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_random_differential);
	tcase_add_test(tc, t_digests);
	suite_add_tcase(s, tc);

	tc = tcase_create("large");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_deny_1k);
	tcase_add_test(tc, t_deny_10k);
	tcase_add_test(tc, t_deny_100k);
	tcase_add_test(tc, t_mem_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
