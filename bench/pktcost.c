// SPDX-License-Identifier: GPL-2.0
/*
 * pktcost: what one packet costs the deployed programs, in ns, measured with
 * bpf_prog_test_run_opts (issue 7). The rulesets go the way a command sends
 * them: text -> ipt_restore() -> cp_compile() -> dp_inst_install(), and the
 * programs run are the skeleton's bpfipt_xdp and bpfipt_tc_in, chain selector
 * included (bpf_fib_lookup on a veth of this tool's own network namespace).
 *
 * Rulesets (INPUT, policy ACCEPT, every rule -j DROP):
 *   mixed N  "-s 172.(16+s/256).(s%256).0/24 -p udp --dport 1024+i%509", s = i%1021:
 *            no two adjacent rules alike in one field only (no address group),
 *            each (source, port) pair distinct; a source matches ~N/1021 rules,
 *            a port ~N/509: the sparse vectors of a real ruleset. From 64 rules
 *            on one tuple group (compile.h); --tuple-min 0 keeps the N slots
 *   dense N  "-s 172.(16+i%61).0.0/16 -p udp --sport 2000+i%97 --dport 1000+i%89":
 *            every field value matches ~N/89 rules or more: the adversarial case
 *            for the bit vectors (test/dataplane's benchmark)
 *   pairs N  "-s 172.(16+s/256).(s%256).0/24 -d 10.1.0.(1+i%3) -p udp --dport
 *            1024+i%509", s = i%1021 (--dense-max too): mixed with a destination
 *            that varies too (the namespace's three addresses), host-to-host
 *            service rules; one tuple group (IPv6 too since ABI 26: before, a
 *            run of -p rules varying in both addresses was N slots there)
 *   deny N   "-s CIDR" random, 10% /24, 1% /16, the rest /32: a deny list, one
 *            group slot (group_min on) or N slots (--group-min 0 turns it off)
 *   denyacc N  the deny list, then "-s 10.9.0.1 -p udp --dport 9000 -j ACCEPT":
 *            another rule names a source, so the source field has a set too
 *            (not with --group-min)
 *   chains N  N user chains of two rules, "-p udp --sport 1024+i%30000 -j DROP"
 *            and "-j ACCEPT", INPUT jumping to chain i from "-s 172.16.0.0+i/32 -p
 *            udp --dport 53" (the shape of kube-proxy's and Docker's chains;
 *            --chain-sizes, none by default): "first" and "last" jump to chain 0 /
 *            N-1 and are dropped there, "none-worst" jumps to N-1 and is accepted
 *            by its second rule, "none" jumps nowhere
 *   kube N   the same chains, INPUT's jump to chain i from "-s 172.16.0.0+i/32 -p
 *            udp --dport P" with P 53, 80, 443, 8080 in turn (kube-proxy's
 *            KUBE-SERVICES: an address and a port a service; a tuple group
 *            whose rules each jump to their own chain; --kube-sizes)
 *   mixedhead N  the mixed rules behind "-i lo -j ACCEPT" and "-p tcp --dport 22
 *            -j ACCEPT" (--head-sizes, none by default): a large block among a
 *            few plain rules, as most real chains hold one; the same packets.
 *            --head RULES and --tail RULES (restore lines, "-A INPUT ...\n")
 *            put other rules before and after it
 *   host N   a host's firewall, policy DROP: "--ctstate ESTABLISHED,RELATED
 *            -j ACCEPT", "-i lo -j ACCEPT", "--ctstate INVALID -j DROP", the deny
 *            list of N entries, then ICMP echo, tcp 22, 80, 443 and udp 53
 *            accepted (--host-sizes; conntrack on)
 * Packets (UDP, 64 bytes, to the namespace's own address): "first" matches rule
 * 0, "last" only the last rule, "none" no rule with a source no rule names, and
 * "none-worst" no rule though its source and ports each match many rules. For
 * host: "first" is the reply of a connection this host opened (OUTPUT, through
 * the tc egress program, before the runs): ESTABLISHED; "last" a new flow to
 * udp 53, accepted (NEW: its connection exists but saw no reply); "none" a new
 * flow to a closed port, dropped by the policy (no connection is written);
 * "listed" a source of the deny list. "spread" (deny, denyacc, host and the
 * mixed rules among others, mixedhead): SPREAD_N sources drawn at random from
 * the deny list's range (11.0.0.0 - 191.255.255.255, the same sources in every
 * run and row), what a packet from anywhere costs on average, a folded list's
 * filter included (its collisions, the blocks its prefixes share with other
 * addresses); its ns is the mean of the sources' (each --repeat packets), its
 * verdicts not checked (a source may be listed).
 * Conntrack on: "-m conntrack --ctstate INVALID -j DROP" after the N rules.
 * --family 6: the same rulesets and packets in IPv6 (bpf-ip6tables): IPv4 address
 * a.b.c.d/p becomes 2001:db8:aabb:ccdd::/(32 + p), so every prefix relation is
 * kept, and host's ICMP echo rule is ICMPv6's; rows are named mixed6, dense6,
 * deny6, host6, ...
 * The floor: a program that only returns pass, XDP and tc; and one that makes ten
 * calls first (row floor,10,calls: what a call and its return cost here).
 *
 * Output, CSV on stdout: ruleset,rules,packet,hook,ct,ns,install_ms,map_bytes
 * (ns: the best of --runs (8) runs of --repeat packets, 40 ms apart, the runs of one
 * ruleset's packets and hooks taken in turn, so a cell's runs spread over seconds; map_bytes:
 * memlock of every map of the instance, both generations).
 * --forwarding: the namespace forwards (a router): the chain selector's route
 * lookup then walks the FIB for every packet the route memo does not answer.
 * The programs have the parts (BPFIPT_FEAT_*) their ruleset needs, as a
 * namespace's first command loads them (dp_inst_fit()); --all-parts: every part
 * (a namespace whose rulesets needed them all once), as pktcost did until
 * 2026-12-02. install_ms: compile, install and the programs' load.
 * In the environment: PKTCOST_RUNLOG=1 writes every run of every cell to stderr
 * (a cell's spread beside its best); PKTCOST_REGEN=N measures each ruleset's
 * none-worst packet under one load of its programs N times, installing it
 * again between them (regen_levels()); PKTCOST_HOLD (run_cells()).
 * Usage: pktcost [--repeat N] [--sizes a,b,c] [--deny-sizes a,b] [--dense-max N]
 *                [--group-min N] [--tuple-min N] [--no-ct] [--family 6] [--forwarding] [--runs N]
 *                [--packets first,last,none,none-worst,listed,spread] [--hook xdp|tc]
 *                [--host-sizes a,b] [--chain-sizes a,b] [--kube-sizes a,b]
 *                [--head-sizes a,b] [--head RULES] [--tail RULES] [--all-parts]
 *                (root; a namespace of its own)
 *        pktcost --running   the map bytes of the instance running in this namespace
 *        pktcost --verified  CSV program,verified_insns,xlated_insns of its programs:
 *                            what the verifier processed when they were loaded
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "compile.h"
#include "loader.h"
#include "rtlocal.h"
#include "restore.h"
#include "strbuf.h"
#include "csum.h"
#include "xdp_hold.h"

static unsigned int repeat = 20000;
static unsigned int runs = 8;		/* --runs */
static bool runlog;			/* PKTCOST_RUNLOG: every run's ns on stderr */
static unsigned int group_min;		/* 0: the compiler's default */
static unsigned int tuple_min;		/* 0: the compiler's default */
static int ifindex;			/* vA: the packets arrive on it */
static int family = 4;			/* --family */
static bool forwarding;			/* --forwarding: the namespace routes */
static const char *only_packets;	/* --packets: a list of packet names */
static const char *only_hook;		/* --hook: xdp or tc */
static bool all_parts;			/* --all-parts: every BPFIPT_FEAT_* */
static __u8 ifmac[6];

