// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the rule language: the input is used twice, as an
 * iptables command line (words split at NUL, newline, tab and space) and as an
 * iptables-restore file applied to a fresh table; what the parser accepts is
 * printed back (-S, save, -L) so the printers are fuzzed too. Nothing touches
 * the saved state. Run it with scripts/fuzz.sh.
 */
#include "cmd.h"
#include "list.h"
#include "ops.h"
#include "resolve.h"
#include "restore.h"
#include "save.h"

#include <stdlib.h>
#include <string.h>

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
		if (!ipt_restore(text, size, &t, &o, &err, &line))
			exercise_printers(t);
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
		if (!ipt_table_apply(t, &cmd, &err) && !ipt_table_validate(t, &err))
			exercise_printers(t);
		ipt_table_free(&t);
	}
	ipt_cmd_free(&cmd);
	free(copy);
	free(text);
	return 0;
}
