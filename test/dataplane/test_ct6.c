// SPDX-License-Identifier: GPL-2.0
/*
 * IPv6 conntrack, REJECT and LOG through the real programs, with crafted
 * packets (bpf_prog_test_run):
 *  - conntrack: TCP and UDP NEW -> ESTABLISHED, ICMPv6 echo and node
 *    information queries, replies without a request and other types INVALID,
 *    neighbour discovery and MLD UNTRACKED, the four ICMPv6 errors RELATED to
 *    the flow they quote (INVALID for an unknown flow or the wrong host),
 *    fragments sharing their first fragment's state, -m conntrack --ctorigsrc
 *    with an IPv6 prefix; the entries as bpf-conntrack lists them;
 *  - REJECT at tc ingress: the bytes of the ICMPv6 replies (every code, type,
 *    checksum over the pseudo-header, the quote up to 1280 bytes, an odd
 *    length) and of tcp-reset (seq/ack, flags, checksum, extension headers
 *    dropped); the packets the kernel does not answer;
 *  - LOG: the event's bytes and the line logfmt.c prints for it.
 * The ruleset text is ip6tables-restore's, compiled for an IPv6 table. Needs
 * root and BPF; never skips.
 */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/netfilter/xt_LOG.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "compile.h"
#include "ct_table.h"
#include "loader.h"
#include "logfmt.h"
#include "restore.h"
#include "unaligned.h"

#pragma GCC diagnostic ignored "-Woverride-init"

#define A6 "2001:db8:1::1"	/* the remote host */
#define B6 "2001:db8:2::2"	/* the firewall's host */

/* ================================================================ packets */

struct q6 {			/* an ICMPv6 error's quoted packet */
	const char *src, *dst;
	int proto, sport, dport;	/* ICMPv6: sport = type, dport = id */
};

struct s6 {
	const char *src, *dst;
	int proto;		/* 6, 17, 58, ... */
	int sport, dport, flags;	/* ICMPv6: sport = type, dport = id (or code of errors) */
	int payload;		/* bytes after the transport header */
	int frag, fragoff, mf;	/* a fragment header (fragoff in 8-byte units) */
	__u32 fragid;
	int dstopts;		/* an 8-byte destination options header first */
	int hlim;
	const struct q6 *q;
};

#define S6(...) ((struct s6){ .src = A6, .dst = B6, .proto = 6, .sport = 40000, .dport = 22, \
			      .flags = 0x02, .hlim = 64, __VA_ARGS__ })

static __u8 dmac[6], smac[6] = { 2, 0, 0, 0, 0, 9 };

/* Ethernet + IPv6 (+ dstopts) (+ fragment) + transport; the length */
static size_t build6(const struct s6 *s, __u8 *buf, size_t cap)
{
	__u8 *ip = buf + ETH_HLEN, *h = ip + 40, *nh = ip + 6;
	size_t l4n;

	memset(buf, 0, cap);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	buf[12] = 0x86;
	buf[13] = 0xdd;
	ip[0] = 0x60;
	ip[7] = s->hlim;
	ck_assert_int_eq(inet_pton(AF_INET6, s->src, ip + 8), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, s->dst, ip + 24), 1);
	if (s->dstopts) {
		*nh = 60;
		nh = h;
		h[2] = 1;	/* PadN */
		h[3] = 4;
		h += 8;
	}
	if (s->frag) {
		*nh = 44;
		nh = h;
		h[2] = (s->fragoff << 3) >> 8;
		h[3] = ((s->fragoff << 3) & 0xf8) | !!s->mf;
		ipt_st32(h + 4, htonl(s->fragid));
		h += 8;
	}
	*nh = s->proto;
	if (s->frag && s->fragoff) {
		l4n = 0;
	} else if (s->proto == 58) {
		h[0] = s->sport;
		if (s->sport < 128) {
			h[1] = s->dport;
		} else {
			ipt_st16(h + 4, htons(s->dport));
		}
		l4n = 8;
		if (s->q) {	/* the quoted IPv6 header and 8 bytes of its transport */
			__u8 *q = h + 8;

			q[0] = 0x60;
			q[5] = 8;
			q[6] = s->q->proto;
			q[7] = 64;
			ck_assert_int_eq(inet_pton(AF_INET6, s->q->src, q + 8), 1);
			ck_assert_int_eq(inet_pton(AF_INET6, s->q->dst, q + 24), 1);
			if (s->q->proto == 58) {
				q[40] = s->q->sport;
				ipt_st16(q + 44, htons(s->q->dport));
			} else {
				ipt_st16(q + 40, htons(s->q->sport));
				ipt_st16(q + 42, htons(s->q->dport));
			}
			l4n += 48;
		}
	} else {
		ipt_st16(h, htons(s->sport));
		ipt_st16(h + 2, htons(s->dport));
		if (s->proto == 6) {
			h[12] = 5 << 4;
			h[13] = s->flags;
			ipt_st32(h + 4, htonl(1000));
			ipt_st32(h + 8, htonl(5000));
			l4n = 20;
		} else {
			ipt_st16(h + 4, htons(8 + s->payload));
			l4n = 8;
		}
	}
	for (int i = 0; i < s->payload; i++)
		h[l4n + i] = (__u8)(i * 7 + 1);
	h += l4n + s->payload;
	ck_assert_uint_le((size_t)(h - buf), cap);
	ipt_st16(ip + 4, htons((__u16)(h - ip - 40)));
	return (size_t)(h - buf);
}

