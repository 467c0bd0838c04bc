// SPDX-License-Identifier: GPL-2.0
/*
 * Address sets (controlplane/ival.c): random prefix sets flattened into
 * intervals and written as B+-tree pages, searched (cp_ival_find, the data
 * plane's search in C) against a brute-force longest match: random addresses,
 * every prefix's first and last address and their neighbours, 0.0.0.0 and
 * 255.255.255.255; trees of depth 1, 2 and 3.
 */
#include <check.h>
#include <arpa/inet.h>
#include <stdlib.h>

#include "ival.h"

static __u64 rng = 0x2545f4914f6cdd1dull;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng >> 11);
}

static __u32 mask_of(__u8 plen)
{
	return plen ? ~0u << (32 - plen) : 0;
}

/* the longest match, by hand; of equal prefixes the later one */
static __u32 brute(const struct cp_lpm_entry *e, size_t n, __u32 a)
{
	__u32 v = BPFIPT_IVAL_NONE;
	int best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		__u32 m = mask_of(e[i].plen);

		if ((a & m) == (ntohl(e[i].addr) & m) && e[i].plen >= best) {
			best = e[i].plen;
			v = e[i].value;
		}
	}
	return v;
}

/* n prefixes; lens drawn from lens[]; some near the ends of the address space */
static void gen(struct cp_lpm_entry *e, size_t n, const __u8 *lens, size_t nlens, __u32 nvals)
{
	size_t i;

	for (i = 0; i < n; i++) {
		__u8 plen = lens[rnd() % nlens];
		__u32 a = rnd();

		switch (rnd() % 8) {
		case 0: a = 0; break;
		case 1: a = ~0u; break;
		case 2: a &= 0x00ffffff; break;
		case 3: a |= 0xff000000; break;
		}
		e[i].key = 0;
		e[i].plen = plen;
		e[i].addr = htonl(a & mask_of(plen));
		e[i].value = rnd() % nvals;
	}
}

static void probe(const struct bpfipt_ival_page *pages, __u32 desc, const struct cp_lpm_entry *e,
		  size_t n, unsigned int probes)
{
	size_t i;

	ck_assert_uint_eq(cp_ival_find(pages, desc, 0), brute(e, n, 0));
	ck_assert_uint_eq(cp_ival_find(pages, desc, ~0u), brute(e, n, ~0u));
	for (i = 0; i < n && i < probes; i++) {
		__u32 lo = ntohl(e[i].addr), hi = lo | ~mask_of(e[i].plen);
		__u32 a[4] = { lo, hi, lo - 1, hi + 1 };
		int j;

		for (j = 0; j < 4; j++)
			ck_assert_msg(cp_ival_find(pages, desc, a[j]) == brute(e, n, a[j]),
				      "address %08x: %u, expected %u", a[j],
				      cp_ival_find(pages, desc, a[j]), brute(e, n, a[j]));
	}
	for (i = 0; i < probes; i++) {
		__u32 a = rnd();

		ck_assert_uint_eq(cp_ival_find(pages, desc, a), brute(e, n, a));
	}
}

/* a small set in a window of a page full of other sets' (random) entries */
static void check_window(const struct cp_ival *iv, const struct cp_lpm_entry *e, size_t n,
			 unsigned int probes)
{
	struct bpfipt_ival_page pg[2];
	size_t w = cp_ival_window(iv), off, i;
	__u32 desc;

	for (i = 0; i < BPFIPT_IVAL_FANOUT; i++) {
		pg[1].key[i] = rnd();
		pg[1].val[i] = rnd();
	}
	for (i = 0; i < BPFIPT_IVAL_NSEP; i++)
		pg[1].sep[i] = rnd();
	off = w * (rnd() % (BPFIPT_IVAL_FANOUT / w));
	desc = cp_ival_build_window(iv, pg, 1, off);
	ck_assert_uint_eq(desc >> BPFIPT_IVAL_DEPTH_SHIFT, 1);
	ck_assert_uint_eq(desc & BPFIPT_IVAL_PAGE_MASK, 1);
	probe(pg, desc, e, n, probes);
}

