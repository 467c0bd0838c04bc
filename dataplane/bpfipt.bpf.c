// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane: chain selector and LBVS classifier (dataplane/bpfipt.h).
 *
 *   bpfipt_xdp     XDP ingress      INPUT / FORWARD (XDP mode; Ethernet devices, lo)
 *   bpfipt_tc_in   tc ingress       INPUT / FORWARD (where no XDP program is; and
 *                                   for rulesets that test the mark, which XDP
 *                                   cannot see)
 *   bpfipt_tc_out  tc egress        OUTPUT for locally generated packets
 *   bpfipt_tc_in3, bpfipt_tc_out3   the same for L3 devices (no Ethernet header)
 *   bpfipt_test    not attached     the classifier with the chain and interfaces
 *                                   given in skb->cb[0..2] (bpf_prog_test_run)
 *
 * A ruleset changes the maps, not the programs; each packet reads
 * bpfipt_inst.cur[its family] once and then uses only the inner maps of that
 * generation (see "Generations" in bpfipt.h). The programs are loaded again,
 * with more of their code, only when a ruleset first needs a part that their
 * namespace's never did (bpfipt_feat). IPv4 and IPv6 packets take the same
 * path: parse() fills struct pkt for either (parse6(): the extension headers),
 * and the classifier differs only in its address lookups (bpfipt_ival for IPv4,
 * bpfipt_ival6 for IPv6).
 *
 * The walk of bpfipt.h: classify() looks up each field that varies in the chain
 * (conf->lookup; the constant ones are folded by the loader into one vector per
 * chain, conf->cvec), then bpfipt_step() runs the slot loop, find_slot()
 * the AND: once per packet it ANDs the fields' chunk bitmaps (one bit per
 * 4096-slot chunk that is not all zero) to find the candidate chunks, and per
 * candidate chunk the summary words (one bit per 64-bit word that is not zero)
 * to visit only the candidate words. With many candidate chunks (a chain of
 * eight chunks or more), bpfipt_chunk_row() first ANDs the summary words of all
 * of them at once from the fields' summary rows, and the chunks where no word is
 * shared are not visited.
 *
 * Verifier notes (kernel >= 6.4; a namespace's first programs verify in 1k to
 * 230k instructions, by the parts its rulesets use: bpfipt_feat, FEAT()):
 *  - loops test may_goto (LOOP_UPTO(); open-coded iterators, bpf_for, on a
 *    kernel without it), so nwords up to BPFIPT_MAX_WORDS, BPFIPT_MAX_STEPS
 *    and the slot prefix's rules cost no unrolling;
 *  - bpfipt_step(), bpfipt_chunk_row() and bpfipt_ival_find() are global
 *    functions, checked once on their own; the walk's state (cursor, depth, stack, verdict) lives in the
 *    per-CPU scratch map, so the step loop carries nothing to converge on;
 *  - inside loops, loop-invariant scalars are re-read from memory (RD()): a value
 *    kept in a register or on the stack that a branch made exact (look & bit is 0
 *    or the bit) differs from path to path and the states never prune (12 such
 *    bits made 4096 paths, 255k instructions);
 *  - indexes into map values are masked to the value's size (w & 63, i & 15), and
 *    hidden from clang (asm) where it would turn them into running pointers;
 *  - the packet, the fib parameters and the vector ids live in the scratch map:
 *    the 512-byte stack is shared by the whole call chain;
 *  - clang 14 crashes lowering __builtin_ctzll for BPF: ctz is a de Bruijn table;
 *    it also emits only forward declarations for inner-map key/value types:
 *    see btf_anchor.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_recent.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "bpfipt.h"

#define AF_INET			2
#define AF_INET6		10
#define PACKET_OTHERHOST	3
#define LOOPBACK_IFINDEX	1	/* lo, in every namespace */
#define IPPROTO_DCCP_		33
#define IPPROTO_SCTP_		132
#define IPPROTO_UDPLITE_	136

/* Open-coded numeric iterator (kernel 6.4+). Declared here because libbpf 1.1's
 * bpf_helpers.h and the 6.1 uapi headers predate it. */
struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));
#ifndef BPFIPT_MAPS_ONLY
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __weak __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __weak __ksym;
#endif

/* What the route memo and IPv6's forwarding test (select_ingress()) read of the
 * kernel, with CO-RE: libbpf relocates the offsets to the running kernel's BTF,
 * and the verifier checks every load against it. */
struct ipv6_devconf___bpfipt {
	__s32 forwarding;
	__s32 force_forwarding;		/* 6.17 */
} __attribute__((preserve_access_index));

struct inet6_dev___bpfipt {
	struct ipv6_devconf___bpfipt cnf;
} __attribute__((preserve_access_index));

struct net___bpfipt {
	struct {
		struct {
			int counter;
		} rt_genid;		/* atomic_t: bumped by rt_cache_flush() */
		bool fib_has_custom_rules;	/* CONFIG_IP_MULTIPLE_TABLES */
		/* CONFIG_IP_ROUTE_MULTIPATH: what picks a multipath route's hop */
		__u8 sysctl_fib_multipath_hash_policy;
		__u8 sysctl_fib_multipath_use_neigh;
		struct {
			__u32 user_seed;
			__u32 mp_seed;
		} sysctl_fib_multipath_hash_seed;	/* 6.11 */
	} ipv4;
	struct {
		struct ipv6_devconf___bpfipt *devconf_all;
	} ipv6;
} __attribute__((preserve_access_index));

struct net_device___bpfipt {
	struct {
		struct net___bpfipt *net;
	} nd_net;
	struct inet6_dev___bpfipt *ip6_ptr;
} __attribute__((preserve_access_index));

struct xdp_rxq_info___bpfipt {
	struct net_device___bpfipt *dev;
} __attribute__((preserve_access_index));

struct xdp_buff___bpfipt {
	struct xdp_rxq_info___bpfipt *rxq;
} __attribute__((preserve_access_index));

struct sk_buff___bpfipt {
	struct net_device___bpfipt *dev;
} __attribute__((preserve_access_index));

#define bpf_for(i, start, end)							\
	for (struct bpf_iter_num ___it __attribute__((aligned(8),		\
				cleanup(bpf_iter_num_destroy))),		\
	     *___p __attribute__((unused)) =					\
		(bpf_iter_num_new(&___it, (start), (end)),			\
		 (void)bpf_iter_num_destroy, (void *)0);			\
	     ({ int *___t = bpf_iter_num_next(&___it);				\
		(___t && ((i) = *___t, (i) >= (start) && (i) < (end))); });)

char _license[] SEC("license") = "GPL";

/* Whether the kernel has may_goto (Linux >= 6.9), set by the loader before the
 * load (controlplane/loader.c, dp_may_goto()). Without it the loader turns each
 * may_goto into a plain conditional jump of the same target, in code the
 * verifier never follows, since this constant is 0 there (older kernels refuse
 * an opcode they do not know wherever it is). */
const volatile __u32 bpfipt_may_goto = 0;

/* 1 once the kernel's loop budget is spent, else 0: a may_goto
 * (BPFIPT_OP_MAY_GOTO; clang 14 has no mnemonic for it and crashes on asm
 * goto), which jumps when the budget is spent and otherwise counts an iteration
 * down on the stack. A loop that tests it verifies as an iterator's does: the
 * verifier stops where the loop's states repeat. */
#define STR_(x) #x
#define STR(x) STR_(x)
static __always_inline __attribute__((unused)) __u64 loop_spent(void)
{
	__u64 r;

	asm volatile("%[r] = 1;"
		     ".byte " STR(BPFIPT_OP_MAY_GOTO) ", 0, 1, 0, 0, 0, 0, 0;"	/* may_goto +1 */
		     "%[r] = 0;"
		     : [r] "=r"(r));
	return r;
}

/* A loop of body, which ends it (break or return) within n iterations, and may
 * continue. With may_goto an iteration costs a counter on the stack, and the
 * verifier stops where the loop's states repeat (a counter of ours would keep
 * them apart, or with constant bounds have it follow every iteration); without,
 * it is an open-coded iterator of n, a kfunc call an iteration (7 ns on a CPU
 * with Safe RET: the walk's chunk loop paid 40-100 ns a packet in them). spent:
 * what the loop does if the kernel finds its budget spent (never: the loops
 * here end long before). */
#define LOOP_UPTO(n, spent, body)						\
	do {									\
		if (bpfipt_may_goto) {						\
			for (;;) {						\
				if (loop_spent()) {				\
					spent;					\
				}						\
				body						\
			}							\
		} else {							\
			int i_;							\
										\
			bpf_for(i_, 0, n)					\
				body						\
		}								\
	} while (0)

/* What this program does (BPFIPT_FEAT_*, bpfipt.h), set by the loader before
 * the load: the verifier follows a branch on it one way only, and never checks
 * the global functions that only the other way calls. */
const volatile __u32 bpfipt_feat = BPFIPT_FEAT_ALL;
#define FEAT(x) (bpfipt_feat & (x))
/* An IPv6 packet, in programs that judge IPv6 (BPFIPT_FEAT_IP6; without, none
 * gets past generation()) */
#define IS6(p) (FEAT(BPFIPT_FEAT_IP6) && (p)->family == 6)

/* ---------------------------------------------------------------- maps ---- */

/* Instance maps: created once with the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfipt_inst);
} bpfipt_inst SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFIPT_NGENS);
	__type(key, __u32);
	__type(value, struct bpfipt_conf);
} bpfipt_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFIPT_ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} bpfipt_stats SEC(".maps");

/* The local routing table, for -m addrtype (bpfipt.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, BPFIPT_RTLOCAL_MAX);
	__type(key, struct bpfipt_rt_key);
	__type(value, struct bpfipt_rt_val);
} bpfipt_rtlocal SEC(".maps");

/* -m recent's lists (bpfipt.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, BPFIPT_RECENT_TABLES);
	__type(key, __u32);
	__type(value, struct bpfipt_recent_table);
} bpfipt_recent SEC(".maps");

struct pkt {
	__be32 saddr, daddr;
	__u32 proto;
	__u32 sport, dport;	/* BPFIPT_NO_PORT without a port header */
	__u32 tcpflags;		/* BPFIPT_NO_TCP without a TCP header */
	__u32 icmp;		/* type << 8 | code, BPFIPT_NO_ICMP */
	__u32 frag;		/* 1: non-first fragment */
	__u16 ipid;		/* IP identification (fragments) */
	__u8 mf;		/* more fragments follow */
	__u8 ttl;
	__u8 tcp_bad;		/* TCP data offset < 20 bytes or past the packet */
	__u32 len;		/* IP total length (counted as bytes) */
	__u32 iif, oif;
	__u32 mark;
	__u8 tos;
	__u8 has_mac;		/* an Ethernet source address (not lo, not an L3 device) */
	__u8 mac[6];
	__u32 icmp_id;		/* ICMP: the identifier (queries) */
	/* ICMP errors: the quoted packet's tuple (inner_ok when it is all there) */
	__u8 inner_ok, inner_proto;
	__u16 inner_pad;
	__be32 inner_saddr, inner_daddr;
	__u32 inner_sport, inner_dport;	/* ICMP: sport = identifier */
	__u32 inner_icmp;		/* type << 8 | code */
	/* conntrack (conntrack/ct.bpf.h): the packet's state and connection */
	struct ct_result ct;	/* conntrack (conntrack/ct.bpf.h) */
	/* -m addrtype (addr_type()): bit d of rt_seen, address d's (0 the
	 * source, 1 the destination) local route looked up once a packet: its
	 * type (0: none) and device */
	__u32 rt_if[2];
	__u8 rt_type[2], rt_seen, rt_pad[5];
	/* IPv6 (family 6; saddr, daddr, inner_saddr, inner_daddr stay 0): the
	 * addresses; proto is the upper-layer protocol found after the extension
	 * headers (ip6tables' -p), l4off where its header starts (from the IPv6
	 * header), len the payload length + 40 (ip6tables' -m length) */
	__u8 family;		/* 4 or 6 */
	__u8 cut;		/* IPv6: the extension-header chain is cut (ipv6_find_hdr()
				 * fails with fragment offset 0): a rule with -p drops it */
	__u8 pad6[2];
	/* from here on, IPv6 only: an IPv4 packet neither clears (scratch()) nor
	 * reads them */
	__u32 l4off;
	__be32 saddr6[4], daddr6[4];
	__be32 inner_saddr6[4], inner_daddr6[4];	/* ICMPv6 errors' quoted packet */
	__be32 ipid6;		/* IPv6: the fragment header's identification */
};

#define PKT_V4_BYTES __builtin_offsetof(struct pkt, l4off)

/* The IPv6 extension-header walk (parse6()): where it is, in map memory, so the
 * verifier sees the same state whichever header an iteration took. */
struct walk6 {
	__u32 off;		/* from the IPv6 header */
	__u32 nh;		/* the next header to look at */
};


/* Per-CPU scratch of the programs (the BPF stack is 512 bytes for the whole call
 * chain), one entry per program: a program never runs nested in itself on one
 * CPU. */
struct vecs {
	__u32 src, dst, dport, sport, proto, iif, oif, icmp, tcpflags, len, frag, ctstate;
};

/* A route the chain selector looked up (select_ingress()), valid while the
 * namespace's route generation is genid: a destination whose answer is INPUT
 * (oif 0), or one routed out of oif, for packets from saddr while the multipath
 * hash's seed is seed. */
struct route_memo {
	__be32 daddr, saddr;
	__u32 iif, oif;
	__u32 genid, seed;
	__u8 tos, valid;
	__u16 pad;
};

#define ROUTE_MEMOS	8

#define BPFIPT_PVALS	16	/* struct scratch's pval[]: a power of 2 >= BPFIPT_F_MAX */
_Static_assert(BPFIPT_PVALS > BPFIPT_FAST_PFX_PDPORT && !(BPFIPT_PVALS & (BPFIPT_PVALS - 1)), "pval[f & 15]");

#define ROW_VIDS	16	/* struct scratch's rvid[]: a power of 2 */

/* The walk's page cache (pool_cached()): a slot for the constant vector's page
 * and for those of the five tuple's fields, -1 for the others */
#define PGC_N		6
#define PGC_CVEC	0
#define PGC_SRC		1
#define PGC_DST		2
#define PGC_DPORT	3
#define PGC_SPORT	4
#define PGC_PROTO	5
#define PGC_IIF		(-1)
#define PGC_OIF		(-1)
#define PGC_ICMP	(-1)
#define PGC_TCPFLAGS	(-1)
#define PGC_LEN		(-1)
#define PGC_FRAG	(-1)
#define PGC_CTSTATE	(-1)

struct scratch {
	struct pkt p;
	struct walk6 w6;
	struct bpf_fib_lookup fib;
	struct route_memo memo[ROUTE_MEMOS];
	struct vecs v;
	__u32 vhave;			/* bit f: v holds field f's vector (field_vec()) */
	__u32 cur, chain, look, cvec, nwords, nchunks;
	__u32 cutlook;			/* IPv6 cut chain: fields tested per slot (classify()) */
	__u32 cursor, depth, verdict, status;
	__u32 steps;			/* classify(): steps taken past WALK_PLAIN's */
	__u32 reject_with;		/* the REJECT slot's --reject-with */
	__u8 buf[2064];			/* REJECT: the ICMP payload being checksummed
					 * (IPv4 556 bytes, IPv6 1240 + a 3-byte pad;
					 * 2058 for the verifier) */
	__u32 stack[BPFIPT_MAX_DEPTH];
	__u32 w0;			/* find_slot(): first word */
	__u32 pw;			/* ... the policy's word, where the walk takes
					 * the policy (AT_POLICY(); NO_SLOT: not) */
	__u32 policy;			/* bpfipt_conf.policy of the chain */
	__u32 windows;			/* the pool is windowed (BPFIPT_C_WINDOWS) */
	__u32 onepage;			/* ... one page (BPFIPT_C_ONE_PAGE) */
	__u64 first;			/* ... mask of the first word */
	__u32 kc;			/* ... next chunk to consider */
	__u32 top_ready;		/* top[] holds this packet's chunk bitmap */
	__u32 rows_ready;		/* csum[] too (bpfipt_chunk_row()) */
	__u32 nrows, rbase;		/* bpfipt_conf's */
	__u32 rnb;			/* bpfipt_chunk_row(): the row's blocks of 8 chunks */
	__u32 rvid[ROW_VIDS];		/* ... the vectors whose rows it ANDs (ROW_VID()) */
	__u32 vslot;			/* bpfipt_step(): a verdict map's member slot */
	__u32 t0ctr, t0set;		/* fast_tuple()'s hit on slot 0 that it could not
					 * judge (t0set): its counter, for the walk */
	__u64 top[BPFIPT_TOP_WORDS];	/* AND of the fields' chunk bitmaps (rows: bits
					 * where csum[] is 0 cleared) */
	/* the walk's chunk 0, once seen (c0ok): its candidate words (c0cand, the
	 * AND of its summary words) and the AND of the vectors' word w, for the
	 * words of c0have, as chunk_find() computed them: the later steps of a
	 * walk (jumps, RETURNs, extra matches that fail) find their slot there
	 * without the fields' thirteen pool lookups (find_slot()) */
	__u64 c0cand, c0have;
	__u32 c0ok;
	/* a folded group slot (bpfipt_conf.gfold) per address field: its counter
	 * for the packet; when the address is not in its list, the slot's word and
	 * bit, which the walk masks out (else gskip_w is NO_SLOT) */
	__u32 gctr[2];
	__u32 gskip_w[2];
	__u64 gskip_b[2];
	__u32 gdone;		/* bit d: gfold's search on field d done; bit 2 + d:
				 * its filter passed the address (fold_search()) */
	__u32 pctr;		/* fast_prefix(): the folded list's counter, kept in
				 * map memory: the verifier need not follow it */
	__u32 tpre, tpre_ctr;	/* fast_prefix(): the rule of the one tuple group
				 * the tables kept (BPFIPT_FAST_PFX_MAX: none), its
				 * search's answer */
	struct bpfipt_tuple_key tk;	/* tuple_counter()'s key (in map memory: no
					 * frame of the prefix's holds it) */
	struct bpfipt_tuple6_key tk6;	/* IPv6's (tuple6_find()), the same */
	__u32 tbw;		/* ... and its bitmap's word (the same) */
	__u64 tbm;		/* ... the bits to test there (TBITS_CLEAR(); kept
				 * across the word's lookup in a register, they
				 * cost the frames that inline it a slot) */
	__u64 pnote;		/* fast_prefix(): bit j, its j-th rule, one after
				 * which the packet goes on (a LOG), matched: counted
				 * and noted by classify() once the prefix ended
				 * (bpfipt_pfx_notes()) */
	__u64 poff;		/* pfx_ranges(): the rules the plain jumps' misses
				 * skip (the tables' miss), for fast_prefix() */
	__u32 pval[BPFIPT_PVALS];	/* ... the packet's value of each field a range
					 * decides (bpfipt_conf.pfx_direct), by field */
	__u64 pword[BPFIPT_PVALS];	/* ... word 0 of chunk 0 of the packet's vector of
					 * each field looked up (bit f of phave): the
					 * prefix's slots are in it */
	__u32 phave;
	/* conntrack: the packet's key; a connection to write if it is accepted */
	struct bpfipt_ct_key ctk;
	struct bpfipt_ct_entry cte;
	__u32 ct_create, ct_side, ct_tcp;
	/* -m recent (bpfipt_recent_mt()): values the verifier need not follow */
	__u32 rc_k, rc_o, rc_hits;
	__u64 rc_best;
	/* LOG slots the walk passed (log.bpf.h) */
	__u32 nlog;
	__u32 log_extra[BPFIPT_LOG_PENDING];
	/* bpfipt_chunk_row(): chunk k's candidate words, the AND of the vectors'
	 * summary words (last: the fields above keep their cache lines) */
	__u64 csum[64 * BPFIPT_TOP_WORDS];
	__u64 c0word[BPFIPT_CHUNK_WORDS];	/* the walk's chunk 0 (c0ok) */
	/* a windowed pool: the window (BPFIPT_WIN_WORD) of the packet's vector of
	 * each field, by field, the constant vector's at WIN_CVEC (TOP_AND()) */
	__u64 wword[BPFIPT_PVALS];
	__u32 pgi[PGC_N];	/* find_slot(): the pages of its page cache
				 * (pool_cached()); last, so that the fields above
				 * keep their cache lines */
};

enum { SCR_XDP, SCR_TC_IN, SCR_TC_OUT, SCR_TEST, SCR_MAX };	/* L3 variants share */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCR_MAX);
	__type(key, __u32);
	__type(value, struct scratch);
} bpfipt_scratch SEC(".maps");

/* Generation maps: an outer array of 4 (index = family * 2 + generation), whose inner-map
 * template is given here. The loader creates inner maps of the same shape. */
#define OUTER(name, inner)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);			\
		__uint(max_entries, BPFIPT_NGENS);				\
		__type(key, __u32);						\
		__array(values, inner);						\
	} name SEC(".maps")

/* An instance map made when a ruleset first needs it (the loader's lazy_defs):
 * slot 0 of an outer array of 1, empty until then. */
#define LAZY(name, inner)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);			\
		__uint(max_entries, 1);						\
		__type(key, __u32);						\
		__array(values, inner);						\
	} name SEC(".maps")

/* Interfaces whose XDP program judges ingress (INPUT/FORWARD): there the tc
 * ingress program passes, unless the generation needs the mark. A hash
 * (bpfipt_xdpifs, its buckets 1 MB) in slot 0, made by the loader when it
 * first attaches XDP: a namespace judged at tc alone (veth, lo) holds none. */
LAZY(bpfipt_xdp_slot, struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);		/* a hash's size is its own */
	__type(key, __u32);
	__type(value, __u32);
});

struct packed_ids {
	__u32 v[BPFIPT_PACK];
};

/* A fixed-size array: the same max_entries in every generation, so lookups inline. */
#define FIXED_ARRAY(n)								\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_MMAPABLE);				\
		__uint(max_entries, n);						\
		__type(key, __u32);						\
		__type(value, struct packed_ids);				\
	}
/* Sized per generation (BPF_F_INNER_MAP lets max_entries differ). */
#define VAR_ARRAY(vt, flags)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_INNER_MAP | (flags));			\
		__uint(max_entries, 1);						\
		__type(key, __u32);						\
		__type(value, vt);						\
	}

struct pool_chunk {
	__u64 w[BPFIPT_POOL_WORDS];	/* 64 words and their summary */
};

OUTER(bpfipt_ival, VAR_ARRAY(struct bpfipt_ival_page, BPF_F_MMAPABLE));
/* ... BPFIPT_IVAL_FIXED pages: a small generation's (BPFIPT_C_IVAL_FIXED) */
OUTER(bpfipt_ivalfx, struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFIPT_IVAL_FIXED);
	__type(key, __u32);
	__type(value, struct bpfipt_ival_page);
});
OUTER(bpfipt_ival6, VAR_ARRAY(struct bpfipt_ival6_page, BPF_F_MMAPABLE));
/* ... the same for IPv6 (344 KiB) */
OUTER(bpfipt_ival6fx, struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFIPT_IVAL_FIXED);
	__type(key, __u32);
	__type(value, struct bpfipt_ival6_page);
});
OUTER(bpfipt_fields, FIXED_ARRAY(BPFIPT_FB_END / BPFIPT_PACK));
OUTER(bpfipt_tuple, struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct bpfipt_tuple_key);
	__type(value, __u32);
});
/* ... its bitmap (bpfipt.h, bpfipt_tbit()) */
OUTER(bpfipt_tbits, struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFIPT_TBITS_WORDS);
	__type(key, __u32);
	__type(value, __u64);
});
OUTER(bpfipt_tuple6, struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct bpfipt_tuple6_key);
	__type(value, __u32);
});
OUTER(bpfipt_ifs, struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct bpfipt_if_key);
	__type(value, __u32);
});
/* A generation's pool in pages (bpfipt.h, BPFIPT_PAGE_CHUNKS): page i of
 * generation g at g * BPFIPT_PAGES_MAX + i */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BPFIPT_NGENS * BPFIPT_PAGES_MAX);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_MMAPABLE);
		__uint(max_entries, BPFIPT_PAGE_CHUNKS);
		__type(key, __u32);
		__type(value, struct pool_chunk);
	});
} bpfipt_pages SEC(".maps");
/* BPFIPT_SLOTS_FIXED slots: a generation's that fit (BPFIPT_C_SLOTS_FIXED);
 * more are in the pool's pages (slot_at()) */
