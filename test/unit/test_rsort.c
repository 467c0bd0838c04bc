// SPDX-License-Identifier: GPL-2.0
/*
 * lib/rsort.c: the sort by keys must give exactly what a stable sort with the
 * equivalent comparator gives (the compiler's output is compared by digest).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rsort.h"

struct elem {
	__u32 hi, lo;		/* the key: hi, then lo */
	__u32 seq;		/* the input order: ties must keep it */
};

static unsigned int seed = 12345;

static unsigned int rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static __u64 key_lo(const void *e)
{
	return ((const struct elem *)e)->lo;
}

static __u64 key_hi(const void *e)
{
	return ((const struct elem *)e)->hi;
}

static int cmp_stable(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* n elements whose keys take `range` values per field (few: many ties) */
static void check(size_t n, __u32 range_hi, __u32 range_lo)
{
	struct elem *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		a[i] = (struct elem){ rnd() % range_hi, rnd() % range_lo, (__u32)i };
	memcpy(b, a, n * sizeof(*a));
	qsort(b, n, sizeof(*b), cmp_stable);
	/* least significant key first, then the next: stable passes */
	ck_assert_int_eq(rsort(a, n, sizeof(*a), key_lo, 32), 0);
	ck_assert_int_eq(rsort(a, n, sizeof(*a), key_hi, 32), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(!memcmp(&a[i], &b[i], sizeof(a[i])),
			      "n %zu: element %zu is (%u, %u, #%u), expected (%u, %u, #%u)", n, i,
			      a[i].hi, a[i].lo, a[i].seq, b[i].hi, b[i].lo, b[i].seq);
	free(a);
	free(b);
}

START_TEST(t_orders)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 1023, 1024, 2049, 100000 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		check(sizes[k], 0xffffffffu, 0xffffffffu);	/* few ties */
		check(sizes[k], 3, 5);				/* mostly ties */
		check(sizes[k], 1, 1u << 31);			/* one value of hi */
		check(sizes[k], 2048, 1);			/* one value of lo */
	}
}
END_TEST

static int cmp_hi_seq(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* nruns ascending runs one after the other (each sorted by hi, ties in input
 * order), or with nruns 0 the elements in descending order: the sort's shortcuts
 * for words in order and in a few runs must give what the radix sort gives */
static void check_runs(size_t n, unsigned int nruns, __u32 range)
{
	struct elem *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));
	size_t i, from = 0;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (i = 0; i < n; i++)
		a[i] = (struct elem){ nruns ? rnd() % range : (__u32)(n - i) / 2, 0, 0 };
	for (unsigned int r = 1; r <= nruns; r++) {
		size_t to = r == nruns ? n : from + rnd() % (n - from + 1);

		qsort(a + from, to - from, sizeof(*a), cmp_hi_seq);	/* seq all 0 */
		from = to;
	}
	for (i = 0; i < n; i++)
		a[i].seq = (__u32)i;
	memcpy(b, a, n * sizeof(*a));
	qsort(b, n, sizeof(*b), cmp_hi_seq);
	ck_assert_int_eq(rsort(a, n, sizeof(*a), key_hi, 32), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(!memcmp(&a[i], &b[i], sizeof(a[i])),
			      "n %zu, %u runs: element %zu is (%u, #%u), expected (%u, #%u)", n,
			      nruns, i, a[i].hi, a[i].seq, b[i].hi, b[i].seq);
	free(a);
	free(b);
}

START_TEST(t_runs)
{
	static const size_t sizes[] = { 2, 3, 17, 1024, 5000 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (unsigned int r = 0; r <= 12; r++) {
			check_runs(sizes[k], r, 0xffffffffu);
			check_runs(sizes[k], r, 7);		/* ties across runs */
		}
}
END_TEST

/* a key too wide for the index beside it: refused, the array untouched */
START_TEST(t_too_wide)
{
	struct elem a[3] = { { 2, 0, 0 }, { 1, 0, 1 }, { 0, 0, 2 } }, b[3];

	memcpy(b, a, sizeof(a));
	ck_assert_int_eq(rsort(a, 3, sizeof(a[0]), key_hi, 63), -E2BIG);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
	ck_assert_int_eq(rsort(a, 3, sizeof(a[0]), key_hi, 62), 0);
	ck_assert_uint_eq(a[0].hi, 0);
	ck_assert_uint_eq(a[2].hi, 2);
}
END_TEST

/* rsort_keys() by a 128-bit address then a length (RSORT_BY_ADDR128), against
 * qsort() by the same order with the input position as the last key */
struct a6 {
	unsigned __int128 a;
	__u32 len, seq;
};

RSORT_BY_ADDR128(a6_sort, struct a6, a, len)

static int cmp_a6(const void *x, const void *y)
{
	const struct a6 *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->len != q->len)
		return p->len < q->len ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

START_TEST(t_keys128)
{
	size_t n = 5000, i;
	struct a6 *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));

	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_nonnull(w);
	for (i = 0; i < n; i++) {
		/* few values per digit, so that every digit decides somewhere */
		v[i].a = 0;
		for (int d = 0; d < 4; d++)
			v[i].a = v[i].a << 32 | (rnd() % 3) << (rnd() % 32);
		v[i].len = rnd() % 4;
		v[i].seq = (__u32)i;
	}
	memcpy(w, v, n * sizeof(*v));
	ck_assert_int_eq(a6_sort(v, n), 0);
	qsort(w, n, sizeof(*w), cmp_a6);
	for (i = 0; i < n; i++)
		ck_assert_msg(v[i].seq == w[i].seq, "element %zu: %u, expected %u", i, v[i].seq,
			      w[i].seq);
	/* sorted input is left as it is (rsort_keys() looks at all the keys first);
	 * one pair of neighbours with different keys swapped, the address or the
	 * length deciding, is sorted again */
	for (int t = 0; t < 200; t++) {
		size_t j = 1 + rnd() % (n - 1);

		while (j < n && v[j - 1].a == v[j].a && v[j - 1].len == v[j].len)
			j++;
		if (j == n || ((v[j - 1].a == v[j].a) != (t % 2 == 0)))
			continue;
		struct a6 x = v[j - 1];

		v[j - 1] = v[j];
		v[j] = x;
		memcpy(w, v, n * sizeof(*v));
		ck_assert_int_eq(a6_sort(v, n), 0);
		qsort(w, n, sizeof(*w), cmp_a6);
		for (i = 0; i < n; i++)
			ck_assert_msg(v[i].seq == w[i].seq, "swap %zu: element %zu: %u, expected %u",
				      j, i, v[i].seq, w[i].seq);
	}
	free(v);
	free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rsort");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_orders);
	tcase_add_test(tc, t_runs);
	tcase_add_test(tc, t_too_wide);
	tcase_add_test(tc, t_keys128);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
