// SPDX-License-Identifier: GPL-2.0
/*
 * Long chains on the real kernel: the classifier's two summary levels (a summary
 * word per 64-word chunk, a chunk bitmap in each vector's first chunk) skip only
 * what cannot match. 14 000 ungroupable rules in INPUT (-s /24 -p udp --dport,
 * some -j ACCEPT, some without a target, so the walk goes on across chunks) and a
 * user chain of 5 000 whose block lies in the last chunks (a jump from rule 0 and
 * back), 8 000 packets: verdicts and counters must equal the reference
 * evaluator's (cp_ref_eval).
 * Shared counters (t_shared_counters): a deny list of 3 000 rules (one group,
 * its members' counters shared by the CPUs) beside a group of 40 and single
 * rules (per-CPU counters): seeds, per-packet counts against the reference
 * evaluator, and values carried into a ruleset whose counter ids all moved.
 * A chain whose only address constraint is a deny list looks no address field
 * up (t_group_only): the group slot's own set decides, against the reference.
 * A deny list at the top of a chain (t_group_fast) judges alone when it can
 * (bpfipt_conf.fast): a hit on a list nothing else constrains, a miss in a chain
 * that holds only the list; the packets so judged are counted in BPFIPT_ST_FAST,
 * the others walk, and every verdict and counter is the reference's. So does a
 * chain's prefix of rules that one field each constrains (t_prefix).
 * Tuple groups (t_tuple) judge as the reference; their hash is updated in place
 * or left alone when the spare generation already holds it, also after an
 * install killed half-way (t_tuple_update).
 * A windowed pool (BPFIPT_C_WINDOWS: vectors that own only the chunks where they
 * differ from a base) for thousands of user chains, with and without summary
 * rows, and the long chains above in one windowed by force (t_windows*).
 * Needs root and BPF; fails (never skips) without them. Runs in a network
 * namespace of its own.
 */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include "crashpoint.h"

#include "compile.h"
#include "loader.h"
#include "restore.h"
#include "strbuf.h"
#include "csum.h"

static const struct cp_link links[] = { { 1, "lo" }, { 2, "eth0" }, { 3, "docker0" } };
static const struct cp_env env = { links, 3, 0, 0, 0 };
static __u64 rng = 0x2545f4914f6cdd1dULL;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng >> 32;
}

/* rule i: its source /24 (s), its port and its target */
static void rule(struct strbuf *sb, const char *chain, unsigned int i)
{
	unsigned int s = i % 1021, port = 1024 + i % 509;

	sb_addf(sb, "-A %s -s 172.%u.%u.0/24 -p udp --dport %u%s\n", chain, 16 + s / 256, s % 256,
		port, i % 7 == 3 ? " -j ACCEPT" : i % 11 == 5 ? "" : " -j DROP");
}

static struct ipt_table *ruleset(unsigned int n)
{
	struct ipt_restore_opts o = { .prog = "test_chunks" };
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t = NULL;
	struct ipt_err err = { 0 };
	unsigned int line = 0;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":LATE - [0:0]\n-A INPUT -p udp --dport 7777 -j LATE\n");
	for (unsigned int i = 0; i < n; i++)
		rule(&sb, "INPUT", i);
	for (unsigned int i = 0; i < 5000; i++)
		rule(&sb, "LATE", 3 * i + 1);
	sb_adds(&sb, "-A LATE -p udp --dport 7777 -j DROP\nCOMMIT\n");
	ck_assert_int_eq(ipt_table_new(&t), 0);
	ck_assert_msg(ipt_restore(sb_str(&sb), sb.len, &t, &o, &err, &line) == 0, "line %u: %s",
		      line, err.msg);
	sb_free(&sb);
	return t;
}

static struct ipt_table *parse(const char *text)
{
	struct ipt_restore_opts o = { .prog = "test_chunks" };
	struct ipt_table *t = NULL;
	struct ipt_err err = { 0 };
	unsigned int line = 0;

	ck_assert_int_eq(ipt_table_new(&t), 0);
	ck_assert_msg(ipt_restore(text, strlen(text), &t, &o, &err, &line) == 0, "line %u: %s",
		      line, err.msg);
	return t;
}

/* The deny list's address i: 10.(i / 250).(i % 250).1 */
#define DENY(i)	htonl(10u << 24 | ((i) / 250) << 16 | ((i) % 250) << 8 | 1)

/* n rules of rule_fmt (one %s: the address) for DENY(first) .. DENY(first + n - 1) */
static void sb_list(struct strbuf *sb, const char *rule_fmt, unsigned int first, unsigned int n)
{
	for (unsigned int i = first; i < first + n; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(sb, rule_fmt, inet_ntoa(a));
	}
}

/* INPUT: a rule, the 3 000-entry deny list (ids first + 1 ...), a rule, a group of
 * 40 sources, the policy; `first` more single rules in front shift every id. */
static struct ipt_table *deny_ruleset(unsigned int first)
{
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < first; i++)
		sb_addf(&sb, "-A INPUT -s 192.0.2.%u/32 -p udp --dport 53 -j DROP\n", i + 1);
	sb_adds(&sb, "-A INPUT -p udp --dport 9 -j ACCEPT\n");
	for (unsigned int i = 0; i < 3000; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A INPUT -s %s/32 -j DROP\n", inet_ntoa(a));
	}
	sb_adds(&sb, "-A INPUT -p udp --dport 7 -j ACCEPT\n");
	for (unsigned int i = 0; i < 40; i++)
		sb_addf(&sb, "-A INPUT -s 172.31.%u.0/24 -j DROP\n", i);
	sb_adds(&sb, "COMMIT\n");
	t = parse(sb_str(&sb));
	sb_free(&sb);
	return t;
}

static size_t packet(__u8 *buf, struct cp_packet *p)
{
	/* the headers built in place of their own and copied behind the 14-byte
	 * Ethernet header, where they are not aligned */
	struct iphdr ip = { .version = 4, .ihl = 5, .tot_len = htons(50), .ttl = 64 };
	struct udphdr udp = { .source = htons(p->sport), .dest = htons(p->dport),
			      .len = htons(30) };
	__be16 proto = htons(ETH_P_IP);

	memset(buf, 0, 64);
	memcpy(buf + 12, &proto, 2);
	/* TCP, UDP, or GRE (a protocol without ports: the bytes after the IP
	 * header are its) */
	ip.protocol = p->proto == IPPROTO_TCP || p->proto == IPPROTO_GRE ? p->proto : IPPROTO_UDP;
	ip.saddr = p->saddr;
	ip.daddr = p->daddr;
	if (p->nonfirst_frag)
		ip.frag_off = htons(100);	/* offset 800 bytes: no ports */
	ip.check = ipt_csum(&ip, sizeof(ip));
	memcpy(buf + 14, &ip, sizeof(ip));
	memcpy(buf + 34, &udp, sizeof(udp));
	if (p->proto == IPPROTO_TCP) {	/* a 20-byte TCP header */
		buf[34 + 12] = 5 << 4;
		buf[34 + 13] = p->tcpflags;
	}
	return 64;
}

/* ruleset()'s packet k: a source of the rules' or not, a port of theirs or
 * LATE's jump */
static void rule_packet(struct cp_packet *p, int k)
{
	unsigned int s = rnd() % 1021, r = rnd() % 8;

	(void)k;
	*p = (struct cp_packet){
		.saddr = r == 0 ? inet_addr("192.168.1.1")
			 : htonl(172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8 | 9),
		.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
		.sport = 40000, .dport = r == 1 ? 7777 : 1024 + rnd() % 512, .len = 50,
	};
}

/* Table t (INPUT of at least min_chunks chunks): verdicts and counters of
 * `packets` packets of gen() against the reference; how many walks took the
 * summary rows. Frees t. */
static __u64 walk_checked(struct ipt_table *t, unsigned int min_chunks, int packets,
			  void (*gen)(struct cp_packet *, int))
{
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	unsigned int verdicts[3] = { 0 };
	__u64 st0[BPFIPT_ST_MAX], st1[BPFIPT_ST_MAX], (*a)[2];
	unsigned int na;
	__u8 buf[64];

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_uint_gt(cc->nwords, (min_chunks - 1) * 64);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_stats(in, st0, &err), 0);
	/* the counters before a packet: the ones read after the one before it
	 * (nothing else runs the program: it is attached nowhere) */
	ck_assert_int_eq(dp_inst_counters(in, &a, &na, &err), 0);
	for (int k = 0; k < packets; k++) {
		struct cp_packet p;
		struct __sk_buff ctx = { .cb = { BPFIPT_INPUT } };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx));
		__u64 (*b)[2];
		unsigned int nb, moved = 0;
		struct cp_trace rt;

		gen(&p, k);
		ctx.cb[1] = p.iif;
		o.data_size_in = packet(buf, &p);

		ck_assert_int_eq(cp_ref_eval(t, &env, BPFIPT_INPUT, &p, &rt), 0);
		ck_assert_int_eq(bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TEST), &o), 0);
		ck_assert_int_eq(dp_inst_counters(in, &b, &nb, &err), 0);
		ck_assert_uint_eq(nb, na);
		ck_assert_msg((int)o.retval == (int)rt.verdict, "packet %d (src %#x dport %u): "
			      "verdict %u, reference %d", k, ntohl(p.saddr), p.dport, o.retval,
			      rt.verdict);
		for (unsigned int j = 0; j < nb; j++)
			moved += b[j][0] - a[j][0];
		ck_assert_uint_eq(moved, rt.ncounted);
		for (unsigned int j = 0; j < rt.ncounted && j < CP_TRACE_MAX; j++)
			ck_assert_msg(b[rt.counted[j]][0] > a[rt.counted[j]][0],
				      "packet %d: counter %u did not move", k, rt.counted[j]);
		verdicts[rt.verdict]++;
		free(a);
		a = b;
	}
	free(a);
	ck_assert_int_eq(dp_inst_stats(in, st1, &err), 0);
	/* every kind of outcome was seen */
	ck_assert_uint_gt(verdicts[BPFIPT_V_ACCEPT], packets / 80);
	ck_assert_uint_gt(verdicts[BPFIPT_V_DROP], packets / 80);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
	return st1[BPFIPT_ST_ROWS] - st0[BPFIPT_ST_ROWS];
}

/* n rules in INPUT and the user chain LATE (ruleset()), rule_packet()'s packets */
static __u64 long_chains(unsigned int n, unsigned int min_chunks, int packets)
{
	return walk_checked(ruleset(n), min_chunks, packets, rule_packet);
}

/* The walk's loops test may_goto where the kernel has it (Linux >= 6.9); else,
 * and with BPF_IPTABLES_MAY_GOTO=0 (dataplane.test_chunks.iterators runs this
 * suite so: the others then check the iterators' loops against the reference),
 * the loader patches every may_goto out of the programs before their load. */
START_TEST(t_may_goto)
{
	const char *e = getenv("BPF_IPTABLES_MAY_GOTO");
	bool off = e && !strcmp(e, "0");
	unsigned int major = 0, minor = 0;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct utsname u;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_eq(sscanf(u.release, "%u.%u", &major, &minor), 2);
	ck_assert_int_eq(dp_may_goto(), major > 6 || (major == 6 && minor >= 9));
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_uint_eq(dp_may_goto_patched(), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	if (off || !dp_may_goto())	/* the step loop, and two in each search */
		ck_assert_uint_ge(dp_may_goto_patched(), 7);
	else
		ck_assert_uint_eq(dp_may_goto_patched(), 0);
	dp_inst_free(&in);
}
END_TEST

/* Five chunks: the chunk bitmap alone (fewer than BPFIPT_ROWS_MIN). */
START_TEST(t_long_chains)
{
	ck_assert_uint_eq(long_chains(14000, 4, 8000), 0);
}
END_TEST

/* Nine chunks: walks with many candidate chunks take the summary rows
 * (bpfipt_chunk_row()); a walk that goes on after a match, jumps to LATE and
 * back, reuses them. */
START_TEST(t_rows)
{
	__u64 rows = long_chains(30000, BPFIPT_ROWS_MIN, 4000);

	ck_assert_uint_gt(rows, 1000);
}
END_TEST

/* More than 64 chunks: two rows per vector, LATE's block in the second. */
START_TEST(t_rows_two)
{
	__u64 rows = long_chains(270000, 65, 400);

	ck_assert_uint_gt(rows, 100);
}
END_TEST

/* Rules that name six fields: a packet's walk ANDs the rows of the constant
 * vector and of each field it looks up (source, destination, ports, protocol,
 * input interface), ROW_PASS at a time: three passes, the last of one row. */
static void fields_packet(struct cp_packet *p, int k)
{
	bool tcp = rnd() % 3 == 0;

	(void)k;
	*p = (struct cp_packet){
		.saddr = htonl(172u << 24 | 16 << 16 | (rnd() % 61) << 8 | 9),
		.daddr = htonl(10u << 24 | (rnd() % 5) << 8 | 1), .proto = tcp ? 6 : 17,
		.has_ports = true, .has_tcp = tcp, .tcpflags = 0x10,
		.sport = 2000 + rnd() % 7, .dport = 1024 + rnd() % 17, .len = 50,
		.iif = 1 + rnd() % 2,
	};
}

START_TEST(t_rows_fields)
{
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t;
	__u64 rows;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < 40000; i++)
		sb_addf(&sb, "-A INPUT%s -s 172.16.%u.0/24 -d 10.0.%u.1 -p %s --sport %u "
			"--dport %u%s\n", i % 2 ? " -i eth0" : "", i % 61, i % 5,
			i % 3 ? "udp" : "tcp", 2000 + i % 7, 1024 + i % 17,
			i % 4 == 1 ? " -j ACCEPT" : i % 9 == 2 ? "" : " -j DROP");
	sb_adds(&sb, "COMMIT\n");
	t = parse(sb_str(&sb));
	sb_free(&sb);
	rows = walk_checked(t, BPFIPT_ROWS_MIN, 3000, fields_packet);
	ck_assert_uint_gt(rows, 300);
}
END_TEST

/* One packet through the test program; the counters that moved must be the
 * reference's. */
static void send_chain(struct dp_inst *in, struct ipt_table *t, struct cp_packet *p, __u32 chain)
{
	struct __sk_buff ctx = { .cb = { chain, p->iif, p->oif } };
	__u8 buf[64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = packet(buf, p),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	__u64 (*a)[2], (*b)[2];
	unsigned int na, nb, moved = 0;
	struct ipt_err err = { 0 };
	struct cp_trace rt;

	ck_assert_int_eq(cp_ref_eval(t, &env, chain, p, &rt), 0);
	ck_assert_int_eq(dp_inst_counters(in, &a, &na, &err), 0);
	ck_assert_int_eq(bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TEST), &o), 0);
	ck_assert_int_eq(dp_inst_counters(in, &b, &nb, &err), 0);
	ck_assert_uint_eq(na, nb);
	ck_assert_msg((int)o.retval == (int)rt.verdict, "src %#x dport %u: verdict %u, reference %d",
		      ntohl(p->saddr), p->dport, o.retval, rt.verdict);
	for (unsigned int k = 0; k < nb; k++)
		moved += b[k][0] - a[k][0];
	ck_assert_uint_eq(moved, rt.ncounted);
	for (unsigned int k = 0; k < rt.ncounted && k < CP_TRACE_MAX; k++) {
		unsigned int times = 0;	/* a chain called twice counts its rules twice */

		for (unsigned int i = 0; i < rt.ncounted && i < CP_TRACE_MAX; i++)
			times += rt.counted[i] == rt.counted[k];
		ck_assert_msg(b[rt.counted[k]][0] == a[rt.counted[k]][0] + times &&
			      b[rt.counted[k]][1] == a[rt.counted[k]][1] + times * p->len,
			      "src %#x: counter %u did not move by %u packets", ntohl(p->saddr),
			      rt.counted[k], times);
	}
	free(a);
	free(b);
}

static void send_checked(struct dp_inst *in, struct ipt_table *t, struct cp_packet *p)
{
	send_chain(in, t, p, BPFIPT_INPUT);
}

/* the last value of the slot prefix's direct range idx of chain c, one that does
 * not wrap (bpfipt_conf.pfx_span) */
#define PFX_HI(c, idx) (cf.pfx_lo[c][idx] + cf.pfx_span[c][idx])

static struct ipt_table *install_text(struct strbuf *sb, struct cp_compiled **cc,
				      struct dp_inst **in, struct bpfipt_conf *cf)
{
	struct ipt_table *t = parse(sb_str(sb));
	struct ipt_err err = { 0 };

