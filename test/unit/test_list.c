// SPDX-License-Identifier: GPL-2.0
/*
 * Golden tests for the -L listing (bpf-iptables/list.c).
 *
 * The expected text below is what iptables-legacy v1.8.9 printed, byte for byte, for this
 * ruleset (loaded with `iptables-legacy-restore -c` in a throw-away network namespace):
 *
 *   *filter
 *   :INPUT DROP [123456789:987654321012]
 *   :FORWARD ACCEPT [5:100000]
 *   :OUTPUT ACCEPT [18446744073709551615:99999]
 *   :EMPTY - [0:0]
 *   :USER1 - [0:0]
 *   :averyveryverylongchainname12 - [0:0]
 *   :zeta - [0:0]
 *   -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
 *   -A INPUT -s 10.0.0.0/8 -d 1.2.3.4/32 -j DROP
 *   -A INPUT ! -s 192.168.1.0/24 ! -d 10.0.12.0/255.0.255.0 -p udp -j USER1
 *   -A INPUT -f -j DROP
 *   [123456789:987654321] -A INPUT -p 200
 *   -A INPUT -p udp -g USER1
 *   -A INPUT -p tcp -m tcp --dport 80 -g zeta
 *   [99999:100000] -A INPUT
 *   [100499:100500] -A INPUT -j USER1
 *   [9999499:9999500] -A INPUT -j USER1
 *   [18446744073709551615:18446744073709551615] -A INPUT
 *   [999999499:999999500] -A INPUT -j ACCEPT
 *   [1234567890123:99999999999999] -A INPUT -j DROP
 *   [99999999999999999:9999999999999999999] -A INPUT -j RETURN
 *   -A INPUT ! -p tcp ! -f -j zeta
 *   -A FORWARD -m comment --comment "hello world" -j ACCEPT
 *   -A FORWARD -p tcp -m comment --comment x -j REJECT --reject-with icmp-port-unreachable
 *   -A FORWARD -i eth0 -o eth1 -j RETURN
 *   -A FORWARD ! -i veth+ ! -o lo -p icmp
 *   -A FORWARD -i abcdefghijklmno -o a+
 *   -A FORWARD -p tcp -m tcp --dport 22 -m comment --comment c -g EMPTY
 *   -A OUTPUT -s 255.255.255.255/32
 *   -A OUTPUT ! -d 0.0.0.0/0
 *   -A OUTPUT
 *   -A OUTPUT -s 1.2.3.4/31 -d 1.2.3.4/32
 *   -A OUTPUT -s 0.0.0.0/1 -d 0.0.0.0/0.0.0.1
 *   -A OUTPUT -s 127.0.0.1/32 -d 8.8.8.8/32
 *   -A OUTPUT -s 127.0.0.0/8 -d 192.168.0.0/16
 *   -A OUTPUT -j averyveryverylongchainname12
 *   -A OUTPUT -g averyveryverylongchainname12
 *   -A OUTPUT -j USER1
 *   -A OUTPUT ! -s 127.0.0.0/8 -p sctp -j DROP
 *   -A USER1 -s 8.8.8.8/32 -d 127.0.0.1/32
 *   -A averyveryverylongchainname12 -j DROP
 *   -A zeta -p sctp
 *   -A zeta -p 255
 *   -A zeta -j RETURN
 *   COMMIT
 *
 * The model is built by hand to the same effect. The tcp, comment and REJECT extensions are
 * small fakes here (the real ones live in parser/ext/ and have their own tests): what this
 * file checks is everything around them, including the spacing before their text.
 * Names: without -n the listing asks gethostbyaddr()/getnetbyaddr(); the oracle machine
 * answered localhost for 127.0.0.1, "default" for 0.0.0.0 and "loopback" for 127.0.0.0
 * (/etc/hosts, /etc/networks), nothing for the rest; fake_namer() answers the same so
 * the test does not depend on the machine it runs on.
 */

#include <check.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "ext.h"
#include "cmd.h"
#include "ops.h"
#include "save.h"

/* ---- fake extensions: just enough to print ---- */

struct fake_tcp {
	__u16 dport;
};

static void fake_tcp_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			   bool numeric)
{
	const struct fake_tcp *t = data;
	(void)ip;

	if (!numeric && t->dport == 22)
		sb_adds(sb, " tcp dpt:ssh");
	else if (!numeric && t->dport == 80)
		sb_adds(sb, " tcp dpt:http");
	else
		sb_addf(sb, " tcp dpt:%u", t->dport);
}

static const struct ipt_ext fake_tcp = {
	.name = "tcp", .size = sizeof(struct fake_tcp), .print = fake_tcp_print,
};

struct fake_comment {
	char text[256];
};

static void fake_comment_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			       bool numeric)
{
	(void)ip;
	(void)numeric;
	sb_addf(sb, " /* %s */", ((const struct fake_comment *)data)->text);
}

static const struct ipt_ext fake_comment = {
	.name = "comment", .size = sizeof(struct fake_comment), .print = fake_comment_print,
};

static void fake_reject_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			      bool numeric)
{
	(void)data;
	(void)ip;
	(void)numeric;
	sb_adds(sb, " reject-with icmp-port-unreachable");
}

static const struct ipt_ext fake_reject = {
	.name = "REJECT", .is_target = true, .size = sizeof(int), .print = fake_reject_print,
};

/* A match with no print(): iptables shows its name and a space. */
static const struct ipt_ext fake_silent = {
	.name = "silent", .size = sizeof(int),
};

/* ---- names ---- */

static unsigned int namer_calls;

static const char *fake_namer(__be32 addr)
{
	namer_calls++;
	switch (ntohl(addr)) {
	case 0x7f000001: return "localhost";
	case 0x00000000: return "default";
	case 0x7f000000: return "loopback";
	default: return NULL;
	}
}

/* ---- model builders ---- */

static struct ipt_rule *add_rule(struct ipt_chain *c)
{
	struct ipt_rule *r = ipt_rule_new();

	ipt_chain_insert_rule(c, c->nrules, r);
	return r;
}

/* "a.b.c.d", "a.b.c.d/len" or "a.b.c.d/m.m.m.m", masked as the parser stores it. */
static void set_addr(__be32 *addr, __be32 *mask, const char *spec)
{
	char buf[64];
	struct in_addr a, m;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", spec);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	ck_assert_int_eq(inet_pton(AF_INET, buf, &a), 1);
	if (!slash) {
		m.s_addr = 0xffffffffu;
	} else if (strchr(slash, '.')) {
		ck_assert_int_eq(inet_pton(AF_INET, slash, &m), 1);
	} else {
		int len = atoi(slash);

		m.s_addr = len ? htonl(0xffffffffu << (32 - len)) : 0;
	}
	*addr = a.s_addr & m.s_addr;
	*mask = m.s_addr;
}

static void src(struct ipt_rule *r, const char *spec, bool inv)
{
	set_addr(&r->ip.src.v4, &r->ip.smsk.v4, spec);
	if (inv)
		r->ip.invflags |= IPT_INV_SRCIP;
}

static void dst(struct ipt_rule *r, const char *spec, bool inv)
{
	set_addr(&r->ip.dst.v4, &r->ip.dmsk.v4, spec);
	if (inv)
		r->ip.invflags |= IPT_INV_DSTIP;
}

static void verdict(struct ipt_rule *r, enum ipt_verdict v)
{
	r->tkind = IPT_T_VERDICT;
	r->verdict = v;
}

static void jump(struct ipt_rule *r, const char *chain, bool go)
{
	r->tkind = go ? IPT_T_GOTO : IPT_T_JUMP;
	snprintf(r->chain, sizeof(r->chain), "%s", chain);
}

static void tcp_dport(struct ipt_rule *r, __u16 port)
{
	struct ipt_match *m = ipt_rule_add_match(r, &fake_tcp);

	((struct fake_tcp *)m->data)->dport = port;
}

static void comment(struct ipt_rule *r, const char *text)
{
	struct ipt_match *m = ipt_rule_add_match(r, &fake_comment);

	snprintf(((struct fake_comment *)m->data)->text, 256, "%s", text);
}

static void counters(struct ipt_rule *r, __u64 p, __u64 b)
{
	r->pcnt = p;
	r->bcnt = b;
}

/* The ruleset of the header comment. */
static struct ipt_table *golden_table(void)
{
	struct ipt_table *t;
	struct ipt_chain *in, *fw, *out, *user1, *lng, *zeta, *c;
	struct ipt_rule *r;

	ck_assert_int_eq(ipt_table_new(&t), 0);
	in = ipt_chain_find(t, "INPUT");
	fw = ipt_chain_find(t, "FORWARD");
	out = ipt_chain_find(t, "OUTPUT");
	in->policy = IPT_V_DROP;
	in->pcnt = 123456789ull;
	in->bcnt = 987654321012ull;
	fw->pcnt = 5;
	fw->bcnt = 100000;
	out->pcnt = 18446744073709551615ull;
	out->bcnt = 99999;
	/* created out of order on purpose: the table keeps them sorted */
	zeta = ipt_chain_new_user(t, "zeta");
	user1 = ipt_chain_new_user(t, "USER1");
	lng = ipt_chain_new_user(t, "averyveryverylongchainname12");
	ipt_chain_new_user(t, "EMPTY");

