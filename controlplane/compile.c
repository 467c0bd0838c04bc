// SPDX-License-Identifier: GPL-2.0
/*
 * The rule compiler (see compile.h, and dataplane/bpfipt.h for the algorithm the
 * data plane runs on the result).
 *
 * 1. Every model rule of a chain reachable from a base chain becomes a UNIT: its
 *    constraint per field, its extras, its action. A run of consecutive rules that
 *    differ only in a non-negated -s (or -d) prefix becomes one GROUP unit.
 *    Constraints:
 *      - range fields (proto, ports, tcp flags, icmp, frag, length, ct state): a
 *        normalised interval set over the field's keys (NULL = unconstrained); the
 *        matches of a rule are intersected;
 *      - address fields: a list of ATOMS ANDed together, each a set of prefixes,
 *        possibly negated (-s, ! -s, iprange ranges, the union of a group);
 *      - interfaces: one name pattern each (kernel semantics: "eth+" is a prefix,
 *        "" matches every name), possibly negated.
 * 2. Per base chain, slots are laid out as bpfipt.h says (rules, POLICY, one block
 *    per reachable user chain ending with RETURN); nesting depth is checked.
 * 3. Per base chain and field, the vectors:
 *      - range fields: a sweep over the elementary intervals (events at each
 *        interval bound), one vector per interval;
 *      - address fields: a preorder walk of all the chain's prefixes (plus 0/0)
 *        with per-atom "some ancestor is mine" counters; a slot's bit is set when
 *        all its atoms are satisfied (contains xor negated);
 *      - interfaces: one vector per link of env, the default for any other ifindex
 *        (and for 0 = no interface) is the vector of the name "".
 *    Vectors are interned in a hash-deduplicated pool.
 * Memory is counted as it is allocated; above CP_MEM_LIMIT the compile fails.
 */
#include "compile.h"
#include "ext.h"
#include "proto_ext.h"
#include "misc_ext.h"
#include "save.h"
#include "be128.h"
#include "rsort.h"
#include "strbuf.h"

#include <arpa/inet.h>
#include <assert.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/xt_conntrack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IPv6 tables: -p was given (ip6tables sets it, for "all" too); the bit of
 * IPv4's IPT_F_FRAG in struct ipt_ip.flags. */
#ifndef IP6T_F_PROTO
#define IP6T_F_PROTO 0x01
#endif

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		abort();
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

static void xqsort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, sz, cmp);
}

/* A bump allocator for the small objects of the units, freed at once. */
struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct arena_blk *head;
	size_t total;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->head || a->head->cap - a->head->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		struct arena_blk *b = xmalloc(sizeof(*b) + cap);

		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
		a->total += cap;
	}
	void *p = a->head->data + a->head->used;

	a->head->used += n;
	return p;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_blk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
	a->total = 0;
}

/* ---------------------------------------------------------------- fields */

/* The range-mapped fields, in the order of their struct cp_array_field. */
enum {
	RF_PROTO,
	RF_SPORT,
	RF_DPORT,
	RF_TCPFLAGS,
	RF_ICMP,
	RF_FRAG,
	RF_LEN,
	RF_CTSTATE,
	RF_N,
};

static const unsigned int rf_nkeys[RF_N] = {
	[RF_PROTO] = 256,
	[RF_SPORT] = BPFIPT_CLASS_KEYS,
	[RF_DPORT] = BPFIPT_CLASS_KEYS,
	[RF_TCPFLAGS] = 257,
	[RF_ICMP] = BPFIPT_CLASS_KEYS,
	[RF_FRAG] = 2,
	[RF_LEN] = 65536,
	[RF_CTSTATE] = 32,
};
_Static_assert(BPFIPT_CLASS_KEYS >= 65536, "build_range's buckets fit every range field");

static struct cp_array_field *rf_out(struct cp_compiled *cc, int f)
{
	switch (f) {
	case RF_PROTO: return &cc->proto;
	case RF_SPORT: return &cc->sport;
	case RF_DPORT: return &cc->dport;
	case RF_TCPFLAGS: return &cc->tcpflags;
	case RF_ICMP: return &cc->icmp;
	case RF_FRAG: return &cc->frag;
	case RF_LEN: return &cc->len;
	default: return &cc->ctstate;
	}
}

/* An interval set: n intervals v[2i] .. v[2i+1], sorted, disjoint, not adjacent. */
struct iset {
	unsigned int n;
	__u32 v[];
};

struct pfx {
	__u32 addr;		/* host order, masked */
	__u32 plen;
	__u32 counter;		/* group runs: the rule's counter */
};

struct pfx6 {
	unsigned __int128 addr;	/* host order, masked */
	__u32 plen;
	__u32 counter;
};

/* An address of a run as the interval it covers, and its rule's place in the run. */
struct span {
	unsigned __int128 lo, hi;
	unsigned int k;
};

struct atom {
	bool neg;
	bool ip;		/* from the rule's IP part (-s/-d, a group's prefixes) */
	unsigned int n;
	union {
		struct pfx *p;		/* IPv4 rulesets */
		struct pfx6 *p6;	/* IPv6 */
	};
};

#define MAX_ATOMS (2 + IPT_MAX_MATCHES)

struct unit {
	const struct ipt_rule *rule;	/* the (first) rule */
	unsigned int nrules;		/* > 1: a group */
	__u8 kind, verdict, reject_with, log;
	int target;			/* JUMP/GOTO: model chain index */
	int *mtarget;			/* a verdict map (BPFIPT_X_VMAP): each rule's */
	__u32 counter, xflags, extra, group;
	__u8 tp_splen, tp_dplen, tp_ports;	/* a tuple group (BPFIPT_X_GROUP_TUPLE) */
	struct iset *rs[RF_N];		/* NULL: unconstrained */
	struct atom *atoms[2];		/* src, dst */
	unsigned int natoms[2];
	struct {
		bool con, inv;
		char pat[IPT_IFNAMSIZ + 1];
	} ifc[2];			/* iif, oif */
};

struct mchain {
	struct unit *u;
	unsigned int nu;
	int state;			/* depth walk: 0 new, 1 on the stack, 2 done */
	unsigned int need;		/* stack frames the chain may push */
	bool built;
};

/* One answer of iset_pred: the isets of the units are never changed once made
 * (constrain() makes a new one), so s stays valid with the arena. */
#define PRED_MEMO	64
#define PRED_KEYS_MAX	257

struct pred_memo {
	bool (*pred)(unsigned int key, const void *ctx);
	__u32 key;
	unsigned int nkeys;
	const struct iset *s;
};

/* The windows' bases (struct cp_vwin): the latest vectors stored whole, most
 * recently used first. A field's vectors come one after another, and most of them
 * are the field's first with a few rules' bits changed. */
#define POOL_BASES 4
struct vpool {
	__u32 base[POOL_BASES];
	unsigned int nbases;
	bool fresh;			/* the next vector begins a field: whole, even
					 * one chunk from a base (a window on it would
					 * widen every window of the field on it) */
	size_t vwcap, wcap;		/* cp_compiled.vw, .words (chunks) allocated */
};

struct cctx {
	const struct ipt_table *t;
	const struct cp_env *env;
	struct ipt_err *err;
	struct cp_compiled *cc;
	struct arena ar;
	struct mchain *ch;
	__u32 *rule_base;
	unsigned int group_min, tuple_min, tuple_top;
	size_t mem;			/* bytes counted against mem_limit */
	size_t mem_limit;
	bool failed;
	bool v6;			/* an IPv6 table (128-bit addresses) */
	unsigned int cur_chain;		/* for messages */
	/* the empty slots of the chain whose vectors are built (cp_compiled.npad):
	 * in none of them, cur_set() leaves them out */
	unsigned int pad_lo, pad_hi;

	/* vector pool */
	struct vpool vp;
	__u32 *ht;
	__u64 *hh;
	size_t htcap, poolcap;
	__u64 *cur;			/* the vector being built (cur_set(), cur_clr()) */
	__u64 curhash;			/* ... its hash (word_hash()) */
	__u32 *first;			/* build_range's buckets, for the largest field */

	/* tuple_run()'s keys of a run (tuple_seen()) */
	struct bpfipt_tuple6_key *tkeys;
	__u64 *tseen;
	size_t ntkeys, tscap;
	__u32 trun;

	/* disjoint_run()'s arrays: the run's spans, the stack of open ones (the
	 * span's index and the earliest rule among it and those below it) */
	struct span *spans;
	struct { __u32 at, first; } *stk;
	unsigned int nspans;

	/* per base chain: slot -> unit (NULL: POLICY/RETURN, always matches) */
	const struct unit **sl[BPFIPT_NCHAINS];

	size_t extras_cap, grp_cap[2], tuple_cap;

	struct pred_memo memo[PRED_MEMO];
};

static const char *const base_names[BPFIPT_NCHAINS] = { "INPUT", "FORWARD", "OUTPUT" };

static int rule_error(struct cctx *x, unsigned int ci, const struct ipt_rule *r,
		      const char *what)
{
	struct strbuf sb = STRBUF_INIT;

	ipt_save_rule(&sb, x->t->chains[ci]->name, r, false);
	ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
		    "rule not supported by the data plane: %s (in `%s')", what, sb_str(&sb));
	sb_free(&sb);
	x->failed = true;
	return -1;
}

static int mem_add(struct cctx *x, size_t n);

/* The index of -m recent's list d->name in cc->recent (added on first use):
 * like xt_recent, the first rule naming a list gives its mask, and the stamp
 * mask is the largest any rule asks for. */
static int recent_list(struct cctx *x, const struct recent_data *d)
{
	struct cp_compiled *cc = x->cc;
	/* xt_recent's checkentry, ip_pkt_list_tot = 0 (its default) */
	__u32 want = d->hit_count ? 1 : 32, i;

	while (want < d->hit_count)
		want <<= 1;
	for (i = 0; i < cc->nrecent; i++)
		if (!strcmp(cc->recent[i].name, d->name))
			break;
	if (i == cc->nrecent) {
		if (cc->nrecent == BPFIPT_RECENT_TABLES) {
			ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				    "too many -m recent lists (at most %u)", BPFIPT_RECENT_TABLES);
			x->failed = true;
			return -1;
		}
		cc->recent = xrealloc(cc->recent, (cc->nrecent + 1) * sizeof(*cc->recent));
		memset(&cc->recent[i], 0, sizeof(cc->recent[i]));
		snprintf(cc->recent[i].name, sizeof(cc->recent[i].name), "%s", d->name);
		cc->recent[i].mask = d->mask;
		cc->nrecent++;
		if (mem_add(x, sizeof(*cc->recent)))
			return -1;
	}
	if (want - 1 > cc->recent[i].nstamps_mask)
		cc->recent[i].nstamps_mask = want - 1;
	return (int)i;
}

static int mem_add(struct cctx *x, size_t n)
{
	x->mem += n;
	if (x->mem > x->mem_limit && !x->failed) {
		ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
			    "ruleset too large for the data plane: its compiled tables need more "
			    "than %u MiB (chain %s, %u slots, %u distinct bit vectors of %u "
			    "words so far); runs of rules that differ only in -s or -d compile "
			    "to one slot, other rulesets must be smaller",
			    (unsigned int)(x->mem_limit >> 20), x->t->chains[x->cur_chain]->name,
			    x->cc->nslots[0] + x->cc->nslots[1] + x->cc->nslots[2], x->cc->nvecs,
			    x->cc->nwords);
		x->failed = true;
	}
	return x->failed ? -1 : 0;
}

/* ---------------------------------------------------------------- interval sets */

static struct iset *iset_new(struct cctx *x, unsigned int n)
{
	struct iset *s = arena_alloc(&x->ar, sizeof(*s) + 2 * n * sizeof(__u32));

	s->n = n;
	return s;
}