OUTER(bpfipt_slotsfx, struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFIPT_SLOTS_FIXED);
	__type(key, __u32);
	__type(value, struct bpfipt_slot);
});
OUTER(bpfipt_extras, VAR_ARRAY(struct bpfipt_extra, BPF_F_MMAPABLE));
OUTER(bpfipt_limits, VAR_ARRAY(struct bpfipt_limit_state, 0));
/* Per-CPU counters, laid out by hand: entry cpu * ncounters + i is counter i of
 * that CPU (a PERCPU_ARRAY cannot be an inner map of varying size). The row after
 * the last CPU holds the values carried over from earlier generations; only
 * userspace touches it. */
OUTER(bpfipt_counters, VAR_ARRAY(struct bpfipt_counter, BPF_F_MMAPABLE));
/* ... the same, BPFIPT_CNT_FIXED entries: a small generation's (BPFIPT_C_CNT_FIXED) */
OUTER(bpfipt_cntfx, struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFIPT_CNT_FIXED);
	__type(key, __u32);
	__type(value, struct bpfipt_counter);
});

/* clang 14 emits only forward declarations for the key and value types of inner
 * map templates; libbpf needs their sizes.
 * Variables of the full types in a section libbpf does not load fix the BTF. */
struct btf_anchor {
	struct bpfipt_ival_page ival;
	struct bpfipt_ival6_page ival6;
	struct bpfipt_if_key ifk;
	struct bpfipt_tuple_key tuple;
	struct bpfipt_tuple6_key tuple6;
	struct bpfipt_slot slot;
	struct bpfipt_extra extra;
	struct bpfipt_limit_state limit;
	struct bpfipt_counter counter;
	struct pool_chunk chunk;
	struct packed_ids ids;
	struct ct_frag_key frag;
	struct ct_result ctr;
};
struct btf_anchor bpfipt_btf_anchor SEC(".btf_anchor") __attribute__((used));

#ifdef BPFIPT_MAPS_ONLY
/* The maps alone (dataplane/bpf.cmake: bpfipt_maps.bpf.o, no program, no kfunc,
 * no CO-RE): a namespace's first command creates them with it, and libbpf does
 * not read the kernel's BTF for that (about 10 ms) before the programs' threads
 * start (controlplane/loader.c, inst_create_maps()). */
#include "ct.bpf.h"
#include "log.bpf.h"
#else

/* ------------------------------------------------------------- parsing ---- */

enum parse_result {
	P_OK,			/* classify (p->family: 4 or 6) */
	P_PASS,			/* neither IPv4 nor IPv6: pass untouched */
	P_DROP,			/* not even a whole IP header: the kernel drops it too */
	P_SHORT,		/* IPv6 headers past the linear data (tc: pull, parse again) */
};

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&bpfipt_stats, &idx);

	if (v)
		*v += 1;
}

/* An ICMP error's quoted packet (at q, room bytes of it in the outer packet):
 * the tuple conntrack looks up for RELATED. Needs its IP header and the first
 * 8 bytes after it (ports, or ICMP type and identifier), as the kernel does. */
static __always_inline void parse_inner(__u8 *q, void *data_end, __u32 room, struct pkt *p)
{
	struct iphdr *ip = (struct iphdr *)q;
	__u8 *l4;
	__u32 hl;

	p->inner_ok = 0;
	if ((void *)(ip + 1) > data_end || ip->version != 4)
		return;
	hl = ip->ihl * 4;
	if (hl < sizeof(*ip) || hl + 8 > room)
		return;
	/* opaque to clang: it would turn the bounds check below into arithmetic
	 * on data_end, which the verifier refuses */
	asm volatile("" : "+r"(hl));
	l4 = q + hl;
	asm volatile("" : "+r"(l4));
	if ((void *)(l4 + 8) > data_end)
		return;
	p->inner_proto = ip->protocol;
	p->inner_saddr = ip->saddr;
	p->inner_daddr = ip->daddr;
	p->inner_sport = (__u32)l4[0] << 8 | l4[1];
	p->inner_dport = (__u32)l4[2] << 8 | l4[3];
	if (ip->protocol == IPPROTO_ICMP) {
		p->inner_icmp = (__u32)l4[0] << 8 | l4[1];
		p->inner_sport = (__u32)l4[4] << 8 | l4[5];
	}
	p->inner_ok = 1;
}

/* The transport header at l4 (room: bytes of the IP packet from l4 on, may
 * exceed the linear data): ports, TCP flags, ICMP type. The header must lie
 * inside the IP packet and the linear data; the sizes are those iptables'
 * matches read (tcphdr, udphdr, sctp/dccp common header, icmphdr). false when
 * it is cut short (no L4 fields). */
static __always_inline bool parse_l4(__u8 *l4, void *data_end, __u32 room, struct pkt *p)
{
#define L4_HAS(n) ((n) <= room && (void *)(l4 + (n)) <= data_end)
	switch (p->proto) {
	case IPPROTO_TCP:
		if (!L4_HAS(20))
			return false;
		p->tcpflags = l4[13];
		/* conntrack's tcp_error(): such a header makes the packet INVALID (the
		 * tcp match itself reads the ports and flags all the same) */
		p->tcp_bad = (l4[12] >> 4) < 5 || (l4[12] >> 4) * 4 > room;
		goto ports;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE_:
		if (!L4_HAS(8))
			return false;
		goto ports;
	case IPPROTO_SCTP_:
	case IPPROTO_DCCP_:
		if (!L4_HAS(12))
			return false;
ports:
		p->sport = (__u32)l4[0] << 8 | l4[1];
		p->dport = (__u32)l4[2] << 8 | l4[3];
		break;
	case IPPROTO_ICMP:
		if (p->family != 4)
			break;
		if (!L4_HAS(8))
			return false;
		p->icmp = (__u32)l4[0] << 8 | l4[1];
		p->icmp_id = (__u32)l4[4] << 8 | l4[5];
		parse_inner(l4 + 8, data_end, room - 8, p);
		break;
	case IPPROTO_ICMPV6:
		if (!IS6(p))
			break;
		if (!L4_HAS(8))
			return false;
		p->icmp = (__u32)l4[0] << 8 | l4[1];
		p->icmp_id = (__u32)l4[4] << 8 | l4[5];
		break;
	}
#undef L4_HAS
	return true;
}

/* ---- IPv6 ----
 * ip6tables' -p is the upper-layer protocol ipv6_find_hdr() finds after the
 * extension headers (hop-by-hop, routing, fragment, destination options, AH; it
 * stops at anything else, ESP and "no next header" included). A non-first
 * fragment (offset != 0) has its fragment header's next header as protocol, no
 * ports, flags nor ICMPv6 type. A chain the walk cannot finish (a header past
 * the packet's end, a non-first fragment followed by another extension header)
 * is CUT: ip6_packet_match() drops such a packet at the first rule with -p it
 * reaches (hotdrop), rules without -p see it. Limits (docs/dataplane.md): at most
 * IPV6_MAX_EXT extension headers, each starting within IPV6_MAX_OFF bytes of the
 * IPv6 header; beyond them the chain counts as cut. */
#define NH_HOP		0
#define NH_ROUTING	43
#define NH_FRAGMENT	44
#define NH_AUTH		51
#define NH_NONE		59
#define NH_DEST		60
#define IPV6_MAX_EXT	8
#define IPV6_MAX_OFF	1024
#define IPV6_PULL	(IPV6_MAX_OFF + 40 + 8 + 40 + 8)	/* tc: the bytes parse6() may read */

/* ipv6_ext_hdr() but NONE: a header the walk steps over */
static __always_inline bool ext6(__u32 nh)
{
	return nh == NH_HOP || nh == NH_ROUTING || nh == NH_FRAGMENT || nh == NH_AUTH ||
	       nh == NH_DEST;
}

enum { W6_MORE, W6_DONE, W6_CUT, W6_SHORT, W6_NONFIRST };

/* One header of the walk: the one w->nh names at l3 + w->off (end: where the
 * packet ends, from l3). w lives in map memory and is read back at each step: the
 * verifier's state is the same whatever header the step before took. A fragment
 * header sets p->ipid6 and p->mf when p is given. */
static __always_inline int walk6_step(__u8 *l3, void *data_end, __u32 end, struct walk6 *w,
				      struct pkt *p)
{
	__u32 off = *(volatile __u32 *)&w->off, nh = *(volatile __u32 *)&w->nh, hl;
	__u8 *h;

	if (!ext6(nh))
		return W6_DONE;
	if (off > IPV6_MAX_OFF || off + (nh == NH_FRAGMENT ? 4 : 2) > end)
		return W6_CUT;
	h = l3 + off;
	/* the packet has the bytes; the linear data does not */
	if ((void *)(h + 2) > data_end)
		return W6_SHORT;
	if (nh == NH_FRAGMENT) {
		__u32 fo;

		if ((void *)(h + 4) > data_end)
			return W6_SHORT;
		fo = ((__u32)h[2] << 8 | h[3]) & ~7u;

		if (p) {
			p->frag = 1;	/* reused below: 1 only for a non-first one */
			p->mf = h[3] & 1;
			if (off + 8 <= end && (void *)(h + 8) <= data_end)
				p->ipid6 = *(__be32 *)(h + 4);
		}
		if (fo) {
			w->nh = h[0];
			/* ipv6_find_hdr(): -ENOENT with fragoff 0 when another extension
			 * header follows */
			return ext6(h[0]) ? W6_CUT : W6_NONFIRST;
		}
		hl = 8;
	} else if (nh == NH_AUTH) {
		hl = ((__u32)h[1] + 2) << 2;
	} else {
		hl = ((__u32)h[1] + 1) << 3;
	}
	w->nh = h[0];
	w->off = off + hl;
	return W6_MORE;
}

/* An ICMPv6 error's quoted packet (at q, room bytes of it in the outer packet):
 * its addresses, the protocol after its extension headers and the first 8 bytes
 * of that header, for conntrack's RELATED (inner_ok when all is there). */
static __always_inline void parse_inner6(__u8 *q, void *data_end, __u32 room, struct scratch *sc)
{
	struct ipv6hdr *ip6 = (struct ipv6hdr *)q;
	struct walk6 *w = &sc->w6;
	struct pkt *p = &sc->p;
	__u32 i, off;
	int r = W6_MORE;
	__u8 *l4;

	p->inner_ok = 0;
	if ((void *)(ip6 + 1) > data_end || room < 40 || ip6->version != 6)
		return;
	w->off = 40;
	w->nh = ip6->nexthdr;
	for (i = 0; i <= IPV6_MAX_EXT && r == W6_MORE; i++)
		r = walk6_step(q, data_end, room, w, NULL);
	if (r != W6_DONE)
		return;
	off = *(volatile __u32 *)&w->off;
	if (off > IPV6_MAX_OFF + 8 || off + 8 > room)
		return;
	l4 = q + off;
	if ((void *)(l4 + 8) > data_end)
		return;
	__builtin_memcpy(p->inner_saddr6, &ip6->saddr, 16);
	__builtin_memcpy(p->inner_daddr6, &ip6->daddr, 16);
	p->inner_proto = *(volatile __u32 *)&w->nh;
	p->inner_sport = (__u32)l4[0] << 8 | l4[1];
	p->inner_dport = (__u32)l4[2] << 8 | l4[3];
	if (p->inner_proto == IPPROTO_ICMPV6) {
		p->inner_icmp = (__u32)l4[0] << 8 | l4[1];
		p->inner_sport = (__u32)l4[4] << 8 | l4[5];
	}
	p->inner_ok = 1;
}

__noinline int bpfipt_parse6_tc(struct __sk_buff *skb, struct scratch *sc, __u32 pull);
__noinline int bpfipt_parse6_tc3(struct __sk_buff *skb, struct scratch *sc, __u32 pull);

/* An IPv6 packet (see above): addresses, hop limit (ttl), traffic class (tos),
 * len = payload length + 40 (ip6tables' -m length and counters), the protocol
 * and transport header after the extension headers. pull: the caller can make
 * more bytes linear (tc), so headers past the linear data return P_SHORT; else
 * they count as cut. skb: at tc, where TCP and UDP right after the fixed header
 * are parsed here, and any other packet (extension headers, ICMPv6 and the
 * packet its errors quote, other protocols) by bpfipt_parse6_tc(): the verifier
 * follows the header walks once per tc program instead of once per call of
 * parse() (192k -> 135k instructions for bpfipt_tc_in with the changes before
 * it), and the common packet pays no call. */
static __always_inline enum parse_result parse6(void *data, void *data_end, __u32 wire_len,
						__u32 l2, struct scratch *sc, bool pull,
						struct __sk_buff *skb)
{
	struct ipv6hdr *ip6 = data + l2;
	struct walk6 *w = &sc->w6;
	struct pkt *p = &sc->p;
	__u8 *l3 = (__u8 *)ip6, *l4;
	__u32 end, off, i;
	int r = W6_MORE;

	p->family = 6;
	if ((void *)(ip6 + 1) > data_end || ip6->version != 6) {
		stat_inc(BPFIPT_ST_MALFORMED);
		return P_DROP;
	}
	if (skb && ip6->nexthdr != IPPROTO_TCP && ip6->nexthdr != IPPROTO_UDP)
		return l2 ? bpfipt_parse6_tc(skb, sc, pull) : bpfipt_parse6_tc3(skb, sc, pull);
	__builtin_memcpy(p->saddr6, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr6, &ip6->daddr, 16);
	p->ttl = ip6->hop_limit;
	p->tos = ip6->priority << 4 | ip6->flow_lbl[0] >> 4;
	end = bpf_ntohs(ip6->payload_len) + 40;
	p->len = end;
	/* a payload length past the frame: walk what is there (a jumbogram's
	 * payload length 0 is not read: its chain is cut) */
	if (end > wire_len - l2) {
		stat_inc(BPFIPT_ST_MALFORMED);
		end = wire_len - l2;
	}
	w->off = 40;
	w->nh = ip6->nexthdr;
	if (skb)
		r = W6_DONE;	/* TCP or UDP (above) */
	/* a bounded loop (IPV6_MAX_EXT + 1 steps); most packets leave at the first */
	for (i = 0; i <= IPV6_MAX_EXT && r == W6_MORE; i++)
		r = walk6_step(l3, data_end, end, w, p);
	p->proto = *(volatile __u32 *)&w->nh;
	if (r == W6_SHORT && pull)
		return P_SHORT;
	if (r == W6_NONFIRST)
		return P_OK;	/* frag = 1: no ports, flags nor type */
	p->frag = 0;
	if (r != W6_DONE) {
		/* cut, too many headers, or past the data we can read */
		p->cut = 1;
		stat_inc(BPFIPT_ST_MALFORMED);
		return P_OK;
	}
	off = *(volatile __u32 *)&w->off;
	p->l4off = off;
	if (off > IPV6_MAX_OFF + 2048 || off > end)
		goto short_l4;
	l4 = l3 + off;
	if (!parse_l4(l4, data_end, end - off, p))
		goto short_l4;
	if (!skb && p->proto == IPPROTO_ICMPV6 && (p->icmp >> 8) < 128) {
		parse_inner6(l4 + 8, data_end, end - off - 8, sc);
		/* the quoted packet past the linear data: tc pulls it */
		if (!p->inner_ok && pull && end > (__u32)((long)data_end - (long)l3))
			return P_SHORT;
	}
	return P_OK;
short_l4:
	/* the transport header cut short: no L4 fields (as IPv4) */
	if (pull && end > (__u32)((long)data_end - (long)l3) && end > 80)
		return P_SHORT;
	stat_inc(BPFIPT_ST_MALFORMED);
	return P_OK;
}

/* parse6() at tc of an IPv6 packet whose next header is not TCP or UDP, a global
 * function per link-layer length (l2). pull: 0 or 1. */
#define PARSE6_TC(name, l2)								\
__noinline int name(struct __sk_buff *skb, struct scratch *sc, __u32 pull)		\
{											\
	if (!sc)									\
		return P_DROP;								\
	return parse6((void *)(long)skb->data, (void *)(long)skb->data_end, skb->len,	\
		      l2, sc, pull & 1, NULL);						\
}
PARSE6_TC(bpfipt_parse6_tc, ETH_HLEN)
PARSE6_TC(bpfipt_parse6_tc3, 0)

/* data..data_end: the linear bytes; wire_len: the whole frame; l2: 14 on
 * Ethernet-like devices, 0 on L3 devices (tun, wireguard, ipip...), a constant
 * at each call; fam: the family the caller found (l3_family(), skb_family()):
 * 0 IPv4, 1 IPv6, else P_PASS. At tc the headers parse() reads are made linear
 * by tc_pull(); pull: the caller can pull more (IPv6: P_SHORT). skb: the packet
 * at tc, NULL at XDP (parse6()). */
static __always_inline enum parse_result parse(void *data, void *data_end, __u32 wire_len,
					       __u32 l2, struct scratch *sc, bool pull, int fam,
					       struct __sk_buff *skb)
{
	struct pkt *p = &sc->p;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	__u8 *l4;
	__u32 hl;

	p->sport = p->dport = BPFIPT_NO_PORT;
	p->tcpflags = BPFIPT_NO_TCP;
	p->icmp = BPFIPT_NO_ICMP;
	p->tcp_bad = 0;
	if (l2) {
		if ((void *)(eth + 1) > data_end)
			return P_PASS;
		__builtin_memcpy(p->mac, eth->h_source, 6);
	}
	if (fam == 1)
		return parse6(data, data_end, wire_len, l2, sc, pull, skb);
	if (fam != 0)
		return P_PASS;
	p->family = 4;
	ip = data + l2;
	if ((void *)(ip + 1) > data_end || ip->version != 4) {
		stat_inc(BPFIPT_ST_MALFORMED);
		return P_DROP;
	}
	p->saddr = ip->saddr;
	p->daddr = ip->daddr;
	p->proto = ip->protocol;
	p->tos = ip->tos;
	p->ttl = ip->ttl;
	p->len = bpf_ntohs(ip->tot_len);
	p->frag = (ip->frag_off & bpf_htons(0x1fff)) != 0;
	p->mf = (ip->frag_off & bpf_htons(0x2000)) != 0;
	p->ipid = ip->id;
	hl = ip->ihl * 4;
	/* Bad IHL or total length: classify on the fixed header, no L4 fields. */
	if (hl < sizeof(*ip) || p->len < hl || p->len > wire_len - l2) {
		stat_inc(BPFIPT_ST_MALFORMED);
		return P_OK;
	}
	if (p->frag)
		return P_OK;
	l4 = (__u8 *)ip + hl;	/* hl in [20, 60]: the verifier tracks the range */
	if (!parse_l4(l4, data_end, p->len - hl, p))
		stat_inc(BPFIPT_ST_MALFORMED);
	return P_OK;
}

/* ----------------------------------------------------------- conntrack ---- */

#include "ct.bpf.h"

/* conntrack/ct.bpf.h defines it to 1 once it tracks IPv6 packets; until then an
 * IPv6 packet has no connection (state INVALID). */
#ifndef BPFIPT_CT_IPV6
#define BPFIPT_CT_IPV6 0
#endif

/* ------------------------------------------------------------ classify ---- */

#define NO_SLOT 0xffffffffu

/* Index of the lowest set bit (x != 0). */
/* Computed, not typed: idx[(0x03f79d71b4ca8b09 << i) >> 58] = i for i in 0..63
 * (a table typed by hand had bits 42-56 wrong; test_dataplane checks all 64). */
static const __u8 debruijn_idx[64] = {
	0, 1, 56, 2, 57, 49, 28, 3, 61, 58, 42, 50, 38, 29, 17, 4,
	62, 47, 59, 36, 45, 43, 51, 22, 53, 39, 33, 30, 24, 18, 12, 5,
	63, 55, 48, 27, 60, 41, 37, 16, 46, 35, 44, 21, 52, 32, 23, 11,
	54, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

static __always_inline __u32 ctz64(__u64 x)
{
	return debruijn_idx[((x & -x) * 0x03f79d71b4ca8b09ULL) >> 58];
}

/* Vector id of an array field: element base + chain * keys + key of the packed
 * array m (the generation's bpfipt_fields map). */
#define ARRAY_VEC(m, base, chain, keys, key, out)				\
	({									\
		__u32 i_ = (base) + (chain) * (keys) + (key);			\
		__u32 e_ = i_ / BPFIPT_PACK;					\
		struct packed_ids *pk_ = bpf_map_lookup_elem(m, &e_);		\
		int ok_ = 0;							\
		if (pk_) {							\
			out = pk_->v[i_ & (BPFIPT_PACK - 1)];			\
			ok_ = 1;						\
		}								\
		ok_;								\
	})

#include "ival.bpf.h"

/* A volatile read of scratch memory. Inside the verifier's loops every value
 * that is loop-invariant is re-read from the map rather than kept by clang in a
 * register or stack slot: a map load is an unknown scalar to the verifier, while
 * a kept value that a branch made exact (look & bit: 0 or the bit) differs from
 * path to path, and 12 such bits made 4096 states that never pruned. */
#define RD(x) (*(volatile typeof(x) *)&(x))

/* Address a (host order), an IPv4 set of generation cur (conf its conf): in
 * the pages of one size when they fit there, their lookups inline (the search
 * written twice, once per map: the verifier inlines a lookup only where it
 * knows the map). */
static __always_inline __u32 ival_find4(__u32 cur, const struct bpfipt_conf *conf, __u32 desc,
					__u32 a)
{
	void *m;

	if (RD(conf->flags) & BPFIPT_C_IVAL_FIXED) {
		m = bpf_map_lookup_elem(&bpfipt_ivalfx, &cur);
		return m ? IVAL_FIND4(m, desc, a) : BPFIPT_IVAL_NONE;
	}
	m = bpf_map_lookup_elem(&bpfipt_ival, &cur);
	return m ? IVAL_FIND4(m, desc, a) : BPFIPT_IVAL_NONE;
}

/* ival_find4() as a global function: checked once, on its own, whatever calls
 * it. */
__noinline __u32 bpfipt_ival_find(__u32 cur, __u32 desc, __u32 a)
{
	const struct bpfipt_conf *conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);

	return conf ? ival_find4(cur, conf, desc, a) : BPFIPT_IVAL_NONE;
}

/* The vector ids of an IPv4 packet's addresses in the sets of its chain (in
 * the pages of map m, conf its generation's conf; BPFIPT_IVAL_NONE when the set
 * has none: every set of a field that varies holds 0.0.0.0/0, so a loader bug)
 * into sc->v, those of the fields todo names (1 << BPFIPT_F_SRC, BPFIPT_F_DST):
 * 0, or -1 on such an error. Inlined once per map: the verifier inlines the
 * page lookups of the map it knows at the call site. */
static __always_inline int addr_vecs_in(struct scratch *sc, void *m,
					const struct bpfipt_conf *conf, __u32 chain, __u32 todo)
{
	if (todo & (1u << BPFIPT_F_SRC)) {
		sc->v.src = IVAL_FIND4(m, conf->addr_set[chain][0], bpf_ntohl(sc->p.saddr));
		if (sc->v.src == BPFIPT_IVAL_NONE)
			return -1;
	}
	if (todo & (1u << BPFIPT_F_DST)) {
		sc->v.dst = IVAL_FIND4(m, conf->addr_set[chain][1], bpf_ntohl(sc->p.daddr));
		if (sc->v.dst == BPFIPT_IVAL_NONE)
			return -1;
	}
	return 0;
}

/* addr_vecs_in() of a generation whose sets are in pages of their own size
 * (bpfipt_ival: each page's lookup a call), for its chain sc->chain: one call
 * for both fields, the conf looked up once (two calls of bpfipt_ival_find()
 * cost a return thunk each on CPUs with retbleed's mitigations). A global
 * function, checked once; sets in the pages of one size (BPFIPT_C_IVAL_FIXED)
 * are searched by addr_vecs_fx(), inline in classify(), and never here. */
