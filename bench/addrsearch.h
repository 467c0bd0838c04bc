/* SPDX-License-Identifier: GPL-2.0 */
/*
 * addrsearch: the layout shared by bench/addrsearch.bpf.c and bench/addrsearch.c.
 * An address field's prefixes flattened into sorted disjoint intervals: each
 * interval [start[i], start[i+1]) carries the value of its longest matching
 * prefix (0: none). Two levels: pages of AS_PAGE starts+values (an ARRAY map)
 * and one top value holding the first start of each page.
 */
#ifndef BPFIPT_ADDRSEARCH_H
#define BPFIPT_ADDRSEARCH_H

#include <linux/types.h>

#define AS_PAGE_SHIFT 8
#define AS_PAGE (1u << AS_PAGE_SHIFT)	/* interval starts per page */
#define AS_TOP_SHIFT 13
#define AS_TOP (1u << AS_TOP_SHIFT)	/* pages: 2M intervals, 2N+1 for N = 1M */

struct as_page {
	__u32 start[AS_PAGE];	/* host order, ascending; padding 0xffffffff */
	__u32 val[AS_PAGE];
};

struct as_top {
	__u32 start[AS_TOP];	/* first start of each page; padding 0xffffffff */
};

/* The addresses the loop programs search one after the other (host order). */
#define AS_ADDRS 65536
struct as_addrs {
	__u32 a[AS_ADDRS];
};

struct as_lpm_key {
	__u32 prefixlen;
	__be32 addr;
};

#endif