static int cmp_pair(const void *a, const void *b)
{
	const __u32 *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Union of n [lo, hi] pairs (sorted in place), then complemented within [0, max]
 * when inv. Pairs with lo > hi are empty. */
static struct iset *iset_from_pairs(struct cctx *x, __u32 *pairs, unsigned int n, bool inv,
				    __u32 max)
{
	unsigned int m = 0;

	xqsort(pairs, n, 2 * sizeof(__u32), cmp_pair);
	/* merge into pairs[0..m) */
	for (unsigned int i = 0; i < n; i++) {
		__u32 lo = pairs[2 * i], hi = pairs[2 * i + 1];

		if (lo > hi)
			continue;
		if (m && (__u64)pairs[2 * m - 1] + 1 >= lo) {
			if (hi > pairs[2 * m - 1])
				pairs[2 * m - 1] = hi;
			continue;
		}
		pairs[2 * m] = lo;
		pairs[2 * m + 1] = hi;
		m++;
	}
	if (!inv) {
		struct iset *s = iset_new(x, m);

		memcpy(s->v, pairs, 2 * m * sizeof(__u32));
		return s;
	}
	struct iset *s = iset_new(x, m + 1);
	__u64 next = 0;
	unsigned int k = 0;

	for (unsigned int i = 0; i < m; i++) {
		if (pairs[2 * i] > next) {
			s->v[2 * k] = (__u32)next;
			s->v[2 * k + 1] = pairs[2 * i] - 1;
			k++;
		}
		next = (__u64)pairs[2 * i + 1] + 1;
	}
	if (next <= max) {
		s->v[2 * k] = (__u32)next;
		s->v[2 * k + 1] = max;
		k++;
	}
	s->n = k;
	return s;
}

static struct iset *iset_range(struct cctx *x, __u32 lo, __u32 hi, bool inv, __u32 max)
{
	__u32 p[2] = { lo, hi };

	return iset_from_pairs(x, p, 1, inv, max);
}

static struct iset *iset_and(struct cctx *x, const struct iset *a, const struct iset *b)
{
	struct iset *s = iset_new(x, a->n + b->n);
	unsigned int i = 0, j = 0, k = 0;

	while (i < a->n && j < b->n) {
		__u32 lo = a->v[2 * i] > b->v[2 * j] ? a->v[2 * i] : b->v[2 * j];
		__u32 hi = a->v[2 * i + 1] < b->v[2 * j + 1] ? a->v[2 * i + 1] : b->v[2 * j + 1];

		if (lo <= hi) {
			s->v[2 * k] = lo;
			s->v[2 * k + 1] = hi;
			k++;
		}
		if (a->v[2 * i + 1] < b->v[2 * j + 1])
			i++;
		else
			j++;
	}
	s->n = k;
	return s;
}

/* The set of keys 0..nkeys-1 for which pred holds. key: what the predicate's
 * ctx means, packed by the caller: most rules ask the same few questions
 * (-p tcp, no --tcp-flags), answered once (x->memo) and copied after. */
static struct iset *iset_pred(struct cctx *x, unsigned int nkeys,
			      bool (*pred)(unsigned int key, const void *ctx), const void *ctx,
			      __u32 key)
{
	struct pred_memo *mo = &x->memo[(key * 0x9E3779B1u ^ nkeys) % PRED_MEMO];
	__u32 pairs[2 * ((PRED_KEYS_MAX + 1) / 2)];
	unsigned int n = 0;
	struct iset *s;

	assert(nkeys <= PRED_KEYS_MAX);
	if (mo->s && mo->pred == pred && mo->key == key && mo->nkeys == nkeys) {
		s = iset_new(x, mo->s->n);
		memcpy(s->v, mo->s->v, 2 * s->n * sizeof(__u32));
		return s;
	}
	/* keys in order: the pairs come out sorted, disjoint and not adjacent */
	for (unsigned int k = 0; k < nkeys; k++) {
		if (!pred(k, ctx))
			continue;
		if (n && pairs[2 * n - 1] + 1 == k) {
			pairs[2 * n - 1] = k;
		} else {
			pairs[2 * n] = k;
			pairs[2 * n + 1] = k;
			n++;
		}
	}
	s = iset_new(x, n);
	memcpy(s->v, pairs, 2 * n * sizeof(__u32));
	*mo = (struct pred_memo){ pred, key, nkeys, s };
	return s;
}

static void constrain(struct cctx *x, struct unit *u, int f, struct iset *s)
{
	u->rs[f] = u->rs[f] ? iset_and(x, u->rs[f], s) : s;
}

/* ---------------------------------------------------------------- prefixes */

static __u32 intern(struct cctx *x);
static void cur_clear(struct cctx *x);
static inline void cur_set(struct cctx *x, unsigned int s);
static inline void cur_clr(struct cctx *x, unsigned int s);

static int lpm_push4(struct cctx *x, struct cp_lpm *l, __u32 key, __u32 addr, __u32 plen, __u32 v)
{
	if (l->n == l->cap) {
		size_t old = l->cap;

		l->cap = l->cap ? 2 * l->cap : 1024;
		l->e = xrealloc(l->e, l->cap * sizeof(*l->e));
		if (mem_add(x, (l->cap - old) * sizeof(*l->e)))
			return -1;
	}
	l->e[l->n++] = (struct cp_lpm_entry){ .key = key, .plen = (__u8)plen, .addr = htonl(addr),
					      .value = v };
	return 0;
}

static int lpm_push6(struct cctx *x, struct cp_lpm *l, __u32 key, unsigned __int128 addr,
		     __u32 plen, __u32 v)
{
	struct cp_lpm_entry6 *e;

	if (l->n == l->cap) {
		size_t old = l->cap;

		l->cap = l->cap ? 2 * l->cap : 1024;
		l->e6 = xrealloc(l->e6, l->cap * sizeof(*l->e6));
		if (mem_add(x, (l->cap - old) * sizeof(*l->e6)))
			return -1;
	}
	e = &l->e6[l->n++];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->plen = (__u8)plen;
	e->value = v;
	ipt_be128_put(e->addr, addr);
	return 0;
}

static unsigned int ctz128(unsigned __int128 a)
{
	__u64 lo = (__u64)a;

	return lo ? (unsigned int)__builtin_ctzll(lo) : 64 + (unsigned int)__builtin_ctzll((__u64)(a >> 64));
}

static unsigned int popcount128(unsigned __int128 a)
{
	return (unsigned int)(__builtin_popcountll((__u64)a) + __builtin_popcountll((__u64)(a >> 64)));
}

/* IPv4: 32-bit addresses */
#define AW 32
#define AT __u32
#define PFX struct pfx
#define APFX(a) ((a)->p)
#define SUF(n) n##4
#define CTZ(a) ((unsigned int)__builtin_ctz(a))
#define POPCOUNT(a) ((unsigned int)__builtin_popcount(a))
#include "compile_addr.h"
#undef AW
#undef AT
#undef PFX
#undef APFX
#undef SUF
#undef CTZ
#undef POPCOUNT

/* IPv6: 128-bit addresses */
#define AW 128
#define AT unsigned __int128
#define PFX struct pfx6
#define APFX(a) ((a)->p6)
#define SUF(n) n##6
#define CTZ(a) ctz128(a)
#define POPCOUNT(a) popcount128(a)
#include "compile_addr.h"
#undef AW
#undef AT
#undef PFX
#undef APFX
#undef SUF
#undef CTZ
#undef POPCOUNT

/* [lo, hi] (host order) as the minimal list of prefixes. */
static void atom_from_range(struct cctx *x, __u32 lo, __u32 hi, bool neg, struct atom *a)
{
	struct pfx tmp[64];
	unsigned int n = 0;

	a->neg = neg;
	if (lo <= hi) {
		__u64 cur = lo, end = (__u64)hi + 1;

		while (cur < end) {
			unsigned int size = cur ? __builtin_ctz((__u32)cur) : 32;

			while (size && cur + ((__u64)1 << size) > end)
				size--;
			tmp[n++] = (struct pfx){ .addr = (__u32)cur, .plen = 32 - size };
			cur += (__u64)1 << size;
		}
	}
	a->n = n;
	a->p = arena_alloc(&x->ar, (n ? n : 1) * sizeof(struct pfx));
	memcpy(a->p, tmp, n * sizeof(struct pfx));
}

/* The same for IPv6: [lo, hi] as at most 2 * 128 prefixes. A block at cur is
 * aligned to its size, so cur + size - 1 never overflows. */
static void atom_from_range6(struct cctx *x, unsigned __int128 lo, unsigned __int128 hi, bool neg,
			     struct atom *a)
{
	struct pfx6 tmp[2 * 128];
	unsigned int n = 0;

	a->neg = neg;
	a->ip = false;
	if (lo <= hi) {
		unsigned __int128 cur = lo, last;

		for (;;) {
			unsigned int size = cur ? ctz128(cur) : 128;

			while (size == 128 ? hi != ~(unsigned __int128)0 :
			       size && cur + (((unsigned __int128)1 << size) - 1) > hi)
				size--;
			tmp[n++] = (struct pfx6){ .addr = cur, .plen = 128 - size };
			if (size == 128)
				break;
			last = cur + (((unsigned __int128)1 << size) - 1);
			if (last >= hi)
				break;
			cur = last + 1;
		}
	}
	a->n = n;
	a->p6 = arena_alloc(&x->ar, (n ? n : 1) * sizeof(struct pfx6));
	memcpy(a->p6, tmp, n * sizeof(struct pfx6));
}

/* ---------------------------------------------------------------- units */

static bool ext_is(const struct ipt_match *m, const char *name)
{
	return m->ext && !strcmp(m->ext->name, name);
}

struct flags_pred {
	__u8 mask, cmp;
	bool inv;
};

static bool tcpflags_pred(unsigned int k, const void *ctx)
{
	const struct flags_pred *p = ctx;

	if (k >= 256)
		return false;
	return (((k & p->mask) == p->cmp) ^ p->inv);
}

struct proto_pred {
	__u16 proto;
	bool inv;
};

static bool proto_pred(unsigned int k, const void *ctx)
{
	const struct proto_pred *p = ctx;

	/* ip_packet_match(): proto 0 = any, then FWINV(proto != p, IPT_INV_PROTO) */
	return !(p->proto && ((k != p->proto) ^ p->inv));
}

/* The ctstate key of a packet (enum bpfipt_ct_state) and xt_conntrack's state
 * bit for it: a tracked packet's bit(ctinfo); SNAT/DNAT never (no NAT here). */
static const __u16 ctstate_bit[BPFIPT_CT_MAX] = {
	[BPFIPT_CT_INVALID] = XT_CONNTRACK_STATE_INVALID,
	[BPFIPT_CT_NEW] = XT_CONNTRACK_STATE_BIT(IP_CT_NEW),
	[BPFIPT_CT_ESTABLISHED] = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED),
	[BPFIPT_CT_RELATED] = XT_CONNTRACK_STATE_BIT(IP_CT_RELATED),
	[BPFIPT_CT_UNTRACKED] = XT_CONNTRACK_STATE_UNTRACKED,
};

struct ctstate_pred {
	__u16 mask;
	bool inv;
};

static bool ctstate_pred(unsigned int k, const void *ctx)
{
	const struct ctstate_pred *p = ctx;
	__u16 bit = k < BPFIPT_CT_MAX ? ctstate_bit[k] : 0;

	return !!(p->mask & bit) ^ p->inv;
}

/* The options of -m conntrack the data plane checks on a candidate slot. */
static void ct_extra(struct bpfipt_extra *e, const struct ipt_conntrack_info *d,
		     const struct ipt_conntrack6_info *d6)
{
	const __u16 *ports[4] = { d->origsrc_port, d->origdst_port, d->replsrc_port,
				  d->repldst_port };

	e->ct_flags = d->match_flags;
	e->ct_inv = d->invert_flags;
	e->ct_status = d->status_mask;
	e->ct_proto = (__u8)d->l4proto;
	e->ct_addr[0][0] = d->origsrc_addr;
	e->ct_mask[0][0] = d->origsrc_mask;
	e->ct_addr[1][0] = d->origdst_addr;
	e->ct_mask[1][0] = d->origdst_mask;
	e->ct_addr[2][0] = d->replsrc_addr;
	e->ct_mask[2][0] = d->replsrc_mask;
	e->ct_addr[3][0] = d->repldst_addr;
	e->ct_mask[3][0] = d->repldst_mask;
	/* an IPv6 table: the 16-byte addresses follow the payload (IPT_CT_* is the
	 * order of ct_addr) */
	for (int i = 0; d6 && i < IPT_CT_NADDR; i++) {
		memcpy(e->ct_addr[i], d6->addr[i][0].b, sizeof(e->ct_addr[i]));
		memcpy(e->ct_mask[i], d6->addr[i][1].b, sizeof(e->ct_mask[i]));
	}
	for (int i = 0; i < 4; i++) {
		e->ct_port[i][0] = ports[i][0];
		e->ct_port[i][1] = ports[i][1];
	}
	e->ct_expire[0] = d->expires[0];
	e->ct_expire[1] = d->expires[1];
}

struct frag_pred {
	bool frag, inv;
};

static bool frag_pred(unsigned int k, const void *ctx)
{
	const struct frag_pred *p = ctx;

	/* FWINV((flags & IPT_F_FRAG) && !isfrag, IPT_INV_FRAG) fails the rule */
	return !((p->frag && !k) ^ p->inv);
}

/* Build the constraints of rule r (chain ci) into u. skip_addr[i]: do not take the
 * IP part's src (0) / dst (1): a group provides it. */
