// SPDX-License-Identifier: GPL-2.0
/*
 * Address sets: prefixes -> sorted disjoint intervals -> B+-tree pages
 * (dataplane/bpfipt.h, "Address sets"; the search: bpfipt_ival_find() in
 * dataplane/bpfipt.bpf.c, cp_ival_find() here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ival.h"
#include "rsort.h"

struct pfx {
	__u32 lo, hi, val;
	__u32 plen, idx;
};

/* (lo, plen, idx): a prefix comes after every prefix that holds it, equal
 * prefixes in their given order */
static int pfx_cmp(const void *a, const void *b)
{
	const struct pfx *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static __u64 pfx_key(const void *e)
{
	const struct pfx *x = e;

	return (__u64)x->lo << 6 | x->plen;
}

/* From x on, the value is v: intervals stay disjoint, neighbours differ. */
static void emit(struct cp_ival *iv, __u32 x, __u32 v)
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
int cp_ival_flatten(const struct cp_lpm_entry *e, size_t n, struct cp_ival *iv)
{
	struct pfx *p = malloc((n ? n : 1) * sizeof(*p));
	struct pfx **stk = malloc((n ? n : 1) * sizeof(*stk));
	size_t i, sp = 0;

	memset(iv, 0, sizeof(*iv));
	iv->start = malloc((2 * n + 1) * sizeof(__u32));
	iv->val = malloc((2 * n + 1) * sizeof(__u32));
	if (!p || !stk || !iv->start || !iv->val) {
		free(p);
		free(stk);
		cp_ival_free(iv);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		__u32 plen = e[i].plen > 32 ? 32 : e[i].plen;
		__u32 mask = plen ? ~0u << (32 - plen) : 0;

		p[i].lo = ntohl(e[i].addr) & mask;
		p[i].hi = p[i].lo | ~mask;
		p[i].val = e[i].value;
		p[i].plen = plen;
		p[i].idx = i;
	}
	/* idx is the order of p: a stable sort by (lo, plen) is pfx_cmp()'s */
	if (n < RSORT_MIN || rsort(p, n, sizeof(*p), pfx_key, 38))
		qsort(p, n, sizeof(*p), pfx_cmp);
	emit(iv, 0, BPFIPT_IVAL_NONE);
	for (i = 0; i <= n; i++) {
		/* i == n: close everything; a prefix ending at 255.255.255.255 needs no end */
		while (sp && (i == n || stk[sp - 1]->hi < p[i].lo)) {
			struct pfx *t = stk[--sp];

			if (t->hi != ~0u)
				emit(iv, t->hi + 1, sp ? stk[sp - 1]->val : BPFIPT_IVAL_NONE);
		}
		if (i == n)
			break;
		stk[sp++] = &p[i];
		emit(iv, p[i].lo, p[i].val);
	}
	free(stk);
	free(p);
	return 0;
}

void cp_ival_free(struct cp_ival *iv)
{
	free(iv->start);
	free(iv->val);
	memset(iv, 0, sizeof(*iv));
}

static size_t up(size_t n)
{
	return (n + BPFIPT_IVAL_FANOUT - 1) / BPFIPT_IVAL_FANOUT;
}

size_t cp_ival_window(const struct cp_ival *iv)
{
	size_t n = iv->n ? iv->n : 1, w = 4;

	if (n > BPFIPT_IVAL_FANOUT / 2)
		return 0;
	while (w < n)
		w <<= 1;
	return w;
}

size_t cp_ival_pages(const struct cp_ival *iv)
{
	size_t n = iv->n ? iv->n : 1, total = 0;
	int depth = 0;

	do {
		n = up(n);
		total += n;
		depth++;
	} while (n > 1);
	return depth > BPFIPT_IVAL_MAX_DEPTH ? 0 : total;
}

/* Entries [0, w) of key and val from k, v[0, c), the rest padded (see bpfipt.h). */
static void fill(__u32 *key, __u32 *val, const __u32 *k, const __u32 *v, size_t c, size_t w)
{
	size_t i;

	memcpy(key, k, c * sizeof(__u32));
	memcpy(val, v, c * sizeof(__u32));
	for (i = c; i < w; i++) {
		key[i] = ~0u;
		val[i] = v[c - 1];
	}
}

static __u32 log2_of(size_t w)
{
	__u32 l = 0;

	while ((1ul << l) < w)
		l++;
	return l;
}

static __u32 desc_of(__u32 page, __u32 index, __u32 wl, __u32 depth)
{
	return page | index << BPFIPT_IVAL_IDX_SHIFT | wl << BPFIPT_IVAL_WIN_SHIFT |
	       depth << BPFIPT_IVAL_DEPTH_SHIFT;
}

static const __u32 none_start = 0, none_val = BPFIPT_IVAL_NONE;

__u32 cp_ival_build(const struct cp_ival *iv, struct bpfipt_ival_page *pages, __u32 first)
{
	const __u32 *k = iv->n ? iv->start : &none_start, *v = iv->n ? iv->val : &none_val;
	__u32 kbuf[BPFIPT_IVAL_FANOUT], vbuf[BPFIPT_IVAL_FANOUT];
	size_t n = iv->n ? iv->n : 1, pg = first, lvl0 = first, i, c;
	__u32 depth;

	/* leaves from the intervals */
	for (i = 0; i < n; i += c, pg++) {
		c = n - i < BPFIPT_IVAL_FANOUT ? n - i : BPFIPT_IVAL_FANOUT;
		fill(pages[pg].key, pages[pg].val, k + i, v + i, c, BPFIPT_IVAL_FANOUT);
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
				kbuf[j] = pages[below + i + j].key[0];
				vbuf[j] = (__u32)(below + i + j);
			}
			fill(pages[pg].key, pages[pg].val, kbuf, vbuf, c, BPFIPT_IVAL_FANOUT);
		}
		n = pg - lvl0;
		depth++;
	}
	return desc_of((__u32)lvl0, 0, log2_of(BPFIPT_IVAL_FANOUT), depth);
}

__u32 cp_ival_build_window(const struct cp_ival *iv, struct bpfipt_ival_page *pages,
			   __u32 page, size_t off)
{
	const __u32 *k = iv->n ? iv->start : &none_start, *v = iv->n ? iv->val : &none_val;
	size_t w = cp_ival_window(iv);

	fill(pages[page].key + off, pages[page].val + off, k, v, iv->n ? iv->n : 1, w);
	return desc_of(page, (__u32)(off / w), log2_of(w), 1);
}

__u32 cp_ival_find(const struct bpfipt_ival_page *pages, __u32 desc, __u32 addr)
{
	__u32 depth = desc >> BPFIPT_IVAL_DEPTH_SHIFT, idx = desc & BPFIPT_IVAL_PAGE_MASK;
	__u32 wl = (desc >> BPFIPT_IVAL_WIN_SHIFT) & 15, d, i, w, step;

	if (!depth || wl > 8)
		return BPFIPT_IVAL_NONE;
	w = 1u << wl;
	i = ((desc >> BPFIPT_IVAL_IDX_SHIFT) & 63) << wl;
	for (d = 0; d < depth; d++) {
		const struct bpfipt_ival_page *pg = &pages[idx];

		for (step = BPFIPT_IVAL_FANOUT / 2; step; step >>= 1)
			if (step < w && pg->key[(i + step) & (BPFIPT_IVAL_FANOUT - 1)] <= addr)
				i += step;
		idx = pg->val[i & (BPFIPT_IVAL_FANOUT - 1)];
		i = 0;
		w = BPFIPT_IVAL_FANOUT;
	}
	return idx;
}
