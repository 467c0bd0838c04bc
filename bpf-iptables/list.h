/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The `-L` listing: byte for byte what `iptables-legacy -L` (v1.8.9) prints for the
 * filter table, in all of its forms (-n, -v, -x, --line-numbers, CHAIN, CHAIN RULENUM).
 */
#ifndef BPFIPT_LIST_H
#define BPFIPT_LIST_H

#include <linux/types.h>
#include "model.h"
#include "strbuf.h"

enum {
	IPT_FMT_NUMERIC = 1,		/* -n */
	IPT_FMT_VERBOSE = 2,		/* -v */
	IPT_FMT_EXACT = 4,		/* -x */
	IPT_FMT_LINENUMBERS = 8,	/* --line-numbers */
};

/*
 * iptables -L [chain [rulenum]].
 * chain NULL: every chain of the table in its stored order (builtins, then user chains),
 * an empty line between two chains. rulenum 0: the whole chain with its two header lines;
 * rulenum N: only the line of rule N, without any header (nothing at all when the chain
 * has fewer rules, as iptables does).
 * Returns 0, or -1 when chain is given and does not exist (the caller reports
 * "iptables: No chain/target/match by that name." and exits 1); sb is untouched then.
 */
int ipt_list(struct strbuf *sb, const struct ipt_table *t, const char *chain,
	     unsigned int rulenum, unsigned int fmt);

/*
 * The reverse lookup used without -n: an address (network byte order) to a name, or NULL
 * when it has none. The default (fn NULL) is what libxtables does: gethostbyaddr(), then
 * getnetbyaddr(). Tests install a fixed table so their golden text does not depend on the
 * machine's /etc/hosts, /etc/networks or DNS.
 */
/*
 * The line iptables -v prints for each rule it is about to add, insert, replace,
 * check or delete (print_firewall_line in FMT_PRINT_RULE form), e.g.
 * "ACCEPT  tcp opt -- in eth0 out *  1.2.3.4  -> 0.0.0.0/0   tcp dpt:22\n".
 */
void ipt_list_rule_echo(struct strbuf *sb, const struct ipt_rule *r);

typedef const char *(*ipt_list_namer_fn)(__be32 addr);
void ipt_list_set_namer(ipt_list_namer_fn fn);
/* The same for IPv6 (bpf-ip6tables): the default is getnameinfo(), as ip6tables. */
typedef const char *(*ipt_list_namer6_fn)(const union ipt_addr *addr);
void ipt_list_set_namer6(ipt_list_namer6_fn fn);

#endif
