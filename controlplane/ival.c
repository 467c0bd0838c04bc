// SPDX-License-Identifier: GPL-2.0
/*
 * Address sets: prefixes -> sorted disjoint intervals -> B+-tree pages
 * (dataplane/bpfipt.h, "Address sets"; the search: bpfipt_ival_find() and
 * bpfipt_ival6_find() in dataplane/bpfipt.bpf.c, cp_ival_find() here). The code
 * of both widths is controlplane/ival_tmpl.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "be128.h"
#include "ival.h"
#include "rsort.h"

static size_t up(size_t n)
{
	return (n + BPFIPT_IVAL_FANOUT - 1) / BPFIPT_IVAL_FANOUT;
}

/* A set of n intervals: the entries of its window in a shared page (4..128, a
 * power of 2), 0 when it takes whole pages. */
static size_t window_of(size_t n)
{
	size_t w = 4;

	if (!n)
		n = 1;
	if (n > BPFIPT_IVAL_FANOUT / 2)
		return 0;
	while (w < n)
		w <<= 1;
	return w;
}

/* The pages of a tree of n intervals, 0 past BPFIPT_IVAL_MAX_DEPTH levels. */
static size_t pages_of(size_t n)
{
	size_t total = 0;
	int depth = 0;

	if (!n)
		n = 1;
	do {
		n = up(n);
		total += n;
		depth++;
	} while (n > 1);
	return depth > BPFIPT_IVAL_MAX_DEPTH ? 0 : total;
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

static const __u32 none_val = BPFIPT_IVAL_NONE;

/* ---- IPv4 ---- */

struct pfx;
static int sort_pfx(struct pfx *p, size_t n);

#define AW 32
#define AT __u32
#define SUF(n) n
#define ENTRY struct cp_lpm_entry
#define ADDR(e) ntohl((e)->addr)
#define IV struct cp_ival
#define PAGE struct bpfipt_ival_page
#define KEY(pg, i) ((pg)->key[i])
#define SET_KEY(pg, i, v) ((pg)->key[i] = (v))
#define SEP(pg, j) ((pg)->sep[j])
#define SET_SEP(pg, j, v) ((pg)->sep[j] = (v))
#include "ival_tmpl.h"

static __u64 pfx_key(const void *e)
{
	const struct pfx *x = e;

	return (__u64)x->lo << 6 | x->plen;
}

/* 0, or not sorted (the caller's qsort() then does it) */
static int sort_pfx(struct pfx *p, size_t n)
{
	return rsort(p, n, sizeof(*p), pfx_key, 38);
}

/* ---- IPv6 ---- */

struct pfx6;
static int sort_pfx6(struct pfx6 *p, size_t n);

#define AW 128
#define AT unsigned __int128
#define SUF(n) n##6
#define ENTRY struct cp_lpm_entry6
#define ADDR(e) ipt_be128((e)->addr)
#define IV struct cp_ival6
#define PAGE struct bpfipt_ival6_page
#define KEY(pg, i) ((AT)(pg)->key[i][1] << 64 | (pg)->key[i][0])
#define SET_KEY(pg, i, v)							\
	((pg)->key[i][0] = (__u64)(v), (pg)->key[i][1] = (__u64)((v) >> 64))
#define SEP(pg, j) ((AT)(pg)->sep[j][1] << 64 | (pg)->sep[j][0])
#define SET_SEP(pg, j, v)							\
	((pg)->sep[j][0] = (__u64)(v), (pg)->sep[j][1] = (__u64)((v) >> 64))
#include "ival_tmpl.h"

/* By (lo, plen), stable (lib/rsort.h). */
RSORT_BY_ADDR128(sort_pfx6, struct pfx6, lo, plen)
