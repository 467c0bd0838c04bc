/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule compiler: the model (table -> chains -> rules) becomes, per base
 * chain, the slots and field bit vectors of the LBVS classifier described in
 * dataplane/bpfipt.h. The result (struct cp_compiled) is plain memory; the loader
 * (controlplane/loader.c) writes it into BPF maps, and cp_lbvs_eval() runs the
 * data plane's algorithm on it in C, so the compiler is tested against the
 * reference evaluator cp_ref_eval() without a kernel.
 *
 * Vectors are deduplicated into a pool: every field lookup gives a VECTOR ID,
 * and the pool gives the vector (nwords 64-bit words; bit s of word s / 64 is
 * slot s). Slot numbering restarts at 0 in each chain; nwords is the maximum
 * over the chains. A vector is stored as a WINDOW (struct cp_vwin): the chunks
 * (BPFIPT_CHUNK_WORDS words) where it differs from a base vector, the rest being
 * the base's. A user chain's slots are in every vector of its base chain, and
 * most vectors of a field differ in the chunks of one rule: 10 000 chains that
 * each test a source, jumped to from 10 000 rules that each test a destination,
 * take 20 000 vectors of 10 chunks, 11 MB as windows and 100 MB whole.
 *
 * Runs of consecutive rules that differ only in their source (or destination)
 * prefix -- a deny list -- compile to ONE group slot whose address constraint
 * is the union of the run's prefixes; a group LPM gives, for an address, the
 * counter of the first rule of the run that matches it. A million-entry list
 * costs one slot and O(entries) memory.
 *
 * Memory: everything cp_compile() allocates is counted as it grows (the vector
 * pool dominates: the windows' chunks); above CP_MEM_LIMIT it fails with
 * a clear error (exit 1) instead of building tables the kernel could not hold.
 */
#ifndef BPFIPT_COMPILE_H
#define BPFIPT_COMPILE_H

#include <stdbool.h>
#include <linux/bpf.h>	/* struct bpf_spin_lock of bpfipt.h */
#include "bpfipt.h"
#include "model.h"
#include "errors.h"

/* The links of the namespace, for -i/-o names and wildcards. */
struct cp_link {
	__u32 ifindex;
	char name[16];
};

struct cp_env {
	const struct cp_link *links;
	unsigned int nlinks;
	/* Shortest run of rules compiled to a group slot; 0 = CP_GROUP_MIN_DEFAULT. */
	unsigned int group_min;
	/* Bytes the compiled tables may take; 0 = CP_MEM_LIMIT. */
	size_t mem_limit;
	/* Shortest run compiled to a tuple group slot; 0 = CP_TUPLE_MIN_DEFAULT
	 * (CP_TUPLE_MIN_TOP for a run that begins a base chain). */
	unsigned int tuple_min;
};

#define CP_MEM_LIMIT		((size_t)512 << 20)	/* bytes of compiled tables */
#define CP_GROUP_MIN_DEFAULT	4
/* A tuple group costs a hash lookup (and a step) whenever its slot is a
 * candidate, where a run inside one chunk of the vectors (4096 slots) costs the
 * walk little: measured with bench/pktcost, 2 048 rules that never match cost
 * 266 ns as slots and 331 ns as a group; 100 000 rules 1 878 and 314 ns. */
#define CP_TUPLE_MIN_DEFAULT	(64 * BPFIPT_CHUNK_WORDS)
/* A base chain of this many rules or more (more than one chunk of the vectors)
 * has its policy at the start of a word (cp_compiled.npad): a walk with summary
 * rows takes it from them, without the lookups of its chunk */
#define CP_PAD_MIN		(64 * BPFIPT_CHUNK_WORDS)
/* A run that begins a base chain is searched before anything else
 * (BPFIPT_FAST_TUPLE), which costs less than the walk at every size measured
 * (10 rules: 118-159 against 225-307 ns at XDP; with 64 here, ten rules cost
 * twice what 2 048 did): a group from 8 rules on. Shorter runs are left to the
 * slot prefix (BPFIPT_FAST_PFX_RULES rules). A run among a few plain rules of a
 * base chain is a group from 8 rules too (compile.c tuple_in_prefix()): the
 * prefix searches it (BPFIPT_FAST_PFX_TUPLE), and no packet walks. */
#define CP_TUPLE_MIN_TOP	8

/* One LPM entry: (chain, prefix) -> vector id; or for group LPMs
 * (group, prefix) -> counter index. */
struct cp_lpm_entry {
	__u32 key;		/* chain id (field LPMs) or group id (group LPMs) */
	__u8 plen;		/* 0..32 */
	__be32 addr;		/* masked, network order */
	__u32 value;		/* vector id, or counter index */
};

/* The same for IPv6 rulesets (struct ipt_table.family AF_INET6). */
struct cp_lpm_entry6 {
	__u32 key;
	__u32 value;
	__u8 plen;		/* 0..128 */
	__u8 addr[16];		/* masked, network order */
};

struct cp_lpm {
	struct cp_lpm_entry *e;		/* IPv4 rulesets */
	struct cp_lpm_entry6 *e6;	/* IPv6 rulesets: e is NULL */
	unsigned int n, cap;
};

/* Keys start .. (the next run's start, or nkeys) - 1 have vector vid. */
struct cp_key_run {
	__u32 start, vid;
};

/* A field whose packet value is a small integer: key -> vector id, per chain
 * (cp_array_vec()), as runs of keys with one vector: a row of keys is 256 KiB
 * for a port, and three chains of eight fields made, scanned and copied were
 * most of a one-rule command's CPU; a chain where no rule names the field has
 * one run, and one where a few rules name ports a few. */
struct cp_array_field {
	unsigned int nkeys;	/* keys per chain: 256 (+1), 65537, 2, 32 ... */
	struct cp_key_run *run[BPFIPT_NCHAINS];	/* the first starts at 0; maximal */
	unsigned int nrun[BPFIPT_NCHAINS], cap[BPFIPT_NCHAINS];
};

/* Keys from start on (to the end, until a later call) have vector vid: runs are
 * added in key order (the compiler; a test's ruleset made by hand). */
void cp_array_run(struct cp_array_field *a, unsigned int chain, __u32 start, __u32 vid);

/* The key after run j of chain's runs (its end, exclusive). */
static inline __u32 cp_run_end(const struct cp_array_field *a, unsigned int chain, unsigned int j)
{
	return j + 1 < a->nrun[chain] ? a->run[chain][j + 1].start : a->nkeys;
}

static inline __u32 cp_array_vec(const struct cp_array_field *a, unsigned int chain,
				 unsigned int key)
{
	const struct cp_key_run *r = a->run[chain];
	unsigned int lo = 0, hi = a->nrun[chain];

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (r[mid].start <= key)
			lo = mid;
		else
			hi = mid;
	}
	return r[lo].vid;
}