__noinline int bpfipt_addr_vecs(struct scratch *sc, __u32 todo)
{
	const struct bpfipt_conf *conf;
	__u32 cur, chain;
	void *m;

	if (!sc)
		return -1;
	cur = sc->cur;
	chain = sc->chain;
	if (chain >= BPFIPT_NCHAINS)
		return -1;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	m = bpf_map_lookup_elem(&bpfipt_ival, &cur);
	if (!conf || !m)
		return -1;
	return addr_vecs_in(sc, m, conf, chain, todo);
}

/* ... in the pages of one size (BPFIPT_C_IVAL_FIXED, conf its conf): inline in
 * classify(), no call at all (inlined with the sized search too, the verifier
 * took 28k instructions more instead of 8.4k). */
static __always_inline int addr_vecs_fx(struct scratch *sc, const struct bpfipt_conf *conf,
					__u32 cur, __u32 chain, __u32 todo)
{
	void *m = bpf_map_lookup_elem(&bpfipt_ivalfx, &cur);

	return m ? addr_vecs_in(sc, m, conf, chain, todo) : -1;
}

/* IPv6: the packet's source (dst 0) or destination address in set desc of
 * bpfipt_ival6. A global function, checked once. */
__noinline __u32 bpfipt_ival6_find(struct scratch *sc, __u32 desc, __u32 dst)
{
	const struct bpfipt_conf *conf;
	__u64 hi, lo;
	void *m;

	if (!sc)
		return BPFIPT_IVAL_NONE;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &sc->cur);
	if (!conf)
		return BPFIPT_IVAL_NONE;
	if (dst) {
		hi = (__u64)bpf_ntohl(sc->p.daddr6[0]) << 32 | bpf_ntohl(sc->p.daddr6[1]);
		lo = (__u64)bpf_ntohl(sc->p.daddr6[2]) << 32 | bpf_ntohl(sc->p.daddr6[3]);
	} else {
		hi = (__u64)bpf_ntohl(sc->p.saddr6[0]) << 32 | bpf_ntohl(sc->p.saddr6[1]);
		lo = (__u64)bpf_ntohl(sc->p.saddr6[2]) << 32 | bpf_ntohl(sc->p.saddr6[3]);
	}
	/* the pages of one size when they fit there (BPFIPT_C_IVAL_FIXED): the
	 * search once per map, its lookups inline in the first */
	if (RD(conf->flags) & BPFIPT_C_IVAL_FIXED) {
		m = bpf_map_lookup_elem(&bpfipt_ival6fx, &sc->cur);
		return m ? IVAL_FIND6(m, desc, hi, lo) : BPFIPT_IVAL_NONE;
	}
	m = bpf_map_lookup_elem(&bpfipt_ival6, &sc->cur);
	return m ? IVAL_FIND6(m, desc, hi, lo) : BPFIPT_IVAL_NONE;
}

#define IF_VEC(cur, tag, ifindex_, dflt, out)					\
	({									\
		void *m_ = bpf_map_lookup_elem(&bpfipt_ifs, &cur);		\
		int ok_ = 0;							\
		if (m_) {							\
			struct bpfipt_if_key k_ = { .chain = (tag), .ifindex = (ifindex_) }; \
			__u32 *v_ = bpf_map_lookup_elem(m_, &k_);		\
			out = v_ ? *v_ : (dflt);				\
			ok_ = 1;						\
		}								\
		ok_;								\
	})

#define WIN_CVEC	BPFIPT_F_MAX	/* struct scratch's wword[]: the constant vector's */
_Static_assert(WIN_CVEC < BPFIPT_PVALS, "a window per field and the constant vector's");

/* The entry of chunk k >= 1 of a windowed pool's vector whose window is w
 * (bpfipt.h, BPFIPT_WIN_WORD): no branch. */
static __always_inline __u32 win_entry(__u64 w, __u32 k)
{
	__u32 d = k - BPFIPT_WIN_LO(w), out = BPFIPT_WIN_BFIRST(w) + k - 1;
	__u32 in = ((__u64)d - BPFIPT_WIN_N(w)) >> 63;

	return out + ((BPFIPT_WIN_FIRST(w) + d - out) & -in);
}

/* Entry e of generation cur's pool, in its page of bpfipt_pages: both lookups
 * inline (the verifier knows each map's size), where a pool of its own size
 * cost a call an entry. */
static __always_inline const __u64 *pool_at(__u32 cur, __u32 e)
{
	__u32 pk;
	void *pg;

	pk = cur * BPFIPT_PAGES_MAX + (e / BPFIPT_PAGE_CHUNKS & (BPFIPT_PAGES_MAX - 1));
	pg = bpf_map_lookup_elem(&bpfipt_pages, &pk);
	if (!pg)
		return NULL;
	e %= BPFIPT_PAGE_CHUNKS;
	return bpf_map_lookup_elem(pg, &e);
}

/* Entry e of a pool of one page (one), pool: a lookup in it; else pool_at(). */
static __always_inline const __u64 *pool_get(void *pool, __u32 cur, __u32 e, const bool one)
{
	return one ? bpf_map_lookup_elem(pool, &e) : pool_at(cur, e);
}

/* Entry e of a paged pool through the walk's page cache: slot j's page
 * (sc->pgi[j]) kept as pg[j], a pointer in the search's frame; looked up again
 * only when e is on another page. */
static __always_inline const __u64 *pool_cached(struct scratch *sc, void **pg, const int j,
						__u32 cur, __u32 e)
{
	__u32 pi = e / BPFIPT_PAGE_CHUNKS, pk;
	void *p;

	if (pi != RD(sc->pgi[j])) {
		pk = cur * BPFIPT_PAGES_MAX + (pi & (BPFIPT_PAGES_MAX - 1));
		p = bpf_map_lookup_elem(&bpfipt_pages, &pk);
		if (!p)
			return NULL;
		pg[j] = p;
		sc->pgi[j] = pi;
	}
	e %= BPFIPT_PAGE_CHUNKS;
	return bpf_map_lookup_elem(pg[j], &e);
}

/* pool_get() with the page cache for slot j >= 0 */
#define POOL_GETC(j, key)							\
	((j) >= 0 && !one && !windows ? pool_cached(sc, pg, (j), cur, key) :	\
			   pool_get(pool, cur, key, one))

/* The pool entry of chunk k of field i's vector vid (i: a BPFIPT_F_* or
 * WIN_CVEC; a windowed pool: chunk 0 is entry vid, the others through the
 * window TOP_AND() took). windows is a constant: the walk's flat and windowed
 * searches are two instances of find_slot() (FIND_SLOT()), so a
 * flat pool's lookups cost what they did before windows. */
static __always_inline __u32 pool_key(struct scratch *sc, __u32 i, __u32 vid, __u32 k,
				      const bool windows)
{
	__u32 nz;

	if (!windows)
		return vid * RD(sc->nchunks) + k;
	nz = ((__u64)0 - k) >> 63;	/* k != 0 */
	return vid + ((win_entry(RD(sc->wword[i]), k) - vid) & -nz);
}

/* The same from vid's chunk 0 in the map, outside the walk (NO_SLOT: none). */
static __always_inline __u32 pool_entry(__u32 cur, bool windows, __u32 nchunks, __u32 vid,
					__u32 k)
{
	const __u64 *c;

	if (!windows)
		return vid * nchunks + k;
	if (!k)
		return vid;
	c = pool_at(cur, vid);
	return c ? win_entry(c[BPFIPT_WIN_WORD], k) : NO_SLOT;
}

/* A pool pointer for chunk k of vector v, or the constant-field vector c when the
 * field does not vary in the chain. Both are pointers into a page, maps of one
 * kind to the verifier, so its states stay equal whichever branch ran. */
