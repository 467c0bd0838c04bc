/* SPDX-License-Identifier: GPL-2.0 */
/* The rule language printed back: iptables-save and -S text. */
#ifndef BPFIPT_SAVE_H
#define BPFIPT_SAVE_H

#include <stdbool.h>
#include "model.h"
#include "strbuf.h"

/* "-A CHAIN ..." (no newline). counters: append " -c P B" before the target (-S -v). */
void ipt_save_rule(struct strbuf *sb, const char *chain, const struct ipt_rule *r,
		   bool counters);
/* iptables -S [chain [rulenum]]; returns -1 when the chain or rule does not exist. */
int ipt_save_list_rules(struct strbuf *sb, const struct ipt_table *t, const char *chain,
			unsigned int rulenum, bool counters);
/* The *filter ... COMMIT section of iptables-save [-c]. */
void ipt_save_table(struct strbuf *sb, const struct ipt_table *t, bool counters);
/* The same for the saved state: with counters, and lossless where iptables-save
 * is not (an interface "+" is kept, odd interface names are quoted), so that
 * reading it back gives the very same model. */
void ipt_save_table_state(struct strbuf *sb, const struct ipt_table *t);

#endif