static int build_unit(struct cctx *x, unsigned int ci, const struct ipt_rule *r,
		      const bool skip_addr[2], struct unit *u)
{
	struct atom atoms[2][MAX_ATOMS];
	unsigned int na[2] = { 0, 0 };
	struct bpfipt_extra e;
	bool has_extra = false;
	const struct ipt_ip *ip = &r->ip;

	memset(&e, 0, sizeof(e));
	u->rule = r;
	u->nrules = 1;
	u->target = -1;
	u->extra = BPFIPT_NO_EXTRA;
	u->group = 0;

	/* action */
	switch (r->tkind) {
	case IPT_T_NONE:
		u->kind = BPFIPT_S_CONTINUE;
		break;
	case IPT_T_VERDICT:
		if (r->verdict == IPT_V_RETURN) {
			u->kind = BPFIPT_S_RETURN;
		} else {
			u->kind = BPFIPT_S_VERDICT;
			u->verdict = r->verdict == IPT_V_ACCEPT ? BPFIPT_V_ACCEPT : BPFIPT_V_DROP;
		}
		break;
	case IPT_T_JUMP:
	case IPT_T_GOTO:
		u->kind = r->tkind == IPT_T_JUMP ? BPFIPT_S_JUMP : BPFIPT_S_GOTO;
		u->target = ipt_chain_index(x->t, r->chain);
		if (u->target < 0 || x->t->chains[u->target]->builtin)
			return rule_error(x, ci, r, "jump to a missing or builtin chain");
		break;
	case IPT_T_EXT:
		if (ext_is(&r->target, "REJECT")) {
			const struct reject_data *d = r->target.data;

			u->kind = BPFIPT_S_VERDICT;
			u->verdict = BPFIPT_V_REJECT;
			/* bpfipt.h: an IPv6 table's codes are BPFIPT_REJ6 + ip6t_reject_with */
			u->reject_with = (__u8)(x->v6 ? BPFIPT_REJ6 + d->with : d->with);
		} else if (ext_is(&r->target, "LOG")) {
			const struct log_data *d = r->target.data;

			u->kind = BPFIPT_S_CONTINUE;
			u->log = 1;
			/* the event's level, flags and prefix (dataplane/log.bpf.h) */
			e.log_level = d->level;
			e.log_flags = d->logflags;
			memcpy(e.log_prefix, d->prefix, sizeof(e.log_prefix) - 1);
			has_extra = true;
		} else if (ext_is(&r->target, "NFLOG")) {
			u->kind = BPFIPT_S_CONTINUE;
			u->log = 2;
		} else if (ext_is(&r->target, "TCPMSS")) {
			u->kind = BPFIPT_S_CONTINUE;
		} else {
			return rule_error(x, ci, r, "unknown target");
		}
		break;
	default:
		return rule_error(x, ci, r, "unknown target kind");
	}

	/* IP part: addresses */
	for (int i = 0; i < 2; i++) {
		__u32 a = ntohl(i ? ip->dst.v4 : ip->src.v4), m = ntohl(i ? ip->dmsk.v4 : ip->smsk.v4);
		bool inv = ip->invflags & (i ? IPT_INV_DSTIP : IPT_INV_SRCIP);

		if (skip_addr[i])
			continue;
		if (x->v6) {
			unsigned __int128 a6 = ipt_be128(i ? ip->dst.b : ip->src.b);
			unsigned __int128 m6 = ipt_be128(i ? ip->dmsk.b : ip->smsk.b);

			if (!m6 && !a6 && !inv)
				continue;	/* ::/0: everything */
			if (atom_from_mask6(x, a6, m6, inv, &atoms[i][na[i]]))
				return rule_error(x, ci, r, "a non-contiguous address mask with "
						  "more than 16 holes");
			atoms[i][na[i]++].ip = true;
			continue;
		}
		if (!m && !a && !inv)
			continue;	/* 0/0: everything */
		if (atom_from_mask4(x, a, m, inv, &atoms[i][na[i]]))
			return rule_error(x, ci, r, "a non-contiguous address mask with more than "
					  "16 holes");
		na[i]++;
	}
	/* interfaces */
	for (int i = 0; i < 2; i++) {
		const char *name = i ? ip->outiface : ip->iniface;
		bool inv = ip->invflags & (i ? IPT_INV_VIA_OUT : IPT_INV_VIA_IN);

		memset(u->ifc[i].pat, 0, sizeof(u->ifc[i].pat));
		memcpy(u->ifc[i].pat, name, IPT_IFNAMSIZ);
		u->ifc[i].inv = inv;
		u->ifc[i].con = inv || name[0];
	}
	/* protocol, fragments. IPv6 (ip6_packet_match()): -p sets IP6T_F_PROTO (the
	 * bit of IPv4's IPT_F_FRAG); without it the protocol is not tested; with it
	 * a packet whose extension-header chain is cut drops at this rule
	 * (BPFIPT_X_PROTO6). ip6tables has no -f. */
	if (x->v6) {
		if (ip->flags & IP6T_F_PROTO) {
			u->xflags |= BPFIPT_X_PROTO6;
			if (ip->proto) {
				struct proto_pred p = { ip->proto, ip->invflags & IPT_INV_PROTO };

				constrain(x, u, RF_PROTO, iset_pred(x, 256, proto_pred, &p,
								    p.proto | p.inv << 16));
			}
		}
	} else if (ip->proto) {
		struct proto_pred p = { ip->proto, ip->invflags & IPT_INV_PROTO };

		constrain(x, u, RF_PROTO, iset_pred(x, 256, proto_pred, &p, p.proto | p.inv << 16));
	}
	if (!x->v6 && ((ip->flags & IPT_F_FRAG) || (ip->invflags & IPT_INV_FRAG))) {
		struct frag_pred p = { ip->flags & IPT_F_FRAG, ip->invflags & IPT_INV_FRAG };

		constrain(x, u, RF_FRAG, iset_pred(x, 2, frag_pred, &p, p.frag | p.inv << 1));
	}

	/* matches */
	for (unsigned int mi = 0; mi < r->nmatches; mi++) {
		const struct ipt_match *m = &r->matches[mi];

		if (ext_is(m, "tcp")) {
			const struct ipt_tcp_info *d = m->data;
			struct flags_pred fp = { d->flg_mask, d->flg_cmp,
						 d->invflags & IPT_TCP_INV_FLAGS };

			if (d->option || (d->invflags & IPT_TCP_INV_OPTION))
				return rule_error(x, ci, r, "tcp --tcp-option is not supported yet");
			constrain(x, u, RF_SPORT, iset_range(x, d->spts[0], d->spts[1],
							      d->invflags & IPT_TCP_INV_SRCPT, 65535));
			constrain(x, u, RF_DPORT, iset_range(x, d->dpts[0], d->dpts[1],
							      d->invflags & IPT_TCP_INV_DSTPT, 65535));
			constrain(x, u, RF_TCPFLAGS, iset_pred(x, 257, tcpflags_pred, &fp,
								fp.mask | fp.cmp << 8 | fp.inv << 16));
		} else if (ext_is(m, "udp")) {
			const struct ipt_udp_info *d = m->data;

			constrain(x, u, RF_SPORT, iset_range(x, d->spts[0], d->spts[1],
							      d->invflags & IPT_UDP_INV_SRCPT, 65535));
			constrain(x, u, RF_DPORT, iset_range(x, d->dpts[0], d->dpts[1],
							      d->invflags & IPT_UDP_INV_DSTPT, 65535));
		} else if (ext_is(m, "icmp") || ext_is(m, "icmp6")) {
			/* icmp6 (ip6t_icmp): the same layout; type 0xFF is any for icmp
			 * only (ip6t's icmp6_type_code_match has no "any") */
			const struct ipt_icmp_info *d = m->data;
			struct iset *s;

			if (d->type == 0xFF && ext_is(m, "icmp"))
				s = iset_range(x, 0, 65535, d->invert, 65535);
			else if (d->code[0] > d->code[1])
				s = iset_range(x, 1, 0, d->invert, 65535);
			else
				s = iset_range(x, (__u32)d->type << 8 | d->code[0],
					       (__u32)d->type << 8 | d->code[1], d->invert, 65535);
			constrain(x, u, RF_ICMP, s);
		} else if (ext_is(m, "multiport")) {
			const struct ipt_multiport_info *d = m->data;
			__u32 pairs[2 * IPT_MULTI_PORTS];
			unsigned int n = 0;

			for (unsigned int i = 0; i < d->count && i < IPT_MULTI_PORTS; i++) {
				__u16 s = d->ports[i], en = s;

				if (d->pflags[i] && i + 1 < IPT_MULTI_PORTS)
					en = d->ports[++i];
				pairs[2 * n] = s;
				pairs[2 * n + 1] = en;
				n++;
			}
			if (d->flags == IPT_MPORT_EITHER) {
				if (u->xflags & BPFIPT_X_PORTS_EITHER)
					return rule_error(x, ci, r, "more than one multiport --ports");
				/* the header must be there; which port matches: extra check */
				constrain(x, u, RF_SPORT, iset_range(x, 0, 65535, false, 65535));
				constrain(x, u, RF_DPORT, iset_range(x, 0, 65535, false, 65535));
				u->xflags |= BPFIPT_X_PORTS_EITHER;
				e.ports_invert = d->invert;
				e.nports = (__u8)n;
				for (unsigned int i = 0; i < n; i++) {
					e.ports[2 * i] = (__u16)pairs[2 * i];
					e.ports[2 * i + 1] = (__u16)pairs[2 * i + 1];
				}
				has_extra = true;
			} else {
				constrain(x, u, d->flags == IPT_MPORT_SOURCE ? RF_SPORT : RF_DPORT,
					  iset_from_pairs(x, pairs, n, d->invert, 65535));
			}
		} else if (ext_is(m, "state")) {
			const struct ipt_state_info *d = m->data;
			struct ctstate_pred sp = { d->state_mask, d->invert };

			constrain(x, u, RF_CTSTATE, iset_pred(x, 32, ctstate_pred, &sp,
								   sp.mask | sp.inv << 16));
		} else if (ext_is(m, "conntrack")) {
			const struct ipt_conntrack_info *d = m->data;
			__u16 rest = d->match_flags & ~XT_CONNTRACK_STATE;

			if (d->match_flags & XT_CONNTRACK_STATE) {
				struct ctstate_pred sp = { d->state_mask,
							   !!(d->invert_flags & XT_CONNTRACK_STATE) };

				constrain(x, u, RF_CTSTATE, iset_pred(x, 32, ctstate_pred, &sp,
								   sp.mask | sp.inv << 16));
			}
			if (rest) {
				if (u->xflags & BPFIPT_X_CT)
					return rule_error(x, ci, r, "more than one -m conntrack with "
							  "options other than --ctstate");
				u->xflags |= BPFIPT_X_CT;
				ct_extra(&e, d, x->v6 ? m->data : NULL);
				has_extra = true;
			}
		} else if (ext_is(m, "iprange")) {
			const struct iprange_data *d = m->data;

			if (x->v6) {
				/* an IPv6 table's payload: the flags, then 16-byte bounds */
				const struct iprange6_data *d6 = m->data;

				if (d->flags & IPR_SRC)
					atom_from_range6(x, ipt_be128(d6->src_min.b),
							 ipt_be128(d6->src_max.b),
							 d->flags & IPR_SRC_INV, &atoms[0][na[0]++]);
				if (d->flags & IPR_DST)
					atom_from_range6(x, ipt_be128(d6->dst_min.b),
							 ipt_be128(d6->dst_max.b),
							 d->flags & IPR_DST_INV, &atoms[1][na[1]++]);
				continue;
			}
			if (d->flags & IPR_SRC)
				atom_from_range(x, d->src_min, d->src_max, d->flags & IPR_SRC_INV,
						&atoms[0][na[0]++]);
			if (d->flags & IPR_DST)
				atom_from_range(x, d->dst_min, d->dst_max, d->flags & IPR_DST_INV,
						&atoms[1][na[1]++]);
		} else if (ext_is(m, "length")) {
			const struct length_data *d = m->data;

			constrain(x, u, RF_LEN, iset_range(x, d->min, d->max, d->invert, 65535));
		} else if (ext_is(m, "mark")) {
			const struct mark_data *d = m->data;

			if (u->xflags & BPFIPT_X_MARK)
				return rule_error(x, ci, r, "more than one -m mark");
			u->xflags |= BPFIPT_X_MARK;
			e.mark_value = d->mark;
			e.mark_mask = d->mask;
			e.mark_invert = d->invert;
			has_extra = true;
		} else if (ext_is(m, "mac")) {
			const struct mac_data *d = m->data;

			if (u->xflags & BPFIPT_X_MAC)
				return rule_error(x, ci, r, "more than one -m mac");
			u->xflags |= BPFIPT_X_MAC;
			memcpy(e.mac, d->addr, 6);
			e.mac_invert = d->invert;
			has_extra = true;
		} else if (ext_is(m, "limit")) {
			const struct limit_data *d = m->data;

			if (u->xflags & BPFIPT_X_LIMIT)
				return rule_error(x, ci, r, "more than one -m limit");
			u->xflags |= BPFIPT_X_LIMIT;
			/* xt_limit: one credit per packet costs avg/LIMIT_SCALE s, the bucket
			 * holds burst of them; here 1 credit = 1 ns. */
			e.limit_cost = (__u64)d->avg * (1000000000ull / LIMIT_SCALE);
			e.limit_credit_cap = e.limit_cost * d->burst;
			has_extra = true;
		} else if (ext_is(m, "addrtype")) {
			const struct addrtype_data *d = m->data;

			if (x->v6)
				return rule_error(x, ci, r, "addrtype is not supported for IPv6");
			if (u->xflags & BPFIPT_X_ADDRTYPE)
				return rule_error(x, ci, r, "more than one -m addrtype");
			u->xflags |= BPFIPT_X_ADDRTYPE;
			e.at_src = d->source;
			e.at_dst = d->dest;
			e.at_flags = (__u8)d->flags;	/* BPFIPT_AT_* are the same bits */
			has_extra = true;
		} else if (ext_is(m, "recent")) {
			const struct recent_data *d = m->data;
			int li;

			if (x->v6)
				return rule_error(x, ci, r, "recent is not supported for IPv6");
			if (u->xflags & BPFIPT_X_RECENT)
				return rule_error(x, ci, r, "more than one -m recent");
			if (d->hit_count > CP_RECENT_MAX_HITCOUNT) {
				char what[96];

				snprintf(what, sizeof(what), "recent: --hitcount %u: at most %u "
					 "sightings per address are kept", d->hit_count,
					 CP_RECENT_MAX_HITCOUNT);
				return rule_error(x, ci, r, what);
			}
			li = recent_list(x, d);
			if (li < 0)
				return -1;
			u->xflags |= BPFIPT_X_RECENT;
			e.rc_table = (__u32)li;
			e.rc_seconds = d->seconds;
			e.rc_hitcount = d->hit_count;
			e.rc_flags = d->check_set;
			e.rc_invert = d->invert;
			e.rc_side = d->side;
			has_extra = true;
		} else if (ext_is(m, "comment")) {
			/* nothing to match */
		} else {
			char what[128];

			snprintf(what, sizeof(what), "match `%s' is not supported",
				 m->ext ? m->ext->name : "?");
			return rule_error(x, ci, r, what);
		}
		if (na[0] > MAX_ATOMS - 1 || na[1] > MAX_ATOMS - 1)
			return rule_error(x, ci, r, "too many address constraints");
	}

	for (int i = 0; i < 2; i++) {
		u->natoms[i] = na[i];
		u->atoms[i] = NULL;
		if (na[i]) {
			u->atoms[i] = arena_alloc(&x->ar, na[i] * sizeof(struct atom));
			memcpy(u->atoms[i], atoms[i], na[i] * sizeof(struct atom));
		}
	}
	if (has_extra) {
		struct cp_compiled *cc = x->cc;

		if (cc->nextras == x->extras_cap) {
			x->extras_cap = x->extras_cap ? 2 * x->extras_cap : 64;
			cc->extras = xrealloc(cc->extras, x->extras_cap * sizeof(*cc->extras));
			if (mem_add(x, x->extras_cap / 2 * sizeof(*cc->extras)))
				return -1;
		}
		u->extra = cc->nextras;
		cc->extras[cc->nextras++] = e;
	}
	return 0;
}

_Static_assert((int)ADDRTYPE_INVERT_SOURCE == (int)BPFIPT_AT_INVERT_SRC &&
	       (int)ADDRTYPE_INVERT_DEST == (int)BPFIPT_AT_INVERT_DST &&
	       (int)ADDRTYPE_LIMIT_IFACE_IN == (int)BPFIPT_AT_LIMIT_IN &&
	       (int)ADDRTYPE_LIMIT_IFACE_OUT == (int)BPFIPT_AT_LIMIT_OUT,
	       "addrtype flags pass as they are");
_Static_assert(sizeof(((struct bpfipt_extra *)0)->log_prefix) >= LOG_PREFIX_SIZE,
	       "a LOG prefix fits the data plane's");

/* ---- groups */

static bool has_limit(const struct ipt_rule *r)
{
	for (unsigned int i = 0; i < r->nmatches; i++)
		if (ext_is(&r->matches[i], "limit") || ext_is(&r->matches[i], "recent"))
			return true;
	return false;
}

/* Does a matching rule end the scan of its chain (so only the first rule of a run
 * that matches a packet can act)? ACCEPT, DROP, RETURN, REJECT, GOTO. limit is
 * stateful per rule, recent per list: never grouped. */
static bool groupable(const struct ipt_rule *r)
{
	if (r->tkind == IPT_T_VERDICT || r->tkind == IPT_T_GOTO)
		return !has_limit(r);
	if (r->tkind == IPT_T_EXT && ext_is(&r->target, "REJECT"))
		return !has_limit(r);
	return false;
}

/* A rule after which a matching packet goes on along the chain (no target, LOG,
 * NFLOG, TCPMSS) or comes back to it (-j CHAIN). A run of them is one group
 * only when no packet matches two of its rules: the group acts for the one rule
 * the packet matches, then the walk goes on after the run (disjoint_run()). */
static bool passable(const struct ipt_rule *r)
{
	if (has_limit(r))
		return false;
	if (r->tkind == IPT_T_NONE || r->tkind == IPT_T_JUMP)
		return true;
	return r->tkind == IPT_T_EXT && (ext_is(&r->target, "LOG") ||
					 ext_is(&r->target, "NFLOG") ||
					 ext_is(&r->target, "TCPMSS"));
}

/* 1...10...0: a prefix mask */
static bool mask_contiguous(__u32 m)
{
	return (~m & (~m + 1)) == 0;
}