	sb_free(sb);
	ck_assert_msg(cp_compile(t, &env, cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(dp_inst_create(in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(*in, *cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_conf(*in, cf, &err), 0);
	return t;
}

/*
 * A windowed pool (BPFIPT_C_WINDOWS), the loader's choice for many user chains:
 * n chains of two rules ("-s 10.200.i.j -j DROP" or "-p tcp --sport 1000+i -j
 * DROP", then "-j ACCEPT"), INPUT jumping to each from "-d 10.0.i.j -p tcp --dport
 * 80", policy DROP: each vector differs from its field's first in one rule's
 * chunk. Verdicts and counters of packets that jump and drop, jump and accept,
 * miss every jump, against the reference.
 */
static void many_chains(unsigned int n, unsigned int packets)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int i;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (i = 0; i < n; i++)
		sb_addf(&sb, ":SVC-%05u - [0:0]\n", i);
	for (i = 0; i < n; i++)
		sb_addf(&sb, "-A INPUT -d 10.0.%u.%u -p tcp --dport 80 -j SVC-%05u\n", i / 250,
			1 + i % 250, i);
	for (i = 0; i < n; i++) {
		if (i % 2)
			sb_addf(&sb, "-A SVC-%05u -p tcp --sport %u -j DROP\n", i, 1000 + i);
		else
			sb_addf(&sb, "-A SVC-%05u -s 10.200.%u.%u -j DROP\n", i, i / 250,
				1 + i % 250);
		sb_addf(&sb, "-A SVC-%05u -j ACCEPT\n", i);
	}
	sb_adds(&sb, "COMMIT\n");
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_ge(cc->nchunks, 2);
	ck_assert_msg(cf.flags & BPFIPT_C_WINDOWS, "%u vectors, %zu chunks owned of %u", cc->nvecs,
		      cc->nowned, cc->nvecs * cc->nchunks);
	for (unsigned int k = 0; k < packets; k++) {
		unsigned int a = k < 8 ? k * (n / 8) : rnd() % n, b = rnd() % 4 ? a : rnd() % n;
		struct cp_packet p = {
			.saddr = htonl(10u << 24 | 200 << 16 | (b / 250) << 8 | (1 + b % 250)),
			.daddr = htonl(10u << 24 | (a / 250) << 8 | (1 + a % 250)),
			.proto = 6, .has_ports = true, .has_tcp = true, .tcpflags = 0x02,
			.sport = rnd() % 2 ? 1000 + b : 40000, .dport = rnd() % 8 ? 80 : 81,
			.len = 50,
		};

		if (k % 16 == 0)
			p.saddr = inet_addr("192.168.1.1");
		send_checked(in, t, &p);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}

/* 3 000 chains, 12 001 slots: three chunks, windowed by force
 * (BPF_IPTABLES_POOL=windows: the loader keeps a pool of 17 MB flat) */
START_TEST(t_windows)
{
	ck_assert_int_eq(setenv("BPF_IPTABLES_POOL", "windows", 1), 0);
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	many_chains(3000, 1500);
	ck_assert_int_eq(unsetenv("BPF_IPTABLES_POOL"), 0);
}
END_TEST

/* 9 000 chains (9 chunks, the summary rows), windowed by the loader's own
 * choice; and the long chains of t_rows windowed by force (their vectors'
 * differences span the chain: the loader would store them whole). */
START_TEST(t_windows_rows)
{
	ck_assert_int_eq(unsetenv("BPF_IPTABLES_POOL"), 0);
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	many_chains(9000, 3000);
	ck_assert_int_eq(setenv("BPF_IPTABLES_POOL", "windows", 1), 0);
	ck_assert_uint_gt(long_chains(30000, BPFIPT_ROWS_MIN, 2000), 500);
	ck_assert_int_eq(unsetenv("BPF_IPTABLES_POOL"), 0);
}
END_TEST

/* The rules of c1 and c2 (walk_seen()): many a packet matches and goes on
 * past (no target, LOG) or returns from. */
static void walk_chains(struct strbuf *sb)
{
	for (unsigned int i = 0; i < 400; i++)
		sb_addf(sb, "-A c1 -d 192.0.2.%u/32 -p udp --dport %u%s\n", i % 50, 1000 + i % 40,
			i % 9 == 4 ? " -j RETURN" : i % 5 == 2 ? " -j LOG" : "");
	for (unsigned int i = 0; i < 150; i++)
		sb_addf(sb, "-A c2 -p %s --dport %u%s\n", i % 2 ? "tcp" : "udp", 2000 + i % 30,
			i % 13 == 6 ? " -j ACCEPT" : i % 7 == 3 ? " -j RETURN" : "");
}

/*
 * A walk's later steps find their slot in chunk 0's words that its first step
 * ANDed (bpfipt.bpf.c, chunk0_seen()): jumps into c1 and c2 and back, rules a
 * packet goes on past, a folded deny list after the first jump (its slot out
 * of the kept words where the source is not listed), more candidate words than
 * are tested ahead; then INPUT of 5 000 rules more (two chunks), where chunk
 * 0 runs out and the walk goes on in the next, also back from a jump in chunk
 * 0's last word (c1's and c2's blocks are in the last). Verdicts and counters against the reference.
 */
static void walk_seen(unsigned int nmore, unsigned int packets)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":c1 - [0:0]\n:c2 - [0:0]\n-A INPUT -j c1\n");
	sb_list(&sb, "-A INPUT -s %s/32 -j DROP\n", 0, 300);
	sb_adds(&sb, "-A INPUT -j c2\n-A INPUT -p udp --dport 1003 -j c1\n");
	for (unsigned int i = 0; i < nmore; i++) {
		rule(&sb, "INPUT", i);
		/* a jump in chunk 0's last word: back from c1, the walk has seen
		 * all of chunk 0 that is left, and goes on in chunk 1 */
		if (i == 4036)
			sb_adds(&sb, "-A INPUT -p udp -j c1\n");
	}
	sb_adds(&sb, "-A INPUT -p tcp --dport 2001 -j c2\n-A INPUT -p udp --dport 1005 -j DROP\n");
	walk_chains(&sb);
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_gt(cc->nwords, nmore ? 64 : 8);
	ck_assert_uint_eq(cf.gfold[BPFIPT_INPUT][0], 2);	/* the list folded */
	for (unsigned int k = 0; k < packets; k++) {
		unsigned int r = rnd() % 4, i = rnd() % 400, s = rnd() % 1021;
		struct cp_packet p = {
			.saddr = r == 0 ? htonl(172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8 | 9)
							: DENY(i),
			.daddr = htonl(0xc0000200u | rnd() % 60), .proto = rnd() % 3 ? 17 : 6,
			.has_ports = true, .sport = 40000, .len = 50,
			.dport = (unsigned int[]){ 1000 + rnd() % 42, 2000 + rnd() % 32,
						   1024 + rnd() % 509 }[rnd() % 3],
		};

		p.has_tcp = p.proto == 6;
		p.tcpflags = 0x10;
		send_checked(in, t, &p);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}

START_TEST(t_walk_seen)
{
	walk_seen(0, 3000);
}
END_TEST

START_TEST(t_walk_seen_chunks)
{
	walk_seen(5000, 1500);
}
END_TEST

/* Words whose summary bits the packet's vectors share, but no rule: the source's
 * rules sit in even slots, the port's in odd ones, in every word of three chunks.
 * A rule that matches both is placed at word w of chunk 0 or 2, for w on both
 * sides of the candidate words chunk_find() tests before its loop
 * (BPFIPT_WORDS_AHEAD), each with a source port of its own; the packets with
 * that port find it, after w words that share no bit. The targets alternate:
 * no run of rules is a tuple group. */
START_TEST(t_words_ahead)
{
	static const unsigned int word[] = { 0, 1, 2, 3, 4, 5, 6, 9, 17, 40 };
	const unsigned int nw = sizeof(word) / sizeof(word[0]);
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	unsigned int placed = 0;
	struct bpfipt_conf cf;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < 3 * 4096; i++) {
		unsigned int c = i / 4096, w = i % 4096 / 64;

		if (i % 64 == 32 && (c == 0 || c == 2) && placed < 2 * nw &&
		    w == word[placed % nw])
			sb_addf(&sb, "-A INPUT -s 172.16.0.0/24 -p udp --sport %u --dport 1024 -j DROP\n",
				3000 + placed++);
		if (i % 2)
			sb_addf(&sb, "-A INPUT -s 172.17.%u.0/24 -p udp --dport 1024 -j DROP\n",
				i % 199);
		else
			sb_addf(&sb, "-A INPUT -s 172.16.0.0/24 -p udp --dport %u -j ACCEPT\n",
				2000 + i % 997);
	}
	sb_adds(&sb, "COMMIT\n");
	ck_assert_uint_eq(placed, 2 * nw);
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_gt(cc->nwords, 2 * 64);
	for (unsigned int k = 0; k <= 2 * nw; k++) {
		/* k == 2 nw: a source port no rule names, the policy */
		struct cp_packet p = {
			.saddr = inet_addr("172.16.0.9"), .daddr = inet_addr("10.0.0.1"), .proto = 17,
			.has_ports = true, .sport = 3000 + k, .dport = 1024, .len = 50,
		};
		struct cp_trace rt;

		ck_assert_int_eq(cp_ref_eval(t, &env, BPFIPT_INPUT, &p, &rt), 0);
		ck_assert_int_eq(rt.verdict, k < 2 * nw ? BPFIPT_V_DROP : BPFIPT_V_ACCEPT);
		send_checked(in, t, &p);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A protocol every rule of INPUT names: its vector has all of INPUT's slots
 * (cp_compiled.full_vec), and the walk leaves its AND out (bpfipt_conf.fullf);
 * so does a source port's, when no rule names one.
 * FORWARD names two protocols: neither is full. Three chunks each; packets of
 * both protocols checked against the reference. */
START_TEST(t_full_vec)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	__u32 udp;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < 9000; i++) {
		unsigned int s = i % 1021;

		sb_addf(&sb, "-A INPUT -s 172.%u.%u.0/24 -p udp --dport %u -j %s\n", 16 + s / 256,
			s % 256, 1024 + i % 509, i % 3 ? "DROP" : "ACCEPT");
		sb_addf(&sb, "-A FORWARD -s 172.%u.%u.0/24 -p %s --dport %u -j %s\n", 16 + s / 256,
			s % 256, i % 2 ? "tcp" : "udp", 1024 + i % 509, i % 3 ? "DROP" : "ACCEPT");
	}
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_gt(cc->nwords, 2 * 64);
	udp = cp_array_vec(&cc->proto, BPFIPT_INPUT, 17);
	ck_assert_uint_eq(cc->full_vec[BPFIPT_INPUT], udp);
	/* every slot but the empty ones before the policy (cp_compiled.npad) */
	ck_assert_uint_eq(cc->npad[BPFIPT_INPUT], 64 - 9000 % 64);
	for (unsigned int s = 0; s < cc->nwords * 64; s++)
		ck_assert_uint_eq(cp_vec_bit(cc, udp, s), s < cc->nslots[BPFIPT_INPUT] &&
				  (s < 9000 || s >= cc->policy_slot[BPFIPT_INPUT]));
	ck_assert_uint_ne(cc->full_vec[BPFIPT_FORWARD],
			  cp_array_vec(&cc->proto, BPFIPT_FORWARD, 17));
	ck_assert_uint_ne(cc->full_vec[BPFIPT_FORWARD],
			  cp_array_vec(&cc->proto, BPFIPT_FORWARD, 6));
	ck_assert_uint_eq(cf.full[BPFIPT_INPUT], udp);
	/* and a source port's: every rule takes any (but a packet without ports) */
	ck_assert_uint_eq(cf.fullf[BPFIPT_INPUT], 1u << BPFIPT_F_PROTO | 1u << BPFIPT_F_SPORT);
	ck_assert(cf.fullf[BPFIPT_FORWARD] & 1u << BPFIPT_F_SPORT);
	ck_assert(!(cf.fullf[BPFIPT_FORWARD] & 1u << BPFIPT_F_PROTO));
	for (int k = 0; k < 1500; k++) {
		unsigned int s = rnd() % 1021;
		struct cp_packet p = {
			.saddr = htonl(172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8 | 9),
			.daddr = inet_addr("10.0.0.1"), .proto = k % 3 ? 17 : 6,
			.has_ports = true, .has_tcp = k % 3 == 0, .sport = 40000,
			.dport = 1024 + rnd() % 512, .len = 50,
		};

		send_chain(in, t, &p, k % 2 ? BPFIPT_FORWARD : BPFIPT_INPUT);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A chain whose only address constraint is a deny list (OUTPUT, -d) has no
 * destination field set: the group slot tests its set itself. INPUT's list has
 * a second -s rule beside it: its field stays, without the list's prefixes
 * (cp_compiled.gfold). FORWARD has two lists on -s: both stay in the field's
 * set, neither is folded. */
START_TEST(t_group_only)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct bpfipt_conf cf;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A OUTPUT -p udp --dport 9 -j ACCEPT\n-A INPUT -s 192.0.2.1/32 -j ACCEPT\n");
	for (unsigned int i = 0; i < 3000; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A OUTPUT -d %s/%u -j DROP\n", inet_ntoa(a), i % 10 ? 32 : 24);
		if (i < 500)
			sb_addf(&sb, "-A INPUT -s %s/32 -j DROP\n", inet_ntoa(a));
		if (i < 600)
			sb_addf(&sb, "-A FORWARD -s %s/32 -j %s\n", inet_ntoa(a),
				i < 300 ? "DROP" : "ACCEPT");
		if (i == 299)
			sb_adds(&sb, "-A FORWARD -p udp --dport 53 -j ACCEPT\n");
	}
	sb_adds(&sb, "-A OUTPUT -p udp --dport 7 -j ACCEPT\n-A OUTPUT -p udp -j REJECT\n"
		"-A FORWARD -j DROP\nCOMMIT\n");
	t = parse(sb_str(&sb));
	sb_free(&sb);
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_uint_eq(cc->ngroups, 4);
	/* INPUT's source set: 0/0 and 192.0.2.1 only; FORWARD's: both lists */
	{
		unsigned int nin = 0, nfw = 0;

		for (size_t i = 0; i < cc->src.n; i++) {
			nin += cc->src.e[i].key == BPFIPT_INPUT;
			nfw += cc->src.e[i].key == BPFIPT_FORWARD;
		}
		ck_assert_uint_le(nin, 2);
		ck_assert_uint_ge(nfw, 600);
	}
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert(!(cf.lookup[BPFIPT_OUTPUT] & (1u << BPFIPT_F_DST)));
	ck_assert(cf.lookup[BPFIPT_INPUT] & (1u << BPFIPT_F_SRC));
	ck_assert(cf.gfold[BPFIPT_OUTPUT][1] && cf.gfold[BPFIPT_INPUT][0]);
	ck_assert(!cf.gfold[BPFIPT_FORWARD][0]);
	for (int k = 0; k < 2400; k++) {
		unsigned int r = rnd() % 4, i = rnd() % 3000;
		struct cp_packet p = {
			.saddr = r == 0 ? inet_addr("192.0.2.1") : DENY(i % 600),
			.daddr = r == 1 ? inet_addr("10.200.0.1")
				 : r == 2 ? (DENY(i) & htonl(0xffffff00)) | htonl(77) : DENY(i),
			.proto = 17, .has_ports = true, .sport = 40000,
			.dport = (unsigned int[]){ 9, 7, 53, 53 }[rnd() % 4], .len = 50,
		};

		send_chain(in, t, &p, (__u32[]){ BPFIPT_INPUT, BPFIPT_OUTPUT, BPFIPT_FORWARD }[k % 3]);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A map of the instance, by name (the test program's). */
static int inst_map(const struct dp_inst *in, const char *name)
{
	struct bpf_prog_info pi = { 0 };
	__u32 ids[64], len = sizeof(pi);

	pi.nr_map_ids = 64;
	pi.map_ids = (__u64)(unsigned long)ids;
	ck_assert_int_eq(bpf_obj_get_info_by_fd(dp_inst_prog_fd(in, DP_PROG_TEST), &pi, &len), 0);
	for (__u32 i = 0; i < pi.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		ck_assert_int_ge(fd, 0);
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	ck_abort_msg("no map %s", name);
	return -1;
}

/* What a program run still under way at the switch does: count a packet of
 * `bytes` on counter id `id` of the generation just left (the spare one), on
 * CPU 0's row (or the shared counter). */
static void late_count(const struct dp_inst *in, __u32 id, __u64 bytes)
{
	int ifd = inst_map(in, "bpfipt_inst"), cfd = inst_map(in, "bpfipt_conf");
	int ofd, fd;
	struct bpfipt_inst iv;
	struct bpfipt_conf cf;
	struct bpfipt_counter *p;
	__u32 zero = 0, old, mid, P = id, below = 0;
	size_t len;

	ck_assert_int_eq(bpf_map_lookup_elem(ifd, &zero, &iv), 0);
	old = iv.cur[0] ^ 1;
	ck_assert_int_eq(bpf_map_lookup_elem(cfd, &old, &cf), 0);
	ofd = inst_map(in, cf.flags & BPFIPT_C_CNT_FIXED ? "bpfipt_cntfx" : "bpfipt_counters");
	ck_assert_int_eq(bpf_map_lookup_elem(ofd, &old, &mid), 0);
	fd = bpf_map_get_fd_by_id(mid);
	ck_assert_int_ge(fd, 0);
	for (__u32 r = 0; r < cf.nshared; r++) {	/* the loader's cnt_phys() */
		if (id >= cf.shared[r].lo && id < cf.shared[r].lo + cf.shared[r].n)
			P = cf.nper + below + (id - cf.shared[r].lo);
		if (id >= cf.shared[r].lo + cf.shared[r].n)
			P -= cf.shared[r].n;
		below += cf.shared[r].n;
	}
	len = ((size_t)(cf.ncpus + 1) * cf.nper + cf.ncounters - cf.nper) * sizeof(*p);
	len = (len + 4095) / 4096 * 4096;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert(p != MAP_FAILED);
	p += P < cf.nper ? P : (size_t)cf.ncpus * cf.nper + P;
	p->packets += 1;
	p->bytes += bytes;
	munmap(p, len);
	close(fd);
	close(ofd);
	close(cfd);
	close(ifd);
}

/* n packets to port 53, every other one from a member of the deny list, the
 * rest from 192.0.2.2 (the first rule of deny_ruleset(2)) */
static void send_listed(struct dp_inst *in, struct ipt_table *t, int n)
{
	for (int k = 0; k < n; k++) {
		struct cp_packet p = {
			.saddr = k % 2 ? DENY(rnd() % 3000) : inet_addr("192.0.2.2"),
			.daddr = inet_addr("10.0.0.1"), .proto = 17,
			.has_ports = true, .sport = 40000, .dport = 53, .len = 50,
		};

		send_checked(in, t, &p);
	}
}

START_TEST(t_shared_counters)
{
	struct ipt_table *t = deny_ruleset(0), *t2 = deny_ruleset(2);
	struct cp_compiled *cc = NULL, *cc2 = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct bpfipt_conf cf;
	__u64 (*seed)[2], (*c)[2], (*c2)[2];
	unsigned int n, n2;
	__u32 *carry;

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(cp_compile(t2, &env, &cc2, &err) == 0, "compile: %s", err.msg);
	ck_assert_uint_eq(cc->ngroups, 2);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	seed = calloc(cc->ncounters, sizeof(*seed));
	for (unsigned int i = 0; i < cc->ncounters; i++) {
		seed[i][0] = 1000 + i;
		seed[i][1] = 100000 + i;
	}
	ck_assert_msg(dp_inst_install(in, cc, (const __u64 (*)[2])seed, cc->ncounters, NULL, 0,
				      &err) == 0, "%s", err.msg);
	/* the deny list's 3 000 members are shared, the 40-group's are not */
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert_uint_eq(cf.nshared, 1);
	ck_assert_uint_eq(cf.shared[0].lo, 1);
	ck_assert_uint_eq(cf.shared[0].n, 3000);
	ck_assert_uint_eq(cf.ncounters, cc->ncounters);
	ck_assert_uint_eq(cf.nper, cc->ncounters - 3000);
	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	ck_assert_uint_eq(n, cc->ncounters);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(c[i][0] == seed[i][0] && c[i][1] == seed[i][1],
			      "counter %u: seed %llu, read %llu", i,
			      (unsigned long long)seed[i][0], (unsigned long long)c[i][0]);
	free(c);
	/* the list's first, last and middle members, the small group, the rules */
	for (int k = 0; k < 600; k++) {
		unsigned int r = rnd() % 6, i = k < 3 ? (unsigned int[]){ 0, 2999, 1500 }[k]
							: rnd() % 3000;
		struct cp_packet p = {
			.saddr = r < 3 ? DENY(i) : r == 3 ? htonl(0xac1f0000u | (i % 40) << 8 | 5)
							   : inet_addr("192.168.7.7"),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = r == 4 ? 9 : r == 5 ? 7 : 53, .len = 50,
		};

		send_checked(in, t, &p);
	}
	/* rule ids move by 2: the counters follow the carry map (new id -> old),
	 * which overrides the seed (as a command passes both) */
	carry = calloc(cc2->ncounters, sizeof(*carry));
	free(seed);
	seed = calloc(cc2->ncounters, sizeof(*seed));
	for (unsigned int i = 0; i < cc2->ncounters; i++) {
		seed[i][0] = 7;
		seed[i][1] = 70;
	}
	for (unsigned int i = 0; i < cc2->ncounters; i++)
		carry[i] = i < 2 ? BPFIPT_NO_COUNTER : i - 2 < cc->ncounters - BPFIPT_NCHAINS
			   ? i - 2 : i - cc2->ncounters + cc->ncounters;
	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	ck_assert_msg(dp_inst_install(in, cc2, (const __u64 (*)[2])seed, cc2->ncounters, carry,
				      cc2->ncounters, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert_uint_eq(cf.nshared, 1);
	ck_assert_uint_eq(cf.shared[0].lo, 3);
	ck_assert_int_eq(dp_inst_counters(in, &c2, &n2, &err), 0);
	ck_assert_uint_eq(n2, cc2->ncounters);
	for (unsigned int i = 0; i < n2; i++) {
		__u64 want = carry[i] == BPFIPT_NO_COUNTER ? 7 : c[carry[i]][0];
		__u64 wantb = carry[i] == BPFIPT_NO_COUNTER ? 70 : c[carry[i]][1];

		ck_assert_msg(c2[i][0] == want && c2[i][1] == wantb,
			      "counter %u: carried %llu, want %llu", i,
			      (unsigned long long)c2[i][0], (unsigned long long)want);
	}
	send_listed(in, t2, 200);
	/* The carry happens at the switch, before the runs then under way have
	 * finished: what they count in the old generation (here: a per-CPU and a
	 * shared counter) is added by the next install, to the counters that
	 * continue those (back to cc's ids: old id 0 is id 2 of cc2, 1500 is 1502). */
	late_count(in, 0, 1234);
	late_count(in, 1500, 4321);
	free(c);
	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	for (unsigned int i = 0; i < cc->ncounters; i++)
		carry[i] = i < cc->ncounters - BPFIPT_NCHAINS ? i + 2
			   : i - cc->ncounters + cc2->ncounters;
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, carry, cc->ncounters, &err) == 0, "%s",
		      err.msg);
	free(c2);
	ck_assert_int_eq(dp_inst_counters(in, &c2, &n2, &err), 0);
	ck_assert_uint_eq(n2, cc->ncounters);
	for (unsigned int i = 0; i < n2; i++) {
		__u64 want = c[carry[i]][0] + (i == 0 || i == 1500);
		__u64 wantb = c[carry[i]][1] + (i == 0 ? 1234 : i == 1500 ? 4321 : 0);

		ck_assert_msg(c2[i][0] == want && c2[i][1] == wantb,
			      "counter %u: %llu/%llu, want %llu/%llu", i,
			      (unsigned long long)c2[i][0], (unsigned long long)c2[i][1],
			      (unsigned long long)want, (unsigned long long)wantb);
	}
	free(c);
	free(c2);
	free(carry);
	free(seed);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	cp_compiled_free(&cc2);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* INPUT of rules 0 .. n-1 (rule()) */
static struct ipt_table *input_rules(unsigned int n)
{
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < n; i++)
		rule(&sb, "INPUT", i);
	sb_adds(&sb, "COMMIT\n");
	t = parse(sb_str(&sb));
	sb_free(&sb);
	return t;
}

/* packets to rules 0 .. 11 of rule(), and to none */
static void send_first(struct dp_inst *in, struct ipt_table *t, int n)
{
	for (int k = 0; k < n; k++) {
		unsigned int i = rnd() % 13;
		struct cp_packet p = {
			.saddr = htonl(0xac100005u | i << 8), .daddr = inet_addr("10.0.0.1"),
			.proto = 17, .has_ports = true, .sport = 40000,
			.dport = i < 12 ? 1024 + i : 80, .len = 50,
		};

		send_checked(in, t, &p);
	}
}

/* counter ids i of the rules both rulesets begin with, the policies' at the
 * end: new id -> old */
static __u32 *carry_first(const struct cp_compiled *to, const struct cp_compiled *from,
			  unsigned int nsame)
{
	__u32 *carry = calloc(to->ncounters, sizeof(*carry));

	for (unsigned int i = 0; i < to->ncounters; i++)
		carry[i] = i < nsame ? i
			   : i >= to->ncounters - BPFIPT_NCHAINS
			   ? i - to->ncounters + from->ncounters : BPFIPT_NO_COUNTER;
	return carry;
}

/* `to` installed over the running `from`, whose first nsame rules it begins
 * with, counters carried: in the fixed-size map or not (fixed), each the
 * count of the one it continues (and, when counted, the first nsame moved). */
static void install_carried(struct dp_inst *in, const struct cp_compiled *to,
			    const struct cp_compiled *from, unsigned int nsame, bool fixed,
			    bool counted)
{
	__u32 *carry = carry_first(to, from, nsame);
	struct ipt_err err = { 0 };
	__u64 (*a)[2], (*b)[2];
	struct bpfipt_conf cf;
	unsigned int na, nb;

	ck_assert_int_eq(dp_inst_counters(in, &a, &na, &err), 0);
	ck_assert_msg(dp_inst_install(in, to, NULL, 0, carry, to->ncounters, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert_msg(!(cf.flags & BPFIPT_C_CNT_FIXED) == !fixed,
		      "%u counters, %u per-CPU: in the fixed map %d, want %d", cf.ncounters,
		      cf.nper, !!(cf.flags & BPFIPT_C_CNT_FIXED), fixed);
	ck_assert_int_eq(dp_inst_counters(in, &b, &nb, &err), 0);
	ck_assert_uint_eq(nb, to->ncounters);
	for (unsigned int i = 0; i < nb; i++) {
		__u64 wp = carry[i] == BPFIPT_NO_COUNTER ? 0 : a[carry[i]][0];
		__u64 wb = carry[i] == BPFIPT_NO_COUNTER ? 0 : a[carry[i]][1];

		ck_assert_msg(b[i][0] == wp && b[i][1] == wb && (!counted || i >= nsame || wp > 0),
			      "counter %u: %llu, carried from %u", i, (unsigned long long)b[i][0],
			      carry[i]);
	}
	free(a);
	free(b);
	free(carry);
}

static void pair_maps_check(const struct dp_inst *in, const struct bpfipt_conf *cf, __u32 flag,
			    const char *sized, const char *fx);

/*
 * Counters in the fixed-size map (BPFIPT_C_CNT_FIXED) while they fit, in one
 * of the generation's size when they do not, and carried across both
 * switches: each packet's verdict and counters against the reference, and the
 * counts of the rules kept read back after each switch; the running slot
 * holds its counters' map alone.
 */
START_TEST(t_counters_fixed)
{
	struct ipt_table *ts = input_rules(12), *tb = NULL;
	struct cp_compiled *cs = NULL, *cb = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct bpfipt_conf cf;

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(ts, &env, &cs, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(in, cs, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	ck_assert(cf.flags & BPFIPT_C_CNT_FIXED);
	send_first(in, ts, 60);

	/* more per-CPU counters than the fixed map holds, and back */
	tb = input_rules(BPFIPT_CNT_FIXED / (cf.ncpus + 1) + 64);
	ck_assert_msg(cp_compile(tb, &env, &cb, &err) == 0, "compile: %s", err.msg);
	install_carried(in, cb, cs, 12, false, false);
	send_first(in, tb, 60);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	pair_maps_check(in, &cf, BPFIPT_C_CNT_FIXED, "bpfipt_counters", "bpfipt_cntfx");
	install_carried(in, cs, cb, 12, true, true);
	send_first(in, ts, 60);
	install_carried(in, cb, cs, 12, false, false);
	install_carried(in, cs, cb, 12, true, true);
	ck_assert_int_eq(dp_inst_conf(in, &cf, &err), 0);
	pair_maps_check(in, &cf, BPFIPT_C_CNT_FIXED, "bpfipt_counters", "bpfipt_cntfx");
	send_first(in, ts, 60);
	dp_inst_free(&in);
	cp_compiled_free(&cs);
	cp_compiled_free(&cb);
	ipt_table_free(&ts);
	ipt_table_free(&tb);
}
END_TEST

/* t compiled and installed in instance in, as its next generation; that
 * generation's conf in *cf */
static struct cp_compiled *install_in(struct dp_inst *in, const struct ipt_table *t,
				      struct bpfipt_conf *cf)
{
	struct cp_compiled *cc = NULL;
	struct ipt_err err = { 0 };

	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(dp_inst_conf(in, cf, &err), 0);
	return cc;
}

/*
 * IPv4 address sets in the pages of one size (BPFIPT_C_IVAL_FIXED) while they
 * fit, in a map of the generation's size when they do not, and back: a deny
 * list of 3 000 sources (24 pages) becomes one of 20 000 (160), then of 3 000
 * again, beside rules whose sources make the field's own set. After each
 * switch, sources listed, unlisted and in those rules' /24s: verdicts and
 * counters against the reference.
 */
START_TEST(t_ival_fixed)
{
	static const unsigned int sizes[] = { 3000, 20000, 3000 };
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (unsigned int r = 0; r < 3; r++) {
		struct strbuf sb = STRBUF_INIT;
		struct cp_compiled *cc = NULL;
		struct bpfipt_conf cf;
		struct ipt_table *t;

		sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
			":OUTPUT ACCEPT [0:0]\n-A INPUT -p udp --dport 9 -j ACCEPT\n");
		sb_list(&sb, "-A INPUT -s %s/32 -j DROP\n", 0, sizes[r]);
		for (unsigned int i = 0; i < 40; i++)
			sb_addf(&sb, "-A INPUT -s 172.16.%u.0/24 -p udp --dport %u -j %s\n", i,
				53 + i % 2, i % 3 ? "ACCEPT" : "DROP");
		sb_adds(&sb, "-A INPUT -p udp --dport 54 -j DROP\nCOMMIT\n");
		t = parse(sb_str(&sb));
		sb_free(&sb);
		cc = install_in(in, t, &cf);
		ck_assert_msg(!(cf.flags & BPFIPT_C_IVAL_FIXED) == (sizes[r] > 10000),
			      "%u entries, %u pages: fixed %d", sizes[r], cf.npages,
			      !!(cf.flags & BPFIPT_C_IVAL_FIXED));
		ck_assert_uint_gt(cf.lookup[BPFIPT_INPUT] & (1u << BPFIPT_F_SRC), 0);
		for (int k = 0; k < 600; k++) {
			unsigned int i = rnd() % (sizes[r] + 3000), kind = rnd() % 3;
			struct cp_packet p = {
				.saddr = kind ? DENY(i) : htonl(0xac100005u | (rnd() % 48) << 8),
				.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
				.sport = 40000, .dport = (unsigned int[]){ 9, 53, 54, 80 }[rnd() % 4],
				.len = 50,
			};

			send_checked(in, t, &p);
		}
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	dp_inst_free(&in);
}
END_TEST

/* The running generation's slot holds the map of a pair (sized, of one size
 * fx) that it reads, fx when conf cf has flag, and not the other (loader.c
 * slot_pairs_drop(): an earlier generation's, or a twin). */
static void pair_maps_check(const struct dp_inst *in, const struct bpfipt_conf *cf, __u32 flag,
			    const char *sized, const char *fx)
{
	int ifd = inst_map(in, "bpfipt_inst"), xfd = inst_map(in, fx);
	bool fixed = cf->flags & flag;
	struct bpfipt_inst iv;
	__u32 zero = 0, id;

	ck_assert_int_eq(bpf_map_lookup_elem(ifd, &zero, &iv), 0);
	ck_assert_msg(!bpf_map_lookup_elem(xfd, &iv.cur[0], &id) == fixed, "%s %s", fx,
		      fixed ? "missing" : "kept");
	if (sized) {
		int pfd = inst_map(in, sized);

		ck_assert_msg(!bpf_map_lookup_elem(pfd, &iv.cur[0], &id) == !fixed, "%s %s",
			      sized, fixed ? "kept" : "missing");
		close(pfd);
	}
	close(xfd);
	close(ifd);
}

/* 400 packets that the walk of input_rules(n) takes to the first rules, the
 * last and none, against the reference. */
static void send_input_rules(struct dp_inst *in, struct ipt_table *t, unsigned int n)
{
	for (int k = 0; k < 400; k++) {
		unsigned int i = rnd() % (n + 100), s = i % 1021;
		struct cp_packet p = {
			.saddr = htonl(0xac100005u + ((s / 256) << 16 | (s % 256) << 8)),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = 1024 + (k % 4 ? i % 509 : rnd() % 600),
			.len = 50,
		};

		send_checked(in, t, &p);
	}
}

/*
 * input_rules(sizes[r]) installed in turn into one instance, r < n: conf flag
 * set where fixed[r] (a map of one size) and not elsewhere, the running slot
 * holding the map of the pair (sized, fx) it reads and not the other, and after
 * each switch packets that the walk takes to the first, the last and no rule,
 * against the reference.
 */
static void fixed_runs(const unsigned int *sizes, const bool *fixed, unsigned int n, __u32 flag,
		       const char *sized, const char *fx)
{
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (unsigned int r = 0; r < n; r++) {
		struct ipt_table *t = input_rules(sizes[r]);
		struct cp_compiled *cc = NULL;
		struct bpfipt_conf cf;

		cc = install_in(in, t, &cf);
		ck_assert_msg(!!(cf.flags & flag) == fixed[r], "%u rules, %u chunks: %s %d",
			      sizes[r], cf.nchunks, fx, !!(cf.flags & flag));
		pair_maps_check(in, &cf, flag, sized, fx);
		if (flag == BPFIPT_C_SLOTS_FIXED && !fixed[r]) {	/* in the pool, past a page */
			__u32 nslots = 0;

			for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++)
				nslots += cc->nslots[c] + cc->nmslots[c];
			ck_assert_uint_lt(cf.sbase / BPFIPT_PAGE_CHUNKS,
					  (cf.sbase + (nslots - 1) / BPFIPT_POOL_SLOTS) /
						  BPFIPT_PAGE_CHUNKS);
		}
		send_input_rules(in, t, sizes[r]);
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	dp_inst_free(&in);
}

/*
 * The slots in the array of one size (BPFIPT_C_SLOTS_FIXED) while they fit, in
 * the pool's pages when they do not (BPFIPT_POOL_SLOTS an entry past its
 * chunks, across a page's end), and back: 100 rules, 16 984 (past
 * BPFIPT_SLOTS_FIXED), 2 000.
 */
START_TEST(t_slots_fixed)
{
	static const unsigned int sizes[] = { 100, BPFIPT_SLOTS_FIXED + 600, 2000 };
	static const bool fixed[] = { true, false, true };

	fixed_runs(sizes, fixed, 3, BPFIPT_C_SLOTS_FIXED, NULL, "bpfipt_slotsfx");
}
END_TEST

/* The generation maps of slot `slot`: bit m for outer map names[m]; the
 * counters' bit 7 for either of their maps (bpfipt.h: a small generation's in
 * bpfipt_cntfx), the address sets' bits 0 and 8 likewise (bpfipt_ivalfx,
 * bpfipt_ival6fx), the slots' bit 4 (bpfipt_slotsfx: 16 384 slots or fewer,
 * more are in the pool); the pool's bit 3 for its page 0 (bpfipt_pages). */
static const char *const gen_outer[] = {
	"bpfipt_ival", "bpfipt_fields", "bpfipt_ifs", "bpfipt_pages", "bpfipt_slotsfx",
	"bpfipt_extras", "bpfipt_limits", "bpfipt_counters", "bpfipt_ival6", "bpfipt_tuple",
	"bpfipt_tuple6", "bpfipt_cntfx", "bpfipt_ivalfx", "bpfipt_ival6fx",
};
#define GEN_PAGES	3
#define GEN_CNTFX	11
#define GEN_IVALFX	12
#define GEN_IVAL6FX	13

/* Slot `slot`'s key in gen_outer[m]. */
static __u32 gen_key(unsigned int m, __u32 slot)
{
	return m == GEN_PAGES ? slot * BPFIPT_PAGES_MAX : slot;
}
#define GEN_TUPLE	(1u << 9)
#define GEN_ALL		((1u << 10) - 1 - (1u << 8))	/* an IPv4 one: no bpfipt_ival6, tuple6 */

static unsigned int slot_maps(const struct dp_inst *in, __u32 slot)
{
	unsigned int mask = 0;

	for (unsigned int m = 0; m < sizeof(gen_outer) / sizeof(gen_outer[0]); m++) {
		int fd = inst_map(in, gen_outer[m]);
		__u32 id, k = gen_key(m, slot);

		if (!bpf_map_lookup_elem(fd, &k, &id))
			mask |= 1u << (m == GEN_CNTFX	  ? 7
				       : m == GEN_IVALFX  ? 0
				       : m == GEN_IVAL6FX ? 8
							  : m);
		close(fd);
	}
	return mask;
}

static struct bpfipt_inst inst_now(const struct dp_inst *in)
{
	int fd = inst_map(in, "bpfipt_inst");
	struct bpfipt_inst iv;
	__u32 zero = 0;

	ck_assert_int_eq(bpf_map_lookup_elem(fd, &zero, &iv), 0);
	close(fd);
	return iv;
}

static struct dp_inst *late_in;

/* cp_point_hook: a run under way at the switch counts on list members 0 and
 * 1500 of the generation left, after the carry has read it */
static void late_at_carry(const char *name)
{
	if (!strcmp(name, "carried")) {
		late_count(late_in, 0, 1234);
		late_count(late_in, 1500, 4321);
	}
}

/* The ids of the generation maps of slot `slot` (0: none), by gen_outer[]. */
static void slot_ids(const struct dp_inst *in, __u32 slot, __u32 *ids)
{
	for (unsigned int m = 0; m < sizeof(gen_outer) / sizeof(gen_outer[0]); m++) {
		int fd = inst_map(in, gen_outer[m]);
		__u32 k = gen_key(m, slot);

		if (bpf_map_lookup_elem(fd, &k, &ids[m]))
			ids[m] = 0;
		close(fd);
	}
}

/* The pages of generation `slot`'s pool: from page 0 to the first it lacks
 * (loader.c pages_held()). */
static unsigned int slot_pages(const struct dp_inst *in, __u32 slot)
{
	int fd = inst_map(in, "bpfipt_pages");
	unsigned int n = 0;
	__u32 k, id;

	while (k = slot * BPFIPT_PAGES_MAX + n, !bpf_map_lookup_elem(fd, &k, &id))
		n++;
	close(fd);
	return n;
}

/*
 * The pool in pages (bpfipt.h, BPFIPT_PAGE_CHUNKS), as many as it needs and no
 * more, one page flagged (BPFIPT_C_ONE_PAGE, its own search): 5 000 rules (two
 * chunks each, past a page; the other slot gets twins of those pages), 2 000
 * (some 1 500 chunks: one page, the twins past it dropped), 100 (one page, the
 * 5 000's dropped), 5 000 again (the slot grows back); after each switch,
 * packets that the walk takes to the first, the last and no rule, against the
 * reference.
 */
START_TEST(t_pool_pages)
{
	static const unsigned int sizes[] = { 5000, 2000, 100, 5000 };
	unsigned int held[4];
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (unsigned int r = 0; r < 4; r++) {
		struct ipt_table *t = input_rules(sizes[r]);
		struct cp_compiled *cc;
		struct bpfipt_conf cf;

		cc = install_in(in, t, &cf);
		held[r] = slot_pages(in, inst_now(in).cur[0] & 1);
		ck_assert_msg(!!(cf.flags & BPFIPT_C_ONE_PAGE) == (held[r] == 1),
			      "%u rules: %u pages, flags 0x%x", sizes[r], held[r], cf.flags);
		send_input_rules(in, t, sizes[r]);
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	dp_inst_free(&in);
	ck_assert_msg(held[0] > 1 && held[1] == 1 && held[2] == 1 && held[3] == held[0],
		      "pages held: %u %u %u %u", held[0], held[1], held[2], held[3]);
}
END_TEST

/*
 * A family's first install gives the other generation an empty twin of each
 * map it makes (gen_twins()), so that the next install makes none: it
 * rewrites the twins in place (the same maps, by id) and judges by its own
 * ruleset. Not where the maps exceed the spare kept between commands
 * (dp_inst_set_spare_keep()).
 */
START_TEST(t_twins)
{
	enum { NG = sizeof(gen_outer) / sizeof(gen_outer[0]) };
	struct ipt_table *t = deny_ruleset(0), *t2 = deny_ruleset(2);
	struct cp_compiled *cc = NULL, *cc2 = NULL;
	__u32 twin[NG], now[NG], cur;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	unsigned int m, made = 0;

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(cp_compile(t2, &env, &cc2, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	cur = inst_now(in).cur[0] & 1;
	ck_assert_uint_eq(slot_maps(in, cur ^ 1), slot_maps(in, cur));
	slot_ids(in, cur ^ 1, twin);
	slot_ids(in, cur, now);
	for (m = 0; m < NG; m++) {
		if (now[m])
			ck_assert_uint_ne(twin[m], now[m]);
		made += twin[m] != 0;
	}
	ck_assert_uint_ge(made, 6);
	ck_assert_msg(dp_inst_install(in, cc2, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(inst_now(in).cur[0] & 1, cur ^ 1);
	slot_ids(in, cur ^ 1, now);
	for (m = 0; m < NG; m++)
		ck_assert_msg(now[m] == twin[m], "%s: map %u, the twin was %u", gen_outer[m],
			      now[m], twin[m]);
	send_listed(in, t2, 300);
	dp_inst_free(&in);

	/* a spare not kept: no twins */
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	dp_inst_set_spare_keep(in, 1);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	cur = inst_now(in).cur[0] & 1;
	ck_assert_uint_ne(slot_maps(in, cur), 0);
	ck_assert_uint_eq(slot_maps(in, cur ^ 1), 0);
	send_listed(in, t, 100);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	cp_compiled_free(&cc2);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/*
 * Interface entries across installs: a generation's slot is rewritten in
 * place, its interface hash emptied first (map_clear()). Rulesets that name
 * eth0, lo, then none, twice round: packets on each link, and on one the
 * ruleset never saw, are judged as the reference says (an entry left from
 * two installs before would give that generation's vector).
 */
START_TEST(t_ifs_reuse)
{
	static const char *const sets[] = {
		"-A INPUT -i eth0 -p udp -j DROP\n-A INPUT -p udp --dport 53 -j ACCEPT\n",
		"-A INPUT ! -i lo -p udp --dport 7 -j DROP\n-A INPUT -i lo -j ACCEPT\n"
		"-A INPUT -p udp -j DROP\n",
		"-A INPUT -p udp --dport 53 -j DROP\n",
	};
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (int k = 0; k < 6; k++) {
		struct strbuf sb = STRBUF_INIT;
		struct cp_compiled *cc = NULL;
		struct ipt_table *t;

		sb_addf(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
			":OUTPUT ACCEPT [0:0]\n%sCOMMIT\n", sets[k % 3]);
		t = parse(sb_str(&sb));
		sb_free(&sb);
		ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
		ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
		/* the running generation's hash holds this ruleset's entries only */
		{
			__u32 slot = inst_now(in).cur[0] & 1, id, n = 0;
			struct bpfipt_if_key key, *prev = NULL;
			int outer = inst_map(in, "bpfipt_ifs"), fd;

			ck_assert_int_eq(bpf_map_lookup_elem(outer, &slot, &id), 0);
			fd = bpf_map_get_fd_by_id(id);
			ck_assert_int_ge(fd, 0);
			for (; !bpf_map_get_next_key(fd, prev, &key); prev = &key)
				n++;
			ck_assert_uint_eq(n, cc->iif.n + cc->oif.n);
			close(fd);
			close(outer);
		}
		for (__u32 iif = 1; iif <= 3; iif++)
			for (int d = 0; d < 3; d++) {
				struct cp_packet p = {
					.saddr = inet_addr("192.0.2.1"), .daddr = inet_addr("10.0.0.1"),
					.proto = 17, .has_ports = true, .sport = 40000,
					.dport = (__u16[]){ 53, 7, 9 }[d], .len = 50, .iif = iif,
				};

				send_checked(in, t, &p);
			}
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	dp_inst_free(&in);
}
END_TEST

/*
 * The spare generation dropped (dp_inst_set_spare_keep(), the default for a
 * large ruleset): after the switch the generation left loses every map but its
 * tuple hash, it is settled by the same install (no BPFIPT_I_PENDING or _FOLD
 * left), what a run under way at the switch counted there still reaches the
 * running counters, and the next install builds the slot anew. With the default
 * threshold the same small ruleset keeps its spare.
 */
START_TEST(t_spare_drop)
{
	struct ipt_table *t = deny_ruleset(0), *t2 = deny_ruleset(2);
	struct cp_compiled *cc = NULL, *cc2 = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct bpfipt_inst iv;
	__u64 (*c)[2], (*c2)[2];
	unsigned int n, n2;
	__u32 *carry, *back;

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(cp_compile(t2, &env, &cc2, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	dp_inst_set_spare_keep(in, 1);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	for (int k = 0; k < 300; k++) {
		struct cp_packet p = {
			.saddr = k % 3 ? DENY(k < 3 ? 0 : rnd() % 3000) : inet_addr("192.168.7.7"),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = k % 3 == 1 ? 9 : 53, .len = 50,
		};

		send_checked(in, t, &p);
	}
	/* cc2's ids are cc's moved by 2 (its two rules in front), back again */
	carry = calloc(cc2->ncounters, sizeof(*carry));
	back = calloc(cc->ncounters, sizeof(*back));
	for (unsigned int i = 0; i < cc2->ncounters; i++)
		carry[i] = i < 2 ? BPFIPT_NO_COUNTER : i - 2 < cc->ncounters - BPFIPT_NCHAINS
			   ? i - 2 : i - cc2->ncounters + cc->ncounters;
	for (unsigned int i = 0; i < cc->ncounters; i++)
		back[i] = i < cc->ncounters - BPFIPT_NCHAINS ? i + 2
			  : i - cc->ncounters + cc2->ncounters;
	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	late_in = in;
	cp_point_hook = late_at_carry;
	ck_assert_msg(dp_inst_install(in, cc2, NULL, 0, carry, cc2->ncounters, &err) == 0, "%s",
		      err.msg);
	cp_point_hook = NULL;
	iv = inst_now(in);
	ck_assert_uint_eq(iv.flags & (BPFIPT_I_PENDING | BPFIPT_I_FOLD(0)), 0);
	ck_assert_uint_eq(slot_maps(in, iv.cur[0] & 1), GEN_ALL);
	ck_assert_uint_eq(slot_maps(in, (iv.cur[0] & 1) ^ 1) & ~GEN_TUPLE, 0);
	ck_assert_int_eq(dp_inst_counters(in, &c2, &n2, &err), 0);
	ck_assert_uint_eq(n2, cc2->ncounters);
	for (unsigned int i = 0; i < n2; i++) {
		__u32 o = carry[i];
		__u64 want = o == BPFIPT_NO_COUNTER ? 0 : c[o][0] + (o == 0 || o == 1500);
		__u64 wantb = o == BPFIPT_NO_COUNTER ? 0 : c[o][1] + (o == 0 ? 1234 : o == 1500 ? 4321 : 0);

		ck_assert_msg(c2[i][0] == want && c2[i][1] == wantb,
			      "counter %u: %llu/%llu, want %llu/%llu", i,
			      (unsigned long long)c2[i][0], (unsigned long long)c2[i][1],
			      (unsigned long long)want, (unsigned long long)wantb);
	}
	send_listed(in, t2, 300);
	/* back to cc: the dropped slot is built anew, the counters continue */
	free(c);
	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, back, cc->ncounters, &err) == 0, "%s",
		      err.msg);
	iv = inst_now(in);
	ck_assert_uint_eq(slot_maps(in, iv.cur[0] & 1), GEN_ALL);
	free(c2);
	ck_assert_int_eq(dp_inst_counters(in, &c2, &n2, &err), 0);
	for (unsigned int i = 0; i < n2; i++)
		ck_assert_msg(c2[i][0] == c[back[i]][0] && c2[i][1] == c[back[i]][1],
			      "counter %u: %llu, want %llu", i, (unsigned long long)c2[i][0],
			      (unsigned long long)c[back[i]][0]);
	for (int k = 0; k < 300; k++) {
		struct cp_packet p = {
			.saddr = k % 2 ? DENY(rnd() % 3000) : htonl(0xac1f0000u | (k % 40) << 8 | 5),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = k % 4 ? 53 : 7, .len = 50,
		};

		send_checked(in, t, &p);
	}
	/* the default threshold: this ruleset's spare stays, settled by the next
	 * command */
	dp_inst_set_spare_keep(in, 0);
	ck_assert_msg(dp_inst_install(in, cc2, NULL, 0, carry, cc2->ncounters, &err) == 0, "%s",
		      err.msg);
	iv = inst_now(in);
	ck_assert_uint_eq(slot_maps(in, (iv.cur[0] & 1) ^ 1), GEN_ALL);
	ck_assert(iv.flags & BPFIPT_I_PENDING);
	free(c);
	free(c2);
	free(carry);
	free(back);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	cp_compiled_free(&cc2);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/*
 * The field arrays (bpfipt_fields, 3.2 MB) only in a generation that reads them:
 * none for a deny list with -i and -d, nor for a chain the walk judges by its
 * addresses alone; one for a port, one for TCP flags tested in the slot prefix
 * by their vector; verdicts and counters as the reference's in each, and back
 * to the deny list (its slot keeps the port ruleset's arrays, unread).
 */
START_TEST(t_fields_when_needed)
{
#define HDR "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
	static const char *const texts[] = {
		HDR "-A INPUT -i lo -j ACCEPT\n-A INPUT -s 10.9.0.0/16 -j DROP\n"
		"-A INPUT -s 10.8.0.0/16 -j DROP\n-A INPUT -d 10.0.0.2 -j DROP\n"
		"-A OUTPUT -d 198.51.100.0/24 -j DROP\nCOMMIT\n",
		HDR "-A INPUT -s 10.9.0.0/16 -j DROP\n-A INPUT -p udp --dport 53 -j DROP\n"
		"COMMIT\n",
		HDR "-A INPUT -p tcp --tcp-flags SYN,ACK SYN -j DROP\n"
		"-A INPUT -s 10.9.0.0/16 -j DROP\nCOMMIT\n",
		NULL,	/* 24 rules of -s and -d: past the slot prefix */
	};
#undef HDR
	static const int order[] = { 0, 3, 1, 2, 0 };
	static const bool fields[] = { false, false, true, true };
	struct strbuf walk = STRBUF_INIT;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };

	sb_adds(&walk, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int u = 0; u < 24; u++)
		sb_addf(&walk, "-A INPUT -s 10.9.0.%u -d 10.0.0.%u -j %s\n", 2 * u + 1, 1 + u % 2,
			u % 3 ? "DROP" : "ACCEPT");
	sb_adds(&walk, "-A INPUT -d 10.0.0.2 -j DROP\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct ipt_table *t = parse(order[i] == 3 ? sb_str(&walk) : texts[order[i]]);
		struct cp_compiled *cc = NULL;
		struct bpfipt_inst iv;
		bool has;

		ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
		ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
		iv = inst_now(in);
		has = slot_maps(in, iv.cur[0] & 1) & (1u << 1);	/* bpfipt_fields */
		if (i < 4)
			ck_assert_msg(has == fields[i], "ruleset %u: field arrays %s", order[i],
				      has ? "made" : "missing");
		for (int k = 0; k < 64; k++) {
			struct cp_packet p = {
				.saddr = htonl((k & 1 ? 0x0a090000u : 0x0a070000u) | k),
				.daddr = inet_addr(k & 2 ? "10.0.0.1" : "10.0.0.2"),
				.proto = k & 4 ? IPPROTO_TCP : IPPROTO_UDP, .has_ports = true,
				.sport = 40000, .dport = k & 8 ? 53 : 54, .len = 50,
				.has_tcp = k & 4, .tcpflags = k & 16 ? 0x02 : 0x12,
			};

			send_checked(in, t, &p);
		}
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	sb_free(&walk);
	dp_inst_free(&in);
}
END_TEST

/* send_chain(), and how much the statistic FAST moved (1: judged before the walk) */
static __u64 send_fast(struct dp_inst *in, struct ipt_table *t, struct cp_packet *p, __u32 chain)
{
	__u64 st0[BPFIPT_ST_MAX], st1[BPFIPT_ST_MAX];
	struct ipt_err err = { 0 };

	ck_assert_int_eq(dp_inst_stats(in, st0, &err), 0);
	send_chain(in, t, p, chain);
	ck_assert_int_eq(dp_inst_stats(in, st1, &err), 0);
	return st1[BPFIPT_ST_FAST] - st0[BPFIPT_ST_FAST];
}

/* The reference evaluator on p in chain (its trace in *rt): the number of the
 * rule that counted the packet (-1: none, a policy), that rule's chain in *owner. */
static int ref_rule(struct ipt_table *t, __u32 chain, struct cp_packet *p, struct cp_trace *rt,
		    unsigned int *owner)
{
	int rule_no = -1;

	ck_assert_int_eq(cp_ref_eval(t, &env, chain, p, rt), 0);
	if (rt->ncounted)
		cp_counter_owner(t, rt->counted[0], owner, &rule_no);
	return rule_no;
}

/* p sent through chain: judged before the walk (the FAST statistic moved) exactly
 * when fast says so; rule_no (the reference's rule) for the message. */
static void check_fast(struct dp_inst *in, struct ipt_table *t, struct cp_packet *p, __u32 chain,
		       bool fast, int rule_no)
{
	__u64 moved = send_fast(in, t, p, chain);

	ck_assert_msg(moved == fast, "chain %u src %#x dst %#x proto %u dport %u (rule %d): judged %s",
		      chain, ntohl(p->saddr), ntohl(p->daddr), p->proto, p->dport, rule_no,
		      fast ? "by the walk" : "before the walk");
}

/* The ruleset in sb (freed) parsed, compiled and installed in a new instance
 * with the test program; its conf in *cf. */
/* INPUT: a list on -s at the top, then more rules (a hit is judged by the list, a
 * miss by the rules after it, as a slot prefix: a jump and its chain's rule too);
 * OUTPUT: only a list on -d, REJECT (hit and miss); FORWARD: only a list whose
 * rules also say -p udp --dport 53 (a miss only); a list after another rule is
 * not at the top (OUTPUT of the second ruleset). */
START_TEST(t_group_fast)
{
	static const __u32 chains[] = { BPFIPT_INPUT, BPFIPT_OUTPUT, BPFIPT_FORWARD };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nfast = 0;
	__u64 moved;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":U - [0:0]\n-A U -p tcp -j ACCEPT\n");
	for (unsigned int i = 0; i < 400; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A INPUT -s %s/32 -j DROP\n", inet_ntoa(a));
		sb_addf(&sb, "-A OUTPUT -d %s/%u -j REJECT\n", inet_ntoa(a), i % 10 ? 32 : 24);
		sb_addf(&sb, "-A FORWARD -s %s/32 -p udp --dport 53 -j DROP\n", inet_ntoa(a));
	}
	sb_adds(&sb, "-A INPUT -p udp --dport 7 -j ACCEPT\n-A INPUT -s 192.0.2.0/24 -j ACCEPT\n"
		"-A INPUT -j U\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], BPFIPT_FAST_HIT | 4u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT],
			  BPFIPT_FAST_DST | BPFIPT_FAST_HIT | BPFIPT_FAST_MISS);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], BPFIPT_FAST_MISS);
	for (int k = 0; k < 2400; k++) {
		unsigned int r = rnd() % 4, i = rnd() % 600, c = k % 3;
		bool listed = r != 0 && i < 400;
		struct cp_packet p = {
			.saddr = r == 0 ? inet_addr("192.0.2.1") : DENY(i),
			.daddr = r == 1 ? inet_addr("10.200.0.1")
				 : r == 2 ? (DENY(i) & htonl(0xffffff00)) | htonl(77) : DENY(i),
			.proto = 17, .has_ports = true, .sport = 40000,
			.dport = (unsigned int[]){ 9, 7, 53, 53 }[rnd() % 4], .len = 50,
		};
		bool fast = c == 0 || c == 1 || !listed;

		check_fast(in, t, &p, chains[c], fast, -1);
		nfast += fast;
	}
	ck_assert_uint_gt(nfast, 1000);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);

	/* not at the top: judged in the slot prefix; a LOG list: not judged by a
	 * list's search; a list after a jump: in the slot prefix too */
	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":U - [0:0]\n-A OUTPUT -p udp --dport 9 -j ACCEPT\n-A FORWARD -j U\n");
	for (unsigned int i = 0; i < 300; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A OUTPUT -d %s/32 -j DROP\n", inet_ntoa(a));
		sb_addf(&sb, "-A INPUT -s %s/32 -j LOG\n", inet_ntoa(a));
		sb_addf(&sb, "-A FORWARD -s %s/32 -j DROP\n", inet_ntoa(a));
	}
	sb_adds(&sb, "-A U -p udp --dport 53 -j DROP\nCOMMIT\n");
	t = install_text(&sb, &cc, &in, &cf);
	/* OUTPUT: its first rule and its list are a slot prefix (t_prefix) that
	 * reaches the policy; INPUT's LOG list is a group (its addresses are
	 * disjoint), a miss judged by the policy, a hit by the walk; FORWARD: the
	 * jump, U's rule and the list */
	for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++)
		ck_assert_msg(cf.fast[c] == (c == BPFIPT_OUTPUT ? 2u << 8 | BPFIPT_FAST_PFX_END
					     : c == BPFIPT_INPUT ? BPFIPT_FAST_MISS
								 : 3u << 8 | BPFIPT_FAST_PFX_END),
			      "chain %u: fast %#x", c, cf.fast[c]);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_FORWARD], 2, 0), BPFIPT_FAST_PFX_LIST);
	ck_assert_uint_eq(cf.pfx[BPFIPT_OUTPUT][0] >> 16 & 0xffff, 0xfff0 | BPFIPT_FAST_PFX_LIST);
	for (int k = 0; k < 600; k++) {
		unsigned int i = rnd() % 400;
		struct cp_packet p = {
			.saddr = DENY(i), .daddr = DENY(i), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = k & 1 ? 53 : 9, .len = 50,
		};

		moved = send_fast(in, t, &p, chains[k % 3]);
		ck_assert_uint_eq(moved, chains[k % 3] != BPFIPT_INPUT || i >= 300);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A tuple group at the top of INPUT whose rules each jump to a chain of their own
 * (kube-proxy's shape: an address and a port a service, a verdict map): the
 * fast path finds the rule without judging the packet, and the walk takes the
 * rule's counter from there (fast_tuple()'s t0ctr) and jumps. Packets that jump
 * and drop, jump and accept, come back to the rule after the group (odd chains
 * have no ACCEPT), or miss it, against the reference. */
START_TEST(t_tuple_vmap)
{
	static const unsigned int ports[] = { 53, 80, 443, 8080 };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < 40; i++)
		sb_addf(&sb, ":SVC-%02u - [0:0]\n", i);
	for (unsigned int i = 0; i < 40; i++)
		sb_addf(&sb, "-A INPUT -s 172.16.0.%u/32 -p udp --dport %u -j SVC-%02u\n", 1 + i,
			ports[i % 4], i);
	sb_adds(&sb, "-A INPUT -p udp --dport 53 -j ACCEPT\n");
	for (unsigned int i = 0; i < 40; i++) {
		sb_addf(&sb, "-A SVC-%02u -p udp --sport %u -j DROP\n", i, 1000 + i);
		if (i % 2 == 0)
			sb_addf(&sb, "-A SVC-%02u -j ACCEPT\n", i);
	}
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cc->slots[BPFIPT_INPUT][0].xflags,
			  BPFIPT_X_GROUP_TUPLE | BPFIPT_X_VMAP);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT] & (BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT),
			  BPFIPT_FAST_TUPLE);
	for (unsigned int k = 0; k < 600; k++) {
		unsigned int i = k < 40 ? k : rnd() % 48;
		struct cp_packet p = {
			.saddr = htonl(0xac100001u + i), .daddr = inet_addr("10.1.0.1"),
			.proto = 17, .has_ports = true, .sport = rnd() % 2 ? 1000 + i : 40000,
			.dport = rnd() % 4 ? ports[i % 4] : 53, .len = 50,
		};

		send_checked(in, t, &p);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* INPUT begins with three rules of one field each (-s, -p, -s with REJECT) and
 * one of three (-p udp --dport 53: the protocol and both ports), then the mixed
 * rules of four, which the walk tests (a prefix the walk follows has at most
 * BPFIPT_FAST_PFX_OPEN rules); OUTPUT with -m
 * length and -p, then only its policy; FORWARD with an ACCEPT of no field at
 * all, which every packet takes there. A packet that one of the prefix's rules
 * matches is judged by it (BPFIPT_ST_FAST), the others walk from the first rule
 * after the prefix, but in OUTPUT, where the policy follows the prefix, the
 * policy judges them. */
START_TEST(t_prefix)
{
	static const __u32 chains[] = { BPFIPT_INPUT, BPFIPT_OUTPUT, BPFIPT_FORWARD };
	static const char *const srcs[] = { "192.0.2.5", "198.51.100.7", "10.9.9.9", NULL };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nfast = 0, nwalk = 0;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -s 192.0.2.0/24 -j ACCEPT\n-A INPUT -p tcp -j ACCEPT\n"
		"-A INPUT -s 198.51.100.7 -j REJECT\n-A INPUT -p udp --dport 53 -j ACCEPT\n"
		"-A OUTPUT -m length --length 60:100 -j DROP\n-A OUTPUT -p tcp -j DROP\n"
		"-A FORWARD -j ACCEPT\n");
	for (unsigned int i = 0; i < 1000; i++)
		rule(&sb, "INPUT", i);
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	/* a slot's fields: 4 bits each, BPFIPT_FAST_PFX_NONE after the last */
#define ONE(f) (0xfff0ULL | (f))
#define AT(j, x) ((__u64)(x) << (4 * BPFIPT_FAST_PFX_FIELDS * (j)))
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELDS, 4);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_PER_WORD, 4);
	/* INPUT: the four rules, the most a prefix the walk follows has
	 * (BPFIPT_FAST_PFX_OPEN; the mixed rules after them have four fields) */
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 4u << 8);
	/* -p udp --dport 53: the protocol and its port as one range (the vectors
	 * say both ports: a packet without ports matches no port rule, and has
	 * neither) */
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][0], AT(0, ONE(BPFIPT_F_SRC)) | AT(1, ONE(BPFIPT_F_PROTO)) |
			  AT(2, ONE(BPFIPT_F_SRC)) | AT(3, ONE(BPFIPT_FAST_PFX_PDPORT)));
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][1], 0);
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][2], 0);
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][3], 0);
	/* OUTPUT: the two rules and the policy, nothing else: every packet judged
	 * before the walk (BPFIPT_FAST_PFX_END) */
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT], 2u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.pfx[BPFIPT_OUTPUT][0], AT(0, ONE(BPFIPT_F_LEN)) | AT(1, ONE(BPFIPT_F_PROTO)));
	ck_assert_uint_eq(cf.pfx[BPFIPT_OUTPUT][1], 0);
	/* ranges decide the sources, protocols and ports (pfx_direct), not -m length */
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_INPUT][0], 0x1111);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][0], 0xc0000200);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 0), 0xc00002ff);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][4], 6);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 4), 6);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][8], 0xc6336407);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 8), 0xc6336407);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][12], 17u << 17 | 53);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 12), 17u << 17 | 53);
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_OUTPUT][0], 0x10);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 1u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.pfx[BPFIPT_FORWARD][0], AT(0, 0xffff));
#undef ONE
#undef AT
	for (int k = 0; k < 2400; k++) {
		unsigned int c = k % 3, s = rnd() % 4, i = rnd() % 1000, chain;
		bool tcp = rnd() % 3 == 0;
		int rule_no = -1;
		struct cp_trace rt;
		struct cp_packet p = {
			.saddr = srcs[s] ? inet_addr(srcs[s]) :
				 htonl(172u << 24 | (16 + i % 1021 / 256) << 16 | (i % 1021 % 256) << 8 | 1),
			.daddr = inet_addr("10.0.0.1"),
			.proto = tcp ? 6 : 17, .has_ports = true, .sport = 40000,
			.dport = rnd() % 2 ? 53 : 1024 + i % 509, .len = 50,
			.has_tcp = tcp, .tcpflags = 0x10,
		};
		bool fast;

		rule_no = ref_rule(t, chains[c], &p, &rt, &chain);
		/* judged by a prefix rule: INPUT 0-3; OUTPUT: all (its rules or its
		 * policy); FORWARD: all (its ACCEPT) */
		fast = c != 0 || (rule_no >= 0 && rule_no < 4);
		check_fast(in, t, &p, chains[c], fast, rule_no);
		nfast += fast;
		nwalk += !fast;
	}
	ck_assert_uint_gt(nfast, 500);
	ck_assert_uint_gt(nwalk, 100);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A prefix the walk follows keeps only the broad rules at the top of its chain: a
 * rule of BPFIPT_FAST_PFX_FIELDS fields (-s, -p and both ports, one of many unlike
 * rules) ends it, since every walking packet would test it. INPUT: -p tcp and -s
 * NET, then the mixed rules (four fields each): a prefix of two. OUTPUT: the mixed
 * rules from the top: no prefix. FORWARD: five mixed rules and the policy: a prefix
 * that reaches the policy keeps rules of four fields. Verdicts, counters and the
 * FAST statistic as the reference says. */