	c = in;
	r = add_rule(c); r->ip.proto = 6; tcp_dport(r, 22); verdict(r, IPT_V_ACCEPT);
	r = add_rule(c); src(r, "10.0.0.0/8", false); dst(r, "1.2.3.4", false);
	verdict(r, IPT_V_DROP);
	r = add_rule(c); src(r, "192.168.1.0/24", true); dst(r, "10.0.12.0/255.0.255.0", true);
	r->ip.proto = 17; jump(r, "USER1", false);
	r = add_rule(c); r->ip.flags = IPT_F_FRAG; verdict(r, IPT_V_DROP);
	r = add_rule(c); r->ip.proto = 200; counters(r, 123456789, 987654321);
	r = add_rule(c); r->ip.proto = 17; jump(r, "USER1", true);
	r = add_rule(c); r->ip.proto = 6; tcp_dport(r, 80); jump(r, "zeta", true);
	r = add_rule(c); counters(r, 99999, 100000);
	r = add_rule(c); counters(r, 100499, 100500); jump(r, "USER1", false);
	r = add_rule(c); counters(r, 9999499, 9999500); jump(r, "USER1", false);
	r = add_rule(c); counters(r, 18446744073709551615ull, 18446744073709551615ull);
	r = add_rule(c); counters(r, 999999499, 999999500); verdict(r, IPT_V_ACCEPT);
	r = add_rule(c); counters(r, 1234567890123ull, 99999999999999ull); verdict(r, IPT_V_DROP);
	r = add_rule(c); counters(r, 99999999999999999ull, 9999999999999999999ull);
	verdict(r, IPT_V_RETURN);
	r = add_rule(c); r->ip.proto = 6; r->ip.flags = IPT_F_FRAG;
	r->ip.invflags |= IPT_INV_PROTO | IPT_INV_FRAG; jump(r, "zeta", false);

	c = fw;
	r = add_rule(c); comment(r, "hello world"); verdict(r, IPT_V_ACCEPT);
	r = add_rule(c); r->ip.proto = 6; comment(r, "x");
	r->tkind = IPT_T_EXT; r->target.ext = &fake_reject; r->target.data = calloc(1, sizeof(int));
	r = add_rule(c); strcpy(r->ip.iniface, "eth0"); strcpy(r->ip.outiface, "eth1");
	verdict(r, IPT_V_RETURN);
	r = add_rule(c); strcpy(r->ip.iniface, "veth+"); strcpy(r->ip.outiface, "lo");
	r->ip.invflags |= IPT_INV_VIA_IN | IPT_INV_VIA_OUT; r->ip.proto = 1;
	r = add_rule(c); strcpy(r->ip.iniface, "abcdefghijklmno"); strcpy(r->ip.outiface, "a+");
	r = add_rule(c); r->ip.proto = 6; tcp_dport(r, 22); comment(r, "c"); jump(r, "EMPTY", true);

	c = out;
	r = add_rule(c); src(r, "255.255.255.255/32", false);
	r = add_rule(c); dst(r, "0.0.0.0/0", true);
	r = add_rule(c); (void)r;
	r = add_rule(c); src(r, "1.2.3.4/31", false); dst(r, "1.2.3.4/32", false);
	r = add_rule(c); src(r, "0.0.0.0/1", false); dst(r, "0.0.0.0/0.0.0.1", false);
	r = add_rule(c); src(r, "127.0.0.1", false); dst(r, "8.8.8.8", false);
	r = add_rule(c); src(r, "127.0.0.0/8", false); dst(r, "192.168.0.0/16", false);
	r = add_rule(c); jump(r, lng->name, false);
	r = add_rule(c); jump(r, lng->name, true);
	r = add_rule(c); jump(r, "USER1", false);
	r = add_rule(c); src(r, "127.0.0.0/8", true); r->ip.proto = 132; verdict(r, IPT_V_DROP);

	r = add_rule(user1); src(r, "8.8.8.8/32", false); dst(r, "127.0.0.1/32", false);
	r = add_rule(lng); verdict(r, IPT_V_DROP);
	r = add_rule(zeta); r->ip.proto = 132;
	r = add_rule(zeta); r->ip.proto = 255;
	r = add_rule(zeta); verdict(r, IPT_V_RETURN);
	return t;
}