static bool addr_groupable(const struct ipt_rule *r, int which, bool v6)
{
	__u32 a = ntohl(which ? r->ip.dst.v4 : r->ip.src.v4), m = ntohl(which ? r->ip.dmsk.v4 : r->ip.smsk.v4);

	if (r->ip.invflags & (which ? IPT_INV_DSTIP : IPT_INV_SRCIP))
		return false;
	if (v6) {
		unsigned __int128 a6 = ipt_be128(which ? r->ip.dst.b : r->ip.src.b);
		unsigned __int128 m6 = ipt_be128(which ? r->ip.dmsk.b : r->ip.smsk.b);

		return (~m6 & (~m6 + 1)) == 0 && !(a6 & ~m6);
	}
	return mask_contiguous(m) && !(a & ~m);
}

/* A comment does not change what a rule matches: the rules of a run may differ
 * in theirs (kube-proxy names each service's rule). x and y, shallow copies of
 * rules compared, take match arrays mx and my where y's comments are x's. */
static void same_comments(struct ipt_rule *x, struct ipt_rule *y, struct ipt_match *mx,
			  struct ipt_match *my)
{
	unsigned int i, n = x->nmatches;

	if (n != y->nmatches || n > IPT_MAX_MATCHES)
		return;
	for (i = 0; i < n && !ext_is(&y->matches[i], "comment"); i++)
		;
	if (i == n)
		return;
	if (x->matches != mx)
		memcpy(mx, x->matches, n * sizeof(*mx));
	if (y->matches != my)
		memcpy(my, y->matches, n * sizeof(*my));
	x->matches = mx;
	y->matches = my;
	for (; i < n; i++)
		if (mx[i].ext == my[i].ext && ext_is(&my[i], "comment"))
			my[i].data = mx[i].data;
}

/* Equal but for the address that varies along a run (which: 1 = -d, 0 = -s),
 * the comments and, with anychain, the chain a -j or -g names (a verdict map). */
static bool rule_eq_except(const struct ipt_rule *a, const struct ipt_rule *b, int which,
			   bool anychain)
{
	struct ipt_rule x = *a, y = *b;	/* shallow: only compared */
	struct ipt_match mx[IPT_MAX_MATCHES], my[IPT_MAX_MATCHES];

	if (which) {
		memset(&x.ip.dst, 0, sizeof(x.ip.dst));
		memset(&y.ip.dst, 0, sizeof(y.ip.dst));
		memset(&x.ip.dmsk, 0, sizeof(x.ip.dmsk));
		memset(&y.ip.dmsk, 0, sizeof(y.ip.dmsk));
	} else {
		memset(&x.ip.src, 0, sizeof(x.ip.src));
		memset(&y.ip.src, 0, sizeof(y.ip.src));
		memset(&x.ip.smsk, 0, sizeof(x.ip.smsk));
		memset(&y.ip.smsk, 0, sizeof(y.ip.smsk));
	}
	if (anychain)
		memcpy(y.chain, x.chain, sizeof(y.chain));
	same_comments(&x, &y, mx, my);
	return ipt_rule_equal(&x, &y);
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *p = a, *q = b;

	/* by start, the wider first: a prefix comes before those it holds */
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	if (p->hi != q->hi)
		return p->hi > q->hi ? -1 : 1;
	return p->k < q->k ? -1 : p->k > q->k;
}

/* The length of the longest beginning of the n rules from i whose addresses on
 * field w are pairwise disjoint: the first rule that overlaps an earlier one
 * ends it. Prefixes nest or are disjoint: sorted by start, each one overlaps
 * exactly the prefixes on the stack of those that still hold its start. */
static unsigned int overlap_cut(struct cctx *x, const struct ipt_chain *ch, unsigned int i,
				unsigned int n, int w)
{
	struct span *sp = x->spans;
	unsigned int cut = n, top = 0;

	for (unsigned int k = 0; k < n; k++) {
		const struct ipt_rule *r = ch->rules[i + k];
		unsigned __int128 a, m;	/* IPv4: m is the host part */

		if (x->v6) {
			a = ipt_be128(w ? r->ip.dst.b : r->ip.src.b);
			m = ipt_be128(w ? r->ip.dmsk.b : r->ip.smsk.b);
		} else {
			a = ntohl(w ? r->ip.dst.v4 : r->ip.src.v4);
			m = ~(__u32)ntohl(w ? r->ip.dmsk.v4 : r->ip.smsk.v4);
		}
		sp[k].lo = a;
		sp[k].hi = a | (x->v6 ? ~m : m);
		sp[k].k = k;
	}
	xqsort(sp, n, sizeof(*sp), cmp_span);
	/* the stack: entries 0 .. top - 1 of x->stk, the open prefixes */
	for (unsigned int k = 0; k < n; k++) {
		const struct span *q = &sp[k];
		unsigned int first = q->k;

		while (top && sp[x->stk[top - 1].at].hi < q->lo)
			top--;
		if (top) {
			unsigned int f = x->stk[top - 1].first, later = q->k > f ? q->k : f;

			if (later < cut)
				cut = later;
			if (f < first)
				first = f;
		}
		x->stk[top].at = k;
		x->stk[top].first = first;
		top++;
	}
	return cut;
}

/* The run from rule i of rules that may let a packet go on (passable()):
 * alike but for the address on field w (and the chain, for -j/-g) while
 * their addresses are disjoint (overlap_cut()). Read in windows that double,
 * so that a run cut often costs what its pieces do, not what the rest of the
 * chain does each time. */
static unsigned int disjoint_run(struct cctx *x, const struct ipt_chain *ch, unsigned int i,
				 int w, bool chains)
{
	const struct ipt_rule *r = ch->rules[i];
	unsigned int end = i + 1;

	for (unsigned int lim = x->group_min > 8 ? x->group_min : 8;; lim *= 2) {
		unsigned int n, cut;

		while (end < ch->nrules && end - i < lim && addr_groupable(ch->rules[end], w, x->v6) &&
		       rule_eq_except(r, ch->rules[end], w, chains))
			end++;
		n = end - i;
		if (n < x->group_min)
			return n;
		if (n > x->nspans) {
			if (mem_add(x, (lim - x->nspans) * (sizeof(*x->spans) + sizeof(*x->stk))))
				return 1;
			free(x->spans);
			free(x->stk);
			x->nspans = lim;
			x->spans = xmalloc(x->nspans * sizeof(*x->spans));
			x->stk = xmalloc(x->nspans * sizeof(*x->stk));
		}
		cut = overlap_cut(x, ch, i, n, w);
		if (cut < n || n < lim)
			return cut;
	}
}

/* Length of the run starting at rule i, and which address varies. A run of
 * -j CHAIN or -g CHAIN rules may name different chains (a verdict map). */
static unsigned int run_length(struct cctx *x, const struct ipt_chain *ch, unsigned int i,
			       int *which)
{
	const struct ipt_rule *r = ch->rules[i];
	bool ends = groupable(r), chains = r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO;
	unsigned int best = 1;

	*which = 0;
	if (!ends && !passable(r))
		return 1;
	for (int w = 0; w < 2; w++) {
		unsigned int j = i, n;

		if (!addr_groupable(r, w, x->v6))
			continue;
		if (!ends) {
			n = disjoint_run(x, ch, i, w, chains);
		} else {
			while (j + 1 < ch->nrules && addr_groupable(ch->rules[j + 1], w, x->v6) &&
			       rule_eq_except(r, ch->rules[j + 1], w, chains))
				j++;
			n = j - i + 1;
		}
		if (n > best) {
			best = n;
			*which = w;
		}
	}
	return best;
}

/* A first address constraint on field w of u (built without its IP part): a
 * run's len prefixes, to be filled in; NULL when u has too many. */
static struct atom *run_atom(struct cctx *x, unsigned int ci, const struct ipt_rule *r,
			     struct unit *u, int w, unsigned int len)
{
	struct atom *at;

	if (u->natoms[w] + 1 > MAX_ATOMS) {
		rule_error(x, ci, r, "too many address constraints");
		return NULL;
	}
	at = arena_alloc(&x->ar, (u->natoms[w] + 1) * sizeof(*at));
	if (u->natoms[w])
		memcpy(at + 1, u->atoms[w], u->natoms[w] * sizeof(*at));
	at[0].neg = false;
	at[0].ip = true;
	at[0].n = len;
	return at;
}

/* A run of -j or -g rules that name different chains: each rule's chain. */
static int vmap_targets(struct cctx *x, unsigned int ci, unsigned int i, unsigned int len,
			struct unit *u)
{
	const struct ipt_chain *ch = x->t->chains[ci];
	unsigned int k = 1;

	if (u->kind != BPFIPT_S_JUMP && u->kind != BPFIPT_S_GOTO)
		return 0;
	while (k < len && !strcmp(ch->rules[i + k]->chain, ch->rules[i]->chain))
		k++;
	if (k == len)
		return 0;
	u->mtarget = arena_alloc(&x->ar, len * sizeof(*u->mtarget));
	for (k = 0; k < len; k++) {
		const struct ipt_rule *r = ch->rules[i + k];

		u->mtarget[k] = ipt_chain_index(x->t, r->chain);
		if (u->mtarget[k] < 0 || x->t->chains[u->mtarget[k]]->builtin)
			return rule_error(x, ci, r, "jump to a missing or builtin chain");
	}
	u->xflags |= BPFIPT_X_VMAP;
	return 0;
}

static int build_group(struct cctx *x, unsigned int ci, unsigned int i, unsigned int len,
		       int which, struct unit *u)
{
	const struct ipt_chain *ch = x->t->chains[ci];
	bool skip[2] = { which == 0, which == 1 };
	struct atom *at;

	if (build_unit(x, ci, ch->rules[i], skip, u))
		return -1;
	at = run_atom(x, ci, ch->rules[i], u, which, len);
	if (!at)
		return -1;
	if (x->v6) {
		at[0].p6 = arena_alloc(&x->ar, len * sizeof(struct pfx6));
		for (unsigned int k = 0; k < len; k++) {
			const struct ipt_rule *r = ch->rules[i + k];
			unsigned __int128 m = ipt_be128(which ? r->ip.dmsk.b : r->ip.smsk.b);

			at[0].p6[k].addr = ipt_be128(which ? r->ip.dst.b : r->ip.src.b);
			at[0].p6[k].plen = m ? 128 - ctz128(m) : 0;
			at[0].p6[k].counter = x->rule_base[ci] + i + k;
		}
		sort_pfx6(at[0].p6, len);
		goto done;
	}
	at[0].p = arena_alloc(&x->ar, len * sizeof(struct pfx));
	for (unsigned int k = 0; k < len; k++) {
		const struct ipt_rule *r = ch->rules[i + k];
		__u32 m = ntohl(which ? r->ip.dmsk.v4 : r->ip.smsk.v4);

		at[0].p[k].addr = ntohl(which ? r->ip.dst.v4 : r->ip.src.v4);
		at[0].p[k].plen = m ? 32 - __builtin_ctz(m) : 0;
		at[0].p[k].counter = x->rule_base[ci] + i + k;
	}
	sort_pfx4(at[0].p, len);
done:
	u->atoms[which] = at;
	u->natoms[which]++;
	u->nrules = len;
	return vmap_targets(x, ci, i, len, u);
}

/* ---- tuple groups (bpfipt.h, "A tuple group"): IPv4 only */

/* What a rule's tuple is made of: prefix lengths, exact ports (BPFIPT_TP_*)
 * and the match that holds them. */
struct tshape {
	__u8 splen, dplen, ports;
	int pm;			/* index of the tcp/udp match, -1: none */
};

/* -m tcp and -m udp both begin with their port ranges */
struct ports_head {
	__u16 spts[2], dpts[2];
};
_Static_assert(offsetof(struct ipt_tcp_info, spts) == offsetof(struct ports_head, spts) &&
	       offsetof(struct ipt_tcp_info, dpts) == offsetof(struct ports_head, dpts) &&
	       offsetof(struct ipt_udp_info, spts) == offsetof(struct ports_head, spts) &&
	       offsetof(struct ipt_udp_info, dpts) == offsetof(struct ports_head, dpts),
	       "tcp and udp infos begin with their ports");

static __u8 plen_of(__be32 mask)
{
	__u32 m = ntohl(mask);

	return m ? (__u8)(32 - __builtin_ctz(m)) : 0;
}

static __u8 plen_of6(const __u8 mask[16])
{
	__u8 n = 0;

	for (int i = 0; i < 16; i++)
		n += (__u8)__builtin_popcount(mask[i]);
	return n;	/* a prefix mask (addr_groupable()) */
}

/* r's shape and key (without the group id); false when r cannot be in a tuple
 * group: a verdict that does not end the scan, an inverted or non-prefix
 * address, a second port match or a multiport one (its ports would be lost
 * with the run's union). */
static bool tuple_of(const struct ipt_rule *r, bool v6, struct tshape *sh,
		     struct bpfipt_tuple6_key *k)
{
	memset(sh, 0, sizeof(*sh));
	memset(k, 0, sizeof(*k));
	sh->pm = -1;
	if ((!groupable(r) && !passable(r)) || !addr_groupable(r, 0, v6) ||
	    !addr_groupable(r, 1, v6))
		return false;
	if (v6) {
		sh->splen = plen_of6(r->ip.smsk.b);
		sh->dplen = plen_of6(r->ip.dmsk.b);
		memcpy(k->src, r->ip.src.b, 16);
		memcpy(k->dst, r->ip.dst.b, 16);
	} else {
		sh->splen = plen_of(r->ip.smsk.v4);
		sh->dplen = plen_of(r->ip.dmsk.v4);
		k->src[0] = r->ip.src.v4;
		k->dst[0] = r->ip.dst.v4;
	}
	if (r->ip.proto && !(r->ip.invflags & IPT_INV_PROTO)) {
		sh->ports |= BPFIPT_TP_PROTO;
		k->proto = (__u8)r->ip.proto;
	}
	for (unsigned int i = 0; i < r->nmatches; i++) {
		const struct ipt_match *m = &r->matches[i];
		bool tcp = ext_is(m, "tcp");
		const struct ports_head *ph = m->data;
		__u8 inv, isrc, idst;

		if (ext_is(m, "multiport"))
			return false;
		if (!tcp && !ext_is(m, "udp"))
			continue;
		if (sh->pm >= 0)
			return false;
		sh->pm = (int)i;
		inv = tcp ? ((const struct ipt_tcp_info *)m->data)->invflags
			  : ((const struct ipt_udp_info *)m->data)->invflags;
		isrc = tcp ? IPT_TCP_INV_SRCPT : IPT_UDP_INV_SRCPT;
		idst = tcp ? IPT_TCP_INV_DSTPT : IPT_UDP_INV_DSTPT;
		if (!(inv & isrc) && ph->spts[0] == ph->spts[1]) {
			sh->ports |= BPFIPT_TP_SPORT;
			k->sport = ph->spts[0];
		}
		if (!(inv & idst) && ph->dpts[0] == ph->dpts[1]) {
			sh->ports |= BPFIPT_TP_DPORT;
			k->dport = ph->dpts[0];
		}
	}
	return sh->splen || sh->dplen || (sh->ports & (BPFIPT_TP_SPORT | BPFIPT_TP_DPORT));
}