static void check_set(const struct cp_lpm_entry *e, size_t n, unsigned int probes, int depth)
{
	struct bpfipt_ival_page *pages;
	struct cp_ival iv;
	size_t np, i;
	__u32 desc, first = 3;

	ck_assert_int_eq(cp_ival_flatten(e, n, &iv), 0);
	ck_assert_uint_ge(iv.n, 1);
	ck_assert_uint_eq(iv.start[0], 0);
	for (i = 1; i < iv.n; i++) {
		ck_assert_uint_gt(iv.start[i], iv.start[i - 1]);
		ck_assert_uint_ne(iv.val[i], iv.val[i - 1]);
	}
	np = cp_ival_pages(&iv);
	ck_assert_uint_ge(np, 1);
	pages = calloc(first + np + 1, sizeof(*pages));
	ck_assert_ptr_nonnull(pages);
	desc = cp_ival_build(&iv, pages, first);
	if (depth)
		ck_assert_uint_eq(desc >> BPFIPT_IVAL_DEPTH_SHIFT, depth);
	ck_assert_uint_eq(desc & BPFIPT_IVAL_PAGE_MASK, first + np - 1);
	/* each separator repeats the key it stands for (the search reads either) */
	for (i = first; i < first + np; i++)
		for (size_t j = 0; j < BPFIPT_IVAL_NSEP; j++)
			ck_assert_uint_eq(pages[i].sep[j], pages[i].key[j * BPFIPT_IVAL_SEP]);
	probe(pages, desc, e, n, probes);
	if (iv.n <= BPFIPT_IVAL_FANOUT / 2) {
		ck_assert_uint_ge(cp_ival_window(&iv), iv.n);
		check_window(&iv, e, n, probes);
	} else {
		ck_assert_uint_eq(cp_ival_window(&iv), 0);
	}
	free(pages);
	cp_ival_free(&iv);
}