/* An interface field: (chain, ifindex) -> vector id; absent -> dflt[chain]. */
struct cp_if_entry {
	__u32 chain, ifindex, vec;
};

struct cp_if_field {
	struct cp_if_entry *e;
	unsigned int n, cap;
	__u32 dflt[BPFIPT_NCHAINS];
};

struct cp_group {
	bool dst;		/* the run differs in -d (else in -s) */
	__u32 id;
};

/* A -m recent list the ruleset names (struct bpfipt_extra.rc_table is the
 * index in cp_compiled.recent until the loader gives it the list's id). */
struct cp_recent_list {
	char name[BPFIPT_RECENT_NAME];
	__be32 mask;		/* the first rule's --mask (xt_recent: the creator's) */
	__u32 nstamps_mask;	/* the kernel's stamp mask for the list (see bpfipt.h) */
};

#define CP_RECENT_MAX_HITCOUNT	BPFIPT_RECENT_STAMPS

/* Vector v's chunks lo .. lo + n - 1 are its own, stored from word `at` of
 * cp_compiled.words (cwords words a chunk); its other chunks are vector base's,
 * which owns all its chunks (lo 0, n nchunks; base itself). */
struct cp_vwin {
	__u32 base, lo, n;
	size_t at;
};

struct cp_compiled {
	int family;				/* AF_INET or AF_INET6: the table's */
	unsigned int nwords;			/* words per vector */
	unsigned int nvecs;			/* vectors in the pool */
	unsigned int nchunks;			/* chunks per vector */
	unsigned int cwords;			/* words a stored chunk: nwords, at most
						 * BPFIPT_CHUNK_WORDS (the last chunk's
						 * words past nwords are 0) */
	struct cp_vwin *vw;			/* [nvecs] */
	__u64 *words;				/* the chunks the windows own */
	size_t nowned;				/* ... how many */

	struct cp_lpm src, dst;			/* BPFIPT_F_SRC / _DST, key = chain */
	struct cp_array_field proto;		/* 256 keys */
	struct cp_array_field sport, dport;	/* BPFIPT_CLASS_KEYS keys */
	struct cp_array_field tcpflags;		/* 257 keys (BPFIPT_NO_TCP = 256) */
	struct cp_array_field icmp;		/* BPFIPT_CLASS_KEYS keys */
	struct cp_array_field frag;		/* 2 keys */
	struct cp_array_field len;		/* 65536 keys */
	struct cp_array_field ctstate;		/* 32 keys: enum bpfipt_ct_state */
	struct cp_if_field iif, oif;

