// SPDX-License-Identifier: GPL-2.0
/* -m comment --comment TEXT: up to 255 bytes kept (iptables 1.8.9 cuts longer text). */
#include "ext.h"
#include "misc_ext.h"

#include <string.h>

static const struct ipt_ext_opt comment_opts[] = {
	{ "comment", true, 0, false },
	{ NULL, false, 0, false },
};

static int comment_parse(void *data, const struct ipt_ext_call *c)
{
	struct comment_data *d = data;

	if (ipt_xt_opt_begin(c, "comment", false))
		return -1;
	return ipt_xt_parse_string(c->arg, 0, d->comment, sizeof(d->comment), c->err);
}

static int comment_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & 1u))
		return ipt_xt_opt_mandatory(f->err, "comment", "comment");
	return 0;
}

static void comment_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct comment_data *d = data;

	(void)ip;
	sb_adds(sb, " --comment ");
	ipt_save_string(sb, d->comment);
}

static void comment_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			  bool numeric)
{
	const struct comment_data *d = data;

	(void)ip;
	(void)numeric;
	sb_addf(sb, " /* %s */", d->comment);
}

const struct ipt_ext ipt_ext_comment = {
	.name = "comment",
	.is_target = false,
	.size = sizeof(struct comment_data),
	.opts = comment_opts,
	.parse = comment_parse,
	.check = comment_check,
	.save = comment_save,
	.print = comment_print,
};