/* ================================================================ running */

static struct dp_inst *setup6(const char *rules, unsigned int progs)
{
	struct ipt_restore_opts o = { .prog = "bpf-ip6tables-restore" };
	struct ipt_table *t = NULL;
	struct cp_compiled *cc = NULL;
	struct ipt_err err = { 0 };
	unsigned int line = 0;
	struct dp_inst *in = NULL;

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	ck_assert_msg(ipt_restore(rules, strlen(rules), &t, &o, &err, &line) == 0,
		      "restore line %u: %s", line, err.msg);
	ck_assert_msg(cp_compile(t, NULL, &cc, &err) == 0, "cp_compile: %s", err.msg);
	ck_assert_msg(dp_inst_create(&in, progs, &err) == 0, "dp_inst_create: %s", err.msg);
	ck_assert_msg(dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) == 0, "install: %s",
		      err.msg);
	cp_compiled_free(&cc);
	ipt_table_free(&t);
	return in;
}

static int classify(struct dp_inst *in, const __u8 *pkt, size_t len, int chain, int iif,
		    int oif)
{
	struct __sk_buff ctx = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	ctx.cb[0] = chain;
	ctx.cb[1] = iif;
	ctx.cb[2] = oif;
	ck_assert_msg(bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TEST), &o) == 0,
		      "test_run: %s", strerror(errno));
	return o.retval;
}

/* the counter that moved since prev (-1 none, -2 several) */
static int moved(struct dp_inst *in, __u64 *prev, unsigned int max)
{
	struct ipt_err err = { 0 };
	__u64 (*c)[2];
	unsigned int n, i;
	int r = -1;

	ck_assert_int_eq(dp_inst_counters(in, &c, &n, &err), 0);
	for (i = 0; i < n && i < max; i++) {
		if (c[i][0] != prev[i])
			r = r == -1 ? (int)i : -2;
		prev[i] = c[i][0];
	}
	free(c);
	return r;
}

/* ================================================================ conntrack */

/* B runs the firewall. The rule a packet hits tells its state: INPUT 0
 * INVALID, 1 ESTABLISHED, 2 RELATED, 3 UNTRACKED, 4-6 NEW accepted, 7 NEW
 * dropped; OUTPUT 8 INVALID, 9 ESTABLISHED, 10 RELATED, 11 UNTRACKED, 12 NEW. */
static const char ct6_rules[] =
	"*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n"
	"-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
	"-A INPUT -m conntrack --ctstate ESTABLISHED -j ACCEPT\n"
	"-A INPUT -m state --state RELATED -j ACCEPT\n"
	"-A INPUT -m state --state UNTRACKED -j ACCEPT\n"
	"-A INPUT -p tcp -m tcp --dport 22 -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -p udp -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -p ipv6-icmp -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -m conntrack --ctstate NEW -j DROP\n"
	"-A OUTPUT -m conntrack --ctstate INVALID -j DROP\n"
	"-A OUTPUT -m conntrack --ctstate ESTABLISHED -j ACCEPT\n"
	"-A OUTPUT -m conntrack --ctstate RELATED -j ACCEPT\n"
	"-A OUTPUT -m conntrack --ctstate UNTRACKED -j ACCEPT\n"
	"-A OUTPUT -m conntrack --ctstate NEW -j ACCEPT\n"
	"COMMIT\n";

enum { IN, OUT };

struct step6 {
	const char *what;
	int dir;
	struct s6 p;
	char state;	/* I E R U N (NEW accepted) n (NEW dropped) */
};