/* Generated from iptables-legacy v1.8.9 -L output (see the ruleset above). */
static const struct golden {
	const char *cmd;
	const char *chain;
	unsigned int rulenum;
	unsigned int fmt;
	const char *text;
} goldens[] = {
	{ "iptables -L", NULL, 0, 0,
	"Chain INPUT (policy DROP)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     tcp  --  anywhere             anywhere             tcp dpt:ssh\n"
	"DROP       all  --  10.0.0.0/8           1.2.3.4             \n"
	"USER1      udp  -- !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"DROP       all  -f  anywhere             anywhere            \n"
	"           200  --  anywhere             anywhere            \n"
	"USER1      udp  --  anywhere             anywhere            [goto] \n"
	"zeta       tcp  --  anywhere             anywhere            [goto]  tcp dpt:http\n"
	"           all  --  anywhere             anywhere            \n"
	"USER1      all  --  anywhere             anywhere            \n"
	"USER1      all  --  anywhere             anywhere            \n"
	"           all  --  anywhere             anywhere            \n"
	"ACCEPT     all  --  anywhere             anywhere            \n"
	"DROP       all  --  anywhere             anywhere            \n"
	"RETURN     all  --  anywhere             anywhere            \n"
	"zeta      !tcp  !f  anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     all  --  anywhere             anywhere             /* hello world */\n"
	"REJECT     tcp  --  anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"RETURN     all  --  anywhere             anywhere            \n"
	"           icmp --  anywhere             anywhere            \n"
	"           all  --  anywhere             anywhere            \n"
	"EMPTY      tcp  --  anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"           all  --  255.255.255.255      anywhere            \n"
	"           all  --  anywhere            !anywhere            \n"
	"           all  --  anywhere             anywhere            \n"
	"           all  --  1.2.3.4/31           1.2.3.4             \n"
	"           all  --  default/1            default/0.0.0.1     \n"
	"           all  --  localhost            8.8.8.8             \n"
	"           all  --  loopback/8           192.168.0.0/16      \n"
	"averyveryverylongchainname12  all  --  anywhere             anywhere            \n"
	"averyveryverylongchainname12  all  --  anywhere             anywhere            [goto] \n"
	"USER1      all  --  anywhere             anywhere            \n"
	"DROP       sctp -- !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"target     prot opt source               destination         \n"
	"           all  --  8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"target     prot opt source               destination         \n"
	"DROP       all  --  anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	"target     prot opt source               destination         \n"
	"           sctp --  anywhere             anywhere            \n"
	"           255  --  anywhere             anywhere            \n"
	"RETURN     all  --  anywhere             anywhere            \n" },
	{ "iptables -L --line-numbers", NULL, 0, IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP)\n"
	"num  target     prot opt source               destination         \n"
	"1    ACCEPT     tcp  --  anywhere             anywhere             tcp dpt:ssh\n"
	"2    DROP       all  --  10.0.0.0/8           1.2.3.4             \n"
	"3    USER1      udp  -- !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4    DROP       all  -f  anywhere             anywhere            \n"
	"5               200  --  anywhere             anywhere            \n"
	"6    USER1      udp  --  anywhere             anywhere            [goto] \n"
	"7    zeta       tcp  --  anywhere             anywhere            [goto]  tcp dpt:http\n"
	"8               all  --  anywhere             anywhere            \n"
	"9    USER1      all  --  anywhere             anywhere            \n"
	"10   USER1      all  --  anywhere             anywhere            \n"
	"11              all  --  anywhere             anywhere            \n"
	"12   ACCEPT     all  --  anywhere             anywhere            \n"
	"13   DROP       all  --  anywhere             anywhere            \n"
	"14   RETURN     all  --  anywhere             anywhere            \n"
	"15   zeta      !tcp  !f  anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"num  target     prot opt source               destination         \n"
	"1    ACCEPT     all  --  anywhere             anywhere             /* hello world */\n"
	"2    REJECT     tcp  --  anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"3    RETURN     all  --  anywhere             anywhere            \n"
	"4               icmp --  anywhere             anywhere            \n"
	"5               all  --  anywhere             anywhere            \n"
	"6    EMPTY      tcp  --  anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"num  target     prot opt source               destination         \n"
	"1               all  --  255.255.255.255      anywhere            \n"
	"2               all  --  anywhere            !anywhere            \n"
	"3               all  --  anywhere             anywhere            \n"
	"4               all  --  1.2.3.4/31           1.2.3.4             \n"
	"5               all  --  default/1            default/0.0.0.1     \n"
	"6               all  --  localhost            8.8.8.8             \n"
	"7               all  --  loopback/8           192.168.0.0/16      \n"
	"8    averyveryverylongchainname12  all  --  anywhere             anywhere            \n"
	"9    averyveryverylongchainname12  all  --  anywhere             anywhere            [goto] \n"
	"10   USER1      all  --  anywhere             anywhere            \n"
	"11   DROP       sctp -- !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num  target     prot opt source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num  target     prot opt source               destination         \n"
	"1               all  --  8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num  target     prot opt source               destination         \n"
	"1    DROP       all  --  anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num  target     prot opt source               destination         \n"
	"1               sctp --  anywhere             anywhere            \n"
	"2               255  --  anywhere             anywhere            \n"
	"3    RETURN     all  --  anywhere             anywhere            \n" },
	{ "iptables -L -v", NULL, 0, IPT_FMT_VERBOSE,
	"Chain INPUT (policy DROP 123M packets, 988G bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 ACCEPT     tcp  --  any    any     anywhere             anywhere             tcp dpt:ssh\n"
	"    0     0 DROP       all  --  any    any     10.0.0.0/8           1.2.3.4             \n"
	"    0     0 USER1      udp  --  any    any    !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"    0     0 DROP       all  -f  any    any     anywhere             anywhere            \n"
	" 123M  988M            200  --  any    any     anywhere             anywhere            \n"
	"    0     0 USER1      udp  --  any    any     anywhere             anywhere            [goto] \n"
	"    0     0 zeta       tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:http\n"
	"99999  100K            all  --  any    any     anywhere             anywhere            \n"
	" 100K  101K USER1      all  --  any    any     anywhere             anywhere            \n"
	"9999K   10M USER1      all  --  any    any     anywhere             anywhere            \n"
	"   0K    0K            all  --  any    any     anywhere             anywhere            \n"
	"1000M 1000M ACCEPT     all  --  any    any     anywhere             anywhere            \n"
	"1235G  100T DROP       all  --  any    any     anywhere             anywhere            \n"
	"100000T 10000000T RETURN     all  --  any    any     anywhere             anywhere            \n"
	"    0     0 zeta      !tcp  !f  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100K bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 ACCEPT     all  --  any    any     anywhere             anywhere             /* hello world */\n"
	"    0     0 REJECT     tcp  --  any    any     anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"    0     0 RETURN     all  --  eth0   eth1    anywhere             anywhere            \n"
	"    0     0            icmp --  !veth+ !lo     anywhere             anywhere            \n"
	"    0     0            all  --  abcdefghijklmno a+      anywhere             anywhere            \n"
	"    0     0 EMPTY      tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0K packets, 99999 bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            all  --  any    any     255.255.255.255      anywhere            \n"
	"    0     0            all  --  any    any     anywhere            !anywhere            \n"
	"    0     0            all  --  any    any     anywhere             anywhere            \n"
	"    0     0            all  --  any    any     1.2.3.4/31           1.2.3.4             \n"
	"    0     0            all  --  any    any     default/1            default/0.0.0.1     \n"
	"    0     0            all  --  any    any     localhost            8.8.8.8             \n"
	"    0     0            all  --  any    any     loopback/8           192.168.0.0/16      \n"
	"    0     0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            \n"
	"    0     0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            [goto] \n"
	"    0     0 USER1      all  --  any    any     anywhere             anywhere            \n"
	"    0     0 DROP       sctp --  any    any    !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            all  --  any    any     8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 DROP       all  --  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            sctp --  any    any     anywhere             anywhere            \n"
	"    0     0            255  --  any    any     anywhere             anywhere            \n"
	"    0     0 RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L -v --line-numbers", NULL, 0, IPT_FMT_VERBOSE | IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP 123M packets, 988G bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 ACCEPT     tcp  --  any    any     anywhere             anywhere             tcp dpt:ssh\n"
	"2        0     0 DROP       all  --  any    any     10.0.0.0/8           1.2.3.4             \n"
	"3        0     0 USER1      udp  --  any    any    !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4        0     0 DROP       all  -f  any    any     anywhere             anywhere            \n"
	"5     123M  988M            200  --  any    any     anywhere             anywhere            \n"
	"6        0     0 USER1      udp  --  any    any     anywhere             anywhere            [goto] \n"
	"7        0     0 zeta       tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:http\n"
	"8    99999  100K            all  --  any    any     anywhere             anywhere            \n"
	"9     100K  101K USER1      all  --  any    any     anywhere             anywhere            \n"
	"10   9999K   10M USER1      all  --  any    any     anywhere             anywhere            \n"
	"11      0K    0K            all  --  any    any     anywhere             anywhere            \n"
	"12   1000M 1000M ACCEPT     all  --  any    any     anywhere             anywhere            \n"
	"13   1235G  100T DROP       all  --  any    any     anywhere             anywhere            \n"
	"14   100000T 10000000T RETURN     all  --  any    any     anywhere             anywhere            \n"
	"15       0     0 zeta      !tcp  !f  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100K bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 ACCEPT     all  --  any    any     anywhere             anywhere             /* hello world */\n"
	"2        0     0 REJECT     tcp  --  any    any     anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"3        0     0 RETURN     all  --  eth0   eth1    anywhere             anywhere            \n"
	"4        0     0            icmp --  !veth+ !lo     anywhere             anywhere            \n"
	"5        0     0            all  --  abcdefghijklmno a+      anywhere             anywhere            \n"
	"6        0     0 EMPTY      tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0K packets, 99999 bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            all  --  any    any     255.255.255.255      anywhere            \n"
	"2        0     0            all  --  any    any     anywhere            !anywhere            \n"
	"3        0     0            all  --  any    any     anywhere             anywhere            \n"
	"4        0     0            all  --  any    any     1.2.3.4/31           1.2.3.4             \n"
	"5        0     0            all  --  any    any     default/1            default/0.0.0.1     \n"
	"6        0     0            all  --  any    any     localhost            8.8.8.8             \n"
	"7        0     0            all  --  any    any     loopback/8           192.168.0.0/16      \n"
	"8        0     0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            \n"
	"9        0     0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            [goto] \n"
	"10       0     0 USER1      all  --  any    any     anywhere             anywhere            \n"
	"11       0     0 DROP       sctp --  any    any    !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            all  --  any    any     8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 DROP       all  --  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            sctp --  any    any     anywhere             anywhere            \n"
	"2        0     0            255  --  any    any     anywhere             anywhere            \n"
	"3        0     0 RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L -v -x", NULL, 0, IPT_FMT_VERBOSE | IPT_FMT_EXACT,
	"Chain INPUT (policy DROP 123456789 packets, 987654321012 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 ACCEPT     tcp  --  any    any     anywhere             anywhere             tcp dpt:ssh\n"
	"       0        0 DROP       all  --  any    any     10.0.0.0/8           1.2.3.4             \n"
	"       0        0 USER1      udp  --  any    any    !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"       0        0 DROP       all  -f  any    any     anywhere             anywhere            \n"
	"123456789 987654321            200  --  any    any     anywhere             anywhere            \n"
	"       0        0 USER1      udp  --  any    any     anywhere             anywhere            [goto] \n"
	"       0        0 zeta       tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:http\n"
	"   99999   100000            all  --  any    any     anywhere             anywhere            \n"
	"  100499   100500 USER1      all  --  any    any     anywhere             anywhere            \n"
	" 9999499  9999500 USER1      all  --  any    any     anywhere             anywhere            \n"
	"18446744073709551615 18446744073709551615            all  --  any    any     anywhere             anywhere            \n"
	"999999499 999999500 ACCEPT     all  --  any    any     anywhere             anywhere            \n"
	"1234567890123 99999999999999 DROP       all  --  any    any     anywhere             anywhere            \n"
	"99999999999999999 9999999999999999999 RETURN     all  --  any    any     anywhere             anywhere            \n"
	"       0        0 zeta      !tcp  !f  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100000 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 ACCEPT     all  --  any    any     anywhere             anywhere             /* hello world */\n"
	"       0        0 REJECT     tcp  --  any    any     anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"       0        0 RETURN     all  --  eth0   eth1    anywhere             anywhere            \n"
	"       0        0            icmp --  !veth+ !lo     anywhere             anywhere            \n"
	"       0        0            all  --  abcdefghijklmno a+      anywhere             anywhere            \n"
	"       0        0 EMPTY      tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 18446744073709551615 packets, 99999 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            all  --  any    any     255.255.255.255      anywhere            \n"
	"       0        0            all  --  any    any     anywhere            !anywhere            \n"
	"       0        0            all  --  any    any     anywhere             anywhere            \n"
	"       0        0            all  --  any    any     1.2.3.4/31           1.2.3.4             \n"
	"       0        0            all  --  any    any     default/1            default/0.0.0.1     \n"
	"       0        0            all  --  any    any     localhost            8.8.8.8             \n"
	"       0        0            all  --  any    any     loopback/8           192.168.0.0/16      \n"
	"       0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            \n"
	"       0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            [goto] \n"
	"       0        0 USER1      all  --  any    any     anywhere             anywhere            \n"
	"       0        0 DROP       sctp --  any    any    !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            all  --  any    any     8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 DROP       all  --  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            sctp --  any    any     anywhere             anywhere            \n"
	"       0        0            255  --  any    any     anywhere             anywhere            \n"
	"       0        0 RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L -v -x --line-numbers", NULL, 0, IPT_FMT_VERBOSE | IPT_FMT_EXACT | IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP 123456789 packets, 987654321012 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 ACCEPT     tcp  --  any    any     anywhere             anywhere             tcp dpt:ssh\n"
	"2           0        0 DROP       all  --  any    any     10.0.0.0/8           1.2.3.4             \n"
	"3           0        0 USER1      udp  --  any    any    !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4           0        0 DROP       all  -f  any    any     anywhere             anywhere            \n"
	"5    123456789 987654321            200  --  any    any     anywhere             anywhere            \n"
	"6           0        0 USER1      udp  --  any    any     anywhere             anywhere            [goto] \n"
	"7           0        0 zeta       tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:http\n"
	"8       99999   100000            all  --  any    any     anywhere             anywhere            \n"
	"9      100499   100500 USER1      all  --  any    any     anywhere             anywhere            \n"
	"10    9999499  9999500 USER1      all  --  any    any     anywhere             anywhere            \n"
	"11   18446744073709551615 18446744073709551615            all  --  any    any     anywhere             anywhere            \n"
	"12   999999499 999999500 ACCEPT     all  --  any    any     anywhere             anywhere            \n"
	"13   1234567890123 99999999999999 DROP       all  --  any    any     anywhere             anywhere            \n"
	"14   99999999999999999 9999999999999999999 RETURN     all  --  any    any     anywhere             anywhere            \n"
	"15          0        0 zeta      !tcp  !f  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100000 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 ACCEPT     all  --  any    any     anywhere             anywhere             /* hello world */\n"
	"2           0        0 REJECT     tcp  --  any    any     anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"3           0        0 RETURN     all  --  eth0   eth1    anywhere             anywhere            \n"
	"4           0        0            icmp --  !veth+ !lo     anywhere             anywhere            \n"
	"5           0        0            all  --  abcdefghijklmno a+      anywhere             anywhere            \n"
	"6           0        0 EMPTY      tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 18446744073709551615 packets, 99999 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            all  --  any    any     255.255.255.255      anywhere            \n"
	"2           0        0            all  --  any    any     anywhere            !anywhere            \n"
	"3           0        0            all  --  any    any     anywhere             anywhere            \n"
	"4           0        0            all  --  any    any     1.2.3.4/31           1.2.3.4             \n"
	"5           0        0            all  --  any    any     default/1            default/0.0.0.1     \n"
	"6           0        0            all  --  any    any     localhost            8.8.8.8             \n"
	"7           0        0            all  --  any    any     loopback/8           192.168.0.0/16      \n"
	"8           0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            \n"
	"9           0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            [goto] \n"
	"10          0        0 USER1      all  --  any    any     anywhere             anywhere            \n"
	"11          0        0 DROP       sctp --  any    any    !loopback/8           anywhere            \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            all  --  any    any     8.8.8.8              localhost           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 DROP       all  --  any    any     anywhere             anywhere            \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            sctp --  any    any     anywhere             anywhere            \n"
	"2           0        0            255  --  any    any     anywhere             anywhere            \n"
	"3           0        0 RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L -n", NULL, 0, IPT_FMT_NUMERIC,
	"Chain INPUT (policy DROP)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     6    --  0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"DROP       0    --  10.0.0.0/8           1.2.3.4             \n"
	"USER1      17   -- !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"DROP       0    -f  0.0.0.0/0            0.0.0.0/0           \n"
	"           200  --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      17   --  0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"zeta       6    --  0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"ACCEPT     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"zeta      !6    !f  0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     0    --  0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"REJECT     6    --  0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"           1    --  0.0.0.0/0            0.0.0.0/0           \n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"EMPTY      6    --  0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"           0    --  255.255.255.255      0.0.0.0/0           \n"
	"           0    --  0.0.0.0/0           !0.0.0.0/0           \n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"           0    --  1.2.3.4/31           1.2.3.4             \n"
	"           0    --  0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"           0    --  127.0.0.1            8.8.8.8             \n"
	"           0    --  127.0.0.0/8          192.168.0.0/16      \n"
	"averyveryverylongchainname12  0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"averyveryverylongchainname12  0    --  0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"DROP       132  -- !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"target     prot opt source               destination         \n"
	"           0    --  8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"target     prot opt source               destination         \n"
	"DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	"target     prot opt source               destination         \n"
	"           132  --  0.0.0.0/0            0.0.0.0/0           \n"
	"           255  --  0.0.0.0/0            0.0.0.0/0           \n"
	"RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L -n --line-numbers", NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP)\n"
	"num  target     prot opt source               destination         \n"
	"1    ACCEPT     6    --  0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"2    DROP       0    --  10.0.0.0/8           1.2.3.4             \n"
	"3    USER1      17   -- !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4    DROP       0    -f  0.0.0.0/0            0.0.0.0/0           \n"
	"5               200  --  0.0.0.0/0            0.0.0.0/0           \n"
	"6    USER1      17   --  0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"7    zeta       6    --  0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"8               0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"9    USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"10   USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"11              0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"12   ACCEPT     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"13   DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"14   RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"15   zeta      !6    !f  0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"num  target     prot opt source               destination         \n"
	"1    ACCEPT     0    --  0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"2    REJECT     6    --  0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"3    RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"4               1    --  0.0.0.0/0            0.0.0.0/0           \n"
	"5               0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"6    EMPTY      6    --  0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"num  target     prot opt source               destination         \n"
	"1               0    --  255.255.255.255      0.0.0.0/0           \n"
	"2               0    --  0.0.0.0/0           !0.0.0.0/0           \n"
	"3               0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"4               0    --  1.2.3.4/31           1.2.3.4             \n"
	"5               0    --  0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"6               0    --  127.0.0.1            8.8.8.8             \n"
	"7               0    --  127.0.0.0/8          192.168.0.0/16      \n"
	"8    averyveryverylongchainname12  0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"9    averyveryverylongchainname12  0    --  0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"10   USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"11   DROP       132  -- !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num  target     prot opt source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num  target     prot opt source               destination         \n"
	"1               0    --  8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num  target     prot opt source               destination         \n"
	"1    DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num  target     prot opt source               destination         \n"
	"1               132  --  0.0.0.0/0            0.0.0.0/0           \n"
	"2               255  --  0.0.0.0/0            0.0.0.0/0           \n"
	"3    RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L -n -v", NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE,
	"Chain INPUT (policy DROP 123M packets, 988G bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 ACCEPT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"    0     0 DROP       0    --  *      *       10.0.0.0/8           1.2.3.4             \n"
	"    0     0 USER1      17   --  *      *      !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"    0     0 DROP       0    -f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	" 123M  988M            200  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 USER1      17   --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"    0     0 zeta       6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"99999  100K            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	" 100K  101K USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"9999K   10M USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"   0K    0K            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"1000M 1000M ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"1235G  100T DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"100000T 10000000T RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 zeta      !6    !f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100K bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"    0     0 REJECT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"    0     0 RETURN     0    --  eth0   eth1    0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0            1    --  !veth+ !lo     0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0            0    --  abcdefghijklmno a+      0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 EMPTY      6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0K packets, 99999 bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            0    --  *      *       255.255.255.255      0.0.0.0/0           \n"
	"    0     0            0    --  *      *       0.0.0.0/0           !0.0.0.0/0           \n"
	"    0     0            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0            0    --  *      *       1.2.3.4/31           1.2.3.4             \n"
	"    0     0            0    --  *      *       0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"    0     0            0    --  *      *       127.0.0.1            8.8.8.8             \n"
	"    0     0            0    --  *      *       127.0.0.0/8          192.168.0.0/16      \n"
	"    0     0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"    0     0 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 DROP       132  --  *      *      !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            0    --  *      *       8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            132  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0            255  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"    0     0 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L -n -v --line-numbers", NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP 123M packets, 988G bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 ACCEPT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"2        0     0 DROP       0    --  *      *       10.0.0.0/8           1.2.3.4             \n"
	"3        0     0 USER1      17   --  *      *      !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4        0     0 DROP       0    -f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"5     123M  988M            200  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"6        0     0 USER1      17   --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"7        0     0 zeta       6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"8    99999  100K            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"9     100K  101K USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"10   9999K   10M USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"11      0K    0K            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"12   1000M 1000M ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"13   1235G  100T DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"14   100000T 10000000T RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"15       0     0 zeta      !6    !f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100K bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"2        0     0 REJECT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"3        0     0 RETURN     0    --  eth0   eth1    0.0.0.0/0            0.0.0.0/0           \n"
	"4        0     0            1    --  !veth+ !lo     0.0.0.0/0            0.0.0.0/0           \n"
	"5        0     0            0    --  abcdefghijklmno a+      0.0.0.0/0            0.0.0.0/0           \n"
	"6        0     0 EMPTY      6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0K packets, 99999 bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            0    --  *      *       255.255.255.255      0.0.0.0/0           \n"
	"2        0     0            0    --  *      *       0.0.0.0/0           !0.0.0.0/0           \n"
	"3        0     0            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"4        0     0            0    --  *      *       1.2.3.4/31           1.2.3.4             \n"
	"5        0     0            0    --  *      *       0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"6        0     0            0    --  *      *       127.0.0.1            8.8.8.8             \n"
	"7        0     0            0    --  *      *       127.0.0.0/8          192.168.0.0/16      \n"
	"8        0     0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"9        0     0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"10       0     0 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"11       0     0 DROP       132  --  *      *      !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            0    --  *      *       8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0            132  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"2        0     0            255  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"3        0     0 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L -n -v -x", NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_EXACT,
	"Chain INPUT (policy DROP 123456789 packets, 987654321012 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 ACCEPT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"       0        0 DROP       0    --  *      *       10.0.0.0/8           1.2.3.4             \n"
	"       0        0 USER1      17   --  *      *      !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"       0        0 DROP       0    -f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"123456789 987654321            200  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 USER1      17   --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"       0        0 zeta       6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"   99999   100000            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"  100499   100500 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	" 9999499  9999500 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"18446744073709551615 18446744073709551615            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"999999499 999999500 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"1234567890123 99999999999999 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"99999999999999999 9999999999999999999 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 zeta      !6    !f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100000 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"       0        0 REJECT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"       0        0 RETURN     0    --  eth0   eth1    0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0            1    --  !veth+ !lo     0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0            0    --  abcdefghijklmno a+      0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 EMPTY      6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 18446744073709551615 packets, 99999 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            0    --  *      *       255.255.255.255      0.0.0.0/0           \n"
	"       0        0            0    --  *      *       0.0.0.0/0           !0.0.0.0/0           \n"
	"       0        0            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0            0    --  *      *       1.2.3.4/31           1.2.3.4             \n"
	"       0        0            0    --  *      *       0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"       0        0            0    --  *      *       127.0.0.1            8.8.8.8             \n"
	"       0        0            0    --  *      *       127.0.0.0/8          192.168.0.0/16      \n"
	"       0        0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"       0        0 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 DROP       132  --  *      *      !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            0    --  *      *       8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0            132  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0            255  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"       0        0 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L -n -v -x --line-numbers", NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_EXACT | IPT_FMT_LINENUMBERS,
	"Chain INPUT (policy DROP 123456789 packets, 987654321012 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 ACCEPT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"2           0        0 DROP       0    --  *      *       10.0.0.0/8           1.2.3.4             \n"
	"3           0        0 USER1      17   --  *      *      !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"4           0        0 DROP       0    -f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"5    123456789 987654321            200  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"6           0        0 USER1      17   --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"7           0        0 zeta       6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"8       99999   100000            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"9      100499   100500 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"10    9999499  9999500 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"11   18446744073709551615 18446744073709551615            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"12   999999499 999999500 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"13   1234567890123 99999999999999 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"14   99999999999999999 9999999999999999999 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"15          0        0 zeta      !6    !f  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain FORWARD (policy ACCEPT 5 packets, 100000 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* hello world */\n"
	"2           0        0 REJECT     6    --  *      *       0.0.0.0/0            0.0.0.0/0            /* x */ reject-with icmp-port-unreachable\n"
	"3           0        0 RETURN     0    --  eth0   eth1    0.0.0.0/0            0.0.0.0/0           \n"
	"4           0        0            1    --  !veth+ !lo     0.0.0.0/0            0.0.0.0/0           \n"
	"5           0        0            0    --  abcdefghijklmno a+      0.0.0.0/0            0.0.0.0/0           \n"
	"6           0        0 EMPTY      6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:22 /* c */\n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 18446744073709551615 packets, 99999 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            0    --  *      *       255.255.255.255      0.0.0.0/0           \n"
	"2           0        0            0    --  *      *       0.0.0.0/0           !0.0.0.0/0           \n"
	"3           0        0            0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"4           0        0            0    --  *      *       1.2.3.4/31           1.2.3.4             \n"
	"5           0        0            0    --  *      *       0.0.0.0/1            0.0.0.0/0.0.0.1     \n"
	"6           0        0            0    --  *      *       127.0.0.1            8.8.8.8             \n"
	"7           0        0            0    --  *      *       127.0.0.0/8          192.168.0.0/16      \n"
	"8           0        0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"9           0        0 averyveryverylongchainname12  0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"10          0        0 USER1      0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"11          0        0 DROP       132  --  *      *      !127.0.0.0/8          0.0.0.0/0           \n"
	"\n"
	"Chain EMPTY (1 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER1 (5 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            0    --  *      *       8.8.8.8              127.0.0.1           \n"
	"\n"
	"Chain averyveryverylongchainname12 (2 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0 DROP       0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"\n"
	"Chain zeta (2 references)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            132  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"2           0        0            255  --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
	"3           0        0 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L INPUT -n", "INPUT", 0, IPT_FMT_NUMERIC,
	"Chain INPUT (policy DROP)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     6    --  0.0.0.0/0            0.0.0.0/0            tcp dpt:22\n"
	"DROP       0    --  10.0.0.0/8           1.2.3.4             \n"
	"USER1      17   -- !192.168.1.0/24      !10.0.12.0/255.0.255.0 \n"
	"DROP       0    -f  0.0.0.0/0            0.0.0.0/0           \n"
	"           200  --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      17   --  0.0.0.0/0            0.0.0.0/0           [goto] \n"
	"zeta       6    --  0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"USER1      0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"           0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"ACCEPT     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"RETURN     0    --  0.0.0.0/0            0.0.0.0/0           \n"
	"zeta      !6    !f  0.0.0.0/0            0.0.0.0/0           \n" },
	{ "iptables -L FORWARD -v", "FORWARD", 0, IPT_FMT_VERBOSE,
	"Chain FORWARD (policy ACCEPT 5 packets, 100K bytes)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0 ACCEPT     all  --  any    any     anywhere             anywhere             /* hello world */\n"
	"    0     0 REJECT     tcp  --  any    any     anywhere             anywhere             /* x */ reject-with icmp-port-unreachable\n"
	"    0     0 RETURN     all  --  eth0   eth1    anywhere             anywhere            \n"
	"    0     0            icmp --  !veth+ !lo     anywhere             anywhere            \n"
	"    0     0            all  --  abcdefghijklmno a+      anywhere             anywhere            \n"
	"    0     0 EMPTY      tcp  --  any    any     anywhere             anywhere            [goto]  tcp dpt:ssh /* c */\n" },
	{ "iptables -L OUTPUT -v -x --line-numbers", "OUTPUT", 0, IPT_FMT_VERBOSE | IPT_FMT_EXACT | IPT_FMT_LINENUMBERS,
	"Chain OUTPUT (policy ACCEPT 18446744073709551615 packets, 99999 bytes)\n"
	"num      pkts      bytes target     prot opt in     out     source               destination         \n"
	"1           0        0            all  --  any    any     255.255.255.255      anywhere            \n"
	"2           0        0            all  --  any    any     anywhere            !anywhere            \n"
	"3           0        0            all  --  any    any     anywhere             anywhere            \n"
	"4           0        0            all  --  any    any     1.2.3.4/31           1.2.3.4             \n"
	"5           0        0            all  --  any    any     default/1            default/0.0.0.1     \n"
	"6           0        0            all  --  any    any     localhost            8.8.8.8             \n"
	"7           0        0            all  --  any    any     loopback/8           192.168.0.0/16      \n"
	"8           0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            \n"
	"9           0        0 averyveryverylongchainname12  all  --  any    any     anywhere             anywhere            [goto] \n"
	"10          0        0 USER1      all  --  any    any     anywhere             anywhere            \n"
	"11          0        0 DROP       sctp --  any    any    !loopback/8           anywhere            \n" },
	{ "iptables -L EMPTY", "EMPTY", 0, 0,
	"Chain EMPTY (1 references)\n"
	"target     prot opt source               destination         \n" },
	{ "iptables -L EMPTY -v -n", "EMPTY", 0, IPT_FMT_VERBOSE | IPT_FMT_NUMERIC,
	"Chain EMPTY (1 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n" },
	{ "iptables -L USER1 -n -v", "USER1", 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE,
	"Chain USER1 (5 references)\n"
	" pkts bytes target     prot opt in     out     source               destination         \n"
	"    0     0            0    --  *      *       8.8.8.8              127.0.0.1           \n" },
	{ "iptables -L averyveryverylongchainname12", "averyveryverylongchainname12", 0, 0,
	"Chain averyveryverylongchainname12 (2 references)\n"
	"target     prot opt source               destination         \n"
	"DROP       all  --  anywhere             anywhere            \n" },
	{ "iptables -L zeta --line-numbers", "zeta", 0, IPT_FMT_LINENUMBERS,
	"Chain zeta (2 references)\n"
	"num  target     prot opt source               destination         \n"
	"1               sctp --  anywhere             anywhere            \n"
	"2               255  --  anywhere             anywhere            \n"
	"3    RETURN     all  --  anywhere             anywhere            \n" },
	{ "iptables -L INPUT 2", "INPUT", 2, 0,
	"DROP       all  --  10.0.0.0/8           1.2.3.4             \n" },
	{ "iptables -L INPUT 7 -v -n --line-numbers", "INPUT", 7, IPT_FMT_VERBOSE | IPT_FMT_NUMERIC | IPT_FMT_LINENUMBERS,
	"7        0     0 zeta       6    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto]  tcp dpt:80\n" },
	{ "iptables -L INPUT 14 -v", "INPUT", 14, IPT_FMT_VERBOSE,
	"100000T 10000000T RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L INPUT 14 -v -x", "INPUT", 14, IPT_FMT_VERBOSE | IPT_FMT_EXACT,
	"99999999999999999 9999999999999999999 RETURN     all  --  any    any     anywhere             anywhere            \n" },
	{ "iptables -L INPUT 99", "INPUT", 99, 0,
	"" },
	{ "iptables -L FORWARD 1 -n -v", "FORWARD", 1, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE,
	"    0     0 ACCEPT     0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* hello world */\n" },
	{ "iptables -L zeta 3 --line-numbers", "zeta", 3, IPT_FMT_LINENUMBERS,
	"3    RETURN     all  --  anywhere             anywhere            \n" },
};

