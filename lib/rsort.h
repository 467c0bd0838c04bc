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

#endif