START_TEST(t_prefix_open)
{
	static const __u32 chains[] = { BPFIPT_INPUT, BPFIPT_OUTPUT, BPFIPT_FORWARD };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nfast = 0, nwalk = 0;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -p tcp -j ACCEPT\n-A INPUT -s 192.0.2.0/24 -j ACCEPT\n");
	for (unsigned int i = 0; i < 300; i++) {
		rule(&sb, "INPUT", i);
		rule(&sb, "OUTPUT", i);
	}
	for (unsigned int i = 0; i < 5; i++)
		rule(&sb, "FORWARD", i);
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 2u << 8);
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][0] >> (4 * BPFIPT_FAST_PFX_FIELDS * 2), 0);
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_INPUT][0] >> (BPFIPT_FAST_PFX_FIELDS * 2), 0);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT] >> 8 & 31, 0);
	ck_assert_uint_eq(cf.pfx[BPFIPT_OUTPUT][0], 0);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 5u << 8 | BPFIPT_FAST_PFX_END);
	for (int k = 0; k < 1500; k++) {
		unsigned int c = k % 3, i = rnd() % 300, chain;
		bool tcp = rnd() % 3 == 0, net = rnd() % 4 == 0;
		int rule_no = -1;
		struct cp_trace rt;
		struct cp_packet p = {
			.saddr = net ? inet_addr("192.0.2.9") :
				 htonl(172u << 24 | (16 + i % 1021 / 256) << 16 | (i % 1021 % 256) << 8 | 1),
			.daddr = inet_addr("10.0.0.1"),
			.proto = tcp ? 6 : 17, .has_ports = true, .sport = 40000,
			.dport = 1024 + i % 509, .len = 50, .has_tcp = tcp, .tcpflags = 0x10,
		};
		bool fast;

		rule_no = ref_rule(t, chains[c], &p, &rt, &chain);
		/* judged by the prefix: INPUT's two rules; FORWARD: all */
		fast = c == 2 || (c == 0 && rule_no >= 0 && rule_no < 2);
		check_fast(in, t, &p, chains[c], fast, rule_no);
		nfast += fast;
		nwalk += !fast;
	}
	ck_assert_uint_gt(nfast, 400);
	ck_assert_uint_gt(nwalk, 400);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A host's firewall (policy DROP): --ctstate RELATED,ESTABLISHED -j ACCEPT,
 * -i lo -j ACCEPT, --ctstate INVALID -j DROP, a deny list of 300 sources, then
 * ICMP echo, tcp 22, 80, 443 and udp 53 accepted: a slot prefix of nine rules
 * (the states and lo decided by a range of the packet's, the list by its search) that
 * reaches the policy (lo: a compare of the ifindex). New flows from listed and
 * other sources to open and closed ports, on eth0 and lo, and the replies to the
 * accepted ones (ESTABLISHED, through the
 * data plane's conntrack): every packet judged by the prefix (BPFIPT_ST_FAST),
 * verdicts and counters as the reference's. */
START_TEST(t_prefix_host)
{
	static const __u16 dports[] = { 22, 53, 9999 };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nest = 0, nlisted = 0;
	__u64 moved;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A INPUT -i lo -j ACCEPT\n-A INPUT -m conntrack --ctstate INVALID -j DROP\n");
	for (unsigned int i = 0; i < 300; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A INPUT -s %s/32 -j DROP\n", inet_ntoa(a));
	}
	sb_adds(&sb, "-A INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT\n"
		"-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
		"-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n"
		"-A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n"
		"-A INPUT -p udp -m udp --dport 53 -j ACCEPT\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 9u << 8 | BPFIPT_FAST_PFX_END);
	/* the states and lo: ranges of the packet's; the list: its search */
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_INPUT][0] & 0xfff, 0x111);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][4], 1);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 4), 1);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][0], BPFIPT_CT_ESTABLISHED);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 0), BPFIPT_CT_RELATED);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][8], BPFIPT_CT_INVALID);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 8), BPFIPT_CT_INVALID);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 3, 0), BPFIPT_FAST_PFX_LIST);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 3, 1), BPFIPT_FAST_PFX_NONE);
	for (unsigned int k = 0; k < 1500; k++) {
		unsigned int i = rnd() % 400, iif = rnd() % 8 ? 2 : 1;
		__u16 dport = dports[rnd() % 3];
		bool tcp = dport == 22, listed = i < 300;
		bool open = iif == 1 || (!listed && dport != 9999);
		struct cp_packet p = {
			.saddr = DENY(i), .daddr = inet_addr("192.0.2.1"), .proto = tcp ? 6 : 17,
			.has_ports = true, .sport = 20000 + k, .dport = dport, .len = 50,
			.has_tcp = tcp, .tcpflags = 0x02, .iif = iif,
			.ctstate = BPFIPT_CT_NEW, .has_ct = true,
		};

		for (int reply = 0; reply <= open; reply++) {
			if (reply) {	/* the answer: ESTABLISHED */
				p.saddr = p.daddr;
				p.daddr = DENY(i);
				p.sport = dport;
				p.dport = 20000 + k;
				p.tcpflags = 0x12;
				p.ctstate = BPFIPT_CT_ESTABLISHED;
				p.ctdir = 1;
			}
			moved = send_fast(in, t, &p, BPFIPT_INPUT);
			ck_assert_msg(moved == 1,
				      "src %#x dport %u reply %d: judged by the walk",
				      ntohl(p.saddr), p.dport, reply);
			nest += reply;
		}
		nlisted += listed;
	}
	ck_assert_uint_gt(nest, 150);
	ck_assert_uint_gt(nlisted, 800);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Tuple groups (bpfipt.h, "A tuple group") on real packets: INPUT, 5 000 rules
 * alike but for -s /24 and --dport (a tuple repeated in the middle: the first
 * rule counts), then a rule and a jump to svc (also reached from FORWARD): 4 200
 * rules alike but for -d, --sport and --dport, REJECT. OUTPUT: only a run of
 * 4 100 alike but for -d and --dport, policy DROP. Hits, sources and ports of
 * the runs in no one rule, fragments; verdicts and counters against the
 * reference; INPUT's hits and every OUTPUT packet judged by the search alone
 * (BPFIPT_FAST_TUPLE), INPUT's other packets by the slot prefix that follows the
 * search: the rule after the run, the jump and svc's group (its hash searched
 * there), the policy; FORWARD's by its prefix too (the jump, svc's group, the
 * ACCEPT every packet takes). */
