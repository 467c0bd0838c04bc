// SPDX-License-Identifier: GPL-2.0
/* -m iprange: [!] --src-range A[-B], [!] --dst-range A[-B] (xt_iprange revision 1). */
#include "ext.h"
#include "misc_ext.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

enum { O_SRC, O_DST };

static const struct ipt_ext_opt iprange_opts[] = {
	{ "src-range", true, O_SRC, false },
	{ "dst-range", true, O_DST, false },
	{ NULL, false, 0, false },
};

/* xtables_numeric_to_ipaddr(): up to four dot-separated bytes, each a number in C
 * syntax (0x1, 010); fewer than four parts fill the rest with zeros ("10.1" = 10.1.0.0). */
static int parse_ipv4(const char *s, __u32 *out)
{
	__u32 a = 0;
	int i;

	for (i = 0; i < 4; i++) {
		const char *dot = strchr(s, '.');
		char part[64];
		size_t n = dot ? (size_t)(dot - s) : strlen(s);
		unsigned long long v;

		if (i == 3 && dot)
			return -1;
		if (n >= sizeof(part))
			return -1;
		memcpy(part, s, n);
		part[n] = '\0';
		if (ipt_strtoul(part, NULL, 0, 255, &v))
			return -1;
		a |= (__u32)v << (24 - 8 * i);
		if (!dot)
			break;
		s = dot + 1;
	}
	*out = a;
	return 0;
}

static void put_ipv4(struct strbuf *sb, __u32 a)
{
	sb_addf(sb, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

/* The same for an IPv6 table: inet_pton's addresses, 16-byte bounds. */
static int iprange6_parse(void *data, const struct ipt_ext_call *c)
{
	struct iprange6_data *d = data;
	const char *optname = c->opt->id == O_SRC ? "--src-range" : "--dst-range";
	union ipt_addr lo, hi;
	char buf[256];
	char *to;

	if (ipt_xt_opt_begin(c, "iprange", true))
		return -1;
	snprintf(buf, sizeof(buf), "%s", c->arg);
	to = strchr(buf, '-');
	if (to)
		*to++ = '\0';
	if (inet_pton(AF_INET6, buf, lo.b) != 1)
		return ipt_err_param(c->err, "iprange: Bad value for \"%s\" option: \"%s\"",
				     optname, buf);
	if (to && inet_pton(AF_INET6, to, hi.b) != 1)
		return ipt_err_param(c->err, "iprange: Bad value for \"%s\" option: \"%s\"",
				     optname, to);
	if (!to)
		hi = lo;
	if (to && memcmp(lo.b, hi.b, 16) > 0)
		ipt_warn("xt_iprange: range %s-%s is reversed and will never match\n", buf, to);
	if (c->opt->id == O_SRC) {
		d->src_min = lo;
		d->src_max = hi;
		d->v4.flags |= IPR_SRC | (c->invert ? IPR_SRC_INV : 0);
	} else {
		d->dst_min = lo;
		d->dst_max = hi;
		d->v4.flags |= IPR_DST | (c->invert ? IPR_DST_INV : 0);
	}
	return 0;
}

static int iprange_parse(void *data, const struct ipt_ext_call *c)
{
	struct iprange_data *d = data;
	const char *optname = c->opt->id == O_SRC ? "--src-range" : "--dst-range";
	char buf[256];
	const char *from, *to;
	char *dash;
	__u32 lo, hi;

	if (ipt_xt_opt_begin(c, "iprange", true))
		return -1;
	snprintf(buf, sizeof(buf), "%s", c->arg);
	dash = strchr(buf, '-');
	from = buf;
	to = buf;
	if (dash) {
		*dash = '\0';
		to = dash + 1;
	}
	if (parse_ipv4(from, &lo))
		return ipt_err_param(c->err, "iprange: Bad value for \"%s\" option: \"%s\"",
				     optname, from);
	if (parse_ipv4(to, &hi))
		return ipt_err_param(c->err, "iprange: Bad value for \"%s\" option: \"%s\"",
				     optname, to);
	/* iptables accepts a reversed range with a warning; the rule matches nothing. */
	if (dash && lo > hi)
		ipt_warn("xt_iprange: range %s-%s is reversed and will never match\n",
			from, to);
	if (c->opt->id == O_SRC) {
		d->src_min = lo;
		d->src_max = hi;
		d->flags |= IPR_SRC | (c->invert ? IPR_SRC_INV : 0);
	} else {
		d->dst_min = lo;
		d->dst_max = hi;
		d->flags |= IPR_DST | (c->invert ? IPR_DST_INV : 0);
	}
	return 0;
}

static int iprange_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!f->flags)
		return ipt_err_param(f->err,
			"iprange match: You must specify `--src-range' or `--dst-range'");
	return 0;
}

