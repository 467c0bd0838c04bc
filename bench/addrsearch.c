// SPDX-License-Identifier: GPL-2.0
/*
 * addrsearch: does a binary search over sorted intervals beat the kernel's LPM
 * trie for an address field (issue 7)? The same random prefixes (10% /24, 1%
 * /16, the rest /32, as bench/rules.py deny) go into an LPM trie and into the
 * interval pages of bench/addrsearch.h; CHECK random addresses (half inside a
 * prefix) must get the same value from both programs (exit 1 otherwise), then
 * each program's ns/lookup is the mean over 8 addresses of the best of 5 runs
 * of --repeat packets (bpf_prog_test_run_opts), hit and miss, and the empty
 * program's. Then each structure in a loop over AS_ADDRS addresses (bpf_loop in
 * one program run, ns per search): varied addresses, as real traffic has (the
 * search's branches mispredicted, its pages not all in cache), and one address
 * repeated; the loops' results must equal the single searches'. The same loops
 * run the data plane's search (dataplane/ival.bpf.h) over the pages the loader
 * writes (controlplane/ival.c: pages_loop_*), and without reading the pages'
 * separators (*_nosep); their results must equal cp_ival_find()'s. Memory:
 * memlock of the maps (fdinfo), per prefix.
 * Output, CSV: prefixes,intervals,structure,bytes,bytes_per_prefix,ns_hit,ns_miss
 * Usage: addrsearch [--sizes a,b,c] [--repeat N] [--check N]   (root)
 */
#define _GNU_SOURCE	/* unshare(), setns(): xdp_hold.h */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/mman.h>

#include "addrsearch.h"
#include "addrsearch.skel.h"
#include "ival.h"
#include "xdp_hold.h"

static struct xdp_hold held[8];	/* the programs of a bench() (xdp_hold.h) */
static unsigned int nheld;

struct pfx {
	__u32 lo, hi, len, val;
};

static unsigned int repeat = 20000, check = 10000;
static __u64 rng = 0x9e3779b97f4a7c15ull;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng >> 16);
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static int pfx_cmp(const void *a, const void *b)
{
	const struct pfx *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->len - (int)y->len;
}

static int u32_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* n random prefixes, sorted by (lo, len), duplicates dropped; returns the count */
static size_t gen(struct pfx *p, size_t n)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		__u32 r = rnd() % 100, len = r < 1 ? 16 : r < 11 ? 24 : 32;
		__u32 mask = len == 32 ? ~0u : ~((1u << (32 - len)) - 1);

		p[i].lo = rnd() & mask;
		p[i].hi = p[i].lo | ~mask;
		p[i].len = len;
		p[i].val = i + 1;
	}
	qsort(p, n, sizeof(*p), pfx_cmp);
	for (i = 0; i < n; i++)
		if (!m || p[m - 1].lo != p[i].lo || p[m - 1].len != p[i].len)
			p[m++] = p[i];
	return m;
}

/*
 * Flatten: the starts are 0, every lo and every hi+1; sweep them in order with
 * a stack of the prefixes containing the point (prefixes nest or are disjoint,
 * and (lo, len) order pushes the outer one first). Returns the interval count.
 */
static size_t flatten(const struct pfx *p, size_t n, __u32 *start, __u32 *val)
{
	size_t i, j = 0, m = 0, nb = 0, sp = 0;
	const struct pfx **stk = malloc(33 * sizeof(*stk));
	__u32 *b = malloc((2 * n + 1) * sizeof(*b));

	if (!stk || !b)
		die("malloc");
	b[nb++] = 0;
	for (i = 0; i < n; i++) {
		b[nb++] = p[i].lo;
		if (p[i].hi != ~0u)
			b[nb++] = p[i].hi + 1;
	}
	qsort(b, nb, sizeof(*b), u32_cmp);
	for (i = 0; i < nb; i++) {
		if (i && b[i] == b[i - 1])
			continue;
		while (sp && stk[sp - 1]->hi < b[i])
			sp--;
		while (j < n && p[j].lo == b[i])
			stk[sp++] = &p[j++];
		start[m] = b[i];
		val[m++] = sp ? stk[sp - 1]->val : 0;
	}
	free(b);
	free(stk);
	return m;
}