/* a rule of five fields (the source, the destination, the protocol with its
 * destination port, the source port, the length), which the slot prefix does
 * not take (loader.c pfx_rule()) and no packet of these tests matches */
#define FIVE_FIELDS	"-s 198.18.0.0/16 -d 198.19.0.0/16 -p udp --sport 1 --dport 2 " \
			"-m length --length 20:1500 -j DROP"
#define TP_SRC(i)	htonl(172u << 24 | (16 + (i) % 1021 / 256) << 16 | ((i) % 1021 % 256) << 8)
#define TP_DST(i)	htonl(10u << 24 | 20u << 16 | ((i) % 3001 / 256) << 8 | (i) % 3001 % 256)

/* n rules of a tuple run in chain: -s TP_SRC(i)/24 (src) or -d TP_DST(i), then
 * -p proto --dport base + i % mod -j target. */
static void tp_run(struct strbuf *sb, const char *chain, unsigned int n, bool src,
		   const char *proto, unsigned int base, unsigned int mod, const char *target)
{
	for (unsigned int i = 0; i < n; i++) {
		struct in_addr a = { src ? TP_SRC(i) : TP_DST(i) };

		sb_addf(sb, "-A %s %s %s%s -p %s --dport %u -j %s\n", chain, src ? "-s" : "-d",
			inet_ntoa(a), src ? "/24" : "", proto, base + i % mod, target);
	}
}

