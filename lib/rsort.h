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

/* Key functions name##3 (most significant) .. name##0: the 32-bit digits of the
 * unsigned __int128 member `field` of `type` (an IPv6 address in host order). */
#define RSORT_U128_DIGIT(name, k, type, field)					\
	static __u64 name##k(const void *e)					\
	{									\
		return (__u32)(((const type *)e)->field >> (32 * (k)));		\
	}
#define RSORT_U128_DIGITS(name, type, field)					\
	RSORT_U128_DIGIT(name, 0, type, field)					\
	RSORT_U128_DIGIT(name, 1, type, field)					\
	RSORT_U128_DIGIT(name, 2, type, field)					\
	RSORT_U128_DIGIT(name, 3, type, field)

#endif
