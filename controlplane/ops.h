/* SPDX-License-Identifier: GPL-2.0 */
/* Commands applied to the rule model (what libiptc + the kernel's checks do). */
#ifndef BPFIPT_OPS_H
#define BPFIPT_OPS_H

#include "cmd.h"
#include "model.h"

/* Apply a modifying command (or -C) to t. On error t may be half-changed:
 * callers apply to a copy and keep the original on failure. The whole-table
 * checks are ipt_table_validate()'s, run once before the result is kept. The
 * rules of -A, -I and -R move into t (cmd->rules[i] become NULL). */
int ipt_table_apply(struct ipt_table *t, struct ipt_cmd *cmd, struct ipt_err *err);
/* The checks the kernel makes when a table is loaded: loops reachable from a
 * built-in chain, jumps to built-in chains, extensions outside their hooks. */
int ipt_table_validate(const struct ipt_table *t, struct ipt_err *err);
/* Can the command not make a valid table fail ipt_table_validate()? An -A or
 * -I of rules that neither jump nor go to a chain (no new path, no loop: an
 * added rule can only end a chain's walk earlier) and use no extension limited
 * to some hooks. Call before ipt_table_apply(), which takes the rules. The
 * validation of a 1M-rule table is 5% of a one-rule -A into it. */
bool ipt_cmd_keeps_valid(const struct ipt_cmd *cmd);
/* The checks iptables makes of -j/-g against the table before anything else
 * (exit 2: "Couldn't load target", "goto 'X' is not a chain"). */
int ipt_cmd_resolve(const struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err);
/* Does the command change the table (and so need the lock and a write)? */
bool ipt_cmd_modifies(const struct ipt_cmd *cmd);

#endif
