// SPDX-License-Identifier: GPL-2.0
/* -m state --state LIST: the conntrack states INVALID, NEW, ESTABLISHED, RELATED, UNTRACKED. */
#include "ext.h"
#include "proto_ext.h"

#include <string.h>
#include <strings.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/xt_conntrack.h>

enum { O_STATE };

static const struct ipt_ext_opt state_opts[] = {
	{ .name = "state", .has_arg = true, .id = O_STATE },
	{ NULL },
};

static const struct { const char *name; __u16 bit; } parse_order[] = {
	{ "INVALID", XT_CONNTRACK_STATE_INVALID },
	{ "NEW", XT_CONNTRACK_STATE_BIT(IP_CT_NEW) },
	{ "ESTABLISHED", XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) },
	{ "RELATED", XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) },
	{ "UNTRACKED", XT_CONNTRACK_STATE_UNTRACKED },
}, print_order[] = {
	{ "INVALID", XT_CONNTRACK_STATE_INVALID },
	{ "NEW", XT_CONNTRACK_STATE_BIT(IP_CT_NEW) },
	{ "RELATED", XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) },
	{ "ESTABLISHED", XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) },
	{ "UNTRACKED", XT_CONNTRACK_STATE_UNTRACKED },
};
#define N_STATES 5

/* An element is any prefix of a state name, case-insensitively; 0 = unknown. */
static __u16 one_state(const char *s, size_t len)
{
	for (size_t i = 0; i < N_STATES; i++)
		if (!strncasecmp(s, parse_order[i].name, len))
			return parse_order[i].bit;
	return 0;
}

static int state_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_state_info *st = data;
	const char *arg = c->arg, *comma;
	__u16 mask = 0, bit;

	if (c->flags & (1u << O_STATE))
		return ipt_err_param(c->err, "state: option \"--state\" can only be used once.\n");
	while ((comma = strchr(arg, ',')) != NULL) {
		if (comma == arg || !(bit = one_state(arg, (size_t)(comma - arg))))
			return ipt_err_param(c->err, "Bad state \"%s\"", arg);
		mask |= bit;
		arg = comma + 1;
	}
	if (!*arg)
		return ipt_err_param(c->err, "\"--state\" requires a list of states with no "
				     "spaces, e.g. ESTABLISHED,RELATED");
	if (!(bit = one_state(arg, strlen(arg))))
		return ipt_err_param(c->err, "Bad state \"%s\"", arg);
	st->state_mask = mask | bit;
	st->invert = c->invert;
	return 0;
}

static int state_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & (1u << O_STATE)))
		return ipt_err_param(f->err, "state: option \"--state\" must be specified\n");
	return 0;
}

static void add_states(struct strbuf *sb, __u16 mask)
{
	const char *sep = " ";

	for (size_t i = 0; i < N_STATES; i++) {
		if (mask & print_order[i].bit) {
			sb_addf(sb, "%s%s", sep, print_order[i].name);
			sep = ",";
		}
	}
}

static void state_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct ipt_state_info *st = data;

	(void)ip;
	sb_addf(sb, "%s --state", st->invert ? " !" : "");
	add_states(sb, st->state_mask);
}

static void state_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	const struct ipt_state_info *st = data;

	(void)ip;
	(void)numeric;
	sb_addf(sb, "%s state", st->invert ? " !" : "");
	add_states(sb, st->state_mask);
}

const struct ipt_ext ipt_ext_state = {
	.name = "state",
	.size = sizeof(struct ipt_state_info),
	.opts = state_opts,
	.parse = state_parse,
	.check = state_check,
	.save = state_save,
	.print = state_print,
};
