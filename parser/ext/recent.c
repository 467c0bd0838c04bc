// SPDX-License-Identifier: GPL-2.0
/*
 * -m recent [!] --set|--rcheck|--update|--remove [--seconds N [--reap]]
 *           [--hitcount N] [--rttl] [--name NAME] [--mask ADDR] [--rsource|--rdest]
 * (xt_recent revision 1). The lists live in the data plane (bpfipt_recent).
 */
#include "ext.h"
#include "misc_ext.h"
#include "resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

/* libxt_recent's option table, in its order: the order of its messages */
enum { O_SET, O_RCHECK, O_UPDATE, O_REMOVE, O_SECONDS, O_REAP, O_HITCOUNT, O_RTTL, O_NAME,
       O_RSOURCE, O_RDEST, O_MASK };
#define F_ANY_OP (1u << O_SET | 1u << O_RCHECK | 1u << O_UPDATE | 1u << O_REMOVE)

static const struct ipt_ext_opt recent_opts[] = {
	{ "set", false, O_SET, false },
	{ "rcheck", false, O_RCHECK, false },
	{ "update", false, O_UPDATE, false },
	{ "remove", false, O_REMOVE, false },
	{ "seconds", true, O_SECONDS, false },
	{ "reap", false, O_REAP, false },
	{ "hitcount", true, O_HITCOUNT, false },
	{ "rttl", false, O_RTTL, false },
	{ "name", true, O_NAME, false },
	{ "rsource", false, O_RSOURCE, false },
	{ "rdest", false, O_RDEST, false },
	{ "mask", true, O_MASK, false },
	{ NULL, false, 0, false },
};

static void recent_init(void *data)
{
	struct recent_data *d = data;

	strcpy(d->name, "DEFAULT");
	d->mask = 0xffffffffu;
}

static void recent6_init(void *data)
{
	struct recent6_data *d = data;

	recent_init(data);
	d->v4.mask = 0;
	memset(&d->mask, 0xff, sizeof(d->mask));
}

static int parse_u32(const struct ipt_ext_call *c, unsigned long long min, __u32 *out)
{
	unsigned long long v;

	if (ipt_strtoul(c->arg, NULL, min, 0xffffffffu, &v))
		return ipt_err_param(c->err, "recent: bad value for option \"--%s\", or out of range "
				     "(%llu-4294967295).\n", c->opt->name, min);
	*out = (__u32)v;
	return 0;
}

static int recent_parse(void *data, const struct ipt_ext_call *c)
{
	static const __u8 op_bit[] = { RECENT_SET, RECENT_CHECK, RECENT_UPDATE, RECENT_REMOVE };
	struct recent_data *d = data;
	int id = c->opt->id;

	if (ipt_xt_opt_begin(c, "recent", id <= O_REMOVE))
		return -1;
	switch (id) {
	case O_SET:
	case O_RCHECK:
	case O_UPDATE:
	case O_REMOVE:
		d->check_set |= op_bit[id];
		if (c->invert)
			d->invert = 1;
		return 0;
	case O_SECONDS:
		return parse_u32(c, 1, &d->seconds);
	case O_HITCOUNT:
		return parse_u32(c, 0, &d->hit_count);
	case O_REAP:
		d->check_set |= RECENT_REAP;
		return 0;
	case O_RTTL:
		d->check_set |= RECENT_TTL;
		return 0;
	case O_NAME:
		return ipt_xt_parse_string(c->arg, 0, d->name, sizeof(d->name), c->err);
	case O_RSOURCE:
	case O_RDEST:
		d->side = id == O_RDEST;
		return 0;
	default: {	/* --mask: an address, or a name (XTTYPE_HOST) of the family */
		struct addrinfo hints = { .ai_family = ipt_af, .ai_socktype = SOCK_DGRAM }, *res;
		int rc = ipt_getaddrinfo(c->arg, &hints, &res);

		if (rc)
			return ipt_err_param(c->err, "getaddrinfo: %s\n", gai_strerror(rc));
		if (ipt_af == AF_INET6)	/* d heads a struct recent6_data */
			memcpy(((struct recent6_data *)data)->mask.b,
			       &((const struct sockaddr_in6 *)res->ai_addr)->sin6_addr, 16);
		else
			d->mask = ((const struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
		freeaddrinfo(res);
		return 0;
	}
	}
}

static const char *opt_name(int id)
{
	return recent_opts[id].name;
}

static int recent_check(void *data, const struct ipt_ext_final *f)
{
	struct recent_data *d = data;
	unsigned int fl = f->flags;

	/* libxt_recent's own check, then libxtables' exclusions in table order */
	if (!(fl & F_ANY_OP))
		return ipt_err_param(f->err, "recent: you must specify one of `--set', `--rcheck' "
				     "`--update' or `--remove'");
	for (int id = O_SET; id <= O_RTTL; id++) {
		unsigned int excl = id <= O_REMOVE ? F_ANY_OP & ~(1u << id) :
				    id == O_RTTL ? 1u << O_SET | 1u << O_REMOVE : 0;

		if (!(fl & (1u << id)) || !(fl & excl))
			continue;
		return ipt_err_param(f->err, "recent: option \"--%s\" cannot be used together with "
				     "\"--%s\".\n", opt_name(id),
				     opt_name(__builtin_ctz(fl & excl)));
	}
	if ((fl & (1u << O_REAP)) && !(fl & (1u << O_SECONDS)))
		return ipt_err_param(f->err, "recent: option \"--reap\" also requires \"--seconds\".\n");
	/* xt_recent's checkentry */
	if ((d->check_set & (RECENT_SET | RECENT_REMOVE)) && (d->seconds || d->hit_count))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC, "Invalid argument: recent: "
				   "--seconds and --hitcount go with --rcheck or --update");
	if (d->name[0] == '\0' || strchr(d->name, '/') || !strcmp(d->name, ".") ||
	    !strcmp(d->name, ".."))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC, "Invalid argument: recent: "
				   "bad list name \"%s\"", d->name);
	return 0;
}