static long memlock(int fd)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static unsigned char frame[64];

static __u32 run(int prog, int outfd, __u32 addr, unsigned int rep, double *ns)
{
	struct iphdr *ip = (struct iphdr *)(frame + sizeof(struct ethhdr));
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = rep);
	__u32 k = 0, v = 0;
	double best = 1e18;
	int r;

	ip->saddr = htonl(addr);
	for (r = 0; r < (ns ? 5 : 1); r++) {
		if (bpf_prog_test_run_opts(prog, &o))
			die("bpf_prog_test_run_opts");
		if (o.duration < best)
			best = o.duration;
	}
	if (ns)
		*ns = best;
	if (bpf_map_lookup_elem(outfd, &k, &v))
		die("out");
	return v;
}

/* an address inside a random prefix (hit) or in no prefix at all (miss) */
static __u32 pick(const struct pfx *p, size_t n, const __u32 *start, const __u32 *val,
		  size_t m, int hit)
{
	for (;;) {
		__u32 a, lo = 0, hi = m - 1;

		if (hit && n) {
			const struct pfx *x = &p[rnd() % n];

			return x->lo + (rnd() & (x->hi - x->lo));
		}
		a = rnd();
		while (lo < hi) {
			__u32 mid = lo + (hi - lo + 1) / 2;

			if (start[mid] <= a)
				lo = mid;
			else
				hi = mid - 1;
		}
		if (!val[lo])
			return a;
	}
}

