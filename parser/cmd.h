/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One iptables command line (or one line of a restore file) parsed into a
 * command plus the rule(s) it names. Pure: no state is read or written here.
 */
#ifndef BPFIPT_CMD_H
#define BPFIPT_CMD_H

#include <stdbool.h>
#include "model.h"
#include "errors.h"

/* Command bits, in the order iptables numbers them (cmd2char). */
enum {
	CMD_NONE		= 0,
	CMD_INSERT		= 1 << 0,
	CMD_DELETE		= 1 << 1,
	CMD_DELETE_NUM		= 1 << 2,
	CMD_REPLACE		= 1 << 3,
	CMD_APPEND		= 1 << 4,
	CMD_LIST		= 1 << 5,
	CMD_FLUSH		= 1 << 6,
	CMD_ZERO		= 1 << 7,
	CMD_NEW_CHAIN		= 1 << 8,
	CMD_DELETE_CHAIN	= 1 << 9,
	CMD_SET_POLICY		= 1 << 10,
	CMD_RENAME_CHAIN	= 1 << 11,
	CMD_LIST_RULES		= 1 << 12,
	CMD_ZERO_NUM		= 1 << 13,
	CMD_CHECK		= 1 << 14,
	CMD_MAX_BIT		= 15,
};

/* Options that generic_opt_check knows, in iptables' optflags order. */
enum {
	OPT_NUMERIC	= 1 << 0,
	OPT_SOURCE	= 1 << 1,
	OPT_DESTINATION	= 1 << 2,
	OPT_PROTOCOL	= 1 << 3,
	OPT_JUMP	= 1 << 4,
	OPT_VERBOSE	= 1 << 5,
	OPT_EXPANDED	= 1 << 6,
	OPT_VIANAMEIN	= 1 << 7,
	OPT_VIANAMEOUT	= 1 << 8,
	OPT_LINENUMBERS	= 1 << 9,
	OPT_COUNTERS	= 1 << 10,
	OPT_FRAGMENT	= 1 << 11,
	OPT_MAX_BIT	= 12,
};

struct ipt_cmd {
	unsigned int command;		/* CMD_* bits */
	unsigned int options;		/* OPT_* bits */
	char *chain;			/* NULL = all chains (-L, -F, -Z, -X) */
	char *newname;			/* -E */
	char *policy;			/* -P */
	unsigned int rulenum;		/* 1-based; 0 = none */
	unsigned int verbose;
	bool restore;			/* parsing a restore-file line */
	bool wait_set;
	int wait_secs;			/* -w: -1 = forever */
	char *table;			/* -t, default "filter" */
	__u64 policy_pcnt, policy_bcnt;	/* -P CHAIN POLICY -c P B */
	bool help, version, version_inverted;
	/* A restore line with the other family's -4/-6 (ip6tables-restore given
	 * -4): the line is for the other tool and is ignored, as iptables-restore
	 * ignores it. Nothing else of cmd is meaningful then. */
	bool other_family;

	/* The rule(s): one per (source, destination) pair, in iptables' order. */
	struct ipt_rule **rules;
	unsigned int nrules;

	/* The location of the error for the caret (index into argv), -1 none. */
	int err_argi;
	/* An extension's kernel-side refusal (exit 1, e.g. "-m tcp" without "-p tcp"):
	 * iptables meets it only when the rule reaches the kernel, after the target
	 * and the chain were checked, so it is reported then (ipt_table_apply). */
	struct ipt_err deferred;
};

/* Parse argv[0..argc) (argv[0] is the first option, not the program name).
 * On error, err says why and cmd holds nothing worth using; either way call
 * ipt_cmd_free(). */
int ipt_cmd_parse(int argc, char **argv, bool restore, struct ipt_cmd *cmd,
		  struct ipt_err *err);
void ipt_cmd_free(struct ipt_cmd *cmd);

/* Set while the saved state is re-read (ipt_restore_state): a chain that -E
 * named with up to 31 characters (as libiptc allows) may appear as -A CHAIN
 * and -j CHAIN there, which command lines limit to 28. */
extern bool ipt_cmd_state_names;

char ipt_cmd2char(unsigned int cmd);

#endif