static void die(const char *what)
{
	fprintf(stderr, "pktcost: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ------------------------------------------------------------ packets ---- */

/* IPv4 address a (network order) in the IPv6 form of --family 6 (host bits
 * after the /64 set to ::1). */
static void v6_of(__be32 a, __u8 out[16], bool host)
{
	static const __u8 base[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	memcpy(out, base, 16);
	memcpy(out + 4, &a, 4);
	out[15] = host;
}

/* A 64-byte frame (--family 6: 80 bytes): Ethernet to vA, src -> dst (0: 10.1.0.1;
 * or their IPv6 forms), UDP sport -> dport. */
static size_t packet(__u8 *buf, __be32 src, __be32 dst, __u16 sport, __u16 dport)
{
	struct ethhdr *eth = (void *)buf;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	size_t len = 64;

	if (!dst)
		dst = inet_addr("10.1.0.1");
	if (family == 6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		len = 80;
		memset(buf, 0, len);
		memcpy(eth->h_dest, ifmac, 6);
		memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x02", 6);
		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->payload_len = htons(len - sizeof(*eth) - sizeof(*ip6));
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		v6_of(src, ip6->saddr.s6_addr, true);
		v6_of(dst, ip6->daddr.s6_addr, true);
		udp = (void *)(ip6 + 1);
		udp->source = htons(sport);
		udp->dest = htons(dport);
		udp->len = ip6->payload_len;
		return len;
	}
	memset(buf, 0, len);
	memcpy(eth->h_dest, ifmac, 6);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x02", 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(len - sizeof(*eth));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = src;
	ip->daddr = dst;
	ip->check = ipt_csum(ip, sizeof(*ip));
	udp->source = htons(sport);
	udp->dest = htons(dport);
	udp->len = htons(len - sizeof(*eth) - sizeof(*ip));
	return len;
}

/* ------------------------------------------------------------ rulesets ---- */

static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng >> 32;
}

enum kind { MIXED, DENY, DENSE, DENYACC, HOST, PAIRS, CHAINS, KUBE, HEAD, KIND_MAX };
static const char *const kind_name[KIND_MAX] = { "mixed", "deny", "dense", "denyacc", "host",
						 "pairs", "chains", "kube", "mixedhead" };

struct pk {
	__be32 src;
	__u16 sport, dport;
	bool drop;		/* the verdict expected */
	__be32 dst;		/* 0: 10.1.0.1 */
};

/* The packets of a ruleset: first, last, none, none-worst, listed (.src = 0:
 * not defined for it). */
enum { P_FIRST, P_LAST, P_NONE, P_WORST, P_LISTED, P_SPREAD, P_MAX };
static const char *const pk_name[P_MAX] = { "first", "last", "none", "none-worst", "listed",
					     "spread" };

/* "spread": its sources, source i of SPREAD_N (network order) */
#define SPREAD_N	32

static __be32 spread_src(unsigned int i)
{
	__u64 h = (i + 1) * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return htonl(0x0b000000 + (__u32)(h % (0xc0000000u - 0x0b000000u)));
}

static __be32 a4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return htonl(a << 24 | b << 16 | c << 8 | d);
}

/* name is in the comma-separated list (NULL: every name is) */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; s; s = strchr(s, ','), s = s ? s + 1 : NULL)
		if (!strncmp(s, name, n) && (s[n] == ',' || !s[n]))
			return true;
	return !list;
}

