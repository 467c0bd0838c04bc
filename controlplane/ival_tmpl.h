/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address sets for one address width: included twice by controlplane/ival.c,
 * once per family, with
 *   AW        the width in bits (32, 128)
 *   AT        an unsigned integer type of that width (host order)
 *   SUF(n)    n with the family's suffix (n for IPv4, n##6)
 *   ENTRY     the compiler's prefix entry (struct cp_lpm_entry(6)), ADDR(e) its
 *             address as an AT
 *   IV, PAGE  the flattened set (struct cp_ival(6)) and its data plane's page
 *   KEY(pg, i), SET_KEY(pg, i, v)   key i of a page
 *   SEP(pg, j), SET_SEP(pg, j, v)   separator j of a page
 * so the IPv4 code is the one it always was and IPv6 gets the same trees. The
 * parameters are undefined at the end.
 */

struct SUF(pfx) {
	AT lo, hi;
	__u32 val, plen, idx;
};

/* (lo, plen, idx): a prefix comes after every prefix that holds it, equal
 * prefixes in their given order */
static int SUF(pfx_cmp)(const void *a, const void *b)
{
	const struct SUF(pfx) *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* From x on, the value is v: intervals stay disjoint, neighbours differ. */
static void SUF(emit)(IV *iv, AT x, __u32 v)
{
	size_t m = iv->n;

	if (m && iv->start[m - 1] == x) {
		iv->val[m - 1] = v;
		if (m >= 2 && iv->val[m - 2] == v)
			iv->n--;
		return;
	}
	if (m && iv->val[m - 1] == v)
		return;
	iv->start[m] = x;
	iv->val[m] = v;
	iv->n++;
}

/*
 * One sweep over the prefixes in (lo, plen) order with a stack of those that
 * hold the current point (prefixes nest or are disjoint): before a prefix
 * starts, the stacked ones that end before it are closed (the value falls back
 * to the next one down); it then opens with its own value.
 */
int SUF(cp_ival_flatten)(const ENTRY *e, size_t n, IV *iv)
{
	struct SUF(pfx) *p = malloc((n ? n : 1) * sizeof(*p));
	struct SUF(pfx) **stk = malloc((n ? n : 1) * sizeof(*stk));
	size_t i, sp = 0;

	memset(iv, 0, sizeof(*iv));
	iv->start = malloc((2 * n + 1) * sizeof(AT));
	iv->val = malloc((2 * n + 1) * sizeof(__u32));
	if (!p || !stk || !iv->start || !iv->val) {
		free(p);
		free(stk);
		SUF(cp_ival_free)(iv);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		__u32 plen = e[i].plen > AW ? AW : e[i].plen;
		AT mask = plen ? ~(AT)0 << (AW - plen) : 0;

		p[i].lo = ADDR(&e[i]) & mask;
		p[i].hi = p[i].lo | ~mask;
		p[i].val = e[i].value;
		p[i].plen = plen;
		p[i].idx = (__u32)i;
	}
	/* idx is the order of p: a stable sort by (lo, plen) is pfx_cmp()'s */
	if (n < RSORT_MIN || SUF(sort_pfx)(p, n))
		qsort(p, n, sizeof(*p), SUF(pfx_cmp));
	SUF(emit)(iv, 0, BPFIPT_IVAL_NONE);
	for (i = 0; i <= n; i++) {
		/* i == n: close everything; a prefix ending at the last address needs no end */
		while (sp && (i == n || stk[sp - 1]->hi < p[i].lo)) {
			struct SUF(pfx) *t = stk[--sp];

			if (t->hi != ~(AT)0)
				SUF(emit)(iv, t->hi + 1, sp ? stk[sp - 1]->val : BPFIPT_IVAL_NONE);
		}
		if (i == n)
			break;
		stk[sp++] = &p[i];
		SUF(emit)(iv, p[i].lo, p[i].val);
	}
	free(stk);
	free(p);
	return 0;
}

void SUF(cp_ival_free)(IV *iv)
{
	free(iv->start);
	free(iv->val);
	memset(iv, 0, sizeof(*iv));
}

size_t SUF(cp_ival_window)(const IV *iv)
{
	return window_of(iv->n);
}

size_t SUF(cp_ival_pages)(const IV *iv)
{
	return pages_of(iv->n);
}

/* Entries [0, w) of page pg from k, v[0, c) at off, the rest padded (bpfipt.h) */
static void SUF(fill)(PAGE *pg, size_t off, const AT *k, const __u32 *v, size_t c, size_t w)
{
	size_t i;

	for (i = 0; i < c; i++) {
		SET_KEY(pg, off + i, k[i]);
		pg->val[off + i] = v[i];
	}
	for (; i < w; i++) {
		SET_KEY(pg, off + i, ~(AT)0);
		pg->val[off + i] = v[c - 1];
	}
	/* the separators of what was written (a window of 4 or 8 keys has one
	 * only when it starts a group; its search never reads them) */
	for (i = (off + BPFIPT_IVAL_SEP - 1) / BPFIPT_IVAL_SEP * BPFIPT_IVAL_SEP; i < off + w;
	     i += BPFIPT_IVAL_SEP)
		SET_SEP(pg, i / BPFIPT_IVAL_SEP, KEY(pg, i));
}

static const AT SUF(none_start) = 0;

__u32 SUF(cp_ival_build)(const IV *iv, PAGE *pages, __u32 first)
{
	const AT *k = iv->n ? iv->start : &SUF(none_start);
	const __u32 *v = iv->n ? iv->val : &none_val;
	AT kbuf[BPFIPT_IVAL_FANOUT];
	__u32 vbuf[BPFIPT_IVAL_FANOUT];
	size_t n = iv->n ? iv->n : 1, pg = first, lvl0 = first, i, c;
	__u32 depth;

	/* leaves from the intervals */
	for (i = 0; i < n; i += c, pg++) {
		c = n - i < BPFIPT_IVAL_FANOUT ? n - i : BPFIPT_IVAL_FANOUT;
		SUF(fill)(&pages[pg], 0, k + i, v + i, c, BPFIPT_IVAL_FANOUT);
	}
	depth = 1;
	n = pg - lvl0;
	/* each inner level: the first key of every page of the level below */
	while (n > 1) {
		size_t below = lvl0;

		lvl0 = pg;
		for (i = 0; i < n; i += c, pg++) {
			size_t j;

			c = n - i < BPFIPT_IVAL_FANOUT ? n - i : BPFIPT_IVAL_FANOUT;
			for (j = 0; j < c; j++) {
				kbuf[j] = KEY(&pages[below + i + j], 0);
				vbuf[j] = (__u32)(below + i + j);
			}
			SUF(fill)(&pages[pg], 0, kbuf, vbuf, c, BPFIPT_IVAL_FANOUT);
		}
		n = pg - lvl0;
		depth++;
	}
	return desc_of((__u32)lvl0, 0, log2_of(BPFIPT_IVAL_FANOUT), depth);
}

__u32 SUF(cp_ival_build_window)(const IV *iv, PAGE *pages, __u32 page, size_t off)
{
	const AT *k = iv->n ? iv->start : &SUF(none_start);
	const __u32 *v = iv->n ? iv->val : &none_val;
	size_t w = SUF(cp_ival_window)(iv);

	SUF(fill)(&pages[page], off, k, v, iv->n ? iv->n : 1, w);
	return desc_of(page, (__u32)(off / w), log2_of(w), 1);
}

__u32 SUF(cp_ival_find)(const PAGE *pages, __u32 desc, AT addr)
{
	__u32 depth = desc >> BPFIPT_IVAL_DEPTH_SHIFT, idx = desc & BPFIPT_IVAL_PAGE_MASK;
	__u32 wl = (desc >> BPFIPT_IVAL_WIN_SHIFT) & 15, d, i, w, step;

	if (!depth || wl > 8)
		return BPFIPT_IVAL_NONE;
	w = 1u << wl;
	i = ((desc >> BPFIPT_IVAL_IDX_SHIFT) & 63) << wl;
	for (d = 0; d < depth; d++) {
		const PAGE *pg = &pages[idx];

		/* as the data plane's: the first steps on the separators */
		for (step = BPFIPT_IVAL_FANOUT / 2; step; step >>= 1) {
			__u32 j = (i + step) & (BPFIPT_IVAL_FANOUT - 1);

			if (step < w && (step >= BPFIPT_IVAL_SEP ? SEP(pg, j / BPFIPT_IVAL_SEP)
								 : KEY(pg, j)) <= addr)
				i += step;
		}
		idx = pg->val[i & (BPFIPT_IVAL_FANOUT - 1)];
		i = 0;
		w = BPFIPT_IVAL_FANOUT;
	}
	return idx;
}

#undef AW
#undef AT
#undef SUF
#undef ENTRY
#undef ADDR
#undef IV
#undef PAGE
#undef KEY
#undef SET_KEY
#undef SEP
#undef SET_SEP