/* a and b (of shape sh) are equal but for their keys. */
static bool tuple_eq(const struct ipt_rule *a, const struct ipt_rule *b, const struct tshape *sh,
		     bool anychain)
{
	struct ipt_rule x = *a, y = *b;		/* shallow: only compared */
	struct ipt_match mx[IPT_MAX_MATCHES], my[IPT_MAX_MATCHES];
	union { struct ipt_tcp_info t; struct ipt_udp_info u; } dx, dy;

	memset(&x.ip.src, 0, sizeof(x.ip.src));
	memset(&y.ip.src, 0, sizeof(y.ip.src));
	memset(&x.ip.dst, 0, sizeof(x.ip.dst));
	memset(&y.ip.dst, 0, sizeof(y.ip.dst));
	if (sh->pm >= 0) {
		const struct ipt_match *ma = &a->matches[sh->pm], *mb = &b->matches[sh->pm];
		struct ports_head *hx = (struct ports_head *)&dx, *hy = (struct ports_head *)&dy;

		if (a->nmatches != b->nmatches || a->nmatches > IPT_MAX_MATCHES ||
		    ma->ext != mb->ext || ma->ext->size > sizeof(dx))
			return false;
		memcpy(mx, a->matches, a->nmatches * sizeof(*mx));
		memcpy(my, b->matches, b->nmatches * sizeof(*my));
		memcpy(&dx, ma->data, ma->ext->size);
		memcpy(&dy, mb->data, mb->ext->size);
		if (sh->ports & BPFIPT_TP_SPORT)
			hx->spts[0] = hx->spts[1] = hy->spts[0] = hy->spts[1] = 0;
		if (sh->ports & BPFIPT_TP_DPORT)
			hx->dpts[0] = hx->dpts[1] = hy->dpts[0] = hy->dpts[1] = 0;
		mx[sh->pm].data = &dx;
		my[sh->pm].data = &dy;
		x.matches = mx;
		y.matches = my;
	}
	if (anychain)
		memcpy(y.chain, x.chain, sizeof(y.chain));
	same_comments(&x, &y, mx, my);
	return ipt_rule_equal(&x, &y);
}

static __u64 hash_mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0xff51afd7ed558ccdull;
	return h ^ h >> 32;
}

static __u64 hash_end(__u64 h)
{
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 29;
}

#define TUPLE_WORDS 6
_Static_assert(sizeof(struct cp_tuple) == 8 * TUPLE_WORDS, "a tuple is six words (tuples_finish)");

/* Sorted (cp_tuple_cmp), each key once: a rule of a run whose tuple an
 * earlier rule of the run has never judges a packet. */
static void tuples_finish(struct cp_compiled *cc)
{
	unsigned int m = 0;
	__u64 h;

	/* a list written in order (most are) is not sorted again */
	for (unsigned int i = 1; i < cc->ntuples; i++) {
		if (cp_tuple_cmp(&cc->tuples[i - 1], &cc->tuples[i]) > 0) {
			xqsort(cc->tuples, cc->ntuples, sizeof(*cc->tuples), cp_tuple_cmp);
			break;
		}
	}
	for (unsigned int i = 0; i < cc->ntuples; i++) {
		if (m && !cp_tuple_key_cmp(&cc->tuples[m - 1].k, &cc->tuples[i].k))
			continue;	/* sorted by offset after the key: the first rule's */
		cc->tuples[m++] = cc->tuples[i];
	}
	cc->ntuples = m;
	/* the digest of the hash's contents, key padding included (zero) */
	h = 0x9E3779B97F4A7C15ull ^ m;
	for (unsigned int i = 0; i < m; i++) {
		__u64 w[TUPLE_WORDS];

		memcpy(w, &cc->tuples[i], sizeof(w));
		for (int j = 0; j < TUPLE_WORDS; j++)
			h = hash_mix(h, w[j]);
	}
	h = hash_end(h);
	cc->tuple_sum = h ? h : 1;
}

/* Where key k is, or goes, in x->tseen: an open-addressing set of the current
 * run's keys (x->tkeys), an entry the key's index and the run's number above it
 * (an entry of an earlier run is free). */
static size_t tuple_pos(const struct cctx *x, const struct bpfipt_tuple6_key *k)
{
	__u64 w[TUPLE_WORDS] = { 0 }, h = 0;
	size_t i;

	memcpy(w, k, sizeof(*k));
	for (i = 0; i < TUPLE_WORDS; i++)
		h = hash_mix(h, w[i]);
	h = hash_end(h);
	for (i = h & (x->tscap - 1);; i = (i + 1) & (x->tscap - 1))
		if (x->tseen[i] >> 32 != x->trun ||
		    !memcmp(&x->tkeys[(__u32)x->tseen[i]], k, sizeof(*k)))
			return i;
}

/* Whether key k is among the run's already; adds it if not. */
static bool tuple_seen(struct cctx *x, const struct bpfipt_tuple6_key *k)
{
	size_t i;

	if (2 * (x->ntkeys + 1) > x->tscap) {
		size_t cap = x->tscap ? 2 * x->tscap : 1024;

		/* counted as the compile's: a failure ends the run (and the compile) */
		if (mem_add(x, (cap - x->tscap) * (sizeof(*x->tseen) + sizeof(*x->tkeys) / 2)))
			return true;
		free(x->tseen);
		x->tseen = xcalloc(cap, sizeof(*x->tseen));
		x->tscap = cap;
		x->tkeys = xrealloc(x->tkeys, cap / 2 * sizeof(*x->tkeys));
		x->trun++;	/* never 0: the calloc'ed entries are free */
		for (i = 0; i < x->ntkeys; i++)
			x->tseen[tuple_pos(x, &x->tkeys[i])] = (__u64)x->trun << 32 | i;
	}
	i = tuple_pos(x, k);
	if (x->tseen[i] >> 32 == x->trun)
		return true;
	x->tkeys[x->ntkeys] = *k;
	x->tseen[i] = (__u64)x->trun << 32 | x->ntkeys++;
	return false;
}

/* Rule r constrains nothing but its addresses (one of them): -s or -d, a
 * comment. */
static bool only_addr(const struct ipt_rule *r)
{
	const struct ipt_ip *ip = &r->ip;

	for (unsigned int i = 0; i < r->nmatches; i++)
		if (!ext_is(&r->matches[i], "comment"))
			return false;
	return !ip->iniface[0] && !ip->outiface[0] && !ip->proto && !ip->flags &&
	       !(ip->invflags & ~(IPT_INV_SRCIP | IPT_INV_DSTIP));
}

/* The fields a -m tcp or udp match adds to its rule's -p in the slot prefix
 * (loader.c pfx_fold()): -p and a range of destination ports are one, and
 * every port (no option) nothing beside the other; a source port range adds
 * one, an inverted destination range one (its vector). */
static unsigned int port_fields(const __u16 spts[2], bool sinv, bool dinv)
{
	return !(spts[0] == 0 && spts[1] == 65535 && !sinv) + dinv;
}

/* Rule r as the loader's slot prefix can test it (loader.c pfx_rule(): a plain
 * verdict that one to BPFIPT_FAST_PFX_FIELDS fields constrain), judged from its
 * words and on the safe side: -i lo, --ctstate ESTABLISHED,RELATED, -p tcp
 * --dport 22, with ACCEPT, DROP or REJECT; LOG, NFLOG, TCPMSS or no target (the packet
 * goes on), or extra matches (-m limit, recent, mac, mark, addrtype,
 * conntrack's other options) with no field too, a verdict with none; a jump
 * (-j CHAIN) or goto when the rules of the chain it calls are such rules, up to one
 * without a match that ends it (lvl: in a called chain; a RETURN is one, in a
 * base chain its policy;
 * *always: a verdict, RETURN or goto every packet takes). A port match counts as
 * port_fields() says, --tcp-flags one more (Docker's -d, ! -i, -o, -p tcp
 * --dport: four). The
 * number of the prefix's rules it takes (a jump: and its chain's), 0 when not
 * such a rule. */
static unsigned int prefix_plain(struct cctx *x, const struct ipt_rule *r, unsigned int lvl,
				 bool *always)
{
	static const union ipt_addr none;
	const struct ipt_ip *ip = &r->ip;
	bool cont = r->tkind == IPT_T_NONE ||
		    (r->tkind == IPT_T_EXT && (ext_is(&r->target, "LOG") ||
					       ext_is(&r->target, "NFLOG") ||
					       ext_is(&r->target, "TCPMSS"))),
	     ret = r->tkind == IPT_T_VERDICT && r->verdict == IPT_V_RETURN,
	     jump = (r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) && lvl < BPFIPT_FAST_PFX_RULES;
	bool extra = false;
	unsigned int n, i, take = 1;

	if (!(r->tkind == IPT_T_VERDICT && r->verdict != IPT_V_RETURN) && !cont && !ret &&
	    !jump && !(r->tkind == IPT_T_EXT && ext_is(&r->target, "REJECT")))
		return 0;
	n = !!memcmp(&ip->smsk, &none, sizeof(none)) + !!memcmp(&ip->dmsk, &none, sizeof(none)) +
	    !!ip->iniface[0] + !!ip->outiface[0] + !!ip->proto +
	    (!x->v6 && (ip->flags & IPT_F_FRAG));
	if (ip->invflags & (IPT_INV_SRCIP | IPT_INV_DSTIP | IPT_INV_PROTO))
		return 0;
	for (i = 0; i < r->nmatches; i++) {
		const struct ipt_match *m = &r->matches[i];

		if (ext_is(m, "tcp")) {
			const struct ipt_tcp_info *d = m->data;

			if (d->option)
				return 0;
			n += port_fields(d->spts, d->invflags & IPT_TCP_INV_SRCPT,
					 d->invflags & IPT_TCP_INV_DSTPT) +
			     !!(d->flg_mask || (d->invflags & IPT_TCP_INV_FLAGS));
		} else if (ext_is(m, "udp")) {
			const struct ipt_udp_info *d = m->data;

			n += port_fields(d->spts, d->invflags & IPT_UDP_INV_SRCPT,
					 d->invflags & IPT_UDP_INV_DSTPT);
		} else if (ext_is(m, "icmp") || ext_is(m, "icmp6") || ext_is(m, "state")) {
			n++;	/* its type's vector; --ctstate's range */
		} else if (ext_is(m, "conntrack")) {
			const struct ipt_conntrack_info *d = m->data;

			n += !!(d->match_flags & XT_CONNTRACK_STATE);
			extra = extra || (d->match_flags & ~XT_CONNTRACK_STATE);	/* the rest */
		} else if (ext_is(m, "multiport")) {
			n++;		/* its ports, or an extra (--ports) */
		} else if (ext_is(m, "length")) {
			n++;
		} else if (ext_is(m, "iprange")) {
			const struct iprange_data *d = m->data;

			/* its ranges are the addresses' fields (-s and it: one) */
			n += !!(d->flags & IPR_SRC) + !!(d->flags & IPR_DST);
		} else if (!ext_is(m, "comment") && !ext_is(m, "limit") && !ext_is(m, "recent") &&
			   !ext_is(m, "mac") && !ext_is(m, "mark") && !ext_is(m, "addrtype")) {
			return 0;	/* -m set, u32, ...: not worth the guess */
		} else {
			extra = extra || !ext_is(m, "comment");
		}
	}
	if (n > BPFIPT_FAST_PFX_FIELDS)
		return 0;
	/* a verdict or goto every packet takes */
	*always = !n && !extra && !cont && (!jump || r->tkind == IPT_T_GOTO);
	if (jump) {
		int ci = ipt_chain_index(x->t, r->chain);
		const struct ipt_chain *ch = ci >= 0 ? x->t->chains[ci] : NULL;

		for (i = 0; ch && i < ch->nrules && take <= BPFIPT_FAST_PFX_RULES; i++) {
			const struct ipt_rule *cr = ch->rules[i];
			bool all;
			unsigned int k = prefix_plain(x, cr, lvl + 1, &all), len;
			int w;

			if (!k)
				return 0;
			take += k;
			/* a run of verdicts that only their addresses constrain:
			 * a list, which the prefix searches (a deny list: fail2ban's
			 * chain) */
			if (k == 1 && groupable(cr) && cr->tkind != IPT_T_GOTO &&
			    !(cr->tkind == IPT_T_VERDICT && cr->verdict == IPT_V_RETURN) &&
			    only_addr(cr) && (len = run_length(x, ch, i, &w)) >= x->group_min)
				i += len - 1;
			if (all)
				break;	/* the rest is never reached */
		}
		if (!ch || take > BPFIPT_FAST_PFX_RULES)
			return 0;
	}
	return take;
}

/* Unit u as the slot prefix can test it: a plain rule (prefix_plain()), or a
 * group of plain verdicts (a tuple group, a list) that the prefix searches. The
 * number of the prefix's rules it takes, 0: not such a unit. */
static unsigned int unit_plain(struct cctx *x, const struct unit *u)
{
	bool all;

	if (u->nrules == 1 && !(u->xflags & BPFIPT_X_GROUP_TUPLE))
		return prefix_plain(x, u->rule, 0, &all);
	return u->kind == BPFIPT_S_VERDICT && !u->log &&
	       !(u->xflags & ~(BPFIPT_X_GROUP_TUPLE | BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST |
			       BPFIPT_X_PROTO6));
}

/* A tuple run from rule i, tlen rules, in base chain ch whose units so far are
 * mc's: searched from the slot prefix (BPFIPT_FAST_PFX_TUPLE) when the chain's
 * other slots are few and plain, so that no packet walks. */
static bool tuple_in_prefix(struct cctx *x, const struct mchain *mc,
			    const struct ipt_chain *ch, unsigned int i, unsigned int tlen)
{
	unsigned int take = 1, k;

	if (!ch->builtin || mc->nu + 1 + (ch->nrules - i - tlen) > BPFIPT_FAST_PFX_RULES)
		return false;
	for (k = 0; k < mc->nu; k++) {
		unsigned int n = unit_plain(x, &mc->u[k]);

		if (!n)
			return false;
		take += n;
	}
	for (k = i + tlen; k < ch->nrules; k++) {
		bool all;
		unsigned int n = prefix_plain(x, ch->rules[k], 0, &all);

		if (!n)
			return false;
		take += n;
	}
	return take <= BPFIPT_FAST_PFX_RULES;
}