static void mixed_rule(unsigned int i, unsigned int *s, unsigned int *port)
{
	*s = i % 1021;
	*port = 1024 + i % 509;
}

static void dense_rule(unsigned int i, unsigned int *s, unsigned int *sp, unsigned int *dp)
{
	*s = i % 61;
	*sp = 2000 + i % 97;
	*dp = 1000 + i % 89;
}

/* A port of mixed's (1024 + i % 509) that some rule of n has and rules 0, step,
 * 2 step, ... do not; 0: none. */
static unsigned int unused_port(unsigned int n, unsigned int step)
{
	for (unsigned int p = 1024 + 1; p < 1024 + 509 && p - 1024 < n; p++) {
		bool used = false;

		for (unsigned int i = 0; i < n && !used; i += step)
			used = 1024 + i % 509 == p;
		if (!used)
			return p;
	}
	return 0;
}

/* pairs: mixed's source and port, and a destination of PAIRS_DSTS (local
 * addresses 10.1.0.1 ..) */
#define PAIRS_DSTS	3

static void pairs_rule(unsigned int i, unsigned int *s, unsigned int *d, unsigned int *port)
{
	mixed_rule(i, s, port);
	*d = i % PAIRS_DSTS;
}

/* chains: the source of INPUT's jump to chain i, and the source port chain i
 * drops */
#define CHAIN_SRC(i)	(0xac100000u + (i))
#define CHAIN_SPORT(i)	(1024 + (i) % 30000)
/* kube: INPUT's jump to chain i names a port too (a tuple run, kube-proxy's
 * KUBE-SERVICES: an address and a port a service) */
#define KUBE_DPORT(i)	((const unsigned int[]){ 53, 80, 443, 8080 }[(i) % 4])

/* " -s a.b.c.d/plen" (opt "-s", host order a), or its IPv6 form (--family 6) */
static void addr_opt(struct strbuf *sb, const char *opt, __u32 a, int plen)
{
	char buf[64];
	__u8 v6[16];

	if (family == 6) {
		v6_of(htonl(a), v6, false);
		inet_ntop(AF_INET6, v6, buf, sizeof(buf));
		sb_addf(sb, " %s %s/%d", opt, buf, 32 + plen);
		return;
	}
	sb_addf(sb, " %s %u.%u.%u.%u/%d", opt, a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
		plen);
}

/* "-A INPUT -s a.b.c.d/plen" */
static void src_opt(struct strbuf *sb, __u32 a, int plen)
{
	sb_adds(sb, "-A INPUT");
	addr_opt(sb, "-s", a, plen);
}

/* mixedhead's rules before and after the mixed ones (--head, --tail) */
static const char *head_rules = "-A INPUT -i lo -j ACCEPT\n-A INPUT -p tcp --dport 22 -j ACCEPT\n";
static const char *tail_rules = "";