/* t_tuple's runs at the bounds of their keys (bpfipt_tfast.lo, span): INPUT's
 * sources 172.16.0.0/24 .. 172.19.252.0/24 and ports 1024 .. 1532, OUTPUT's
 * destinations 10.20.0.0 .. 10.20.11.184 and ports 1 .. 1000; each value just
 * outside, the first and the last inside, hits among them (172.19.252.255 is
 * in the last /24: rule 1020's, port 1026; rule 508 has port 1532, OUTPUT's
 * rule 999 port 1000). A packet outside is judged without the hash: verdict
 * and counters as the reference's. */
static void tp_bounds(struct dp_inst *in, struct ipt_table *t, const struct bpfipt_conf *cf)
{
	static const __u32 src[] = { 0xac0fffff, 0xac100000, 0xac100007, 0xac11fc07, 0xac13fcff,
				     0xac13fd00 };
	static const __u32 sport[] = { 1023, 1024, 1026, 1532, 1533 };
	static const __u32 dst[] = { 0x0a13ffff, 0x0a140000, 0x0a1403e7, 0x0a140bb8, 0x0a140bb9 };
	static const __u32 dport[] = { 0, 1, 1000, 1001 };
	const struct bpfipt_tfast *ti = &cf->tfast[BPFIPT_INPUT], *to = &cf->tfast[BPFIPT_OUTPUT];
	unsigned int hits = 0;

	ck_assert_uint_eq(ti->lo[BPFIPT_TB_SRC], 0xac100000);
	ck_assert_uint_eq(ti->span[BPFIPT_TB_SRC], 0xac13fcff - 0xac100000);
	ck_assert_uint_eq(ti->lo[BPFIPT_TB_DPORT], 1024);
	ck_assert_uint_eq(ti->span[BPFIPT_TB_DPORT], 508);
	ck_assert_uint_eq(ti->span[BPFIPT_TB_DST], ~0u);
	ck_assert_uint_eq(ti->span[BPFIPT_TB_SPORT], ~0u);
	ck_assert_uint_eq(to->lo[BPFIPT_TB_DST], 0x0a140000);
	ck_assert_uint_eq(to->span[BPFIPT_TB_DST], 3000);
	for (unsigned int i = 0; i < 6 * 5 + 5 * 4; i++) {
		bool out = i >= 6 * 5;
		struct cp_packet p = {
			.saddr = htonl(out ? 0x0a010002 : src[i / 5]),
			.daddr = htonl(out ? dst[(i - 30) / 4] : 0x0a000001),
			.proto = out ? 6 : 17, .has_tcp = out, .tcpflags = 0x02, .has_ports = true,
			.sport = 40000, .dport = out ? dport[(i - 30) % 4] : sport[i % 5], .len = 50,
		};
		__u32 chain = out ? BPFIPT_OUTPUT : BPFIPT_INPUT;
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no = ref_rule(t, chain, &p, &rt, &owner);

		hits += out ? rt.verdict == BPFIPT_V_ACCEPT : rt.verdict == BPFIPT_V_DROP &&
			rule_no >= 0 && rule_no < 5000;
		check_fast(in, t, &p, chain, true, rule_no);
	}
	/* 172.16.0.0 and .7 on 1024, 172.17.252.7 on 1532 and 1026 (rule 1529),
	 * 172.19.252.255 on 1026; OUTPUT's 10.20.0.0 and 10.20.11.184 on 1,
	 * 10.20.3.231 on 1000 and 1 (rule 4000) */
	ck_assert_uint_eq(hits, 9);
}

/* The running generation's bitmap (bpfipt_tbits), mapped read-only (length
 * BPFIPT_TBITS_WORDS * 8); *fd to close. */
static __u64 *tbits_map(const struct dp_inst *in, int *fd)
{
	int ifd = inst_map(in, "bpfipt_inst"), ofd = inst_map(in, "bpfipt_tbits");
	struct bpfipt_inst iv;
	__u32 zero = 0, cur, id;
	__u64 *w;

	ck_assert_int_eq(bpf_map_lookup_elem(ifd, &zero, &iv), 0);
	cur = iv.cur[0];
	ck_assert_int_eq(bpf_map_lookup_elem(ofd, &cur, &id), 0);
	*fd = bpf_map_get_fd_by_id(id);
	ck_assert_int_ge(*fd, 0);
	w = mmap(NULL, (size_t)BPFIPT_TBITS_WORDS * 8, PROT_READ, MAP_SHARED, *fd, 0);
	ck_assert(w != MAP_FAILED);
	close(ofd);
	close(ifd);
	return w;
}

static size_t tbits_count(const __u64 *w)
{
	size_t set = 0;

	for (__u32 i = 0; i < BPFIPT_TBITS_WORDS; i++)
		set += (size_t)__builtin_popcountll(w[i]);
	return set;
}

/* The running generation's tuple bitmap (bpfipt.h): written (BPFIPT_C_TBITS),
 * the bit of each of cc's keys set, and not much more than one bit a key. */
static void tbits_check(const struct dp_inst *in, const struct cp_compiled *cc,
			const struct bpfipt_conf *cf)
{
	size_t set;
	__u64 *w;
	int fd;

	ck_assert(cf->flags & BPFIPT_C_TBITS);
	w = tbits_map(in, &fd);
	for (__u32 i = 0; i < cc->ntuples; i++) {
		struct bpfipt_tuple_key k = {
			.group = cc->tuples[i].k.group, .src = cc->tuples[i].k.src[0],
			.dst = cc->tuples[i].k.dst[0], .sport = cc->tuples[i].k.sport,
			.dport = cc->tuples[i].k.dport, .proto = cc->tuples[i].k.proto,
		};
		__u32 b = bpfipt_tbit(&k);

		ck_assert_msg((w[b / 64] >> (b % 64)) & 1, "tuple %u: bit %u clear", i, b);
	}
	set = tbits_count(w);
	ck_assert_uint_le(set, cc->ntuples);
	ck_assert_uint_ge(set, cc->ntuples * 9 / 10);
	munmap(w, (size_t)BPFIPT_TBITS_WORDS * 8);
	close(fd);
}

/* The filter of chain c's folded list on field d (bpfipt_gprefix()): its levels
 * are g1 (the shortest prefix) and g2 (0: none), and the bit of every prefix's
 * block on its level is set in the running generation's bitmap; the list's
 * prefixes, returned. */
static unsigned int gbits_check(const struct dp_inst *in, const struct cp_compiled *cc,
				const struct bpfipt_conf *cf, __u32 c, __u32 d, unsigned int g1,
				unsigned int g2)
{
	const struct cp_lpm *l = d ? &cc->group_dst : &cc->group_src;
	__u32 grp = cc->slots[c][cf->gfold[c][d] - 1].group;
	unsigned int n = 0, n2 = 0;
	__u64 *w;
	int fd;

	ck_assert(cf->flags & BPFIPT_C_TBITS);
	ck_assert_uint_eq(cf->gfold_g[c][d][0], g1);
	ck_assert_uint_eq(cf->gfold_g[c][d][1], g2);
	w = tbits_map(in, &fd);
	for (unsigned int i = 0; i < l->n; i++) {
		__u64 bit;
		__u32 word;

		if (l->e[i].key != grp)
			continue;
		bpfipt_gprefix(cf->gfold_set[c][d], g1, g2, l->e[i].plen,
			       (__u64)ntohl(l->e[i].addr) << 32, 0, &word, &bit);
		ck_assert_uint_ge(l->e[i].plen, g1);
		ck_assert_msg(w[word] & bit, "chain %u list %u: prefix %u: word %u bit %#llx clear",
			      c, d, i, word, (unsigned long long)bit);
		n++;
		n2 += g2 && l->e[i].plen >= g2;
	}
	ck_assert_uint_gt(n, 0);
	ck_assert(!g2 || (n2 > 0 && n2 < n));	/* both levels hold prefixes */
	munmap(w, (size_t)BPFIPT_TBITS_WORDS * 8);
	close(fd);
	return n;
}

/* The folded lists' filters (bpfipt_conf.gfold_g, bpfipt_ghash()). INPUT's
 * slot prefix jumps to f2b, a list of 300 sources (/32s, every tenth a /24,
 * every fiftieth a /20: levels 20 and 24), then RETURNs; FORWARD walks to its list of the
 * same sources after a rule of five fields; OUTPUT begins with a list of 200
 * destinations, /32s (g 32), judged by its search alone. Every list's blocks
 * have their bits, and no more bits are set than the lists have prefixes.
 * Packets from listed addresses, from addresses near them (in a listed block
 * and not listed, or in a listed /24) and far from them: verdicts and counters
 * against the reference. */