static char state_of(struct dp_inst *in, const struct step6 *st, __u64 *prev)
{
	static const char letter[] = "IERUNNNnIERUN";
	static __u8 buf[512];
	struct s6 p = st->p;
	size_t len;
	int m;

	if (st->dir == OUT) {	/* B -> A */
		const char *t = p.src;

		p.src = strcmp(p.dst, B6) ? p.dst : B6;
		p.dst = t;
		if (!strcmp(p.src, A6))
			p.src = B6;
	}
	len = build6(&p, buf, sizeof(buf));
	classify(in, buf, len, st->dir == IN ? BPFIPT_INPUT : BPFIPT_OUTPUT, 2, 2);
	m = moved(in, prev, 13);
	return m >= 0 ? letter[m] : '?';
}

#define ST(d, w, st, ...) { w, d, S6(__VA_ARGS__), st }
#define TCP6(d, sp, dp_, fl, st) ST(d, #d " tcp " #sp ">" #dp_ " " #fl, st, .sport = sp, \
				       .dport = dp_, .flags = fl)
#define UDP6(d, sp, dp_, st) ST(d, #d " udp " #sp ">" #dp_, st, .proto = 17, .sport = sp, \
			       .dport = dp_)
#define ICMP6(d, ty, id, st) ST(d, #d " icmpv6 type " #ty " id " #id, st, .proto = 58, \
				.sport = ty, .dport = id)

static const struct q6 q_udp_out = { B6, A6, 17, 5353, 53 };
static const struct q6 q_tcp_out = { B6, A6, 6, 50000, 443 };
static const struct q6 q_udp_unknown = { B6, A6, 17, 5354, 53 };
static const struct q6 q_udp_in = { A6, B6, 17, 1234, 53 };
static const struct q6 q_echo_out = { B6, A6, 58, 128, 77 };

