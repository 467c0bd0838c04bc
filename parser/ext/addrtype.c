// SPDX-License-Identifier: GPL-2.0
/*
 * -m addrtype [[!] --src-type TYPES] [[!] --dst-type TYPES]
 *             [--limit-iface-in | --limit-iface-out]      (xt_addrtype revision 1)
 * TYPES: a comma-separated list of routing types; like libxt_addrtype a word is
 * compared case-insensitively with the start of each name in RTN_* order, so "u"
 * is UNSPEC and "loc" LOCAL.
 */
#include "ext.h"
#include "misc_ext.h"

#include <string.h>
#include <strings.h>

enum { O_SRC, O_DST, O_LIMIT_IN, O_LIMIT_OUT };

static const struct ipt_ext_opt addrtype_opts[] = {
	{ "src-type", true, O_SRC, false },
	{ "dst-type", true, O_DST, false },
	{ "limit-iface-in", false, O_LIMIT_IN, false },
	{ "limit-iface-out", false, O_LIMIT_OUT, false },
	{ NULL, false, 0, false },
};

/* RTN_UNSPEC .. RTN_XRESOLVE of <linux/rtnetlink.h>: bit i of a mask is type i */
static const char *const rtn_names[] = {
	"UNSPEC", "UNICAST", "LOCAL", "BROADCAST", "ANYCAST", "MULTICAST",
	"BLACKHOLE", "UNREACHABLE", "PROHIBIT", "THROW", "NAT", "XRESOLVE",
};
#define NTYPES (sizeof(rtn_names) / sizeof(rtn_names[0]))

static bool add_type(const char *word, size_t len, __u16 *mask)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (strncasecmp(word, rtn_names[i], len) == 0) {
			*mask |= (__u16)(1u << i);
			return true;
		}
	return false;
}

static int parse_types(const char *arg, __u16 *mask, struct ipt_err *err)
{
	const char *comma;

	/* libxt_addrtype quotes a bad word before the last with `', the last with "" */
	while ((comma = strchr(arg, ',')) != NULL) {
		if (comma == arg || !add_type(arg, (size_t)(comma - arg), mask))
			return ipt_err_param(err, "addrtype: bad type `%s'", arg);
		arg = comma + 1;
	}
	if (*arg == '\0' || !add_type(arg, strlen(arg), mask))
		return ipt_err_param(err, "addrtype: bad type \"%s\"", arg);
	return 0;
}

static int addrtype_parse(void *data, const struct ipt_ext_call *c)
{
	struct addrtype_data *d = data;
	int id = c->opt->id;

	if (ipt_xt_opt_begin(c, "addrtype", id == O_SRC || id == O_DST))
		return -1;
	switch (id) {
	case O_SRC:
		if (c->invert)
			d->flags |= ADDRTYPE_INVERT_SOURCE;
		return parse_types(c->arg, &d->source, c->err);
	case O_DST:
		if (c->invert)
			d->flags |= ADDRTYPE_INVERT_DEST;
		return parse_types(c->arg, &d->dest, c->err);
	default:
		d->flags |= id == O_LIMIT_IN ? ADDRTYPE_LIMIT_IFACE_IN : ADDRTYPE_LIMIT_IFACE_OUT;
		return 0;
	}
}

static int addrtype_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	/* libxt_addrtype's check, then libxtables' exclusion (table order) */
	if (!(f->flags & (1u << O_SRC | 1u << O_DST)))
		return ipt_err_param(f->err, "addrtype: you must specify --src-type or --dst-type");
	if ((f->flags & (1u << O_LIMIT_IN)) && (f->flags & (1u << O_LIMIT_OUT)))
		return ipt_err_param(f->err, "addrtype: option \"--limit-iface-in\" cannot be used "
				     "together with \"--limit-iface-out\".\n");
	return 0;
}

/* xt_addrtype's checkentry: the input interface exists before routing and in
 * FORWARD, the output one after routing */
static unsigned int addrtype_hooks(const void *data)
{
	const struct addrtype_data *d = data;

	if (d->flags & ADDRTYPE_LIMIT_IFACE_IN)
		return IPT_HOOK_INPUT | IPT_HOOK_FORWARD;
	if (d->flags & ADDRTYPE_LIMIT_IFACE_OUT)
		return IPT_HOOK_FORWARD | IPT_HOOK_OUTPUT;
	return IPT_HOOK_INPUT | IPT_HOOK_FORWARD | IPT_HOOK_OUTPUT;
}

static void put_types(struct strbuf *sb, __u16 mask)
{
	const char *sep = "";

	for (size_t i = 0; i < NTYPES; i++)
		if (mask & (1u << i)) {
			sb_addf(sb, "%s%s", sep, rtn_names[i]);
			sep = ",";
		}
}

static void addrtype_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct addrtype_data *d = data;

	(void)ip;
	if (d->source) {
		sb_adds(sb, d->flags & ADDRTYPE_INVERT_SOURCE ? " ! --src-type " : " --src-type ");
		put_types(sb, d->source);
	}
	if (d->dest) {
		sb_adds(sb, d->flags & ADDRTYPE_INVERT_DEST ? " ! --dst-type " : " --dst-type ");
		put_types(sb, d->dest);
	}
	if (d->flags & ADDRTYPE_LIMIT_IFACE_IN)
		sb_adds(sb, " --limit-iface-in");
	if (d->flags & ADDRTYPE_LIMIT_IFACE_OUT)
		sb_adds(sb, " --limit-iface-out");
}

static void addrtype_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			   bool numeric)
{
	const struct addrtype_data *d = data;

	(void)ip;
	(void)numeric;
	sb_adds(sb, " ADDRTYPE match");
	if (d->source) {
		sb_adds(sb, d->flags & ADDRTYPE_INVERT_SOURCE ? " src-type !" : " src-type ");
		put_types(sb, d->source);
	}
	if (d->dest) {
		sb_adds(sb, d->flags & ADDRTYPE_INVERT_DEST ? " dst-type !" : " dst-type ");
		put_types(sb, d->dest);
	}
	if (d->flags & ADDRTYPE_LIMIT_IFACE_IN)
		sb_adds(sb, " limit-in");
	if (d->flags & ADDRTYPE_LIMIT_IFACE_OUT)
		sb_adds(sb, " limit-out");
}

const struct ipt_ext ipt_ext_addrtype = {
	.name = "addrtype",
	.is_target = false,
	.size = sizeof(struct addrtype_data),
	.opts = addrtype_opts,
	.parse = addrtype_parse,
	.check = addrtype_check,
	.save = addrtype_save,
	.print = addrtype_print,
	.hooks_of = addrtype_hooks,
};
