// SPDX-License-Identifier: GPL-2.0
/* -j NFLOG: --nflog-group, --nflog-prefix (63 bytes kept), --nflog-range (obsolete),
 * --nflog-size, --nflog-threshold. */
#include "ext.h"
#include "misc_ext.h"

#include <stdio.h>
#include <string.h>

enum { O_GROUP, O_PREFIX, O_RANGE, O_SIZE, O_THRESHOLD };

static const struct ipt_ext_opt nflog_opts[] = {
	{ "nflog-group", true, O_GROUP, false },
	{ "nflog-prefix", true, O_PREFIX, false },
	{ "nflog-range", true, O_RANGE, false },
	{ "nflog-size", true, O_SIZE, false },
	{ "nflog-threshold", true, O_THRESHOLD, false },
	{ NULL, false, 0, false },
};

static int nflog_parse(void *data, const struct ipt_ext_call *c)
{
	struct nflog_data *d = data;
	unsigned long long v, max;

	if (ipt_xt_opt_begin(c, "NFLOG", false))
		return -1;
	if (c->opt->id == O_PREFIX) {
		if (ipt_xt_parse_string(c->arg, 1, d->prefix, sizeof(d->prefix), c->err))
			return -1;
		if (strchr(c->arg, '\n'))
			return ipt_err_param(c->err, "Newlines not allowed in --log-prefix");
		return 0;
	}
	max = (c->opt->id == O_RANGE || c->opt->id == O_SIZE) ? 0xffffffffu : 0xffffu;
	if (ipt_strtoul(c->arg, NULL, 0, max, &v))
		return ipt_err_param(c->err, "NFLOG: bad value for option \"--%s\", "
				     "or out of range (0-%llu).\n", c->opt->name, max);
	switch (c->opt->id) {
	case O_GROUP:
		d->group = (__u16)v;
		break;
	case O_THRESHOLD:
		d->threshold = (__u16)v;
		break;
	case O_RANGE:
		ipt_warn("warn: --nflog-range has never worked and is no longer "
			"supported, please use --nflog-size instead\n");
		d->len = (__u32)v;
		break;
	case O_SIZE:
		d->len = (__u32)v;
		break;
	}
	return 0;
}

static int nflog_check(void *data, const struct ipt_ext_final *f)
{
	struct nflog_data *d = data;

	if ((f->flags & (1u << O_RANGE)) && (f->flags & (1u << O_SIZE)))
		return ipt_err_param(f->err, "NFLOG: option \"--nflog-range\" cannot be used "
				     "together with \"--nflog-size\".\n");
	if (f->flags & (1u << O_SIZE))
		d->flags |= NFLOG_F_COPY_LEN;
	return 0;
}

/* save and -L print the same words, -L without the dashes */
static void nflog_out(struct strbuf *sb, const struct nflog_data *d, const char *dash)
{
	if (d->prefix[0]) {
		sb_addf(sb, " %snflog-prefix ", dash);
		ipt_save_string(sb, d->prefix);
	}
	if (d->group)
		sb_addf(sb, " %snflog-group %u", dash, d->group);
	if (d->flags & NFLOG_F_COPY_LEN)
		sb_addf(sb, " %snflog-size %u", dash, d->len);
	else if (d->len)
		sb_addf(sb, " %snflog-range %u", dash, d->len);
	if (d->threshold)
		sb_addf(sb, " %snflog-threshold %u", dash, d->threshold);
}

static void nflog_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	(void)ip;
	nflog_out(sb, data, "--");
}

static void nflog_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			bool numeric)
{
	(void)ip;
	(void)numeric;
	nflog_out(sb, data, "");
}

const struct ipt_ext ipt_ext_NFLOG = {
	.name = "NFLOG",
	.is_target = true,
	.size = sizeof(struct nflog_data),
	.opts = nflog_opts,
	.parse = nflog_parse,
	.check = nflog_check,
	.save = nflog_save,
	.print = nflog_print,
};