/* Length of the tuple run starting at rule i (1: none) and its shape. A run of
 * rules after which a packet goes on (passable()) ends before the first tuple
 * it repeats: tuples of one shape are equal or disjoint, so no packet matches
 * two of its rules; such a run, or a -g run, may name a chain per rule. */
static unsigned int tuple_run(struct cctx *x, const struct ipt_chain *ch, unsigned int i,
			      struct tshape *sh)
{
	const struct ipt_rule *r = ch->rules[i];
	bool once = !groupable(r), chains = r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO;
	struct bpfipt_tuple6_key k;
	struct tshape s2;
	unsigned int j = i;

	if (!tuple_of(r, x->v6, sh, &k))
		return 1;
	if (once) {
		x->trun++;	/* a new run: the set empty */
		x->ntkeys = 0;
		tuple_seen(x, &k);
	}
	while (j + 1 < ch->nrules && tuple_of(ch->rules[j + 1], x->v6, &s2, &k) &&
	       s2.splen == sh->splen && s2.dplen == sh->dplen && s2.ports == sh->ports &&
	       s2.pm == sh->pm && tuple_eq(r, ch->rules[j + 1], sh, chains) &&
	       !(once && tuple_seen(x, &k)))
		j++;
	return j - i + 1;
}

/* The unit of the tuple run i .. i + len - 1 of chain ci: rule i's, with each
 * field of the key constrained to the union of the run's values; its keys go
 * to cc->tuples. */
static int build_tuple_group(struct cctx *x, unsigned int ci, unsigned int i, unsigned int len,
			     const struct tshape *sh, struct unit *u)
{
	const struct ipt_chain *ch = x->t->chains[ci];
	struct cp_compiled *cc = x->cc;
	bool skip[2] = { sh->splen > 0, sh->dplen > 0 };
	__u32 *pp[2] = { NULL, NULL };
	__u32 id = cc->ntgroups;
	bool pairs;
	size_t need;

	if (build_unit(x, ci, ch->rules[i], skip, u))
		return -1;
	/* IPv6, -p, both addresses varying: the pairs for a cut chain (bpfipt.h) */
	pairs = (u->xflags & BPFIPT_X_PROTO6) && skip[0] && skip[1];
	need = cc->ntuples + (pairs ? 2 * (size_t)len : len);
	if (need > x->tuple_cap) {
		size_t old = x->tuple_cap;

		x->tuple_cap = need * 2;
		cc->tuples = xrealloc(cc->tuples, x->tuple_cap * sizeof(*cc->tuples));
		if (mem_add(x, (x->tuple_cap - old) * sizeof(*cc->tuples)))
			return -1;
	}
	for (int w = 0; w < 2; w++) {
		struct atom *at;

		if (!skip[w])
			continue;
		at = run_atom(x, ci, ch->rules[i], u, w, len);
		if (!at)
			return -1;
		if (x->v6)
			at[0].p6 = arena_alloc(&x->ar, len * sizeof(struct pfx6));
		else
			at[0].p = arena_alloc(&x->ar, len * sizeof(struct pfx));
		u->atoms[w] = at;
		u->natoms[w]++;
	}
	for (int w = 0; w < 2; w++)
		if (sh->ports & (w ? BPFIPT_TP_DPORT : BPFIPT_TP_SPORT))
			pp[w] = arena_alloc(&x->ar, 2 * len * sizeof(__u32));
	for (unsigned int k = 0; k < len; k++) {
		struct cp_tuple *t = &cc->tuples[cc->ntuples++];
		struct tshape s2;

		tuple_of(ch->rules[i + k], x->v6, &s2, &t->k);
		t->k.group = id;
		t->off = k;
		for (int w = 0; w < 2; w++) {
			__u32 ctr = x->rule_base[ci] + i + k;
			__u8 plen = w ? sh->dplen : sh->splen;

			if (skip[w] && x->v6)
				u->atoms[w][0].p6[k] = (struct pfx6){
					.addr = ipt_be128((const __u8 *)(w ? t->k.dst : t->k.src)),
					.plen = plen, .counter = ctr };
			else if (skip[w])
				u->atoms[w][0].p[k] = (struct pfx){
					.addr = ntohl(w ? t->k.dst[0] : t->k.src[0]),
					.plen = plen, .counter = ctr };
			if (pp[w])
				pp[w][2 * k] = pp[w][2 * k + 1] = w ? t->k.dport : t->k.sport;
		}
		if (pairs) {
			struct cp_tuple *c = &cc->tuples[cc->ntuples++];

			*c = *t;
			c->k.group = id | BPFIPT_TG_CUT;
			c->k.sport = c->k.dport = 0;
			c->k.proto = 0;
		}
	}
	for (int w = 0; w < 2; w++) {
		if (skip[w] && x->v6)
			sort_pfx6(u->atoms[w][0].p6, len);
		else if (skip[w])
			sort_pfx4(u->atoms[w][0].p, len);
		/* rule i's own port was its constraint: the union replaces it */
		if (pp[w])
			u->rs[w ? RF_DPORT : RF_SPORT] = iset_from_pairs(x, pp[w], len, false, 65535);
	}
	u->nrules = len;
	u->group = id;
	u->xflags |= BPFIPT_X_GROUP_TUPLE;
	u->tp_splen = sh->splen;
	u->tp_dplen = sh->dplen;
	u->tp_ports = sh->ports;
	cc->ntgroups++;
	return vmap_targets(x, ci, i, len, u);
}

/* IPv6: ip6_packet_match() drops a packet whose extension-header chain is cut
 * at a rule with -p once its -s/-d and interfaces match, before its matches.
 * The data plane drops at a candidate BPFIPT_X_PROTO6 slot, and for a cut packet
 * leaves out of the AND the fields only matches constrain (but the addresses:
 * -m iprange is an address constraint). A rule with -p and an iprange gets a
 * HOTDROP unit before it: its IP part only, a protocol no packet has (so only a
 * cut packet, whose protocol is not looked up, finds it), no counter. true when
 * *h was made. */
static bool cut_unit(struct cctx *x, const struct unit *u, struct unit *h)
{
	unsigned int nip[2] = { 0, 0 };

	if (!x->v6 || !(u->xflags & BPFIPT_X_PROTO6))
		return false;
	for (int i = 0; i < 2; i++)
		while (nip[i] < u->natoms[i] && u->atoms[i][nip[i]].ip)
			nip[i]++;
	if (nip[0] == u->natoms[0] && nip[1] == u->natoms[1])
		return false;
	memset(h, 0, sizeof(*h));
	h->rule = u->rule;
	h->nrules = 1;
	h->kind = BPFIPT_S_CONTINUE;
	h->target = -1;
	h->counter = BPFIPT_NO_COUNTER;
	h->xflags = BPFIPT_X_PROTO6;
	h->extra = BPFIPT_NO_EXTRA;
	h->rs[RF_PROTO] = iset_new(x, 0);
	for (int i = 0; i < 2; i++) {
		h->atoms[i] = u->atoms[i];	/* the IP part is their beginning */
		h->natoms[i] = nip[i];
		h->ifc[i] = u->ifc[i];
	}
	return true;
}

static int build_chain_units(struct cctx *x, unsigned int ci)
{
	struct mchain *mc = &x->ch[ci];
	const struct ipt_chain *ch = x->t->chains[ci];
	static const bool noskip[2] = { false, false };

	if (mc->built)
		return 0;
	mc->built = true;
	/* IPv6: a rule may take two units (cut_unit()) */
	mc->u = xcalloc(ch->nrules ? (x->v6 ? 2 : 1) * ch->nrules : 1, sizeof(struct unit));
	x->cur_chain = ci;
	for (unsigned int i = 0; i < ch->nrules;) {
		struct unit *u = &mc->u[mc->nu];
		int which;
		unsigned int len = run_length(x, ch, i, &which), tlen = 1, tmin = x->tuple_min;
		bool top = ch->builtin && mc->nu < BPFIPT_FAST_PFX_RULES;
		struct tshape sh;

		if ((top ? x->tuple_top : tmin) <= ch->nrules - i)
			tlen = tuple_run(x, ch, i, &sh);
		/* a run that begins a base chain is searched first (BPFIPT_FAST_TUPLE);
		 * one among a few plain rules, from the slot prefix: neither walks */
		if (top && (i == 0 || (tlen >= x->tuple_top && tuple_in_prefix(x, mc, ch, i, tlen))))
			tmin = x->tuple_top;
		if (tlen >= tmin && (len < x->group_min || tlen > len)) {
			len = tlen;
			if (build_tuple_group(x, ci, i, len, &sh, u))
				return -1;
		} else if (len >= x->group_min) {
			if (build_group(x, ci, i, len, which, u))
				return -1;
			u->group = x->cc->ngroups++;
			u->xflags |= which ? BPFIPT_X_GROUP_DST : BPFIPT_X_GROUP_SRC;
			if (x->v6 ? emit_group6(x, which, u->group, u->atoms[which][0].p6, len) :
				    emit_group4(x, which, u->group, u->atoms[which][0].p, len))
				return -1;
		} else {
			len = 1;
			if (build_unit(x, ci, ch->rules[i], noskip, u))
				return -1;
			/* a jump to a chain without rules (ufw's logging, reject
			 * and track chains, most of the time) comes back at once:
			 * a rule the packet goes on from, one step of the walk
			 * instead of two (the chain's block, its end alone, is not
			 * laid out for it). Not in a group, whose rules' kind the
			 * run decided */
			if (u->kind == BPFIPT_S_JUMP && !x->t->chains[u->target]->nrules) {
				u->kind = BPFIPT_S_CONTINUE;
				u->target = -1;
			}
		}
		u->counter = x->rule_base[ci] + i;
		if (cut_unit(x, u, u + 1)) {
			/* its hotdrop slot first */
			struct unit tmp = u[0];

			u[0] = u[1];
			u[1] = tmp;
			mc->nu++;
		}
		mc->nu++;
		i += len;
	}
	if (mc->nu < ch->nrules || x->v6)
		mc->u = xrealloc(mc->u, (mc->nu ? mc->nu : 1) * sizeof(struct unit));
	return mem_add(x, mc->nu * sizeof(struct unit));
}

/* ---------------------------------------------------------------- chains */

/* A rule no packet gets past: no condition at all and a verdict. The kernel's
 * loop check stops there, and so does ours: a loop behind it is never run. */
static bool unit_ends_chain(const struct unit *u)
{
	static const struct ipt_ip none;
	const struct ipt_rule *r = u->rule;

	return u->nrules == 1 && r && r->tkind == IPT_T_VERDICT && !r->nmatches &&
	       !memcmp(&r->ip, &none, sizeof(none));
}

/* The chains a unit goes to: none, its -j/-g chain, or a verdict map's, rule by
 * rule (the same chain may come more than once). */
static unsigned int unit_ntargets(const struct unit *u)
{
	if (u->kind != BPFIPT_S_JUMP && u->kind != BPFIPT_S_GOTO)
		return 0;
	return u->mtarget ? u->nrules : 1;
}

static unsigned int unit_target(const struct unit *u, unsigned int m)
{
	return (unsigned int)(u->mtarget ? u->mtarget[m] : u->target);
}

/* Depth-first over -j/-g from chain ci: builds units, computes need (stack frames
 * pushed at most), finds loops. dead: reached only behind an unconditional
 * verdict, where a loop is harmless (never entered) and iptables accepts it. */
static int walk_chain(struct cctx *x, unsigned int ci, bool reach[], bool dead)
{
	struct mchain *mc = &x->ch[ci];
	unsigned int need = 0;

	if (mc->state == 2) {
		/* walked for an earlier base chain: mark what it reaches for this one */
		if (reach[ci])
			return 0;
		reach[ci] = true;
		for (unsigned int k = 0; k < mc->nu; k++) {
			const struct unit *u = &mc->u[k];

			for (unsigned int m = 0; m < unit_ntargets(u); m++)
				walk_chain(x, unit_target(u, m), reach, true);
		}
		return 0;
	}
	if (mc->state == 1) {
		if (dead)
			return 0;
		ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
			    "Too many levels of symbolic links: chain %s is part of a loop",
			    x->t->chains[ci]->name);
		x->failed = true;
		return -1;
	}
	reach[ci] = true;
	mc->state = 1;
	if (build_chain_units(x, ci))
		return -1;
	bool past = dead;

	for (unsigned int k = 0; k < mc->nu; k++) {
		const struct unit *u = &mc->u[k];
		unsigned int n;

		if (!unit_ntargets(u)) {
			past = past || unit_ends_chain(u);
			continue;
		}
		for (unsigned int m = 0; m < unit_ntargets(u); m++) {
			unsigned int tc = unit_target(u, m);

			if (walk_chain(x, tc, reach, past))
				return -1;
			if (x->ch[tc].state != 2)
				continue;	/* a harmless loop behind a verdict */
			n = x->ch[tc].need + (u->kind == BPFIPT_S_JUMP);
			if (n > need)
				need = n;
		}
	}
	mc->need = need;
	mc->state = 2;
	return 0;
}

/* Slot s of chain slots sl from unit u; a verdict map's member slots at *mnext
 * and after (it moves past them). */
static void fill_slot(struct bpfipt_slot *sl, unsigned int s, const struct unit *u,
		      const __u32 *block, unsigned int *mnext)
{
	struct bpfipt_slot *d = &sl[s];

	memset(d, 0, sizeof(*d));
	d->kind = u->kind;
	d->verdict = u->verdict;
	d->reject_with = u->reject_with;
	d->log = u->log;
	d->xflags = u->xflags;
	d->target = unit_ntargets(u) ? block[u->target] : 0;
	d->counter = u->counter;
	d->extra = u->extra;
	d->group = u->group;
	d->tp_splen = u->tp_splen;
	d->tp_dplen = u->tp_dplen;
	d->tp_ports = u->tp_ports;
	if (!u->mtarget)
		return;
	/* a verdict map: rule k's slot is member target + k, counter + k its
	 * counter (a group's rules are consecutive) */
	d->target = *mnext;
	for (unsigned int k = 0; k < u->nrules; k++) {
		struct bpfipt_slot *m = &sl[*mnext + k];

		m->kind = u->kind;
		m->target = block[u->mtarget[k]];
		m->counter = u->counter + k;
		m->extra = BPFIPT_NO_EXTRA;
	}
	*mnext += u->nrules;
}