	/* group LPMs: key = group id, value = counter index */
	struct cp_lpm group_src, group_dst;
	unsigned int ngroups;			/* group ids are 0..ngroups-1 */
	/* A chain's only group slot on the source (0) / destination (1): slot + 1, 0
	 * when the chain has none or several. Its list is left out of the field's
	 * set (its bit is in every vector of the field): the data plane searches the
	 * group's set once per packet instead (bpfipt_conf.gfold), so a deny list
	 * beside other rules on the same field costs one set of its prefixes, not two. */
	__u32 gfold[BPFIPT_NCHAINS][2];

	/* The id of the vector that has the bits of slots 0 .. nslots - 1 of the
	 * chain and no other (a protocol every rule of the chain names, say), when
	 * a field's value has it; else BPFIPT_NO_VEC. An AND with it changes
	 * nothing: the data plane leaves it out (bpfipt_conf.full). */
	__u32 full_vec[BPFIPT_NCHAINS];

	/* tuple groups (bpfipt.h, "A tuple group"): their keys, sorted, each with
	 * the first rule of its run that has it, as an offset from the run's first
	 * rule (whose counter is the slot's): a rule inserted before the run moves
	 * the slot's counter, not the hash's values. The key is IPv6's for both
	 * families (an IPv4 address in word 0, the rest 0); the loader writes an
	 * IPv4 table's as struct bpfipt_tuple_key. */
	struct cp_tuple {
		struct bpfipt_tuple6_key k;
		__u32 off;
	} *tuples;
	unsigned int ntuples, ntgroups;		/* tuple group ids: 0..ntgroups-1 */
	__u64 tuple_sum;			/* digest of tuples[] (never 0): the loader
						 * leaves a hash that holds them alone */

	unsigned int nslots[BPFIPT_NCHAINS];
	/* The member slots of the chain's verdict maps (BPFIPT_X_VMAP), slots
	 * nslots .. nslots + nmslots - 1: no bit in any vector, reached only
	 * through their group slot */
	unsigned int nmslots[BPFIPT_NCHAINS];
	struct bpfipt_slot *slots[BPFIPT_NCHAINS];
	__u32 policy_slot[BPFIPT_NCHAINS];
	/* The empty slots before the policy that make it the first of its word
	 * (a chain of CP_PAD_MIN rules or more, layout_chain()): CONTINUE, no
	 * counter, in no vector (cur_set()) nor in the loader's constant vector,
	 * so the walk never finds them */
	__u32 npad[BPFIPT_NCHAINS];

	struct bpfipt_extra *extras;
	unsigned int nextras;

	struct cp_recent_list *recent;		/* in the order the rules name them */
	unsigned int nrecent;

	/* Counters: one per model rule, in table order (chain by chain, rule by rule,
	 * as struct ipt_table lists them), then one per builtin chain policy. */
	unsigned int ncounters;
	__u32 policy_counter[BPFIPT_NCHAINS];

	size_t mem;				/* bytes counted against CP_MEM_LIMIT */
};

/* All cp_lpm arrays are sorted by (key, addr, plen) (the order a group's prefixes
 * come in, and the one the interval sets take) and the cp_if_field arrays by
 * (chain, ifindex). Interfaces: ifindex 0 (no interface: INPUT's oif, OUTPUT's
 * iif) and any ifindex missing from env->links use dflt[chain], the vector of the
 * empty name (only "-i +"-like patterns match it, "! -i eth0" does). */

/* A packet as the classifier sees it (host byte order except addresses).
 * Field keys: a non-first fragment has no ports, TCP flags nor ICMP type whatever
 * has_* say (BPFIPT_NO_PORT / NO_TCP / NO_ICMP), as the kernel's matches see it;
 * the tcp match needs has_tcp and has_ports. Conntrack: what the data plane's
 * tracker gave the packet (conntrack/ct.bpf.h). */
