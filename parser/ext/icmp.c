// SPDX-License-Identifier: GPL-2.0
/* -m icmp: --icmp-type {any|NAME|TYPE[/CODE[:CODE]]} */
#include "ext.h"
#include "proto_ext.h"

#include <string.h>
#include <strings.h>

enum { O_ICMP_TYPE };

static const struct ipt_ext_opt icmp_opts[] = {
	{ .name = "icmp-type", .has_arg = true, .id = O_ICMP_TYPE },
	{ NULL },
};

/* The names iptables 1.8.9 knows, in its order (the order decides the ambiguity
 * message and which name -L prints); an alias follows its main name. */
static const struct icmp_name {
	const char *name;
	__u8 type, code_min, code_max;
} icmp_names[] = {
	{ "any", 0xFF, 0, 0xFF },
	{ "echo-reply", 0, 0, 0xFF },
	{ "pong", 0, 0, 0xFF },
	{ "destination-unreachable", 3, 0, 0xFF },
	{ "network-unreachable", 3, 0, 0 },
	{ "host-unreachable", 3, 1, 1 },
	{ "protocol-unreachable", 3, 2, 2 },
	{ "port-unreachable", 3, 3, 3 },
	{ "fragmentation-needed", 3, 4, 4 },
	{ "source-route-failed", 3, 5, 5 },
	{ "network-unknown", 3, 6, 6 },
	{ "host-unknown", 3, 7, 7 },
	{ "network-prohibited", 3, 9, 9 },
	{ "host-prohibited", 3, 10, 10 },
	{ "TOS-network-unreachable", 3, 11, 11 },
	{ "TOS-host-unreachable", 3, 12, 12 },
	{ "communication-prohibited", 3, 13, 13 },
	{ "host-precedence-violation", 3, 14, 14 },
	{ "precedence-cutoff", 3, 15, 15 },
	{ "source-quench", 4, 0, 0xFF },
	{ "redirect", 5, 0, 0xFF },
	{ "network-redirect", 5, 0, 0 },
	{ "host-redirect", 5, 1, 1 },
	{ "TOS-network-redirect", 5, 2, 2 },
	{ "TOS-host-redirect", 5, 3, 3 },
	{ "echo-request", 8, 0, 0xFF },
	{ "ping", 8, 0, 0xFF },
	{ "router-advertisement", 9, 0, 0xFF },
	{ "router-solicitation", 10, 0, 0xFF },
	{ "time-exceeded", 11, 0, 0xFF },
	{ "ttl-exceeded", 11, 0, 0xFF },
	{ "ttl-zero-during-transit", 11, 0, 0 },
	{ "ttl-zero-during-reassembly", 11, 1, 1 },
	{ "parameter-problem", 12, 0, 0xFF },
	{ "ip-header-bad", 12, 0, 0 },
	{ "required-option-missing", 12, 1, 1 },
	{ "timestamp-request", 13, 0, 0xFF },
	{ "timestamp-reply", 14, 0, 0xFF },
	{ "address-mask-request", 17, 0, 0xFF },
	{ "address-mask-reply", 18, 0, 0xFF },
};
#define N_ICMP_NAMES (sizeof(icmp_names) / sizeof(icmp_names[0]))

static int parse_icmp(const char *s, struct ipt_icmp_info *ic, struct ipt_err *err)
{
	size_t len = strlen(s), match = N_ICMP_NAMES;
	unsigned long long v;
	char *end;

	/* A name or any unambiguous abbreviation of one, case-insensitively. */
	for (size_t i = 0; i < N_ICMP_NAMES; i++) {
		if (strncasecmp(icmp_names[i].name, s, len))
			continue;
		if (match != N_ICMP_NAMES)
			return ipt_err_param(err, "Ambiguous ICMP type `%s': `%s' or `%s'?", s,
					     icmp_names[match].name, icmp_names[i].name);
		match = i;
	}
	if (match != N_ICMP_NAMES) {
		ic->type = icmp_names[match].type;
		ic->code[0] = icmp_names[match].code_min;
		ic->code[1] = icmp_names[match].code_max;
		return 0;
	}

	if (ipt_strtoul(s, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown ICMP type `%s'", s);
	ic->type = (__u8)v;
	ic->code[0] = 0;
	ic->code[1] = 0xFF;
	if (!*end)
		return 0;
	if (*end == ':')
		return ipt_err_param(err, "ICMP type range not supported");
	if (*end != '/')
		return ipt_err_param(err, "unknown character %c", *end);

	if (ipt_strtoul(end + 1, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown ICMP code `%s'", s);
	ic->code[0] = ic->code[1] = (__u8)v;
	if (!*end)
		return 0;
	if (*end != ':')
		return ipt_err_param(err, "unknown character %c", *end);
	if (ipt_strtoul(end + 1, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown ICMP code `%s'", s);
	if (*end)
		return ipt_err_param(err, "unknown character %c", *end);
	ic->code[1] = (__u8)v;
	return 0;
}

static int icmp_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_icmp_info *ic = data;

	if (c->flags & (1u << O_ICMP_TYPE))
		return ipt_err_param(c->err, "icmp: option \"--icmp-type\" can only be used once.\n");
	if (parse_icmp(c->arg, ic, c->err))
		return -1;
	ic->invert = c->invert;
	return 0;
}

static int icmp_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & (1u << O_ICMP_TYPE)))
		return ipt_err_param(f->err, "icmp: option \"--icmp-type\" must be specified\n");
	if (f->ip->proto != 1 || (f->ip->invflags & IPT_INV_PROTO))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: icmp match: only valid for protocol 1");
	return 0;
}

static void icmp_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct ipt_icmp_info *ic = data;

	(void)ip;
	sb_addf(sb, "%s --icmp-type ", ic->invert ? " !" : "");
	if (ic->type == 0xFF && ic->code[0] == 0 && ic->code[1] == 0xFF) {
		sb_adds(sb, "any");
		return;
	}
	sb_addf(sb, "%u", ic->type);
	/* Like iptables, a code range keeps only its lower end here. */
	if (ic->code[0] != 0 || ic->code[1] != 0xFF)
		sb_addf(sb, "/%u", ic->code[0]);
}

static void icmp_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	const struct ipt_icmp_info *ic = data;
	const char *inv = ic->invert ? "!" : "";

	(void)ip;
	sb_adds(sb, " icmp");
	if (!numeric) {
		for (size_t i = 0; i < N_ICMP_NAMES; i++) {
			if (icmp_names[i].type == ic->type && icmp_names[i].code_min == ic->code[0] &&
			    icmp_names[i].code_max == ic->code[1]) {
				sb_addf(sb, " %s%s", inv, icmp_names[i].name);
				return;
			}
		}
	}
	sb_addf(sb, "%stype %u", ic->invert ? " !" : "", ic->type);
	if (ic->code[0] == ic->code[1])
		sb_addf(sb, " code %u", ic->code[0]);
	else if (ic->code[0] != 0 || ic->code[1] != 0xFF)
		sb_addf(sb, " codes %u-%u", ic->code[0], ic->code[1]);
}

const struct ipt_ext ipt_ext_icmp = {
	.name = "icmp",
	.size = sizeof(struct ipt_icmp_info),
	.opts = icmp_opts,
	.parse = icmp_parse,
	.check = icmp_check,
	.save = icmp_save,
	.print = icmp_print,
};