/* cc->gfold[c]: the chain's only group slot per address field, if any. */
static void fold_groups(struct cp_compiled *cc, enum bpfipt_chain c)
{
	static const __u32 gflag[2] = { BPFIPT_X_GROUP_SRC, BPFIPT_X_GROUP_DST };

	for (int F = 0; F < 2; F++) {
		unsigned int n = 0, gs = 0;

		for (unsigned int s = 0; s < cc->nslots[c]; s++)
			if (cc->slots[c][s].xflags & gflag[F]) {
				n++;
				gs = s;
			}
		cc->gfold[c][F] = n == 1 ? gs + 1 : 0;
	}
}

static int layout_chain(struct cctx *x, enum bpfipt_chain c, int bi, bool *reach, __u32 *block)
{
	struct cp_compiled *cc = x->cc;
	const struct ipt_table *t = x->t;
	size_t n = 0;

	memset(reach, 0, t->nchains * sizeof(*reach));
	if (bi >= 0) {
		if (walk_chain(x, (unsigned int)bi, reach, false))
			return -1;
		if (x->ch[bi].need > BPFIPT_MAX_DEPTH) {
			ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				    "chains nested too deeply: %s reaches %u nested -j calls, the "
				    "data plane allows %u", base_names[c], x->ch[bi].need,
				    BPFIPT_MAX_DEPTH);
			x->failed = true;
			return -1;
		}
		n = x->ch[bi].nu;
	}
	/* the policy the first slot of its word: a walk that finds no rule before
	 * it takes it from the summary rows, without its chunk's lookups (the data
	 * plane's AT_POLICY()) */
	cc->npad[c] = n >= CP_PAD_MIN && n % 64 ? (__u32)(64 - n % 64) : 0;
	n += cc->npad[c];
	n++;	/* policy */
	for (unsigned int ci = 0; ci < t->nchains; ci++) {
		if (!reach[ci] || (int)ci == bi)
			continue;
		block[ci] = (__u32)n;
		n += x->ch[ci].nu + 1;
	}
	if (n > (size_t)BPFIPT_MAX_WORDS * 64) {
		ipt_err_set(x->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
			    "chain %s needs %zu slots, the data plane allows %u (runs of rules "
			    "that differ only in -s or -d count as one)", base_names[c], n,
			    BPFIPT_MAX_WORDS * 64);
		x->failed = true;
		return -1;
	}
	/* the verdict maps' member slots follow the chain's */
	size_t nm = 0;

	for (unsigned int ci = 0; ci < t->nchains; ci++)
		if (reach[ci] || (int)ci == bi)
			for (unsigned int k = 0; k < x->ch[ci].nu; k++)
				if (x->ch[ci].u[k].mtarget)
					nm += x->ch[ci].u[k].nrules;
	cc->nslots[c] = (unsigned int)n;
	cc->nmslots[c] = (unsigned int)nm;
	cc->slots[c] = xcalloc(n + nm, sizeof(struct bpfipt_slot));
	x->sl[c] = xcalloc(n, sizeof(*x->sl[c]));
	if (mem_add(x, n * (sizeof(struct bpfipt_slot) + sizeof(void *)) +
		       nm * sizeof(struct bpfipt_slot)))
		return -1;

	unsigned int s = 0, mnext = (unsigned int)n;

	if (bi >= 0)
		for (unsigned int k = 0; k < x->ch[bi].nu; k++, s++) {
			fill_slot(cc->slots[c], s, &x->ch[bi].u[k], block, &mnext);
			x->sl[c][s] = &x->ch[bi].u[k];
		}
	for (unsigned int k = 0; k < cc->npad[c]; k++, s++) {
		cc->slots[c][s].kind = BPFIPT_S_CONTINUE;
		cc->slots[c][s].counter = BPFIPT_NO_COUNTER;
		cc->slots[c][s].extra = BPFIPT_NO_EXTRA;
	}
	cc->policy_slot[c] = s;
	cc->slots[c][s].kind = BPFIPT_S_POLICY;
	cc->slots[c][s].verdict = (bi >= 0 && t->chains[bi]->policy == IPT_V_DROP) ? BPFIPT_V_DROP
										  : BPFIPT_V_ACCEPT;
	cc->slots[c][s].counter = bi >= 0 ? cc->policy_counter[c] : BPFIPT_NO_COUNTER;
	cc->slots[c][s].extra = BPFIPT_NO_EXTRA;
	s++;
	for (unsigned int ci = 0; ci < t->nchains; ci++) {
		if (!reach[ci] || (int)ci == bi)
			continue;
		for (unsigned int k = 0; k < x->ch[ci].nu; k++, s++) {
			fill_slot(cc->slots[c], s, &x->ch[ci].u[k], block, &mnext);
			x->sl[c][s] = &x->ch[ci].u[k];
		}
		cc->slots[c][s].kind = BPFIPT_S_RETURN;
		cc->slots[c][s].counter = BPFIPT_NO_COUNTER;
		cc->slots[c][s].extra = BPFIPT_NO_EXTRA;
		s++;
	}
	return 0;
}

/* ---------------------------------------------------------------- vector pool */

/* A vector's hash is the XOR of word_hash() of its words: a bit set or cleared
 * in x->cur changes x->curhash in two calls, where hashing the vector whole at
 * each intern() made 50 000 user chains' compile quadratic (1 600 words a vector,
 * 100 000 vectors: half of an -A's second). A zero word adds nothing. */
static inline __u64 word_hash(unsigned int i, __u64 w)
{
	return w ? hash_end(hash_mix(0x9E3779B97F4A7C15ull ^ i, w)) : 0;
}

static void cur_clear(struct cctx *x)
{
	memset(x->cur, 0, x->cc->nwords * sizeof(__u64));
	x->curhash = 0;
}

static inline void cur_set(struct cctx *x, unsigned int s)
{
	__u64 *w = &x->cur[s >> 6], o = *w;

	if (s - x->pad_lo < x->pad_hi - x->pad_lo)	/* an empty slot */
		return;

	*w |= 1ull << (s & 63);
	if (*w != o)
		x->curhash ^= word_hash(s >> 6, o) ^ word_hash(s >> 6, *w);
}

static inline void cur_clr(struct cctx *x, unsigned int s)
{
	__u64 *w = &x->cur[s >> 6], o = *w;

	*w &= ~(1ull << (s & 63));
	if (*w != o)
		x->curhash ^= word_hash(s >> 6, o) ^ word_hash(s >> 6, *w);
}

static void ht_rehash(struct cctx *x, size_t cap)
{
	free(x->ht);
	x->htcap = cap;
	x->ht = xmalloc(cap * sizeof(*x->ht));
	memset(x->ht, 0xff, cap * sizeof(*x->ht));
	for (__u32 id = 0; id < x->cc->nvecs; id++) {
		size_t i = x->hh[id] & (cap - 1);

		while (x->ht[i] != UINT32_MAX)
			i = (i + 1) & (cap - 1);
		x->ht[i] = id;
	}
}

/* The words of chunk k of a whole vector (the last may be short). */
static size_t chunk_len(const struct cp_compiled *cc, unsigned int k)
{
	size_t n = cc->nwords - (size_t)k * cc->cwords;

	return n < cc->cwords ? n : cc->cwords;
}

/* Whole vector v and stored vector b differ in chunks lo .. hi - 1 and no other
 * (lo == hi: in none). */
static void vec_diff(const struct cp_compiled *cc, __u32 b, const __u64 *v, unsigned int *lo,
		     unsigned int *hi)
{
	unsigned int l = 0, h = cc->nchunks;

	while (l < h && !memcmp(cp_vec_chunk(cc, b, l), v + (size_t)l * cc->cwords,
				chunk_len(cc, l) * sizeof(__u64)))
		l++;
	while (h > l && !memcmp(cp_vec_chunk(cc, b, h - 1), v + (size_t)(h - 1) * cc->cwords,
				chunk_len(cc, h - 1) * sizeof(__u64)))
		h--;
	*lo = l;
	*hi = h;
}

/* Whole vector v added to the pool as vector cc->nvecs: a window on the base
 * it differs least from, or whole when that leaves it more than half its chunks
 * (then a base itself). The bytes newly allocated. */
static size_t pool_add(struct cp_compiled *cc, struct vpool *vp, const __u64 *v)
{
	unsigned int nc = cc->nchunks, lo = 0, n = nc, l, h, i, best = POOL_BASES;
	struct cp_vwin *w;
	size_t grown = 0;
	__u32 id = cc->nvecs;

	for (i = 0; nc > 1 && i < vp->nbases && n > 1; i++) {
		vec_diff(cc, vp->base[i], v, &l, &h);
		if (h - l < n) {
			lo = l;
			n = h - l;
			best = i;
		}
	}
	if (2 * n > nc || vp->fresh) {
		lo = 0;
		n = nc;
		best = POOL_BASES;
	}
	vp->fresh = false;
	if (cc->nvecs == vp->vwcap) {
		vp->vwcap = vp->vwcap ? 2 * vp->vwcap : 64;
		cc->vw = xrealloc(cc->vw, vp->vwcap * sizeof(*cc->vw));
		grown += vp->vwcap / 2 * sizeof(*cc->vw);
	}
	if (cc->nowned + n > vp->wcap) {
		size_t cap = vp->wcap ? 2 * vp->wcap : 64;

		while (cap < cc->nowned + n)
			cap *= 2;
		cc->words = xrealloc(cc->words, cap * cc->cwords * sizeof(__u64));
		grown += (cap - vp->wcap) * cc->cwords * sizeof(__u64);
		vp->wcap = cap;
	}
	w = &cc->vw[id];
	*w = (struct cp_vwin){ .base = best < POOL_BASES ? vp->base[best] : id, .lo = lo,
			       .n = n, .at = cc->nowned * cc->cwords };
	for (i = lo; i < lo + n; i++) {
		__u64 *c = cc->words + w->at + (size_t)(i - lo) * cc->cwords;
		size_t len = chunk_len(cc, i);

		memcpy(c, v + (size_t)i * cc->cwords, len * sizeof(__u64));
		memset(c + len, 0, (cc->cwords - len) * sizeof(__u64));
	}
	cc->nowned += n;
	cc->nvecs++;
	/* the base used (or the new one) first */
	if (best == POOL_BASES) {
		best = vp->nbases < POOL_BASES ? vp->nbases++ : POOL_BASES - 1;
		vp->base[best] = id;
	}
	for (i = best; i > 0; i--) {
		__u32 t = vp->base[i];

		vp->base[i] = vp->base[i - 1];
		vp->base[i - 1] = t;
	}
	return grown;
}

static void pool_init(struct cp_compiled *cc)
{
	cc->nchunks = (cc->nwords + BPFIPT_CHUNK_WORDS - 1) / BPFIPT_CHUNK_WORDS;
	cc->cwords = cc->nwords < BPFIPT_CHUNK_WORDS ? cc->nwords : BPFIPT_CHUNK_WORDS;
}

int cp_pool_set(struct cp_compiled *cc, const __u64 *vecs, unsigned int nvecs)
{
	struct vpool vp = { .nbases = 0 };

	if (!cc->nwords || cc->vw || cc->words)
		return -1;
	pool_init(cc);
	for (unsigned int i = 0; i < nvecs; i++)
		pool_add(cc, &vp, vecs + (size_t)i * cc->nwords);
	return 0;
}

/* Whole vector v equals pool vector id. */
static bool vec_is(const struct cp_compiled *cc, __u32 id, const __u64 *v)
{
	for (unsigned int k = 0; k < cc->nchunks; k++)
		if (memcmp(cp_vec_chunk(cc, id, k), v + (size_t)k * cc->cwords,
			   chunk_len(cc, k) * sizeof(__u64)))
			return false;
	return true;
}

/* The id of vector v (hash h) in the pool, or UINT32_MAX with *at its free
 * place in the hash table. */
static __u32 find_vec(const struct cctx *x, const __u64 *v, __u64 h, size_t *at)
{
	size_t i = h & (x->htcap - 1);

	for (;; i = (i + 1) & (x->htcap - 1)) {
		__u32 id = x->ht[i];

		if (id == UINT32_MAX)
			break;
		if (x->hh[id] == h && vec_is(x->cc, id, v))
			return id;
	}
	*at = i;
	return UINT32_MAX;
}

/* The id of vector x->cur in the pool (added when new); UINT32_MAX on failure. */
static __u32 intern(struct cctx *x)
{
	struct cp_compiled *cc = x->cc;
	const __u64 *v = x->cur;
	__u64 h = x->curhash;
	size_t i;
	__u32 found = find_vec(x, v, h, &i);

	if (found != UINT32_MAX)
		return found;
	if (x->failed)
		return UINT32_MAX;
	if (cc->nvecs == x->poolcap) {
		size_t old = x->poolcap;

		x->poolcap = old ? 2 * old : 64;
		if (mem_add(x, (x->poolcap - old) * (sizeof(__u64) + 2 * sizeof(__u32))))
			return UINT32_MAX;
		x->hh = xrealloc(x->hh, x->poolcap * sizeof(__u64));
	}
	if (mem_add(x, pool_add(cc, &x->vp, v)))
		return UINT32_MAX;
	__u32 id = cc->nvecs - 1;

	x->hh[id] = h;
	x->ht[i] = id;
	if ((size_t)cc->nvecs * 2 > x->htcap)
		ht_rehash(x, x->htcap * 2);
	return id;
}

/* ---------------------------------------------------------------- range fields */

struct event {
	__u32 pos, slot;
	bool set;
};

/* Range field f of chain c: the slots whose constraint starts (set) or stops
 * (clear) at each key, walked in key order; a new vector where it changes. The
 * events are bucketed by key (a stable counting sort: nkeys is at most
 * BPFIPT_CLASS_KEYS), so a field costs O(nkeys + events), not a sort. */