/* Show where two texts part, for a readable failure. */
static void assert_text(const char *what, const char *got, const char *want)
{
	if (!strcmp(got, want))
		return;
	size_t i = 0, line = 1, col = 1;

	while (got[i] && got[i] == want[i]) {
		if (got[i] == '\n') {
			line++;
			col = 0;
		}
		i++;
		col++;
	}
	const char *gl = got + i, *wl = want + i;

	while (gl > got && gl[-1] != '\n')
		gl--;
	while (wl > want && wl[-1] != '\n')
		wl--;
	ck_abort_msg("%s: differs at line %zu col %zu\n got: %.*s\nwant: %.*s", what, line, col,
		     (int)strcspn(gl, "\n"), gl, (int)strcspn(wl, "\n"), wl);
}

static struct ipt_table *table;

static void setup(void)
{
	ipt_list_set_namer(fake_namer);
	namer_calls = 0;
	table = golden_table();
}

static void teardown(void)
{
	ipt_table_free(&table);
	ipt_list_set_namer(NULL);
}

START_TEST(test_golden)
{
	const struct golden *g = &goldens[_i];
	struct strbuf sb = STRBUF_INIT;

	ck_assert_int_eq(ipt_list(&sb, table, g->chain, g->rulenum, g->fmt), 0);
	assert_text(g->cmd, sb_str(&sb), g->text);
	sb_free(&sb);
}
END_TEST