static char *ruleset(enum kind k, unsigned int n, bool ct, struct pk pk[P_MAX])
{
	struct strbuf sb = STRBUF_INIT;
	unsigned int s, p, sp, dp, d;
	__be32 last = 0;

	memset(pk, 0, sizeof(struct pk) * P_MAX);
	sb_addf(&sb, "*filter\n:INPUT %s [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n",
		k == HOST ? "DROP" : "ACCEPT");
	if (k == HOST)
		sb_adds(&sb, "-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
			     "-A INPUT -i lo -j ACCEPT\n"
			     "-A INPUT -m conntrack --ctstate INVALID -j DROP\n");
	if (k == HEAD)
		sb_adds(&sb, head_rules);
	for (unsigned int i = 0; (k == CHAINS || k == KUBE) && i < n; i++)
		sb_addf(&sb, ":SVC-%05u - [0:0]\n", i);
	rng = 0x9e3779b97f4a7c15ULL;
	for (unsigned int i = 0; i < n; i++) {
		switch (k) {
		case CHAINS:
		case KUBE:
			src_opt(&sb, CHAIN_SRC(i), 32);
			sb_addf(&sb, " -p udp --dport %u -j SVC-%05u\n",
				k == KUBE ? KUBE_DPORT(i) : 53, i);
			break;
		case MIXED:
		case HEAD:
			mixed_rule(i, &s, &p);
			src_opt(&sb, 172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8, 24);
			sb_addf(&sb, " -p udp --dport %u -j DROP\n", p);
			break;
		case DENSE:
			dense_rule(i, &s, &sp, &dp);
			src_opt(&sb, 172u << 24 | (16 + s) << 16, 16);
			sb_addf(&sb, " -p udp --sport %u --dport %u -j DROP\n", sp, dp);
			break;
		case PAIRS:
			pairs_rule(i, &s, &d, &p);
			src_opt(&sb, 172u << 24 | (16 + s / 256) << 16 | (s % 256) << 8, 24);
			addr_opt(&sb, "-d", 0x0a010001 + d, 32);
			sb_addf(&sb, " -p udp --dport %u -j DROP\n", p);
			break;
		default: {
			/* 11.0.0.0 .. 191.255.255.255: never 10/8 (ours) nor 192.168/16
			 * (the "none" packet) */
			__u32 a = 0x0b000000 + rnd() % (0xc0000000 - 0x0b000000), r = rnd() % 100;
			int plen = r == 0 ? 16 : r < 11 ? 24 : 32;

			a &= plen == 32 ? ~0u : ~0u << (32 - plen);
			src_opt(&sb, a, plen);
			sb_adds(&sb, " -j DROP\n");
			if (i == 0)
				pk[P_FIRST].src = htonl(a | (plen < 32));
			last = htonl(a | (plen < 32));
		}
		}
	}
	for (unsigned int i = 0; (k == CHAINS || k == KUBE) && i < n; i++)
		sb_addf(&sb, "-A SVC-%05u -p udp --sport %u -j DROP\n-A SVC-%05u -j ACCEPT\n", i,
			CHAIN_SPORT(i), i);
	if (k == DENYACC) {
		src_opt(&sb, 0x0a090001, 32);
		sb_adds(&sb, " -p udp --dport 9000 -j ACCEPT\n");
	}
	if (k == HOST) {
		sb_adds(&sb, family == 6 ? "-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 "
					   "-j ACCEPT\n"
					 : "-A INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT\n");
		sb_adds(&sb, "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
			     "-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n"
			     "-A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n"
			     "-A INPUT -p udp -m udp --dport 53 -j ACCEPT\n");
	} else if (ct)
		sb_adds(&sb, "-A INPUT -m conntrack --ctstate INVALID -j DROP\n");
	if (k == HEAD)
		sb_adds(&sb, tail_rules);
	sb_adds(&sb, "COMMIT\n");

	switch (k) {
	case MIXED:
	case HEAD:
		pk[P_FIRST] = (struct pk){ .src = a4(172, 16, 0, 1),
					   .sport = 40000, .dport = 1024 };
		mixed_rule(n - 1, &s, &p);
		pk[P_LAST] = (struct pk){ .src = a4(172, 16 + s / 256, s % 256, 1),
					  .sport = 40000, .dport = p };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1),
					  .sport = 40000, .dport = 1024 };
		if (k == HEAD)
			pk[P_SPREAD] = (struct pk){ .src = 1, .sport = 40000, .dport = 1024 };
		/* source of rule 0, a port some rule uses, never with that source */
		p = unused_port(n, 1021);
		if (p)
			pk[P_WORST] = (struct pk){ .src = a4(172, 16, 0, 1),
						   .sport = 40000, .dport = p };
		break;
	case PAIRS:
		pk[P_FIRST] = (struct pk){ .src = a4(172, 16, 0, 1),
					   .sport = 40000, .dport = 1024 };
		pairs_rule(n - 1, &s, &d, &p);
		pk[P_LAST] = (struct pk){ .src = a4(172, 16 + s / 256, s % 256, 1),
					  .sport = 40000, .dport = p, .dst = a4(10, 1, 0, 1 + d) };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1),
					  .sport = 40000, .dport = 1024 };
		/* rule 0's source and destination (each in many rules, together in
		 * rules 3063k), a port some rule uses, never with both */
		p = unused_port(n, 1021 * PAIRS_DSTS);
		if (p)
			pk[P_WORST] = (struct pk){ .src = a4(172, 16, 0, 1),
						   .sport = 40000, .dport = p };
		break;
	case DENSE:
		pk[P_FIRST] = (struct pk){ .src = a4(172, 16, 0, 1), .sport = 2000, .dport = 1000 };
		dense_rule(n - 1, &s, &sp, &dp);
		pk[P_LAST] = (struct pk){ .src = a4(172, 16 + s, 1, 1), .sport = sp, .dport = dp };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1), .sport = 2000, .dport = 1000 };
		/* a source, sport and dport each in many rules, never together */
		for (unsigned int t = 0; t < 526917 && !pk[P_WORST].src; t++) {
			unsigned int ws = t % 61, wsp = 2000 + t % 97, wdp = 1000 + t % 89;
			bool used = false;

			if (ws >= n || t % 97 >= n || t % 89 >= n)
				continue;
			/* rules with source ws are i = ws + 61j */
			for (unsigned int i = ws; i < n && !used; i += 61)
				used = 2000 + i % 97 == wsp && 1000 + i % 89 == wdp;
			if (!used)
				pk[P_WORST] = (struct pk){ .src = a4(172, 16 + ws, 1, 1),
							   .sport = wsp, .dport = wdp };
		}
		break;
	case CHAINS:
	case KUBE:
		d = k == KUBE ? KUBE_DPORT(n - 1) : 53;
		pk[P_FIRST] = (struct pk){ .src = htonl(CHAIN_SRC(0)), .sport = CHAIN_SPORT(0),
					   .dport = 53 };
		pk[P_LAST] = (struct pk){ .src = htonl(CHAIN_SRC(n - 1)),
					  .sport = CHAIN_SPORT(n - 1), .dport = d };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1), .sport = 40000, .dport = 53 };
		/* the last chain's jump, and its second rule (ACCEPT) */
		pk[P_WORST] = (struct pk){ .src = htonl(CHAIN_SRC(n - 1)), .sport = 40000,
					   .dport = d };
		break;
	case HOST:
		/* the reply of 10.1.0.1:40000 -> 192.168.7.7:443 (primed) */
		pk[P_FIRST] = (struct pk){ .src = a4(192, 168, 7, 7),
					   .sport = 443, .dport = 40000 };
		pk[P_LAST] = (struct pk){ .src = a4(192, 168, 1, 1), .sport = 40000, .dport = 53 };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1),
					  .sport = 40000, .dport = 9999, .drop = true };
		pk[P_LISTED] = (struct pk){ .src = last,
					    .sport = 40000, .dport = 53, .drop = true };
		pk[P_SPREAD] = (struct pk){ .src = 1, .sport = 40000, .dport = 9999 };
		return sb.buf;
	default:
		pk[P_LAST] = (struct pk){ .src = last, .sport = 40000, .dport = 53 };
		pk[P_NONE] = (struct pk){ .src = a4(192, 168, 1, 1), .sport = 40000, .dport = 53 };
		pk[P_FIRST].sport = 40000;
		pk[P_FIRST].dport = 53;
		pk[P_SPREAD] = (struct pk){ .src = 1, .sport = 40000, .dport = 53 };
		break;
	}
	pk[P_FIRST].drop = pk[P_LAST].drop = true;	/* every rule is -j DROP */
	return sb.buf;
}

