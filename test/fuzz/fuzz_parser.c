// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the rule language: the input is used twice, as an
 * iptables command line (words split at NUL, newline, tab and space) and as an
 * iptables-restore file applied to a fresh table; what the parser accepts is
 * printed back (-S, save, -L) so the printers are fuzzed too, and compiled
 * (controlplane/compile.c): the classifier's algorithm on the compiled tables
 * (cp_lbvs_eval) must give the reference evaluator's verdict and counters
 * (cp_ref_eval) for a few packets drawn from the input, or the target aborts.
 * Nothing touches the saved state nor the kernel. Run it with scripts/fuzz.sh.
 */
#include "cmd.h"
#include "compile.h"
#include "list.h"
#include "ops.h"
#include "resolve.h"
#include "restore.h"
#include "save.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounded so that a fuzzed ruleset cannot eat the -rss_limit_mb budget. */
#define FUZZ_MEM_LIMIT ((size_t)64 << 20)

static __u64 fnv1a(const unsigned char *d, size_t n, __u64 h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 0x100000001b3ULL;
	return h;
}

/* A packet from 64 random bits: addresses near the ones rules name most. */
static struct cp_packet fuzz_packet(__u64 h)
{
	static const char *const addrs[] = { "10.0.0.1", "192.168.1.1", "127.0.0.1",
					     "1.2.3.4", "172.16.0.5", "0.0.0.0" };
	static const __u8 protos[] = { 6, 17, 1, 132, 0, 47 };
	struct cp_packet p;

	memset(&p, 0, sizeof(p));
	p.saddr = inet_addr(addrs[h % 6]) ^ htonl((h >> 3) & 0xff);
	p.daddr = inet_addr(addrs[(h >> 11) % 6]);
	p.proto = protos[(h >> 14) % 6];
	p.nonfirst_frag = (h >> 17) % 8 == 0;
	p.has_ports = !p.nonfirst_frag && (p.proto == 6 || p.proto == 17 || p.proto == 132);
	p.sport = (h >> 20) % 2 ? 22 : (__u16)(h >> 21);
	p.dport = (h >> 37) % 2 ? 80 : (__u16)(h >> 38);
	p.has_tcp = p.has_ports && p.proto == 6;
	p.tcpflags = (__u8)(h >> 54);
	p.has_icmp = !p.nonfirst_frag && p.proto == 1;
	p.icmp_type = (__u8)((h >> 24) % 20);
	p.icmp_code = (__u8)((h >> 29) % 4);
	p.len = (__u16)(20 + (h >> 40) % 1500);
	p.ctstate = (__u8)((h >> 50) % 4);
	p.has_ct = p.ctstate != 0;
	p.mark = (__u32)((h >> 45) % 4);
	return p;
}

/* The compiled classifier against the reference, as test/unit/test_compile.c
 * does; BPFIPT_MAX_STEPS / _DEPTH running out are documented limits. */
static void exercise_compiler(const struct ipt_table *t, const unsigned char *d, size_t n)
{
	struct cp_env env = { .mem_limit = FUZZ_MEM_LIMIT };
	struct cp_compiled *cc = NULL;
	struct ipt_err err;
	__u64 h = fnv1a(d, n, 0xcbf29ce484222325ULL);

	if (cp_compile(t, &env, &cc, &err))
		return;
	for (int i = 0; i < 8; i++, h = fnv1a((const unsigned char *)&h, sizeof(h), h)) {
		enum bpfipt_chain c = (enum bpfipt_chain)(i % BPFIPT_NCHAINS);
		struct cp_packet p = fuzz_packet(h);
		struct cp_trace rt, lt;
		int rr = cp_ref_eval(t, &env, c, &p, &rt);
		int lr = cp_lbvs_eval(cc, c, &p, &lt);

		if (lr == 1 || lr == 2 || rr)
			continue;
		if (lr || rt.verdict != lt.verdict || rt.ncounted != lt.ncounted) {
			fprintf(stderr, "chain %d: ref verdict %d (%u counted), lbvs rc %d verdict %d "
				"(%u counted)\n", c, rt.verdict, rt.ncounted, lr, lt.verdict,
				lt.ncounted);
			abort();
		}
		for (unsigned int k = 0; k < rt.ncounted && k < CP_TRACE_MAX; k++)
			if (rt.counted[k] != lt.counted[k]) {
				fprintf(stderr, "chain %d: counter %u: ref %u lbvs %u\n", c, k,
					rt.counted[k], lt.counted[k]);
				abort();
			}
	}
	cp_compiled_free(&cc);
}

static void exercise_printers(const struct ipt_table *t)
{
	struct strbuf sb = STRBUF_INIT;

	ipt_save_table(&sb, t, true);
	ipt_save_list_rules(&sb, t, NULL, 0, true);
	ipt_list(&sb, t, NULL, 0, IPT_FMT_NUMERIC | IPT_FMT_VERBOSE | IPT_FMT_LINENUMBERS);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);
	char *words[256];
	int n = 0;

	ipt_resolve_names = false;	/* no DNS from a fuzzer */
	memcpy(text, data, size);
	text[size] = '\0';

	/* 1. a restore file */
	{
		struct ipt_table *t;
		struct ipt_restore_opts o = { .prog = "fuzz", .counters = true };
		struct ipt_err err;
		unsigned int line;

		ipt_table_new(&t);
		if (!ipt_restore(text, size, &t, &o, &err, &line)) {
			exercise_printers(t);
			exercise_compiler(t, data, size);
		}
		ipt_table_free(&t);
	}

	/* 2. a command line */
	char *copy = malloc(size + 1);

	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *p = copy, *end = copy + size; p < end && n < 256;) {
		size_t len = strcspn(p, "\n\t ");

		p[len] = '\0';
		words[n++] = p;
		p += len + 1;
	}
	struct ipt_cmd cmd;
	struct ipt_err err;

	if (!ipt_cmd_parse(n, words, false, &cmd, &err)) {
		struct ipt_table *t;

		ipt_table_new(&t);
		ipt_chain_new_user(t, "user");
		if (!ipt_table_apply(t, &cmd, &err) && !ipt_table_validate(t, &err)) {
			exercise_printers(t);
			exercise_compiler(t, data, size);
		}
		ipt_table_free(&t);
	}
	ipt_cmd_free(&cmd);
	free(copy);
	free(text);
	return 0;
}