/* -x changes nothing without -v (checked on the oracle: same bytes). */
START_TEST(test_exact_needs_verbose)
{
	static const unsigned int others[] = { 0, IPT_FMT_NUMERIC, IPT_FMT_LINENUMBERS,
					       IPT_FMT_NUMERIC | IPT_FMT_LINENUMBERS };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		ipt_list(&a, table, NULL, 0, others[i]);
		ipt_list(&b, table, NULL, 0, others[i] | IPT_FMT_EXACT);
		assert_text("-x without -v", sb_str(&b), sb_str(&a));
		sb_free(&a);
		sb_free(&b);
	}
}
END_TEST

START_TEST(test_unknown_chain)
{
	struct strbuf sb = STRBUF_INIT;

	sb_adds(&sb, "before");
	ck_assert_int_eq(ipt_list(&sb, table, "NOPE", 0, 0), -1);
	ck_assert_int_eq(ipt_list(&sb, table, "NOPE", 1, IPT_FMT_VERBOSE), -1);
	ck_assert_int_eq(ipt_list(&sb, table, "input", 0, 0), -1);	/* names are exact */
	ck_assert_str_eq(sb_str(&sb), "before");
	sb_free(&sb);
}
END_TEST

/* One lookup per distinct address and listing, none with -n or for a zero mask. */
START_TEST(test_name_cache)
{
	struct strbuf sb = STRBUF_INIT;

	ipt_list(&sb, table, NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE);
	ck_assert_uint_eq(namer_calls, 0);
	ipt_list(&sb, table, "zeta", 0, 0);
	ck_assert_uint_eq(namer_calls, 0);
	ipt_list(&sb, table, "OUTPUT", 0, 0);
	/* 255.255.255.255 1.2.3.4 0.0.0.0 127.0.0.1 8.8.8.8 127.0.0.0 192.168.0.0 */
	ck_assert_uint_eq(namer_calls, 7);
	sb_free(&sb);
}
END_TEST

