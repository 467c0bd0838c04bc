// SPDX-License-Identifier: GPL-2.0
/*
 * The connection table from userspace (conntrack/ct.c) on a real instance's
 * bpfipt_ct map: an instance made with dp_inst_create() (not attached anywhere),
 * crafted entries written straight into the map, then
 *  - the listing, exact text (conntrack -L's format with accounting, measured on
 *    the kernel's own table), by batch lookups and by the get_next_key walk;
 *  - the count (expired entries excluded, the boundary expires == now too);
 *  - every filter field, delete by filter (expired entries untouched), sweep
 *    (exactly the expired one), flush (everything);
 *  - a table larger than a batch; a map that is not a connection table;
 *  - the -T settings tokens.
 *
 * Needs root and BPF: it fails (never skips) without them.
 */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "ct_table.h"
#include "loader.h"
#include "strbuf.h"

#define S	1000000000ull		/* a second in ns */
#define HALF	(S / 2)

static struct dp_inst *in;
static int ct_fd[BPFIPT_NFAMILIES], conf_fd;	/* IPv4's table, IPv6's */
static __u64 now;

static void setup(void)
{
	struct ipt_err err;

	ipt_err_clear(&err);
	ck_assert_msg(dp_inst_create(&in, 1u << DP_PROG_TEST, &err) == 0,
		      "dp_inst_create: %s", err.msg);
	/* no ruleset tracks connections here: the table is made by hand */
	ck_assert_int_eq(dp_inst_ct_fds(in, ct_fd, &conf_fd), 0);
	ck_assert_int_eq(ct_fd[0], -1);
	ck_assert_int_eq(ct_fd[1], -1);
	ck_assert_msg(dp_inst_ct_make(in, &err) == 0, "dp_inst_ct_make: %s", err.msg);
	ck_assert_int_eq(dp_inst_ct_fds(in, ct_fd, &conf_fd), 0);
	ck_assert_int_ge(ct_fd[0], 0);
	ck_assert_int_ge(ct_fd[1], 0);
	now = ct_now();
	ct_walk_no_batch = false;
}

static void teardown(void)
{
	dp_inst_free(&in);
}