struct cp_packet {
	__be32 saddr, daddr;
	__u8 proto;
	bool has_ports;		/* a TCP/UDP/SCTP/DCCP/UDPLITE header, not a fragment */
	__u16 sport, dport;
	bool has_tcp;		/* a TCP header (then tcpflags is valid) */
	__u8 tcpflags;
	bool has_icmp;
	__u8 icmp_type, icmp_code;
	bool nonfirst_frag;	/* fragment offset != 0 */
	__u16 len;		/* IP total length */
	__u32 iif, oif;		/* ifindex, 0 = none */
	__u32 mark;
	bool has_mac;
	__u8 mac[6];
	__u8 ctstate;		/* enum bpfipt_ct_state (0: INVALID) */
	bool has_ct;		/* a connection (INVALID: none) */
	__u8 ctdir;		/* 1: reply direction */
	__u8 ctstatus;		/* BPFIPT_CTS_* */
	__u8 ct_proto;
	__be32 ct_osrc, ct_odst;	/* original tuple */
	__u16 ct_osport, ct_odport;
	__u32 ct_expire;	/* seconds left */
	/* -m addrtype: RTN_* type of [0] saddr, [1] daddr, judged [0] on any device,
	 * [1] on the input interface, [2] on the output one (bpfipt.h) */
	__u8 atype[2][3];
	/* IPv6 packets (family 6; saddr and daddr unused): the addresses; proto is
	 * the upper-layer protocol after the extension headers; cut: the chain
	 * could not be walked (a rule with -p drops the packet, ip6tables' hotdrop;
	 * then proto, ports, flags and type are absent) */
	__u8 family;		/* 6, else IPv4 */
	bool cut;
	__u8 saddr6[16], daddr6[16];
};

#define CP_TRACE_MAX 64
struct cp_trace {
	enum bpfipt_verdict verdict;
	unsigned int ncounted;
	__u32 counted[CP_TRACE_MAX];	/* counter indexes incremented, in order */
};

int cp_compile(const struct ipt_table *t, const struct cp_env *env, struct cp_compiled **out,
	       struct ipt_err *err);
void cp_compiled_free(struct cp_compiled **c);

/* Chunk k of vector v: cc->cwords words (bits 64 * BPFIPT_CHUNK_WORDS * k on). */
static inline const __u64 *cp_vec_chunk(const struct cp_compiled *cc, __u32 v, unsigned int k)
{
	const struct cp_vwin *w = &cc->vw[v];

	if (k - w->lo >= w->n)
		w = &cc->vw[w->base];
	return cc->words + w->at + (size_t)(k - w->lo) * cc->cwords;
}

/* Bit s of vector v. */
static inline bool cp_vec_bit(const struct cp_compiled *cc, __u32 v, unsigned int s)
{
	const __u64 *c = cp_vec_chunk(cc, v, s / (64 * BPFIPT_CHUNK_WORDS));

	return c[s / 64 % BPFIPT_CHUNK_WORDS] >> (s % 64) & 1;
}

/* The pool of cc made of nvecs whole vectors of cc->nwords words (vecs), stored
 * as windows the way cp_compile() stores them: for tables built by hand. 0, or
 * -1 out of memory. */
int cp_pool_set(struct cp_compiled *cc, const __u64 *vecs, unsigned int nvecs);

/* Map a counter index back to the model: chain index in t->chains and rule index
 * (-1 for a policy counter; chain UINT_MAX for an index out of range). */
void cp_counter_owner(const struct ipt_table *t, __u32 counter, unsigned int *chain, int *rule);

/* The reference: iptables' semantics evaluated directly on the model, rule by
 * rule (limit counts as always matching in both evaluators). 0, or -1 (a loop,
 * a missing chain).
 * tr->ncounted counts every increment; counted[] keeps the first CP_TRACE_MAX. */
int cp_ref_eval(const struct ipt_table *t, const struct cp_env *env, enum bpfipt_chain c,
		const struct cp_packet *p, struct cp_trace *tr);
/* The data plane's algorithm on the compiled tables, in C. 0; 1 when
 * BPFIPT_MAX_STEPS ran out, 2 when BPFIPT_MAX_DEPTH did (verdict DROP, as the
 * data plane); -1 on a malformed table. */
/* -m addrtype on a packet: masks of 1 << RTN_*, BPFIPT_AT_* flags. */
bool cp_addrtype_ok(__u16 src, __u16 dst, __u8 flags, const struct cp_packet *p);

/* The order of cp_compiled.tuples (qsort comparators). */
int cp_tuple_key_cmp(const struct bpfipt_tuple6_key *x, const struct bpfipt_tuple6_key *y);
int cp_tuple_cmp(const void *a, const void *b);
/* The bits of a prefix of plen bits that fall in 32-bit word w of an address
 * (host order). */
__u32 cp_word_mask(unsigned int plen, unsigned int w);
/* An IPv6 address (network order) masked to plen bits, as a tuple key's. */
void cp_tuple_addr6(__be32 out[4], const __u8 a[16], unsigned int plen);
/* l's IPv6 entries by group or chain, then address, then length; equal ones in
 * their given order (by keys from RSORT_MIN entries on: a 1M IPv6 deny list's
 * qsort() made ten million memcmp() calls; a group's list comes in this order
 * and is only checked). */
void cp_lpm_sort6(struct cp_lpm *l);

int cp_lbvs_eval(const struct cp_compiled *cc, enum bpfipt_chain c, const struct cp_packet *p,
		 struct cp_trace *tr);

#endif
