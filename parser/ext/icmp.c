// SPDX-License-Identifier: GPL-2.0
/* -m icmp: --icmp-type {any|NAME|TYPE[/CODE[:CODE]]} (iptables), and the same code
 * as -m icmp6: --icmpv6-type {NAME|TYPE[/CODE[:CODE]]} (ip6tables). */
#include "ext.h"
#include "proto_ext.h"

#include <string.h>
#include <strings.h>

enum { O_ICMP_TYPE };

static const struct ipt_ext_opt icmp_opts[] = {
	{ .name = "icmp-type", .has_arg = true, .id = O_ICMP_TYPE },
	{ NULL },
};

static const struct ipt_ext_opt icmp6_opts[] = {
	{ .name = "icmpv6-type", .has_arg = true, .id = O_ICMP_TYPE },
	{ NULL },
};

struct icmp_name {
	const char *name;
	__u8 type, code_min, code_max;
};

/* The names iptables 1.8.9 knows, in its order (the order decides the ambiguity
 * message and which name -L prints); an alias follows its main name. */
static const struct icmp_name icmp_names[] = {
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

/* ip6tables 1.8.9's ICMPv6 names, in its order; an alias follows its main name. */
static const struct icmp_name icmp6_names[] = {
	{ "destination-unreachable", 1, 0, 0xFF },
	{ "no-route", 1, 0, 0 },
	{ "communication-prohibited", 1, 1, 1 },
	{ "beyond-scope", 1, 2, 2 },
	{ "address-unreachable", 1, 3, 3 },
	{ "port-unreachable", 1, 4, 4 },
	{ "failed-policy", 1, 5, 5 },
	{ "reject-route", 1, 6, 6 },
	{ "packet-too-big", 2, 0, 0xFF },
	{ "time-exceeded", 3, 0, 0xFF },
	{ "ttl-exceeded", 3, 0, 0xFF },
	{ "ttl-zero-during-transit", 3, 0, 0 },
	{ "ttl-zero-during-reassembly", 3, 1, 1 },
	{ "parameter-problem", 4, 0, 0xFF },
	{ "bad-header", 4, 0, 0 },
	{ "unknown-header-type", 4, 1, 1 },
	{ "unknown-option", 4, 2, 2 },
	{ "echo-request", 128, 0, 0xFF },
	{ "ping", 128, 0, 0xFF },
	{ "echo-reply", 129, 0, 0xFF },
	{ "pong", 129, 0, 0xFF },
	{ "router-solicitation", 133, 0, 0xFF },
	{ "router-advertisement", 134, 0, 0xFF },
	{ "neighbour-solicitation", 135, 0, 0xFF },
	{ "neighbor-solicitation", 135, 0, 0xFF },
	{ "neighbour-advertisement", 136, 0, 0xFF },
	{ "neighbor-advertisement", 136, 0, 0xFF },
	{ "redirect", 137, 0, 0xFF },
};

/* What differs between the two: names, words, the protocol. */
static const struct icmp_kind {
	const char *ext, *opt;		/* "icmp", "icmp-type" */
	const char *word;		/* in messages: "ICMP", "ICMPv6" */
	const char *label;		/* -L: " icmp", " ipv6-icmp" */
	const struct icmp_name *names;
	size_t nnames;
	__u16 proto;
	bool any;			/* type 255 codes 0-255 saves as "any" */
} icmp4 = {
	"icmp", "icmp-type", "ICMP", " icmp", icmp_names,
	sizeof(icmp_names) / sizeof(icmp_names[0]), 1, true,
}, icmp6 = {
	"icmp6", "icmpv6-type", "ICMPv6", " ipv6-icmp", icmp6_names,
	sizeof(icmp6_names) / sizeof(icmp6_names[0]), 58, false,
};

static int parse_icmp(const struct icmp_kind *k, const char *s, struct ipt_icmp_info *ic,
		      struct ipt_err *err)
{
	size_t len = strlen(s), match = k->nnames;
	unsigned long long v;
	char *end;

	/* A name or any unambiguous abbreviation of one, case-insensitively. */
	for (size_t i = 0; i < k->nnames; i++) {
		if (strncasecmp(k->names[i].name, s, len))
			continue;
		if (match != k->nnames)
			return ipt_err_param(err, "Ambiguous %s type `%s': `%s' or `%s'?", k->word,
					     s, k->names[match].name, k->names[i].name);
		match = i;
	}
	if (match != k->nnames) {
		ic->type = k->names[match].type;
		ic->code[0] = k->names[match].code_min;
		ic->code[1] = k->names[match].code_max;
		return 0;
	}

	if (ipt_strtoul(s, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown %s type `%s'", k->word, s);
	ic->type = (__u8)v;
	ic->code[0] = 0;
	ic->code[1] = 0xFF;
	if (!*end)
		return 0;
	if (*end == ':')
		return ipt_err_param(err, "%s type range not supported", k->word);
	if (*end != '/')
		return ipt_err_param(err, "unknown character %c", *end);

	if (ipt_strtoul(end + 1, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown %s code `%s'", k->word, s);
	ic->code[0] = ic->code[1] = (__u8)v;
	if (!*end)
		return 0;
	if (*end != ':')
		return ipt_err_param(err, "unknown character %c", *end);
	if (ipt_strtoul(end + 1, &end, 0, 255, &v))
		return ipt_err_param(err, "Unknown %s code `%s'", k->word, s);
	if (*end)
		return ipt_err_param(err, "unknown character %c", *end);
	ic->code[1] = (__u8)v;
	return 0;
}

static int any_parse(const struct icmp_kind *k, void *data, const struct ipt_ext_call *c)
{
	struct ipt_icmp_info *ic = data;

	if (c->flags & (1u << O_ICMP_TYPE))
		return ipt_err_param(c->err, "%s: option \"--%s\" can only be used once.\n",
				     k->ext, k->opt);
	if (parse_icmp(k, c->arg, ic, c->err))
		return -1;
	ic->invert = c->invert;
	return 0;
}

static int any_check(const struct icmp_kind *k, const struct ipt_ext_final *f)
{
	if (!(f->flags & (1u << O_ICMP_TYPE)))
		return ipt_err_param(f->err, "%s: option \"--%s\" must be specified\n", k->ext,
				     k->opt);
	if (f->ip->proto != k->proto || (f->ip->invflags & IPT_INV_PROTO))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: %s match: only valid for protocol %u",
				   k->ext, k->proto);
	return 0;
}

static void any_save(const struct icmp_kind *k, struct strbuf *sb, const void *data)
{
	const struct ipt_icmp_info *ic = data;

	sb_addf(sb, "%s --%s ", ic->invert ? " !" : "", k->opt);
	if (k->any && ic->type == 0xFF && ic->code[0] == 0 && ic->code[1] == 0xFF) {
		sb_adds(sb, "any");
		return;
	}
	sb_addf(sb, "%u", ic->type);
	/* Like iptables, a code range keeps only its lower end here. */
	if (ic->code[0] != 0 || ic->code[1] != 0xFF)
		sb_addf(sb, "/%u", ic->code[0]);
}

static void any_print(const struct icmp_kind *k, struct strbuf *sb, const void *data,
		      bool numeric)
{
	const struct ipt_icmp_info *ic = data;
	const char *inv = ic->invert ? "!" : "";

	sb_adds(sb, k->label);
	if (!numeric) {
		for (size_t i = 0; i < k->nnames; i++) {
			const struct icmp_name *n = &k->names[i];

			if (n->type == ic->type && n->code_min == ic->code[0] &&
			    n->code_max == ic->code[1]) {
				sb_addf(sb, " %s%s", inv, n->name);
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

static int icmp_parse(void *data, const struct ipt_ext_call *c)
{
	return any_parse(&icmp4, data, c);
}

static int icmp6_parse(void *data, const struct ipt_ext_call *c)
{
	return any_parse(&icmp6, data, c);
}

static int icmp_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	return any_check(&icmp4, f);
}

static int icmp6_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	return any_check(&icmp6, f);
}

static void icmp_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	(void)ip;
	any_save(&icmp4, sb, data);
}

static void icmp6_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	(void)ip;
	any_save(&icmp6, sb, data);
}

static void icmp_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	(void)ip;
	any_print(&icmp4, sb, data, numeric);
}

static void icmp6_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric)
{
	(void)ip;
	any_print(&icmp6, sb, data, numeric);
}

const struct ipt_ext ipt_ext_icmp = {
	.name = "icmp",
	.size = sizeof(struct ipt_icmp_info),
	.opts = icmp_opts,
	.parse = icmp_parse,
	.check = icmp_check,
	.save = icmp_save,
	.print = icmp_print,
	.families = IPT_EXT_F4,
};

/* ip6tables' -m icmp6 (ip6t_icmp): the same payload, for protocol 58 */
const struct ipt_ext ipt_ext_icmp6 = {
	.name = "icmp6",
	.size = sizeof(struct ipt_icmp_info),
	.opts = icmp6_opts,
	.parse = icmp6_parse,
	.check = icmp6_check,
	.save = icmp6_save,
	.print = icmp6_print,
	.families = IPT_EXT_F6,
};
