// SPDX-License-Identifier: GPL-2.0
/* -m mark [!] --mark value[/mask] (xt_mark revision 1). */
#include "ext.h"
#include "misc_ext.h"

static const struct ipt_ext_opt mark_opts[] = {
	{ "mark", true, 0, false },
	{ NULL, false, 0, false },
};

static int mark_parse(void *data, const struct ipt_ext_call *c)
{
	struct mark_data *d = data;
	unsigned long long v, m = 0xffffffffu;
	char *end;

	if (ipt_xt_opt_begin(c, "mark", true))
		return -1;
	if (ipt_strtoul(c->arg, &end, 0, 0xffffffffu, &v))
		goto bad;
	if (*end == '/' && ipt_strtoul(end + 1, &end, 0, 0xffffffffu, &m))
		goto bad;
	if (*end != '\0')
		return ipt_err_param(c->err,
			"mark: trailing garbage after value for option \"--mark\".\n");
	d->mark = (__u32)v;
	d->mask = (__u32)m;
	d->invert = c->invert;
	return 0;
bad:
	return ipt_err_param(c->err,
		"mark: bad integer value for option \"--mark\", or out of range.\n");
}

static int mark_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & 1u))
		return ipt_xt_opt_mandatory(f->err, "mark", "mark");
	return 0;
}

static void put_mark(struct strbuf *sb, const struct mark_data *d)
{
	sb_addf(sb, " 0x%x", d->mark);
	if (d->mask != 0xffffffffu)
		sb_addf(sb, "/0x%x", d->mask);
}

static void mark_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct mark_data *d = data;

	(void)ip;
	sb_adds(sb, d->invert ? " ! --mark" : " --mark");
	put_mark(sb, d);
}

static void mark_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
		       bool numeric)
{
	const struct mark_data *d = data;

	(void)ip;
	(void)numeric;
	sb_adds(sb, d->invert ? " mark match !" : " mark match");
	put_mark(sb, d);
}

const struct ipt_ext ipt_ext_mark = {
	.name = "mark",
	.is_target = false,
	.size = sizeof(struct mark_data),
	.opts = mark_opts,
	.parse = mark_parse,
	.check = mark_check,
	.save = mark_save,
	.print = mark_print,
};
