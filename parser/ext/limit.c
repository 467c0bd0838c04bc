// SPDX-License-Identifier: GPL-2.0
/*
 * -m limit --limit RATE[/second|/minute|/hour|/day] --limit-burst N
 *
 * The payload is what the kernel gets (struct xt_rateinfo's user part): avg is the
 * time between packets in 1/10000 s (XT_LIMIT_SCALE), computed with iptables'
 * integer division, so that "60/min" becomes the same rule as "1/sec", and save
 * prints it back the way iptables does.
 */
#include "ext.h"
#include "misc_ext.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { O_LIMIT, O_BURST };

static const struct ipt_ext_opt limit_opts[] = {
	{ "limit", true, O_LIMIT, false },
	{ "limit-burst", true, O_BURST, false },
	{ NULL, false, 0, false },
};

/* 1 = ok, 0 = bad rate, -1 = error already set (too fast). */
static int parse_rate(const char *rate, __u32 *val, struct ipt_err *err)
{
	const char *slash = strchr(rate, '/');
	__u32 mult = 1, r;

	if (slash) {
		const char *u = slash + 1;
		size_t n = strlen(u);

		if (n == 0)
			return 0;
		if (!strncasecmp(u, "second", n))
			mult = 1;
		else if (!strncasecmp(u, "minute", n))
			mult = 60;
		else if (!strncasecmp(u, "hour", n))
			mult = 60 * 60;
		else if (!strncasecmp(u, "day", n))
			mult = 24 * 60 * 60;
		else
			return 0;
	}
	/* atoi() as iptables: leading number, the rest ignored; int truncation kept. */
	r = (__u32)(int)strtol(rate, NULL, 10);
	if (!r)
		return 0;
	*val = LIMIT_SCALE * mult / r;
	if (*val == 0) {
		ipt_err_param(err, "Rate too fast \"%s\"", rate);
		return -1;
	}
	return 1;
}

static void limit_init(void *data)
{
	struct limit_data *d = data;

	d->avg = LIMIT_SCALE * 60 * 60 / 3;	/* 3/hour */
	d->burst = LIMIT_BURST_DEFAULT;
}

static int limit_parse(void *data, const struct ipt_ext_call *c)
{
	struct limit_data *d = data;
	unsigned long long v;
	int rc;

	if (ipt_xt_opt_begin(c, "limit", false))
		return -1;
	if (c->opt->id == O_LIMIT) {
		rc = parse_rate(c->arg, &d->avg, c->err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return ipt_err_param(c->err, "bad rate \"%s\"'", c->arg);
		return 0;
	}
	if (ipt_strtoul(c->arg, NULL, 0, 10000, &v))
		return ipt_err_param(c->err, "limit: bad value for option \"--limit-burst\", "
				     "or out of range (0-10000).\n");
	d->burst = (__u32)v;
	return 0;
}

/* The kernel's user2credits() with its 32-bit arithmetic; HZ * CREDITS_PER_JIFFY is
 * 32000 for HZ=250 and HZ=1000 (the usual configurations). */
#define LIMIT_HZ_CPJ 32000u

static __u32 user2credits(__u32 user)
{
	if (user > 0xFFFFFFFFu / LIMIT_HZ_CPJ)
		return (user / LIMIT_SCALE) * LIMIT_HZ_CPJ;
	return (user * LIMIT_HZ_CPJ) / LIMIT_SCALE;
}

static int limit_check(void *data, const struct ipt_ext_final *f)
{
	struct limit_data *d = data;

	/* xt_limit's checkentry: ERANGE ("Numerical result out of range", exit 1). */
	if (d->burst == 0 || user2credits(d->avg * d->burst) < user2credits(d->avg))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Numerical result out of range: limit burst %u too large "
				   "for that rate", d->burst);
	return 0;
}

static const struct {
	const char *name;
	__u32 mult;
} rates[] = {
	{ "day", LIMIT_SCALE * 24 * 60 * 60 },
	{ "hour", LIMIT_SCALE * 60 * 60 },
	{ "min", LIMIT_SCALE * 60 },
	{ "sec", LIMIT_SCALE },
};

static void put_rate(struct strbuf *sb, __u32 period)
{
	unsigned int i;

	if (period == 0) {
		sb_adds(sb, " inf");
		return;
	}
	for (i = 1; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (period > rates[i].mult || rates[i].mult / period < rates[i].mult % period)
			break;
	sb_addf(sb, " %u/%s", rates[i - 1].mult / period, rates[i - 1].name);
}

static void limit_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct limit_data *d = data;

	(void)ip;
	sb_adds(sb, " --limit");
	put_rate(sb, d->avg);
	if (d->burst != LIMIT_BURST_DEFAULT)
		sb_addf(sb, " --limit-burst %u", d->burst);
}

static void limit_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			bool numeric)
{
	const struct limit_data *d = data;

	(void)ip;
	(void)numeric;
	sb_adds(sb, " limit: avg");
	put_rate(sb, d->avg);
	sb_addf(sb, " burst %u", d->burst);
}

const struct ipt_ext ipt_ext_limit = {
	.name = "limit",
	.is_target = false,
	.size = sizeof(struct limit_data),
	.opts = limit_opts,
	.init = limit_init,
	.parse = limit_parse,
	.check = limit_check,
	.save = limit_save,
	.print = limit_print,
};
