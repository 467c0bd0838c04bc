// SPDX-License-Identifier: GPL-2.0
/* -m length [!] --length min[:max] (open ends allowed: ":5", "5:", ":"). */
#include "ext.h"
#include "misc_ext.h"

#include <string.h>

static const struct ipt_ext_opt length_opts[] = {
	{ "length", true, 0, false },
	{ NULL, false, 0, false },
};

static int length_parse(void *data, const struct ipt_ext_call *c)
{
	struct length_data *d = data;
	unsigned long long vals[2] = { 0, 0 };
	unsigned int n = 0;
	const char *arg = c->arg;
	char *end;

	if (ipt_xt_opt_begin(c, "length", true))
		return -1;
	/* libxtables' range parser (XTTYPE_UINT16RC): empty first part = 0, empty
	 * second part = 65535; one value = a range of one. */
	for (;; arg = end + 1) {
		unsigned long long v;

		if (n == 2)
			return ipt_err_param(c->err, "length: Too many components for option "
					     "\"--length\" (max: 2)\n");
		if (*arg == '\0' || *arg == ':') {
			end = (char *)arg;
			v = n == 1 ? 65535 : 0;
		} else {
			if (ipt_strtoul(arg, &end, 0, 65535, &v))
				return ipt_err_param(c->err, "length: bad value for option "
						     "\"--length\" near \"%s\", or out of range "
						     "(0-65535).\n", arg);
			if (*end != '\0' && *end != ':')
				return ipt_err_param(c->err, "length: Argument to \"--length\" has "
						     "unexpected characters near \"%s\".\n", end);
		}
		vals[n++] = v;
		if (*end == '\0')
			break;
	}
	if (n == 1)
		vals[1] = vals[0];
	/* iptables >= 1.8.10 refuses a reversed range (1.8.9 took it; it never matched). */
	if (vals[0] > vals[1])
		return ipt_err_param(c->err, "length: range \"%s\" is reversed: %llu > %llu\n",
				     c->arg, vals[0], vals[1]);
	d->min = (__u16)vals[0];
	d->max = (__u16)vals[1];
	d->invert = c->invert;
	return 0;
}

static int length_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & 1u))
		return ipt_xt_opt_mandatory(f->err, "length", "length");
	return 0;
}

static void put_range(struct strbuf *sb, const struct length_data *d)
{
	if (d->min == d->max)
		sb_addf(sb, "%u", d->min);
	else
		sb_addf(sb, "%u:%u", d->min, d->max);
}

static void length_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct length_data *d = data;

	(void)ip;
	sb_adds(sb, d->invert ? " ! --length " : " --length ");
	put_range(sb, d);
}

static void length_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			 bool numeric)
{
	const struct length_data *d = data;

	(void)ip;
	(void)numeric;
	sb_adds(sb, d->invert ? " length !" : " length ");
	put_range(sb, d);
}

const struct ipt_ext ipt_ext_length = {
	.name = "length",
	.is_target = false,
	.size = sizeof(struct length_data),
	.opts = length_opts,
	.parse = length_parse,
	.check = length_check,
	.save = length_save,
	.print = length_print,
};