#define POOL_PTR(field, vid)							\
	do {									\
		p_##field = pc;							\
		if (RD(sc->look) & (1u << BPFIPT_F_##field)) {			\
			key = pool_key(sc, BPFIPT_F_##field, RD(vid), k, windows); \
			p_##field = POOL_GETC(PGC_##field, key);	\
			if (!p_##field)						\
				goto broken;					\
		}								\
	} while (0)

/* X(field, its vector id) for each field of the AND. */
#define EACH_FIELD(X)								\
	X(SRC, sc->v.src); X(DST, sc->v.dst); X(DPORT, sc->v.dport);		\
	X(SPORT, sc->v.sport); X(PROTO, sc->v.proto); X(IIF, sc->v.iif);	\
	X(OIF, sc->v.oif); X(ICMP, sc->v.icmp); X(TCPFLAGS, sc->v.tcpflags);	\
	X(LEN, sc->v.len); X(FRAG, sc->v.frag); X(CTSTATE, sc->v.ctstate)

/* Every field's pointer for chunk k (p_SRC, p_DST, ...). */
#define POOL_PTRS()	do { EACH_FIELD(POOL_PTR); } while (0)

/* A windowed pool: field's window, from its chunk 0's entry. */
#define WIN_TAKE(field, vid)	(sc->wword[BPFIPT_F_##field] = p_##field[BPFIPT_WIN_WORD])

/* The packet's chunk bitmap from chunk 0's entries (pc, p_SRC, ...): a word of
 * it per 64 chunks of the chain, the words past them 0; a windowed pool's
 * windows too. */
#define TOP_AND(j)								\
	do {									\
		if (windows) {							\
			sc->wword[WIN_CVEC] = pc[BPFIPT_WIN_WORD];		\
			EACH_FIELD(WIN_TAKE);					\
		}								\
		_Pragma("unroll")						\
		for (j = 0; j < BPFIPT_TOP_WORDS; j++) {			\
			const int e_ = BPFIPT_CHUNK_WORDS + 1 + j;		\
									\
			sc->top[j] = (__u32)j * 64 < RD(sc->nchunks) ?		\
				pc[e_] & p_SRC[e_] & p_DST[e_] & p_DPORT[e_] &	\
				p_SPORT[e_] & p_PROTO[e_] & p_IIF[e_] & p_OIF[e_] & \
				p_ICMP[e_] & p_TCPFLAGS[e_] & p_LEN[e_] &	\
				p_FRAG[e_] & p_CTSTATE[e_] : 0;			\
		}								\
	} while (0)

/* The packet's chunk bitmap (BPFIPT_TOP_WORDS in bpfipt.h): the AND of the
 * bitmaps chunk 0 of each of its vectors carries. Once per packet, and only for
 * vectors of more than one chunk. */
static __always_inline int top_bitmap(struct scratch *sc, void *pool, void **pg, __u32 cur,
				      const bool windows, const bool one)
{
	const __u64 *pc, *p_SRC, *p_DST, *p_DPORT, *p_SPORT, *p_PROTO, *p_IIF, *p_OIF,
		*p_ICMP, *p_TCPFLAGS, *p_LEN, *p_FRAG, *p_CTSTATE;
	__u32 k = 0, key = pool_key(sc, WIN_CVEC, RD(sc->cvec), 0, windows);
	int j;

	pc = POOL_GETC(PGC_CVEC, key);
	if (!pc)
		goto broken;
	POOL_PTRS();
	TOP_AND(j);
	sc->top_ready = 1;
	return 0;
broken:
	return -1;
}

/* Row r of vector vid's summary rows (bpfipt.h: word j is chunk 64 r + j's
 * summary word) into the packet's csum[]: copied (first) or ANDed, in the row's
 * first sc->rnb blocks of 8 chunks those that hold a candidate chunk (the chunk
 * bitmap's byte). The blocks' tests nest, the first block past the row's end
 * leaves, and nothing is kept in a register from block to block: the verifier's
 * paths (a block done or not) join again. */
#define TOP_BYTE(r, b)	RD(((__u8 *)&sc->top[r])[b])
#define ROW_BLOCK(b, body, rest)						\
	do {									\
		if ((b) < RD(sc->rnb)) {					\
			if (TOP_BYTE(r, b)) {					\
				const int b_ = (b);				\
				int u_;						\
				body;						\
			}							\
			rest;							\
		}								\
	} while (0)
#define ROW_BLOCKS(body)							\
	ROW_BLOCK(0, body, ROW_BLOCK(1, body, ROW_BLOCK(2, body,		\
	ROW_BLOCK(3, body, ROW_BLOCK(4, body, ROW_BLOCK(5, body,		\
	ROW_BLOCK(6, body, ROW_BLOCK(7, body, ))))))))

/* Entry of row r of vector vid in the pool (bpfipt.h: the rows past the chunks). */
#define ROW_ENTRY(vid, r)	(RD(sc->rbase) + (vid) * RD(sc->nrows) + (r))

/* The rows one pass of bpfipt_chunk_row() ANDs */
#define ROW_PASS	3

/* Field's vector vid into sc->rvid[] if the walk looks the field up */
#define ROW_EMASK	(ROW_VIDS - 1)
#define ROW_VID(field, vid)							\
	do {									\
		if (RD(sc->look) & (1u << BPFIPT_F_##field))			\
			sc->rvid[n++ & ROW_EMASK] = RD(vid);			\
	} while (0)
_Static_assert(!(ROW_VIDS & ROW_EMASK) && BPFIPT_F_MAX + 1 <= ROW_VIDS,
	       "ROW_VID(): the constant vector's and each field's");

/* a, b, d: the rows of pass j's vectors (bpfipt_chunk_row(): sc->rvid[],
 * n of them), the first where it has fewer than ROW_PASS; 0, or -1 if one
 * is missing */
#define ROW_PTRS(j)								\
	({									\
		a = pool_at(cur, ROW_ENTRY(RD(sc->rvid[(j) * ROW_PASS]), r));	\
		b = d = a;							\
		if (n > (j) * ROW_PASS + 1)					\
			b = pool_at(cur, ROW_ENTRY(RD(sc->rvid[(j) * ROW_PASS + 1]), r)); \
		if (n > (j) * ROW_PASS + 2)					\
			d = pool_at(cur, ROW_ENTRY(RD(sc->rvid[(j) * ROW_PASS + 2]), r)); \
		!a || !b || !d ? -1 : 0;					\
	})

/* Pass j > 0 (the first is bpfipt_chunk_row()'s own), if there are rows
 * for it: ANDed into csum[] */
#define ROW_MORE(j)								\
	do {									\
		if (n > (j) * ROW_PASS) {					\
			if (ROW_PTRS(j))					\
				return -1;					\
			ROW_BLOCKS(({						\
				_Pragma("unroll")				\
				for (u_ = b_ * 8; u_ < b_ * 8 + 8; u_++)	\
					c[u_] &= a[u_] & b[u_] & d[u_];	\
			}));							\
		}								\
	} while (0)
_Static_assert(BPFIPT_F_MAX + 1 <= 5 * ROW_PASS, "ROW_MORE(): passes for every field");

/* Row r of the candidate words of the packet's candidate chunks: csum[k], the
 * AND of the summary rows of the chain's constant vector and of each field it
 * looks up; and the chunk bitmap's bit k cleared where csum[k] is 0. Once per walk
 * and row, when the chunk bitmap leaves BPFIPT_ROWS_CAND candidates or more
 * (find_slot()): the chunks where the packet's vectors share no word cost
 * nothing after it, not one pool lookup per field each. The rows are ANDed
 * ROW_PASS at a time, in the row's first sc->rnb blocks of 8 chunks those that
 * hold a candidate chunk: most chains' packets look up two fields, one pass
 * over csum[] that only writes it. A global function (its own frame, and the
 * verifier checks it once, not once per row); 0, or -1 on an internal error. */
__noinline int bpfipt_chunk_row(struct scratch *sc, __u32 r)
{
	__u32 cur, left, n = 0;
	const __u64 *a, *b, *d;
	__u64 *c;

	if (!sc || r >= BPFIPT_TOP_WORDS || r >= sc->nrows)
		return -1;
	asm volatile("" : "+r"(r));	/* the mask stays: it bounds r for the verifier */
	r &= BPFIPT_TOP_WORDS - 1;
	cur = sc->cur;
	left = RD(sc->nchunks) - r * 64;
	sc->rnb = left < 64 ? (left + 7) / 8 : 8;
	c = &sc->csum[r * 64];
	sc->rvid[n++] = RD(sc->cvec);
	EACH_FIELD(ROW_VID);
	/* n unknown to the verifier: each count of fields looked up would go
	 * through the rest on its own */
	FORGET(n, RD(sc->cvec));
	/* the first pass writes csum[]; the chunk bitmap's bits cleared in it
	 * when it is the only one */
	if (ROW_PTRS(0))
		return -1;
	if (n <= ROW_PASS) {
		/* the only pass: each word's bit of the chunk bitmap taken as it
		 * is written (the barrier keeps the block's words from being
		 * live at once: this frame is in the walk's chain of 512 bytes) */
		ROW_BLOCKS(({
			__u64 t_ = 0, x_;
			_Pragma("unroll")
			for (u_ = 0; u_ < 8; u_++) {
				x_ = a[b_ * 8 + u_] & b[b_ * 8 + u_] & d[b_ * 8 + u_];
				c[b_ * 8 + u_] = x_;
				t_ |= ((x_ | -x_) >> 63) << u_;
				asm volatile("" : "+r"(t_));
			}
			((__u8 *)&sc->top[r])[b_] &= t_;
		}));
		return 0;
	}
	ROW_BLOCKS(({
		_Pragma("unroll")
		for (u_ = b_ * 8; u_ < b_ * 8 + 8; u_++)
			c[u_] = a[u_] & b[u_] & d[u_];
	}));
	/* the others ANDed into it, ROW_PASS at a time */
	ROW_MORE(1);
	ROW_MORE(2);
	ROW_MORE(3);
	ROW_MORE(4);
	/* the chunk bitmap's bits where csum[] is 0 cleared, a byte a block */
	ROW_BLOCKS(({
		__u64 t_ = 0, x_;
		_Pragma("unroll")
		for (u_ = 0; u_ < 8; u_++) {
			x_ = c[b_ * 8 + u_];
			t_ |= ((x_ | -x_) >> 63) << u_;
		}
		((__u8 *)&sc->top[r])[b_] &= t_;
	}));
	return 0;
}

/* chunk_find(), chunk0_seen(): the candidate words tested before the loop,
 * unrolled. Five where the loop is an iterator, a kfunc call a word (100k
 * unlike rules, 12 candidate words in 4 chunks a packet: 3 -> -10 ns, 5 -> -19,
 * 8 -> -19); one where it is may_goto's, which costs no call (100 000 unlike
 * rules as slots 13 ns less, 10 000 and 2 048 the same, the verifier 1k-20k
 * instructions less: docs/performance.md, "One candidate word before the
 * loop"). The verifier follows one of the two. */
#define BPFIPT_WORDS_AHEAD	5
#define WORDS_AHEAD(i)		((i) < (bpfipt_may_goto ? 1 : BPFIPT_WORDS_AHEAD))

#define CHUNK_MASK	(64 * BPFIPT_TOP_WORDS - 1)
_Static_assert(!(64 * BPFIPT_TOP_WORDS & CHUNK_MASK), "CHUNK_MASK");

/* The first chunk >= sc->kc whose bit is set in the packet's chunk bitmap, or
 * NO_SLOT. */
static __always_inline __u32 next_chunk(struct scratch *sc)
{
	__u32 kc = RD(sc->kc);
	int j;

#pragma unroll
	for (j = 0; j < BPFIPT_TOP_WORDS; j++) {
		__u64 m;

		if (kc / 64 > (__u32)j)
			continue;
		m = RD(sc->top[j]);
		if (kc / 64 == (__u32)j)
			m &= ~0ULL << (kc & 63);
		if (m)
			return j * 64 + ctz64(m);
	}
	return NO_SLOT;
}

/* Word gw of the walk's AND x (not 0) masked: the cursor's word from the
 * cursor on, and a folded list's slot out where the address is not listed. */
#define WORD_MASKS(gw, x)							\
	do {									\
		if ((gw) == RD(sc->w0))						\
			x &= RD(sc->first);					\
		if ((gw) == RD(sc->gskip_w[0]))					\
			x &= ~RD(sc->gskip_b[0]);				\
		if ((gw) == RD(sc->gskip_w[1]))					\
			x &= ~RD(sc->gskip_b[1]);				\
	} while (0)

/* The bits of candidate word w of chunk k (the cursor's word masked from the
 * cursor on) in the AND of the vectors. The masks only clear bits: they are
 * taken when the AND left some (most candidate words leave none). Chunk 0's
 * AND is kept for the walk's later steps (sc->c0word). */
#define WORD_BITS(w, x)								\
	do {									\
		x = pc[w] & p_SRC[w] & p_DST[w] & p_DPORT[w];			\
		if (x)								\
			x &= p_SPORT[w] & p_PROTO[w] & p_IIF[w] & p_OIF[w];	\
		if (x)								\
			x &= p_ICMP[w] & p_TCPFLAGS[w] & p_LEN[w] & p_FRAG[w] &	\
			     p_CTSTATE[w];					\
		if (k == 0) {							\
			sc->c0word[(w) & (BPFIPT_CHUNK_WORDS - 1)] = x;		\
			sc->c0have |= 1ULL << ((w) & (BPFIPT_CHUNK_WORDS - 1));	\
		}								\
		if (x)								\
			WORD_MASKS((__u32)k * BPFIPT_CHUNK_WORDS + (w), x);	\
	} while (0)

/* Candidate words cand of chunk k from the cursor's word on. */
static __always_inline __u64 from_cursor(struct scratch *sc, __u32 k, __u64 cand)
{
	if (k == RD(sc->w0) / BPFIPT_CHUNK_WORDS)
		cand &= ~0ULL << (RD(sc->w0) % BPFIPT_CHUNK_WORDS);
	return cand;
}

/* The first slot >= the cursor in chunk k: NO_SLOT if none, NO_SLOT - 1 on an
 * internal error. Its candidate words are the packet's csum[k] (rows: taken by
 * bpfipt_chunk_row()) or the AND of the chunk's summary words; with_top (k == 0)
 * also takes the packet's chunk bitmap. The first BPFIPT_WORDS_AHEAD candidate
 * words (WORDS_AHEAD()) are tested before the loop, unrolled: most packets' slot
 * is in the first. */
static __always_inline __u32 chunk_find(struct scratch *sc, void *pool, void **pg, __u32 cur,
					__u32 k, bool with_top, bool rows, const bool windows,
					const bool one)
{
	const __u64 *pc, *p_SRC, *p_DST, *p_DPORT, *p_SPORT, *p_PROTO, *p_IIF, *p_OIF,
		*p_ICMP, *p_TCPFLAGS, *p_LEN, *p_FRAG, *p_CTSTATE;
	__u32 key, w, found = NO_SLOT;
	__u64 cand = 0, x;
	int i;

	if (rows) {
		cand = from_cursor(sc, k, RD(sc->csum[k & CHUNK_MASK]));
		if (!cand)
			return NO_SLOT;
	}
	key = pool_key(sc, WIN_CVEC, RD(sc->cvec), k, windows);
	pc = POOL_GETC(PGC_CVEC, key);
	if (!pc)
		goto broken;
	POOL_PTRS();
	if (with_top) {		/* k == 0: the packet's chunk bitmap (top_bitmap()) too */
		TOP_AND(i);
		sc->top_ready = 1;
		if (!(sc->top[0] & 1))	/* chunk 0 has no candidate */
			return NO_SLOT;
	}
	if (!rows) {
		/* candidate words: the AND of the summaries, from the cursor on */
		cand = pc[BPFIPT_CHUNK_WORDS] & p_SRC[BPFIPT_CHUNK_WORDS] &
		       p_DST[BPFIPT_CHUNK_WORDS] & p_DPORT[BPFIPT_CHUNK_WORDS] &
		       p_SPORT[BPFIPT_CHUNK_WORDS] & p_PROTO[BPFIPT_CHUNK_WORDS] &
		       p_IIF[BPFIPT_CHUNK_WORDS] & p_OIF[BPFIPT_CHUNK_WORDS] &
		       p_ICMP[BPFIPT_CHUNK_WORDS] & p_TCPFLAGS[BPFIPT_CHUNK_WORDS] &
		       p_LEN[BPFIPT_CHUNK_WORDS] & p_FRAG[BPFIPT_CHUNK_WORDS] &
		       p_CTSTATE[BPFIPT_CHUNK_WORDS];
		if (k == 0) {
			sc->c0cand = cand;
			sc->c0ok = 1;
		}
		cand = from_cursor(sc, k, cand);
		if (!cand)
			return NO_SLOT;
	}
#pragma unroll
	for (i = 0; i < BPFIPT_WORDS_AHEAD; i++) {
		if (!WORDS_AHEAD(i))
			break;
		w = ctz64(cand) & (BPFIPT_CHUNK_WORDS - 1);
		cand &= cand - 1;
		WORD_BITS(w, x);
		if (x)
			return (k * BPFIPT_CHUNK_WORDS + w) * 64 + ctz64(x);
		if (!cand)
			return NO_SLOT;
	}
	LOOP_UPTO(BPFIPT_CHUNK_WORDS, goto broken, {
		if (!cand)
			break;
		w = ctz64(cand) & (BPFIPT_CHUNK_WORDS - 1);
		cand &= cand - 1;
		WORD_BITS(w, x);
		if (!x)
			continue;
		found = (k * BPFIPT_CHUNK_WORDS + w) * 64 + ctz64(x);
		break;
	});
	return found;
broken:
	return NO_SLOT - 1;
}

/* Bits set in the packet's chunk bitmap (BPFIPT_TOP_WORDS words). */
static __always_inline __u32 top_count(struct scratch *sc)
{
	__u32 n = 0;
	__u64 m;
	int j;

#pragma unroll
	for (j = 0; j < BPFIPT_TOP_WORDS; j++) {
		m = RD(sc->top[j]);
		m -= (m >> 1) & 0x5555555555555555ULL;
		m = (m & 0x3333333333333333ULL) + ((m >> 2) & 0x3333333333333333ULL);
		m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
		n += (m * 0x0101010101010101ULL) >> 56;
	}
	return n;
}

/* The search in chunk 0 once a step saw it (sc->c0ok; bpfipt_step() asks it
 * before find_slot()): its words' AND kept (sc->c0word), from the
 * cursor on. C0_UNSEEN: a candidate word not computed yet, the search
 * (find_slot()) to go on from it (sc->w0, sc->first moved there); chunk 0
 * holds nothing from the cursor on: NO_SLOT, or C0_UNSEEN from chunk 1 when the
 * chain has more. Tested before the iterator as chunk_find()'s first words are;
 * a walk's steps rarely look further. */
#define C0_UNSEEN (NO_SLOT - 3)
static __always_inline __u32 chunk0_seen(struct scratch *sc)
{
	__u64 cand = RD(sc->c0cand) & (~0ULL << sc->w0), x;
	__u32 w;
	int i;

#pragma unroll
	for (i = 0; i < BPFIPT_WORDS_AHEAD; i++) {
		if (!WORDS_AHEAD(i))
			break;
		if (!cand) {
			if (RD(sc->nchunks) == 1)
				return NO_SLOT;
			sc->w0 = BPFIPT_CHUNK_WORDS;
			sc->first = ~0ULL;
			return C0_UNSEEN;
		}
		w = ctz64(cand) & (BPFIPT_CHUNK_WORDS - 1);
		if (!(RD(sc->c0have) & (1ULL << w))) {
			if (w != sc->w0) {
				sc->w0 = w;
				sc->first = ~0ULL;
			}
			return C0_UNSEEN;
		}
		cand &= cand - 1;
		x = RD(sc->c0word[w]);
		if (x)
			WORD_MASKS(w, x);
		if (x)
			return w * 64 + ctz64(x);
	}
	/* more candidate words than that: from the next */
	if (cand) {
		sc->w0 = ctz64(cand) & (BPFIPT_CHUNK_WORDS - 1);
		sc->first = ~0ULL;
		return C0_UNSEEN;
	}
	if (RD(sc->nchunks) == 1)
		return NO_SLOT;
	sc->w0 = BPFIPT_CHUNK_WORDS;
	sc->first = ~0ULL;
	return C0_UNSEEN;
}

/* Chunk k of a walk with rows holds the policy's word (sc->pw) and no candidate
 * word before it: the chain holds no match before the policy (the first slot
 * of its word, set in every vector), which is the walk's slot, without the
 * chunk's lookups. */
#define AT_POLICY(k)								\
	(FEAT(BPFIPT_FEAT_ROWS) && (k) == RD(sc->pw) / BPFIPT_CHUNK_WORDS &&	\
	 RD(sc->rows_ready) &&							\
	 !(from_cursor(sc, k, RD(sc->csum[(k) & CHUNK_MASK])) &		\
	   ((1ULL << (RD(sc->pw) % BPFIPT_CHUNK_WORDS)) - 1)))

/* The first slot >= cursor set in the AND of the vectors: NO_SLOT if none,
 * NO_SLOT - 1 on an internal error. The loop visits only the chunks of the
 * packet's chunk bitmap (one per iteration: never more than nchunks); the first
 * candidate chunk is looked at before it (a ruleset of <= 4096 slots has one).
 * With many candidate chunks, the packet's summary rows (bpfipt_chunk_row())
 * are taken once per walk, past the chunks already searched. Inline in
 * bpfipt_step() (FIND_SLOT()): as a global function it cost two calls a walk
 * with rows (the search, and again after the rows), ~7.5 ns each where returns
 * take the Safe RET thunk; its 13 live pool pointers fit in the step's frame
 * since the tc programs' REJECT is a function of its own (tc_reject()). A
 * flat pool of pages keeps the page of the constant vector and of the five
 * tuple's fields from chunk to chunk (pool_cached(): a field's page looked up
 * once a search while its vector's chunks stay on it, not once a chunk);
 * six pointers more in the step's frame,
 * whose deepest chain is bpfipt_tc_in 144 + bpfipt_step 272 +
 * bpfipt_recent_mt 80 of the verifier's 512 bytes (bpfipt_chunk_row 48). */
static __always_inline __u32 find_slot(struct scratch *sc, __u32 cursor, const bool windows,
				       const bool one)
{
	__u32 cur, k, found, pol;
	void *pool = NULL, *pg[PGC_N], *p0;
	int r;

	if (!sc)
		return NO_SLOT - 1;
	sc->w0 = cursor / 64;
	sc->first = ~0ULL << (cursor & 63);
	/* the policy the first slot of its word (cp_compiled.npad), the cursor
	 * before it: a search that reaches its word found no rule (AT_POLICY(),
	 * only in programs with the rows) */
	if (FEAT(BPFIPT_FEAT_ROWS)) {
		pol = RD(sc->policy);
		sc->pw = cursor <= pol && !(pol % 64) ? pol / 64 : NO_SLOT;
	}
	if (sc->w0 >= sc->nwords || sc->nwords > BPFIPT_MAX_WORDS)
		return NO_SLOT;
	cur = sc->cur;
	k = cur * BPFIPT_PAGES_MAX;
	if (one) {	/* the pool's one page, once */
		pool = bpf_map_lookup_elem(&bpfipt_pages, &k);
		if (!pool)
			return NO_SLOT - 1;
	} else if (!windows) {	/* the page cache, all its slots at page 0 */
		p0 = bpf_map_lookup_elem(&bpfipt_pages, &k);
		if (!p0)
			return NO_SLOT - 1;
#pragma unroll
		for (r = 0; r < PGC_N; r++) {
			pg[r] = p0;
			sc->pgi[r] = 0;
		}
	}
	if (!windows && RD(sc->nchunks) == 1)	/* one chunk: no chunk bitmap to consult */
		return chunk_find(sc, pool, pg, cur, 0, false, false, false, one);
	sc->kc = sc->w0 / BPFIPT_CHUNK_WORDS;
	if (!sc->top_ready) {
		/* the walk's first step (cursor in chunk 0) of a ruleset of several
		 * chunks: chunk 0's entries hold the chunk bitmaps, one visit takes
		 * the packet's and searches the chunk (an empty one finds nothing) */
		if (sc->kc == 0) {
			sc->kc = 1;
			found = chunk_find(sc, pool, pg, cur, 0, true, false, windows, one);
			if (found != NO_SLOT)
				return found;
		} else if (top_bitmap(sc, pool, pg, cur, windows, one)) {
			return NO_SLOT - 1;
		}
		/* many candidate chunks left: the rows first (a walk whose first
		 * step found its slot goes on without them); in a windowed pool the
		 * first candidate chunk before them: its vectors are their bases
		 * but for a chunk, most chunks hold the user chains' rules that
		 * name no field, and many user chains' walks find their slot in the
		 * first candidate, where the rows cost 60 ns and skipped nothing
		 * (a flat pool of unlike rules pays a chunk that way: +65-95 ns) */
		if (FEAT(BPFIPT_FEAT_ROWS) && RD(sc->nrows) &&
		    top_count(sc) >= BPFIPT_ROWS_CAND) {
			k = windows ? next_chunk(sc) : NO_SLOT;
			if (k < RD(sc->nchunks)) {
				k &= CHUNK_MASK;
				sc->kc = k + 1;
				found = chunk_find(sc, pool, pg, cur, k, false, false, windows, one);
				if (found != NO_SLOT)
					return found;
			}
#pragma unroll
			for (r = 0; r < BPFIPT_TOP_WORDS; r++) {
				if (r >= RD(sc->nrows))
					break;
				if (bpfipt_chunk_row(sc, r))
					return NO_SLOT - 1;
			}
			sc->rows_ready = 1;
			stat_inc(BPFIPT_ST_ROWS);
		}
	}
	/* k & CHUNK_MASK (k < 64 * BPFIPT_TOP_WORDS): next_chunk() returns from one
	 * place per bitmap word, each with a range of its own, which the mask
	 * makes one; else each would go through chunk_find() as a state of its own */
	k = next_chunk(sc);
	if (k >= RD(sc->nchunks))
		return NO_SLOT;
	if (AT_POLICY(k))
		return RD(sc->pw) * 64;
	k &= CHUNK_MASK;
	sc->kc = k + 1;
	found = chunk_find(sc, pool, pg, cur, k, false, RD(sc->rows_ready), windows, one);
	if (found != NO_SLOT)
		return found;
	LOOP_UPTO(sc->nchunks - 1, return NO_SLOT - 1, {
		k = next_chunk(sc);
		if (k >= RD(sc->nchunks))
			break;
		if (AT_POLICY(k)) {
			found = RD(sc->pw) * 64;
			break;
		}
		k &= CHUNK_MASK;
		sc->kc = k + 1;
		found = chunk_find(sc, pool, pg, cur, k, false, RD(sc->rows_ready), windows, one);
		if (found != NO_SLOT)
			break;
	});
	return found;
}

/* The search of the step, one instance per kind of pool (sc->windows,
 * sc->onepage say which): windowed; flat, a chunk two lookups (its page's and
 * its own); of one page (BPFIPT_C_ONE_PAGE), the page looked up once. Programs
 * without BPFIPT_FEAT_PAGES run only generations of one page or windowed. */
#define FIND_SLOT(sc, cursor)							\
	(FEAT(BPFIPT_FEAT_WINDOWS) && RD((sc)->windows) ?			\
		 find_slot(sc, cursor, true, false) :				\
	 FEAT(BPFIPT_FEAT_PAGES) && !RD((sc)->onepage) ?			\
		 find_slot(sc, cursor, false, false) :				\
		 find_slot(sc, cursor, false, true))

/* -m conntrack beyond --ctstate (xt_conntrack's conntrack_mt; the state test
 * itself is the BPFIPT_F_CTSTATE field). */
static __always_inline bool ct_addr_ok(const __be32 *a, const __be32 *addr, const __be32 *mask)
{
	/* IPv4: words 1-3 of the address and of the mask are 0 */
	return (((a[0] ^ addr[0]) & mask[0]) | ((a[1] ^ addr[1]) & mask[1]) |
		((a[2] ^ addr[2]) & mask[2]) | ((a[3] ^ addr[3]) & mask[3])) == 0;
}

static __always_inline bool ct_port_ok(__u32 port, const __u16 *r)
{
	return port >= r[0] && port <= r[1];
}

#define CT_FAIL(flag, cond) (((e->ct_flags & (flag)) && (!!(cond) ^ !(e->ct_inv & (flag)))))

static __always_inline bool ct_match(const struct bpfipt_extra *e, const struct pkt *p)
{
	__u64 exp;

	if (!p->ct.has)
		return e->ct_flags & XT_CONNTRACK_STATE;
	if ((e->ct_flags & XT_CONNTRACK_DIRECTION) &&
	    ((p->ct.dir == 0) ^ !(e->ct_inv & XT_CONNTRACK_DIRECTION)))
		return false;
	if (CT_FAIL(XT_CONNTRACK_ORIGSRC, ct_addr_ok(p->ct.osrc, e->ct_addr[0], e->ct_mask[0])) ||
	    CT_FAIL(XT_CONNTRACK_ORIGDST, ct_addr_ok(p->ct.odst, e->ct_addr[1], e->ct_mask[1])) ||
	    CT_FAIL(XT_CONNTRACK_REPLSRC, ct_addr_ok(p->ct.odst, e->ct_addr[2], e->ct_mask[2])) ||
	    CT_FAIL(XT_CONNTRACK_REPLDST, ct_addr_ok(p->ct.osrc, e->ct_addr[3], e->ct_mask[3])))
		return false;
	if (CT_FAIL(XT_CONNTRACK_PROTO, p->ct.proto == e->ct_proto))
		return false;
	if (CT_FAIL(XT_CONNTRACK_ORIGSRC_PORT, ct_port_ok(p->ct.osport, e->ct_port[0])) ||
	    CT_FAIL(XT_CONNTRACK_ORIGDST_PORT, ct_port_ok(p->ct.odport, e->ct_port[1])) ||
	    CT_FAIL(XT_CONNTRACK_REPLSRC_PORT, ct_port_ok(p->ct.odport, e->ct_port[2])) ||
	    CT_FAIL(XT_CONNTRACK_REPLDST_PORT, ct_port_ok(p->ct.osport, e->ct_port[3])))
		return false;
	if (CT_FAIL(XT_CONNTRACK_STATUS, p->ct.status & e->ct_status))
		return false;
	exp = p->ct.expire;
	if (CT_FAIL(XT_CONNTRACK_EXPIRES, exp >= e->ct_expire[0] && exp <= e->ct_expire[1]))
		return false;
	return true;
}

/* inet_dev_addr_type(): the RTN_* type of the packet's address d (0 the
 * source, 1 the destination); dev != 0: a route of another device does not
 * count (UNICAST). The route trie's answer kept for the packet's later rules
 * (ufw asks the destination's type twice a packet: LOCAL, then BROADCAST). */
static __always_inline __u32 addr_type(struct pkt *p, __u32 d, __u32 dev)
{
	struct bpfipt_rt_key k = { .prefixlen = 32 };
	__be32 a = d ? p->daddr : p->saddr;
	struct bpfipt_rt_val *v;
	__u32 h = bpf_ntohl(a);

	d &= 1;
	if ((h >> 24) == 0 || h == 0xffffffffu)
		return RTN_BROADCAST;
	if ((h >> 28) == 0xe)
		return RTN_MULTICAST;
	if (!(p->rt_seen & (1u << d))) {
		__builtin_memcpy(k.addr, &a, 4);
		v = bpf_map_lookup_elem(&bpfipt_rtlocal, &k);
		p->rt_type[d] = v ? v->type : 0;
		p->rt_if[d] = v ? v->ifindex : 0;
		p->rt_seen |= 1u << d;
	}
	if (!p->rt_type[d] || (dev && p->rt_if[d] != dev))
		return RTN_UNICAST;
	return p->rt_type[d];
}

static __always_inline bool addrtype_match(const struct bpfipt_extra *e, struct pkt *p)
{
	__u32 dev = e->at_flags & BPFIPT_AT_LIMIT_IN ? p->iif :
		    e->at_flags & BPFIPT_AT_LIMIT_OUT ? p->oif : 0;

	if (e->at_src &&
	    !!(e->at_src & (1u << (addr_type(p, 0, dev) & 15))) ==
	    !!(e->at_flags & BPFIPT_AT_INVERT_SRC))
		return false;
	return !e->at_dst ||
	       !!(e->at_dst & (1u << (addr_type(p, 1, dev) & 15))) !=
	       !!(e->at_flags & BPFIPT_AT_INVERT_DST);
}

/* The extra checks of a candidate slot that need no state: multiport --ports,
 * mark, mac, conntrack's details, addrtype. */
static __always_inline bool extra_match(const struct bpfipt_extra *e, struct pkt *p, __u32 xf)
{
	int i;

	if (xf & BPFIPT_X_PORTS_EITHER) {
		__u32 hit = 0, sp = p->sport, dp = p->dport;

		/* multiport --ports never matches a packet without ports, inverted or not */
		if (sp == BPFIPT_NO_PORT)
			return false;
		/* without a branch per range (ports < 65536: a difference is negative
		 * when the port is out): the loop's head keeps one state */
		for (i = 0; i < 15 && i < e->nports; i++) {
			__u32 lo = e->ports[2 * i], hi = e->ports[2 * i + 1];

			hit |= ~(((sp - lo) | (hi - sp)) & ((dp - lo) | (hi - dp))) >> 31;
		}
		if (!!hit == !!e->ports_invert)
			return false;
	}
	if ((xf & BPFIPT_X_MARK) &&
	    ((p->mark & e->mark_mask) == e->mark_value) == !!e->mark_invert)
		return false;
	if (xf & BPFIPT_X_MAC) {
		__u32 diff = 0;

		/* xt_mac: no match at all off Ethernet devices, inverted or not */
		if (!p->has_mac)
			return false;
		for (i = 0; i < 6; i++)
			diff |= p->mac[i] ^ e->mac[i];
		if (!diff == !!e->mac_invert)
			return false;
	}
	if ((xf & BPFIPT_X_CT) && !ct_match(e, p))
		return false;
	if ((xf & BPFIPT_X_ADDRTYPE) && !addrtype_match(e, p))
		return false;
	return true;
}

/* ---------------------------------------------------------- -m recent ---- */

#define RC_NONE BPFIPT_RECENT_ENTRIES

/* The entry to evict or reap: the least recently set or updated (the head of
 * xt_recent's LRU list), or RC_NONE. Under the list's lock. The running
 * minimum lives in the scratch map (sc->rc_*), whose contents the verifier
 * does not track: the branches of an iteration end in one state, not in one
 * per candidate. */
static __always_inline __u32 rc_oldest(struct scratch *sc, struct bpfipt_recent_table *t)
{
	__u32 i;

	volatile __u64 *best = &sc->rc_best;
	volatile __u32 *o = &sc->rc_o;

	*best = ~0ull;
	*o = RC_NONE;
	for (i = 0; i < BPFIPT_RECENT_ENTRIES; i++)
		if (t->e[i].used && t->e[i].lru < *best) {
			*best = t->e[i].lru;
			*o = i;
		}
	return *o;
}

static __always_inline void rc_remove(struct bpfipt_recent_table *t, __u32 k)
{
	if (k < BPFIPT_RECENT_ENTRIES && t->e[k].used) {
		t->e[k].used = 0;
		t->nentries--;
	}
}

/* xt_recent's recent_mt() on one list: 1 matches, 0 does not. A global
 * function, verified once; everything between lock and unlock is inline and
 * calls nothing (the verifier's rule for spin locks). The entry found is
 * parked in sc->rc_k, a map value whose contents the verifier does not track:
 * the hundred ways out of the search loop become one state. */
__noinline int bpfipt_recent_mt(struct scratch *sc, __u32 table, __u32 seconds, __u32 hitcount,
			     __u32 fl)
{
	struct bpfipt_recent_table *t;
	struct bpfipt_recent_entry *x;
	__u32 cs = fl & 0xff, i, k;
	__u64 now = bpf_ktime_get_ns(), win = (__u64)seconds * 1000000000ull, thr;
	int ret = (fl >> 8) & 1;
	__be32 a;
	__u8 ttl;

	if (!sc)
		return 0;
	t = bpf_map_lookup_elem(&bpfipt_recent, &table);
	if (!t)
		return 0;	/* a list being replaced: nothing is known about anyone */
	a = ((fl >> 16) & 1 ? sc->p.daddr : sc->p.saddr) & t->mask;
	ttl = sc->p.ttl;
	thr = now > win ? now - win : 0;	/* stamps before thr are too old */

	bpf_spin_lock(&t->lock);
	*(volatile __u32 *)&sc->rc_k = RC_NONE;
	/* two loops: a test of cs or ttl inside one would leave the loop's head
	 * with a state per outcome, each walked to the end of the list */
	if (!(cs & XT_RECENT_TTL) || !ttl) {
		for (i = 0; i < BPFIPT_RECENT_ENTRIES; i++) {
			x = &t->e[i];
			if (x->used && x->addr == a) {
				*(volatile __u32 *)&sc->rc_k = i;
				break;
			}
		}
	} else {
		for (i = 0; i < BPFIPT_RECENT_ENTRIES; i++) {
			x = &t->e[i];
			if (x->used && x->addr == a && (x->ttl == ttl || !x->ttl)) {
				*(volatile __u32 *)&sc->rc_k = i;
				break;
			}
		}
	}
	k = *(volatile __u32 *)&sc->rc_k;
	if (k >= BPFIPT_RECENT_ENTRIES) {
		if (!(cs & XT_RECENT_SET))
			goto out;
		/* a new entry; a full list loses its least recently used one */
		if (t->nentries >= BPFIPT_RECENT_ENTRIES)
			rc_remove(t, rc_oldest(sc, t));
		*(volatile __u32 *)&sc->rc_k = RC_NONE;
		for (i = 0; i < BPFIPT_RECENT_ENTRIES; i++)
			if (!t->e[i].used) {
				*(volatile __u32 *)&sc->rc_k = i;
				break;
			}
		k = *(volatile __u32 *)&sc->rc_k;
		if (k < BPFIPT_RECENT_ENTRIES) {
			x = &t->e[k];
			x->used = 1;
			x->addr = a;
			x->ttl = ttl;
			x->stamps[0] = now;
			x->nstamps = 1;
			x->index = 1;
			x->lru = ++t->clock;
			t->nentries++;
		}
		ret = !ret;
		goto out;
	}
	x = &t->e[k];
	if (cs & XT_RECENT_SET) {
		ret = !ret;
	} else if (cs & XT_RECENT_REMOVE) {
		rc_remove(t, k);
		ret = !ret;
		goto out;
	} else if (cs & (XT_RECENT_CHECK | XT_RECENT_UPDATE)) {
		volatile __u32 *hits = &sc->rc_hits;

		*hits = 0;
		for (i = 0; i < BPFIPT_RECENT_STAMPS; i++) {
			if (i >= x->nstamps)
				break;
			if (seconds && x->stamps[i] < thr)
				continue;
			*hits += 1;
			if (!hitcount || *hits >= hitcount) {
				ret = !ret;
				break;
			}
		}
		if (cs & XT_RECENT_REAP) {
			/* the oldest entry goes when its last sighting is too old */
			__u32 o = rc_oldest(sc, t);

			if (o < BPFIPT_RECENT_ENTRIES && o != k &&
			    t->e[o].stamps[(t->e[o].index - 1) & (BPFIPT_RECENT_STAMPS - 1)] < thr)
				rc_remove(t, o);
		}
	}
	if ((cs & XT_RECENT_SET) || ((cs & XT_RECENT_UPDATE) && ret)) {
		i = x->index & (BPFIPT_RECENT_STAMPS - 1);
		x->stamps[i] = now;
		x->index = i + 1;
		if (x->index > x->nstamps)
			x->nstamps = x->index;
		x->lru = ++t->clock;
		x->ttl = ttl;
	}
out:
	bpf_spin_unlock(&t->lock);
	return ret;
}

enum { X_FAIL, X_OK, X_BROKEN };

#define LIMIT_TRIES	4	/* a -m limit's compare and exchange */

/* All extra checks of a candidate slot (BPFIPT_X_*, except the group bits). */
static __always_inline int extra_ok(__u32 cur, const struct bpfipt_slot *sl, struct scratch *sc)
{
	struct pkt *p = &sc->p;
	__u32 xf = sl->xflags, idx = sl->extra;
	struct bpfipt_limit_state *ls;
	struct bpfipt_extra *e;
	__u64 now, cap, cost;
	int try;
	void *m;

	m = bpf_map_lookup_elem(&bpfipt_extras, &cur);
	if (!m)
		return X_BROKEN;
	e = bpf_map_lookup_elem(m, &idx);
	if (!e)
		return X_BROKEN;
	if (!extra_match(e, p, xf))
		return X_FAIL;
	/* the stateful ones last, recent before limit (a token is spent only on a
	 * packet the rest matched) */
	if (xf & BPFIPT_X_RECENT) {
		/* the loader switches to no such generation while we lack it */
		if (!FEAT(BPFIPT_FEAT_RECENT))
			return X_BROKEN;
		if (!bpfipt_recent_mt(sc, e->rc_table, e->rc_seconds, e->rc_hitcount,
				      e->rc_flags | (__u32)e->rc_invert << 8 |
				      (__u32)e->rc_side << 16))
			return X_FAIL;
	}
	if (!(xf & BPFIPT_X_LIMIT))
		return X_OK;
	/* Last, so that a token is spent only on a packet the rest matched:
	 * iptables' credit algorithm (xt_limit), in nanoseconds, as the time its
	 * credit is next full (bpfipt_limit_state), changed by a compare and
	 * exchange: no lock, whose two helper calls cost more than the rest
	 * where returns are costly */
	m = bpf_map_lookup_elem(&bpfipt_limits, &cur);
	if (!m)
		return X_BROKEN;
	ls = bpf_map_lookup_elem(m, &idx);
	if (!ls)
		return X_BROKEN;
	now = bpf_ktime_get_ns();
	cap = e->limit_credit_cap;
	cost = e->limit_cost;
#pragma unroll
	for (try = 0; try < LIMIT_TRIES; try++) {
		__u64 full = RD(ls->full), from = full > now ? full : now;

		/* the credit now, cap - (from - now), less than a packet's cost */
		if (from - now + cost > cap)
			return X_FAIL;
		if (__sync_val_compare_and_swap(&ls->full, full, from + cost) == full)
			return X_OK;
	}
	return X_FAIL;	/* LIMIT_TRIES other CPUs took tokens meanwhile */
}

/* The counter of a matched slot: a group slot counts on the rule of the run that
 * matches the address first (the group's address set). */
/* A group slot's counter for the packet's address, BPFIPT_IVAL_NONE when the
 * address is not in its list. */
static __always_inline __u32 group_counter(__u32 cur, const struct bpfipt_slot *sl,
					   const struct pkt *p, struct scratch *sc)
{
	if (IS6(p))
		return bpfipt_ival6_find(sc, sl->ival, !(sl->xflags & BPFIPT_X_GROUP_SRC));
	return bpfipt_ival_find(cur, sl->ival,
				bpf_ntohl(sl->xflags & BPFIPT_X_GROUP_SRC ? p->saddr : p->daddr));
}

_Static_assert(__builtin_offsetof(struct pkt, saddr6) % 8 == 0 &&
	       __builtin_offsetof(struct pkt, daddr6) % 8 == 0, "an address's halves are aligned");

/* Half h of an IPv6 address (bits 64 h .. 64 h + 63) masked to plen bits. a is
 * the half's 8 bytes loaded as they lie (network order), so the mask is swapped
 * the same way. Two tests a half instead of two a 32-bit word: the key's masks
 * were a tenth of an IPv6 tuple lookup's samples. */
static __always_inline __u64 mask6_half(__u64 a, __u32 plen, __u32 h)
{
	__u32 bits = plen > 64 * h ? plen - 64 * h : 0;

	return bits >= 64 ? a : bits ? a & bpf_cpu_to_be64(~0ULL << ((64 - bits) & 63)) : 0;
}

/* The bits sc->tbm of word sc->tbw of generation *cur's bitmap (bpfipt_tbits),
 * which SETUP writes, are all clear. The word and bits go through the scratch
 * map, set before the lookups: kept across them in registers or the frame,
 * they grew the frames of the functions that inline this (bpfipt_tc_in,
 * bpfipt_tuple6_find) by 16-32 bytes, where the deepest calls have none to
 * spare. The caller's cur by address: a copy of it in a stack slot of its own
 * cost the verifier 29k more instructions (bpfipt_fast_prefix()). */
#define TBITS_CLEAR(cur, SETUP, sc)						\
	({									\
		void *bm_;							\
		bool clear_ = false;						\
		__u64 *w_;							\
		SETUP;								\
		bm_ = bpf_map_lookup_elem(&bpfipt_tbits, cur);			\
		if (bm_) {							\
			w_ = bpf_map_lookup_elem(bm_, &(sc)->tbw);		\
			clear_ = w_ && !(*w_ & (sc)->tbm);			\
		}								\
		clear_;								\
	})

/* The bit of key k (IPv6: k6; the other NULL) in generation cur's tuple bitmap
 * (bpfipt.h, bpfipt_tbit()) is clear: the key is in no group, no search of the
 * hash (the loader writes the bitmap of every generation that has tuple groups,
 * next to their hash; one without them never asks). */
static __always_inline bool tbit_clear(const __u32 *cur, const struct bpfipt_tuple_key *k,
				       const struct bpfipt_tuple6_key *k6, struct scratch *sc)
{
	__u32 b;

	return TBITS_CLEAR(cur,
			   (b = k6 ? bpfipt_tbit6(k6) : bpfipt_tbit(k), sc->tbw = b / 64,
			    sc->tbm = 1ULL << (b & 63)),
			   sc);
}

/* IPv6: the offset of the packet's tuple in tuple group `group` (from the run's
 * first rule), struct bpfipt_tuple6_key in bpfipt_tuple6, BPFIPT_IVAL_NONE
 * without one (tuple_counter()). Its key in the scratch map (sc->tk6), not
 * a frame: inline in the slot prefix (pfx_tgrp_find()), where a call and its
 * return cost ~8 ns on a CPU with Safe RET; elsewhere bpfipt_tuple6_find(),
 * checked once (inline in fast_tuple() too, it grew the programs' main frame
 * past what a walk with the summary rows leaves of 512 bytes). */
static __always_inline __u32 tuple6_find(struct scratch *sc, __u32 group, __u32 splen,
					 __u32 dplen, __u32 ports)
{
	struct bpfipt_tuple6_key *k = &sc->tk6;
	__u32 *v;
	void *m;
	__u64 a;
	int h;

	__builtin_memset(k, 0, sizeof(*k));
	k->group = group;
#pragma unroll
	for (h = 0; h < 2; h++) {
		a = mask6_half(*(__u64 *)&sc->p.saddr6[2 * h], splen, h);
		k->src[2 * h] = (__u32)a;
		k->src[2 * h + 1] = a >> 32;
		a = mask6_half(*(__u64 *)&sc->p.daddr6[2 * h], dplen, h);
		k->dst[2 * h] = (__u32)a;
		k->dst[2 * h + 1] = a >> 32;
	}
	k->sport = ports & BPFIPT_TP_SPORT ? sc->p.sport : 0;
	k->dport = ports & BPFIPT_TP_DPORT ? sc->p.dport : 0;
	k->proto = ports & BPFIPT_TP_PROTO ? sc->p.proto : 0;
	/* the generation by the scratch map's copy: no frame slot of its own */
	if (tbit_clear(&sc->cur, NULL, k, sc))
		return BPFIPT_IVAL_NONE;
	m = bpf_map_lookup_elem(&bpfipt_tuple6, &sc->cur);
	v = m ? bpf_map_lookup_elem(m, k) : NULL;
	return v ? *v : BPFIPT_IVAL_NONE;
}

__noinline __u32 bpfipt_tuple6_find(struct scratch *sc, __u32 group, __u32 splen,
				    __u32 dplen, __u32 ports)
{
	return sc ? tuple6_find(sc, group, splen, dplen, ports) : BPFIPT_IVAL_NONE;
}

/* A tuple group slot's counter for the packet (bpfipt.h, "A tuple group"): the
 * slot's (its run's first rule) + the offset the hash gives, BPFIPT_IVAL_NONE
 * when no rule of the run has the packet's tuple. A packet without ports (a
 * later fragment, a cut header) has none when the key holds a port: the walk
 * would not make the slot a candidate, and fast_tuple() does not ask the
 * vectors. */
static __always_inline __u32 tuple_counter(__u32 cur, __u32 group, __u32 counter, __u32 splen,
					   __u32 dplen, __u32 ports, const struct pkt *p,
					   struct scratch *sc, const bool inline6)
{
	struct bpfipt_tuple_key *k = &sc->tk;
	__u32 *v, off;
	void *m;

	if ((ports & (BPFIPT_TP_SPORT | BPFIPT_TP_DPORT)) && p->sport > 0xffff)
		return BPFIPT_IVAL_NONE;
	if (IS6(p)) {
		off = inline6 ? tuple6_find(sc, group, splen, dplen, ports) :
				bpfipt_tuple6_find(sc, group, splen, dplen, ports);
		return off == BPFIPT_IVAL_NONE ? off : counter + off;
	}
	__builtin_memset(k, 0, sizeof(*k));
	k->group = group;
	k->src = splen ? p->saddr & bpf_htonl(~0u << ((32 - splen) & 31)) : 0;
	k->dst = dplen ? p->daddr & bpf_htonl(~0u << ((32 - dplen) & 31)) : 0;
	k->sport = ports & BPFIPT_TP_SPORT ? p->sport : 0;
	k->dport = ports & BPFIPT_TP_DPORT ? p->dport : 0;
	k->proto = ports & BPFIPT_TP_PROTO ? p->proto : 0;
	if (tbit_clear(&cur, k, NULL, sc))
		return BPFIPT_IVAL_NONE;
	m = bpf_map_lookup_elem(&bpfipt_tuple, &cur);
	if (!m)
		return BPFIPT_IVAL_NONE;
	v = bpf_map_lookup_elem(m, k);
	return v ? counter + *v : BPFIPT_IVAL_NONE;
}

/* One packet of len bytes on counter c: per-CPU, or shared (atomic) */
static __always_inline void ctr_add(struct bpfipt_counter *c, bool shared, __u32 len)
{
	if (shared) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, len);
	} else {
		c->packets += 1;
		c->bytes += len;
	}
}

/* Entry e (a __u32) of generation cur's inner map of a pair: fx, of one size,
 * whose lookup the verifier inlines, when conf's flag says so; else sized, of
 * the generation's size, looked up through a call (bpfipt.h). NULL if none.
 * Each map its own lookup: one the compiler merged for both, its map not known
 * to the verifier, would go through the generic helper (the two asm statements
 * differ, so the two calls do not merge). The flag read each time: kept in a
 * register, the branch made it exact and the verifier followed the rest of a
 * loop (bpfipt_pfx_notes()) once for each value. */
#define GEN_ENTRY(cur, conf, flag, fx, sized, e)				\
	({									\
		__u32 c_ = (cur), e_ = (e);					\
		void *m_, *v_ = NULL;						\
		if (RD((conf)->flags) & (flag)) {				\
			m_ = bpf_map_lookup_elem(&fx, &c_);			\
			if (m_)							\
				v_ = bpf_map_lookup_elem(m_, &e_);		\
			asm volatile("" : "+r"(v_));				\
		} else {							\
			m_ = bpf_map_lookup_elem(&sized, &c_);			\
			if (m_)							\
				v_ = bpf_map_lookup_elem(m_, &e_);		\
			asm volatile("" : "+r"(v_) : : "memory");		\
		}								\
		v_;								\
	})

/* One packet of len bytes on entry e of generation cur's counters
 * (bpfipt_cntfx when BPFIPT_C_CNT_FIXED, else bpfipt_counters). */
static __always_inline void ctr_count(__u32 cur, const struct bpfipt_conf *conf, __u32 e,
				      bool shared, __u32 len)
{
	struct bpfipt_counter *c = GEN_ENTRY(cur, conf, BPFIPT_C_CNT_FIXED, bpfipt_cntfx,
					     bpfipt_counters, e);

	if (c)
		ctr_add(c, shared, len);
}

/* Slot gi of generation cur, NULL if none: in bpfipt_slotsfx when
 * BPFIPT_C_SLOTS_FIXED, else BPFIPT_POOL_SLOTS an entry in the pool's entries
 * from conf->sbase on (programs with BPFIPT_FEAT_SLOTPOOL). Both lookups
 * inline, where an array of the generation's size cost a call a step (the
 * loader's slot_dst() writes them). */
static __always_inline struct bpfipt_slot *slot_at(__u32 cur, const struct bpfipt_conf *conf,
						   __u32 gi)
{
	__u32 c_ = cur, e_ = gi;
	void *m_, *v_ = NULL;
	const __u64 *e;

	if (!FEAT(BPFIPT_FEAT_SLOTPOOL) || (RD(conf->flags) & BPFIPT_C_SLOTS_FIXED)) {
		m_ = bpf_map_lookup_elem(&bpfipt_slotsfx, &c_);
		if (m_)
			v_ = bpf_map_lookup_elem(m_, &e_);
		return v_;
	}
	e = pool_at(cur, RD(conf->sbase) + gi / BPFIPT_POOL_SLOTS);
	if (!e)
		return NULL;
	return (struct bpfipt_slot *)((void *)e + (gi % BPFIPT_POOL_SLOTS) *
				      sizeof(struct bpfipt_slot));
}

/* count() with the CPU known */
static __always_inline void count_in(__u32 cur, const struct bpfipt_conf *conf, __u32 cpu,
				     __u32 idx, const struct pkt *p)
{
	bool shared;

	if (idx >= conf->ncounters || cpu >= conf->ncpus)
		return;
	/* a shared counter (bpfipt.h) past the per-CPU rows */
	shared = idx >= conf->nper;
	ctr_count(cur, conf, idx + (shared ? conf->ncpus : cpu) * conf->nper, shared, p->len);
}

static __always_inline void count(__u32 cur, const struct bpfipt_conf *conf, __u32 idx,
				  const struct pkt *p)
{
	count_in(cur, conf, bpf_get_smp_processor_id(), idx, p);
}

#include "log.bpf.h"

enum { STEP_MORE, STEP_DONE, STEP_BROKEN };

/* Bit s of vector vid (the pool's layout, bpfipt.h). */
static __always_inline bool vec_bit(struct scratch *sc, __u32 cur, __u32 vid, __u32 s)
{
	__u32 key = pool_entry(cur, sc->windows, sc->nchunks, vid, s / (64 * BPFIPT_CHUNK_WORDS));
	const __u64 *w = pool_at(cur, key);

	return w && (w[(s / 64) & (BPFIPT_CHUNK_WORDS - 1)] >> (s & 63)) & 1;
}

/* An IPv6 packet with a cut chain, at slot s of a rule without -p: its length
 * and state constraints, which classify() left out of the AND. */
static __always_inline bool cut_fields_ok(struct scratch *sc, __u32 s)
{
	__u32 cur = sc->cur;

	if ((sc->cutlook & (1u << BPFIPT_F_LEN)) && !vec_bit(sc, cur, sc->v.len, s))
		return false;
	return !(sc->cutlook & (1u << BPFIPT_F_CTSTATE)) || vec_bit(sc, cur, sc->v.ctstate, s);
}

/* Where the member slot sc->vslot of a verdict map goes (bpfipt_step()): a
 * function of its own, so that the step's frame does not grow (the walk's
 * deepest calls are at 512 bytes of stack). A bad slot gives a cursor past the
 * chain, which the next step finds broken. */
static __noinline __u32 vmap_target(struct scratch *sc)
{
	__u32 cur = sc->cur;
	const struct bpfipt_conf *conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	struct bpfipt_slot *m;

	if (!conf)
		return NO_SLOT;
	m = slot_at(cur, conf, sc->vslot);
	return m ? m->target : NO_SLOT;
}

/* One step of the walk (bpfipt.h): the next matching slot from sc->cursor and its
 * action. A global function, and all the walk's state (cursor, depth, stack,
 * verdict) lives in the scratch map: the verifier checks the step once, and the
 * caller's loop has no state to converge on. */
__noinline int bpfipt_step(struct scratch *sc)
{
	struct bpfipt_conf *conf;
	struct bpfipt_slot *sl;
	__u32 cur, chain, s, d, ctr, gd;
	const struct pkt *p;

	if (!sc)
		return STEP_BROKEN;
	p = &sc->p;
	cur = sc->cur;
	chain = sc->chain;
	if (chain >= BPFIPT_NCHAINS)
		return STEP_BROKEN;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	if (!conf)
		return STEP_BROKEN;
	/* chunk 0 seen by an earlier step: its kept words first, here (a call
	 * less a step: the walk's steps after a jump or a RETURN) */
	s = C0_UNSEEN;
	d = sc->cursor;
	if (RD(sc->c0ok) && d < BPFIPT_CHUNK_WORDS * 64) {
		sc->w0 = d / 64;
		sc->first = ~0ULL << (d & 63);
		s = chunk0_seen(sc);
		/* else the search from the first word not seen (sc->w0) */
		if (RD(sc->w0) != d / 64)
			d = RD(sc->w0) * 64;
	}
	if (s == C0_UNSEEN)
		s = FIND_SLOT(sc, d);
	/* the slot as the verifier saw a call's return: unknown. Inline, the
	 * search's constant and bounded results each took the rest of the step
	 * through the verifier on their own (10 000 rules' first programs:
	 * bpfipt_tc_in 139k instructions, 131k with this, 128k as a call) */
	FORGET(s, RD(sc->cursor));
	/* the policy slot always matches: only a broken table finds nothing */
	if (s >= conf->nslots[chain])
		return STEP_BROKEN;
	sl = slot_at(cur, conf, conf->slot_base[chain] + s);
	if (!sl)
		return STEP_BROKEN;
	ctr = sl->counter;
	if (sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)) {
		/* a group slot: its set tells whether the address is in the list (a
		 * chain whose only constraint on the field is the list does not look
		 * the field up: bpfipt_conf.gfold), and whose counter */
		gd = !(sl->xflags & BPFIPT_X_GROUP_SRC);
		if (conf->gfold[chain][gd & 1] == s + 1)
			ctr = sc->gctr[gd & 1];		/* searched by classify() */
		else
			ctr = group_counter(cur, sl, p, sc);
		if (ctr == BPFIPT_IVAL_NONE) {
			sc->cursor = s + 1;
			return STEP_MORE;
		}
	}
	/* IPv6, a chain cut short: a tuple group of rules with -p drops the packet
	 * below when a rule has its addresses: its vectors told so when one address
	 * varies along the run, the pairs in the hash when both do (bpfipt.h) */
	if (sl->xflags & BPFIPT_X_GROUP_TUPLE) {
		if (s == 0 && sc->t0set)	/* searched by fast_tuple() */
			ctr = sc->t0ctr;
		else if (!(p->cut && (sl->xflags & BPFIPT_X_PROTO6)))
			ctr = tuple_counter(cur, sl->group, sl->counter, sl->tp_splen,
					    sl->tp_dplen, sl->tp_ports, p, sc, false);
		else if (sl->tp_splen && sl->tp_dplen)
			ctr = bpfipt_tuple6_find(sc, sl->group | BPFIPT_TG_CUT, sl->tp_splen,
						 sl->tp_dplen, 0);
		if (ctr == BPFIPT_IVAL_NONE) {
			sc->cursor = s + 1;
			return STEP_MORE;
		}
	}
	/* ip6_packet_match(): a rule with -p drops a packet whose extension-header
	 * chain is cut, uncounted (classify() made every such slot a candidate) */
	if (p->cut) {
		if (sl->xflags & BPFIPT_X_PROTO6) {
			sc->verdict = BPFIPT_V_DROP;
			return STEP_DONE;
		}
		if (sc->cutlook && !cut_fields_ok(sc, s)) {
			sc->cursor = s + 1;
			return STEP_MORE;
		}
	}
	if (sl->xflags & ~(BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST | BPFIPT_X_GROUP_TUPLE |
			   BPFIPT_X_PROTO6 | BPFIPT_X_VMAP)) {
		switch (extra_ok(cur, sl, sc)) {
		case X_OK:
			break;
		case X_FAIL:
			sc->cursor = s + 1;
			return STEP_MORE;
		default:
			return STEP_BROKEN;
		}
	}
	/* a verdict map: the rule's own slot says where it goes (its counter's
	 * offset in the group is its offset in the map), vmap_target() */
	if (sl->xflags & BPFIPT_X_VMAP)
		sc->vslot = conf->slot_base[chain] + sl->target + (ctr - sl->counter);
	count(cur, conf, ctr, p);
	switch (sl->kind) {
	case BPFIPT_S_VERDICT:
	case BPFIPT_S_POLICY:
		sc->verdict = sl->verdict;
		sc->reject_with = sl->reject_with;
		return STEP_DONE;
	case BPFIPT_S_CONTINUE:
		if (sl->log == 1)
			log_note(sc, sl);
		sc->cursor = s + 1;
		return STEP_MORE;
	case BPFIPT_S_JUMP:
		d = sc->depth;
		if (d >= BPFIPT_MAX_DEPTH) {
			stat_inc(BPFIPT_ST_DEPTH_EXHAUSTED);
			sc->verdict = BPFIPT_V_DROP;
			return STEP_DONE;
		}
		sc->stack[d & (BPFIPT_MAX_DEPTH - 1)] = s + 1;
		sc->depth = d + 1;
		sc->cursor = sl->xflags & BPFIPT_X_VMAP ? vmap_target(sc) : sl->target;
		return STEP_MORE;
	case BPFIPT_S_GOTO:
		sc->cursor = sl->xflags & BPFIPT_X_VMAP ? vmap_target(sc) : sl->target;
		return STEP_MORE;
	case BPFIPT_S_RETURN:
		d = sc->depth;
		if (d == 0) {
			sc->cursor = conf->policy[chain];
		} else {
			sc->depth = d - 1;
			sc->cursor = sc->stack[(d - 1) & (BPFIPT_MAX_DEPTH - 1)];
		}
		return STEP_MORE;
	default:
		return STEP_BROKEN;
	}
}

/* The word (sc->tbw) and bits (sc->tbm) of the packet's address d (0 source,
 * 1 destination) in the filter of chain's folded list on that field (bpfipt.h,
 * bpfipt_ghash()), levels g1 and g2. */
static __always_inline void fold_bits(const struct bpfipt_conf *conf, __u32 chain, __u32 d,
				      __u32 g1, __u32 g2, struct scratch *sc)
{
	__u32 set = conf->gfold_set[chain][d & 1];
	const __be32 *a;

	if (!IS6(&sc->p)) {
		bpfipt_gaddr(set, g1, g2, (__u64)bpf_ntohl(d ? sc->p.daddr : sc->p.saddr) << 32, 0,
			     &sc->tbw, &sc->tbm);
		return;
	}
	a = d ? sc->p.daddr6 : sc->p.saddr6;
	bpfipt_gaddr(set, g1, g2, (__u64)bpf_ntohl(a[0]) << 32 | bpf_ntohl(a[1]),
		     (__u64)bpf_ntohl(a[2]) << 32 | bpf_ntohl(a[3]), &sc->tbw, &sc->tbm);
}

/* The packet's address d is in none of the prefixes of chain's folded list on
 * that field: its bits in the list's filter are clear (bpfipt_conf.gfold_g; a
 * list without a filter: false, search it). */
static __always_inline bool fold_clear(const __u32 *cur, const struct bpfipt_conf *conf,
				       __u32 chain, __u32 d, struct scratch *sc)
{
	__u32 g1 = conf->gfold_g[chain][d & 1][0];

	return g1 && TBITS_CLEAR(cur,
				 fold_bits(conf, chain, d, g1, conf->gfold_g[chain][d & 1][1], sc),
				 sc);
}

/* How fold_search() searches a list (a constant): FOLD_SEARCH, its filter and
 * then its set (IPv4 here, IPv6 through bpfipt_ival6_find()); FOLD_FILTER, its
 * filter only: an address the filter rules out is answered (a miss), any
 * other is left for later. */
enum { FOLD_SEARCH, FOLD_FILTER };

/* Folded group slot d of the chain (bpfipt_conf.gfold), once per packet
 * (sc->gdone): its counter for the packet, or its word and bit to mask out of
 * the walk. */
static __always_inline void fold_search(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
					__u32 d, struct scratch *sc, int how)
{
	__u32 gs = conf->gfold[chain][d & 1] - 1, set = conf->gfold_set[chain][d & 1], c;

	if (sc->gdone & (1u << (d & 1)))
		return;
	if (how == FOLD_FILTER && IS6(&sc->p))
		return;	/* IPv6's filter in bpfipt_fold(): its registers spill here */
	if (!(sc->gdone & (4u << (d & 1))) && fold_clear(&cur, conf, chain, d, sc)) {
		c = BPFIPT_IVAL_NONE;
	} else if (how == FOLD_FILTER) {
		sc->gdone |= 4u << (d & 1);	/* the filter passed it: not again */
		return;
	} else if (IS6(&sc->p))
		c = bpfipt_ival6_find(sc, set, d);
	else
		c = ival_find4(cur, conf, set, bpf_ntohl(d ? sc->p.daddr : sc->p.saddr));
	sc->gctr[d & 1] = c;
	if (c == BPFIPT_IVAL_NONE) {
		sc->gskip_w[d & 1] = gs / 64;
		sc->gskip_b[d & 1] = 1ULL << (gs & 63);
	}
	sc->gdone |= 1u << (d & 1);
}

/* The search of the folded list on field d (fold_search(), its filter too)
 * found the packet's address in no entry */
static __always_inline bool fold_missed(const struct scratch *sc, __u32 d)
{
	return (sc->gdone & (1u << (d & 1))) && sc->gctr[d & 1] == BPFIPT_IVAL_NONE;
}

/* bpfipt_fold()'s internal error (no counter, not BPFIPT_IVAL_NONE) */
#define PFX_BROKEN	(BPFIPT_IVAL_NONE - 1)

/* Chain sc->chain's folded list on field d (generation sc->cur): its search,
 * once a packet (fold_search()); the entry's counter on a hit,
 * BPFIPT_IVAL_NONE on a miss, PFX_BROKEN on an internal error. A global
 * function, called from the walk and the prefix's loop: the filter and the
 * search in a frame of their own, checked once. */
__noinline __u32 bpfipt_fold(struct scratch *sc, __u32 d)
{
	const struct bpfipt_conf *conf;
	__u32 cur, chain;

	if (!sc)
		return PFX_BROKEN;
	cur = sc->cur;
	chain = sc->chain;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	if (!conf || chain >= BPFIPT_NCHAINS)
		return PFX_BROKEN;
	fold_search(cur, conf, chain, d & 1, sc, FOLD_SEARCH);
	return sc->gctr[d & 1];
}

/* The searches of chain's folded group slots (bpfipt_conf.gfold; chain and
 * generation sc->chain and sc->cur). */
static __always_inline void fold_searches(const struct bpfipt_conf *conf, __u32 chain,
					  struct scratch *sc)
{
	if (conf->gfold[chain][0] && !(sc->gdone & 1))
		bpfipt_fold(sc, 0);
	if (conf->gfold[chain][1] && !(sc->gdone & 2))
		bpfipt_fold(sc, 1);
}

/* A fast path's verdict: a slot's verdict judges the packet, counted on ctr as
 * the walk would count it (statistic FAST). */
static __always_inline int fast_verdict(__u32 cur, const struct bpfipt_conf *conf, __u32 ctr,
					__u32 verdict, __u32 reject_with, struct scratch *sc)
{
	count(cur, conf, ctr, &sc->p);
	stat_inc(BPFIPT_ST_FAST);
	sc->verdict = verdict;
	sc->reject_with = reject_with;
	return verdict;
}

/* A chain that begins with its folded group slot (bpfipt_conf.fast, set by the
 * loader): on a hit, that slot's verdict when it matches every listed address
 * (BPFIPT_FAST_HIT); on a miss, the policy when nothing else is in the chain
 * (BPFIPT_FAST_MISS). Counted as the walk would count. -1: walk. */
static __always_inline int fast_judge(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				      struct scratch *sc)
{
	__u32 fast = conf->fast[chain], ctr = sc->gctr[fast & BPFIPT_FAST_DST ? 1 : 0];
	struct bpfipt_slot *sl;

	if (ctr != BPFIPT_IVAL_NONE && !(fast & BPFIPT_FAST_HIT))
		return -1;
	if (ctr == BPFIPT_IVAL_NONE && !(fast & BPFIPT_FAST_MISS)) {
		sc->cursor = 1;		/* the list's slot does not match */
		return -1;
	}
	sl = slot_at(cur, conf, conf->slot_base[chain] + (ctr == BPFIPT_IVAL_NONE));
	if (!sl)
		return -1;
	if (ctr == BPFIPT_IVAL_NONE)
		ctr = sl->counter;
	return fast_verdict(cur, conf, ctr, sl->verdict, sl->reject_with, sc);
}

/* A chain whose slot 0 is a tuple group (BPFIPT_FAST_TUPLE): its search first,
 * with what bpfipt_conf.tfast keeps of slot 0 and the policy (no slot lookup).
 * A hit is judged by the slot when nothing else constrains it (BPFIPT_FAST_HIT),
 * a miss by the policy when nothing else is in the chain (BPFIPT_FAST_MISS);
 * another miss walks from slot 1 (slot 0 is never a jump's target). Counted as
 * the walk would count. -1: walk. */
static __always_inline int fast_tuple(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				      struct scratch *sc)
{
	const struct bpfipt_tfast *t = &conf->tfast[chain];
	const struct pkt *p = &sc->p;
	__u32 fast = conf->fast[chain], ctr = BPFIPT_IVAL_NONE;
	__be32 s = IS6(p) ? p->saddr6[BPFIPT_TB_WORD6] : p->saddr;
	__be32 d = IS6(p) ? p->daddr6[BPFIPT_TB_WORD6] : p->daddr;

	/* outside the keys' bounds: in none of them, without the hash */
	if (bpf_ntohl(s) - t->lo[BPFIPT_TB_SRC] <= t->span[BPFIPT_TB_SRC] &&
	    bpf_ntohl(d) - t->lo[BPFIPT_TB_DST] <= t->span[BPFIPT_TB_DST] &&
	    p->sport - t->lo[BPFIPT_TB_SPORT] <= t->span[BPFIPT_TB_SPORT] &&
	    p->dport - t->lo[BPFIPT_TB_DPORT] <= t->span[BPFIPT_TB_DPORT])
		ctr = tuple_counter(cur, t->group, t->counter, t->splen, t->dplen, t->ports, p, sc,
				    false);
	if (ctr != BPFIPT_IVAL_NONE) {
		if (fast & BPFIPT_FAST_HIT)
			return fast_verdict(cur, conf, ctr, t->verdict, t->reject_with, sc);
		/* a jump, a LOG, an extra match: the walk, which need not search
		 * the hash again for slot 0 */
		sc->t0ctr = ctr;
		sc->t0set = 1;
		return -1;
	}
	if (!(fast & BPFIPT_FAST_MISS)) {
		sc->cursor = 1;
		return -1;
	}
	return fast_verdict(cur, conf, t->pcounter, t->pverdict, t->preject_with, sc);
}

/* The packet's vector of field f in chain `chain` of generation cur, as
 * classify() looks it up, BPFIPT_IVAL_NONE on a failure; kept in sc->v, and
 * bit f of sc->vhave says so (classify() does not look it up again). The slot
 * prefix (fast_prefix()) asks for one field at a time. */
static __always_inline __u32 field_vec(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				       struct scratch *sc, __u32 f)
{
	const struct pkt *p = &sc->p;
	__u32 v = BPFIPT_IVAL_NONE;
	int ok = 0;

	if (chain >= BPFIPT_NCHAINS)
		return BPFIPT_IVAL_NONE;
#define FV_ARRAY(name, fb, keys, key)							\
	do {										\
		void *m_;								\
											\
		if (sc->vhave & (1u << f))						\
			return sc->v.name;						\
		m_ = bpf_map_lookup_elem(&bpfipt_fields, &cur);				\
		if (!m_)								\
			return BPFIPT_IVAL_NONE;					\
		ok = ARRAY_VEC(m_, fb, chain, keys, key, v);				\
		sc->v.name = v;								\
	} while (0)
	switch (f) {
	case BPFIPT_F_SRC:
	case BPFIPT_F_DST: {
		__u32 d = f == BPFIPT_F_DST;

		if (sc->vhave & (1u << f))
			return d ? sc->v.dst : sc->v.src;
		v = IS6(p) ? bpfipt_ival6_find(sc, conf->addr_set[chain][d], d)
				   : bpfipt_ival_find(cur, conf->addr_set[chain][d],
						      bpf_ntohl(d ? p->daddr : p->saddr));
		ok = v != BPFIPT_IVAL_NONE;
		if (d)
			sc->v.dst = v;
		else
			sc->v.src = v;
		break;
	}
	case BPFIPT_F_PROTO:
		FV_ARRAY(proto, BPFIPT_FB_PROTO, BPFIPT_KEYS_PROTO, p->proto & 0xff);
		break;
	case BPFIPT_F_SPORT:
		FV_ARRAY(sport, BPFIPT_FB_SPORT, BPFIPT_CLASS_KEYS, p->sport);
		break;
	case BPFIPT_F_DPORT:
		FV_ARRAY(dport, BPFIPT_FB_DPORT, BPFIPT_CLASS_KEYS, p->dport);
		break;
	case BPFIPT_F_IIF:
		if (sc->vhave & (1u << f))
			return sc->v.iif;
		ok = IF_VEC(cur, chain, p->iif, conf->iif_dflt[chain], v);
		sc->v.iif = v;
		break;
	case BPFIPT_F_OIF:
		if (sc->vhave & (1u << f))
			return sc->v.oif;
		ok = IF_VEC(cur, chain | BPFIPT_KEY_OIF, p->oif, conf->oif_dflt[chain], v);
		sc->v.oif = v;
		break;
	case BPFIPT_F_TCPFLAGS:
		FV_ARRAY(tcpflags, BPFIPT_FB_TCPFLAGS, BPFIPT_KEYS_TCPFLAGS, p->tcpflags);
		break;
	case BPFIPT_F_ICMP:
		FV_ARRAY(icmp, BPFIPT_FB_ICMP, BPFIPT_CLASS_KEYS, p->icmp);
		break;
	case BPFIPT_F_FRAG:
		FV_ARRAY(frag, BPFIPT_FB_FRAG, BPFIPT_KEYS_FRAG, p->frag);
		break;
	case BPFIPT_F_LEN:
		FV_ARRAY(len, BPFIPT_FB_LEN, BPFIPT_KEYS_LEN, p->len & 0xffff);
		break;
	case BPFIPT_F_CTSTATE:
		FV_ARRAY(ctstate, BPFIPT_FB_CTSTATE, BPFIPT_KEYS_CTSTATE,
			 p->ct.state & (BPFIPT_KEYS_CTSTATE - 1));
		break;
	}
#undef FV_ARRAY
	if (!ok)
		return BPFIPT_IVAL_NONE;
	sc->vhave |= 1u << (f & 31);
	return v;
}

/* field_vec() in chain sc->chain of generation sc->cur (fast_prefix()'s), a global
 * function: verified once, not once per field of each rule of the prefix. */
__noinline __u32 bpfipt_field_vec(struct scratch *sc, __u32 f)
{
	const struct bpfipt_conf *conf;
	__u32 cur;

	if (!sc)
		return BPFIPT_IVAL_NONE;
	cur = sc->cur;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	if (!conf)
		return BPFIPT_IVAL_NONE;
	return field_vec(cur, conf, sc->chain, sc, f);
}

/* Word 0 of chunk 0 of vector v (slots 0 .. 63) in *out; -1: no chunk */
static __always_inline int vec_word0(__u32 cur, const struct bpfipt_conf *conf, __u32 v,
				     __u64 *out)
{
	__u32 key = pool_entry(cur, conf->flags & BPFIPT_C_WINDOWS, conf->nchunks, v, 0);
	const __u64 *w = pool_at(cur, key);

	if (!w)
		return -1;
	*out = w[0];
	return 0;
}

/* The counter of the rule of tuple group slot gi (generation sc->cur) whose
 * tuple the packet has, BPFIPT_IVAL_NONE when none: the slot prefix's search of
 * a group (BPFIPT_FAST_PFX_TUPLE); of a list that is not the chain's folded one
 * (BPFIPT_X_GROUP_SRC, _DST: loader.c list_alone()), the entry's that holds the
 * packet's address. A global function: inlined in the prefix's loop, its
 * lookups made the verifier's states of bpfipt_tc_in half again as many (75 177
 * -> 111 892 instructions). */
__noinline __u32 bpfipt_pfx_tuple(struct scratch *sc, __u32 gi)
{
	const struct bpfipt_conf *conf;
	const struct bpfipt_slot *sl;
	__u32 cur;

	if (!sc)
		return BPFIPT_IVAL_NONE;
	cur = sc->cur;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	sl = conf ? slot_at(cur, conf, gi) : NULL;
	if (!sl)
		return BPFIPT_IVAL_NONE;
	if (sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST))
		return group_counter(cur, sl, &sc->p, sc);
	return tuple_counter(cur, sl->group, sl->counter, sl->tp_splen, sl->tp_dplen, sl->tp_ports,
			     &sc->p, sc, false);
}

/* Slot gi (generation sc->cur) of the slot prefix, a rule after which a
 * matching packet goes on (bpfipt_conf.pfx_cont): counted, its LOG noted, as
 * bpfipt_step() does. A global function, verified once. */
__noinline int bpfipt_pfx_note(struct scratch *sc, __u32 gi)
{
	const struct bpfipt_conf *conf;
	const struct bpfipt_slot *sl;
	__u32 cur;

	if (!sc)
		return -1;
	cur = sc->cur;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	sl = conf ? slot_at(cur, conf, gi) : NULL;
	if (!sl)
		return -1;
	count(cur, conf, sl->counter, &sc->p);
	if (sl->log == 1)
		log_note(sc, sl);
	return 0;
}

/* The extra matches of slot gi (generation sc->cur), one of the slot prefix's
 * (bpfipt_conf.pfx_extra) whose fields matched: 1 when they hold, 0 when not,
 * -1 on an internal error. extra_ok() as the walk runs it on a candidate slot;
 * a global function, verified once. */
__noinline int bpfipt_pfx_extra(struct scratch *sc, __u32 gi)
{
	const struct bpfipt_conf *conf;
	const struct bpfipt_slot *sl;
	__u32 cur;
	int r;

	if (!sc)
		return -1;
	cur = sc->cur;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	sl = conf ? slot_at(cur, conf, gi) : NULL;
	if (!sl)
		return -1;
	r = extra_ok(cur, sl, sc);
	return r == X_OK ? 1 : r == X_FAIL ? 0 : -1;
}

/* The slot prefix's rules after which a matching packet went on (sc->pnote, of
 * chain sc->chain: LOGs, jumps, RETURNs), in their order: a LOG by
 * bpfipt_pfx_note() (its slot's event), the others counted here by their
 * physical counter (bpfipt_conf.pfx_ctr: no slot looked up; a jump into
 * fail2ban's chain and its RETURN, ~10 ns a packet of 160-180, +3.8k
 * instructions verified); sc->pnote cleared. Called by classify() once the
 * prefix ended, rather than in the prefix's loop (+11k instructions verified:
 * each later rule followed twice). A global function, verified once. */
__noinline int bpfipt_pfx_notes(struct scratch *sc)
{
	const struct bpfipt_conf *conf;
	__u32 cur, chain, base, cpu, j;
	__u64 m;

	if (!sc)
		return -1;
	cur = sc->cur;
	chain = sc->chain;
	m = sc->pnote;
	sc->pnote = 0;
	if (chain >= BPFIPT_NCHAINS)
		return -1;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	if (!conf)
		return -1;
	base = conf->slot_base[chain];
	cpu = bpf_get_smp_processor_id();
	LOOP_UPTO(BPFIPT_FAST_PFX_MAX, break, {
		if (!m)
			break;
		j = ctz64(m) & (BPFIPT_FAST_PFX_MAX - 1);
		m &= m - 1;
		/* a LOG: its slot's event; else only its counter (the loader's
		 * physical id: no slot looked up) */
		if (conf->pfx_log[chain] & (1ULL << j))
			bpfipt_pfx_note(sc, base + conf->pfx_slot[chain][j]);
		else
			count_in(cur, conf, cpu, conf->pfx_ctr[chain][j], &sc->p);
	});
	return 0;
}

/* bpfipt_pfx_notes() without the call when the prefix noted one or two rules
 * and no LOG (a jump into fail2ban's chain and its RETURN, Docker's jump):
 * counted here, in classify() (generation cur, conf its conf). */
static __always_inline void pfx_notes(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				      struct scratch *sc)
{
	__u64 m = sc->pnote, rest = m & (m - 1);
	__u32 cpu;

	if ((rest & (rest - 1)) || (m & conf->pfx_log[chain])) {
		bpfipt_pfx_notes(sc);
		return;
	}
	sc->pnote = 0;
	cpu = bpf_get_smp_processor_id();
	count_in(cur, conf, cpu, conf->pfx_ctr[chain][ctz64(m) & (BPFIPT_FAST_PFX_MAX - 1)],
		 &sc->p);
	if (rest)
		count_in(cur, conf, cpu,
			 conf->pfx_ctr[chain][ctz64(rest) & (BPFIPT_FAST_PFX_MAX - 1)], &sc->p);
}

/* The generation's conf of scratch sc (found again after each call: kept
 * across calls, it costs a frame the stack that the deepest calls need). */
static __always_inline const struct bpfipt_conf *sc_conf(const struct scratch *sc)
{
	__u32 cur = sc->cur;

	return bpf_map_lookup_elem(&bpfipt_conf, &cur);
}

/* A list's (not the folded one) or tuple group's search for the prefix's
 * rule of slot gi: 1 on a hit, its counter kept in sc->pctr for the verdict,
 * else 0. */
static __always_inline int pfx_tuple_hit(struct scratch *sc, __u32 gi)
{
	__u32 x = bpfipt_pfx_tuple(sc, gi);

	if (x == BPFIPT_IVAL_NONE)
		return 0;
	sc->pctr = x;
	return 1;
}

/* The search of the j-th rule of chain's slot prefix, a tuple group alone
 * (bpfipt_conf.pfx_tgrp), with the key's shape and counter the conf keeps:
 * the rule's counter for the packet, BPFIPT_IVAL_NONE on a miss. */
static __always_inline __u32 pfx_tgrp_find(__u32 cur, const struct bpfipt_conf *conf,
					   __u32 chain, __u32 j, struct scratch *sc)
{
	const struct bpfipt_pfx_tup *t;

	j &= BPFIPT_FAST_PFX_MAX - 1;
	t = &conf->pfx_tup[chain][j];
	return tuple_counter(cur, t->group, conf->pfx_ctr[chain][j], t->splen, t->dplen, t->ports,
			     &sc->p, sc, true);
}

/* The j-th rule of chain sc->chain's slot prefix (generation sc->cur), a tuple
 * group alone (bit j of bpfipt_conf.pfx_tgrp): its hash searched with the
 * key's shape and counter the conf keeps, no slot looked up; the rule's
 * counter for the packet, BPFIPT_IVAL_NONE on a miss. A global function for
 * a chain whose tables keep more than one group (inline in the prefix's loop,
 * its frame grew by 40 bytes and the verifier followed the search for each
 * rule, +15k instructions; the one group kept is searched inline before the
 * loop). */
__noinline __u32 bpfipt_pfx_tgrp(struct scratch *sc, __u32 j)
{
	const struct bpfipt_conf *conf;
	__u32 cur, chain;

	if (!sc)
		return BPFIPT_IVAL_NONE;
	cur = sc->cur;
	chain = sc->chain;
	conf = bpf_map_lookup_elem(&bpfipt_conf, &cur);
	if (!conf || chain >= BPFIPT_NCHAINS)
		return BPFIPT_IVAL_NONE;
	return pfx_tgrp_find(cur, conf, chain, j, sc);
}

/* The j-th rule of chain sc->chain's slot prefix (generation sc->cur), which
 * the tables passed: its fields that a vector decides (bit j of
 * bpfipt_conf.pfx_vec; the vector's word of the prefix's slots looked up once per
 * field: a lookup per rule cost IPv6's rules, whose addresses no range decides,
 * ~15 ns each). 1 when they hold, 0 when not, -1 on an internal error. A global
 * function, verified once. */
__noinline int bpfipt_pfx_vec(struct scratch *sc, __u32 j)
{
	int k;

	if (!sc)
		return -1;
	j &= BPFIPT_FAST_PFX_MAX - 1;
	/* the generation's conf and pool found again after each call: kept
	 * across it, they cost this frame the stack that the deepest calls
	 * (bpfipt_field_vec(), an IPv6 set's search) need */
#pragma clang loop unroll(disable)
	for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++) {
		__u32 chain = sc->chain, f, fi, v, idx, cur;
		const struct bpfipt_conf *conf;

		asm volatile("" : "+r"(j));	/* nothing of it hoisted, spilled */
		conf = sc_conf(sc);
		if (!conf || chain >= BPFIPT_NCHAINS)
			return -1;
		f = BPFIPT_FAST_PFX_FIELD(conf->pfx[chain], j, k);
		if (f == BPFIPT_FAST_PFX_NONE)
			break;
		idx = j * BPFIPT_FAST_PFX_FIELDS + k;
		if (conf->pfx_direct[chain][(idx / 64) & (BPFIPT_FAST_PFX_DWORDS - 1)] &
		    (1ULL << (idx & 63)))
			continue;	/* a range: the tables passed it */
		fi = f & (BPFIPT_PVALS - 1);
		if (!(sc->phave & (1u << fi))) {
			v = bpfipt_field_vec(sc, f);
			if (v == BPFIPT_IVAL_NONE)
				return -1;
			cur = sc->cur;
			chain = sc->chain;
			conf = sc_conf(sc);
			if (!conf || chain >= BPFIPT_NCHAINS ||
			    vec_word0(cur, conf, v, &sc->pword[fi]))
				return -1;
			sc->phave |= 1u << fi;
		}
		if (!((sc->pword[fi] >> (conf->pfx_slot[chain][j] & 63)) & 1))
			return 0;
	}
	return 1;
}