/* Without a fake namer: what the C library says, as iptables asks it. */
START_TEST(test_libc_names)
{
	struct ipt_table *t;
	struct ipt_chain *c;
	struct ipt_rule *r;
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;
	struct in_addr lo = { .s_addr = htonl(0x7f000001) };
	struct hostent *h;
	char name[1100];

	ipt_list_set_namer(NULL);
	ipt_table_new(&t);
	c = ipt_chain_new_user(t, "C");
	r = add_rule(c);
	src(r, "127.0.0.1", false);
	h = gethostbyaddr(&lo, sizeof(lo), AF_INET);
	if (h)
		snprintf(name, sizeof(name), "%s", h->h_name);
	else {
		struct netent *n = getnetbyaddr(0x7f000001, AF_INET);

		snprintf(name, sizeof(name), "%s", n ? n->n_name : "127.0.0.1");
	}
	sb_addf(&want, "Chain C (0 references)\n"
		"target     prot opt source               destination         \n"
		"           all  --  %-19s  anywhere            \n", name);
	ck_assert_int_eq(ipt_list(&sb, t, "C", 0, 0), 0);
	assert_text("libc names", sb_str(&sb), sb_str(&want));
	sb_free(&sb);
	sb_free(&want);
	ipt_table_free(&t);
}
END_TEST

/* Without -n a protocol number becomes its /etc/protocols name, whatever the machine has
 * (oracle: 47 -> gre, 41 -> ipv6, 58 -> ipv6-icmp, 135 -> mobility-header, 94 -> ipip),
 * else libxtables' own name, else the number; with -n always the number. */
START_TEST(test_proto_names)
{
	static const __u16 protos[] = { 2, 4, 41, 47, 50, 51, 58, 94, 103, 135, 136, 253 };

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		struct ipt_table *t;
		struct ipt_rule *r;
		struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;
		struct protoent *p = getprotobynumber(protos[i]);
		char name[64];

		if (p)
			snprintf(name, sizeof(name), "%s", p->p_name);
		else if (protos[i] == 58)
			strcpy(name, "icmpv6");
		else if (protos[i] == 135)
			strcpy(name, "ipv6-mh");
		else if (protos[i] == 50)
			strcpy(name, "esp");
		else if (protos[i] == 51)
			strcpy(name, "ah");
		else if (protos[i] == 136)
			strcpy(name, "udplite");
		else
			snprintf(name, sizeof(name), "%u", protos[i]);

		ipt_table_new(&t);
		r = add_rule(ipt_chain_new_user(t, "P"));
		r->ip.proto = protos[i];
		ipt_list(&sb, t, "P", 1, 0);
		sb_addf(&want, "           %-4s --  anywhere             anywhere            \n",
			name);
		assert_text("proto name", sb_str(&sb), sb_str(&want));

		sb_reset(&sb);
		sb_reset(&want);
		r->ip.invflags |= IPT_INV_PROTO;
		ipt_list(&sb, t, "P", 1, IPT_FMT_NUMERIC);
		sb_addf(&want, "          !%-4u --  0.0.0.0/0            0.0.0.0/0           \n",
			protos[i]);
		assert_text("proto number", sb_str(&sb), sb_str(&want));
		sb_free(&sb);
		sb_free(&want);
		ipt_table_free(&t);
	}
}
END_TEST

/* Oracle: `-A P -p 47` lists as "gre  --", `-p 58` as "ipv6-icmp --": name, then at least
 * one space; and a match without print() (iptables prints "NAME "). */