START_TEST(t_fold_filter)
{
	static const __u32 chains[] = { BPFIPT_INPUT, BPFIPT_FORWARD, BPFIPT_OUTPUT };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int n = 0, hits = 0, near = 0;
	__u64 *w;
	int fd;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":f2b - [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -p udp -j f2b\n"
		"-A INPUT -p udp --dport 53 -j ACCEPT\n"
		"-A FORWARD -s 10.0.0.0/8 -d 10.0.0.0/8 -p udp --sport 40000 --dport 8 "
		"-m length --length 20:1500 -j ACCEPT\n");
	for (unsigned int i = 0; i < 300; i++) {
		unsigned int plen = i % 50 == 0 ? 20 : i % 10 == 0 ? 24 : 32;
		struct in_addr a = { DENY(i) & htonl(~0u << (32 - plen)) };

		sb_addf(&sb, "-A f2b -s %s/%u -j REJECT\n", inet_ntoa(a), plen);
		sb_addf(&sb, "-A FORWARD -s %s/%u -j DROP\n", inet_ntoa(a), plen);
		if (i < 200)
			sb_addf(&sb, "-A OUTPUT -d %s/32 -j DROP\n", inet_ntoa(a));
	}
	sb_adds(&sb, "-A f2b -j RETURN\n-A FORWARD -p udp --dport 9 -j DROP\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 2, 0), BPFIPT_FAST_PFX_LIST);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD] & 0xff, 0);
	ck_assert(cf.fast[BPFIPT_OUTPUT] & BPFIPT_FAST_HIT);
	n += gbits_check(in, cc, &cf, BPFIPT_INPUT, 0, 20, 24);
	n += gbits_check(in, cc, &cf, BPFIPT_FORWARD, 0, 20, 24);
	n += gbits_check(in, cc, &cf, BPFIPT_OUTPUT, 1, 32, 0);
	ck_assert_uint_eq(n, 300 + 300 + 200);
	w = tbits_map(in, &fd);
	ck_assert_uint_le(tbits_count(w), n);
	munmap(w, (size_t)BPFIPT_TBITS_WORDS * 8);
	close(fd);
	for (int k = 0; k < 6000; k++) {
		unsigned int i = rnd() % 400, kind = rnd() % 3, c = k % 3;
		__be32 a = kind == 0 ? DENY(i)
			   : kind == 1 ? (DENY(i) & htonl(0xfffff000)) | htonl(rnd() % 4096)
				       : htonl(0xac100000u | (rnd() & 0xfffff));
		struct cp_packet p = {
			.saddr = c == 2 ? inet_addr("10.0.0.1") : a,
			.daddr = c == 2 ? a : inet_addr("10.0.0.1"), .proto = 17,
			.has_ports = true, .sport = 40000, .dport = (unsigned int[]){ 8, 9, 53 }[rnd() % 3],
			.len = 50, .iif = 2,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no = ref_rule(t, chains[c], &p, &rt, &owner);

		send_chain(in, t, &p, chains[c]);
		hits += rule_no >= 0 && owner != 0 && kind != 0;
		near += kind == 1 && rule_no < 0;
	}
	ck_assert_uint_gt(hits, 100);	/* near ones that a /24 or /20 holds */
	ck_assert_uint_gt(near, 100);	/* ... and that no prefix holds */
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

START_TEST(t_tuple)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int hits = 0, nfast = 0;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n"
		":svc - [0:0]\n");
	tp_run(&sb, "OUTPUT", 4100, false, "tcp", 1, 1000, "ACCEPT");
	for (unsigned int i = 0; i < 5000; i++) {
		unsigned int k = i == 2500 ? 10 : i;
		struct in_addr a = { TP_SRC(k) };

		sb_addf(&sb, "-A INPUT -s %s/24 -p udp --dport %u -j DROP\n", inet_ntoa(a),
			1024 + k % 509);
	}
	sb_adds(&sb, "-A INPUT -p udp --dport 1030 -j DROP\n-A INPUT -p tcp -j svc\n"
		"-A FORWARD -j svc\n-A FORWARD -j ACCEPT\n");
	for (unsigned int i = 0; i < 4200; i++) {
		struct in_addr a = { TP_DST(i) };

		sb_addf(&sb, "-A svc -d %s -p tcp --sport %u --dport %u -j REJECT "
			"--reject-with tcp-reset\n", inet_ntoa(a), 2000 + i % 7, 80 + i % 601);
	}
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cc->ntgroups, 3);
	ck_assert_uint_eq(cc->ntuples, 4999 + 4200 + 4100);
	tbits_check(in, cc, &cf);
	/* INPUT: the run, then -p udp --dport 1030, the jump (-p tcp) and svc's
	 * group (slot 4, after the policy) as a slot prefix that reaches the
	 * policy; a packet the jump does not take skips the group */
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | 3u << 8 |
			  BPFIPT_FAST_PFX_END);
	/* the group after its keys' narrowest bound, a range: svc's addresses
	 * (3 001 of 2^32; its source ports are 7 of 2^17) */
	ck_assert_uint_eq(cf.pfx[BPFIPT_INPUT][0],
			  (0xff00ULL | BPFIPT_FAST_PFX_TUPLE << 4 | BPFIPT_F_DST) << 32 |
			  (0xfff0ULL | BPFIPT_F_PROTO) << 16 | 0xfff0 | BPFIPT_FAST_PFX_PDPORT);
	ck_assert(cf.pfx_direct[BPFIPT_INPUT][0] & 1ULL << (2 * BPFIPT_FAST_PFX_FIELDS));
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][2 * BPFIPT_FAST_PFX_FIELDS], ntohl(TP_DST(0)));
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][2 * BPFIPT_FAST_PFX_FIELDS], 3000);
	ck_assert_uint_eq(cf.pfx_slot[BPFIPT_INPUT][1], 2);
	ck_assert_uint_eq(cf.pfx_slot[BPFIPT_INPUT][2], 4);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][1][0], 1u << 2);
	ck_assert_uint_eq(cf.pfx_cont[BPFIPT_INPUT], 1u << 1);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT],
			  BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | BPFIPT_FAST_MISS);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 3u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cc->nslots[BPFIPT_INPUT], 3 + 1 + 1 + 1);
	ck_assert_uint_eq(cf.ntuple, cc->ntuples);
	for (int k = 0; k < 3000; k++) {
		unsigned int i = rnd() % 5000, j = rnd() % 5000, kind = rnd() % 8;
		struct cp_packet p = {
			.saddr = TP_SRC(i) | htonl(rnd() % 256), .daddr = inet_addr("10.0.0.1"),
			.proto = 17, .has_ports = true, .sport = 40000, .dport = 1024 + i % 509,
			.len = 50,
		};
		__u32 chain = BPFIPT_INPUT;
		struct cp_trace rt;
		unsigned int owner;
		int rule_no = -1;
		bool fast;

		if (kind == 1)		/* a source and a port of the run */
			p.dport = 1024 + j % 509;
		if (kind == 2) {	/* a fragment */
			p.has_ports = false;
			p.nonfirst_frag = true;
		}
		if (kind >= 5) {	/* svc, from INPUT or FORWARD */
			i %= 4200;
			j %= 4200;
			p.proto = 6;
			p.has_tcp = true;
			p.tcpflags = 0x02;
			p.daddr = TP_DST(i);
			p.sport = 2000 + (kind == 6 ? j : i) % 7;
			p.dport = 80 + i % 601;
			chain = kind == 7 ? BPFIPT_FORWARD : BPFIPT_INPUT;
			if (k % 5 == 0) {	/* OUTPUT's run: 4100 destinations */
				chain = BPFIPT_OUTPUT;
				p.daddr = TP_DST(rnd() % 4100);
				p.dport = 1 + rnd() % 1000;
			}
		}
		rule_no = ref_rule(t, chain, &p, &rt, &owner);
		hits += rt.verdict == BPFIPT_V_DROP || rt.verdict == BPFIPT_V_REJECT ||
			(chain == BPFIPT_OUTPUT && rt.verdict == BPFIPT_V_ACCEPT);
		/* every packet: the searches and the prefixes */
		fast = true;
		check_fast(in, t, &p, chain, fast, rule_no);
		nfast += fast;
	}
	ck_assert_uint_gt(nfast, 600);
	ck_assert_uint_gt(hits, 1000);
	tp_bounds(in, t, &cf);
	/* svc's group in INPUT's prefix, behind its range 10.20.0.0 .. 10.20.11.184:
	 * each address just outside, the first and the last inside, with the ports
	 * of rule 0 (and 3 001) and of rule 3 000: the two inside rejected there */
	hits = 0;
	for (unsigned int i = 0; i < 2 * 4; i++) {
		static const __u32 dst[] = { 0x0a13ffff, 0x0a140000, 0x0a140bb8, 0x0a140bb9 };
		struct cp_packet p = {
			.saddr = inet_addr("10.1.0.2"), .daddr = htonl(dst[i % 4]), .proto = 6,
			.has_tcp = true, .tcpflags = 0x02, .has_ports = true,
			.sport = i < 4 ? 2000 : 2000 + 3000 % 7, .dport = i < 4 ? 80 : 80 + 3000 % 601,
			.len = 50,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no = ref_rule(t, BPFIPT_INPUT, &p, &rt, &owner);

		hits += rt.verdict == BPFIPT_V_REJECT;
		check_fast(in, t, &p, BPFIPT_INPUT, true, rule_no);
	}
	ck_assert_uint_eq(hits, 2);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* The slot prefix after a tuple group: OUTPUT is a run of 200 (-d, --dport),
 * -p udp --dport 53 ACCEPT, -d 10.9.0.0/16 REJECT and its policy DROP: every
 * packet judged before the walk (the search, a prefix rule or the policy,
 * BPFIPT_FAST_PFX_END); INPUT is a run of 100 (-s /24, --dport), -p udp ACCEPT,
 * then a jump to a chain that logs and has a rule the prefix cannot take, and -p
 * tcp ACCEPT: a packet that neither the run nor the udp rule takes walks from the
 * jump. Verdicts and counters against the reference. */
START_TEST(t_tuple_prefix)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nfast = 0, nwalk = 0, npfx = 0;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n"
		":logged - [0:0]\n");
	tp_run(&sb, "OUTPUT", 200, false, "tcp", 1, 50, "ACCEPT");
	sb_adds(&sb, "-A OUTPUT -p udp --dport 53 -j ACCEPT\n"
		"-A OUTPUT -d 10.9.0.0/16 -j REJECT\n");
	tp_run(&sb, "INPUT", 100, true, "tcp", 1024, 509, "DROP");
	sb_adds(&sb, "-A INPUT -p udp -j ACCEPT\n-A INPUT -j logged\n-A INPUT -p tcp -j ACCEPT\n"
		"-A logged -j LOG\n-A logged " FIVE_FIELDS "\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cc->ntgroups, 2);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT], BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | 2u << 8 |
			  BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | 1u << 8);
	for (int k = 0; k < 2000; k++) {
		unsigned int i = rnd() % 200, kind = rnd() % 6;
		bool out = k % 2;
		struct cp_packet p = {
			.saddr = TP_SRC(i % 100) | htonl(rnd() % 256), .daddr = TP_DST(i),
			.proto = kind < 3 ? 6 : 17, .has_ports = true, .sport = 40000,
			.dport = out ? 1 + i % 50 : 1024 + i % 100 % 509, .len = 50,
			.has_tcp = kind < 3, .tcpflags = 0x10,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no = -1;
		bool fast;

		if (kind == 1)		/* an address and a port of the run, not one rule's */
			p.dport = out ? 1 + rnd() % 50 : 1024 + rnd() % 100;
		if (kind == 2 && out)	/* the REJECT rule's network */
			p.daddr = inet_addr("10.9.3.4");
		if (kind == 3)		/* the prefix's udp rule (OUTPUT: port 53) */
			p.dport = 53;
		if (kind == 4)		/* a fragment: no ports, no entry in the runs */
			p.has_ports = false, p.nonfirst_frag = true;
		rule_no = ref_rule(t, out ? BPFIPT_OUTPUT : BPFIPT_INPUT, &p, &rt, &owner);
		/* OUTPUT: all; INPUT: the run's and the udp rule's (a udp fragment too) */
		fast = out || (rule_no >= 0 && rule_no <= 100);
		check_fast(in, t, &p, out ? BPFIPT_OUTPUT : BPFIPT_INPUT, fast, rule_no);
		nfast += fast;
		nwalk += !fast;
		npfx += fast && rule_no >= (out ? 200 : 100);
	}
	ck_assert_uint_gt(nfast, 500);
	ck_assert_uint_gt(nwalk, 100);
	ck_assert_uint_gt(npfx, 300);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Word w of generation cur's pool entry e (page e / BPFIPT_PAGE_CHUNKS). */
static __u64 pool_word(const struct dp_inst *in, __u32 cur, __u32 e, __u32 w)
{
	int ofd = inst_map(in, "bpfipt_pages"), fd;
	__u32 key = cur * BPFIPT_PAGES_MAX + e / BPFIPT_PAGE_CHUNKS, id;
	__u64 v[BPFIPT_POOL_WORDS];

	ck_assert_int_eq(bpf_map_lookup_elem(ofd, &key, &id), 0);
	fd = bpf_map_get_fd_by_id(id);
	ck_assert_int_ge(fd, 0);
	key = e % BPFIPT_PAGE_CHUNKS;
	ck_assert_int_eq(bpf_map_lookup_elem(fd, &key, v), 0);
	close(fd);
	close(ofd);
	return v[w % BPFIPT_POOL_WORDS];
}

/*
 * The policy at the start of its word (cp_compiled.npad): INPUT of 30 000 rules
 * ("-s 172.16.x.0/24 -p udp", --dport and --sport in turn: no run the compiler
 * groups; a jump to chain "svc" among them; the last chunk's sources are
 * 172.31.x.0/24, which the packets do not have), policy ACCEPT, "svc" after the
 * policy in the same word. The 16 empty slots before the policy are out of the
 * chain's constant vector (the walk never finds them), the policy is in it;
 * packets that match a rule, that jump and RETURN, that match none (the walk
 * takes the policy from the summary rows, AT_POLICY()) against the reference.
 */
START_TEST(t_policy_word)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	__u64 st0[BPFIPT_ST_MAX], st1[BPFIPT_ST_MAX], w;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	__u32 P, vid, cur;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
		":OUTPUT ACCEPT [0:0]\n:svc - [0:0]\n");
	for (unsigned int i = 0; i < 30000; i++)
		sb_addf(&sb, i == 50 ? "-A INPUT -p tcp --dport 80 -j svc\n" :
			i % 2 ? "-A INPUT -s 172.%u.%u.0/24 -p udp --dport %u -j DROP\n" :
			"-A INPUT -s 172.%u.%u.0/24 -p udp --sport %u -j DROP\n",
			i < 28672 ? 16 + i % 1021 / 256 : 31, i % 1021 % 256, 1024 + i % 509);
	sb_adds(&sb, "-A svc -s 10.9.0.0/16 -j DROP\n-A svc -p tcp --sport 7 -j ACCEPT\n"
		"COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	P = cc->policy_slot[BPFIPT_INPUT];
	ck_assert_uint_eq(cc->npad[BPFIPT_INPUT], 16);
	ck_assert_uint_eq(P, 30016);
	ck_assert_uint_ge(cf.nchunks, BPFIPT_ROWS_MIN);
	ck_assert(!(cf.flags & BPFIPT_C_WINDOWS));
	cur = inst_now(in).cur[0];
	vid = cf.cvec[BPFIPT_INPUT];
	w = pool_word(in, cur, vid * cf.nchunks + P / 4096, P / 64 % 64 - 1);
	ck_assert_msg(!(w >> (64 - 16)), "an empty slot in the constant vector: %llx",
		      (unsigned long long)w);
	ck_assert(pool_word(in, cur, vid * cf.nchunks + P / 4096, P / 64 % 64) & 1);
	ck_assert_int_eq(dp_inst_stats(in, st0, &err), 0);
	for (int k = 0; k < 600; k++) {
		unsigned int i = rnd() % 1100;
		struct cp_packet p = {
			.saddr = htonl(172u << 24 | (16 + i / 256) << 16 | (i % 256) << 8 | 9),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = 1024 + rnd() % 520, .len = 50,
		};

		if (k % 2)
			p.sport = p.dport, p.dport = 40000;
		if (k % 5 == 0)		/* into svc: dropped, accepted, or back */
			p.proto = 6, p.has_tcp = true, p.tcpflags = 0x02, p.dport = 80,
			p.sport = k % 2 ? 7 : 40000,
			p.saddr = k % 3 ? p.saddr : inet_addr("10.9.1.1");
		send_checked(in, t, &p);
	}
	ck_assert_int_eq(dp_inst_stats(in, st1, &err), 0);
	ck_assert_uint_gt(st1[BPFIPT_ST_ROWS] - st0[BPFIPT_ST_ROWS], 100);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A tuple run among a few plain rules of a base chain (compile.c
 * tuple_in_prefix()): INPUT is -i wg9 ACCEPT (no such link), -i lo ACCEPT, -p
 * icmp ACCEPT, a run of 300 (-s /24, --dport) DROP, -p tcp --dport 22 ACCEPT,
 * -p udp --dport 53 ACCEPT and its policy DROP: one group, searched from the
 * slot prefix (BPFIPT_FAST_PFX_TUPLE), and every packet judged without the
 * walk. OUTPUT's run follows a jump to a chain that logs and has a rule the
 * prefix cannot take, FORWARD's BPFIPT_FAST_PFX_MAX plain rules: both stay rules (the
 * walk). Verdicts and counters against the reference. */
START_TEST(t_tuple_mid)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nhit = 0, npfx = 0;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n"
		":logged - [0:0]\n-A INPUT -i wg9 -j ACCEPT\n-A INPUT -i lo -j ACCEPT\n"
		"-A INPUT -p icmp -j ACCEPT\n");
	tp_run(&sb, "INPUT", 300, true, "tcp", 1024, 509, "DROP");
	sb_adds(&sb, "-A INPUT -p tcp --dport 22 -j ACCEPT\n-A INPUT -p udp --dport 53 -j ACCEPT\n"
		"-A OUTPUT -j logged\n-A logged -j LOG\n-A logged " FIVE_FIELDS "\n");
	tp_run(&sb, "OUTPUT", 50, false, "udp", 1, 50, "ACCEPT");
	for (unsigned int i = 0; i < BPFIPT_FAST_PFX_MAX; i++)
		sb_addf(&sb, i % 2 ? "-A FORWARD -s 10.1.%u.0/24 -j ACCEPT\n" :
			"-A FORWARD -p tcp --dport %u -j ACCEPT\n", 100 + i);
	tp_run(&sb, "FORWARD", 50, false, "udp", 1, 50, "ACCEPT");
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cc->ntgroups, 1);
	ck_assert_uint_eq(cc->nslots[BPFIPT_INPUT], 3 + 1 + 2 + 1);
	ck_assert_uint_eq(cc->nslots[BPFIPT_OUTPUT], 1 + 50 + 1 + 3);	/* and logged's */
	ck_assert_uint_eq(cc->nslots[BPFIPT_FORWARD], BPFIPT_FAST_PFX_MAX + 50 + 1);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 6u << 8 | BPFIPT_FAST_PFX_END);
	/* the group after a range of its keys' bounds */
	ck_assert(cf.pfx_direct[BPFIPT_INPUT][0] & 1ULL << (3 * BPFIPT_FAST_PFX_FIELDS));
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 3, 1), BPFIPT_FAST_PFX_TUPLE);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 3, 2), BPFIPT_FAST_PFX_NONE);
	/* -i wg9, a link that does not exist: a range of none, no lookup */
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_INPUT][0] & 1, 1);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 0, 0), BPFIPT_F_PROTO);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][0], BPFIPT_FAST_PFX_NEVER);
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][0], 0);
	for (int k = 0; k < 1500; k++) {
		unsigned int i = rnd() % 300, kind = rnd() % 7;
		struct cp_packet p = {
			.saddr = TP_SRC(i) | htonl(rnd() % 256), .daddr = inet_addr("10.0.0.1"),
			.proto = 6, .has_ports = true, .sport = 40000, .dport = 1024 + i % 509,
			.len = 50, .has_tcp = true, .tcpflags = 0x02, .iif = 2,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;

		if (kind == 1)		/* an address and a port of the run, not one rule's */
			p.dport = 1024 + rnd() % 300;
		if (kind == 2)		/* the prefix's rules after the run */
			p.dport = rnd() % 2 ? 22 : 53, p.proto = p.dport == 22 ? 6 : 17,
			p.has_tcp = p.proto == 6;
		if (kind == 3)		/* a fragment: no ports, no entry in the run */
			p.has_ports = false, p.has_tcp = false, p.nonfirst_frag = true;
		if (kind == 4)		/* lo */
			p.iif = 1;
		if (kind == 5)		/* a source of no rule: the policy */
			p.saddr = inet_addr("10.77.0.1");
		if (kind == 6)		/* udp to a port of the run: in no tuple */
			p.proto = 17, p.has_tcp = false;
		rule_no = ref_rule(t, BPFIPT_INPUT, &p, &rt, &owner);
		check_fast(in, t, &p, BPFIPT_INPUT, true, rule_no);
		nhit += rule_no >= 3 && rule_no < 303;
		npfx += rule_no >= 303;
	}
	ck_assert_uint_gt(nhit, 150);
	ck_assert_uint_gt(npfx, 100);
	for (int k = 0; k < 300; k++) {
		unsigned int i = rnd() % 50;
		struct cp_packet p = {
			.saddr = inet_addr("10.1.3.7"), .daddr = TP_DST(i), .proto = 17,
			.has_ports = true, .sport = 40000, .dport = 1 + (k % 3 ? i : rnd() % 50),
			.len = 50,
		};
		__u32 chain = k % 2 ? BPFIPT_OUTPUT : BPFIPT_FORWARD;
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no = ref_rule(t, chain, &p, &rt, &owner);

		check_fast(in, t, &p, chain, false, rule_no);
	}
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Two tuple runs one after the other (compile.c counts the prefix in slots, not
 * rules): FORWARD is a run of 100 (-s /24, tcp --dport) ACCEPT, a run of 100
 * (-d, udp --dport) DROP, -p udp --dport 53 ACCEPT, -m multiport --ports
 * ACCEPT, -j LOG and its policy DROP: the first searched first
 * (BPFIPT_FAST_TUPLE), the second from the slot prefix after it, multiport's
 * extra match tested there (bpfipt_conf.pfx_extra), the LOG rule counted there
 * (pfx_cont); every packet judged before the walk, verdicts and counters
 * against the reference. */
START_TEST(t_tuple_two)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nhit[2] = { 0, 0 };

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	tp_run(&sb, "FORWARD", 100, true, "tcp", 1024, 509, "ACCEPT");
	tp_run(&sb, "FORWARD", 100, false, "udp", 1, 50, "DROP");
	sb_adds(&sb, "-A FORWARD -p udp --dport 53 -j ACCEPT\n"
		"-A FORWARD -p udp -m multiport --ports 7000,7001 -j ACCEPT\n"
		"-A FORWARD -j LOG\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cc->ntgroups, 2);
	ck_assert_uint_eq(cc->nslots[BPFIPT_FORWARD], 6);
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | 4u << 8 |
			  BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.pfx_extra[BPFIPT_FORWARD], 1u << 2);
	ck_assert_uint_eq(cf.pfx_cont[BPFIPT_FORWARD], 1u << 3);
	ck_assert(cf.pfx_direct[BPFIPT_FORWARD][0] & 1);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_FORWARD], 0, 1), BPFIPT_FAST_PFX_TUPLE);
	for (int k = 0; k < 1000; k++) {
		unsigned int i = rnd() % 100, kind = rnd() % 5;
		bool udp = kind >= 2;
		struct cp_packet p = {
			.saddr = TP_SRC(i) | htonl(rnd() % 256), .daddr = TP_DST(i),
			.proto = udp ? 17 : 6, .has_ports = true, .sport = 40000,
			.dport = udp ? 1 + i % 50 : 1024 + i % 509, .len = 50, .has_tcp = !udp,
			.tcpflags = 0x10,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;

		if (kind == 1)		/* tcp to a port of the first run, not its rule's */
			p.dport = 1024 + rnd() % 100;
		if (kind == 3)		/* udp 53, or a port of the second run elsewhere */
			p.dport = rnd() % 2 ? 53 : 1 + rnd() % 50, p.daddr = inet_addr("10.30.0.1");
		if (kind == 4)		/* multiport's source ports, or a neighbour */
			p.sport = 6999 + rnd() % 4, p.dport = 9, p.daddr = inet_addr("10.30.0.1");
		rule_no = ref_rule(t, BPFIPT_FORWARD, &p, &rt, &owner);
		check_fast(in, t, &p, BPFIPT_FORWARD, true, rule_no);
		if (rule_no >= 0 && rule_no < 200)
			nhit[rule_no / 100]++;
	}
	ck_assert_uint_gt(nhit[0], 100);
	ck_assert_uint_gt(nhit[1], 100);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Jumps in the slot prefix (bpfipt_conf.pfx_slot, pfx_skip): INPUT is
 * -i lo ACCEPT, -p tcp --dport 22 -j f2b (300 sources REJECTed, a folded list,
 * then -j RETURN), -p udp -j svc, tcp 22 and 80 ACCEPT, policy DROP; svc
 * accepts udp 53, RETURNs 10.50.0.0/16, LOGs, calls inner for ports
 * 5000-5100 (RETURN from source port 7, DROP 5050) and DROPs port 9: fourteen
 * rules, every packet judged before the walk. FORWARD calls a chain of one
 * rule, then has a rule of five fields that accepts port 8: a prefix of two
 * that the walk follows from that rule's slot. OUTPUT's first rule matches no
 * packet (! -s 0.0.0.0/0: the source is not looked up in the chain, the same
 * vector for every address): an empty range. Verdicts and every counter
 * against the reference. */
START_TEST(t_jump_prefix)
{
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nrule[16] = { 0 };

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":f2b - [0:0]\n:svc - [0:0]\n:inner - [0:0]\n:ping - [0:0]\n"
		"-A INPUT -i lo -j ACCEPT\n-A INPUT -p tcp --dport 22 -j f2b\n"
		"-A INPUT -p udp -j svc\n-A INPUT -p tcp --dport 22 -j ACCEPT\n"
		"-A INPUT -p tcp --dport 80 -j ACCEPT\n");
	for (unsigned int i = 0; i < 300; i++) {
		struct in_addr a = { DENY(i) };

		sb_addf(&sb, "-A f2b -s %s/32 -j REJECT --reject-with icmp-port-unreachable\n",
			inet_ntoa(a));
	}
	sb_adds(&sb, "-A f2b -j RETURN\n-A svc -p udp --dport 53 -j ACCEPT\n"
		"-A svc -s 10.50.0.0/16 -j RETURN\n-A svc -j LOG --log-prefix \"svc \"\n"
		"-A svc -p udp --dport 5000:5100 -j inner\n-A svc -p udp --dport 9 -j DROP\n"
		"-A inner -p udp --sport 7 -j RETURN\n-A inner -p udp --dport 5050 -j DROP\n"
		"-A FORWARD -p udp -j ping\n-A ping -p udp --dport 7 -j DROP\n"
		"-A FORWARD -s 10.0.0.0/8 -d 10.0.0.0/8 -p udp --sport 40000 --dport 8 "
		"-m length --length 20:1500 -j ACCEPT\n"
		"-A FORWARD -p udp -j DROP\n-A OUTPUT ! -s 0.0.0.0/0 -j DROP\n"
		"-A OUTPUT -p udp -j DROP\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 14u << 8 | BPFIPT_FAST_PFX_END);
	/* 0 lo, 1 the jump to f2b, 2 its list, 3 its RETURN, 4 the jump to svc,
	 * 5-7 svc's first three, 8 the jump to inner, 9-10 inner's, 11 svc's
	 * last, 12-13 INPUT's last two */
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], 2, 0), BPFIPT_FAST_PFX_LIST);
	ck_assert_uint_eq(cf.pfx_cont[BPFIPT_INPUT], 1u << 1 | 1u << 3 | 1u << 4 | 1u << 6 |
			  1u << 7 | 1u << 8 | 1u << 9);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][1][0], 3u << 2);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][4][0], 0x7fu << 5);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][8][0], 3u << 9);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][3][1], 0);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][6][1], 0x1fu << 7);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][9][1], 1u << 10);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][6][0] | cf.pfx_skip[BPFIPT_INPUT][1][1] |
			  cf.pfx_skip[BPFIPT_INPUT][4][1] | cf.pfx_skip[BPFIPT_INPUT][8][1], 0);
	ck_assert_uint_eq(cf.pfx_slot[BPFIPT_INPUT][12], 3);
	ck_assert_uint_gt(cf.pfx_slot[BPFIPT_INPUT][2], cc->policy_slot[BPFIPT_INPUT]);
	/* FORWARD: the jump and ping's rule; the walk from slot 1 */
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 2u << 8);
	ck_assert_uint_eq(cf.pfx_next[BPFIPT_FORWARD], 1);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT], 2u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.lookup[BPFIPT_OUTPUT] & (1u << BPFIPT_F_SRC), 0);
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_OUTPUT][0] & 1, 1);
	ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_OUTPUT], 0, 0), BPFIPT_F_PROTO);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_OUTPUT][0], BPFIPT_FAST_PFX_NEVER);
	for (int k = 0; k < 3000; k++) {
		unsigned int i = rnd() % 400, kind = rnd() % 8;
		struct cp_packet p = {
			.saddr = DENY(i), .daddr = inet_addr("10.0.0.1"), .proto = 6,
			.has_ports = true, .sport = 40000, .dport = 22, .len = 50, .has_tcp = true,
			.tcpflags = 0x02, .iif = 2,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;
		bool fwd = kind == 7;
		__u32 chain = fwd ? BPFIPT_FORWARD : k % 10 ? BPFIPT_INPUT : BPFIPT_OUTPUT;

		if (kind == 1)		/* lo */
			p.iif = 1;
		if (kind == 2)		/* tcp 80, or another port: the policy */
			p.dport = rnd() % 2 ? 80 : 81;
		if (kind >= 3 && kind <= 6) {	/* udp: svc */
			static const unsigned int dports[] = { 53, 9, 5050, 5001, 5100, 7777 };

			p.proto = 17;
			p.has_tcp = false;
			p.dport = dports[rnd() % 6];
			p.sport = rnd() % 3 ? 40000 : 7;
			if (kind == 3)
				p.saddr = inet_addr("10.50.1.2");
		}
		if (kind == 6)		/* a fragment: no ports */
			p.has_ports = false, p.nonfirst_frag = true;
		if (fwd) {		/* udp: ping's port 7, else the walk */
			p.proto = 17;
			p.has_tcp = false;
			p.dport = rnd() % 2 ? 7 : 8;
		}
		rule_no = ref_rule(t, chain, &p, &rt, &owner);
		check_fast(in, t, &p, chain, !fwd || p.dport == 7, rule_no);
		if (chain == BPFIPT_INPUT && rt.ncounted)
			nrule[rt.ncounted > 15 ? 15 : rt.ncounted]++;
	}
	/* packets counted by one rule (lo, tcp 80), two (a REJECT: the jump and
	 * the list), three or more (RETURNs, LOG, inner) */
	ck_assert_uint_gt(nrule[1], 100);
	ck_assert_uint_gt(nrule[2], 100);
	ck_assert_uint_gt(nrule[3] + nrule[4] + nrule[5], 300);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Two lists on one address in a chain's jumps (fail2ban's two jails; two
 * chains of -d DROPs): no list is the chain's folded one (one per address),
 * so each is a tuple-like field of the slot prefix (loader.c list_alone()),
 * its own set searched there. INPUT's fourteen rules reach the policy: every
 * packet judged before the walk, verdicts and counters against the reference,
 * sources and destinations in one list, in both or in none. */