START_TEST(t_empty)
{
	static const struct cp_lpm_entry dflt = { .plen = 0, .addr = 0, .value = 7 };
	struct bpfipt_ival_page pg;
	struct cp_ival iv;
	__u32 desc;

	ck_assert_int_eq(cp_ival_flatten(NULL, 0, &iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(cp_ival_pages(&iv), 1);
	desc = cp_ival_build(&iv, &pg, 0);
	ck_assert_uint_eq(cp_ival_find(&pg, desc, 0), BPFIPT_IVAL_NONE);
	ck_assert_uint_eq(cp_ival_find(&pg, desc, ~0u), BPFIPT_IVAL_NONE);
	cp_ival_free(&iv);
	ck_assert_int_eq(cp_ival_flatten(&dflt, 1, &iv), 0);
	desc = cp_ival_build(&iv, &pg, 0);
	ck_assert_uint_eq(cp_ival_find(&pg, desc, 0), 7);
	ck_assert_uint_eq(cp_ival_find(&pg, desc, 0x0a000001), 7);
	ck_assert_uint_eq(cp_ival_find(&pg, desc, ~0u), 7);
	ck_assert_uint_eq(cp_ival_find(&pg, 0, 1), BPFIPT_IVAL_NONE);
	cp_ival_free(&iv);
}
END_TEST

/* /32s at both ends, a /0 under everything, nested prefixes sharing an end */
START_TEST(t_edges)
{
	struct cp_lpm_entry e[] = {
		{ .plen = 0, .addr = 0, .value = 1 },
		{ .plen = 32, .addr = htonl(0), .value = 2 },
		{ .plen = 32, .addr = htonl(0xffffffff), .value = 3 },
		{ .plen = 8, .addr = htonl(0xff000000), .value = 4 },
		{ .plen = 24, .addr = htonl(0xffffff00), .value = 5 },
		{ .plen = 1, .addr = htonl(0), .value = 6 },
		{ .plen = 31, .addr = htonl(0x7ffffffe), .value = 7 },
		{ .plen = 32, .addr = htonl(0x7fffffff), .value = 8 },
		{ .plen = 24, .addr = htonl(0x0a000000), .value = 1 },	/* same as /0 */
		{ .plen = 24, .addr = htonl(0x0a000000), .value = 9 },	/* later wins */
	};

	check_set(e, sizeof(e) / sizeof(e[0]), 1000, 1);
}
END_TEST

START_TEST(t_random_small)
{
	static const __u8 lens[] = { 0, 1, 4, 8, 12, 16, 20, 23, 24, 28, 30, 31, 32 };
	struct cp_lpm_entry e[300];
	int round;

	for (round = 0; round < 300; round++) {
		size_t n = 1 + rnd() % 300;

		gen(e, n, lens, sizeof(lens), 1 + rnd() % 6);
		check_set(e, n, 300, 0);
	}
}
END_TEST

/* deny-list shapes (bench/rules.py deny): depth 2 and 3 */
START_TEST(t_random_deep)
{
	static const __u8 lens[] = { 24, 32, 32, 32, 32, 32, 32, 32, 32, 32 };
	static const size_t sizes[] = { 20000, 60000 };
	struct cp_lpm_entry *e = malloc(60000 * sizeof(*e));
	size_t k;

	ck_assert_ptr_nonnull(e);
	for (k = 0; k < 2; k++) {
		gen(e, sizes[k], lens, sizeof(lens), 1000000);
		check_set(e, sizes[k], 3000, k ? 3 : 2);
	}
	free(e);
}
END_TEST

/* more intervals than three levels hold */
START_TEST(t_too_deep)
{
	struct cp_ival iv = { .n = (size_t)BPFIPT_IVAL_FANOUT * BPFIPT_IVAL_FANOUT *
				    BPFIPT_IVAL_FANOUT + 1 };

	ck_assert_uint_eq(cp_ival_pages(&iv), 0);
	iv.n--;
	ck_assert_uint_eq(cp_ival_pages(&iv), 65536 + 256 + 1);
}
END_TEST

/* ---- IPv6: the same trees of 128-bit starts ---- */

typedef unsigned __int128 u128;

static u128 mask6(__u8 plen)
{
	return plen ? ~(u128)0 << (128 - plen) : 0;
}

static u128 addr6(const __u8 *b)
{
	u128 a = 0;

	for (int i = 0; i < 16; i++)
		a = a << 8 | b[i];
	return a;
}

static void put6(__u8 *b, u128 a)
{
	for (int i = 15; i >= 0; i--, a >>= 8)
		b[i] = (__u8)a;
}

static __u32 brute6(const struct cp_lpm_entry6 *e, size_t n, u128 a)
{
	__u32 v = BPFIPT_IVAL_NONE;
	int best = -1;

	for (size_t i = 0; i < n; i++) {
		u128 m = mask6(e[i].plen);

		if ((a & m) == (addr6(e[i].addr) & m) && e[i].plen >= best) {
			best = e[i].plen;
			v = e[i].value;
		}
	}
	return v;
}

/* n prefixes around a few high words (equal high words, so the low word decides),
 * lens from lens[], some at the ends of the address space */
static void gen6(struct cp_lpm_entry6 *e, size_t n, const __u8 *lens, size_t nlens, __u32 nvals)
{
	static const __u64 his[] = { 0x20010db800010001ull, 0x20010db800010002ull,
				     0x20010db8ffffffffull, 0, ~0ull };

	for (size_t i = 0; i < n; i++) {
		__u8 plen = lens[rnd() % nlens];
		u128 a = (u128)his[rnd() % 5] << 64 | ((__u64)rnd() << 32 | rnd());

		if (rnd() % 8 == 0)
			a = rnd() % 2 ? 0 : ~(u128)0;
		e[i].key = 0;
		e[i].plen = plen;
		put6(e[i].addr, a & mask6(plen));
		e[i].value = rnd() % nvals;
	}
}

static void probe6(const struct bpfipt_ival6_page *pages, __u32 desc,
		   const struct cp_lpm_entry6 *e, size_t n, unsigned int probes)
{
	ck_assert_uint_eq(cp_ival_find6(pages, desc, 0), brute6(e, n, 0));
	ck_assert_uint_eq(cp_ival_find6(pages, desc, ~(u128)0), brute6(e, n, ~(u128)0));
	for (size_t i = 0; i < n && i < probes; i++) {
		u128 lo = addr6(e[i].addr), hi = lo | ~mask6(e[i].plen);
		u128 a[4] = { lo, hi, lo - 1, hi + 1 };

		for (int j = 0; j < 4; j++)
			ck_assert_msg(cp_ival_find6(pages, desc, a[j]) == brute6(e, n, a[j]),
				      "prefix %zu /%u, probe %d: %u, expected %u", i, e[i].plen, j,
				      cp_ival_find6(pages, desc, a[j]), brute6(e, n, a[j]));
	}
	for (unsigned int i = 0; i < probes; i++) {
		u128 a = addr6(e[rnd() % (n ? n : 1)].addr) + rnd() % 5 - 2;

		ck_assert_uint_eq(cp_ival_find6(pages, desc, a), brute6(e, n, a));
	}
}

static void check_set6(const struct cp_lpm_entry6 *e, size_t n, unsigned int probes, int depth)
{
	struct bpfipt_ival6_page *pages;
	struct cp_ival6 iv;
	size_t np, i, w;
	__u32 desc, first = 2;

	ck_assert_int_eq(cp_ival_flatten6(e, n, &iv), 0);
	ck_assert_uint_ge(iv.n, 1);
	ck_assert(iv.start[0] == 0);
	for (i = 1; i < iv.n; i++) {
		ck_assert(iv.start[i] > iv.start[i - 1]);
		ck_assert_uint_ne(iv.val[i], iv.val[i - 1]);
	}
	np = cp_ival_pages6(&iv);
	ck_assert_uint_ge(np, 1);
	pages = calloc(first + np + 1, sizeof(*pages));
	ck_assert_ptr_nonnull(pages);
	desc = cp_ival_build6(&iv, pages, first);
	if (depth)
		ck_assert_uint_eq(desc >> BPFIPT_IVAL_DEPTH_SHIFT, depth);
	for (i = first; i < first + np; i++)
		for (size_t j = 0; j < BPFIPT_IVAL_NSEP; j++)
			ck_assert(!memcmp(pages[i].sep[j], pages[i].key[j * BPFIPT_IVAL_SEP],
					  sizeof(pages[i].sep[j])));
	probe6(pages, desc, e, n, probes);
	w = cp_ival_window6(&iv);
	if (w) {
		/* in a window of a page of random entries */
		for (i = 0; i < BPFIPT_IVAL_FANOUT; i++) {
			pages[1].key[i][0] = (__u64)rnd() << 32 | rnd();
			pages[1].key[i][1] = (__u64)rnd() << 32 | rnd();
			pages[1].val[i] = rnd();
		}
		for (i = 0; i < BPFIPT_IVAL_NSEP; i++) {
			pages[1].sep[i][0] = (__u64)rnd() << 32 | rnd();
			pages[1].sep[i][1] = (__u64)rnd() << 32 | rnd();
		}
		desc = cp_ival_build_window6(&iv, pages, 1,
					     w * (rnd() % (BPFIPT_IVAL_FANOUT / w)));
		ck_assert_uint_eq(desc >> BPFIPT_IVAL_DEPTH_SHIFT, 1);
		probe6(pages, desc, e, n, probes);
	}
	free(pages);
	cp_ival_free6(&iv);
}

START_TEST(t_v6_random)
{
	static const __u8 lens[] = { 0, 1, 16, 32, 48, 63, 64, 65, 96, 120, 127, 128 };
	struct cp_lpm_entry6 e[300];

	for (int round = 0; round < 300; round++) {
		size_t n = 1 + rnd() % 300;

		gen6(e, n, lens, sizeof(lens), 1 + rnd() % 6);
		check_set6(e, n, 300, 0);
	}
	check_set6(e, 0, 10, 1);
}
END_TEST

/* deny-list shapes: /128s and /64s, depth 2 and 3 */
START_TEST(t_v6_deep)
{
	static const __u8 lens[] = { 64, 128, 128, 128, 128, 128, 128, 128, 128, 128 };
	static const size_t sizes[] = { 20000, 60000 };
	struct cp_lpm_entry6 *e = malloc(60000 * sizeof(*e));

	ck_assert_ptr_nonnull(e);
	for (size_t k = 0; k < 2; k++) {
		gen6(e, sizes[k], lens, sizeof(lens), 1000000);
		check_set6(e, sizes[k], 800, k ? 3 : 2);
	}
	free(e);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ival");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_empty);
	tcase_add_test(tc, t_edges);
	tcase_add_test(tc, t_random_small);
	tcase_add_test(tc, t_random_deep);
	tcase_add_test(tc, t_too_deep);
	tcase_add_test(tc, t_v6_random);
	tcase_add_test(tc, t_v6_deep);
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
