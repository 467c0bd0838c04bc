// SPDX-License-Identifier: GPL-2.0
/* -m tcp: --sport, --dport, --tcp-flags MASK COMP, --syn, --tcp-option. */
#include "ext.h"
#include "proto_ext.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { O_SPORT, O_DPORT, O_FLAGS, O_OPTION };

static const struct ipt_ext_opt tcp_opts[] = {
	{ .name = "source-port", .has_arg = true, .id = O_SPORT },
	{ .name = "sport", .has_arg = true, .id = O_SPORT },
	{ .name = "destination-port", .has_arg = true, .id = O_DPORT },
	{ .name = "dport", .has_arg = true, .id = O_DPORT },
	{ .name = "syn", .has_arg = false, .id = O_FLAGS },
	{ .name = "tcp-flags", .has_arg = true, .id = O_FLAGS, .two_args = true },
	{ .name = "tcp-option", .has_arg = true, .id = O_OPTION },
	{ NULL },
};

static const struct { const char *name; __u8 flag; } tcp_flag_names[] = {
	{ "FIN", 0x01 }, { "SYN", 0x02 }, { "RST", 0x04 }, { "PSH", 0x08 },
	{ "ACK", 0x10 }, { "URG", 0x20 }, { "ALL", 0x3F }, { "NONE", 0 },
};

static void tcp_init(void *data)
{
	struct ipt_tcp_info *t = data;

	t->spts[1] = t->dpts[1] = 0xFFFF;
}

static int parse_flags(const char *s, __u8 *out, struct ipt_err *err)
{
	/* a copy as long as the argument: a cut-off list would be other flags */
	char *buf = strdup(s), *tok, *save = NULL;
	__u8 f = 0;
	int r = 0;

	if (!buf)
		abort();
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(tcp_flag_names) / sizeof(tcp_flag_names[0]); i++)
			if (!strcasecmp(tcp_flag_names[i].name, tok))
				break;
		if (i == sizeof(tcp_flag_names) / sizeof(tcp_flag_names[0])) {
			r = ipt_err_param(err, "Unknown TCP flag `%s'", tok);
			break;
		}
		f |= tcp_flag_names[i].flag;
	}
	free(buf);
	if (!r)
		*out = f;
	return r;
}

static int tcp_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_tcp_info *t = data;
	unsigned long long v;

	switch (c->opt->id) {
	case O_SPORT:
		if (c->flags & (1u << O_SPORT))
			return ipt_err_param(c->err, "Only one `--source-port' allowed");
		if (ipt_parse_port_range(c->arg, "tcp", t->spts, c->err))
			return -1;
		if (c->invert)
			t->invflags |= IPT_TCP_INV_SRCPT;
		return 0;
	case O_DPORT:
		if (c->flags & (1u << O_DPORT))
			return ipt_err_param(c->err, "Only one `--destination-port' allowed");
		if (ipt_parse_port_range(c->arg, "tcp", t->dpts, c->err))
			return -1;
		if (c->invert)
			t->invflags |= IPT_TCP_INV_DSTPT;
		return 0;
	case O_FLAGS:
		if (c->flags & (1u << O_FLAGS))
			return ipt_err_param(c->err, "Only one of `--syn' or `--tcp-flags'  allowed");
		if (!c->opt->has_arg) {		/* --syn */
			t->flg_mask = 0x17;	/* FIN,SYN,RST,ACK */
			t->flg_cmp = 0x02;	/* SYN */
		} else {
			if (!c->arg2)
				return ipt_err_param(c->err, "--tcp-flags requires two args.");
			if (parse_flags(c->arg, &t->flg_mask, c->err) ||
			    parse_flags(c->arg2, &t->flg_cmp, c->err))
				return -1;
		}
		if (c->invert)
			t->invflags |= IPT_TCP_INV_FLAGS;
		return 0;
	case O_OPTION:
		if (c->flags & (1u << O_OPTION))
			return ipt_err_param(c->err, "Only one `--tcp-option' allowed");
		if (ipt_strtoul(c->arg, NULL, 1, 255, &v))
			return ipt_err_param(c->err, "Bad TCP option \"%s\"", c->arg);
		t->option = (__u8)v;
		if (c->invert)
			t->invflags |= IPT_TCP_INV_OPTION;
		return 0;
	}
	return ipt_err_param(c->err, "tcp: unknown option");
}