static int bench(size_t want)
{
	struct pfx *p = malloc(want * sizeof(*p));
	__u32 *start = malloc((2 * want + 2) * sizeof(*start));
	__u32 *val = malloc((2 * want + 2) * sizeof(*val));
	struct as_top *t = malloc(sizeof(*t));
	struct as_page pg;
	struct addrsearch_bpf *s;
	size_t n, m, np, i, bad = 0, dnp, dlen;
	double ns[3][2] = { 0 }, lns[4], lnl[4], lnd[2][4];
	struct bpfipt_ival_page *dp;
	struct cp_lpm_entry *e;
	struct cp_ival civ;
	__u32 ddesc;
	long db;
	unsigned int loop_repeat = repeat / 1000 ? repeat / 1000 : 1;
	int prog[3], outfd, h, j;
	__u32 k0;
	long lb, ib;

	if (!p || !start || !val || !t)
		die("malloc");
	n = gen(p, want);
	m = flatten(p, n, start, val);
	np = (m + AS_PAGE - 1) / AS_PAGE;
	if (np > AS_TOP) {
		fprintf(stderr, "addrsearch: %zu intervals do not fit\n", m);
		return 2;
	}
	/* the data plane's pages of the same prefixes (controlplane/ival.c) */
	e = malloc(n * sizeof(*e));
	if (!e)
		die("malloc");
	for (i = 0; i < n; i++)
		e[i] = (struct cp_lpm_entry){ .plen = (__u8)p[i].len, .addr = htonl(p[i].lo),
					      .value = p[i].val };
	if (cp_ival_flatten(e, n, &civ))
		die("cp_ival_flatten");
	dnp = cp_ival_pages(&civ);
	s = addrsearch_bpf__open();
	if (!s)
		die("open");
	bpf_map__set_max_entries(s->maps.lpm, n);
	bpf_map__set_max_entries(s->maps.pages, np);
	bpf_map__set_max_entries(s->maps.dpages, dnp);
	s->rodata->npages = np;
	if (addrsearch_bpf__load(s))
		die("load");
	{	/* every program kept in the XDP dispatcher for its runs */
		struct bpf_program *pg;

		nheld = 0;
		bpf_object__for_each_program(pg, s->obj)
			if (nheld < sizeof(held) / sizeof(held[0]))
				xdp_hold(bpf_program__fd(pg), &held[nheld++]);
	}
	for (i = 0; i < n; i++) {
		struct as_lpm_key k = { .prefixlen = p[i].len, .addr = htonl(p[i].lo) };

		if (bpf_map_update_elem(bpf_map__fd(s->maps.lpm), &k, &p[i].val, BPF_ANY))
			die("lpm update");
	}
	memset(t->start, 0xff, sizeof(t->start));
	for (i = 0; i < np; i++) {
		__u32 k = i, e;

		memset(&pg, 0xff, sizeof(pg));
		for (e = 0; e < AS_PAGE; e++) {
			size_t x = i * AS_PAGE + e < m ? i * AS_PAGE + e : m - 1;

			if (i * AS_PAGE + e < m)
				pg.start[e] = start[x];
			pg.val[e] = val[x];	/* padding: the last interval's value */
		}
		t->start[i] = pg.start[0];
		if (bpf_map_update_elem(bpf_map__fd(s->maps.pages), &k, &pg, BPF_ANY))
			die("pages update");
	}
	h = 0;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.top), &h, t, BPF_ANY))
		die("top update");
	dlen = (dnp * sizeof(*dp) + 4095) & ~(size_t)4095;
	dp = mmap(NULL, dlen, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(s->maps.dpages), 0);
	if (dp == MAP_FAILED)
		die("mmap dpages");
	ddesc = cp_ival_build(&civ, dp, 0);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.dpdesc), &h, &ddesc, BPF_ANY))
		die("dpdesc update");
	prog[0] = bpf_program__fd(s->progs.as_floor);
	prog[1] = bpf_program__fd(s->progs.as_lpm);
	prog[2] = bpf_program__fd(s->progs.as_ival);
	outfd = bpf_map__fd(s->maps.out);

	/* correctness: the test */
	for (i = 0; i < check; i++) {
		__u32 a = i < 4 ? (__u32[]){ 0, ~0u, p[0].lo, p[n - 1].hi }[i]
				: pick(p, n, start, val, m, i & 1);
		__u32 vl = run(prog[1], outfd, a, 1, NULL), vi = run(prog[2], outfd, a, 1, NULL);
		__u32 vd = cp_ival_find(dp, ddesc, a);

		if ((vl != vi || vl != (vd == BPFIPT_IVAL_NONE ? 0 : vd)) && bad++ < 10)
			fprintf(stderr, "addrsearch: N=%zu %u.%u.%u.%u: lpm %u, intervals %u, "
				"pages %u\n", n, a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, vl,
				vi, vd);
	}
	for (h = 0; h < 2; h++)
		for (j = 0; j < 8; j++) {
			__u32 a = pick(p, n, start, val, m, !h);
			double x;

			for (i = 0; i < 3; i++) {
				run(prog[i], outfd, a, repeat, &x);
				ns[i][h] += x / 8;
			}
		}
	/* the loop: AS_ADDRS searches per run, varied addresses (each a hit, or
	 * each a miss) against one address repeated; its result must be the
	 * XOR of as_ival's */
	{
		int lp = bpf_program__fd(s->progs.as_loop), ll = bpf_program__fd(s->progs.as_loop_lpm);
		int dl = bpf_program__fd(s->progs.as_dp_loop);
		int dln = bpf_program__fd(s->progs.as_dp_loop_nosep);
		static struct as_addrs as;
		int v;

		for (v = 0; v < 4; v++) {	/* varied hit, varied miss, fixed hit, fixed miss */
			__u32 one = pick(p, n, start, val, m, !(v & 1)), want = 0, got;
			double x;

			for (j = 0; j < AS_ADDRS; j++)
				as.a[j] = v < 2 ? pick(p, n, start, val, m, !(v & 1)) : one;
			k0 = 0;
			if (bpf_map_update_elem(bpf_map__fd(s->maps.addrs), &k0, &as, BPF_ANY))
				die("addrs update");
			for (j = 0; j < AS_ADDRS; j++)
				want ^= run(prog[2], outfd, as.a[j], 1, NULL) + (__u32)j;
			got = run(lp, outfd, 0, loop_repeat, &x);
			lns[v] = x / AS_ADDRS;
			if (got != want && bad++ < 10)
				fprintf(stderr, "addrsearch: N=%zu: the loop's result %#x, expected %#x\n",
					n, got, want);
			got = run(ll, outfd, 0, loop_repeat, &x);
			lnl[v] = x / AS_ADDRS;
			if (got != want && bad++ < 10)
				fprintf(stderr, "addrsearch: N=%zu: the trie loop's result %#x, "
					"expected %#x\n", n, got, want);
			/* the data plane's search: its own values (BPFIPT_IVAL_NONE for none) */
			for (want = 0, j = 0; j < AS_ADDRS; j++)
				want ^= cp_ival_find(dp, ddesc, as.a[j]) + (__u32)j;
			for (j = 0; j < 2; j++) {
				got = run(j ? dln : dl, outfd, 0, loop_repeat, &x);
				lnd[j][v] = x / AS_ADDRS;
				if (got != want && bad++ < 10)
					fprintf(stderr, "addrsearch: N=%zu: the pages' loop%s result "
						"%#x, expected %#x\n", n, j ? " (no separators)" : "",
						got, want);
			}
		}
	}
	lb = memlock(bpf_map__fd(s->maps.lpm));
	ib = memlock(bpf_map__fd(s->maps.pages)) + memlock(bpf_map__fd(s->maps.top));
	printf("%zu,%zu,floor,0,0,%.1f,%.1f\n", n, m, ns[0][0], ns[0][1]);
	printf("%zu,%zu,lpm_trie,%ld,%.1f,%.1f,%.1f\n", n, m, lb, (double)lb / n,
	       ns[1][0], ns[1][1]);
	printf("%zu,%zu,intervals,%ld,%.1f,%.1f,%.1f\n", n, m, ib, (double)ib / n,
	       ns[2][0], ns[2][1]);
	printf("%zu,%zu,lpm_trie_loop_varied,%ld,%.1f,%.1f,%.1f\n", n, m, lb, (double)lb / n,
	       lnl[0], lnl[1]);
	printf("%zu,%zu,lpm_trie_loop_fixed,%ld,%.1f,%.1f,%.1f\n", n, m, lb, (double)lb / n,
	       lnl[2], lnl[3]);
	printf("%zu,%zu,intervals_loop_varied,%ld,%.1f,%.1f,%.1f\n", n, m, ib, (double)ib / n,
	       lns[0], lns[1]);
	printf("%zu,%zu,intervals_loop_fixed,%ld,%.1f,%.1f,%.1f\n", n, m, ib, (double)ib / n,
	       lns[2], lns[3]);
	db = memlock(bpf_map__fd(s->maps.dpages));
	for (j = 0; j < 2; j++) {
		const char *sfx = j ? "_nosep" : "";

		printf("%zu,%zu,pages_loop_varied%s,%ld,%.1f,%.1f,%.1f\n", n, civ.n, sfx, db,
		       (double)db / n, lnd[j][0], lnd[j][1]);
		printf("%zu,%zu,pages_loop_fixed%s,%ld,%.1f,%.1f,%.1f\n", n, civ.n, sfx, db,
		       (double)db / n, lnd[j][2], lnd[j][3]);
	}
	fflush(stdout);
	munmap(dp, dlen);
	cp_ival_free(&civ);
	free(e);
	while (nheld)
		xdp_unhold(&held[--nheld]);
	addrsearch_bpf__destroy(s);
	free(t);
	free(val);
	free(start);
	free(p);
	if (bad)
		fprintf(stderr, "addrsearch: N=%zu: %zu of %u addresses differ\n", n, bad, check);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sizes", 1, 0, 's' }, { "repeat", 1, 0, 'r' }, { "check", 1, 0, 'c' }, { 0 }
	};
	char sizes[256] = "10,1000,100000,1000000", *tok, *sv;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (c) {
		case 's': snprintf(sizes, sizeof(sizes), "%s", optarg); break;
		case 'r': repeat = strtoul(optarg, NULL, 10); break;
		case 'c': check = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	frame[12] = 0x08;	/* ETH_P_IP */
	frame[14] = 0x45;
	printf("prefixes,intervals,structure,bytes,bytes_per_prefix,ns_hit,ns_miss\n");
	for (tok = strtok_r(sizes, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv))
		rc |= bench(strtoul(tok, NULL, 10));
	return rc;
}
