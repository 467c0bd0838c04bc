/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The search of an address set (dataplane/bpfipt.h, "Address sets"): the body of
 * bpfipt_ival_find() and bpfipt_ival6_find() in bpfipt.bpf.c, and of the
 * benchmark that searches the same pages with varied addresses
 * (bench/addrsearch.bpf.c). Its C twin, for the tests: cp_ival_find() in
 * controlplane/ival_tmpl.h.
 */
#ifndef BPFIPT_IVAL_BPF_H
#define BPFIPT_IVAL_BPF_H

#include "bpfipt.h"

/* v as the verifier sees it: any value (x is unknown to it, v ^ x ^ x is v). It
 * follows both outcomes of every binary step with exact indexes, 255 states a
 * level; told to forget the index halfway (two ALU ops), 30: bpfipt_ival_find()
 * 11.4k -> 1.0k instructions, bpfipt_ival6_find() 25.8k -> 2.4k. */
#define FORGET(v, x) asm volatile("%0 ^= %1; %0 ^= %1" : "+r"(v) : "r"(x))

/*
 * The last key <= the address inside the window [i, i + w) of page pg, in 8
 * fixed binary steps, and its value. The steps of BPFIPT_IVAL_SEP or more read
 * the page's separators (sep[j] is key[j * BPFIPT_IVAL_SEP]: one cache line),
 * the last four the keys of one group (another); LE(pg, j) and LES(pg, j) say
 * "key j <= the address" and "separator j <= the address". The index is masked
 * so the verifier sees it inside the page. SEP selects the separators; 0 reads
 * the keys at every step (the benchmark's comparison).
 */
#define IVAL_STEPS(pg, i, w, LE, LES, SEP, x)					\
	({									\
		__u32 step_, j_;						\
		_Pragma("unroll")						\
		for (step_ = BPFIPT_IVAL_FANOUT / 2; step_; step_ >>= 1) {	\
			j_ = (i + step_) & (BPFIPT_IVAL_FANOUT - 1);		\
			if (step_ < (w) &&					\
			    (SEP && step_ >= BPFIPT_IVAL_SEP ?			\
				     LES(pg, j_ / BPFIPT_IVAL_SEP) : LE(pg, j_))) \
				i += step_;					\
			if (step_ == 16)					\
				FORGET(i, x);					\
		}								\
		pg->val[i & (BPFIPT_IVAL_FANOUT - 1)];				\
	})

/*
 * The value of an address in set desc of the pages' map m (the generation's
 * inner map), BPFIPT_IVAL_NONE without one. Per level one page lookup and its
 * steps: the root's window first, then whole pages (key[first] <= the address
 * holds on every page the search reaches, so i stays on a key <= it).
 */
#define IVAL_FIND(m, desc, page_t, LE, LES, SEP)				\
	({									\
		__u32 depth_ = (desc) >> BPFIPT_IVAL_DEPTH_SHIFT;		\
		__u32 idx_ = (desc) & BPFIPT_IVAL_PAGE_MASK, lvl_, i_, w_;	\
		__u32 wl_ = ((desc) >> BPFIPT_IVAL_WIN_SHIFT) & 15;		\
		__u32 r_ = BPFIPT_IVAL_NONE;					\
		page_t *pg_;							\
										\
		if (depth_ && wl_ <= 8 && (pg_ = bpf_map_lookup_elem(m, &idx_))) { \
			/* the root: its window */				\
			w_ = 1u << wl_;						\
			i_ = (((desc) >> BPFIPT_IVAL_IDX_SHIFT) & 63) << wl_;	\
			idx_ = IVAL_STEPS(pg_, i_, w_, LE, LES, SEP, (desc));	\
			/* the levels below, whole pages (a bounded loop: depth <= 3) */ \
			for (lvl_ = 1; lvl_ < depth_; lvl_++) {			\
				pg_ = bpf_map_lookup_elem(m, &idx_);		\
				if (!pg_)					\
					break;					\
				i_ = 0;						\
				idx_ = IVAL_STEPS(pg_, i_, BPFIPT_IVAL_FANOUT, LE, LES, \
						  SEP, (desc));			\
			}							\
			if (lvl_ >= depth_)					\
				r_ = idx_;					\
		}								\
		r_;								\
	})

/* IPv4: a, the address in host order. */
#define IVAL_LE4(pg, j) ((pg)->key[j] <= a_)
#define IVAL_LES4(pg, j) ((pg)->sep[j] <= a_)
#define IVAL_FIND4_SEP(m, desc, a, SEP)						\
	({									\
		__u32 a_ = (a);							\
		IVAL_FIND(m, desc, struct bpfipt_ival_page, IVAL_LE4, IVAL_LES4, SEP); \
	})
#define IVAL_FIND4(m, desc, a) IVAL_FIND4_SEP(m, desc, a, 1)

/* IPv6: hi and lo, the address's high and low 64 bits in host order. */
#define IVAL_LE6_(k) ((k)[1] < hi_ || ((k)[1] == hi_ && (k)[0] <= lo_))
#define IVAL_LE6(pg, j) IVAL_LE6_((pg)->key[j])
#define IVAL_LES6(pg, j) IVAL_LE6_((pg)->sep[j])
#define IVAL_FIND6(m, desc, hi, lo)						\
	({									\
		__u64 hi_ = (hi), lo_ = (lo);					\
		IVAL_FIND(m, desc, struct bpfipt_ival6_page, IVAL_LE6, IVAL_LES6, 1); \
	})

#endif