static int build_range(struct cctx *x, enum bpfipt_chain c, int f)
{
	struct cp_array_field *out = rf_out(x->cc, f);
	unsigned int nkeys = rf_nkeys[f], n = x->cc->nslots[c];
	size_t nev = 0;

	cur_clear(x);
	for (unsigned int s = 0; s < n; s++) {
		const struct unit *u = x->sl[c][s];
		const struct iset *is = u ? u->rs[f] : NULL;

		if (!is)
			cur_set(x, s);
		else
			nev += 2 * is->n;
	}
	if (!nev) {
		__u32 id = intern(x);

		if (id == UINT32_MAX)
			return -1;
		cp_array_run(out, c, 0, id);
		return 0;
	}
	/* first[k]: where key k's events start in ev (after the prefix sum) */
	__u32 *first = x->first;
	struct event *ev = xmalloc(nev * sizeof(*ev));

	memset(first, 0, (nkeys + 1) * sizeof(*first));
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int s = 0; s < n; s++) {
			const struct unit *u = x->sl[c][s];
			const struct iset *is = u ? u->rs[f] : NULL;

			for (unsigned int i = 0; is && i < is->n; i++) {
				__u32 lo = is->v[2 * i], end = is->v[2 * i + 1] + 1;

				if (lo >= nkeys)
					continue;
				if (!pass) {
					first[lo + 1]++;
					if (end < nkeys)
						first[end + 1]++;
					continue;
				}
				ev[first[lo]++] = (struct event){ lo, s, true };
				if (end < nkeys)
					ev[first[end]++] = (struct event){ end, s, false };
			}
		}
		if (!pass)
			for (unsigned int k = 0; k < nkeys; k++)
				first[k + 1] += first[k];
	}
	/* after the scatter, first[k] is where key k's events end: the last key's
	 * end is the number of events (those at or past nkeys were left out) */
	nev = first[nkeys - 1];
	size_t e = 0;

	for (unsigned int k = 0; k < nkeys;) {
		for (; e < nev && ev[e].pos == k; e++) {
			if (ev[e].set)
				cur_set(x, ev[e].slot);
			else
				cur_clr(x, ev[e].slot);
		}
		unsigned int next = e < nev ? ev[e].pos : nkeys;
		__u32 id = intern(x);

		if (id == UINT32_MAX) {
			free(ev);
			return -1;
		}
		cp_array_run(out, c, k, id);
		k = next;
	}
	free(ev);
	return mem_add(x, out->nrun[c] * sizeof(*out->run[c]));
}

void cp_array_run(struct cp_array_field *a, unsigned int chain, __u32 start, __u32 vid)
{
	unsigned int n = a->nrun[chain];

	if (n && a->run[chain][n - 1].vid == vid)
		return;		/* the run before goes on */
	if (n == a->cap[chain]) {
		a->cap[chain] = n ? 2 * n : 4;
		a->run[chain] = xrealloc(a->run[chain], a->cap[chain] * sizeof(*a->run[chain]));
	}
	a->run[chain][a->nrun[chain]++] = (struct cp_key_run){ start, vid };
}

/* ---------------------------------------------------------------- interfaces */

/* xt's ifname_compare with iptables' mask: "" matches all, "eth+" is a prefix. */
static bool if_match(const char *pat, const char *name)
{
	size_t n = strnlen(pat, IPT_IFNAMSIZ);

	if (!n)
		return true;
	if (pat[n - 1] == '+')
		return !strncmp(name, pat, n - 1);
	return !strncmp(name, pat, IPT_IFNAMSIZ);
}

static __u32 if_vector(struct cctx *x, enum bpfipt_chain c, int F, const char *name)
{
	unsigned int n = x->cc->nslots[c];

	cur_clear(x);
	for (unsigned int s = 0; s < n; s++) {
		const struct unit *u = x->sl[c][s];

		if (!u || !u->ifc[F].con || (if_match(u->ifc[F].pat, name) ^ u->ifc[F].inv))
			cur_set(x, s);
	}
	return intern(x);
}

static int build_if(struct cctx *x, enum bpfipt_chain c, int F)
{
	struct cp_if_field *out = F ? &x->cc->oif : &x->cc->iif;
	__u32 id = if_vector(x, c, F, "");
	bool named = false;

	if (id == UINT32_MAX)
		return -1;
	out->dflt[c] = id;
	/* a link without an entry has the default vector (the data plane's
	 * lookup misses): only the links whose vector differs get one, and a
	 * chain whose rules name no interface here has none (on a host of many
	 * links, a scan of the slots per link and direction, and hash entries the
	 * loader emptied and wrote again at every command, for nothing) */
	for (unsigned int s = 0; s < x->cc->nslots[c] && !named; s++)
		named = x->sl[c][s] && x->sl[c][s]->ifc[F].con;
	for (unsigned int i = 0; named && i < x->env->nlinks; i++) {
		const struct cp_link *l = &x->env->links[i];
		char name[IPT_IFNAMSIZ + 1];
		bool dup = false;

		if (!l->ifindex)
			continue;
		for (unsigned int j = 0; j < i; j++)
			dup |= x->env->links[j].ifindex == l->ifindex;
		if (dup)
			continue;
		memcpy(name, l->name, IPT_IFNAMSIZ);
		name[IPT_IFNAMSIZ] = '\0';
		id = if_vector(x, c, F, name);
		if (id == UINT32_MAX)
			return -1;
		if (id == out->dflt[c])
			continue;
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 16;
			out->e = xrealloc(out->e, out->cap * sizeof(*out->e));
		}
		out->e[out->n++] = (struct cp_if_entry){ .chain = c, .ifindex = l->ifindex, .vec = id };
	}
	return 0;
}

/* ---------------------------------------------------------------- driver */

static int cmp_lpm_entry(const void *a, const void *b)
{
	const struct cp_lpm_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->addr != y->addr)
		return ntohl(x->addr) < ntohl(y->addr) ? -1 : 1;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

static __u64 lpm_key(const void *e)
{
	return ((const struct cp_lpm_entry *)e)->key;
}

static __u64 lpm_key_addr_plen(const void *e)
{
	const struct cp_lpm_entry *x = e;

	return (__u64)ntohl(x->addr) << 6 | x->plen;
}

/* l's entries in cmp_lpm_entry()'s order, equal ones in their given order (glibc's
 * qsort() is a stable merge sort): large lists by keys (lib/rsort.h) */
static void sort_lpm(struct cp_lpm *l)
{
	static const rsort_key_fn keys[] = { lpm_key, lpm_key_addr_plen };
	static const unsigned int bits[] = { 32, 38 };

	if (l->n >= RSORT_MIN && !rsort_keys(l->e, l->n, sizeof(*l->e), keys, bits, 2))
		return;
	xqsort(l->e, l->n, sizeof(*l->e), cmp_lpm_entry);
}

static int cmp_lpm_entry6(const void *a, const void *b)
{
	const struct cp_lpm_entry6 *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	c = memcmp(x->addr, y->addr, 16);
	if (c)
		return c;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

/* The group or chain, the address's 32-bit digits (3: the most significant),
 * the last with the length: cmp_lpm_entry6()'s keys, for rsort_keys() */
static __u64 lpm6_key(const void *e)
{
	return ((const struct cp_lpm_entry6 *)e)->key;
}

static __u32 lpm6_digit(const void *e, int k)
{
	__be32 w;

	memcpy(&w, ((const struct cp_lpm_entry6 *)e)->addr + 4 * (3 - k), 4);
	return ntohl(w);
}

static __u64 lpm6_key_a3(const void *e) { return lpm6_digit(e, 3); }
static __u64 lpm6_key_a2(const void *e) { return lpm6_digit(e, 2); }
static __u64 lpm6_key_a1(const void *e) { return lpm6_digit(e, 1); }

static __u64 lpm6_key_a0_plen(const void *e)
{
	return (__u64)lpm6_digit(e, 0) << 8 | ((const struct cp_lpm_entry6 *)e)->plen;
}

void cp_lpm_sort6(struct cp_lpm *l)
{
	static const rsort_key_fn keys[] = { lpm6_key, lpm6_key_a3, lpm6_key_a2, lpm6_key_a1,
					     lpm6_key_a0_plen };
	static const unsigned int bits[] = { 32, 32, 32, 32, 40 };

	if (l->n >= RSORT_MIN && !rsort_keys(l->e6, l->n, sizeof(*l->e6), keys, bits, 5))
		return;
	xqsort(l->e6, l->n, sizeof(*l->e6), cmp_lpm_entry6);
}

static int cmp_if_entry(const void *a, const void *b)
{
	const struct cp_if_entry *x = a, *y = b;

	if (x->chain != y->chain)
		return x->chain < y->chain ? -1 : 1;
	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

int cp_compile(const struct ipt_table *t, const struct cp_env *env, struct cp_compiled **out,
	       struct ipt_err *err)
{
	static const struct cp_env noenv;
	struct cctx x;
	struct cp_compiled *cc;
	unsigned int nrules = 0;
	int bidx[BPFIPT_NCHAINS];
	bool *reach = NULL;
	__u32 *block = NULL;
	int rc = -1;

	*out = NULL;
	memset(&x, 0, sizeof(x));
	x.t = t;
	x.env = env ? env : &noenv;
	x.err = err;
	x.group_min = x.env->group_min ? x.env->group_min : CP_GROUP_MIN_DEFAULT;
	if (x.group_min < 2)
		x.group_min = 2;
	x.tuple_min = x.env->tuple_min ? x.env->tuple_min
		    : x.group_min > CP_TUPLE_MIN_DEFAULT ? x.group_min : CP_TUPLE_MIN_DEFAULT;
	if (x.tuple_min < 2)
		x.tuple_min = 2;
	x.tuple_top = x.env->tuple_min ? x.tuple_min
		    : x.group_min > CP_TUPLE_MIN_TOP ? x.group_min : CP_TUPLE_MIN_TOP;
	x.mem_limit = x.env->mem_limit ? x.env->mem_limit : CP_MEM_LIMIT;
	x.cc = cc = xcalloc(1, sizeof(*cc));
	cc->family = t->family == AF_INET6 ? AF_INET6 : AF_INET;
	x.v6 = cc->family == AF_INET6;
	x.ch = xcalloc(t->nchains + 1, sizeof(*x.ch));
	x.rule_base = xcalloc(t->nchains + 1, sizeof(*x.rule_base));
	for (unsigned int i = 0; i < t->nchains; i++) {
		x.rule_base[i] = nrules;
		nrules += t->chains[i]->nrules;
	}
	cc->ncounters = nrules + BPFIPT_NCHAINS;
	for (int c = 0; c < BPFIPT_NCHAINS; c++) {
		cc->policy_counter[c] = nrules + c;
		bidx[c] = ipt_chain_index(t, base_names[c]);
		if (bidx[c] >= 0 && !t->chains[bidx[c]]->builtin)
			bidx[c] = -1;
	}

	/* 1 + 2: units and slots */
	reach = xcalloc(t->nchains + 1, sizeof(*reach));
	block = xcalloc(t->nchains + 1, sizeof(*block));
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		if (layout_chain(&x, c, bidx[c], reach, block))
			goto out;
	if (mem_add(&x, x.ar.total))
		goto out;
	cc->nwords = 1;
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		if ((cc->nslots[c] + 63) / 64 > cc->nwords)
			cc->nwords = (cc->nslots[c] + 63) / 64;

	/* 3: vectors (a chain's only group slot on a field: out of its set) */
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		fold_groups(cc, c);
	pool_init(cc);
	x.cur = xmalloc(cc->nwords * sizeof(__u64));
	x.first = xmalloc((BPFIPT_CLASS_KEYS + 1) * sizeof(*x.first));
	ht_rehash(&x, 1024);
	for (int f = 0; f < RF_N; f++)
		rf_out(cc, f)->nkeys = rf_nkeys[f];	/* rows made when needed */
	for (int c = 0; c < BPFIPT_NCHAINS; c++) {
		x.cur_chain = bidx[c] >= 0 ? (unsigned int)bidx[c] : 0;
		x.pad_hi = cc->policy_slot[c];
		x.pad_lo = x.pad_hi - cc->npad[c];
		/* each field's first new vector (the values no rule names, mostly)
		 * stored whole: the field's other vectors take it as their base */
		for (int f = 0; f < RF_N; f++) {
			x.vp.fresh = true;
			if (build_range(&x, c, f))
				goto out;
		}
		for (int F = 0; F < 2; F++) {
			x.vp.fresh = true;
			if (x.v6 ? build_lpm6(&x, c, F) : build_lpm4(&x, c, F))
				goto out;
			x.vp.fresh = true;
			if (build_if(&x, c, F))
				goto out;
		}
	}
	if (x.failed)
		goto out;
	/* 4: each chain's vector of all its slots, when some field's value has it
	 * (find_vec()'s UINT32_MAX is BPFIPT_NO_VEC) */
	_Static_assert(BPFIPT_NO_VEC == UINT32_MAX, "no vector");
	for (int c = 0; c < BPFIPT_NCHAINS; c++) {
		size_t at;

		x.pad_hi = cc->policy_slot[c];
		x.pad_lo = x.pad_hi - cc->npad[c];
		cur_clear(&x);
		for (unsigned int s = 0; s < cc->nslots[c]; s++)
			cur_set(&x, s);
		cc->full_vec[c] = find_vec(&x, x.cur, x.curhash, &at);
	}
	x.pad_lo = x.pad_hi = 0;
	if (x.v6) {
		cp_lpm_sort6(&cc->src);
		cp_lpm_sort6(&cc->dst);
		cp_lpm_sort6(&cc->group_src);
		cp_lpm_sort6(&cc->group_dst);
	} else {
		sort_lpm(&cc->src);
		sort_lpm(&cc->dst);
		sort_lpm(&cc->group_src);
		sort_lpm(&cc->group_dst);
	}
	xqsort(cc->iif.e, cc->iif.n, sizeof(*cc->iif.e), cmp_if_entry);
	xqsort(cc->oif.e, cc->oif.n, sizeof(*cc->oif.e), cmp_if_entry);
	tuples_finish(cc);
	cc->mem = x.mem;
	*out = cc;
	cc = NULL;
	rc = 0;
out:
	if (rc && !err->code)
		ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "rule compiler failed");
	for (unsigned int i = 0; i < t->nchains; i++)
		free(x.ch[i].u);
	free(x.ch);
	free(x.rule_base);
	free(reach);
	free(block);
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		free(x.sl[c]);
	free(x.ht);
	free(x.hh);
	free(x.cur);
	free(x.first);
	free(x.spans);
	free(x.stk);
	free(x.tkeys);
	free(x.tseen);
	arena_free(&x.ar);
	if (cc)
		cp_compiled_free(&cc);
	return rc;
}

void cp_compiled_free(struct cp_compiled **pc)
{
	struct cp_compiled *cc = *pc;

	if (!cc)
		return;
	free(cc->vw);
	free(cc->words);
	free(cc->src.e);
	free(cc->dst.e);
	free(cc->group_src.e);
	free(cc->group_dst.e);
	free(cc->src.e6);
	free(cc->dst.e6);
	free(cc->group_src.e6);
	free(cc->group_dst.e6);
	for (int f = 0; f < RF_N; f++)
		for (int c = 0; c < BPFIPT_NCHAINS; c++)
			free(rf_out(cc, f)->run[c]);
	free(cc->iif.e);
	free(cc->oif.e);
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		free(cc->slots[c]);
	free(cc->extras);
	free(cc->recent);
	free(cc->tuples);
	free(cc);
	*pc = NULL;
}
