/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the command grammar (cmdgram.y) and its driver (cmd.c). */
#ifndef BPFIPT_CMD_INTERNAL_H
#define BPFIPT_CMD_INTERNAL_H

#include "cmd.h"
#include "ext.h"

/* One token of the command line: an option occurrence or a plain word. */
struct cmd_tok {
	char opt;		/* short option letter ('A', 's', ...), 0 for words/ext options */
	const char *name;	/* the word of an extension option ("--dport=5"), or NULL */
	const char *lname;	/* its option name, without "--" ... */
	size_t lname_len;	/* ... and up to any '=' */
	const struct ipt_ext_opt *eopt;
	const char *arg, *arg2;	/* argument(s), NULL when none */
	int argi;		/* index of the word it came from */
};

/* A loaded match instance while the line is parsed. */
struct cmd_match {
	unsigned int idx;	/* index in ps->rule->matches (which may move) */
	unsigned int flags;	/* options seen */
	bool implicit;		/* loaded because of -p PROTO */
};

struct cmd_parse {
	int argc;
	char **argv;
	int pos;		/* next word */
	const char *cluster;	/* rest of a short-option cluster, or NULL */
	int cluster_argi;

	struct ipt_cmd *cmd;
	struct ipt_err *err;
	bool invert;		/* a '!' is pending */

	struct ipt_rule *rule;	/* the rule under construction */
	struct cmd_match matches[IPT_MAX_MATCHES];
	unsigned int nmatches;
	bool proto_used;	/* the -p protocol's match was loaded implicitly */
	char *protocol;		/* -p as written, lower-cased */
	char *jumpto;		/* -j/-g argument */
	bool goto_set;
	const struct ipt_ext *target;
	unsigned int tflags;
	const char *saddr, *daddr;	/* -s/-d as written */
	const char *pcnt, *bcnt;
};

/* Actions called by the grammar; each returns 0 or -1 (ps->err set). */
int cmd_command(struct cmd_parse *ps, const struct cmd_tok *t, const struct cmd_tok *pos,
		unsigned int npos);
int cmd_option(struct cmd_parse *ps, const struct cmd_tok *t, const struct cmd_tok *pos,
	       unsigned int npos);
int cmd_ext_option(struct cmd_parse *ps, const struct cmd_tok *t);
int cmd_bang(struct cmd_parse *ps, const struct cmd_tok *t);
int cmd_bad_argument(struct cmd_parse *ps, const struct cmd_tok *t);
int cmd_lex(struct cmd_tok *tok, struct cmd_parse *ps);

#endif