/* ------------------------------------------------------------ running ---- */

/* The best of `runs` runs of `repeat` packets, RUN_GAP_US apart; checks the
 * verdict. The gaps: on this machine (a VM on shared cores) the cost of a
 * program moves between two levels, ~30% apart, for stretches of tens of
 * milliseconds to seconds; back-to-back runs all fall into the same one. */
#define RUN_GAP_US	40000

/* One run of `repeat` packets: ns per packet; checks the verdict. */
static double run_once(int fd, bool xdp, const __u8 *buf, size_t len, int want)
{
	struct __sk_buff ctx = { .ifindex = ifindex, .ingress_ifindex = ifindex };
	struct xdp_md xctx = { .ingress_ifindex = ifindex, .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = repeat);

	if (xdp) {
		o.ctx_in = &xctx;
		o.ctx_size_in = sizeof(xctx);
	} else {
		o.ctx_in = &ctx;
		o.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(fd, &o))
		die("bpf_prog_test_run_opts");
	if (want >= 0 && (int)o.retval != want) {
		fprintf(stderr, "pktcost: verdict %u, expected %d\n", o.retval, want);
		exit(1);
	}
	return o.duration;
}

/* The XDP programs held in the kernel's XDP dispatcher for their runs
 * (bench/xdp_hold.h): at most HOLD_MAX at once (the dispatcher has 48 places);
 * the others go in and out per run (all of them with PKTCOST_HOLD=0 in the
 * environment; PKTCOST_HOLD=N holds N). */
#define HOLD_MAX	16
static unsigned int hold_max = HOLD_MAX;
static unsigned int nheld;

static void hold(int fd, struct xdp_hold *h)
{
	*h = (struct xdp_hold){ -1, -1 };
	if (nheld >= hold_max)
		return;
	xdp_hold(fd, h);
	nheld += h->link >= 0;
}

static void unhold(struct xdp_hold *h)
{
	nheld -= h->link >= 0;
	xdp_unhold(h);
}

static double run(int fd, bool xdp, const __u8 *buf, size_t len, int want)
{
	struct xdp_hold h = { -1, -1 };
	double best = 1e18;

	if (xdp)
		hold(fd, &h);
	for (unsigned int i = 0; i < runs; i++) {
		double ns;

		if (i)
			usleep(RUN_GAP_US);
		ns = run_once(fd, xdp, buf, len, want);
		if (ns < best)
			best = ns;
	}
	unhold(&h);
	return best;
}

/* Bytes of every map of the instance: the maps of its programs (prog_fd[],
 * -1 = none) and the inner maps of both generations of the outer ones. */
static unsigned long long map_bytes(const int *prog_fd, int nprogs)
{
	__u32 seen[128];
	unsigned int nseen = 0;
	unsigned long long sum = 0;

	for (int p = 0; p < nprogs; p++) {
		struct bpf_prog_info info = {};
		__u32 ids[64], len = sizeof(info);

		if (prog_fd[p] < 0)
			continue;
		info.nr_map_ids = 64;
		info.map_ids = (__u64)(unsigned long)ids;
		if (bpf_obj_get_info_by_fd(prog_fd[p], &info, &len))
			die("prog info");
		for (__u32 i = 0; i < info.nr_map_ids && i < 64; i++) {
			struct bpf_map_info mi = {};
			__u32 ml = sizeof(mi);
			unsigned int j;
			int fd;

			for (j = 0; j < nseen && seen[j] != ids[i]; j++)
				;
			if (j < nseen || nseen == 128)
				continue;
			seen[nseen++] = ids[i];
			fd = bpf_map_get_fd_by_id(ids[i]);
			if (fd < 0)
				continue;
			sum += dp_map_memlock(fd);
			if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) &&
			    mi.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
				for (__u32 k = 0; k < mi.max_entries; k++) {
					__u32 inner;
					int ifd;

					if (bpf_map_lookup_elem(fd, &k, &inner))
						continue;
					ifd = bpf_map_get_fd_by_id(inner);
					if (ifd >= 0) {
						sum += dp_map_memlock(ifd);
						close(ifd);
					}
				}
			}
			close(fd);
		}
	}
	return sum;
}

/* --running: the bytes of the instance running in this namespace; --verified:
 * its programs' verifier counts. */
static int running(bool verified)
{
	static const enum dp_prog progs[] = { DP_PROG_TC_OUT, DP_PROG_TC_IN, DP_PROG_XDP,
					      DP_PROG_TC_IN3, DP_PROG_TC_OUT3 };
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	int fds[5];

	if (dp_inst_open(&in, &err) || !in) {
		fprintf(stderr, "pktcost: no running instance: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < 5; i++)
		fds[i] = dp_inst_prog_fd(in, progs[i]);
	if (!verified)
		printf("%llu\n", map_bytes(fds, 5));
	for (int i = 0; verified && i < 5; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (fds[i] < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fds[i], &info, &len))
			die("prog info");
		printf("%s,%u,%u\n", info.name, info.verified_insns,
		       info.xlated_prog_len / 8);
	}
	dp_inst_free(&in);
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The connection whose reply is *reply: its first packet, 10.1.0.1 -> the
 * reply's source, sent through OUTPUT (the tc egress program, as a local
 * socket's packet: no ingress device), which accepts it and writes the
 * connection. */
static void prime(struct dp_inst *in, const struct pk *reply)
{
	struct __sk_buff ctx = { .ifindex = ifindex };
	__u8 buf[128];
	size_t len = packet(buf, inet_addr("10.1.0.1"), reply->src, reply->dport, reply->sport);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));

	if (bpf_prog_test_run_opts(dp_inst_prog_fd(in, DP_PROG_TC_OUT), &o))
		die("priming the connection (OUTPUT)");
	if ((int)o.retval != TC_ACT_OK) {
		fprintf(stderr, "pktcost: OUTPUT dropped the connection's first packet (%d)\n",
			o.retval);
		exit(1);
	}
}