/* --mask as text: dotted quad, or the IPv6 form in an IPv6 table */
static const char *mask_text(const void *data, char buf[INET6_ADDRSTRLEN])
{
	const struct recent_data *d = data;

	if (ipt_af == AF_INET6)
		return inet_ntop(AF_INET6, ((const struct recent6_data *)data)->mask.b, buf,
				 INET6_ADDRSTRLEN);
	return inet_ntop(AF_INET, &d->mask, buf, INET6_ADDRSTRLEN);
}

static void recent_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct recent_data *d = data;
	char m[INET6_ADDRSTRLEN];

	(void)ip;
	if (d->invert)
		sb_adds(sb, " !");
	if (d->check_set & RECENT_SET)
		sb_adds(sb, " --set");
	if (d->check_set & RECENT_CHECK)
		sb_adds(sb, " --rcheck");
	if (d->check_set & RECENT_UPDATE)
		sb_adds(sb, " --update");
	if (d->check_set & RECENT_REMOVE)
		sb_adds(sb, " --remove");
	if (d->seconds)
		sb_addf(sb, " --seconds %u", d->seconds);
	if (d->check_set & RECENT_REAP)
		sb_adds(sb, " --reap");
	if (d->hit_count)
		sb_addf(sb, " --hitcount %u", d->hit_count);
	if (d->check_set & RECENT_TTL)
		sb_adds(sb, " --rttl");
	sb_addf(sb, " --name %s --mask %s", d->name, mask_text(data, m));
	sb_adds(sb, d->side ? " --rdest" : " --rsource");
}

static void recent_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			 bool numeric)
{
	const struct recent_data *d = data;
	char m[INET6_ADDRSTRLEN];

	(void)ip;
	(void)numeric;
	if (d->invert)
		sb_adds(sb, " !");
	sb_adds(sb, " recent:");
	if (d->check_set & RECENT_SET)
		sb_adds(sb, " SET");
	if (d->check_set & RECENT_CHECK)
		sb_adds(sb, " CHECK");
	if (d->check_set & RECENT_UPDATE)
		sb_adds(sb, " UPDATE");
	if (d->check_set & RECENT_REMOVE)
		sb_adds(sb, " REMOVE");
	if (d->seconds)
		sb_addf(sb, " seconds: %u", d->seconds);
	if (d->check_set & RECENT_REAP)
		sb_adds(sb, " reap");
	if (d->hit_count)
		sb_addf(sb, " hit_count: %u", d->hit_count);
	if (d->check_set & RECENT_TTL)
		sb_adds(sb, " TTL-Match");
	sb_addf(sb, " name: %s", d->name);
	sb_adds(sb, d->side ? " side: dest" : " side: source");
	sb_addf(sb, " mask: %s", mask_text(data, m));
}

const struct ipt_ext ipt_ext_recent = {
	.name = "recent",
	.is_target = false,
	.size = sizeof(struct recent_data),
	.opts = recent_opts,
	.init = recent_init,
	.parse = recent_parse,
	.check = recent_check,
	.save = recent_save,
	.print = recent_print,
	.families = IPT_EXT_F4,
};

/* The same code in an IPv6 table: the payload with a 16-byte --mask. */
const struct ipt_ext ipt_ext_recent6 = {
	.name = "recent",
	.is_target = false,
	.size = sizeof(struct recent6_data),
	.opts = recent_opts,
	.init = recent6_init,
	.parse = recent_parse,
	.check = recent_check,
	.save = recent_save,
	.print = recent_print,
	.families = IPT_EXT_F6,
};