START_TEST(test_long_proto_and_silent_match)
{
	struct ipt_table *t;
	struct ipt_rule *r;
	struct strbuf sb = STRBUF_INIT;

	ipt_table_new(&t);
	r = add_rule(ipt_chain_new_user(t, "P"));
	r->ip.proto = 6;
	ipt_rule_add_match(r, &fake_silent);
	tcp_dport(r, 8080);
	jump(r, "P", true);
	ipt_list(&sb, t, "P", 0, IPT_FMT_NUMERIC | IPT_FMT_LINENUMBERS);
	assert_text("silent", sb_str(&sb),
		    "Chain P (1 references)\n"
		    "num  target     prot opt source               destination         \n"
		    "1    P          6    --  0.0.0.0/0            0.0.0.0/0           "
		    "[goto] silent  tcp dpt:8080\n");
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

/* Oracle: `-N A; -A A -j A; -A A -g A; -L A` (a chain's own jumps count as references). */
START_TEST(test_self_references)
{
	struct ipt_table *t;
	struct ipt_chain *a;
	struct strbuf sb = STRBUF_INIT;

	ipt_table_new(&t);
	a = ipt_chain_new_user(t, "A");
	jump(add_rule(a), "A", false);
	jump(add_rule(a), "A", true);
	ipt_list(&sb, t, "A", 0, 0);
	assert_text("self", sb_str(&sb),
		    "Chain A (2 references)\n"
		    "target     prot opt source               destination         \n"
		    "A          all  --  anywhere             anywhere            \n"
		    "A          all  --  anywhere             anywhere            [goto] \n");
	sb_reset(&sb);
	ipt_list(&sb, t, "A", 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE);
	assert_text("self -n -v", sb_str(&sb),
		    "Chain A (2 references)\n"
		    " pkts bytes target     prot opt in     out     source               destination         \n"
		    "    0     0 A          0    --  *      *       0.0.0.0/0            0.0.0.0/0           \n"
		    "    0     0 A          0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] \n");
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

/* Ten thousand rules: line numbers push the line, the listing stays linear. */
START_TEST(test_many_rules)
{
	struct ipt_table *t;
	struct ipt_chain *c;
	struct strbuf sb = STRBUF_INIT;

	ipt_table_new(&t);
	c = ipt_chain_find(t, "INPUT");
	for (int i = 0; i < 10000; i++) {
		struct ipt_rule *r = add_rule(c);

		r->ip.src.v4 = htonl(0x0a000000u + (unsigned int)i);
		r->ip.smsk.v4 = 0xffffffffu;
		verdict(r, IPT_V_DROP);
	}
	ck_assert_int_eq(ipt_list(&sb, t, "INPUT", 10000, IPT_FMT_LINENUMBERS), 0);
	assert_text("rule 10000", sb_str(&sb),
		    "10000 DROP       all  --  10.0.39.15           anywhere            \n");
	sb_reset(&sb);
	namer_calls = 0;
	ck_assert_int_eq(ipt_list(&sb, t, NULL, 0, IPT_FMT_LINENUMBERS), 0);
	ck_assert_uint_eq(namer_calls, 10000);
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

/* Three thousand user chains made in a shuffled order, jumps among them: the
 * binary search finds each by name (and no name in between), and the counts of
 * ipt_table_refs() and of -L's headers are ipt_chain_refs()'s, chain by chain. */
START_TEST(test_many_chains)
{
	enum { N = 3000 };
	struct ipt_table *t;
	struct strbuf sb = STRBUF_INIT;
	unsigned int seed = 5, *refs;
	char name[32];
	int order[N];

	ipt_table_new(&t);
	for (int i = 0; i < N; i++)
		order[i] = i;
	for (int i = N - 1; i > 0; i--) {
		int j = rand_r(&seed) % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%05d", 2 * order[i]);
		ipt_chain_new_user(t, name);
	}
	for (int i = 0; i < 4 * N; i++) {
		struct ipt_chain *from = i % 3 ? t->chains[3 + rand_r(&seed) % N] :
						 ipt_chain_find(t, "INPUT");

		snprintf(name, sizeof(name), "c%05d", 2 * (rand_r(&seed) % (N / 2)));
		jump(add_rule(from), name, i % 5 == 0);
	}
	for (unsigned int i = 0; i < t->nchains; i++)
		ck_assert_int_eq(ipt_chain_index(t, t->chains[i]->name), (int)i);
	for (int i = -1; i <= N; i++) {
		snprintf(name, sizeof(name), "c%05d", 2 * i + 1);
		ck_assert_int_eq(ipt_chain_index(t, name), -1);
	}
	ck_assert_ptr_null(ipt_chain_find(t, "zzz"));
	refs = ipt_table_refs(t);
	ck_assert_int_eq(ipt_list(&sb, t, NULL, 0, IPT_FMT_NUMERIC), 0);
	for (unsigned int i = 3; i < t->nchains; i++) {
		char head[96];

		ck_assert_uint_eq(refs[i], ipt_chain_refs(t, t->chains[i]));
		snprintf(head, sizeof(head), "Chain %s (%u references)\n", t->chains[i]->name,
			 refs[i]);
		ck_assert_msg(strstr(sb_str(&sb), head), "no header \"%s\"", head);
	}
	ck_assert_uint_gt(refs[3], 0);
	ck_assert_uint_eq(refs[t->nchains - 1], 0);	/* only the first half is jumped to */
	free(refs);
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

/* ---- bpf-ip6tables: the same printer for an IPv6 table ---- */

/* Built with the real parser (ipt_af = AF_INET6); the texts are what
 * ip6tables-legacy 1.8.9 printed for these commands, byte for byte. */
static const char *const v6_commands[] = {
	"-P INPUT DROP",
	"-N USER6",
	"-A INPUT -s 2001:db8::1/64 -d 2001:db8:1::1 -p tcp --dport 22 -j ACCEPT",
	"-A INPUT ! -s 2001::/ffff:0:ffff:: -i eth0 -j USER6",
	"-A INPUT -p ipv6-icmp --icmpv6-type neighbour-solicitation -j ACCEPT",
	"-A INPUT -p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3 -j DROP",
	"-A INPUT ! -p udp -d ::ffff:10.1.2.3 -j REJECT",
	"-A USER6 -m iprange --src-range 2001:db8::1-2001:db8::ff -m conntrack --ctorigdst 2001:db8::/64 -j REJECT --reject-with icmp6-adm-prohibited",
	"-A USER6 -s 2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff -j RETURN",
	"-A USER6 -p tcp -j REJECT --reject-with tcp-reset"
};

static const struct { unsigned int fmt; const char *text; } v6_goldens[] = {
	{ IPT_FMT_NUMERIC, /* -L -n */
	"Chain INPUT (policy DROP)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     6    --  2001:db8::/64        2001:db8:1::1        tcp dpt:22\n"
	"USER6      0    -- !2001::/ffff:0:ffff::  ::/0                \n"
	"ACCEPT     58   --  ::/0                 ::/0                 ipv6-icmptype 135\n"
	"DROP       58   --  ::/0                 ::/0                 ipv6-icmp !type 1 code 3\n"
	"REJECT    !17   --  ::/0                 ::ffff:10.1.2.3      reject-with icmp6-port-unreachable\n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain USER6 (1 references)\n"
	"target     prot opt source               destination         \n"
	"REJECT     0    --  ::/0                 ::/0                 source IP range 2001:db8::1-2001:db8::ff ctorigdst 2001:db8::/64 reject-with icmp6-adm-prohibited\n"
	"RETURN     0    --  2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff  ::/0                \n"
	"REJECT     6    --  ::/0                 ::/0                 reject-with tcp-reset\n" },
	{ IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_LINENUMBERS, /* -L -n -v --line-numbers */
	"Chain INPUT (policy DROP 0 packets, 0 bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 ACCEPT     6    --  *      *       2001:db8::/64        2001:db8:1::1        tcp dpt:22\n"
	"2        0     0 USER6      0    --  eth0   *      !2001::/ffff:0:ffff::  ::/0                \n"
	"3        0     0 ACCEPT     58   --  *      *       ::/0                 ::/0                 ipv6-icmptype 135\n"
	"4        0     0 DROP       58   --  *      *       ::/0                 ::/0                 ipv6-icmp !type 1 code 3\n"
	"5        0     0 REJECT    !17   --  *      *       ::/0                 ::ffff:10.1.2.3      reject-with icmp6-port-unreachable\n"
	"\n"
	"Chain FORWARD (policy ACCEPT 0 packets, 0 bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0 packets, 0 bytes)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER6 (1 references)\n"
	"num   pkts bytes target     prot opt in     out     source               destination         \n"
	"1        0     0 REJECT     0    --  *      *       ::/0                 ::/0                 source IP range 2001:db8::1-2001:db8::ff ctorigdst 2001:db8::/64 reject-with icmp6-adm-prohibited\n"
	"2        0     0 RETURN     0    --  *      *       2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff  ::/0                \n"
	"3        0     0 REJECT     6    --  *      *       ::/0                 ::/0                 reject-with tcp-reset\n" },
	{ IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_EXACT, /* -L -v -x -n */
	"Chain INPUT (policy DROP 0 packets, 0 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 ACCEPT     6    --  *      *       2001:db8::/64        2001:db8:1::1        tcp dpt:22\n"
	"       0        0 USER6      0    --  eth0   *      !2001::/ffff:0:ffff::  ::/0                \n"
	"       0        0 ACCEPT     58   --  *      *       ::/0                 ::/0                 ipv6-icmptype 135\n"
	"       0        0 DROP       58   --  *      *       ::/0                 ::/0                 ipv6-icmp !type 1 code 3\n"
	"       0        0 REJECT    !17   --  *      *       ::/0                 ::ffff:10.1.2.3      reject-with icmp6-port-unreachable\n"
	"\n"
	"Chain FORWARD (policy ACCEPT 0 packets, 0 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain OUTPUT (policy ACCEPT 0 packets, 0 bytes)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"\n"
	"Chain USER6 (1 references)\n"
	"    pkts      bytes target     prot opt in     out     source               destination         \n"
	"       0        0 REJECT     0    --  *      *       ::/0                 ::/0                 source IP range 2001:db8::1-2001:db8::ff ctorigdst 2001:db8::/64 reject-with icmp6-adm-prohibited\n"
	"       0        0 RETURN     0    --  *      *       2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff  ::/0                \n"
	"       0        0 REJECT     6    --  *      *       ::/0                 ::/0                 reject-with tcp-reset\n" },
	{ 0, /* -L: no address here has a name (the namer6 below answers none) */
	"Chain INPUT (policy DROP)\n"
	"target     prot opt source               destination         \n"
	"ACCEPT     tcp  --  2001:db8::/64        2001:db8:1::1        tcp dpt:ssh\n"
	"USER6      all  -- !2001::/ffff:0:ffff::  anywhere            \n"
	"ACCEPT     ipv6-icmp --  anywhere             anywhere             ipv6-icmp neighbour-solicitation\n"
	"DROP       ipv6-icmp --  anywhere             anywhere             ipv6-icmp !address-unreachable\n"
	"REJECT    !udp  --  anywhere             ::ffff:10.1.2.3      reject-with icmp6-port-unreachable\n"
	"\n"
	"Chain FORWARD (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain OUTPUT (policy ACCEPT)\n"
	"target     prot opt source               destination         \n"
	"\n"
	"Chain USER6 (1 references)\n"
	"target     prot opt source               destination         \n"
	"REJECT     all  --  anywhere             anywhere             source IP range 2001:db8::1-2001:db8::ff ctorigdst 2001:db8::/64 reject-with icmp6-adm-prohibited\n"
	"RETURN     all  --  2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff  anywhere            \n"
	"REJECT     tcp  --  anywhere             anywhere             reject-with tcp-reset\n" },
};

static const char *no_name6(const union ipt_addr *a)
{
	(void)a;
	return NULL;
}

static struct ipt_table *v6_table(void)
{
	struct ipt_table *t;

	ipt_af = AF_INET6;
	ck_assert_int_eq(ipt_table_new(&t), 0);
	for (size_t i = 0; i < sizeof(v6_commands) / sizeof(v6_commands[0]); i++) {
		char buf[512], *argv[64];
		int argc = 0;
		struct ipt_cmd cmd;
		struct ipt_err err;

		snprintf(buf, sizeof(buf), "%s", v6_commands[i]);
		for (char *p = strtok(buf, " "); p; p = strtok(NULL, " "))
			argv[argc++] = p;
		ck_assert_msg(!ipt_cmd_parse(argc, argv, false, &cmd, &err), "%s: %s",
			      v6_commands[i], err.msg);
		ck_assert_msg(!ipt_cmd_resolve(t, &cmd, &err) && !ipt_table_apply(t, &cmd, &err),
			      "%s: %s", v6_commands[i], err.msg);
		ipt_cmd_free(&cmd);
	}
	return t;
}

START_TEST(test_golden6)
{
	struct ipt_table *t = v6_table();
	struct strbuf sb = STRBUF_INIT;

	ipt_list_set_namer6(no_name6);
	ck_assert_int_eq(ipt_list(&sb, t, NULL, 0, v6_goldens[_i].fmt), 0);
	assert_text("ipv6", sb_str(&sb), v6_goldens[_i].text);
	sb_free(&sb);
	ipt_list_set_namer6(NULL);
	ipt_table_free(&t);
	ipt_af = AF_INET;
}
END_TEST

/* -S of the same table, and the -v echo of an IPv6 rule */
START_TEST(test_rules6)
{
	struct ipt_table *t = v6_table();
	struct strbuf sb = STRBUF_INIT;

	ck_assert_int_eq(ipt_save_list_rules(&sb, t, NULL, 0, false), 0);
	assert_text("-S", sb_str(&sb),
	"-P INPUT DROP\n"
	"-P FORWARD ACCEPT\n"
	"-P OUTPUT ACCEPT\n"
	"-N USER6\n"
	"-A INPUT -s 2001:db8::/64 -d 2001:db8:1::1/128 -p tcp -m tcp --dport 22 -j ACCEPT\n"
	"-A INPUT ! -s 2001::/ffff:0:ffff:: -i eth0 -j USER6\n"
	"-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 135 -j ACCEPT\n"
	"-A INPUT -p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3 -j DROP\n"
	"-A INPUT -d ::ffff:10.1.2.3/128 ! -p udp -j REJECT --reject-with icmp6-port-unreachable\n"
	"-A USER6 -m iprange --src-range 2001:db8::1-2001:db8::ff -m conntrack --ctorigdst 2001:db8::/64 -j REJECT --reject-with icmp6-adm-prohibited\n"
	"-A USER6 -s 2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff/128 -j RETURN\n"
	"-A USER6 -p tcp -j REJECT --reject-with tcp-reset\n");
	sb_reset(&sb);
	ipt_list_rule_echo(&sb, ipt_chain_find(t, "INPUT")->rules[1]);
	assert_text("echo", sb_str(&sb), "USER6  all opt -- in eth0 out * !2001::/ffff:0:ffff::  -> ::/0  \n");
	sb_free(&sb);
	ipt_table_free(&t);
	ipt_af = AF_INET;
}
END_TEST

/* ipt_chain_index() against a scan of the table, on a table large enough for
 * its hash of names (model.c), through additions, renames and removals that
 * drop the hash, and searches that make it again. */
static void index_matches_scan(const struct ipt_table *t, const char *name)
{
	int want = -1;

	for (unsigned int i = 0; i < t->nchains; i++)
		if (!strcmp(t->chains[i]->name, name))
			want = (int)i;
	ck_assert_msg(ipt_chain_index(t, name) == want, "%s: index %d, scan %d", name,
		      ipt_chain_index(t, name), want);
}

static void searches(const struct ipt_table *t)
{
	char name[32];

	for (int i = 0; i < 1000; i += 3) {
		snprintf(name, sizeof(name), "C-%04d", i);
		index_matches_scan(t, name);
	}
	index_matches_scan(t, "INPUT");
	index_matches_scan(t, "OUTPUT");
	index_matches_scan(t, "C-9999");
	index_matches_scan(t, "");
}

START_TEST(test_chain_name_index)
{
	struct ipt_table *t = NULL;
	char name[32];

	ck_assert_int_eq(ipt_table_new(&t), 0);
	for (int i = 999; i >= 0; i--) {	/* out of order: inserts move chains */
		snprintf(name, sizeof(name), "C-%04d", i * 7 % 1000);
		ipt_chain_new_user(t, name);
	}
	for (int round = 0; round < 3; round++) {
		/* enough searches for the hash, then each change with the hash made */
		searches(t);
		ipt_chain_new_user(t, "A-new");
		index_matches_scan(t, "A-new");
		searches(t);
		snprintf(name, sizeof(name), "C-%04d", 100 + round);
		ipt_chain_rename(t, ipt_chain_find(t, name), "B-renamed");
		index_matches_scan(t, name);
		index_matches_scan(t, "B-renamed");
		searches(t);
		ipt_chain_remove(t, ipt_chain_find(t, "B-renamed"));
		index_matches_scan(t, "B-renamed");
		searches(t);
		ipt_chain_remove(t, ipt_chain_find(t, "A-new"));
		index_matches_scan(t, "A-new");
	}
	ipt_table_free(&t);
}
END_TEST

static Suite *list_suite(void)
{
	Suite *s = suite_create("list");
	TCase *tc = tcase_create("golden");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_golden, 0, (int)(sizeof(goldens) / sizeof(goldens[0])));
	tcase_add_test(tc, test_exact_needs_verbose);
	tcase_add_test(tc, test_unknown_chain);
	tcase_add_test(tc, test_name_cache);
	tcase_add_test(tc, test_libc_names);
	tcase_add_test(tc, test_proto_names);
	tcase_add_test(tc, test_long_proto_and_silent_match);
	tcase_add_test(tc, test_self_references);
	tcase_add_test(tc, test_many_rules);
	tcase_add_test(tc, test_chain_name_index);
	tcase_add_test(tc, test_many_chains);
	suite_add_tcase(s, tc);
	tc = tcase_create("ipv6");
	tcase_add_loop_test(tc, test_golden6, 0, (int)(sizeof(v6_goldens) / sizeof(v6_goldens[0])));
	tcase_add_test(tc, test_rules6);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(list_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