/* s when the 32-bit value x is at or above cut c, else 0, without a branch */
#define PFX_GE(x, c, s)								\
	({									\
		__u64 d_ = (x), c_ = (c);					\
		/* in asm: the compiler turns the sign's shift into a branch,	\
		 * which the verifier follows both ways */			\
		asm volatile("%[dv] -= %[cv]\n\t%[dv] >>= 63\n\t%[dv] ^= 1"	\
			     : [dv] "+r"(d_) : [cv] "r"(c_));			\
		d_ * (s);							\
	})

/* The packet's values that the prefix's ranges decide on (sc->pval), by field
 * (the fields the loader's prefix_of() may make direct); IPv6: word
 * BPFIPT_TB_WORD6 of the address (a tuple group's bound; no other rule has an
 * IPv6 range). */
static __always_inline void pfx_vals(struct scratch *sc)
{
	const struct pkt *p = &sc->p;

	sc->pval[BPFIPT_F_SRC] = bpf_ntohl(IS6(p) ? p->saddr6[BPFIPT_TB_WORD6] : p->saddr);
	sc->pval[BPFIPT_F_DST] = bpf_ntohl(IS6(p) ? p->daddr6[BPFIPT_TB_WORD6] : p->daddr);
	sc->pval[BPFIPT_F_IIF] = p->iif;
	sc->pval[BPFIPT_F_OIF] = p->oif;
	sc->pval[BPFIPT_F_PROTO] = p->proto & 0xff;
	sc->pval[BPFIPT_F_SPORT] = p->sport;
	sc->pval[BPFIPT_F_DPORT] = p->dport;
	sc->pval[BPFIPT_FAST_PFX_PDPORT] = BPFIPT_FAST_PFX_PDPORT_VAL(p->proto, p->dport);
	sc->pval[BPFIPT_F_CTSTATE] = p->ct.state & (BPFIPT_KEYS_CTSTATE - 1);
}

