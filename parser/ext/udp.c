// SPDX-License-Identifier: GPL-2.0
/* -m udp: --sport, --dport (iptables reads them as XTTYPE_PORTRC). */
#include "ext.h"
#include "proto_ext.h"

enum { O_SPORT, O_DPORT };

static const struct ipt_ext_opt udp_opts[] = {
	{ .name = "source-port", .has_arg = true, .id = O_SPORT },
	{ .name = "sport", .has_arg = true, .id = O_SPORT },
	{ .name = "destination-port", .has_arg = true, .id = O_DPORT },
	{ .name = "dport", .has_arg = true, .id = O_DPORT },
	{ NULL },
};

static void udp_init(void *data)
{
	struct ipt_udp_info *u = data;

	u->spts[1] = u->dpts[1] = 0xFFFF;
}

static int udp_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_udp_info *u = data;
	bool src = c->opt->id == O_SPORT;
	const char *opt = src ? "source-port" : "destination-port";

	if (c->flags & (1u << c->opt->id))
		return ipt_err_param(c->err, "udp: option \"--%s\" can only be used once.\n", opt);
	if (ipt_parse_portrc(c->arg, "udp", opt, src ? u->spts : u->dpts, c->err))
		return -1;
	if (c->invert)
		u->invflags |= src ? IPT_UDP_INV_SRCPT : IPT_UDP_INV_DSTPT;
	return 0;
}

static int udp_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (f->ip->proto != 17 || (f->ip->invflags & IPT_INV_PROTO))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: udp match: only valid for protocol 17");
	return 0;
}

static void save_ports(struct strbuf *sb, const char *opt, const __u16 p[2], bool inv)
{
	if (p[0] == 0 && p[1] == 0xFFFF && !inv)
		return;
	sb_addf(sb, "%s --%s ", inv ? " !" : "", opt);
	if (p[0] == p[1])
		sb_addf(sb, "%u", p[0]);
	else
		sb_addf(sb, "%u:%u", p[0], p[1]);
}

static void udp_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct ipt_udp_info *u = data;

	(void)ip;
	save_ports(sb, "sport", u->spts, u->invflags & IPT_UDP_INV_SRCPT);
	save_ports(sb, "dport", u->dpts, u->invflags & IPT_UDP_INV_DSTPT);
}

static void udp_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	const struct ipt_udp_info *u = data;

	(void)ip;
	sb_adds(sb, " udp");
	ipt_print_ports(sb, "spt", u->spts, u->invflags & IPT_UDP_INV_SRCPT, "udp", numeric);
	ipt_print_ports(sb, "dpt", u->dpts, u->invflags & IPT_UDP_INV_DSTPT, "udp", numeric);
}

const struct ipt_ext ipt_ext_udp = {
	.name = "udp",
	.size = sizeof(struct ipt_udp_info),
	.opts = udp_opts,
	.init = udp_init,
	.parse = udp_parse,
	.check = udp_check,
	.save = udp_save,
	.print = udp_print,
};
