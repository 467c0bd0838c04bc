// SPDX-License-Identifier: GPL-2.0
/* -j LOG: --log-level, --log-prefix (29 bytes kept) and the flag options. */
#include "ext.h"
#include "misc_ext.h"

#include <string.h>

/* Option ids of the flag options = their bit in logflags (XT_LOG_*). */
enum {
	O_TCPSEQ = 0,
	O_TCPOPT = 1,
	O_IPOPT = 2,
	O_UID = 3,
	O_MAC = 5,
	O_LEVEL = 6,
	O_PREFIX = 7,
};

static const struct ipt_ext_opt log_opts[] = {
	{ "log-level", true, O_LEVEL, false },
	{ "log-prefix", true, O_PREFIX, false },
	{ "log-tcp-sequence", false, O_TCPSEQ, false },
	{ "log-tcp-options", false, O_TCPOPT, false },
	{ "log-ip-options", false, O_IPOPT, false },
	{ "log-uid", false, O_UID, false },
	{ "log-macdecode", false, O_MAC, false },
	{ NULL, false, 0, false },
};

/* The names libxtables accepts for --log-level (case-sensitive). */
static const struct {
	const char *name;
	__u8 level;
} level_in[] = {
	{ "alert", 1 }, { "crit", 2 }, { "debug", 7 }, { "emerg", 0 }, { "error", 3 },
	{ "info", 6 }, { "notice", 5 }, { "panic", 0 }, { "warning", 4 },
};

/* The names -L prints (the first of glibc's prioritynames for the value). */
static const char *const level_out[8] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

static void log_init(void *data)
{
	struct log_data *d = data;

	d->level = LOG_LEVEL_DEFAULT;
}

static int log_parse(void *data, const struct ipt_ext_call *c)
{
	struct log_data *d = data;
	unsigned long long v;

	if (ipt_xt_opt_begin(c, "LOG", false))
		return -1;
	switch (c->opt->id) {
	case O_LEVEL:
		if (!ipt_strtoul(c->arg, NULL, 0, 7, &v)) {
			d->level = (__u8)v;
			return 0;
		}
		for (size_t i = 0; i < sizeof(level_in) / sizeof(level_in[0]); i++) {
			if (!strcmp(level_in[i].name, c->arg)) {
				d->level = level_in[i].level;
				return 0;
			}
		}
		return ipt_err_param(c->err, "log level \"%s\" unknown\n", c->arg);
	case O_PREFIX:
		if (ipt_xt_parse_string(c->arg, 1, d->prefix, sizeof(d->prefix), c->err))
			return -1;
		if (strchr(c->arg, '\n'))
			return ipt_err_param(c->err, "Newlines not allowed in --log-prefix");
		return 0;
	default:
		d->logflags |= (__u8)(1u << c->opt->id);
		return 0;
	}
}

static void log_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct log_data *d = data;

	(void)ip;
	if (d->prefix[0]) {
		sb_adds(sb, " --log-prefix ");
		ipt_save_string(sb, d->prefix);
	}
	if (d->level != LOG_LEVEL_DEFAULT)
		sb_addf(sb, " --log-level %u", d->level);
	if (d->logflags & (1u << O_TCPSEQ))
		sb_adds(sb, " --log-tcp-sequence");
	if (d->logflags & (1u << O_TCPOPT))
		sb_adds(sb, " --log-tcp-options");
	if (d->logflags & (1u << O_IPOPT))
		sb_adds(sb, " --log-ip-options");
	if (d->logflags & (1u << O_UID))
		sb_adds(sb, " --log-uid");
	if (d->logflags & (1u << O_MAC))
		sb_adds(sb, " --log-macdecode");
}

static void log_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
		      bool numeric)
{
	const struct log_data *d = data;

	(void)ip;
	sb_adds(sb, " LOG");
	if (numeric) {
		sb_addf(sb, " flags %u level %u", d->logflags, d->level);
	} else {
		if (d->level < 8)
			sb_addf(sb, " level %s", level_out[d->level]);
		else
			sb_addf(sb, " UNKNOWN level %u", d->level);
		if (d->logflags & (1u << O_TCPSEQ))
			sb_adds(sb, " tcp-sequence");
		if (d->logflags & (1u << O_TCPOPT))
			sb_adds(sb, " tcp-options");
		if (d->logflags & (1u << O_IPOPT))
			sb_adds(sb, " ip-options");
		if (d->logflags & (1u << O_UID))
			sb_adds(sb, " uid");
		if (d->logflags & (1u << O_MAC))
			sb_adds(sb, " macdecode");
		if (d->logflags & ~LOG_FLAGS_MASK)
			sb_adds(sb, " unknown-flags");
	}
	if (d->prefix[0])
		sb_addf(sb, " prefix \"%s\"", d->prefix);
}

const struct ipt_ext ipt_ext_LOG = {
	.name = "LOG",
	.is_target = true,
	.size = sizeof(struct log_data),
	.opts = log_opts,
	.init = log_init,
	.parse = log_parse,
	.save = log_save,
	.print = log_print,
};