/* One ruleset: compile, install in a fresh instance, every packet x hook. */
/* One row of the output: a ruleset's instance, a packet, a hook. */
struct cell {
	enum kind k;
	unsigned int n;
	bool ct, xdp;
	int p, fd, want;
	unsigned int nbuf;		/* its packets: 1, or SPREAD_N ("spread") */
	size_t len[SPREAD_N];
	__u8 buf[SPREAD_N][128];
	double install_ms, best;
	unsigned long long bytes;
};
static struct cell *cells;
static size_t ncells;
static struct dp_inst **insts;
static size_t ninst;

/* PKTCOST_REGEN=N: where a load's level comes from. The XDP program's cost of
 * the none-worst packet (the best of 15 runs, 20 ms apart) under one load of the
 * programs, measured N times, the same ruleset installed again between them
 * (its next generation: the maps written anew, the programs kept); on stderr.
 * Loads of the same programs differ by more than generations do (docs/
 * performance.md, "Where a load's level comes from"). */
static void regen_levels(struct dp_inst *in, const struct cp_compiled *cc, const struct pk *w,
			 int n)
{
	int fd = dp_inst_prog_fd(in, DP_PROG_XDP);
	struct xdp_hold h = { -1, -1 };
	struct ipt_err err = { 0 };
	__u8 buf[256];
	size_t len;

	len = packet(buf, w->src, w->dst, w->sport, w->dport);
	hold(fd, &h);
	for (int g = 0; g < n; g++) {
		double best = 1e18, v;

		for (int r = 0; r < 15; r++) {
			usleep(20000);
			v = run_once(fd, true, buf, len, XDP_PASS);
			if (v < best)
				best = v;
		}
		fprintf(stderr, "pktcost: generation %d none-worst xdp %.1f\n", g, best);
		if (g + 1 < n && dp_inst_install(in, cc, NULL, 0, NULL, 0, &err))
			die("install again");
	}
	unhold(&h);
}

static void measure(enum kind k, unsigned int n, bool ct)
{
	static const struct cp_link links[] = { { 1, "lo" } };
	struct ipt_restore_opts ro = { .prog = "pktcost" };
	struct cp_env env = { links, 1, group_min, 0, tuple_min };
	struct ipt_table *t = NULL;
	struct cp_compiled *cc = NULL;
	struct dp_inst *in = NULL;
	struct ipt_err err = { 0 };
	struct pk pk[P_MAX];
	unsigned int line = 0;
	struct timespec t0;
	double install_ms;
	unsigned long long bytes;
	unsigned int progs;
	char *text;

	text = ruleset(k, n, ct, pk);
	ipt_af = family == 6 ? AF_INET6 : AF_INET;
	if (ipt_table_new(&t) || ipt_restore(text, strlen(text), &t, &ro, &err, &line)) {
		fprintf(stderr, "pktcost: restore: line %u: %s\n", line, err.msg);
		exit(1);
	}
	free(text);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (cp_compile(t, &env, &cc, &err)) {
		fprintf(stderr, "pktcost: compile %s %u: %s\n", kind_name[k], n, err.msg);
		ipt_table_free(&t);
		return;
	}
	progs = 1u << DP_PROG_XDP | 1u << DP_PROG_TC_IN | (k == HOST ? 1u << DP_PROG_TC_OUT : 0);
	/* the programs with the parts the ruleset needs, as a namespace's first
	 * command loads them (--all-parts: with every part, loaded first) */
	if (dp_inst_create(&in, all_parts ? progs : 0, &err) ||
	    dp_inst_install(in, cc, NULL, 0, NULL, 0, &err) ||
	    (!all_parts && dp_inst_fit(in, progs, &err))) {
		fprintf(stderr, "pktcost: load %s %u: %s\n", kind_name[k], n, err.msg);
		exit(1);
	}
	install_ms = ms_since(&t0);
	/* -m addrtype (a --head's) reads the namespace's local table, which
	 * dp_load() writes before the switch */
	{
		struct cp_rt *rt = NULL;
		unsigned int nrt = 0;

		if (cp_rtlocal_read(&rt, &nrt, &err) ||
		    cp_rtlocal_write(dp_inst_rtlocal_fd(in), rt, nrt, &err)) {
			fprintf(stderr, "pktcost: local table: %s\n", err.msg);
			exit(1);
		}
		free(rt);
	}
	if (k == HOST)
		prime(in, &pk[P_FIRST]);
	if (getenv("PKTCOST_REGEN") && pk[P_WORST].src)
		regen_levels(in, cc, &pk[P_WORST], atoi(getenv("PKTCOST_REGEN")));
	{
		int fds[2] = { dp_inst_prog_fd(in, DP_PROG_XDP), dp_inst_prog_fd(in, DP_PROG_TC_IN) };

		bytes = map_bytes(fds, 2);
	}
	/* its cells (packet x hook), measured with every other ruleset's by
	 * run_cells() */
	for (int p = 0; p < P_MAX; p++) {
		if (!pk[p].src || !listed(only_packets, pk_name[p]))
			continue;
		for (int xdp = 1; xdp >= 0; xdp--) {
			bool drop = pk[p].drop;
			struct cell *c;

			if (!listed(only_hook, xdp ? "xdp" : "tc"))
				continue;
			if (ncells % 64 == 0)
				cells = realloc(cells, (ncells + 64) * sizeof(*cells));
			if (!cells)
				die("realloc");
			c = &cells[ncells++];
			*c = (struct cell){ .k = k, .n = n, .ct = ct, .p = p, .xdp = xdp,
					    .fd = dp_inst_prog_fd(in, xdp ? DP_PROG_XDP : DP_PROG_TC_IN),
					    .want = xdp ? (drop ? XDP_DROP : XDP_PASS)
							: (drop ? TC_ACT_SHOT : TC_ACT_OK),
					    .install_ms = install_ms, .bytes = bytes, .best = 1e18,
					    .nbuf = p == P_SPREAD ? SPREAD_N : 1 };
			if (p == P_SPREAD)
				c->want = -1;
			for (unsigned int b = 0; b < c->nbuf; b++) {
				__be32 src = p == P_SPREAD ? spread_src(b) : pk[p].src;

				c->len[b] = packet(c->buf[b], src, pk[p].dst, pk[p].sport,
						   pk[p].dport);
			}
		}
	}
	if (ninst % 16 == 0)
		insts = realloc(insts, (ninst + 16) * sizeof(*insts));
	if (!insts)
		die("realloc");
	insts[ninst++] = in;		/* kept until the cells are measured */
	cp_compiled_free(&cc);
	ipt_table_free(&t);
}

