/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compiler's address arithmetic, for one address width: included twice by
 * controlplane/compile.c, once per family, with
 *   AW       the width in bits (32, 128)
 *   AT       an unsigned integer type of that width (host order: bit AW - 1 is the
 *            first bit of the address)
 *   PFX      the prefix type (struct pfx, struct pfx6) and APFX(at) an atom's
 *            prefixes of that type
 *   SUF(n)   n with the family's suffix (n##4, n##6)
 *   CTZ(a), POPCOUNT(a)  of an AT (a != 0 for CTZ)
 * and SUF(lpm_push) appending to a struct cp_lpm's entries of the family
 * so the IPv4 code is the one it always was (32-bit arithmetic, same output),
 * and IPv6 gets the same algorithms on 128-bit addresses.
 */

static AT SUF(plen_mask)(unsigned int plen)
{
	return plen ? ~(AT)0 << (AW - plen) : 0;
}

/* {a : (a & mask) == addr} as prefixes; addr, mask host order. A non-contiguous
 * mask expands to 2^(holes) prefixes. */
static int SUF(atom_from_mask)(struct cctx *x, AT addr, AT mask, bool neg, struct atom *a)
{
	unsigned int len = 0, holes;
	const AT top = (AT)1 << (AW - 1);

	a->neg = neg;
	a->ip = false;
	if (addr & ~mask) {		/* can never be equal: the empty set */
		a->n = 0;
		APFX(a) = NULL;
		return 0;
	}
	if (mask)
		len = AW - CTZ(mask);
	holes = len - POPCOUNT(mask);
	if (holes > 16)
		return -1;
	a->n = 1u << holes;
	APFX(a) = arena_alloc(&x->ar, a->n * sizeof(PFX));
	/* the hole bit positions, enumerated by a counter */
	unsigned int pos[AW], np = 0;

	for (unsigned int b = 0; b < len; b++)
		if (!(mask & (top >> b)))
			pos[np++] = b;
	for (unsigned int i = 0; i < a->n; i++) {
		AT v = addr;

		for (unsigned int j = 0; j < np; j++)
			if (i & (1u << j))
				v |= top >> pos[j];
		APFX(a)[i] = (PFX){ .addr = v, .plen = len, .counter = 0 };
	}
	return 0;
}

static int SUF(cmp_pfx)(const void *a, const void *b)
{
	const PFX *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return x->counter < y->counter ? -1 : x->counter > y->counter;
}

static __u64 SUF(pfx_key_counter)(const void *e)
{
	return ((const PFX *)e)->counter;
}

#if AW == 32
static __u64 SUF(pfx_key_addr)(const void *e)
{
	const PFX *p = e;

	return (__u64)p->addr << 6 | p->plen;
}
#else
RSORT_BY_ADDR128(rsort_pfx6, PFX, addr, plen)
#endif

/* p[0..n) in SUF(cmp_pfx)'s order: lists of RSORT_MIN prefixes and more by keys
 * (counter, then address and length: lib/rsort.h), the rest by qsort() */
static void SUF(sort_pfx)(PFX *p, size_t n)
{
	if (n >= RSORT_MIN) {
		size_t i;

		/* counters in the list's order (a run's rules): the sort by address
		 * and length keeps it among equal prefixes */
		for (i = 1; i < n && p[i - 1].counter < p[i].counter; i++)
			;
		if (i < n && rsort(p, n, sizeof(*p), SUF(pfx_key_counter), 32))
			goto any;
#if AW == 32
		if (!rsort(p, n, sizeof(*p), SUF(pfx_key_addr), 38))
			return;
#else
		if (!rsort_pfx6(p, n))
			return;
#endif
	}
any:
	xqsort(p, n, sizeof(*p), SUF(cmp_pfx));
}

static bool SUF(pfx_contains)(AT qa, __u32 ql, AT pa, __u32 pl)
{
	return ql <= pl && !((qa ^ pa) & SUF(plen_mask)(ql));
}

/* Group LPM entries: for each prefix, the counter of the earliest rule of the run
 * whose prefix contains it. p is sorted by cmp_pfx. */
static int SUF(emit_group)(struct cctx *x, int which, __u32 gid, const PFX *p, unsigned int n)
{
	struct cp_lpm *l = which ? &x->cc->group_dst : &x->cc->group_src;
	struct {
		AT addr;
		__u32 plen, val;
	} *st = xmalloc((AW + 1) * sizeof(*st));
	unsigned int sp = 0;

	for (unsigned int i = 0; i < n;) {
		AT a = p[i].addr;
		__u32 pl = p[i].plen, val = p[i].counter;

		/* duplicates: p sorted by counter within equal prefixes */
		while (i < n && p[i].addr == a && p[i].plen == pl)
			i++;
		while (sp && !SUF(pfx_contains)(st[sp - 1].addr, st[sp - 1].plen, a, pl))
			sp--;
		if (sp && st[sp - 1].val < val)
			val = st[sp - 1].val;
		st[sp].addr = a;
		st[sp].plen = pl;
		st[sp].val = val;
		sp++;
		if (SUF(lpm_push)(x, l, gid, a, pl, val)) {
			free(st);
			return -1;
		}
	}
	free(st);
	return 0;
}

/* ---- address fields */

struct SUF(mark) {
	AT addr;
	__u32 plen, atom;
};