START_TEST(t_lists_prefix)
{
	static const char *const jail[] = { "f2b-sshd", "f2b-web", "blk1", "blk2" };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int hit[4] = { 0 };

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":f2b-sshd - [0:0]\n:f2b-web - [0:0]\n:blk1 - [0:0]\n:blk2 - [0:0]\n"
		"-A INPUT -i lo -j ACCEPT\n-A INPUT -p tcp --dport 22 -j f2b-sshd\n"
		"-A INPUT -p tcp --dport 80 -j f2b-web\n-A INPUT -p udp -j blk1\n"
		"-A INPUT -p udp -j blk2\n-A INPUT -p tcp -m multiport --dports 22,80 -j ACCEPT\n");
	/* sshd's sources 0-299, web's 150-449 (both: 150-299); blk1's
	 * destinations 0-199, blk2's 100-299 */
	sb_list(&sb, "-A f2b-sshd -s %s/32 -j REJECT\n", 0, 300);
	sb_list(&sb, "-A f2b-web -s %s/32 -j DROP\n", 150, 300);
	sb_list(&sb, "-A blk1 -d %s/32 -j DROP\n", 0, 200);
	sb_list(&sb, "-A blk2 -d %s/32 -j REJECT\n", 100, 200);
	for (unsigned int i = 0; i < 4; i++)
		sb_addf(&sb, "-A %s -j RETURN\n", jail[i]);
	/* FORWARD: two lists, one whose rules also say -p udp --dport 53: not
	 * alone, the walk judges (a TCP packet from its sources is not its).
	 * OUTPUT: GRE, then two lists before a rule of five fields, which the
	 * walk tests: a prefix that the walk follows ends before them (the walk
	 * searches neither where the address is not listed) */
	sb_adds(&sb, ":fw1 - [0:0]\n:fw2 - [0:0]\n:o1 - [0:0]\n:o2 - [0:0]\n"
		"-A FORWARD -j fw1\n-A FORWARD -j fw2\n-A OUTPUT -p gre -j ACCEPT\n"
		"-A OUTPUT -j o1\n-A OUTPUT -j o2\n-A OUTPUT -s 10.0.0.0/8 -d 10.0.0.0/8 -p udp "
		"--sport 1 --dport 2 -m length --length 20:1500 -j DROP\n");
	sb_list(&sb, "-A fw1 -s %s/32 -p udp -m udp --dport 53 -j DROP\n", 0, 100);
	sb_list(&sb, "-A fw2 -s %s/32 -j DROP\n", 100, 100);
	sb_list(&sb, "-A o1 -d %s/32 -j DROP\n", 0, 100);
	sb_list(&sb, "-A o2 -d %s/32 -j REJECT\n", 100, 100);
	sb_adds(&sb, "COMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	/* 0 lo, then per chain the jump, its list, its RETURN; 13 the ACCEPT */
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 14u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.gfold[BPFIPT_INPUT][0] | cf.gfold[BPFIPT_INPUT][1], 0);
	for (unsigned int j = 2; j <= 11; j += 3)
		ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(cf.pfx[BPFIPT_INPUT], j, 0),
				  BPFIPT_FAST_PFX_TUPLE);
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT], 1u << 8);
	for (int k = 0; k < 3000; k++) {
		unsigned int kind = rnd() % 5, i = rnd() % 500;
		struct cp_packet p = {
			.saddr = DENY(i), .daddr = inet_addr("192.0.2.1"), .proto = 6,
			.has_ports = true, .sport = 40000, .dport = kind ? 22 : 80, .len = 50,
			.has_tcp = true, .tcpflags = 0x02, .iif = 2,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;

		if (kind >= 3) {	/* udp to a listed destination, or not */
			p.proto = 17;
			p.has_tcp = false;
			p.saddr = inet_addr("192.0.2.9");
			p.daddr = DENY(i % 350);
			p.dport = 53;
		}
		if (kind == 2 && k % 7 == 0)
			p.iif = 1;	/* lo */
		rule_no = ref_rule(t, BPFIPT_INPUT, &p, &rt, &owner);
		check_fast(in, t, &p, BPFIPT_INPUT, true, rule_no);
		/* the rule that judged it: the last counted (a list's entry) */
		if (rt.ncounted > 1) {
			cp_counter_owner(t, rt.counted[rt.ncounted - 1], &owner, &rule_no);
			for (unsigned int c = 0; c < 4; c++)
				if (!strcmp(t->chains[owner]->name, jail[c]) &&
				    rule_no < (int)t->chains[owner]->nrules - 1)
					hit[c]++;
		}
	}
	for (int k = 0; k < 400; k++) {
		struct cp_packet p = {
			.saddr = DENY(rnd() % 250), .daddr = inet_addr("192.0.2.1"),
			.proto = k % 2 ? 6 : 17, .has_ports = true, .sport = 40000, .dport = 53,
			.len = 50, .has_tcp = k % 2, .tcpflags = 0x02, .iif = 2, .oif = 3,
		};
		struct cp_trace rt;
		unsigned int owner = 0;

		check_fast(in, t, &p, BPFIPT_FORWARD, false,
			   ref_rule(t, BPFIPT_FORWARD, &p, &rt, &owner));
		/* OUTPUT: to a listed destination or not, GRE judged first */
		p.saddr = inet_addr("10.0.0.1");
		p.daddr = DENY(rnd() % 250);
		p.oif = 2;
		p.iif = 0;
		if (k % 3 == 0) {
			p.proto = IPPROTO_GRE;
			p.has_ports = p.has_tcp = false;
		}
		check_fast(in, t, &p, BPFIPT_OUTPUT, k % 3 == 0,
			   ref_rule(t, BPFIPT_OUTPUT, &p, &rt, &owner));
	}
	/* every list judged some packets */
	for (unsigned int c = 0; c < 4; c++)
		ck_assert_msg(hit[c] > 50, "%s judged %u packets", jail[c], hit[c]);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* A protocol and its ports as the slot prefix tests them (loader.c pfx_fold()):
 * FORWARD is Docker's (DOCKER-USER, the isolation stages, published ports in
 * DOCKER: -d, ! -i docker0, -o docker0, -p tcp --dport, seven fields in the
 * vectors, four ranges in the prefix), fourteen rules that reach the policy; INPUT
 * has port matches of every shape: a source port range, --syn, ! -f,
 * multiport, both ports, an inverted range, every port, and ! -s NET, ! -p,
 * ! -i (ranges that wrap in the prefix: bpfipt_conf.pfx_span). Every packet judged
 * before the walk; verdicts and counters against the reference, fragments,
 * SYNs and GRE (no ports) among them. */
START_TEST(t_port_prefix)
{
	static const char *const dsts[] = { "172.17.0.2", "172.17.0.3", "172.17.0.4", "10.1.1.1" };
	static const __u16 dports[] = { 22, 53, 80, 443, 2000, 5432, 8080, 8500 };
	static const __u16 sports[] = { 123, 1500, 40000 };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int nrule[16] = { 0 }, j;
	const __u64 *pfx;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":DOCKER - [0:0]\n:DOCKER-ISOLATION-STAGE-1 - [0:0]\n"
		":DOCKER-ISOLATION-STAGE-2 - [0:0]\n:DOCKER-USER - [0:0]\n"
		"-A INPUT -p tcp -m tcp --sport 1000:2000 -j ACCEPT\n"
		"-A INPUT -p tcp -m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN -j REJECT\n"
		"-A INPUT -p udp ! -f -m udp --dport 53 -j ACCEPT\n"
		"-A INPUT -p tcp -m multiport --dports 80,443 -j ACCEPT\n"
		"-A INPUT -p udp -m udp --sport 123 --dport 1024:65535 -j ACCEPT\n"
		"-A INPUT -p tcp -m tcp ! --dport 8000:9000 -j DROP\n"
		"-A INPUT -p udp -m udp --dport 0:65535 -j LOG\n"
		"-A INPUT -p tcp -m tcp --dport 0:65535 -j ACCEPT\n"
		"-A INPUT ! -s 192.0.2.0/24 ! -p udp -j ACCEPT\n"
		"-A INPUT ! -i eth0 -p udp -j REJECT\n"
		"-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu\n"
		"-A FORWARD -j DOCKER-USER\n-A FORWARD -j DOCKER-ISOLATION-STAGE-1\n"
		"-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A FORWARD -o docker0 -j DOCKER\n-A FORWARD -i docker0 ! -o docker0 -j ACCEPT\n"
		"-A FORWARD -i docker0 -o docker0 -j ACCEPT\n"
		"-A DOCKER -d 172.17.0.2/32 ! -i docker0 -o docker0 -p tcp -m tcp --dport 80 -j ACCEPT\n"
		"-A DOCKER -d 172.17.0.3/32 ! -i docker0 -o docker0 -p tcp -m tcp --dport 5432 "
		"-j ACCEPT\n"
		"-A DOCKER -d 172.17.0.4/32 ! -i docker0 -o docker0 -p udp -m udp --dport 53 -j ACCEPT\n"
		"-A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2\n"
		"-A DOCKER-ISOLATION-STAGE-1 -j RETURN\n"
		"-A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP\n"
		"-A DOCKER-ISOLATION-STAGE-2 -j RETURN\n-A DOCKER-USER -j RETURN\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	/* FORWARD: 0 TCPMSS (counted, the packet goes on), 1 the jump to
	 * DOCKER-USER, 2 its RETURN, 3 the jump to stage 1, 4 its jump to stage 2,
	 * 5-6 stage 2's, 7 stage 1's RETURN, 8 the states, 9 the jump to DOCKER,
	 * 10-12 its rules, 13-14 FORWARD's last two */
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 15u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.pfx_cont[BPFIPT_FORWARD] & 1, 1);
	pfx = cf.pfx[BPFIPT_FORWARD];
	for (j = 10; j <= 12; j++) {
		__u32 idx = j * BPFIPT_FAST_PFX_FIELDS;

		/* tested in pfx_rank()'s order: the port, the address, the
		 * interface, the interface a packet must not come in by */
		ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(pfx, j, 0), BPFIPT_FAST_PFX_PDPORT);
		ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(pfx, j, 1), BPFIPT_F_DST);
		ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(pfx, j, 2), BPFIPT_F_OIF);
		ck_assert_uint_eq(BPFIPT_FAST_PFX_FIELD(pfx, j, 3), BPFIPT_F_IIF);
		/* ranges; ! -i docker0 the one that wraps from 4 to 2 */
		ck_assert_uint_eq(cf.pfx_direct[BPFIPT_FORWARD][0] >> idx & 15, 0xf);
		ck_assert_uint_eq(cf.pfx_lo[BPFIPT_FORWARD][idx + 3], 4);
		ck_assert_uint_eq(cf.pfx_span[BPFIPT_FORWARD][idx + 3], 0xfffffffe);
		ck_assert_uint_eq(cf.pfx_lo[BPFIPT_FORWARD][idx + 2], 3);
		ck_assert_uint_eq(cf.pfx_span[BPFIPT_FORWARD][idx + 2], 0);
	}
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_FORWARD][10 * 4], 6u << 17 | 80);
	ck_assert_uint_eq(PFX_HI(BPFIPT_FORWARD, 12 * 4), 17u << 17 | 53);
	/* INPUT: ten rules and the policy; the protocol and a source port, the
	 * flags beside -p and --dport, multiport's ports by their vector, both
	 * ports, every port; ! -s NET, ! -p and ! -i as inverted ranges */
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 10u << 8 | BPFIPT_FAST_PFX_END);
	pfx = cf.pfx[BPFIPT_INPUT];
	ck_assert_uint_eq(pfx[0] & 0xffff, 0xff00 | BPFIPT_F_PROTO << 4 | BPFIPT_F_SPORT);
	ck_assert_uint_eq(pfx[0] >> 16 & 0xffff, 0xff00 | BPFIPT_F_TCPFLAGS << 4 |
			  BPFIPT_FAST_PFX_PDPORT);
	ck_assert_uint_eq(pfx[0] >> 32 & 0xffff, 0xfff0 | BPFIPT_FAST_PFX_PDPORT);
	ck_assert_uint_eq(pfx[0] >> 48, 0xff00 | BPFIPT_F_DPORT << 4 | BPFIPT_F_PROTO);
	ck_assert_uint_eq(pfx[1] & 0xffff, 0xff00 | BPFIPT_F_SPORT << 4 | BPFIPT_FAST_PFX_PDPORT);
	ck_assert_uint_eq(pfx[1] >> 16 & 0xffff, 0xff00 | BPFIPT_F_DPORT << 4 | BPFIPT_F_PROTO);
	ck_assert_uint_eq(pfx[1] >> 32, 0xfff0fff0ULL | BPFIPT_FAST_PFX_PDPORT << 16 |
			  BPFIPT_FAST_PFX_PDPORT);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][4 * 4], 17u << 17 | 1024);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 4 * 4), 17u << 17 | 65535);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][7 * 4], 6u << 17);
	ck_assert_uint_eq(PFX_HI(BPFIPT_INPUT, 7 * 4), 6u << 17 | 65535);
	ck_assert_uint_eq(pfx[2] & 0xffffffff, 0xff00ff00 | BPFIPT_F_IIF << 20 | BPFIPT_F_PROTO << 16 |
			  BPFIPT_F_PROTO << 4 | BPFIPT_F_SRC);
	/* ! -s 192.0.2.0/24: from 192.0.3.0 round to 192.0.1.255; ! -p udp;
	 * ! -i eth0 */
	ck_assert_uint_eq(cf.pfx_direct[BPFIPT_INPUT][0] >> 32 & 0xff, 0x33);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][8 * 4], 0xc0000300);
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][8 * 4], 0xfffffeff);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][8 * 4 + 1], 18);
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][8 * 4 + 1], 0xfffffffe);
	ck_assert_uint_eq(cf.pfx_lo[BPFIPT_INPUT][9 * 4 + 1], 3);
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][9 * 4 + 1], 0xfffffffe);
	ck_assert_uint_eq(cf.pfx_span[BPFIPT_INPUT][9 * 4], 0);
	for (unsigned int k = 0; k < 3000; k++) {
		unsigned int kind = rnd() % 8;
		bool fwd = k % 2;
		struct cp_packet p = {
			.saddr = inet_addr(rnd() % 4 ? "192.0.2.7" : "198.51.100.7"),
			.daddr = inet_addr(dsts[rnd() % 4]),
			.proto = kind < 4 ? 6 : kind < 7 ? 17 : IPPROTO_GRE, .has_ports = kind < 7,
			.sport = fwd ? 20000 + k : sports[rnd() % 3], .dport = dports[rnd() % 8],
			.len = 50, .has_tcp = kind < 4, .tcpflags = rnd() % 2 ? 0x02 : 0x10,
			.iif = 2 + rnd() % 2,
			.ctstate = BPFIPT_CT_NEW, .has_ct = true,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;

		if (!fwd && rnd() % 8 == 0)	/* a later fragment: no ports nor flags */
			p.has_ports = p.has_tcp = false, p.nonfirst_frag = true;
		if (fwd)
			p.oif = 2 + rnd() % 2;
		else
			p.has_ct = false, p.ctstate = BPFIPT_CT_INVALID;
		rule_no = ref_rule(t, fwd ? BPFIPT_FORWARD : BPFIPT_INPUT, &p, &rt, &owner);
		check_fast(in, t, &p, fwd ? BPFIPT_FORWARD : BPFIPT_INPUT, true, rule_no);
		if (rule_no >= 0)
			nrule[fwd ? 15 : rule_no > 14 ? 14 : rule_no]++;
	}
	/* every INPUT rule but the LOG judged some, and Docker's three ports */
	for (j = 0; j < 10; j++)
		ck_assert_msg(j == 6 || nrule[j] > 5, "INPUT rule %u: %u packets", j, nrule[j]);
	ck_assert_uint_gt(nrule[15], 150);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* Gotos and base chains' RETURNs in the slot prefix (loader.c pfx_rule(),
 * pfx_chain_end()): INPUT's
 * -p udp --dport 53 -g dns (a RETURN there, or dns's end, is INPUT's policy,
 * not its next rule), -p tcp -j zones, -p udp -j ACCEPT; zones' -p tcp --dport
 * 22 -g ssh (ssh's RETURN comes back to INPUT, past zones' rest), tcp 80
 * ACCEPT, an unconditional -g public (zones' last rule is never reached), a
 * RETURN of INPUT's own (its policy, not the udp ACCEPT after it): fifteen
 * rules that reach the policy. FORWARD's goto after -i lo, and OUTPUT's RETURN
 * after -o lo, in prefixes the walk follows: they end before them. Verdicts,
 * counters and the FAST statistic against the reference. */
START_TEST(t_goto_prefix)
{
	static const char *const srcs[] = { "10.1.2.3", "192.0.2.9", "198.51.100.4", "203.0.113.1" };
	static const __u16 dports[] = { 22, 53, 80, 443, 8080 };
	struct strbuf sb = STRBUF_INIT;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct ipt_table *t;
	unsigned int ndropped_return = 0;

	sb_adds(&sb, "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":dns - [0:0]\n:zones - [0:0]\n:ssh - [0:0]\n:public - [0:0]\n"
		"-A INPUT -i lo -j ACCEPT\n-A INPUT -p udp -m udp --dport 53 -g dns\n"
		"-A INPUT -p tcp -j zones\n-A INPUT -s 203.0.113.0/24 -p udp -j RETURN\n"
		"-A INPUT -p udp -j ACCEPT\n"
		"-A dns -s 10.0.0.0/8 -j ACCEPT\n-A dns -s 192.0.2.0/24 -j RETURN\n-A dns -j LOG\n"
		"-A zones -p tcp -m tcp --dport 22 -g ssh\n-A zones -p tcp -m tcp --dport 80 -j ACCEPT\n"
		"-A zones -g public\n-A zones -p tcp -j DROP\n"
		"-A ssh -s 192.0.2.0/24 -j ACCEPT\n-A ssh -s 198.51.100.0/24 -j RETURN\n"
		"-A ssh -p tcp -j LOG\n-A public -p tcp -m tcp --dport 443 -j ACCEPT\n"
		"-A FORWARD -i lo -j ACCEPT\n-A FORWARD -p udp -g dns\n-A FORWARD " FIVE_FIELDS "\n"
		"-A FORWARD -p udp -j DROP\n-A OUTPUT -o lo -j ACCEPT\n-A OUTPUT -p tcp -j RETURN\n"
		"-A OUTPUT " FIVE_FIELDS "\n-A OUTPUT -p tcp -j DROP\nCOMMIT\n");
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	t = install_text(&sb, &cc, &in, &cf);
	/* 0 lo, 1 -g dns, 2-4 dns, 5 -j zones, 6 -g ssh, 7-9 ssh, 10 tcp 80,
	 * 11 -g public, 12 public's, 13 INPUT's RETURN (its policy), 14 udp
	 * ACCEPT */
	ck_assert_uint_eq(cf.fast[BPFIPT_INPUT], 15u << 8 | BPFIPT_FAST_PFX_END);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][1][0], 7u << 2);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][1][1], 0x3ffu << 5);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][13][1], 1u << 14);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][3][1], 1u << 4);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][5][0], 0x7fu << 6);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][6][0], 7u << 7);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][6][1], 7u << 10);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][8][1], 1u << 9);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][11][0], 1u << 12);
	ck_assert_uint_eq(cf.pfx_skip[BPFIPT_INPUT][11][1], 0);
	ck_assert_uint_eq(cf.pfx_cont[BPFIPT_INPUT], 1u << 1 | 1u << 3 | 1u << 4 | 1u << 5 |
			  1u << 6 | 1u << 8 | 1u << 9 | 1u << 11 | 1u << 13);
	/* FORWARD: -i lo only; the walk from the goto's slot */
	ck_assert_uint_eq(cf.fast[BPFIPT_FORWARD], 1u << 8);
	ck_assert_uint_eq(cf.pfx_next[BPFIPT_FORWARD], 1);
	/* OUTPUT: -o lo only, the walk from its RETURN */
	ck_assert_uint_eq(cf.fast[BPFIPT_OUTPUT], 1u << 8);
	ck_assert_uint_eq(cf.pfx_next[BPFIPT_OUTPUT], 1);
	for (unsigned int k = 0; k < 3000; k++) {
		bool fwd = k % 4 == 3, out = k % 4 == 2, tcp = rnd() % 2;
		__u32 chain = fwd ? BPFIPT_FORWARD : out ? BPFIPT_OUTPUT : BPFIPT_INPUT;
		struct cp_packet p = {
			.saddr = inet_addr(srcs[rnd() % 4]), .daddr = inet_addr("10.9.9.9"),
			.proto = tcp ? 6 : 17, .has_ports = true, .sport = 40000,
			.dport = dports[rnd() % 5], .len = 50, .has_tcp = tcp, .tcpflags = 0x10,
			.iif = rnd() % 8 ? 2 : 1,
		};
		struct cp_trace rt;
		unsigned int owner = 0;
		int rule_no;

		if (!tcp && rnd() % 2)
			p.dport = 53;
		if (out)
			p.oif = p.iif, p.iif = 0;
		rule_no = ref_rule(t, chain, &p, &rt, &owner);
		check_fast(in, t, &p, chain, fwd ? p.iif == 1 : out ? p.oif == 1 : true, rule_no);
		/* dns's RETURN after the goto from INPUT, INPUT's own RETURN: the
		 * policy */
		ndropped_return += chain == BPFIPT_INPUT && !tcp && p.iif != 1 &&
				   (p.dport == 53 ? p.saddr == inet_addr("192.0.2.9")
						  : p.saddr == inet_addr("203.0.113.1")) &&
				   rt.verdict == BPFIPT_V_DROP;
	}
	ck_assert_uint_gt(ndropped_return, 20);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