/* Every cell's runs: run i of each cell in turn, then run i + 1, so that the runs
 * of one cell spread over the whole measurement (tens of seconds) instead of the
 * few hundred milliseconds back-to-back runs take; then the rows, in order. */
static void run_cells(void)
{
	struct xdp_hold *held = calloc(ncells + 1, sizeof(*held));
	int last = -1;

	if (!held)
		die("calloc");
	for (size_t j = 0; j < ncells; j++) {	/* an instance's cells are adjacent */
		held[j] = (struct xdp_hold){ -1, -1 };
		if (cells[j].xdp && cells[j].fd != last) {
			hold(cells[j].fd, &held[j]);
			last = cells[j].fd;
		}
	}
	for (unsigned int i = 0; i < runs; i++) {
		if (i)
			usleep(RUN_GAP_US);
		for (size_t j = 0; j < ncells; j++) {
			struct cell *c = &cells[j];
			double ns = 0;

			for (unsigned int b = 0; b < c->nbuf; b++)
				ns += run_once(c->fd, c->xdp, c->buf[b], c->len[b], c->want) /
				      c->nbuf;

			if (runlog)
				fprintf(stderr, "pktcost: run %u %s,%u,%s,%s %.1f\n", i,
					kind_name[c->k], c->n, pk_name[c->p], c->xdp ? "xdp" : "tc", ns);
			if (ns < c->best)
				c->best = ns;
		}
	}
	for (size_t j = 0; j < ncells; j++)
		unhold(&held[j]);
	free(held);
	for (size_t j = 0; j < ncells; j++) {
		const struct cell *c = &cells[j];

		printf("%s%s,%u,%s,%s,%s,%.1f,%.1f,%llu\n", kind_name[c->k],
		       family == 6 ? "6" : "", c->n, pk_name[c->p], c->xdp ? "xdp" : "tc",
		       c->ct ? "on" : "off", c->best, c->install_ms, c->bytes);
	}
	fflush(stdout);
	for (size_t j = 0; j < ninst; j++)
		dp_inst_free(&insts[j]);
}

/* The floor: programs that only return "pass"; and an XDP one that first calls
 * a function of its own FLOOR_CALLS times (a call and its return: where the
 * kernel's returns are costly, AMD's Safe RET, each call of the data plane's
 * global functions and each map lookup it does not inline costs that). */
#define FLOOR_CALLS 10
static void floor_progs(void)
{
	struct bpf_insn xdp[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn tc[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = TC_ACT_OK },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn calls[FLOOR_CALLS + 4];
	int fx = bpf_prog_load(BPF_PROG_TYPE_XDP, "floor_xdp", "GPL", xdp, 2, NULL);
	int ft = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "floor_tc", "GPL", tc, 2, NULL);
	int fc;
	__u8 buf[128];
	size_t len = packet(buf, a4(192, 168, 1, 1), 0, 40000, 53);

	/* the calls, return pass; the function after them: r0 = 0, return */
	for (int i = 0; i < FLOOR_CALLS; i++)
		calls[i] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
					      .src_reg = BPF_PSEUDO_CALL,
					      .imm = FLOOR_CALLS + 1 - i };
	calls[FLOOR_CALLS] = xdp[0];
	calls[FLOOR_CALLS + 1] = xdp[1];
	calls[FLOOR_CALLS + 2] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K };
	calls[FLOOR_CALLS + 3] = xdp[1];
	fc = bpf_prog_load(BPF_PROG_TYPE_XDP, "floor_calls", "GPL", calls, FLOOR_CALLS + 4, NULL);
	if (fx < 0 || ft < 0 || fc < 0)
		die("loading the floor programs");
	printf("floor,0,any,xdp,off,%.1f,0,0\n", run(fx, true, buf, len, XDP_PASS));
	printf("floor,0,any,tc,off,%.1f,0,0\n", run(ft, false, buf, len, TC_ACT_OK));
	printf("floor,%d,calls,xdp,off,%.1f,0,0\n", FLOOR_CALLS, run(fc, true, buf, len, XDP_PASS));
	fflush(stdout);
	close(fx);
	close(ft);
	close(fc);
}

