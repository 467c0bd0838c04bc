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

/* One page: keys and values k, v[0, c), the tail padded (see bpfipt.h). */
static void page_fill(struct bpfipt_ival_page *pg, const __u32 *k, const __u32 *v, size_t c)
{
	size_t i;

	memcpy(pg->key, k, c * sizeof(__u32));
	memcpy(pg->val, v, c * sizeof(__u32));
	for (i = c; i < BPFIPT_IVAL_FANOUT; i++) {
		pg->key[i] = ~0u;
		pg->val[i] = v[c - 1];
	}
}

__u32 cp_ival_build(const struct cp_ival *iv, struct bpfipt_ival_page *pages, __u32 first)
{
	static const __u32 none_start = 0, none_val = BPFIPT_IVAL_NONE;
	const __u32 *k = iv->n ? iv->start : &none_start, *v = iv->n ? iv->val : &none_val;
	__u32 kbuf[BPFIPT_IVAL_FANOUT], vbuf[BPFIPT_IVAL_FANOUT];
	size_t n = iv->n ? iv->n : 1, pg = first, lvl0 = first, i, c;
	__u32 depth = 0;

	/* leaves from the intervals */
	for (i = 0; i < n; i += c, pg++) {
		c = n - i < BPFIPT_IVAL_FANOUT ? n - i : BPFIPT_IVAL_FANOUT;
		page_fill(&pages[pg], k + i, v + i, c);
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
			page_fill(&pages[pg], kbuf, vbuf, c);
		}
		n = pg - lvl0;
		depth++;
	}
	return (__u32)lvl0 | depth << BPFIPT_IVAL_DEPTH_SHIFT;
}

__u32 cp_ival_find(const struct bpfipt_ival_page *pages, __u32 desc, __u32 addr)
{
	__u32 depth = desc >> BPFIPT_IVAL_DEPTH_SHIFT, idx = desc & BPFIPT_IVAL_ROOT_MASK, d;

	if (!depth || depth > BPFIPT_IVAL_MAX_DEPTH)
		return BPFIPT_IVAL_NONE;
	for (d = 0; d < depth; d++) {
		const struct bpfipt_ival_page *pg = &pages[idx];
		__u32 i = 0, step;

		for (step = BPFIPT_IVAL_FANOUT / 2; step; step >>= 1)
			if (pg->key[i + step] <= addr)
				i += step;
		idx = pg->val[i];
	}
	return idx;
}