static __be32 ip(const char *s)
{
	struct in_addr a;

	ck_assert_int_eq(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

/* One entry: ends in key order (the caller gives the canonical order). */
static struct ct_conn conn(__u8 proto, const char *a0, int p0, const char *a1, int p1,
			   __u8 orig, __u64 expires)
{
	struct ct_conn c;

	memset(&c, 0, sizeof(c));
	c.key.a[0] = ip(a0);
	c.key.a[1] = ip(a1);
	c.key.family = 4;
	c.key.port[0] = htons(p0);
	c.key.port[1] = htons(p1);
	c.key.proto = proto;
	c.e.expires = expires;
	c.e.start = now - 10 * S;
	c.e.orig = orig;
	c.e.status = BPFIPT_CTS_CONFIRMED;
	return c;
}

/* The table of c's family: an IPv4 key is the head of the struct. */
static int fd_of(const struct ct_conn *c)
{
	return ct_fd[c->key.family == 6];
}

static void put(const struct ct_conn *c)
{
	ck_assert_int_eq(bpf_map_update_elem(fd_of(c), &c->key, &c->e, BPF_NOEXIST), 0);
}

static bool present(const struct ct_conn *c)
{
	struct bpfipt_ct_entry e;

	return !bpf_map_lookup_elem(fd_of(c), &c->key, &e);
}

/* The crafted table: six live connections, one expired (expires == now). */
enum { C_TCP_EST, C_TCP_SYN, C_UDP, C_ICMP, C_GRE, C_OTHER, C_EXPIRED, C_MAX };
static struct ct_conn tbl[C_MAX];

static void fill(void)
{
	struct ct_conn *c;

	/* ssh from 10.1.0.2:40000 to 10.2.0.2:22, established and assured */
	c = &tbl[C_TCP_EST];
	*c = conn(6, "10.1.0.2", 40000, "10.2.0.2", 22, 0, now + 431999 * S + HALF);
	c->e.tcp_state = BPFIPT_TCP_ESTABLISHED;
	c->e.status |= BPFIPT_CTS_SEEN_REPLY | BPFIPT_CTS_ASSURED;
	c->e.packets[0] = 3, c->e.bytes[0] = 164, c->e.packets[1] = 2, c->e.bytes[1] = 122;
	/* 10.9.0.1:5555 -> 10.0.0.5:80, SYN sent: the opener is end 1 of the key */
	c = &tbl[C_TCP_SYN];
	*c = conn(6, "10.0.0.5", 80, "10.9.0.1", 5555, 1, now + 119 * S + HALF);
	c->e.tcp_state = BPFIPT_TCP_SYN_SENT;
	c->e.packets[0] = 1, c->e.bytes[0] = 60;
	/* a DNS query without an answer */
	c = &tbl[C_UDP];
	*c = conn(17, "10.1.0.2", 53000, "10.2.0.2", 53, 0, now + 29 * S + HALF);
	c->e.packets[0] = 1, c->e.bytes[0] = 31;
	/* ping from 10.2.0.2 (the requester is end 0), answered */
	c = &tbl[C_ICMP];
	*c = conn(1, "10.2.0.2", 1234, "10.1.0.2", 1234, 0, now + 28 * S + HALF);
	c->key.type = 8;
	c->e.status |= BPFIPT_CTS_SEEN_REPLY;
	c->e.packets[0] = 2, c->e.bytes[0] = 168, c->e.packets[1] = 2, c->e.bytes[1] = 168;
	/* GRE and a protocol conntrack has no name for: addresses only */
	c = &tbl[C_GRE];
	*c = conn(47, "10.1.0.2", 0, "10.2.0.2", 0, 0, now + 599 * S + HALF);
	c->e.packets[0] = 1, c->e.bytes[0] = 24;
	c = &tbl[C_OTHER];
	*c = conn(200, "10.1.0.2", 0, "10.2.0.2", 0, 1, now + 599 * S + HALF);
	c->e.packets[0] = 1, c->e.bytes[0] = 24;
	/* a UDP flow whose deadline is now: absent */
	c = &tbl[C_EXPIRED];
	*c = conn(17, "10.1.0.2", 1000, "10.2.0.2", 2000, 0, now);
	c->e.packets[0] = 5, c->e.bytes[0] = 500;
	for (int i = 0; i < C_MAX; i++)
		put(&tbl[i]);
}

/* conntrack -L of the kernel for the same connections (nf_conntrack_acct=1),
 * sorted by protocol and original tuple. */
static const char *const golden =
"icmp     1 28 src=10.2.0.2 dst=10.1.0.2 type=8 code=0 id=1234 packets=2 bytes=168 "
	"src=10.1.0.2 dst=10.2.0.2 type=0 code=0 id=1234 packets=2 bytes=168 mark=0 use=1\n"
"tcp      6 431999 ESTABLISHED src=10.1.0.2 dst=10.2.0.2 sport=40000 dport=22 "
	"packets=3 bytes=164 src=10.2.0.2 dst=10.1.0.2 sport=22 dport=40000 packets=2 "
	"bytes=122 [ASSURED] mark=0 use=1\n"
"tcp      6 119 SYN_SENT src=10.9.0.1 dst=10.0.0.5 sport=5555 dport=80 packets=1 "
	"bytes=60 [UNREPLIED] src=10.0.0.5 dst=10.9.0.1 sport=80 dport=5555 packets=0 "
	"bytes=0 mark=0 use=1\n"
"udp      17 29 src=10.1.0.2 dst=10.2.0.2 sport=53000 dport=53 packets=1 bytes=31 "
	"[UNREPLIED] src=10.2.0.2 dst=10.1.0.2 sport=53 dport=53000 packets=0 bytes=0 "
	"mark=0 use=1\n"
"gre      47 599 src=10.1.0.2 dst=10.2.0.2 srckey=0x0 dstkey=0x0 packets=1 bytes=24 "
	"[UNREPLIED] src=10.2.0.2 dst=10.1.0.2 srckey=0x0 dstkey=0x0 packets=0 bytes=0 "
	"mark=0 use=1\n"
"unknown  200 599 src=10.2.0.2 dst=10.1.0.2 packets=1 bytes=24 [UNREPLIED] "
	"src=10.1.0.2 dst=10.2.0.2 packets=0 bytes=0 mark=0 use=1\n";

/* The lines of golden that satisfy keep(i), i = their index in golden. */
static char *golden_lines(unsigned int mask)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = golden;

	for (unsigned int i = 0; *p; i++) {
		size_t n = strcspn(p, "\n") + 1;

		if (mask & (1u << i))
			sb_addn(&sb, p, n);
		p += n;
	}
	return sb.buf ? sb.buf : strdup("");
}

/* golden's line order */
enum { L_ICMP = 1 << 0, L_TCP_EST = 1 << 1, L_TCP_SYN = 1 << 2, L_UDP = 1 << 3,
       L_GRE = 1 << 4, L_OTHER = 1 << 5, L_ALL = 0x3f };

static void check_list(const struct ct_filter *f, unsigned int lines)
{
	struct strbuf sb = STRBUF_INIT;
	char *want = golden_lines(lines);
	size_t n = 99;

	ck_assert_int_eq(ct_list(ct_fd, f, now, &sb, &n), 0);
	ck_assert_str_eq(sb_str(&sb), want);
	ck_assert_uint_eq(n, (size_t)__builtin_popcount(lines));
	sb_free(&sb);
	free(want);
}

START_TEST(t_list_golden)
{
	size_t n;

	fill();
	check_list(NULL, L_ALL);
	/* the same through BPF_MAP_GET_NEXT_KEY */
	ct_walk_no_batch = true;
	check_list(NULL, L_ALL);
	ct_walk_no_batch = false;
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 6);
	/* one second earlier the expired entry is alive and listed */
	ck_assert_int_eq(ct_count(ct_fd, now - S, &n), 0);
	ck_assert_uint_eq(n, 7);
	/* past every deadline nothing is */
	ck_assert_int_eq(ct_count(ct_fd, now + 500000 * S, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(t_empty)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 99;

	ck_assert_int_eq(ct_list(ct_fd, NULL, now, &sb, &n), 0);
	ck_assert_str_eq(sb_str(&sb), "");
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ct_sweep(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ct_flush(ct_fd, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

static struct ct_filter addr_filter(enum ct_field fld, const char *a, int len)
{
	struct ct_filter f = { .set = CT_F_ADDR0 << fld };

	f.mask[fld][0] = len ? htonl(0xffffffffu << (32 - len)) : 0;
	f.addr[fld][0] = ip(a) & f.mask[fld][0];
	return f;
}

START_TEST(t_filters)
{
	struct ct_filter f;

	fill();
	/* -p */
	f = (struct ct_filter){ .set = CT_F_PROTO, .proto = 6 };
	check_list(&f, L_TCP_EST | L_TCP_SYN);
	f.proto = 200;
	check_list(&f, L_OTHER);
	f.proto = 132;
	check_list(&f, 0);
	/* -p tcp --state */
	f = (struct ct_filter){ .set = CT_F_PROTO | CT_F_STATE, .proto = 6,
				.tcp_state = BPFIPT_TCP_ESTABLISHED };
	check_list(&f, L_TCP_EST);
	f.tcp_state = BPFIPT_TCP_SYN_SENT;
	check_list(&f, L_TCP_SYN);
	f.tcp_state = BPFIPT_TCP_TIME_WAIT;
	check_list(&f, 0);
	/* the four addresses; a prefix */
	f = addr_filter(CT_ORIG_SRC, "10.1.0.2", 32);
	check_list(&f, L_TCP_EST | L_UDP | L_GRE);
	f = addr_filter(CT_ORIG_SRC, "10.0.0.0", 8);
	check_list(&f, L_ALL);
	f = addr_filter(CT_ORIG_SRC, "10.9.0.0", 16);
	check_list(&f, L_TCP_SYN);
	f = addr_filter(CT_ORIG_DST, "10.1.0.2", 32);
	check_list(&f, L_ICMP | L_OTHER);
	f = addr_filter(CT_REPL_SRC, "10.2.0.2", 32);		/* = the original dst */
	check_list(&f, L_TCP_EST | L_UDP | L_GRE);
	f = addr_filter(CT_REPL_DST, "10.2.0.2", 32);		/* = the original src */
	check_list(&f, L_ICMP | L_OTHER);
	f = addr_filter(CT_ORIG_SRC, "0.0.0.0", 0);
	check_list(&f, L_ALL);
	/* the four ports (with -p as the command line demands) */
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_ORIG_DST), .proto = 6 };
	f.port[CT_ORIG_DST] = 80;
	check_list(&f, L_TCP_SYN);
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_ORIG_SRC), .proto = 6 };
	f.port[CT_ORIG_SRC] = 40000;
	check_list(&f, L_TCP_EST);
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_REPL_SRC), .proto = 17 };
	f.port[CT_REPL_SRC] = 53;
	check_list(&f, L_UDP);
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_REPL_DST), .proto = 6 };
	f.port[CT_REPL_DST] = 5555;
	check_list(&f, L_TCP_SYN);
	/* several criteria: all must hold */
	f = addr_filter(CT_ORIG_SRC, "10.1.0.2", 32);
	f.set |= CT_F_PROTO | (CT_F_PORT0 << CT_ORIG_DST);
	f.proto = 6;
	f.port[CT_ORIG_DST] = 22;
	check_list(&f, L_TCP_EST);
	f.port[CT_ORIG_DST] = 23;
	check_list(&f, 0);
	/* the expired flow matches its own tuple, and is still not listed */
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_ORIG_SRC), .proto = 17 };
	f.port[CT_ORIG_SRC] = 1000;
	check_list(&f, 0);
	ck_assert(ct_filter_match(&f, &tbl[C_EXPIRED].key, &tbl[C_EXPIRED].e));
}
END_TEST