static void iprange_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct iprange_data *d = data;

	(void)ip;
	if (d->flags & IPR_SRC) {
		sb_adds(sb, d->flags & IPR_SRC_INV ? " ! --src-range " : " --src-range ");
		put_ipv4(sb, d->src_min);
		sb_addc(sb, '-');
		put_ipv4(sb, d->src_max);
	}
	if (d->flags & IPR_DST) {
		sb_adds(sb, d->flags & IPR_DST_INV ? " ! --dst-range " : " --dst-range ");
		put_ipv4(sb, d->dst_min);
		sb_addc(sb, '-');
		put_ipv4(sb, d->dst_max);
	}
}

static void iprange_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			  bool numeric)
{
	const struct iprange_data *d = data;

	(void)ip;
	(void)numeric;
	if (d->flags & IPR_SRC) {
		sb_adds(sb, d->flags & IPR_SRC_INV ? " source IP range ! " : " source IP range ");
		put_ipv4(sb, d->src_min);
		sb_addc(sb, '-');
		put_ipv4(sb, d->src_max);
	}
	if (d->flags & IPR_DST) {
		sb_adds(sb, d->flags & IPR_DST_INV ? " destination IP range ! "
						   : " destination IP range ");
		put_ipv4(sb, d->dst_min);
		sb_addc(sb, '-');
		put_ipv4(sb, d->dst_max);
	}
}

/* IPv6: " --src-range A-B" and " source IP range A-B", as ip6tables */
static void range6(struct strbuf *sb, const char *label, const union ipt_addr *lo,
		   const union ipt_addr *hi)
{
	sb_adds(sb, label);
	ipt_add_addr6(sb, lo);
	sb_addc(sb, '-');
	ipt_add_addr6(sb, hi);
}

static void iprange6_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct iprange6_data *d = data;

	(void)ip;
	if (d->v4.flags & IPR_SRC)
		range6(sb, d->v4.flags & IPR_SRC_INV ? " ! --src-range " : " --src-range ",
		       &d->src_min, &d->src_max);
	if (d->v4.flags & IPR_DST)
		range6(sb, d->v4.flags & IPR_DST_INV ? " ! --dst-range " : " --dst-range ",
		       &d->dst_min, &d->dst_max);
}

static void iprange6_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			   bool numeric)
{
	const struct iprange6_data *d = data;

	(void)ip;
	(void)numeric;
	if (d->v4.flags & IPR_SRC)
		range6(sb, d->v4.flags & IPR_SRC_INV ? " source IP range ! " : " source IP range ",
		       &d->src_min, &d->src_max);
	if (d->v4.flags & IPR_DST)
		range6(sb, d->v4.flags & IPR_DST_INV ? " destination IP range ! "
						      : " destination IP range ",
		       &d->dst_min, &d->dst_max);
}

const struct ipt_ext ipt_ext_iprange6 = {
	.name = "iprange",
	.is_target = false,
	.size = sizeof(struct iprange6_data),
	.opts = iprange_opts,
	.parse = iprange6_parse,
	.check = iprange_check,
	.save = iprange6_save,
	.print = iprange6_print,
	.families = IPT_EXT_F6,
};

const struct ipt_ext ipt_ext_iprange = {
	.name = "iprange",
	.is_target = false,
	.size = sizeof(struct iprange_data),
	.opts = iprange_opts,
	.parse = iprange_parse,
	.check = iprange_check,
	.save = iprange_save,
	.print = iprange_print,
	.families = IPT_EXT_F4,
};