static int tcp_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	/* The kernel's xt_tcpudp refuses the match unless the rule says -p tcp. */
	if (f->ip->proto != 6 || (f->ip->invflags & IPT_INV_PROTO))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: tcp match: only valid for protocol 6");
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

static void add_flag_names(struct strbuf *sb, __u8 flags)
{
	const char *sep = "";

	if (!flags) {
		sb_adds(sb, "NONE");
		return;
	}
	for (size_t i = 0; i < 6; i++) {
		if (flags & tcp_flag_names[i].flag) {
			sb_addf(sb, "%s%s", sep, tcp_flag_names[i].name);
			sep = ",";
		}
	}
}

static void tcp_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct ipt_tcp_info *t = data;

	(void)ip;
	save_ports(sb, "sport", t->spts, t->invflags & IPT_TCP_INV_SRCPT);
	save_ports(sb, "dport", t->dpts, t->invflags & IPT_TCP_INV_DSTPT);
	if (t->option || (t->invflags & IPT_TCP_INV_OPTION))
		sb_addf(sb, "%s --tcp-option %u",
			(t->invflags & IPT_TCP_INV_OPTION) ? " !" : "", t->option);
	/* iptables-save omits an empty mask even with a comparison (a rule that can
	 * never match); the state keeps it */
	if (t->flg_mask || (t->invflags & IPT_TCP_INV_FLAGS) ||
	    (ipt_save_lossless && t->flg_cmp)) {
		sb_addf(sb, "%s --tcp-flags ", (t->invflags & IPT_TCP_INV_FLAGS) ? " !" : "");
		add_flag_names(sb, t->flg_mask);
		sb_addc(sb, ' ');
		add_flag_names(sb, t->flg_cmp);
	}
}

/* " spt:22", " spts:!1:1023" — shared with udp. */
void ipt_print_ports(struct strbuf *sb, const char *name, const __u16 p[2], bool inv,
		     const char *proto, bool numeric)
{
	if (p[0] == 0 && p[1] == 0xFFFF && !inv)
		return;
	sb_addf(sb, " %s%s:%s", name, p[0] == p[1] ? "" : "s", inv ? "!" : "");
	ipt_print_port(sb, p[0], proto, numeric);
	if (p[0] != p[1]) {
		sb_addc(sb, ':');
		ipt_print_port(sb, p[1], proto, numeric);
	}
}

static void tcp_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	const struct ipt_tcp_info *t = data;

	(void)ip;
	sb_adds(sb, " tcp");
	ipt_print_ports(sb, "spt", t->spts, t->invflags & IPT_TCP_INV_SRCPT, "tcp", numeric);
	ipt_print_ports(sb, "dpt", t->dpts, t->invflags & IPT_TCP_INV_DSTPT, "tcp", numeric);
	if (t->option || (t->invflags & IPT_TCP_INV_OPTION))
		sb_addf(sb, " option=%s%u", (t->invflags & IPT_TCP_INV_OPTION) ? "!" : "",
			t->option);
	if (t->flg_mask || (t->invflags & IPT_TCP_INV_FLAGS)) {
		sb_addf(sb, " flags:%s", (t->invflags & IPT_TCP_INV_FLAGS) ? "!" : "");
		if (numeric) {
			sb_addf(sb, "0x%02X/0x%02X", t->flg_mask, t->flg_cmp);
		} else {
			add_flag_names(sb, t->flg_mask);
			sb_addc(sb, '/');
			add_flag_names(sb, t->flg_cmp);
		}
	}
}

const struct ipt_ext ipt_ext_tcp = {
	.name = "tcp",
	.size = sizeof(struct ipt_tcp_info),
	.opts = tcp_opts,
	.init = tcp_init,
	.parse = tcp_parse,
	.check = tcp_check,
	.save = tcp_save,
	.print = tcp_print,
};