/* The prefix's first rule (bpfipt_conf.pfx_first: ranges decide every field
 * of it) holds the packet's values: its compares, as a table's cut would. */
static __always_inline bool pfx_first_hit(const struct bpfipt_conf *conf, __u32 chain,
					  const struct scratch *sc)
{
	__u32 k, f;

#pragma unroll
	for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++) {
		f = BPFIPT_FAST_PFX_FIELD(conf->pfx[chain], 0, k);
		if (f == BPFIPT_FAST_PFX_NONE)
			break;
		if (sc->pval[f & (BPFIPT_PVALS - 1)] - conf->pfx_lo[chain][k] >
		    conf->pfx_span[chain][k])
			return false;
	}
	return true;
}

/* The rules of chain `chain`'s slot prefix whose ranges hold the packet's
 * values: the AND of each table's mask (bpfipt_conf.pfx_tab) at the last cut at
 * or below the packet's value of its field (a value below BPFIPT_PFX_SMALL: its
 * cut read, else searched). Inline: as a function of its own it cost the
 * packets of short prefixes ~3 ns more, and the verifier 2.5k instructions. */
static __always_inline __u64 pfx_ranges(struct scratch *sc, const struct bpfipt_conf *conf,
					 __u32 chain)
{
	__u32 t;
	__u64 d = ~0ULL, o = 0;

	for (t = 0; t < BPFIPT_PFX_TABS; t++) {
		const struct bpfipt_pfx_tab *tb = &conf->pfx_tab[chain][t];
		__u64 x;
		__u32 i = 0, s;

		if (t >= conf->pfx_ntab[chain])
			break;
		x = sc->pval[tb->field & (BPFIPT_PVALS - 1)];
		if (x < BPFIPT_PFX_SMALL) {
			i = tb->small[x & (BPFIPT_PFX_SMALL - 1)] & (BPFIPT_PFX_CUTS - 1);
			d &= tb->mask[i];
			o |= tb->miss[i];
			continue;
		}
		/* 4-ary steps: three compares whose loads do not wait on each
		 * other (a binary search's each waited on the one before); as
		 * many as the table's cuts need (all of them, in straight code,
		 * cost a table of three cuts ~7 ns) */
#pragma clang loop unroll(disable)
		for (s = tb->quart & (BPFIPT_PFX_CUTS - 1); s; s >>= 2)
			i += PFX_GE(x, tb->cut[(i + s) & (BPFIPT_PFX_CUTS - 1)], s) +
			     PFX_GE(x, tb->cut[(i + 2 * s) & (BPFIPT_PFX_CUTS - 1)], s) +
			     PFX_GE(x, tb->cut[(i + 3 * s) & (BPFIPT_PFX_CUTS - 1)], s);
		if (tb->bin)
			i += PFX_GE(x, tb->cut[(i + 1) & (BPFIPT_PFX_CUTS - 1)], 1);
		d &= tb->mask[i & (BPFIPT_PFX_CUTS - 1)];
		o |= tb->miss[i & (BPFIPT_PFX_CUTS - 1)];
	}
	sc->poff = o;
	return d;
}

