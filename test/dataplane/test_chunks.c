// SPDX-License-Identifier: GPL-2.0
/*
 * Long chains on the real kernel: the classifier's two summary levels (a summary
 * word per 64-word chunk, a chunk bitmap in each vector's first chunk) skip only
 * what cannot match. 14 000 ungroupable rules in INPUT (-s /24 -p udp --dport,
 * some -j ACCEPT, some without a target, so the walk goes on across chunks) and a
 * user chain of 5 000 whose block lies in the last chunks (a jump from rule 0 and
 * back), 8 000 packets: verdicts and counters must equal the reference
 * evaluator's (cp_ref_eval).
 * Needs root and BPF; fails (never skips) without them. Runs in a network
 * namespace of its own.
 */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>

#include "compile.h"
#include "loader.h"
#include "restore.h"
#include "strbuf.h"
#include "csum.h"

static const struct cp_env env = { NULL, 0, 0, 0 };
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

static struct ipt_table *ruleset(void)
{
	struct ipt_restore_opts o = { .prog = "test_chunks" };
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t = NULL;
	struct ipt_err err = { 0 };
	unsigned int line = 0;

	sb_adds(&sb, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":LATE - [0:0]\n-A INPUT -p udp --dport 7777 -j LATE\n");
	for (unsigned int i = 0; i < 14000; i++)
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

static size_t packet(__u8 *buf, struct cp_packet *p)
{
	struct ethhdr *eth = (void *)buf;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	memset(buf, 0, 64);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(50);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = p->saddr;
	ip->daddr = p->daddr;
	ip->check = ipt_csum(ip, sizeof(*ip));
	udp->source = htons(p->sport);
	udp->dest = htons(p->dport);
	udp->len = htons(30);
	return 64;
}

START_TEST(t_long_chains)
{
	struct ipt_table *t = ruleset();
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	unsigned int verdicts[3] = { 0 };
	__u8 buf[64];

	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_msg(cp_compile(t, &env, &cc, &err) == 0, "compile: %s", err.msg);
	ck_assert_uint_gt(cc->nwords, 3 * 64);	/* four chunks at least */
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0, "%s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "%s", err.msg);
	for (int n = 0; n < 8000; n++) {
		unsigned int s = rnd() % 1021, r = rnd() % 8;
		struct cp_packet p = {
			.saddr = r == 0 ? inet_addr("192.168.1.1")
				 : htonl(172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8 | 9),
			.daddr = inet_addr("10.0.0.1"), .proto = 17, .has_ports = true,
			.sport = 40000, .dport = r == 1 ? 7777 : 1024 + rnd() % 512, .len = 50,
		};
		struct __sk_buff ctx = { .cb = { BPFIPT_INPUT, 0, 0 } };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = packet(buf, &p),
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
		__u64 (*a)[2], (*b)[2];
		unsigned int na, nb, moved = 0;
		struct cp_trace rt;

		ck_assert_int_eq(cp_ref_eval(t, &env, BPFIPT_INPUT, &p, &rt), 0);
		ck_assert_int_eq(dp_inst_counters(in, &a, &na, &err), 0);
		ck_assert_int_eq(bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TEST), &o), 0);
		ck_assert_int_eq(dp_inst_counters(in, &b, &nb, &err), 0);
		ck_assert_msg((int)o.retval == (int)rt.verdict, "packet %d (src %#x dport %u): "
			      "verdict %u, reference %d", n, ntohl(p.saddr), p.dport, o.retval,
			      rt.verdict);
		for (unsigned int k = 0; k < nb; k++)
			moved += b[k][0] - a[k][0];
		ck_assert_uint_eq(moved, rt.ncounted);
		for (unsigned int k = 0; k < rt.ncounted && k < CP_TRACE_MAX; k++)
			ck_assert_msg(b[rt.counted[k]][0] > a[rt.counted[k]][0],
				      "packet %d: counter %u did not move", n, rt.counted[k]);
		verdicts[rt.verdict]++;
		free(a);
		free(b);
	}
	/* every kind of outcome was seen */
	ck_assert_uint_gt(verdicts[BPFIPT_V_ACCEPT], 100);
	ck_assert_uint_gt(verdicts[BPFIPT_V_DROP], 100);
	dp_inst_free(&in);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chunks");
	TCase *tc = tcase_create("long");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, t_long_chains);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
