// SPDX-License-Identifier: GPL-2.0
/* -j REJECT [--reject-with TYPE]; the kernel wants -p tcp for tcp-reset. The
 * types are those of the family run: icmp-* for iptables, icmp6-* for ip6tables. */
#include "ext.h"
#include "misc_ext.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct reject_type {
	const char *name, *alias;
	__u32 with;
};

/* In iptables' order: an abbreviation takes the first entry it starts. */
static const struct reject_type reject_table[] = {
	{ "icmp-net-unreachable", "net-unreach", REJ_NET_UNREACH },
	{ "icmp-host-unreachable", "host-unreach", REJ_HOST_UNREACH },
	{ "icmp-proto-unreachable", "proto-unreach", REJ_PROT_UNREACH },
	{ "icmp-port-unreachable", "port-unreach", REJ_PORT_UNREACH },
	{ "icmp-net-prohibited", "net-prohib", REJ_NET_PROHIB },
	{ "icmp-host-prohibited", "host-prohib", REJ_HOST_PROHIB },
	{ "tcp-reset", "tcp-rst", REJ_TCP_RESET },
	{ "icmp-admin-prohibited", "admin-prohib", REJ_ADMIN_PROHIB },
};
#define N_REJECT (sizeof(reject_table) / sizeof(reject_table[0]))

/* ip6tables' (libip6t_REJECT), in its order; tcp-reset has no other spelling */
static const struct reject_type reject6_table[] = {
	{ "icmp6-no-route", "no-route", REJ6_NO_ROUTE },
	{ "icmp6-adm-prohibited", "adm-prohibited", REJ6_ADM_PROHIBITED },
	{ "icmp6-addr-unreachable", "addr-unreach", REJ6_ADDR_UNREACH },
	{ "icmp6-port-unreachable", "port-unreach", REJ6_PORT_UNREACH },
	{ "icmp6-policy-fail", "policy-fail", REJ6_POLICY_FAIL },
	{ "icmp6-reject-route", "reject-route", REJ6_REJECT_ROUTE },
	{ "tcp-reset", "tcp-reset", REJ6_TCP_RESET },
};
#define N_REJECT6 (sizeof(reject6_table) / sizeof(reject6_table[0]))

/* the table of the family run */
static const struct reject_type *types(size_t *n)
{
	*n = ipt_af == AF_INET6 ? N_REJECT6 : N_REJECT;
	return ipt_af == AF_INET6 ? reject6_table : reject_table;
}

static const struct ipt_ext_opt reject_opts[] = {
	{ "reject-with", true, 0, false },
	{ NULL, false, 0, false },
};

static void reject_init(void *data)
{
	struct reject_data *d = data;

	d->with = ipt_af == AF_INET6 ? REJ6_PORT_UNREACH : REJ_PORT_UNREACH;
}

static int reject_parse(void *data, const struct ipt_ext_call *c)
{
	struct reject_data *d = data;
	size_t n = strlen(c->arg), nt;
	const struct reject_type *tab = types(&nt);

	if (ipt_xt_opt_begin(c, "REJECT", false))
		return -1;
	for (size_t i = 0; i < nt; i++) {
		if (!strncasecmp(tab[i].name, c->arg, n) ||
		    !strncasecmp(tab[i].alias, c->arg, n)) {
			d->with = tab[i].with;
			return 0;
		}
	}
	if (ipt_af != AF_INET6 &&
	    (!strncasecmp("echo-reply", c->arg, n) || !strncasecmp("echoreply", c->arg, n)))
		ipt_warn("--reject-with echo-reply no longer supported\n");
	return ipt_err_param(c->err, "unknown reject type \"%s\"", c->arg);
}

static int reject_check(void *data, const struct ipt_ext_final *f)
{
	struct reject_data *d = data;

	/* ipt_REJECT's (ip6t_REJECT's) checkentry */
	if (d->with == (ipt_af == AF_INET6 ? REJ6_TCP_RESET : REJ_TCP_RESET) &&
	    (f->ip->proto != 6 || (f->ip->invflags & IPT_INV_PROTO)))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: --reject-with tcp-reset needs -p tcp");
	return 0;
}

static const char *reject_name(__u32 with)
{
	size_t nt;
	const struct reject_type *tab = types(&nt);

	for (size_t i = 0; i < nt; i++)
		if (tab[i].with == with)
			return tab[i].name;
	return ipt_af == AF_INET6 ? "icmp6-port-unreachable" : "icmp-port-unreachable";
}

static void reject_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct reject_data *d = data;

	(void)ip;
	sb_addf(sb, " --reject-with %s", reject_name(d->with));
}

static void reject_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			 bool numeric)
{
	const struct reject_data *d = data;

	(void)ip;
	(void)numeric;
	sb_addf(sb, " reject-with %s", reject_name(d->with));
}

const struct ipt_ext ipt_ext_REJECT = {
	.name = "REJECT",
	.is_target = true,
	.size = sizeof(struct reject_data),
	.opts = reject_opts,
	.init = reject_init,
	.parse = reject_parse,
	.check = reject_check,
	.save = reject_save,
	.print = reject_print,
};