/* One random rule of the slot prefix's kinds into sb, in chain `chain`:
 * addresses, interfaces (out: the output's too), protocols, ports of every
 * shape, negated or not, and a target among `targets`. */
static void random_rule(struct strbuf *sb, const char *chain, bool out,
			const char *const *targets, unsigned int ntargets)
{
	static const char *const ofs[] = { "", "", "-o eth0 ", "! -o docker0 ", "-o docker0 " };
	static const char *const srcs[] = { "", "-s 10.0.0.0/8 ", "! -s 10.0.0.0/8 ",
					    "-s 10.1.2.3 ", "-d 192.0.2.0/24 " };
	static const char *const ifs[] = { "", "", "-i eth0 ", "! -i eth0 ", "-i lo " };
	static const char *const protos[] = { "", "-p tcp ", "-p udp ", "! -p tcp ", "-p tcp ",
					      "-p udp " };
	static const char *const ports[] = { "", "--dport 22 ", "--dport 1000:2000 ",
					     "! --dport 22 ", "--sport 53 ",
					     "--sport 1:1023 --dport 80 ", "--dport 0:65535 " };
	unsigned int p = rnd() % 6;

	sb_addf(sb, "-A %s %s%s%s%s", chain, srcs[rnd() % 5], ifs[rnd() % 5],
		out ? ofs[rnd() % 5] : "", protos[p]);
	if (p == 1 || p == 2 || p == 4 || p == 5) {
		const char *m = p == 1 || p == 4 ? "tcp" : "udp";

		if (rnd() % 4 == 0)
			sb_adds(sb, "! -f ");
		sb_addf(sb, "-m %s %s", m, ports[rnd() % 7]);
		if (!strcmp(m, "tcp") && rnd() % 4 == 0)
			sb_adds(sb, "--syn ");
	}
	sb_addf(sb, "-j %s\n", targets[rnd() % ntargets]);
}

/* Random rulesets of the slot prefix's rules (random_rule()) in INPUT and
 * FORWARD and two chains they may jump or go to, the second called from the
 * first too; each installed in turn, 200 random packets each, in INPUT or
 * FORWARD: verdicts and counters against the reference. Most of them are
 * judged by the prefix alone. */
START_TEST(t_prefix_random)
{
	static const char *const tin[] = { "ACCEPT", "DROP", "LOG", "c1", "c1", "c2", "RETURN",
					   "REJECT" };
	static const char *const tc1[] = { "ACCEPT", "DROP", "RETURN", "c2", "LOG" };
	static const char *const tc2[] = { "ACCEPT", "DROP", "RETURN", "LOG" };
	static const char *const psrc[] = { "10.1.2.3", "10.9.9.9", "192.0.2.1", "198.51.100.2" };
	static const __u16 pports[] = { 22, 53, 80, 1500, 40000 };
	struct ipt_err err = { 0 };
	struct dp_inst *in = NULL;
	unsigned int nend = 0;
	bool fout = false;	/* c1 and c2 are called from FORWARD: -o in them */

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (int r = 0; r < 100; r++) {
		struct strbuf sb = STRBUF_INIT;
		struct cp_compiled *cc = NULL;
		struct bpfipt_conf cf;
		struct ipt_table *t;
		unsigned int n;
		char *g;

		fout = !fout;
		sb_addf(&sb, "*filter\n:INPUT %s [0:0]\n:FORWARD %s [0:0]\n"
			":OUTPUT ACCEPT [0:0]\n:c1 - [0:0]\n:c2 - [0:0]\n",
			rnd() % 2 ? "ACCEPT" : "DROP", rnd() % 2 ? "ACCEPT" : "DROP");
		for (n = 2 + rnd() % 4; n; n--)
			random_rule(&sb, fout ? "FORWARD" : "INPUT", fout, tin, 8);
		for (n = 1 + rnd() % 3; n; n--)
			random_rule(&sb, fout ? "INPUT" : "FORWARD", !fout, tin + 1, 2);
		for (n = 1 + rnd() % 3; n; n--)
			random_rule(&sb, "c1", fout, tc1, 5);
		for (n = 1 + rnd() % 3; n; n--)
			random_rule(&sb, "c2", fout, tc2, 4);
		sb_adds(&sb, "COMMIT\n");
		/* a goto now and then instead of a jump */
		for (g = strstr(sb.buf, "-j c"); g; g = strstr(g + 1, "-j c"))
			if (rnd() % 3 == 0)
				g[1] = 'g';
		t = parse(sb_str(&sb));
		cc = install_in(in, t, &cf);
		nend += !!(cf.fast[fout ? BPFIPT_FORWARD : BPFIPT_INPUT] & BPFIPT_FAST_PFX_END);
		for (int k = 0; k < 200; k++) {
			unsigned int kind = rnd() % 5;
			struct cp_packet p = {
				.saddr = inet_addr(psrc[rnd() % 4]),
				.daddr = inet_addr(rnd() % 2 ? "192.0.2.7" : "10.5.5.5"),
				.proto = kind < 2 ? 6 : kind < 4 ? 17 : IPPROTO_GRE,
				.has_ports = kind < 4, .sport = pports[rnd() % 5],
				.dport = pports[rnd() % 5], .len = 50, .has_tcp = kind < 2,
				.tcpflags = rnd() % 2 ? 0x02 : 0x10, .iif = 1 + rnd() % 3,
			};

			if (kind < 4 && rnd() % 8 == 0)
				p.has_ports = p.has_tcp = false, p.nonfirst_frag = true;
			if (fout)
				p.oif = 1 + rnd() % 3;
			send_chain(in, t, &p, fout ? BPFIPT_FORWARD : BPFIPT_INPUT);
		}
		sb_free(&sb);
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	/* most rulesets are judged by their prefix alone */
	ck_assert_uint_gt(nend, 50);
	dp_inst_free(&in);
}
END_TEST

/* One rule of t_prefix_long's into sb, in chain `chain`: random_rule()'s, or a
 * port or range of ports[], a /24 of sources of its own, a multiport pair (a
 * vector, not a range), with a target among `targets`. */
static void long_rule(struct strbuf *sb, const char *chain, const __u16 *ports,
		      unsigned int nports, const char *const *targets, unsigned int ntargets)
{
	const char *tg = targets[rnd() % ntargets], *pr = rnd() % 2 ? "tcp" : "udp";
	unsigned int a = ports[rnd() % nports], b = ports[rnd() % nports];

	switch (rnd() % 5) {
	case 0:
		random_rule(sb, chain, false, targets, ntargets);
		return;
	case 1:
		sb_addf(sb, "-A %s -p %s --dport %u -j %s\n", chain, pr, a, tg);
		return;
	case 2:
		sb_addf(sb, "-A %s -p %s --dport %u:%u -j %s\n", chain, pr, a < b ? a : b,
			a < b ? b : a, tg);
		return;
	case 3:
		sb_addf(sb, "-A %s -s 10.%u.%u.0/24 -j %s\n", chain, a % 4, b % 256, tg);
		return;
	default:
		sb_addf(sb, "-A %s -p tcp -m multiport --dports %u,%u -j %s\n", chain, a, b, tg);
	}
}

/* Long slot prefixes (up to BPFIPT_FAST_PFX_RULES; ufw's INPUT is 62):
 * random rulesets of 15 to 50 rules in INPUT and two chains it may jump to,
 * many with a port, a range or a /24 of their own (tables of many cuts,
 * bpfipt_conf.pfx_tab), multiport pairs (vectors), LOGs; 300 packets each, at
 * the rules' edges and beside them: verdicts and counters against the
 * reference. */
START_TEST(t_prefix_long)
{
	static const char *const tin[] = { "ACCEPT", "DROP", "LOG", "c1", "c2", "RETURN",
					   "REJECT" };
	static const char *const tc[] = { "ACCEPT", "DROP", "RETURN", "LOG" };
	struct ipt_err err = { 0 };
	struct dp_inst *in = NULL;
	unsigned int nlong = 0, maxcuts = 0;
	__u16 ports[40];

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (int r = 0; r < 40; r++) {
		struct strbuf sb = STRBUF_INIT;
		struct cp_compiled *cc = NULL;
		struct bpfipt_conf cf;
		struct ipt_table *t;
		unsigned int n, fast;

		for (unsigned int i = 0; i < 40; i++)
			ports[i] = (__u16)(1 + rnd() % 60000);
		sb_addf(&sb, "*filter\n:INPUT %s [0:0]\n:FORWARD ACCEPT [0:0]\n"
			":OUTPUT ACCEPT [0:0]\n:c1 - [0:0]\n:c2 - [0:0]\n",
			rnd() % 2 ? "ACCEPT" : "DROP");
		for (n = 15 + rnd() % 36; n; n--)
			long_rule(&sb, "INPUT", ports, 40, tin, 7);
		for (n = 1 + rnd() % 4; n; n--)
			long_rule(&sb, "c1", ports, 40, tc, 4);
		for (n = 1 + rnd() % 3; n; n--)
			long_rule(&sb, "c2", ports, 40, tc, 4);
		sb_adds(&sb, "COMMIT\n");
		t = parse(sb_str(&sb));
		cc = install_in(in, t, &cf);
		fast = cf.fast[BPFIPT_INPUT];
		nlong += BPFIPT_FAST_PFX_N(fast) > 16 && (fast & BPFIPT_FAST_PFX_END);
		for (unsigned int k = 0; k < cf.pfx_ntab[BPFIPT_INPUT]; k++) {
			const struct bpfipt_pfx_tab *tb = &cf.pfx_tab[BPFIPT_INPUT][k];
			unsigned int m = 1;

			while (m < BPFIPT_PFX_CUTS && tb->cut[m] != ~0u)
				m++;
			maxcuts = m > maxcuts ? m : maxcuts;
		}
		for (int k = 0; k < 300; k++) {
			unsigned int kind = rnd() % 4, port = ports[rnd() % 40] + rnd() % 3;
			struct cp_packet p = {
				.saddr = htonl(10u << 24 | (rnd() % 4) << 16 |
					       (rnd() % 2 ? ports[rnd() % 40] % 256 : rnd() % 256) << 8 |
					       1),
				.daddr = inet_addr(rnd() % 2 ? "192.0.2.7" : "10.5.5.5"),
				.proto = kind < 2 ? 6 : kind < 3 ? 17 : IPPROTO_GRE,
				.has_ports = kind < 3, .sport = 40000,
				.dport = (__u16)(port > 1 ? port - 1 : port), .len = 50,
				.has_tcp = kind < 2, .tcpflags = 0x10, .iif = 1 + rnd() % 3,
			};

			send_chain(in, t, &p, BPFIPT_INPUT);
		}
		sb_free(&sb);
		cp_compiled_free(&cc);
		ipt_table_free(&t);
	}
	/* many are judged by a prefix past sixteen rules, with tables of many
	 * cuts */
	ck_assert_uint_gt(nlong, 10);
	ck_assert_uint_gt(maxcuts, 40);
	dp_inst_free(&in);
}
END_TEST

/* A tuple group's hash rewritten in place (loader.c, tuple_sync()): five
 * rulesets installed one after the other into one instance, each moving a
 * third of the run's ports and putting one more rule before the run (every
 * counter of the run moves by one); from the third on, a generation's slot
 * holds the hash of two rulesets before. Verdicts and counters against the
 * reference. */
/* Ruleset (nicmp, d) of t_tuple_update: nicmp rules, then a tuple run of 4 500
 * whose ports depend on d for every third rule. */
static struct ipt_table *tu_table(unsigned int nicmp, unsigned int d)
{
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
		":OUTPUT ACCEPT [0:0]\n");
	for (unsigned int i = 0; i < nicmp; i++)
		sb_addf(&sb, "-A INPUT -p icmp --icmp-type %u -j ACCEPT\n", i);
	for (unsigned int i = 0; i < 4500; i++) {
		struct in_addr a = { TP_SRC(i) };

		sb_addf(&sb, "-A INPUT -s %s/24 -p udp --dport %u -j DROP\n", inet_ntoa(a),
			1024 + (i % 3 ? i : i + d) % 509);
	}
	sb_adds(&sb, "COMMIT\n");
	t = parse(sb_str(&sb));
	sb_free(&sb);
	return t;
}

/* Install (nicmp, d) into `in`, or die at the crash point `crash` in a child
 * (the generation's tuple hash written, its conf not); then 400 packets of
 * every d against the reference (the ruleset now in force: *t). */
static void tu_install(struct dp_inst *in, struct ipt_table **t, unsigned int nicmp,
		       unsigned int d, const char *crash)
{
	struct ipt_table *nt = tu_table(nicmp, d);
	struct cp_compiled *cc = NULL;
	struct ipt_err err = { 0 };

	ck_assert_msg(cp_compile(nt, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_uint_eq(cc->ntgroups, 1);
	if (crash) {
		pid_t pid = fork();
		int status;

		ck_assert_int_ge(pid, 0);
		if (!pid) {
			setenv("BPF_IPTABLES_CRASH_AT", crash, 1);
			dp_inst_install(in, cc, NULL, 0, NULL, 0, &err);
			_exit(3);	/* not killed: the test fails */
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			      "the install at %s was not killed (status %d)", crash, status);
		ipt_table_free(&nt);
	} else {
		ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
		ipt_table_free(t);
		*t = nt;
	}
	cp_compiled_free(&cc);
	for (int k = 0; k < 400; k++) {
		unsigned int i = rnd() % 4500, pd = rnd() % 3;
		struct cp_packet p = {
			.saddr = TP_SRC(i) | htonl(7), .daddr = inet_addr("10.0.0.1"),
			.proto = 17, .has_ports = true, .sport = 40000,
			.dport = 1024 + (i % 3 ? i : i + pd) % 509, .len = 50,
		};

		send_chain(in, *t, &p, BPFIPT_INPUT);
	}
}

/* A tuple run changed in place (tuple_sync: entries deleted, added, moved
 * offsets) and one left alone when the spare generation holds the same keys
 * (bpfipt_conf.tuple_sum), also after rules before it changed; a command killed
 * after rewriting the hash must not leave a sum that vouches for it. */
START_TEST(t_tuple_update)
{
	static const unsigned int seq[][2] = {
		{ 0, 0 }, { 1, 1 }, { 2, 0 } /* the spare's tuples */, { 3, 1 } /* again */,
		{ 1, 1 } /* the current one's */, { 0, 0 }, { 4, 2 },
	};
	struct dp_inst *in = NULL;
	struct ipt_table *t = NULL;
	struct ipt_err err = { 0 };

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	for (unsigned int r = 0; r < sizeof(seq) / sizeof(seq[0]); r++)
		tu_install(in, &t, seq[r][0], seq[r][1], NULL);
	/* the spare holds d = 0 with its sum; a killed install of d = 1 rewrites
	 * it; d = 0 again must not trust the sum */
	tu_install(in, &t, 2, 1, "map-write:2");
	tu_install(in, &t, 1, 0, NULL);
	tu_install(in, &t, 0, 2, NULL);
	ipt_table_free(&t);
	dp_inst_free(&in);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chunks");
	TCase *tc = tcase_create("long");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, t_may_goto);
	tcase_add_test(tc, t_long_chains);
	tcase_add_test(tc, t_rows);
	tcase_add_test(tc, t_rows_two);
	tcase_add_test(tc, t_rows_fields);
	tcase_add_test(tc, t_windows);
	tcase_add_test(tc, t_windows_rows);
	tcase_add_test(tc, t_words_ahead);
	tcase_add_test(tc, t_walk_seen);
	tcase_add_test(tc, t_walk_seen_chunks);
	tcase_add_test(tc, t_full_vec);
	tcase_add_test(tc, t_shared_counters);
	tcase_add_test(tc, t_counters_fixed);
	tcase_add_test(tc, t_ival_fixed);
	tcase_add_test(tc, t_pool_pages);
	tcase_add_test(tc, t_slots_fixed);
	tcase_add_test(tc, t_spare_drop);
	tcase_add_test(tc, t_twins);
	tcase_add_test(tc, t_ifs_reuse);
	tcase_add_test(tc, t_fields_when_needed);
	tcase_add_test(tc, t_group_only);
	tcase_add_test(tc, t_group_fast);
	tcase_add_test(tc, t_tuple_vmap);
	tcase_add_test(tc, t_prefix);
	tcase_add_test(tc, t_prefix_open);
	tcase_add_test(tc, t_prefix_host);
	tcase_add_test(tc, t_tuple);
	tcase_add_test(tc, t_tuple_prefix);
	tcase_add_test(tc, t_tuple_mid);
	tcase_add_test(tc, t_policy_word);
	tcase_add_test(tc, t_tuple_two);
	tcase_add_test(tc, t_jump_prefix);
	tcase_add_test(tc, t_port_prefix);
	tcase_add_test(tc, t_lists_prefix);
	tcase_add_test(tc, t_goto_prefix);
	tcase_add_test(tc, t_prefix_random);
	tcase_add_test(tc, t_prefix_long);
	tcase_add_test(tc, t_tuple_update);
	tcase_add_test(tc, t_fold_filter);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
