/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address sets (dataplane/bpfipt.h, "Address sets"): prefixes flattened into
 * sorted disjoint intervals, and the B+-tree pages the data plane searches.
 */
#ifndef CP_IVAL_H
#define CP_IVAL_H

#include <stddef.h>
#include <linux/bpf.h>
#include "bpfipt.h"
#include "compile.h"

/* Interval i is [start[i], start[i + 1]) (the last one ends at 255.255.255.255)
 * and carries val[i]; start[0] = 0; no two neighbours carry the same value. */
struct cp_ival {
	__u32 *start, *val;
	size_t n;
};

/* The set of the n prefixes e (their key is ignored): an address gets the value
 * of its longest matching prefix (of equal prefixes the later one), else
 * BPFIPT_IVAL_NONE. 0 or -ENOMEM. */
int cp_ival_flatten(const struct cp_lpm_entry *e, size_t n, struct cp_ival *iv);
void cp_ival_free(struct cp_ival *iv);

/* A small set: the entries of the window it takes in a shared page (4..128, a
 * power of 2); 0: it takes whole pages. */
size_t cp_ival_window(const struct cp_ival *iv);

/* Pages the tree of iv takes (>= 1), or 0 when it needs more than
 * BPFIPT_IVAL_MAX_DEPTH levels. */
size_t cp_ival_pages(const struct cp_ival *iv);

/* Write the tree of iv into pages[first, first + cp_ival_pages(iv)) (the root
 * last); returns its descriptor. */
__u32 cp_ival_build(const struct cp_ival *iv, struct bpfipt_ival_page *pages, __u32 first);

/* Write a small set into its window: entries [off, off + cp_ival_window(iv)) of
 * pages[page], off a multiple of the window; returns its descriptor. */
__u32 cp_ival_build_window(const struct cp_ival *iv, struct bpfipt_ival_page *pages,
			   __u32 page, size_t off);

/* The data plane's search, in C: the value of addr (host order) in set desc. */
__u32 cp_ival_find(const struct bpfipt_ival_page *pages, __u32 desc, __u32 addr);

/* The same for IPv6 sets: 128-bit starts (host order), struct bpfipt_ival6_page. */
struct cp_ival6 {
	unsigned __int128 *start;
	__u32 *val;
	size_t n;
};

int cp_ival_flatten6(const struct cp_lpm_entry6 *e, size_t n, struct cp_ival6 *iv);
void cp_ival_free6(struct cp_ival6 *iv);
size_t cp_ival_window6(const struct cp_ival6 *iv);
size_t cp_ival_pages6(const struct cp_ival6 *iv);
__u32 cp_ival_build6(const struct cp_ival6 *iv, struct bpfipt_ival6_page *pages, __u32 first);
__u32 cp_ival_build_window6(const struct cp_ival6 *iv, struct bpfipt_ival6_page *pages,
			    __u32 page, size_t off);
__u32 cp_ival_find6(const struct bpfipt_ival6_page *pages, __u32 desc, unsigned __int128 addr);

#endif
