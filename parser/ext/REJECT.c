// SPDX-License-Identifier: GPL-2.0
/* -j REJECT [--reject-with TYPE]; the kernel wants -p tcp for tcp-reset. */
#include "ext.h"
#include "misc_ext.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* In iptables' order: an abbreviation takes the first entry it starts. */
static const struct {
	const char *name, *alias;
	__u32 with;
} reject_table[] = {
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

static const struct ipt_ext_opt reject_opts[] = {
	{ "reject-with", true, 0, false },
	{ NULL, false, 0, false },
};

static void reject_init(void *data)
{
	struct reject_data *d = data;

	d->with = REJ_PORT_UNREACH;
}

static int reject_parse(void *data, const struct ipt_ext_call *c)
{
	struct reject_data *d = data;
	size_t n = strlen(c->arg);

	if (ipt_xt_opt_begin(c, "REJECT", false))
		return -1;
	for (size_t i = 0; i < N_REJECT; i++) {
		if (!strncasecmp(reject_table[i].name, c->arg, n) ||
		    !strncasecmp(reject_table[i].alias, c->arg, n)) {
			d->with = reject_table[i].with;
			return 0;
		}
	}
	if (!strncasecmp("echo-reply", c->arg, n) || !strncasecmp("echoreply", c->arg, n))
		ipt_warn("--reject-with echo-reply no longer supported\n");
	return ipt_err_param(c->err, "unknown reject type \"%s\"", c->arg);
}

static int reject_check(void *data, const struct ipt_ext_final *f)
{
	struct reject_data *d = data;

	/* ipt_REJECT's checkentry */
	if (d->with == REJ_TCP_RESET &&
	    (f->ip->proto != 6 || (f->ip->invflags & IPT_INV_PROTO)))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: --reject-with tcp-reset needs -p tcp");
	return 0;
}

static const char *reject_name(__u32 with)
{
	for (size_t i = 0; i < N_REJECT; i++)
		if (reject_table[i].with == with)
			return reject_table[i].name;
	return "icmp-port-unreachable";
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
