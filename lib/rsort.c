// SPDX-License-Identifier: GPL-2.0
/*
 * Stable LSD radix sort by integer keys (lib/rsort.h). Each element's key and
 * index are packed into one 64-bit word (the index in the low bits, so equal
 * keys stay in their order), the words are sorted one 11-bit digit of the key
 * at a time (the digits' counts all taken in one read), then the elements are
 * moved once, in their new order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rsort.h"

#define DIGIT_BITS	11
#define BUCKETS		(1u << DIGIT_BITS)
#define MAX_DIGITS	((64 + DIGIT_BITS - 1) / DIGIT_BITS)

int rsort(void *base, size_t n, size_t sz, rsort_key_fn key, unsigned int bits)
{
	unsigned int ibits = 1, ndig, d;
	unsigned char *b = base, *tmp;
	size_t i, (*cnt)[BUCKETS];
	__u64 *a, *c, *t;

	if (n < 2)
		return 0;
	while (ibits < 64 && (n - 1) >> ibits)
		ibits++;
	if (bits + ibits > 64)
		return -E2BIG;		/* the caller sorts another way */
	ndig = (bits + DIGIT_BITS - 1) / DIGIT_BITS;
	a = malloc(n * sizeof(*a));
	c = malloc(n * sizeof(*c));
	cnt = calloc(MAX_DIGITS, sizeof(*cnt));
	tmp = malloc(n * sz);
	if (!a || !c || !cnt || !tmp) {
		free(a);
		free(c);
		free(cnt);
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		a[i] = key(b + i * sz) << ibits | i;
		for (d = 0; d < ndig; d++)
			cnt[d][(a[i] >> (ibits + d * DIGIT_BITS)) & (BUCKETS - 1)]++;
	}
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
	for (i = 0; i < n; i++)
		memcpy(tmp + i * sz, b + (a[i] & ((1ULL << ibits) - 1)) * sz, sz);
	memcpy(b, tmp, n * sz);
	free(a);
	free(c);
	free(cnt);
	free(tmp);
	return 0;
}