static int SUF(cmp_mark)(const void *a, const void *b)
{
	const struct SUF(mark) *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

#if AW == 32
static __u64 SUF(mark_key)(const void *e)
{
	const struct SUF(mark) *m = e;

	return (__u64)m->addr << 6 | m->plen;
}
#else
RSORT_BY_ADDR128(rsort_marks6, struct SUF(mark), addr, plen)
#endif

/* mk[0..n) in SUF(cmp_mark)'s order, equal marks in their given order (qsort()
 * here is glibc's merge sort, stable too) */
static void SUF(sort_marks)(struct SUF(mark) *mk, size_t n)
{
#if AW == 32
	if (n >= RSORT_MIN && !rsort(mk, n, sizeof(*mk), SUF(mark_key), 38))
		return;
#else
	if (n >= RSORT_MIN && !rsort_marks6(mk, n))
		return;
#endif
	xqsort(mk, n, sizeof(*mk), SUF(cmp_mark));
}

/* The set of chain c's address field F: its prefixes, each with the vector of the
 * slots it satisfies. The chain's folded group slot (cc->gfold) leaves its list,
 * atom 0, out: the slot's bit is set wherever its other atoms hold. */
static int SUF(build_lpm)(struct cctx *x, enum bpfipt_chain c, int F)
{
	struct cp_lpm *out = F ? &x->cc->dst : &x->cc->src;
	unsigned int n = x->cc->nslots[c], gs = x->cc->gfold[c][F];
	size_t natoms = 0, nmarks = 0;
	int rc = -1;

	/* a0(s): the first atom of slot s taken */
#define A0(s) ((s) + 1 == gs ? 1u : 0u)
	for (unsigned int s = 0; s < n; s++) {
		const struct unit *u = x->sl[c][s];

		if (!u)
			continue;
		natoms += u->natoms[F] - A0(s);
		for (unsigned int a = A0(s); a < u->natoms[F]; a++)
			nmarks += u->atoms[F][a].n;
	}
	__u32 *atom_slot = xmalloc((natoms + 1) * sizeof(__u32));
	__u8 *atom_neg = xmalloc(natoms + 1);
	__u32 *cnt = xcalloc(natoms + 1, sizeof(__u32));
	__u32 *sat = xcalloc(n, sizeof(__u32));
	__u32 *need = xcalloc(n ? n : 1, sizeof(__u32));
	struct SUF(mark) *mk = xmalloc((nmarks + 1) * sizeof(*mk));
	size_t ai = 0, mi = 0;

	cur_clear(x);
	for (unsigned int s = 0; s < n; s++) {
		const struct unit *u = x->sl[c][s];
		unsigned int nneg = 0;

		if (!u || u->natoms[F] == A0(s)) {
			cur_set(x, s);
			continue;
		}
		need[s] = u->natoms[F] - A0(s);
		for (unsigned int a = A0(s); a < u->natoms[F]; a++, ai++) {
			const struct atom *at = &u->atoms[F][a];

			atom_slot[ai] = s;
			atom_neg[ai] = at->neg;
			nneg += at->neg;
			for (unsigned int k = 0; k < at->n; k++)
				mk[mi++] = (struct SUF(mark)){
					APFX(at)[k].addr & SUF(plen_mask)(APFX(at)[k].plen),
					APFX(at)[k].plen, (__u32)ai };
		}
		sat[s] = nneg;
		if (nneg == need[s])
			cur_set(x, s);
	}
#undef A0
	SUF(sort_marks)(mk, nmarks);

	/* preorder walk; stack of [begin, end) mark ranges of the open prefixes */
	struct {
		AT addr;
		__u32 plen;
		size_t b, e;
	} st[AW + 2];
	unsigned int sp = 0;

#define TOGGLE(m, on) do {							\
		__u32 a_ = (m)->atom, s_ = atom_slot[a_];			\
		if ((on) ? cnt[a_]++ == 0 : --cnt[a_] == 0) {			\
			/* truth of the atom flips */				\
			if (atom_neg[a_] ^ !(on))				\
				sat[s_]--;					\
			else							\
				sat[s_]++;					\
			if (sat[s_] == need[s_])				\
				cur_set(x, s_);				\
			else							\
				cur_clr(x, s_);				\
		}								\
	} while (0)

	if (!nmarks || mk[0].addr != 0 || mk[0].plen != 0) {
		__u32 id = intern(x);

		if (id == UINT32_MAX || SUF(lpm_push)(x, out, c, 0, 0, id))
			goto out;
	}
	for (size_t i = 0; i < nmarks;) {
		AT a = mk[i].addr;
		__u32 pl = mk[i].plen;
		size_t b = i;

		while (i < nmarks && mk[i].addr == a && mk[i].plen == pl)
			i++;
		while (sp && !SUF(pfx_contains)(st[sp - 1].addr, st[sp - 1].plen, a, pl)) {
			sp--;
			for (size_t k = st[sp].b; k < st[sp].e; k++)
				TOGGLE(&mk[k], false);
		}
		for (size_t k = b; k < i; k++)
			TOGGLE(&mk[k], true);
		st[sp].addr = a;
		st[sp].plen = pl;
		st[sp].b = b;
		st[sp].e = i;
		sp++;

		__u32 id = intern(x);

		if (id == UINT32_MAX || SUF(lpm_push)(x, out, c, a, pl, id))
			goto out;
	}
#undef TOGGLE
	rc = 0;
out:
	free(atom_slot);
	free(atom_neg);
	free(cnt);
	free(sat);
	free(need);
	free(mk);
	return rc;
}