START_TEST(t_conntrack6)
{
	static const struct step6 seq[] = {
		/* inbound ssh: handshake, data, close */
		TCP6(IN, 40000, 22, 0x02, 'N'),
		TCP6(OUT, 22, 40000, 0x12, 'E'),
		TCP6(IN, 40000, 22, 0x10, 'E'),
		TCP6(IN, 40000, 22, 0x18, 'E'),
		TCP6(OUT, 22, 40000, 0x11, 'E'),
		TCP6(IN, 40000, 22, 0x11, 'E'),
		TCP6(OUT, 22, 40000, 0x10, 'E'),
		/* not allowed: NEW dropped; out of state: INVALID */
		TCP6(IN, 40001, 80, 0x02, 'n'),
		TCP6(IN, 40002, 22, 0x12, 'I'),
		TCP6(IN, 40002, 22, 0x04, 'I'),
		/* outbound https */
		TCP6(OUT, 50000, 443, 0x02, 'N'),
		TCP6(IN, 443, 50000, 0x12, 'E'),
		TCP6(OUT, 50000, 443, 0x10, 'E'),
		/* UDP */
		UDP6(OUT, 5353, 53, 'N'),
		UDP6(OUT, 5353, 53, 'N'),
		UDP6(IN, 53, 5353, 'E'),
		UDP6(IN, 1234, 53, 'N'),
		UDP6(OUT, 53, 1234, 'E'),
		/* ICMPv6 queries: echo, node information; replies without a request
		 * and types that open nothing are INVALID */
		ICMP6(OUT, 128, 77, 'N'),
		ICMP6(IN, 129, 77, 'E'),
		ICMP6(IN, 129, 78, 'I'),
		ICMP6(IN, 128, 79, 'N'),
		ICMP6(OUT, 129, 79, 'E'),
		ICMP6(OUT, 139, 80, 'N'),
		ICMP6(IN, 140, 80, 'E'),
		ICMP6(IN, 140, 81, 'I'),
		ICMP6(IN, 137, 0, 'I'),		/* redirect */
		ICMP6(IN, 141, 0, 'I'),		/* inverse ND solicitation */
		ICMP6(IN, 200, 0, 'I'),		/* private experimentation */
		/* neighbour discovery and MLD: UNTRACKED */
		ICMP6(IN, 135, 0, 'U'),
		ICMP6(OUT, 136, 0, 'U'),
		ICMP6(IN, 133, 0, 'U'),
		ICMP6(IN, 134, 0, 'U'),
		ICMP6(IN, 130, 0, 'U'),
		ICMP6(IN, 131, 0, 'U'),
		ICMP6(IN, 132, 0, 'U'),
		ICMP6(IN, 143, 0, 'U'),
		/* errors: about a tracked flow RELATED, else INVALID */
		ST(IN, "port unreachable about udp 5353>53", 'R', .proto = 58, .sport = 1,
		   .dport = 4, .q = &q_udp_out),
		ST(IN, "packet too big about tcp 50000>443", 'R', .proto = 58, .sport = 2,
		   .q = &q_tcp_out),
		ST(IN, "time exceeded about tcp 50000>443", 'R', .proto = 58, .sport = 3,
		   .q = &q_tcp_out),
		ST(IN, "parameter problem about udp 5353>53", 'R', .proto = 58, .sport = 4,
		   .q = &q_udp_out),
		ST(IN, "destination unreachable about the echo 77", 'R', .proto = 58, .sport = 1,
		   .q = &q_echo_out),
		ST(IN, "an unassigned error type (100) about udp 5353>53", 'R', .proto = 58,
		   .sport = 100, .q = &q_udp_out),
		ST(IN, "port unreachable about an unknown flow", 'I', .proto = 58, .sport = 1,
		   .dport = 4, .q = &q_udp_unknown),
		ST(IN, "an error for a host that did not send the quoted packet", 'I',
		   .proto = 58, .sport = 1, .dport = 4, .q = &q_udp_out, .dst = "2001:db8:2::9"),
		ST(OUT, "B's port unreachable about the inbound udp flow", 'R', .proto = 58,
		   .sport = 1, .dport = 4, .q = &q_udp_in),
		/* a destination options header before the transport one */
		ST(IN, "udp 53>5353 after destination options", 'E', .proto = 17, .sport = 53,
		   .dport = 5353, .dstopts = 1),
		/* fragments: a later fragment has its first fragment's state */
		ST(IN, "first fragment of udp 53>5353", 'E', .proto = 17, .sport = 53,
		   .dport = 5353, .frag = 1, .mf = 1, .fragid = 0x10001, .payload = 64),
		ST(IN, "its last fragment", 'E', .proto = 17, .frag = 1, .fragoff = 9,
		   .fragid = 0x10001, .payload = 16),
		ST(IN, "first fragment of a new udp flow", 'N', .proto = 17, .sport = 53,
		   .dport = 6000, .frag = 1, .mf = 1, .fragid = 0x10002, .payload = 64),
		ST(IN, "its last fragment", 'N', .proto = 17, .frag = 1, .fragoff = 9,
		   .fragid = 0x10002, .payload = 16),
		ST(IN, "a later fragment whose first was not seen", 'I', .proto = 17, .frag = 1,
		   .fragoff = 9, .fragid = 0x10003, .payload = 16),
		ST(IN, "another id: not the first fragment's", 'I', .proto = 17, .frag = 1,
		   .fragoff = 9, .fragid = 0x20001, .payload = 16),
	};
	__u64 prev[16] = { 0 };
	struct dp_inst *in = setup6(ct6_rules, 1u << DP_PROG_TEST);
	struct strbuf sb = STRBUF_INIT;
	struct ct_filter f = { .set = CT_F_FAMILY | CT_F_PROTO, .family = 6, .proto = 58 };
	int ct[BPFIPT_NFAMILIES], conf;
	size_t n;

	for (unsigned int i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		char got = state_of(in, &seq[i], prev);

		ck_assert_msg(got == seq[i].state, "step %u (%s): state %c, expected %c", i,
			      seq[i].what, got, seq[i].state);
	}
	/* the table as bpf-conntrack lists it: the echo B sent, answered */
	ck_assert_int_eq(dp_inst_ct_fds(in, ct, &conf), 0);
	/* an IPv6 ruleset made IPv6's table, not IPv4's */
	ck_assert_int_eq(ct[0], -1);
	ck_assert_int_ge(ct[1], 0);
	ck_assert_int_eq(ct_list(ct, &f, ct_now(), &sb, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_msg(strstr(sb_str(&sb), "icmpv6   58 29 src=2001:db8:2::2 dst=2001:db8:1::1 "
				 "type=128 code=0 id=77 packets=1 bytes=48 src=2001:db8:1::1 "
				 "dst=2001:db8:2::2 type=129 code=0 id=77 packets=1 bytes=48 "
				 "mark=0 use=1\n"), "%s", sb_str(&sb));
	ck_assert_msg(strstr(sb_str(&sb), "icmpv6   58 29 src=2001:db8:2::2 dst=2001:db8:1::1 "
				 "type=139 code=0 id=80 "), "%s", sb_str(&sb));
	sb_reset(&sb);
	f = (struct ct_filter){ .set = CT_F_FAMILY | CT_F_PROTO | CT_F_STATE, .family = 6,
				.proto = 6, .tcp_state = BPFIPT_TCP_ESTABLISHED };
	ck_assert_int_eq(ct_list(ct, &f, ct_now(), &sb, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_msg(!strncmp(sb_str(&sb), "tcp      6 431999 ESTABLISHED src=2001:db8:2::2 "
			       "dst=2001:db8:1::1 sport=50000 dport=443 packets=2 bytes=120 "
			       "src=2001:db8:1::1 dst=2001:db8:2::2 sport=443 dport=50000 "
			       "packets=1 bytes=60 [ASSURED] mark=0 use=1\n", 200) ||
		      !strncmp(sb_str(&sb), "tcp      6 432000 ", 17), "%s", sb_str(&sb));
	/* no IPv4 entry: -f ipv4 lists nothing */
	sb_reset(&sb);
	f = (struct ct_filter){ .set = CT_F_FAMILY, .family = 4 };
	ck_assert_int_eq(ct_list(ct, &f, ct_now(), &sb, &n), 0);
	ck_assert_uint_eq(n, 0);
	sb_free(&sb);
	dp_inst_free(&in);
}
END_TEST

/* -m conntrack's tuple options with IPv6 addresses */
START_TEST(t_ctorig6)
{
	static const char rules[] =
		"*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate ESTABLISHED --ctorigsrc 2001:db8:2::/48 -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate ESTABLISHED --ctrepldst 2001:db8:2::2 -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate NEW ! --ctorigdst 2001:db8:2::/64 -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate NEW --ctreplsrc 2001:db8:2::2 -j ACCEPT\n"
		"COMMIT\n";
	struct dp_inst *in = setup6(rules, 1u << DP_PROG_TEST);
	__u64 prev[8] = { 0 };
	static __u8 buf[256];
	size_t len;

	/* B opens udp to A: A's reply: origsrc B matches rule 0 */
	len = build6(&S6(.src = B6, .dst = A6, .proto = 17, .sport = 7, .dport = 9), buf,
		     sizeof(buf));
	classify(in, buf, len, BPFIPT_OUTPUT, 0, 2);
	moved(in, prev, 8);
	len = build6(&S6(.proto = 17, .sport = 9, .dport = 7), buf, sizeof(buf));
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_eq(moved(in, prev, 8), 0);
	/* A opens udp to B: NEW, origdst in 2001:db8:2::/64: rule 2 does not match,
	 * rule 3 (replsrc = origdst = B) does */
	len = build6(&S6(.proto = 17, .sport = 11, .dport = 12), buf, sizeof(buf));
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_eq(moved(in, prev, 8), 3);
	/* the same flow again: ESTABLISHED? no, still NEW (no reply): rule 3 again */
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_eq(moved(in, prev, 8), 3);
	/* to another host: NEW, ! --ctorigdst matches: rule 2 */
	len = build6(&S6(.dst = "2001:db8:3::3", .proto = 17, .sport = 11, .dport = 12), buf,
		     sizeof(buf));
	ck_assert_int_eq(classify(in, buf, len, BPFIPT_INPUT, 2, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_eq(moved(in, prev, 8), 2);
	dp_inst_free(&in);
}
END_TEST

/* ================================================================ REJECT */

static int sh(const char *cmd)
{
	int r = system(cmd);

	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static void fresh_ns(void)
{
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	ck_assert_int_eq(sh("ip link set lo up && ip link add vA type veth peer name vB && "
			    "ip -6 addr add 2001:db8:1::1/64 dev vA nodad && "
			    "ip -6 addr add " B6 "/64 dev vB nodad && "
			    "ip link set vA up && ip link set vB up"), 0);
}

static void dev_mac(int ifindex, __u8 mac[6])
{
	struct ifreq ifr = {};
	int sock = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_ptr_nonnull(if_indextoname(ifindex, ifr.ifr_name));
	ck_assert_int_eq(ioctl(sock, SIOCGIFHWADDR, &ifr), 0);
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(sock);
}

static __u8 rin[1600];
static size_t rin_len;

/* tc ingress on vB with packet s (for the local B6): the reply's bytes */
static size_t reject_run(struct dp_inst *in, const struct s6 *s, __u8 *out, size_t cap,
			 int *ret)
{
	int vb = if_nametoindex("vB");
	struct __sk_buff ctx = { .ifindex = vb, .ingress_ifindex = vb };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = rin, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .data_out = out, .data_size_out = cap);

	ck_assert_int_gt(vb, 0);
	dev_mac(vb, dmac);
	rin_len = build6(s, rin, sizeof(rin));
	o.data_size_in = rin_len;
	ck_assert_int_eq(bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TC_IN), &o), 0);
	*ret = o.retval;
	return o.data_size_out;
}

static __u16 sum16(const __u8 *p, size_t n, __u32 s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (__u32)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (__u32)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* the transport checksum of an IPv6 packet without extension headers */
static __u16 l4sum6(const __u8 *ip)
{
	__u32 plen = (__u32)ip[4] << 8 | ip[5];
	__u8 ph[40] = { 0 };

	memcpy(ph, ip + 8, 32);
	ph[34] = plen >> 8;
	ph[35] = plen & 0xff;
	ph[39] = ip[6];
	return sum16(ip + 40, plen, sum16(ph, 40, 0));
}

START_TEST(t_reject6)
{
	static const char rules[] =
		"*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -p tcp -m tcp --dport 7 -j REJECT --reject-with tcp-reset\n"
		"-A INPUT -p udp -m udp --dport 7 -j REJECT\n"
		"-A INPUT -p udp -m udp --dport 1 -j REJECT --reject-with icmp6-no-route\n"
		"-A INPUT -p udp -m udp --dport 2 -j REJECT --reject-with icmp6-adm-prohibited\n"
		"-A INPUT -p udp -m udp --dport 3 -j REJECT --reject-with icmp6-addr-unreachable\n"
		"-A INPUT -p udp -m udp --dport 5 -j REJECT --reject-with icmp6-policy-fail\n"
		"-A INPUT -p udp -m udp --dport 6 -j REJECT --reject-with icmp6-reject-route\n"
		"-A INPUT -p ipv6-icmp -j REJECT\n"
		"-A INPUT -p tcp -j REJECT\n"
		"-A INPUT -p udp -j REJECT\n"
		"COMMIT\n";
	static const struct { int port, code; } codes[] = {
		{ 7, 4 }, { 1, 0 }, { 2, 1 }, { 3, 3 }, { 5, 5 }, { 6, 6 },
	};
	static __u8 out[2048];
	__u8 *ip = out + ETH_HLEN, *l4 = ip + 40;
	struct dp_inst *in = setup6(rules, 1u << DP_PROG_TC_IN);
	__u8 a6[16], b6[16];
	size_t n;
	int ret;

	inet_pton(AF_INET6, A6, a6);
	inet_pton(AF_INET6, B6, b6);

	/* tcp-reset: a SYN becomes RST|ACK, ack = seq + 1 */
	n = reject_run(in, &S6(.dport = 7, .flags = 0x02), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(n, ETH_HLEN + 60);
	ck_assert_mem_eq(out, smac, 6);			/* back to the sender */
	ck_assert_mem_eq(out + 6, dmac, 6);
	ck_assert_uint_eq(ip[0], 0x60);			/* tc 0, flow label 0 */
	ck_assert_uint_eq(ip[1] | ip[2] | ip[3], 0);
	ck_assert_uint_eq(ip[4] << 8 | ip[5], 20);
	ck_assert_uint_eq(ip[6], 6);
	ck_assert_uint_eq(ip[7], 64);
	ck_assert_mem_eq(ip + 8, b6, 16);
	ck_assert_mem_eq(ip + 24, a6, 16);
	ck_assert_uint_eq(ntohs(ipt_ld16(l4)), 7);
	ck_assert_uint_eq(ntohs(ipt_ld16(l4 + 2)), 40000);
	ck_assert_uint_eq(ipt_ld32(l4 + 4), 0);
	ck_assert_uint_eq(ntohl(ipt_ld32(l4 + 8)), 1001);	/* build6's seq 1000 + SYN */
	ck_assert_uint_eq(l4[12], 5 << 4);
	ck_assert_uint_eq(l4[13], 0x14);
	ck_assert_uint_eq(l4sum6(ip), 0xffff);
	/* an ACK with data after destination options: RST, seq = its ack; the reply
	 * has no extension header */
	n = reject_run(in, &S6(.dport = 7, .flags = 0x18, .dstopts = 1, .payload = 9), out,
		       sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(n, ETH_HLEN + 60);
	ck_assert_uint_eq(ip[6], 6);
	ck_assert_uint_eq(l4[13], 0x04);
	ck_assert_uint_eq(ntohl(ipt_ld32(l4 + 4)), 5000);
	ck_assert_uint_eq(ipt_ld32(l4 + 8), 0);
	ck_assert_uint_eq(l4sum6(ip), 0xffff);
	/* a FIN without ACK: ack = seq + payload + 1 */
	n = reject_run(in, &S6(.dport = 7, .flags = 0x01, .payload = 9), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(ntohl(ipt_ld32(l4 + 8)), 1000 + 9 + 1);
	ck_assert_uint_eq(l4[13], 0x14);
	/* no RST for a RST; none for a multicast or IPv4-mapped source */
	reject_run(in, &S6(.dport = 7, .flags = 0x04), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	reject_run(in, &S6(.dport = 7, .src = "::ffff:10.0.0.1"), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);

	/* the ICMPv6 codes of --reject-with */
	for (unsigned int i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		n = reject_run(in, &S6(.proto = 17, .sport = 5000, .dport = codes[i].port,
				       .payload = 100), out, sizeof(out), &ret);
		ck_assert_int_eq(ret, TC_ACT_REDIRECT);
		ck_assert_uint_eq(n, ETH_HLEN + 40 + 8 + (rin_len - ETH_HLEN));
		ck_assert_uint_eq(ip[6], 58);
		ck_assert_uint_eq(ip[7], 64);
		ck_assert_uint_eq(ip[4] << 8 | ip[5], 8 + rin_len - ETH_HLEN);
		ck_assert_mem_eq(ip + 8, b6, 16);
		ck_assert_mem_eq(ip + 24, a6, 16);
		ck_assert_uint_eq(l4[0], 1);
		ck_assert_uint_eq(l4[1], codes[i].code);
		ck_assert_uint_eq(ipt_ld32(l4 + 4), 0);
		ck_assert_uint_eq(l4sum6(ip), 0xffff);
		ck_assert_mem_eq(l4 + 8, rin + ETH_HLEN, rin_len - ETH_HLEN);	/* the quote */
	}
	/* an odd length: the checksum pads */
	n = reject_run(in, &S6(.proto = 17, .dport = 7, .payload = 5), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(n, ETH_HLEN + 48 + 40 + 8 + 5);
	ck_assert_uint_eq(l4sum6(ip), 0xffff);
	/* a big one: the reply is 1280 bytes, the quote its first 1232 */
	n = reject_run(in, &S6(.proto = 17, .dport = 7, .payload = 1400), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(n, ETH_HLEN + 1280);
	ck_assert_uint_eq(ip[4] << 8 | ip[5], 1240);
	ck_assert_uint_eq(l4sum6(ip), 0xffff);
	ck_assert_mem_eq(l4 + 8, rin + ETH_HLEN, 1232);
	/* ICMPv6: an echo request is answered, an error never */
	n = reject_run(in, &S6(.proto = 58, .sport = 128, .dport = 1, .payload = 56), out,
		       sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_REDIRECT);
	ck_assert_uint_eq(l4[1], 4);
	ck_assert_uint_eq(l4sum6(ip), 0xffff);
	for (int ty = 0; ty < 128; ty += 9) {
		reject_run(in, &S6(.proto = 58, .sport = ty, .payload = 48), out, sizeof(out), &ret);
		ck_assert_msg(ret == TC_ACT_SHOT, "ICMPv6 error type %d answered", ty);
	}
	/* no reply: multicast destination, unspecified or multicast source, a
	 * fragment (first or later) */
	reject_run(in, &S6(.proto = 17, .dport = 7, .dst = "ff02::1"), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	reject_run(in, &S6(.proto = 17, .dport = 7, .src = "::"), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	reject_run(in, &S6(.proto = 17, .dport = 7, .src = "ff05::2"), out, sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	reject_run(in, &S6(.proto = 17, .dport = 7, .frag = 1, .mf = 1, .fragid = 1), out,
		   sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	reject_run(in, &S6(.proto = 17, .frag = 1, .fragoff = 4, .fragid = 1, .payload = 8), out,
		   sizeof(out), &ret);
	ck_assert_int_eq(ret, TC_ACT_SHOT);
	dp_inst_free(&in);
}
END_TEST

/* ================================================================ LOG */

struct log_got {
	struct bpfipt_log_event ev[4];
	int n;
};

static int log_cb(void *ctx, void *data, size_t size)
{
	struct log_got *g = ctx;

	ck_assert_uint_eq(size, sizeof(struct bpfipt_log_event));
	if (g->n < 4)
		memcpy(&g->ev[g->n], data, sizeof(g->ev[0]));
	g->n++;
	return 0;
}

START_TEST(t_log6)
{
	static const char rules[] =
		"*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -p tcp -j LOG --log-prefix \"in6: \" --log-tcp-sequence\n"
		"-A INPUT -p ipv6-icmp -j LOG --log-prefix \"icmp6 \" --log-ip-options\n"
		"-A FORWARD -j LOG --log-prefix \"fwd \"\n"
		"COMMIT\n";
	struct dp_inst *in = setup6(rules, 1u << DP_PROG_TEST);
	struct log_got *g = calloc(1, sizeof(*g));
	struct strbuf sb = STRBUF_INIT;
	struct ring_buffer *rb;
	static __u8 buf[512];
	size_t n;

	rb = ring_buffer__new(dp_inst_log_fd(in), log_cb, g, NULL);
	ck_assert_ptr_nonnull(rb);
	memset(dmac, 0, 6);
	n = build6(&S6(.flags = 0x12), buf, sizeof(buf));
	ck_assert_int_eq(classify(in, buf, n, BPFIPT_INPUT, 7, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_ge(ring_buffer__consume(rb), 0);
	ck_assert_int_eq(g->n, 1);
	ck_assert_uint_eq(g->ev[0].len, n - ETH_HLEN);
	ck_assert_uint_eq(g->ev[0].caplen, n - ETH_HLEN);
	ck_assert_mem_eq(g->ev[0].pkt, buf + ETH_HLEN, n - ETH_HLEN);
	lf_format(&sb, &g->ev[0], "if7", "");
	ck_assert_str_eq(sb_str(&sb),
		"in6: IN=if7 OUT= MAC=00:00:00:00:00:00:02:00:00:00:00:09:86:dd "
		"SRC=2001:0db8:0001:0000:0000:0000:0000:0001 DST=2001:0db8:0002:0000:0000:0000:0000:0002 "
		"LEN=60 TC=0 HOPLIMIT=64 FLOWLBL=0 PROTO=TCP SPT=40000 DPT=22 SEQ=1000 ACK=5000 "
		"WINDOW=0 RES=0x00 ACK SYN URGP=0 ");

	/* an ICMPv6 error quoting a UDP packet, after a fragment header */
	g->n = 0;
	n = build6(&S6(.proto = 58, .sport = 1, .dport = 4, .q = &q_udp_in), buf, sizeof(buf));
	ck_assert_int_eq(classify(in, buf, n, BPFIPT_INPUT, 7, 0), BPFIPT_V_ACCEPT);
	ck_assert_int_ge(ring_buffer__consume(rb), 0);
	ck_assert_int_eq(g->n, 1);
	sb_reset(&sb);
	lf_format(&sb, &g->ev[0], "if7", "");
	ck_assert_str_eq(sb_str(&sb),
		"icmp6 IN=if7 OUT= MAC=00:00:00:00:00:00:02:00:00:00:00:09:86:dd "
		"SRC=2001:0db8:0001:0000:0000:0000:0000:0001 DST=2001:0db8:0002:0000:0000:0000:0000:0002 "
		"LEN=96 TC=0 HOPLIMIT=64 FLOWLBL=0 PROTO=ICMPv6 TYPE=1 CODE=4 "
		"[SRC=2001:0db8:0001:0000:0000:0000:0000:0001 DST=2001:0db8:0002:0000:0000:0000:0000:0002 "
		"LEN=48 TC=0 HOPLIMIT=64 FLOWLBL=0 PROTO=UDP SPT=1234 DPT=53 LEN=0 ] ");

	/* FORWARD: the hop limit as the kernel shows it there (decremented) */
	g->n = 0;
	n = build6(&S6(.proto = 17, .frag = 1, .fragoff = 2, .fragid = 0xabcd, .payload = 8,
		       .hlim = 9), buf, sizeof(buf));
	ck_assert_int_eq(classify(in, buf, n, BPFIPT_FORWARD, 7, 8), BPFIPT_V_ACCEPT);
	ck_assert_int_ge(ring_buffer__consume(rb), 0);
	ck_assert_int_eq(g->n, 1);
	sb_reset(&sb);
	lf_format(&sb, &g->ev[0], "if7", "if8");
	ck_assert_str_eq(sb_str(&sb),
		"fwd IN=if7 OUT=if8 MAC=00:00:00:00:00:00:02:00:00:00:00:09:86:dd "
		"SRC=2001:0db8:0001:0000:0000:0000:0000:0001 DST=2001:0db8:0002:0000:0000:0000:0000:0002 "
		"LEN=56 TC=0 HOPLIMIT=8 FLOWLBL=0 FRAG:16 ID:0000abcd PROTO=UDP ");
	sb_free(&sb);
	ring_buffer__free(rb);
	free(g);
	dp_inst_free(&in);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ct6");
	TCase *t = tcase_create("conntrack");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, t_conntrack6);
	tcase_add_test(t, t_ctorig6);
	tcase_add_test(t, t_log6);
	suite_add_tcase(s, t);
	t = tcase_create("reject");
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, fresh_ns, NULL);
	tcase_add_test(t, t_reject6);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ct6: FAILED: needs root (BPF, network namespaces); "
			"this test never skips\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET) || system("ip link set lo up")) {
		fprintf(stderr, "test_ct6: FAILED: cannot make a network namespace\n");
		return 1;
	}
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