/* The slot prefix (bpfipt_conf.fast, BPFIPT_FAST_PFX_*), slots pfx_slot[chain][0],
 * [1], ...: a first rule that judges on ranges alone is compared first
 * (pfx_first); else the tables of its ranges (pfx_tab) give the rules whose
 * ranges hold the packet's values, of which those with a list, a tuple group, a
 * vector or extra matches are tested further; only those rules and the jumps the
 * tables do not decide are visited, in their order (a prefix of sixty rules
 * tests a few), the plain jumps and LOGs (pfx_plain) noted from the tables.
 * The verdict of the first that matches, counted as
 * the walk would; when none does, the policy's if the prefix reaches it
 * (BPFIPT_FAST_PFX_END), else -1 (the walk then starts after them, sc->cursor).
 * The rules of a chain a jump calls follow the jump: a jump that does not match
 * turns them off, a RETURN that does the rest of its chain (pfx_skip). */
static __always_inline int fast_prefix(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				       struct scratch *sc)
{
	__u32 fast = conf->fast[chain], n = BPFIPT_FAST_PFX_N(fast), ctr, j, fl;
	__u64 d, todo, off = 0, note = 0, w, nmask;
	int b;

	if (chain >= BPFIPT_NCHAINS)
		return -1;
	pfx_vals(sc);
	/* the first rule when it alone judges most packets (ESTABLISHED):
	 * without the tables (~25 ns of a host firewall's reply) */
	if (conf->pfx_first[chain] && pfx_first_hit(conf, chain, sc))
		return fast_verdict(cur, conf, conf->pfx_ctr[chain][0], conf->pfx_verdict[chain][0],
				    conf->pfx_rejw[chain][0], sc);
	sc->poff = 0;
	d = conf->pfx_ntab[chain] ? pfx_ranges(sc, conf, chain) : ~0ULL;
	off = sc->poff;
	/* the rules the tables kept and the jumps whose miss they do not
	 * decide (a plain jump's miss is in off already), in their order, a
	 * bounded loop: n <= BPFIPT_FAST_PFX_MAX */
	sc->pctr = NO_SLOT;
	nmask = n >= 64 ? ~0ULL : (1ULL << (n & 63)) - 1;
	todo = (d | conf->pfx_visit[chain]) & ~conf->pfx_plain[chain] & nmask;
	/* the one tuple group the tables kept (mixed rules behind a few plain
	 * ones): searched here, inline, the loop takes the answer (a call and
	 * its return fewer; in the loop the verifier followed it for each
	 * rule, +15k instructions) */
	sc->tpre = BPFIPT_FAST_PFX_MAX;
	w = d & conf->pfx_tgrp[chain] & nmask;
	if (w && !(w & (w - 1))) {
		j = ctz64(w) & (BPFIPT_FAST_PFX_MAX - 1);
		sc->tpre_ctr = pfx_tgrp_find(cur, conf, chain, j, sc);
		sc->tpre = j;
		/* a miss: what the loop would do with it (the rules a jump's
		 * miss turns off), and it is not visited (a turn fewer, ~3 ns) */
		if (sc->tpre_ctr == BPFIPT_IVAL_NONE)
			off |= w | conf->pfx_skip[chain][j][0];
	}
	/* the folded lists' filters: an address they rule out answered here,
	 * no call in the loop (fail2ban's jail, when the packet's source is
	 * not in it) */
	if (d & conf->pfx_flist[chain] & nmask) {
		if (conf->gfold[chain][0])
			fold_search(cur, conf, chain, 0, sc, FOLD_FILTER);
		if (conf->gfold[chain][1])
			fold_search(cur, conf, chain, 1, sc, FOLD_FILTER);
		/* each of the chain's lists ruled out: their rules not visited
		 * either (one passed: the loop takes both) */
		if ((!conf->gfold[chain][0] || fold_missed(sc, 0)) &&
		    (!conf->gfold[chain][1] || fold_missed(sc, 1)))
			off |= conf->pfx_flist[chain] & ~conf->pfx_visit[chain];
	}
	LOOP_UPTO(BPFIPT_FAST_PFX_MAX, return -1, {
		/* the chain's arrays addressed again each rule: hoisted, their
		 * addresses took this frame the stack of the deepest calls */
		asm volatile("" : "+r"(chain));
		w = todo & ~off;
		if (!w)
			break;
		j = ctz64(w) & (BPFIPT_FAST_PFX_MAX - 1);
		todo &= ~((2ULL << j) - 1);
		b = (d >> j) & 1;
		if (b && ((conf->pfx_rest[chain] >> j) & 1)) {
			if ((conf->pfx_tgrp[chain] >> j) & 1) {
				/* a tuple group alone (most often): its hash,
				 * by the key's shape the conf keeps (its slot
				 * looked up ~3 ns more), searched before the
				 * loop when it is the only one kept */
				ctr = j == sc->tpre ? sc->tpre_ctr : bpfipt_pfx_tgrp(sc, j);
				b = ctr != BPFIPT_IVAL_NONE;
				if (b)
					sc->pctr = ctr;
			} else if ((conf->pfx_tuple[chain] >> j) & 1) {
				/* a list alone: its slot's set */
				b = pfx_tuple_hit(sc, conf->slot_base[chain] +
							  conf->pfx_slot[chain][j]);
			} else if ((conf->pfx_flist[chain] >> j) & 1) {
				/* the folded list alone: its search, once a
				 * packet, a hit counted on the entry's counter
				 * (an address its filter has not: no call) */
				fl = conf->gfold[chain][1] == conf->pfx_slot[chain][j] + 1;
				ctr = (sc->gdone >> fl) & 1 ? sc->gctr[fl] : bpfipt_fold(sc, fl);
				if (ctr == PFX_BROKEN)
					return -1;
				b = ctr != BPFIPT_IVAL_NONE;
				if (b)
					sc->pctr = ctr;
			} else {
				/* its vectors, then its extra matches: called
				 * from here (through a function of both, a
				 * call and its return more a rule, ~7 ns where
				 * returns are costly, and its frame on the
				 * deepest calls' path) */
				if ((conf->pfx_vec[chain] >> j) & 1) {
					b = bpfipt_pfx_vec(sc, j);
					if (b < 0)
						return -1;
				}
				if (b && ((conf->pfx_extra[chain] >> j) & 1)) {
					b = bpfipt_pfx_extra(sc, conf->slot_base[chain] +
								     conf->pfx_slot[chain][j]);
					if (b < 0)
						return -1;
				}
			}
		}
		/* a jump that does not match: its chain's rules skipped; a RETURN
		 * that does: the rest of its chain */
		off |= conf->pfx_skip[chain][j][b & 1];
		if (!b)
			continue;
		if ((conf->pfx_cont[chain] >> j) & 1) {
			/* the packet goes on (a LOG, a jump, a RETURN): counted
			 * and noted at the end, then the next rule not skipped */
			note |= 1ULL << j;
			continue;
		}
		/* the plain rules before it that the tables kept and no rule
		 * turned off (a rule turns off only later ones): noted */
		sc->pnote = note | (conf->pfx_plain[chain] & d & ~off & ((1ULL << j) - 1));
		ctr = sc->pctr;
		/* its verdict and counter as the conf keeps them (no slot
		 * looked up) */
		return fast_verdict(cur, conf, ctr != NO_SLOT ? ctr : conf->pfx_ctr[chain][j],
				    conf->pfx_verdict[chain][j], conf->pfx_rejw[chain][j], sc);
	});
	sc->pnote = note | (conf->pfx_plain[chain] & d & ~off & nmask);
	if (!(fast & BPFIPT_FAST_PFX_END)) {
		sc->cursor = conf->pfx_next[chain];
		return -1;
	}
	return fast_verdict(cur, conf, conf->pfx_pctr[chain], conf->pfx_pverdict[chain],
			    conf->pfx_prejw[chain], sc);
}

/* The policy of chain `chain` (generation cur, conf its conf), which has no
 * rule: counted and judged as the walk would (its slot the chain's first). */
static __always_inline int policy_only(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				       struct scratch *sc)
{
	const struct bpfipt_slot *sl = chain < BPFIPT_NCHAINS ?
		slot_at(cur, conf, conf->slot_base[chain] + conf->policy[chain]) : NULL;

	if (!sl) {
		stat_inc(BPFIPT_ST_INTERNAL);
		return BPFIPT_V_DROP;
	}
	return fast_verdict(cur, conf, sl->counter, sl->verdict, sl->reject_with, sc);
}

/* fast_prefix() of chain sc->chain in generation sc->cur, a global function (its
 * own stack frame, verified once). */
__noinline int bpfipt_fast_prefix(struct scratch *sc)
{
	const struct bpfipt_conf *conf;
	__u32 cur;

	if (!sc || sc->chain >= BPFIPT_NCHAINS)
		return -1;
	cur = sc->cur;
	/* the key in map memory: a slot of this frame fewer (the deepest calls
	 * through it have no byte to spare) */
	conf = bpf_map_lookup_elem(&bpfipt_conf, &sc->cur);
	if (!conf)
		return -1;
	return fast_prefix(cur, conf, sc->chain, sc);
}

/* The field's bit out of sc->look when its vector is the chain's full one (read
 * from the maps each time: a register a branch made exact would split the
 * verifier's states, one per combination). */
