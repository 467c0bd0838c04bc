/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stable sort by integer keys (LSD radix) for the compiler's large arrays: the
 * prefixes of a 1M-entry deny list are sorted several times per compile, and
 * qsort() with a comparator took a third of an -A into such a list.
 */
#ifndef BPFIPT_RSORT_H
#define BPFIPT_RSORT_H

#include <stddef.h>
#include <linux/types.h>

/* From this many elements a sort by keys beats qsort() with a comparator; below
 * it, the callers keep qsort() */
#define RSORT_MIN	1024

/* The key of element e (at most `bits` bits wide). */
typedef __u64 (*rsort_key_fn)(const void *e);

/* Sort the n elements of sz bytes at base by key(), stable: elements of equal
 * keys keep their order, so a sort by the least significant key, then by the
 * next, ..., sorts by all of them (as a comparator that compares them in the
 * other order). 0, or with base untouched -ENOMEM, or -E2BIG when the key's bits
 * and those of an index below n take more than 64. */
int rsort(void *base, size_t n, size_t sz, rsort_key_fn key, unsigned int bits);

/* By nkeys keys, keys[0] the most significant, keys[k] of bits[k] bits: rsort()
 * by each, from the last. 0, or the first error (base is then partly sorted). */
int rsort_keys(void *base, size_t n, size_t sz, const rsort_key_fn *keys,
	       const unsigned int *bits, size_t nkeys);

/* static int name(type *p, size_t n): p sorted, stable, by its unsigned __int128
 * member `addr` (an IPv6 address in host order), then its member `len` (below
 * 256: a prefix length), with rsort_keys() over the address's four 32-bit digits
 * (key functions name##_a3, the most significant, .. name##_a0). 0 or rsort()'s
 * error. */
#define RSORT_U128_DIGIT(name, k, type, field)					\
	static __u64 name##k(const void *e)					\
	{									\
		return (__u32)(((const type *)e)->field >> (32 * (k)));		\
	}
#define RSORT_BY_ADDR128(name, type, addr, len)					\
	RSORT_U128_DIGIT(name##_a, 0, type, addr)				\
	RSORT_U128_DIGIT(name##_a, 1, type, addr)				\
	RSORT_U128_DIGIT(name##_a, 2, type, addr)				\
	RSORT_U128_DIGIT(name##_a, 3, type, addr)				\
	static __u64 name##_len(const void *e)					\
	{									\
		return ((const type *)e)->len;					\
	}									\
	static int name(type *p, size_t n)					\
	{									\
		static const rsort_key_fn k_[] = { name##_a3, name##_a2, name##_a1, \
						   name##_a0, name##_len };	\
		static const unsigned int b_[] = { 32, 32, 32, 32, 8 };		\
										\
		return rsort_keys(p, n, sizeof(*p), k_, b_, 5);			\
	}

#endif
