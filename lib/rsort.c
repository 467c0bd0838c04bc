// SPDX-License-Identifier: GPL-2.0
/*
 * Stable sort by integer keys (lib/rsort.h). Each element's key and index are
 * packed into one 64-bit word (the index in the low bits, so equal keys stay in
 * their order and no two words are equal), the words are put in order, then the
 * elements are moved once, in their new order.
 *
 * The words are ordered one of three ways. Words already in order (the compiler
 * sorts some lists that an earlier step left sorted) move nothing. Words in a few
 * ascending runs (a sorted list with a rule or two appended: the same lists on
 * the next command) are merged, run by run. Anything else is sorted LSD radix,
 * one 11-bit digit of the key at a time, the digits' counts all taken in one read.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rsort.h"

#define DIGIT_BITS	11
#define BUCKETS		(1u << DIGIT_BITS)
#define MAX_DIGITS	((64 + DIGIT_BITS - 1) / DIGIT_BITS)
/* Up to this many ascending runs are merged: 3 passes over the words at most,
 * where the radix sort takes a pass to count and one per digit of the key. */
#define MERGE_RUNS	8

/* Merge the nruns ascending runs of a[0..n) (run k starts at start[k]; start[nruns]
 * is n) pairwise, pass after pass, between a and c; returns the sorted copy. */
static __u64 *merge_runs(__u64 *a, __u64 *c, size_t n, size_t *start, unsigned int nruns)
{
	start[nruns] = n;
	while (nruns > 1) {
		unsigned int k, m = 0;
		__u64 *t;

		for (k = 0; k < nruns; k += 2) {
			size_t i = start[k], mid = k + 1 < nruns ? start[k + 1] : n;
			size_t j = mid, end = k + 1 < nruns ? start[k + 2] : n, o = i;

			while (i < mid && j < end)
				c[o++] = a[i] < a[j] ? a[i++] : a[j++];
			memcpy(c + o, a + i, (mid - i) * sizeof(*a));
			o += mid - i;
			memcpy(c + o, a + j, (end - j) * sizeof(*a));
			start[m++] = start[k];
		}
		start[m] = n;
		nruns = m;
		t = a;
		a = c;
		c = t;
	}
	return a;
}

/* LSD radix sort of a[0..n) by the key's ndig digits above the ibits of the
 * index, between a and c; returns the sorted copy (NULL: no memory). */
static __u64 *radix_sort(__u64 *a, __u64 *c, size_t n, unsigned int ibits, unsigned int ndig)
{
	size_t i, (*cnt)[BUCKETS] = calloc(MAX_DIGITS, sizeof(*cnt));
	unsigned int d;
	__u64 *t;

	if (!cnt)
		return NULL;
	for (i = 0; i < n; i++)
		for (d = 0; d < ndig; d++)
			cnt[d][(a[i] >> (ibits + d * DIGIT_BITS)) & (BUCKETS - 1)]++;
	for (d = 0; d < ndig; d++) {
		unsigned int shift = ibits + d * DIGIT_BITS;
		size_t sum = 0;

		if (cnt[d][(a[0] >> shift) & (BUCKETS - 1)] == n)
			continue;	/* one value of this digit: the order stays */
		for (i = 0; i < BUCKETS; i++) {
			size_t k = cnt[d][i];

			cnt[d][i] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			c[cnt[d][(a[i] >> shift) & (BUCKETS - 1)]++] = a[i];
		t = a;
		a = c;
		c = t;
	}
	free(cnt);
	return a;
}

int rsort(void *base, size_t n, size_t sz, rsort_key_fn key, unsigned int bits)
{
	unsigned int ibits = 1, nruns = 1;
	size_t i, start[MERGE_RUNS + 1] = { 0 };
	unsigned char *b = base, *tmp = NULL;
	__u64 *a, *c = NULL, *s = NULL;

	if (n < 2)
		return 0;
	while (ibits < 64 && (n - 1) >> ibits)
		ibits++;
	if (bits + ibits > 64)
		return -E2BIG;		/* the caller sorts another way */
	a = malloc(n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		a[i] = key(b + i * sz) << ibits | i;
		if (i && a[i - 1] > a[i] && nruns++ < MERGE_RUNS)
			start[nruns - 1] = i;
	}
	if (nruns == 1) {
		free(a);
		return 0;	/* in order already */
	}
	c = malloc(n * sizeof(*c));
	tmp = malloc(n * sz);
	if (c && tmp)
		s = nruns <= MERGE_RUNS ? merge_runs(a, c, n, start, nruns) :
			radix_sort(a, c, n, ibits, (bits + DIGIT_BITS - 1) / DIGIT_BITS);
	if (s) {
		for (i = 0; i < n; i++)
			memcpy(tmp + i * sz, b + (s[i] & ((1ULL << ibits) - 1)) * sz, sz);
		memcpy(b, tmp, n * sz);
	}
	free(a);
	free(c);
	free(tmp);
	return s ? 0 : -ENOMEM;
}

/* Whether base is in order by all the keys: each rsort() below sees one key
 * alone, and a list sorted by several is rarely sorted by its last. */
static bool keys_in_order(const unsigned char *b, size_t n, size_t sz,
			  const rsort_key_fn *keys, size_t nkeys)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = 0; k < nkeys; k++) {
			__u64 x = keys[k](b + (i - 1) * sz), y = keys[k](b + i * sz);

			if (x > y)
				return false;
			if (x < y)
				break;
		}
	return true;
}

int rsort_keys(void *base, size_t n, size_t sz, const rsort_key_fn *keys,
	       const unsigned int *bits, size_t nkeys)
{
	int r;

	if (keys_in_order(base, n, sz, keys, nkeys))
		return 0;
	while (nkeys--)
		if ((r = rsort(base, n, sz, keys[nkeys], bits[nkeys])))
			return r;
	return 0;
}