static void netns(void)
{
	struct ifreq ifr = { 0 };
	int s;

	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET) (root?)");
	if (system("ip link set lo up && ip link add vA type veth peer name vB && "
		   "ip addr add 10.1.0.1/24 dev vA && "
		   "ip addr add 2001:db8:a01:1::1/64 dev vA nodad && "
		   /* pairs' other destinations */
		   "ip addr add 10.1.0.2/32 dev vA && ip addr add 10.1.0.3/32 dev vA && "
		   "ip addr add 2001:db8:a01:2::1/128 dev vA nodad && "
		   "ip addr add 2001:db8:a01:3::1/128 dev vA nodad && "
		   "ip link set vA up && ip link set vB up"))
		die("setting up the namespace");
	if (forwarding && system("sysctl -qw net.ipv4.ip_forward=1 "
				 "net.ipv6.conf.all.forwarding=1"))
		die("turning forwarding on");
	ifindex = if_nametoindex("vA");
	s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "vA");
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR");
	memcpy(ifmac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
}

static int sizes(const char *s, unsigned int *v, int max)
{
	int n = 0;

	for (char *e; *s && n < max; s = *e ? e + 1 : e)
		v[n++] = strtoul(s, &e, 10);
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repeat", 1, 0, 'r' }, { "sizes", 1, 0, 's' }, { "deny-sizes", 1, 0, 'd' },
		{ "dense-max", 1, 0, 'm' }, { "group-min", 1, 0, 'g' }, { "no-ct", 0, 0, 'c' },
		{ "running", 0, 0, 'R' }, { "family", 1, 0, 'f' }, { "forwarding", 0, 0, 'F' },
		{ "runs", 1, 0, 'n' }, { "packets", 1, 0, 'p' }, { "hook", 1, 0, 'H' },
		{ "tuple-min", 1, 0, 'T' }, { "host-sizes", 1, 0, 'h' },
		{ "chain-sizes", 1, 0, 'C' }, { "kube-sizes", 1, 0, 'K' },
		{ "verified", 0, 0, 'V' }, { "head-sizes", 1, 0, 'E' },
		{ "head", 1, 0, 'A' }, { "tail", 1, 0, 'Z' }, { "all-parts", 0, 0, 'P' }, { 0 } };
	unsigned int sz[32] = { 10, 100, 1000, 2048, 10000, 100000 }, dz[32] = {
		10, 100, 1000, 10000, 100000, 1000000 }, hz[32] = { 10, 1000, 100000 }, cz[32], kz[32], ez[32];
	unsigned int dense_max = 100000;
	int nsz = 6, ndz = 6, nhz = 3, ncz = 0, nkz = 0, nez = 0, c;
	bool ct = true;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': repeat = strtoul(optarg, NULL, 10); break;
		case 's': nsz = sizes(optarg, sz, 32); break;
		case 'd': ndz = sizes(optarg, dz, 32); break;
		case 'h': nhz = sizes(optarg, hz, 32); break;
		case 'C': ncz = sizes(optarg, cz, 32); break;
		case 'K': nkz = sizes(optarg, kz, 32); break;
		case 'E': nez = sizes(optarg, ez, 32); break;
		case 'A': head_rules = optarg; break;
		case 'Z': tail_rules = optarg; break;
		case 'm': dense_max = strtoul(optarg, NULL, 10); break;
		case 'g': group_min = strtoul(optarg, NULL, 10); if (!group_min) group_min = ~0u; break;
		case 'T': tuple_min = strtoul(optarg, NULL, 10); if (!tuple_min) tuple_min = ~0u; break;
		case 'c': ct = false; break;
		case 'F': forwarding = true; break;
		case 'n': runs = strtoul(optarg, NULL, 10); if (!runs) runs = 1; break;
		case 'p': only_packets = optarg; break;
		case 'H': only_hook = optarg; break;
		case 'P': all_parts = true; break;
		case 'R': return running(false);
		case 'V': return running(true);
		case 'f':
			family = atoi(optarg);
			if (family != 4 && family != 6) {
				fprintf(stderr, "pktcost: --family 4 or 6\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: pktcost [--repeat N] [--sizes a,b] [--deny-sizes a,b] "
				"[--dense-max N] [--group-min N] [--tuple-min N] [--no-ct] [--family 6] "
				"[--forwarding] [--runs N] [--packets none,last] [--hook xdp|tc] "
				"[--host-sizes a,b] [--chain-sizes a,b] [--kube-sizes a,b] [--head-sizes a,b] "
				"[--head RULES] [--tail RULES] [--all-parts]\n");
			return 2;
		}
	}
	runlog = getenv("PKTCOST_RUNLOG") != NULL;
	if (getenv("PKTCOST_HOLD"))
		hold_max = atoi(getenv("PKTCOST_HOLD"));
	netns();
	printf("ruleset,rules,packet,hook,ct,ns,install_ms,map_bytes\n");
	floor_progs();
	for (int i = 0; i < nsz; i++) {
		measure(MIXED, sz[i], false);
		if (ct)
			measure(MIXED, sz[i], true);
		if (sz[i] <= dense_max) {
			measure(DENSE, sz[i], false);
			measure(PAIRS, sz[i], false);
		}
	}
	for (int i = 0; i < ndz; i++) {
		measure(DENY, dz[i], false);
		if (!group_min)		/* --group-min: grouping's own comparison, deny only */
			measure(DENYACC, dz[i], false);
	}
	for (int i = 0; i < nhz && ct; i++)
		measure(HOST, hz[i], true);
	for (int i = 0; i < ncz; i++)
		measure(CHAINS, cz[i], false);
	for (int i = 0; i < nkz; i++)
		measure(KUBE, kz[i], false);
	for (int i = 0; i < nez; i++)
		measure(HEAD, ez[i], false);
	run_cells();
	return 0;
}