START_TEST(t_delete)
{
	struct strbuf shown = STRBUF_INIT;
	struct ct_filter f = { .set = CT_F_PROTO, .proto = 17 };
	char *want = golden_lines(L_UDP);
	size_t n;

	fill();
	/* -D -p udp: the live flow goes (and is shown), the expired one is absent */
	ck_assert_int_eq(ct_delete(ct_fd, &f, now, &shown, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(sb_str(&shown), want);
	ck_assert(!present(&tbl[C_UDP]));
	ck_assert(present(&tbl[C_EXPIRED]));
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 5);
	/* nothing left to match */
	sb_reset(&shown);
	ck_assert_int_eq(ct_delete(ct_fd, &f, now, &shown, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(sb_str(&shown), "");
	/* -D -s 10.1.0.2 */
	f = addr_filter(CT_ORIG_SRC, "10.1.0.2", 32);
	ck_assert_int_eq(ct_delete(ct_fd, &f, now, NULL, &n), 0);
	ck_assert_uint_eq(n, 2);			/* tcp established, gre */
	check_list(NULL, L_ICMP | L_TCP_SYN | L_OTHER);
	/* -D without a filter: every live entry */
	ck_assert_int_eq(ct_delete(ct_fd, NULL, now, NULL, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(present(&tbl[C_EXPIRED]));
	sb_free(&shown);
	free(want);
}
END_TEST

START_TEST(t_sweep)
{
	struct ct_conn soon;
	size_t n;

	fill();
	/* a flow with a second left is no sweep's business */
	soon = conn(17, "10.1.0.2", 1001, "10.2.0.2", 2000, 0, now + S);
	put(&soon);
	ck_assert_int_eq(ct_sweep(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(!present(&tbl[C_EXPIRED]));
	for (int i = 0; i < C_EXPIRED; i++)
		ck_assert_msg(present(&tbl[i]), "entry %d swept", i);
	ck_assert(present(&soon));
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, C_EXPIRED + 1);
}
END_TEST

START_TEST(t_sweep_renewed)
{
	struct ct_conn *c = &tbl[C_EXPIRED];
	struct ct_conn *v;
	size_t n, nv;

	fill();
	/* read as expired, then renewed by the data plane before the delete:
	 * ct_sweep re-reads each entry, so judging at `now` with an entry whose
	 * deadline moved keeps it */
	ck_assert_int_eq(ct_read(ct_fd, now, true, &v, &nv), 0);
	ck_assert_uint_eq(nv, 1);
	ck_assert(!memcmp(&v[0].key, &c->key, sizeof(c->key)));
	free(v);
	c->e.expires = now + 30 * S;
	ck_assert_int_eq(bpf_map_update_elem(fd_of(c), &c->key, &c->e, BPF_EXIST), 0);
	ck_assert_int_eq(ct_sweep(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert(present(c));
}
END_TEST

START_TEST(t_flush)
{
	__u8 key[sizeof(struct bpfipt_ct_key)];
	size_t n;

	fill();
	ck_assert_int_eq(ct_flush(ct_fd, &n), 0);
	ck_assert_uint_eq(n, C_MAX);		/* the expired one too */
	ck_assert_int_eq(bpf_map_get_next_key(ct_fd[0], NULL, key), -ENOENT);
	ck_assert_int_eq(bpf_map_get_next_key(ct_fd[1], NULL, key), -ENOENT);
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* More entries than a batch (256) and than a hash bucket's worth: batch lookup
 * and the walk see each exactly once. */
START_TEST(t_many)
{
	enum { N = 5000 };
	size_t n;

	for (int i = 0; i < N; i++) {
		struct ct_conn c = conn(17, "10.1.0.2", 10000 + i, "10.3.0.1", 53, 0,
					i % 10 ? now + 60 * S : now - S);

		put(&c);
	}
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, N - N / 10);
	ct_walk_no_batch = true;
	ck_assert_int_eq(ct_count(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, N - N / 10);
	ct_walk_no_batch = false;
	ck_assert_int_eq(ct_sweep(ct_fd, now, &n), 0);
	ck_assert_uint_eq(n, N / 10);
	ck_assert_int_eq(ct_flush(ct_fd, &n), 0);
	ck_assert_uint_eq(n, N - N / 10);
}
END_TEST

START_TEST(t_not_a_table)
{
	struct ct_conn *v = (void *)1;
	size_t n = 9;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "not_ct", 4, 8, 1, NULL);
	int fds[BPFIPT_NFAMILIES] = { fd, -1 };

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ct_read(fds, now, false, &v, &n), -EPROTO);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ct_count(fds, now, &n), -EPROTO);
	close(fd);
	/* and the instance's settings array is not one either */
	fds[0] = conf_fd;
	ck_assert_int_eq(ct_count(fds, now, &n), -EPROTO);
	/* each family's table has its own key size: swapped, neither reads */
	fds[0] = ct_fd[1];
	ck_assert_int_eq(ct_count(fds, now, &n), -EPROTO);
	fds[0] = -1;
	fds[1] = ct_fd[0];
	ck_assert_int_eq(ct_count(fds, now, &n), -EPROTO);
}
END_TEST

/* -T tokens: ct_settings_parse / ct_settings_format (no BPF needed). */
/* ---- IPv6 entries ---- */

static struct ct_conn conn6(__u8 proto, const char *a0, int p0, const char *a1, int p1,
			    __u8 orig, __u64 expires)
{
	struct ct_conn c = conn(proto, "0.0.0.0", p0, "0.0.0.0", p1, orig, expires);
	__be32 w[2][4];

	ck_assert_int_eq(inet_pton(AF_INET6, a0, w[0]), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, a1, w[1]), 1);
	for (int i = 0; i < 2; i++) {	/* word 0 in a[], the rest in a6[] */
		c.key.a[i] = w[i][0];
		memcpy(c.key.a6[i], &w[i][1], sizeof(c.key.a6[i]));
	}
	c.key.family = 6;
	return c;
}

static struct ct_filter addr6_filter(enum ct_field fld, const char *a, int len)
{
	struct ct_filter f = { .set = (CT_F_ADDR0 << fld) | CT_F_FAMILY, .family = 6 };
	__u8 m[16] = { 0 };

	ck_assert_int_eq(inet_pton(AF_INET6, a, f.addr[fld]), 1);
	for (int i = 0; i < len; i++)
		m[i / 8] |= 0x80 >> (i % 8);
	memcpy(f.mask[fld], m, 16);
	return f;
}

/* conntrack -L of the kernel for IPv6 connections: the same line, the addresses
 * as inet_ntop() writes them; icmpv6 queries answered by 129 / 140 */
static const char *const golden6 =
"icmp     1 28 src=10.2.0.2 dst=10.1.0.2 type=8 code=0 id=1234 packets=2 bytes=168 "
	"src=10.1.0.2 dst=10.2.0.2 type=0 code=0 id=1234 packets=2 bytes=168 mark=0 use=1\n"
"tcp      6 431999 ESTABLISHED src=2001:db8:1::2 dst=2001:db8:2::2 sport=40000 dport=22 "
	"packets=3 bytes=224 src=2001:db8:2::2 dst=2001:db8:1::2 sport=22 dport=40000 "
	"packets=2 bytes=162 [ASSURED] mark=0 use=1\n"
"udp      17 29 src=fe80::1 dst=ff02::fb sport=5353 dport=5353 packets=1 bytes=100 "
	"[UNREPLIED] src=ff02::fb dst=fe80::1 sport=5353 dport=5353 packets=0 bytes=0 "
	"mark=0 use=1\n"
"icmpv6   58 29 src=::1 dst=::1 type=139 code=0 id=5 packets=1 bytes=64 [UNREPLIED] "
	"src=::1 dst=::1 type=140 code=0 id=5 packets=0 bytes=0 mark=0 use=1\n"
"icmpv6   58 29 src=2001:db8:2::2 dst=2001:db8:1::2 type=128 code=0 id=77 packets=1 "
	"bytes=104 src=2001:db8:1::2 dst=2001:db8:2::2 type=129 code=0 id=77 packets=1 "
	"bytes=104 mark=0 use=1\n";

START_TEST(t_ipv6)
{
	struct ct_conn c[5];
	struct strbuf sb = STRBUF_INIT;
	struct ct_filter f;
	size_t n;

	c[0] = conn(1, "10.2.0.2", 1234, "10.1.0.2", 1234, 0, now + 28 * S + HALF);
	c[0].key.type = 8;
	c[0].e.status |= BPFIPT_CTS_SEEN_REPLY;
	c[0].e.packets[0] = 2, c[0].e.bytes[0] = 168, c[0].e.packets[1] = 2, c[0].e.bytes[1] = 168;
	c[1] = conn6(6, "2001:db8:1::2", 40000, "2001:db8:2::2", 22, 0, now + 431999 * S + HALF);
	c[1].e.tcp_state = BPFIPT_TCP_ESTABLISHED;
	c[1].e.status |= BPFIPT_CTS_SEEN_REPLY | BPFIPT_CTS_ASSURED;
	c[1].e.packets[0] = 3, c[1].e.bytes[0] = 224, c[1].e.packets[1] = 2, c[1].e.bytes[1] = 162;
	/* the opener is end 1 of the key */
	c[2] = conn6(17, "ff02::fb", 5353, "fe80::1", 5353, 1, now + 29 * S + HALF);
	c[2].e.packets[0] = 1, c[2].e.bytes[0] = 100;
	c[3] = conn6(58, "2001:db8:2::2", 77, "2001:db8:1::2", 77, 0, now + 29 * S + HALF);
	c[3].key.type = 128;
	c[3].e.status |= BPFIPT_CTS_SEEN_REPLY;
	c[3].e.packets[0] = 1, c[3].e.bytes[0] = 104, c[3].e.packets[1] = 1, c[3].e.bytes[1] = 104;
	c[4] = conn6(58, "::1", 5, "::1", 5, 0, now + 29 * S + HALF);
	c[4].key.type = 139;
	c[4].e.packets[0] = 1, c[4].e.bytes[0] = 64;
	for (int i = 4; i >= 0; i--)
		put(&c[i]);

	/* both families, IPv4 first, then by protocol and tuple */
	ck_assert_int_eq(ct_list(ct_fd, NULL, now, &sb, &n), 0);
	ck_assert_str_eq(sb_str(&sb), golden6);
	ck_assert_uint_eq(n, 5);
	ct_walk_no_batch = true;
	sb_reset(&sb);
	ck_assert_int_eq(ct_list(ct_fd, NULL, now, &sb, &n), 0);
	ck_assert_str_eq(sb_str(&sb), golden6);
	ct_walk_no_batch = false;

	/* -f ipv4, -f ipv6 */
	f = (struct ct_filter){ .set = CT_F_FAMILY, .family = 4 };
	ck_assert(ct_filter_match(&f, &c[0].key, &c[0].e));
	for (int i = 1; i < 5; i++)
		ck_assert(!ct_filter_match(&f, &c[i].key, &c[i].e));
	f.family = 6;
	ck_assert(!ct_filter_match(&f, &c[0].key, &c[0].e));
	for (int i = 1; i < 5; i++)
		ck_assert(ct_filter_match(&f, &c[i].key, &c[i].e));
	/* addresses and prefixes in every direction */
	f = addr6_filter(CT_ORIG_SRC, "2001:db8:1::", 48);
	ck_assert(ct_filter_match(&f, &c[1].key, &c[1].e));
	ck_assert(!ct_filter_match(&f, &c[3].key, &c[3].e));
	f = addr6_filter(CT_ORIG_SRC, "2001:db8::", 32);
	ck_assert(ct_filter_match(&f, &c[1].key, &c[1].e));
	ck_assert(ct_filter_match(&f, &c[3].key, &c[3].e));
	ck_assert(!ct_filter_match(&f, &c[2].key, &c[2].e));
	f = addr6_filter(CT_ORIG_SRC, "fe80::1", 128);	/* the opener, end 1 of the key */
	ck_assert(ct_filter_match(&f, &c[2].key, &c[2].e));
	f = addr6_filter(CT_ORIG_DST, "ff02::fb", 128);
	ck_assert(ct_filter_match(&f, &c[2].key, &c[2].e));
	f = addr6_filter(CT_REPL_SRC, "2001:db8:1::2", 128);
	ck_assert(ct_filter_match(&f, &c[3].key, &c[3].e));
	ck_assert(!ct_filter_match(&f, &c[1].key, &c[1].e));
	f = addr6_filter(CT_REPL_DST, "2001:db8:1::2", 127);
	ck_assert(ct_filter_match(&f, &c[1].key, &c[1].e));
	f = addr6_filter(CT_REPL_DST, "2001:db8:1::3", 128);
	ck_assert(!ct_filter_match(&f, &c[1].key, &c[1].e));
	/* an IPv6 address never matches an IPv4 entry whose words it shares */
	f = addr6_filter(CT_ORIG_SRC, "::", 0);
	ck_assert(!ct_filter_match(&f, &c[0].key, &c[0].e));
	/* the protocol and ports */
	f = (struct ct_filter){ .set = CT_F_PROTO | (CT_F_PORT0 << CT_ORIG_DST), .proto = 6,
				.port = { [CT_ORIG_DST] = 22 } };
	ck_assert(ct_filter_match(&f, &c[1].key, &c[1].e));
	f = (struct ct_filter){ .set = CT_F_PROTO, .proto = 58 };
	sb_reset(&sb);
	ck_assert_int_eq(ct_list(ct_fd, &f, now, &sb, &n), 0);
	ck_assert_uint_eq(n, 2);

	/* -D -f ipv6: the IPv6 entries go, the IPv4 one stays */
	f = (struct ct_filter){ .set = CT_F_FAMILY, .family = 6 };
	ck_assert_int_eq(ct_delete(ct_fd, &f, now, NULL, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(present(&c[0]));
	for (int i = 1; i < 5; i++)
		ck_assert(!present(&c[i]));
	sb_free(&sb);
}
END_TEST

START_TEST(t_settings_tokens)
{
	/* a bad token, and what the message must name */
	static const char *const bad[][2] = {
		{ "bogus=1", "`bogus'" },
		{ "udp_timeout", "`udp_timeout'" },
		{ "=5", "`=5'" },
		{ "udp_timeout=", "`'" },
		{ "udp_timeout=abc", "`abc'" },
		{ "udp_timeout=0", "`0'" },
		{ "udp_timeout=-1", "`-1'" },
		{ "udp_timeout=+5", "`+5'" },
		{ "udp_timeout=5s", "`5s'" },
		{ "udp_timeout=4294967296", "`4294967296'" },
		{ "max=0", "`0'" },
		{ "max=16777217", "`16777217'" },
		{ "max=0x10", "`0x10'" },
		{ "UDP_TIMEOUT=5", "`UDP_TIMEOUT'" },
		{ "udp_timeout =5", "`udp_timeout '" },
		{ "ma=5", "`ma'" },
	};
	struct ct_settings s, d;
	struct strbuf sb = STRBUF_INIT;
	struct ipt_err err;

	ct_settings_default(&s);
	d = s;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ipt_err_clear(&err);
		ck_assert_msg(ct_settings_parse(&s, bad[i][0], &err) != 0, "%s accepted",
			      bad[i][0]);
		ck_assert_int_eq(err.code, IPT_EXIT_PARAM);
		ck_assert(!memcmp(&s, &d, sizeof(s)));
		ck_assert_msg(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
	}
	ipt_err_clear(&err);
	ck_assert_int_eq(ct_settings_parse(&s, "udp_timeout=5", &err), 0);
	ck_assert_int_eq(ct_settings_parse(&s, "tcp_timeout_established=4294967295", &err), 0);
	ck_assert_int_eq(ct_settings_parse(&s, "tcp_timeout_unacknowledged=301", &err), 0);
	ck_assert_int_eq(ct_settings_parse(&s, "max=16777216", &err), 0);
	ck_assert_uint_eq(s.timeout_s[BPFIPT_CTT_UDP], 5);
	ck_assert_uint_eq(s.timeout_s[BPFIPT_TCP_ESTABLISHED], 4294967295ull);
	ck_assert_uint_eq(s.timeout_s[BPFIPT_CTT_TCP_UNACK], 301);
	ck_assert_uint_eq(s.max, 16777216);
	ck_assert_int_eq(ct_settings_parse(&s, "max=1", &err), 0);
	ck_assert_uint_eq(s.max, 1);
	ct_settings_format(&sb, &d);
	ck_assert_str_eq(sb_str(&sb),
		"max 65536\n"
		"tcp_timeout_unacknowledged 300\n"
		"tcp_timeout_syn_sent 120\n"
		"tcp_timeout_syn_recv 60\n"
		"tcp_timeout_established 432000\n"
		"tcp_timeout_fin_wait 120\n"
		"tcp_timeout_close_wait 60\n"
		"tcp_timeout_last_ack 30\n"
		"tcp_timeout_time_wait 120\n"
		"tcp_timeout_close 10\n"
		"tcp_timeout_syn_sent2 120\n"
		"udp_timeout 30\n"
		"udp_timeout_stream 120\n"
		"icmp_timeout 30\n"
		"generic_timeout 600\n"
		"gre_timeout 30\n"
		"gre_timeout_stream 180\n"
		"icmpv6_timeout 30\n");
	sb_free(&sb);
}
END_TEST

/* Names and tuples without a map. */
START_TEST(t_names)
{
	struct ct_conn c;
	struct ct_tuple t[2];
	static const __u8 req[] = { 8, 13, 15, 17 }, rep[] = { 0, 14, 16, 18 };

	ck_assert_str_eq(ct_proto_name(6), "tcp");
	ck_assert_str_eq(ct_proto_name(136), "udplite");
	ck_assert_str_eq(ct_proto_name(33), "dccp");
	ck_assert_str_eq(ct_proto_name(132), "sctp");
	ck_assert_str_eq(ct_proto_name(0), "unknown");
	ck_assert_str_eq(ct_tcp_state_name(BPFIPT_TCP_SYN_SENT2), "SYN_SENT2");
	ck_assert_str_eq(ct_tcp_state_name(BPFIPT_TCP_TIME_WAIT), "TIME_WAIT");
	ck_assert_ptr_null(ct_tcp_state_name(BPFIPT_TCP_MAX));
	for (int i = 0; i < 4; i++) {
		c = conn(1, "10.0.0.1", 7, "10.0.0.2", 7, 0, 0);
		c.key.type = req[i];
		ct_tuples(&c.key, &c.e, t);
		ck_assert_uint_eq(t[0].type, req[i]);
		ck_assert_uint_eq(t[1].type, rep[i]);
		ck_assert_uint_eq(t[0].sport, 7);
		ck_assert_uint_eq(t[1].sport, 7);
		ck_assert_mem_eq(t[0].src, t[1].dst, sizeof(t[0].src));
	}
	/* a state past the table prints as libnetfilter_conntrack does: NONE */
	{
		struct strbuf sb = STRBUF_INIT;

		c = conn(6, "10.0.0.1", 1, "10.0.0.2", 2, 0, 5 * S);
		c.e.tcp_state = 200;
		ct_format(&sb, &c.key, &c.e, 0);
		ck_assert_str_eq(sb_str(&sb),
			"tcp      6 5 NONE src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 packets=0 "
			"bytes=0 [UNREPLIED] src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 "
			"packets=0 bytes=0 mark=0 use=1\n");
		sb_free(&sb);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ct_table");
	TCase *t = tcase_create("table");

	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, t_list_golden);
	tcase_add_test(t, t_empty);
	tcase_add_test(t, t_filters);
	tcase_add_test(t, t_delete);
	tcase_add_test(t, t_sweep);
	tcase_add_test(t, t_sweep_renewed);
	tcase_add_test(t, t_flush);
	tcase_add_test(t, t_many);
	tcase_add_test(t, t_not_a_table);
	tcase_add_test(t, t_ipv6);
	suite_add_tcase(s, t);

	t = tcase_create("pure");
	tcase_add_test(t, t_settings_tokens);
	tcase_add_test(t, t_names);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	struct ipt_err err;
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ct_table: FAILED: needs root (BPF maps and programs); "
			"this test never skips\n");
		return 1;
	}
	/* the fixture would fail every test the same way: say why once */
	ipt_err_clear(&err);
	if (dp_inst_create(&in, 1u << DP_PROG_TEST, &err)) {
		fprintf(stderr, "test_ct_table: FAILED: cannot create an instance: %s\n", err.msg);
		return 1;
	}
	dp_inst_free(&in);
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