#define NOT_FULL(field, vid)							\
	do {									\
		if ((RD(conf->fullf[chain]) & (1u << BPFIPT_F_##field)) &&	\
		    RD(vid) == RD(conf->full[chain]))				\
			sc->look &= ~(1u << BPFIPT_F_##field);			\
	} while (0)

#define WALK_PLAIN	16	/* classify()'s steps before the iterator's */
_Static_assert(WALK_PLAIN < BPFIPT_MAX_STEPS, "WALK_PLAIN");

/* Run chain c of generation cur on the packet: enum bpfipt_verdict. */
static __always_inline int classify(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				    struct scratch *sc)
{
	const struct pkt *p = &sc->p;
	__u32 look, todo, cutlook = 0;
	void *fm;
	int step;

	if (chain >= BPFIPT_NCHAINS || conf->nwords > BPFIPT_MAX_WORDS ||
	    conf->nchunks == 0)
		goto broken;
	/* OUTPUT in programs without BPFIPT_FEAT_OUTPUT, FORWARD without
	 * BPFIPT_FEAT_FORWARD: the chain has no rule, its policy judges, no
	 * walk (the verifier does not follow tc_out's, nor the ingress programs'
	 * for FORWARD: -10k instructions; a test of conf->policy here too took
	 * tc_in's through it twice, +11k) */
	if ((!FEAT(BPFIPT_FEAT_OUTPUT) && chain == BPFIPT_OUTPUT) ||
	    (!FEAT(BPFIPT_FEAT_FORWARD) && chain == BPFIPT_FORWARD))
		return policy_only(cur, conf, chain, sc);
	look = conf->lookup[chain];
	sc->cur = cur;

	/* the folded group slots: one search each, the slot out of the walk when
	 * the address is not in its list. A deny list at the top of the chain is
	 * searched first and may judge the packet alone; another when the slot
	 * prefix reaches it, or before the walk */
	sc->gskip_w[0] = NO_SLOT;
	sc->gskip_w[1] = NO_SLOT;
	sc->gdone = 0;
	sc->t0set = 0;
	sc->cursor = 0;
	sc->chain = chain;
	sc->vhave = 0;
	sc->phave = 0;
	if (conf->fast[chain] && !p->cut) {
		/* slot 0 a group searched first: a tuple group, or a list whose
		 * search judges a hit or a miss */
		__u32 fast = conf->fast[chain],
		      first = fast & (BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | BPFIPT_FAST_MISS) ? 1 : 0;
		int v = -1;

		if (fast & BPFIPT_FAST_TUPLE) {
			v = fast_tuple(cur, conf, chain, sc);
		} else if (first) {
			/* a miss the filter decides: no call */
			if (conf->gfold[chain][0])
				fold_search(cur, conf, chain, 0, sc, FOLD_FILTER);
			if (conf->gfold[chain][1])
				fold_search(cur, conf, chain, 1, sc, FOLD_FILTER);
			fold_searches(conf, chain, sc);
			v = fast_judge(cur, conf, chain, sc);
		}
		/* the prefix, at the top or after the group's miss that the policy
		 * does not judge */
		if (v < 0 && BPFIPT_FAST_PFX_N(fast) && sc->cursor == first) {
			sc->pnote = 0;
			v = bpfipt_fast_prefix(sc);
			/* its rules that let the packet go on, counted now; not
			 * after an error (the walk starts from the top and counts
			 * them: only a prefix that ends moves the cursor past it) */
			if (sc->pnote && (v >= 0 || sc->cursor != first))
				pfx_notes(cur, conf, chain, sc);
		}
		if (v >= 0)
			return v;
	}
	/* programs without the walk (BPFIPT_FEAT_WALK): the loader saw that the
	 * paths above judge every packet of every chain that has a rule; a chain
	 * without one is judged by its policy. The verifier follows no more of
	 * this function, nor bpfipt_step(): about half of what it checked */
	if (!FEAT(BPFIPT_FEAT_WALK)) {
		if (!conf->policy[chain])
			return policy_only(cur, conf, chain, sc);
		goto broken;
	}
	fold_searches(conf, chain, sc);

	/* One lookup per field that varies in this chain and that the prefix did
	 * not look up: its vector id. */
	todo = look & ~sc->vhave;
	if (IS6(p)) {
		/* a cut chain: no protocol, ports, flags nor type; every slot is a
		 * candidate for them, the -p ones drop it (bpfipt_step()) */
		if (p->cut) {
			look &= ~(1u << BPFIPT_F_PROTO | 1u << BPFIPT_F_SPORT |
				  1u << BPFIPT_F_DPORT | 1u << BPFIPT_F_TCPFLAGS |
				  1u << BPFIPT_F_ICMP);
			/* the kernel tests a -p rule's matches (length, state) only after
			 * the protocol: those fields are tested per slot, on the rules
			 * without -p (bpfipt_step(); cutlook is read only for cut
			 * packets) */
			cutlook = look & (1u << BPFIPT_F_LEN | 1u << BPFIPT_F_CTSTATE);
			sc->cutlook = cutlook;
			todo = look;
		}
		if ((todo & (1u << BPFIPT_F_SRC)) &&
		    (sc->v.src = bpfipt_ival6_find(sc, conf->addr_set[chain][0], 0)) ==
		    BPFIPT_IVAL_NONE)
			goto broken;
		if ((todo & (1u << BPFIPT_F_DST)) &&
		    (sc->v.dst = bpfipt_ival6_find(sc, conf->addr_set[chain][1], 1)) ==
		    BPFIPT_IVAL_NONE)
			goto broken;
	} else {
		if ((todo & (1u << BPFIPT_F_SRC | 1u << BPFIPT_F_DST)) &&
		    (RD(conf->flags) & BPFIPT_C_IVAL_FIXED ? addr_vecs_fx(sc, conf, cur, chain, todo)
							   : bpfipt_addr_vecs(sc, todo)))
			goto broken;
	}
	if ((todo & (1u << BPFIPT_F_IIF)) &&
	    !IF_VEC(cur, chain, p->iif, conf->iif_dflt[chain], sc->v.iif))
		goto broken;
	if ((todo & (1u << BPFIPT_F_OIF)) &&
	    !IF_VEC(cur, chain | BPFIPT_KEY_OIF, p->oif, conf->oif_dflt[chain], sc->v.oif))
		goto broken;
	/* the generation's arrays, once for all array fields; a generation whose
	 * chains look none up has none (the loader leaves its slot empty) */
	if (todo & BPFIPT_ARRAY_FIELDS) {
		fm = bpf_map_lookup_elem(&bpfipt_fields, &cur);
		if (!fm)
			goto broken;
		if ((todo & (1u << BPFIPT_F_PROTO)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_PROTO, chain, BPFIPT_KEYS_PROTO, p->proto & 0xff,
			       sc->v.proto))
			goto broken;
		if ((todo & (1u << BPFIPT_F_SPORT)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_SPORT, chain, BPFIPT_CLASS_KEYS, p->sport, sc->v.sport))
			goto broken;
		if ((todo & (1u << BPFIPT_F_DPORT)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_DPORT, chain, BPFIPT_CLASS_KEYS, p->dport, sc->v.dport))
			goto broken;
		if ((todo & (1u << BPFIPT_F_TCPFLAGS)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_TCPFLAGS, chain, BPFIPT_KEYS_TCPFLAGS, p->tcpflags,
			       sc->v.tcpflags))
			goto broken;
		if ((todo & (1u << BPFIPT_F_ICMP)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_ICMP, chain, BPFIPT_CLASS_KEYS, p->icmp, sc->v.icmp))
			goto broken;
		if ((todo & (1u << BPFIPT_F_FRAG)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_FRAG, chain, BPFIPT_KEYS_FRAG, p->frag, sc->v.frag))
			goto broken;
		if ((todo & (1u << BPFIPT_F_LEN)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_LEN, chain, BPFIPT_KEYS_LEN, p->len & 0xffff,
			       sc->v.len))
			goto broken;
		if ((todo & (1u << BPFIPT_F_CTSTATE)) &&
		    !ARRAY_VEC(fm, BPFIPT_FB_CTSTATE, chain, BPFIPT_KEYS_CTSTATE,
			       p->ct.state & (BPFIPT_KEYS_CTSTATE - 1), sc->v.ctstate))
			goto broken;
	}

	sc->look = look & ~cutlook;
	/* a field whose vector has every slot of the chain (a protocol all its
	 * rules name) is not ANDed */
	if (conf->fullf[chain] & sc->look)
		EACH_FIELD(NOT_FULL);
	sc->cvec = conf->cvec[chain];
	sc->nwords = conf->nwords;
	sc->nchunks = conf->nchunks;
	sc->nrows = conf->nrows;
	sc->rbase = conf->rbase;
	sc->windows = conf->flags & BPFIPT_C_WINDOWS;
	sc->onepage = conf->flags & BPFIPT_C_ONE_PAGE;
	sc->policy = conf->policy[chain];
	sc->depth = 0;
	/* sc->nlog: zeroed with the packet's scratch (scratch()); the slot
	 * prefix may have noted a LOG already */
	sc->top_ready = 0;
	sc->rows_ready = 0;
	sc->c0ok = 0;
	sc->c0have = 0;
	sc->verdict = BPFIPT_V_DROP;
	/* the first steps in a bounded loop: a packet that a few steps judge (the
	 * first slot found has a verdict; a deny list's miss, then the next slot;
	 * a chain's jumps and RETURNs) pays no iterator calls (a kfunc call
	 * each), and the verifier follows one call each (the step is a global
	 * function) */
	sc->status = STEP_MORE;
	for (step = 0; step < WALK_PLAIN; step++) {
		sc->status = bpfipt_step(sc);
		if (sc->status != STEP_MORE)
			break;
	}
	sc->steps = WALK_PLAIN;
	if (sc->status == STEP_MORE)
		LOOP_UPTO(BPFIPT_MAX_STEPS - WALK_PLAIN, break, {
			if (RD(sc->steps) >= BPFIPT_MAX_STEPS)
				break;
			sc->steps++;
			sc->status = bpfipt_step(sc);
			if (sc->status != STEP_MORE)
				break;
		});
	switch (sc->status) {
	case STEP_DONE:
		return sc->verdict;
	case STEP_MORE:
		stat_inc(BPFIPT_ST_STEPS_EXHAUSTED);
		return BPFIPT_V_DROP;
	}
broken:
	stat_inc(BPFIPT_ST_INTERNAL);
	return BPFIPT_V_DROP;
}

/* Conntrack, the chain, and the confirmation of a new connection when the
 * packet is accepted. update: 0 on lo's ingress (tracked at egress). */
static __always_inline int judge(__u32 cur, const struct bpfipt_conf *conf, __u32 chain,
				 struct scratch *sc, __u32 update)
{
	int v;

	/* whether the packet is tracked is not kept across classify(): a value
	 * live there would double the verifier's states; sc->ct_create says it */
	if (FEAT(BPFIPT_FEAT_CT) && (conf->flags & BPFIPT_C_CT) &&
	    (sc->p.family == 4 || BPFIPT_CT_IPV6))
		bpfipt_ct_track(sc, update);
	else
		sc->ct_create = 0;
	v = classify(cur, conf, chain, sc);
	if (FEAT(BPFIPT_FEAT_CT) && v == BPFIPT_V_ACCEPT && RD(sc->ct_create))
		bpfipt_ct_confirm(sc);
	return v;
}

/* ------------------------------------------------------- chain selector ---- */

/* The IPv4 route generation of dev's namespace (net->ipv4.rt_genid), which every
 * change of routes, addresses, devices, forwarding settings and rules bumps: the
 * kernel's own route cache is valid while it stays. -1: no memo (no device, or
 * policy routing rules, whose selectors go beyond the memo's key). The
 * namespace in *netp. */
static __always_inline __s64 route_genid(struct net_device___bpfipt *dev,
					 struct net___bpfipt **netp)
{
	struct net___bpfipt *net;

	if (!dev)
		return -1;
	/* loads the verifier checks against the kernel's BTF (a fault reads 0) */
	net = dev->nd_net.net;
	if (!net)
		return -1;
	if (bpf_core_field_exists(net->ipv4.fib_has_custom_rules) &&
	    net->ipv4.fib_has_custom_rules)
		return -1;
	*netp = net;
	return (__u32)net->ipv4.rt_genid.counter;
}

/* ICMP errors: the multipath hash takes the addresses of the packet inside */
static __always_inline bool icmp_error(const struct pkt *p)
{
	__u32 t = p->icmp >> 8;

	return p->proto == IPPROTO_ICMP && p->icmp != BPFIPT_NO_ICMP &&
	       (t == 3 || t == 4 || t == 5 || t == 11 || t == 12);
}

/* Whether net's routed answer for p may be kept, and under which seed (-1: not).
 * It holds for a (source, destination) pair: a multipath route's hop is picked
 * by the hash of the two (policy 0) and the seed, unless the policy hashes ports
 * or inner headers, the neighbours' state takes part (none of which bumps the
 * generation), or p is an ICMP error (hashed on the packet inside). */
static __always_inline __s64 route_seed(struct net___bpfipt *net, const struct pkt *p)
{
	if (icmp_error(p))
		return -1;
	if (bpf_core_field_exists(net->ipv4.sysctl_fib_multipath_hash_policy) &&
	    net->ipv4.sysctl_fib_multipath_hash_policy)
		return -1;
	if (bpf_core_field_exists(net->ipv4.sysctl_fib_multipath_use_neigh) &&
	    net->ipv4.sysctl_fib_multipath_use_neigh)
		return -1;
	if (bpf_core_field_exists(net->ipv4.sysctl_fib_multipath_hash_seed))
		return net->ipv4.sysctl_fib_multipath_hash_seed.mp_seed;
	return 0;
}

/* Whether the kernel leaves an IPv6 packet that came in on dev unforwarded:
 * ip6_forward() forwards when net.ipv6.conf.all.forwarding is on, or (6.17) the
 * input device's force_forwarding; otherwise it drops what is not local, before
 * FORWARD, and the packet is INPUT's here. (The helper tests the device's own
 * forwarding, which is not the kernel's test: with it on and "all" off, the
 * helper routed what the kernel drops.) Not calling bpf_fib_lookup() then saves
 * a packet 45 ns (pktcost, AMD EPYC). */
static __always_inline bool fwd6_off(struct net_device___bpfipt *dev)
{
	struct ipv6_devconf___bpfipt *all;
	struct inet6_dev___bpfipt *idev;
	struct net___bpfipt *net;

	if (!dev)
		return false;
	/* loads the verifier checks against the kernel's BTF */
	idev = dev->ip6_ptr;
	net = dev->nd_net.net;
	if (!idev || !net)
		return false;
	all = net->ipv6.devconf_all;
	if (!all || all->forwarding)
		return false;
	return !bpf_core_field_exists(idev->cnf.force_forwarding) || !idev->cnf.force_forwarding;
}

/* Keep select_ingress()'s answer for p in e: INPUT (oif 0) or routed out of oif.
 * genid was read before the lookup: a change during it leaves an entry that no
 * later packet takes. */
static __always_inline void route_memo_put(struct route_memo *e, const struct pkt *p,
					   __s64 genid, __u32 oif, __s64 seed)
{
	e->daddr = p->daddr;
	e->saddr = p->saddr;
	e->iif = p->iif;
	e->oif = oif;
	e->tos = p->tos;
	e->genid = (__u32)genid;
	e->seed = (__u32)seed;
	e->valid = 1;
}

/* Ingress: INPUT for a local destination, FORWARD (with the output interface) for
 * a routed one, -1 (leave it to the kernel: blackhole, unreachable, prohibit...)
 * otherwise. See design.md. A packet the kernel is going to drop for want of a
 * route is judged (and counted) by INPUT first.
 * IPv4 answers are kept per CPU in sc->memo, keyed by destination, input
 * interface and TOS (what the lookup reads without policy rules), a routed one
 * also by source (route_genid()), and valid for one route generation of dev's
 * namespace: the lookup is most of the cost of a local packet on a host that
 * forwards, and a tenth of a forwarded packet's in a flood. */
static __always_inline int select_ingress(void *ctx, struct scratch *sc,
					  struct net_device___bpfipt *dev)
{
	struct bpf_fib_lookup *f = &sc->fib;
	struct pkt *p = &sc->p;
	__u32 d = bpf_ntohl(p->daddr), m = 0;
	struct net___bpfipt *net = NULL;
	__s64 genid = -1, seed;
	long r;

	if (IS6(p)) {
		/* multicast (ff00::/8): local. Link-local and every other destination:
		 * the routing table's answer, as the kernel's (an address of ours,
		 * fe80:: ones too, is a local route: INPUT) */
		if ((bpf_ntohl(p->daddr6[0]) >> 24) == 0xff || fwd6_off(dev))
			return BPFIPT_INPUT;
		__builtin_memset(f, 0, sizeof(*f));
		f->family = AF_INET6;
		f->flowinfo = bpf_htonl((__u32)p->tos << 20);
		__builtin_memcpy(f->ipv6_src, p->saddr6, 16);
		__builtin_memcpy(f->ipv6_dst, p->daddr6, 16);
	} else {
		/* limited broadcast: fib says "routed", the kernel delivers it;
		 * multicast: local */
		if (d == 0xffffffffu || (d >> 28) == 0xe)
			return BPFIPT_INPUT;
		genid = route_genid(dev, &net);
		if (genid >= 0 && net) {
			struct route_memo *e;

			m = ((d ^ p->iif) * 0x9e3779b1u) >> 29;
			e = &sc->memo[m & (ROUTE_MEMOS - 1)];
			if (e->valid && e->daddr == p->daddr && e->iif == p->iif &&
			    e->tos == p->tos && e->genid == (__u32)genid) {
				if (!e->oif) {
					stat_inc(BPFIPT_ST_ROUTE_MEMO);
					return BPFIPT_INPUT;
				}
				if (e->saddr == p->saddr && (seed = route_seed(net, p)) >= 0 &&
				    e->seed == (__u32)seed) {
					stat_inc(BPFIPT_ST_ROUTE_MEMO);
					p->oif = e->oif;
					return BPFIPT_FORWARD;
				}
			}
		}
		__builtin_memset(f, 0, sizeof(*f));
		f->family = AF_INET;
		f->tos = p->tos;
		f->ipv4_src = p->saddr;
		f->ipv4_dst = p->daddr;
	}
	f->l4_protocol = p->proto;
	f->tot_len = 0;		/* no MTU verdict: an oversize packet is still routed */
	f->ifindex = p->iif;
	if (p->sport != BPFIPT_NO_PORT) {
		f->sport = bpf_htons(p->sport);
		f->dport = bpf_htons(p->dport);
	}
	/* only the route's type and device matter: no neighbour lookup (a routed
	 * packet whose next hop is unresolved is SUCCESS then, not NO_NEIGH) */
	r = bpf_fib_lookup(ctx, f, sizeof(*f), BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (r == BPF_FIB_LKUP_RET_FWD_DISABLED && IS6(p) && p->iif != LOOPBACK_IFINDEX) {
		/* The helper stops at the input device's own forwarding setting, but
		 * fwd6_off() said the kernel forwards: all.forwarding is on (a router
		 * whose uplink has forwarding 0 to take router advertisements) or the
		 * device's force_forwarding. The route is asked again as from lo,
		 * whose forwarding follows all's; the answer differs only for policy
		 * rules that name an input interface. (Before: INPUT, so FORWARD's
		 * rules never saw what the kernel forwarded.) */
		f->ifindex = LOOPBACK_IFINDEX;
		r = bpf_fib_lookup(ctx, f, sizeof(*f), BPF_FIB_LOOKUP_SKIP_NEIGH);
	}
	switch (r) {
	case BPF_FIB_LKUP_RET_NOT_FWDED:	/* local (also: no route, the kernel drops it) */
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		/* forwarding off on the input interface: the helper stops before the
		 * route lookup, even for a local destination; the kernel delivers the
		 * packet or drops it, so INPUT is the only chain that can apply (IPv6:
		 * lo's forwarding off too, force_forwarding alone: see above) */
		if (genid >= 0)
			route_memo_put(&sc->memo[m & (ROUTE_MEMOS - 1)], p, genid, 0, 0);
		return BPFIPT_INPUT;
	case BPF_FIB_LKUP_RET_SUCCESS:
	case BPF_FIB_LKUP_RET_NO_NEIGH:		/* routed; the kernel resolves the neighbour */
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:	/* routed; the kernel fragments or answers */
		p->oif = f->ifindex;
		if (genid >= 0 && net && p->oif && (seed = route_seed(net, p)) >= 0)
			route_memo_put(&sc->memo[m & (ROUTE_MEMOS - 1)], p, genid, p->oif, seed);
		return BPFIPT_FORWARD;
	default:
		return -1;
	}
}

/* The device a program's context came in on (bpf_cast_to_kern_ctx(): log.bpf.h). */
static __always_inline struct net_device___bpfipt *xdp_dev(struct xdp_md *ctx)
{
	struct xdp_buff___bpfipt *xb = bpf_cast_to_kern_ctx(ctx);

	return xb->rxq->dev;
}

static __always_inline struct net_device___bpfipt *skb_dev(struct __sk_buff *skb)
{
	struct sk_buff___bpfipt *kskb = bpf_cast_to_kern_ctx(skb);

	return kskb->dev;
}

/* The family of the packet at data (0: IPv4, 1: IPv6, -1: neither), from the
 * EtherType, or on L3 devices (l2 == 0) the IP version. */
static __always_inline int l3_family(void *data, void *data_end, __u32 l2)
{
	struct ethhdr *eth = data;

	if (l2) {
		if ((void *)(eth + 1) > data_end)
			return -1;
		return eth->h_proto == bpf_htons(ETH_P_IP) ? 0 :
		       eth->h_proto == bpf_htons(ETH_P_IPV6) ? 1 : -1;
	}
	if (data + 1 > data_end)
		return -1;
	return (*(__u8 *)data >> 4) == 6;
}

/* The generation family fam (0 IPv4, 1 IPv6) uses and its conf: 0, or -1 when
 * nothing is installed for it (or fam < 0: not IP). */
static __always_inline int generation(int fam, __u32 *cur, __u32 *iflags,
				      struct bpfipt_conf **conf)
{
	__u32 zero = 0;
	struct bpfipt_inst *in = bpf_map_lookup_elem(&bpfipt_inst, &zero);

	if (!in || fam < 0 || (fam && !FEAT(BPFIPT_FEAT_IP6)))
		return -1;
	*cur = *(volatile __u32 *)&in->cur[fam & 1];
	*iflags = in->flags;
	*conf = bpf_map_lookup_elem(&bpfipt_conf, cur);
	/* nwords == 0: no ruleset installed yet, leave everything to the kernel */
	return *conf && (*conf)->nwords ? 0 : -1;
}

/* tc may leave headers in non-linear data; pull what parse() reads, only when the
 * linear part is short (pulling a clone copies its head). IPv6 headers beyond
 * these bytes: parse() says P_SHORT, tc_parse() pulls IPV6_PULL and parses again. */
static __always_inline void tc_pull(struct __sk_buff *skb, __u32 l2)
{
	__u32 want = skb->len < ETH_HLEN + 60 + 20 ? skb->len : ETH_HLEN + 60 + 20;
	void *data, *data_end;
	struct iphdr *ip;

	if ((void *)(long)skb->data + want > (void *)(long)skb->data_end)
		bpf_skb_pull_data(skb, want);
	/* an ICMP error also needs the packet it quotes (conntrack's RELATED):
	 * 60 + 8 more bytes; only ICMP pays for it */
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	ip = data + l2;
	if ((void *)(ip + 1) <= data_end && ip->version == 4 && ip->protocol == IPPROTO_ICMP) {
		want = skb->len < ETH_HLEN + 2 * (60 + 8) ? skb->len : ETH_HLEN + 2 * (60 + 8);
		if (data + want > data_end)
			bpf_skb_pull_data(skb, want);
	}
	/* the caller loads data and data_end again: without this, clang merges the
	 * loads of both paths into 32-bit values the verifier cannot use */
	asm volatile("" ::: "memory");
}

/* Parse the packet of a tc hook into sc->p: 0 to classify it, -1 when the
 * verdict is already known (*r: non-IP passes, a malformed packet drops). */
static __always_inline int tc_parse(struct __sk_buff *skb, __u32 l2, struct scratch *sc,
				    int *r, int fam)
{
	enum parse_result pr;
	__u32 want;

	tc_pull(skb, l2);
	pr = parse((void *)(long)skb->data, (void *)(long)skb->data_end, skb->len, l2, sc, true,
		   fam, skb);
	if (pr == P_SHORT) {
		/* IPv6 headers past the linear data: pull all parse6() may read */
		want = skb->len < l2 + IPV6_PULL ? skb->len : l2 + IPV6_PULL;
		bpf_skb_pull_data(skb, want);
		asm volatile("" ::: "memory");
		__builtin_memset(&sc->p, 0, sizeof(sc->p));
		pr = parse((void *)(long)skb->data, (void *)(long)skb->data_end, skb->len, l2, sc,
			   false, fam, skb);
	}
	switch (pr) {
	case P_PASS:
		stat_inc(BPFIPT_ST_PASSED_NON_IPV4);
		return -1;
	case P_DROP:
		*r = TC_ACT_SHOT;
		return -1;
	default:
		break;
	}
	return 0;
}

static __always_inline int tc_verdict(int v)
{
	return v == BPFIPT_V_ACCEPT ? TC_ACT_OK : TC_ACT_SHOT;
}

/* --------------------------------------------------------------- REJECT ---- */

#include "reject.bpf.h"

/* dataplane/reject.bpf.h defines it to 1 once it answers IPv6 packets; until
 * then an IPv6 packet a REJECT rule judges is dropped (BPFIPT_ST_REJECT_DROPPED). */
#ifndef BPFIPT_REJECT_IPV6
#define BPFIPT_REJECT_IPV6 0
#endif
#define REJECT_CAN(sc) (FEAT(BPFIPT_FEAT_REJECT) && ((sc)->p.family == 4 || BPFIPT_REJECT_IPV6))

/* The family of a tc hook's packet (l3_family()), from the skb. */
static __always_inline int skb_family(const struct __sk_buff *skb)
{
	if (skb->protocol == bpf_htons(ETH_P_IP))
		return 0;
	if (skb->protocol == bpf_htons(ETH_P_IPV6))
		return 1;
	stat_inc(BPFIPT_ST_PASSED_NON_IPV4);
	return -1;
}

/* ------------------------------------------------------------ programs ---- */

/* The program's scratch, its packet reset for family fam (0 IPv4, 1 IPv6): an
 * IPv4 packet clears only the fields before struct pkt's IPv6 ones (PKT_V4_BYTES),
 * a fifth fewer stores on every packet. */
static __always_inline struct scratch *scratch(__u32 idx, int fam)
{
	struct scratch *sc = bpf_map_lookup_elem(&bpfipt_scratch, &idx);

	if (sc) {
		if (fam == 0)
			__builtin_memset(&sc->p, 0, PKT_V4_BYTES);
		else
			__builtin_memset(&sc->p, 0, sizeof(sc->p));
		sc->nlog = 0;
	}
	return sc;
}

/* REJECT at XDP: tc ingress builds the reply (reject.bpf.h); without room for
 * the metadata, the packet is only dropped. */
static __always_inline int xdp_reject(struct xdp_md *ctx, __u32 with, int chain)
{
	struct reject_meta *m;
	void *data;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		goto drop;
	m = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(m + 1) > data)
		goto drop;
	m->magic = REJECT_MAGIC;
	m->with = with | (__u32)chain << 8;
	return XDP_PASS;
drop:
	stat_inc(BPFIPT_ST_REJECT_DROPPED);
	return XDP_DROP;
}

/* A packet XDP rejected (its metadata says so): the reply, or TC_ACT_SHOT. */
static __always_inline int tc_rejected_at_xdp(struct __sk_buff *skb, __u32 l2)
{
	struct reject_meta *m = (void *)(long)skb->data_meta;
	struct scratch *sc;
	__u32 with;
	int r = TC_ACT_SHOT, fam;

	if ((void *)(m + 1) > (void *)(long)skb->data || m->magic != REJECT_MAGIC)
		return -1;
	with = m->with;
	/* consumed: the metadata stays with the skb, and the reply built from it
	 * must not look rejected to the next hop's tc */
	m->magic = 0;
	fam = skb_family(skb);
	sc = scratch(SCR_TC_IN, fam);
	if (!sc || tc_parse(skb, l2, sc, &r, fam)) {
		stat_inc(BPFIPT_ST_REJECT_DROPPED);
		return TC_ACT_SHOT;
	}
	return tc_reject(skb, sc, l2, (with >> 8) & 3, with & 0xff);
}

SEC("xdp")
int bpfipt_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct bpfipt_conf *conf;
	struct scratch *sc;
	__u32 cur, iflags;
	int chain, v, r = XDP_PASS;

	/* attached to Ethernet devices and lo only */
	chain = l3_family(data, data_end, ETH_HLEN);
	if (chain < 0) {
		stat_inc(BPFIPT_ST_PASSED_NON_IPV4);
		goto out;
	}
	if (generation(chain, &cur, &iflags, &conf) || (conf->flags & BPFIPT_C_TC_INGRESS))
		goto out;
	sc = scratch(SCR_XDP, chain);
	if (!sc)
		goto out;
	switch (parse(data, data_end, data_end - data, ETH_HLEN, sc, false, chain, NULL)) {
	case P_PASS:
		stat_inc(BPFIPT_ST_PASSED_NON_IPV4);
		goto out;
	case P_DROP:
		r = XDP_DROP;
		goto out;
	default:
		break;
	}
	sc->p.iif = ctx->ingress_ifindex;
	sc->p.has_mac = sc->p.iif != LOOPBACK_IFINDEX;
	chain = select_ingress(ctx, sc, xdp_dev(ctx));
	if (chain < 0) {
		stat_inc(BPFIPT_ST_PASSED_NOT_OURS);
		goto out;
	}
	/* no skb, no mark: rulesets that test it run at tc (BPFIPT_C_TC_INGRESS) */
	v = judge(cur, conf, chain, sc, sc->p.iif != LOOPBACK_IFINDEX);
	/* tested here: the helper call of the argument would run for every packet */
	if (FEAT(BPFIPT_FEAT_LOG) && sc->nlog)
		log_emit(ctx, sc, true, ETH_HLEN, bpf_xdp_get_buff_len(ctx) - ETH_HLEN, ETH_HLEN,
			 0, 0, 0, false);
	switch (v) {
	case BPFIPT_V_ACCEPT:
		break;
	case BPFIPT_V_REJECT:
		if (REJECT_CAN(sc)) {
			r = xdp_reject(ctx, sc->reject_with, chain);
			break;
		}
		stat_inc(BPFIPT_ST_REJECT_DROPPED);
		r = XDP_DROP;
		break;
	default:
		r = XDP_DROP;
	}
out:
	return r;
}

static __always_inline int tc_in(struct __sk_buff *skb, __u32 l2)
{
	struct bpfipt_conf *conf;
	struct scratch *sc;
	__u32 cur, iflags, ifindex = skb->ifindex, zero = 0;
	int chain, r = TC_ACT_OK, fam = skb_family(skb);
	void *xdpifs;

	if (generation(fam, &cur, &iflags, &conf))
		goto out;
	if ((iflags & BPFIPT_I_XDP) && !(conf->flags & BPFIPT_C_TC_INGRESS) &&
	    (xdpifs = bpf_map_lookup_elem(&bpfipt_xdp_slot, &zero)) &&
	    bpf_map_lookup_elem(xdpifs, &ifindex)) {
		/* judged at XDP; a rejected packet is answered here */
		chain = FEAT(BPFIPT_FEAT_REJECT) ? tc_rejected_at_xdp(skb, l2) : -1;
		if (chain >= 0)
			r = chain;
		goto out;
	}
	/* a tagged frame is judged on its VLAN device; other hosts' frames are dropped
	 * by the kernel before any netfilter hook */
	if (skb->vlan_present || skb->pkt_type == PACKET_OTHERHOST) {
		stat_inc(BPFIPT_ST_PASSED_NOT_OURS);
		goto out;
	}
	sc = scratch(SCR_TC_IN, fam);
	if (!sc)
		goto out;
	if (tc_parse(skb, l2, sc, &r, fam))
		goto out;
	sc->p.iif = ifindex;
	sc->p.has_mac = l2 && ifindex != LOOPBACK_IFINDEX;
	sc->p.mark = skb->mark;
	chain = select_ingress(skb, sc, skb_dev(skb));
	if (chain < 0) {
		stat_inc(BPFIPT_ST_PASSED_NOT_OURS);
		goto out;
	}
	r = judge(cur, conf, chain, sc, ifindex != LOOPBACK_IFINDEX);
	log_emit(skb, sc, false, l2, skb->len - l2, l2, skb->mark, 0, 0, false);
	if (r == BPFIPT_V_REJECT && !REJECT_CAN(sc))
		stat_inc(BPFIPT_ST_REJECT_DROPPED);
	r = r == BPFIPT_V_REJECT && REJECT_CAN(sc) ?
		tc_reject(skb, sc, l2, chain, sc->reject_with) : tc_verdict(r);
out:
	return r;
}

/* LOG in OUTPUT: no link-layer header; the owner of a local socket (--log-uid). */
static __always_inline void log_output(struct __sk_buff *skb, struct scratch *sc, __u32 l2)
{
	struct bpf_sock *sk = skb->sk;
	__u32 id[2] = { 0, 0 };
	bool has_uid = false;

	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (sk)
		has_uid = !log_sock_ids(skb, id);
	log_emit(skb, sc, false, l2, skb->len - l2, 0, skb->mark, id[0], id[1], has_uid);
}

static __always_inline int tc_out(struct __sk_buff *skb, __u32 l2)
{
	struct bpfipt_conf *conf;
	struct scratch *sc;
	__u32 cur, iflags;
	int r = TC_ACT_OK, fam;

	/* a forwarded packet was judged by FORWARD at ingress: tested first, it
	 * passes without the generation's lookups */
	if (skb->ingress_ifindex != 0) {
		stat_inc(BPFIPT_ST_PASSED_NOT_OURS);
		goto out;
	}
	fam = skb_family(skb);
	if (generation(fam, &cur, &iflags, &conf))
		goto out;
	sc = scratch(SCR_TC_OUT, fam);
	if (!sc)
		goto out;
	if (tc_parse(skb, l2, sc, &r, fam))
		goto out;
	sc->p.oif = skb->ifindex;
	sc->p.mark = skb->mark;
	r = judge(cur, conf, BPFIPT_OUTPUT, sc, 1);
	if (FEAT(BPFIPT_FEAT_LOG) && sc->nlog)
		log_output(skb, sc, l2);
	if (r == BPFIPT_V_REJECT && !REJECT_CAN(sc))
		stat_inc(BPFIPT_ST_REJECT_DROPPED);
	r = r == BPFIPT_V_REJECT && REJECT_CAN(sc) ?
		tc_reject(skb, sc, l2, BPFIPT_OUTPUT, sc->reject_with) : tc_verdict(r);
out:
	return r;
}

/* tc on Ethernet-like devices and lo */
SEC("tc")
int bpfipt_tc_in(struct __sk_buff *skb)
{
	return tc_in(skb, ETH_HLEN);
}

SEC("tc")
int bpfipt_tc_out(struct __sk_buff *skb)
{
	return tc_out(skb, ETH_HLEN);
}

/* tc on L3 devices: the packet starts with the IP header */
SEC("tc")
int bpfipt_tc_in3(struct __sk_buff *skb)
{
	return tc_in(skb, 0);
}

SEC("tc")
int bpfipt_tc_out3(struct __sk_buff *skb)
{
	return tc_out(skb, 0);
}

/* Tests: chain = cb[0], iif = cb[1], oif = cb[2]; returns the enum bpfipt_verdict,
 * or BPFIPT_TEST_PASS when the packet is left to the kernel. */
#define BPFIPT_TEST_PASS 100

SEC("tc")
int bpfipt_test(struct __sk_buff *skb)
{
	struct bpfipt_conf *conf;
	struct scratch *sc;
	__u32 cur, iflags;
	int r = BPFIPT_TEST_PASS, fam = skb_family(skb);

	if (generation(fam, &cur, &iflags, &conf))
		goto out;
	sc = scratch(SCR_TEST, fam);
	if (!sc)
		goto out;
	if (tc_parse(skb, ETH_HLEN, sc, &r, fam)) {
		if (r == TC_ACT_SHOT)
			r = BPFIPT_V_DROP;
		goto out;
	}
	sc->p.iif = skb->cb[1];
	sc->p.oif = skb->cb[2];
	sc->p.has_mac = 1;
	sc->p.mark = skb->mark;
	r = judge(cur, conf, skb->cb[0], sc, 1);
	log_emit(skb, sc, false, ETH_HLEN, skb->len - ETH_HLEN,
		 skb->cb[0] == BPFIPT_OUTPUT ? 0 : ETH_HLEN, skb->mark, 0, 0, false);
out:
	return r;
}

#endif /* BPFIPT_MAPS_ONLY */
