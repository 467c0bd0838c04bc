// SPDX-License-Identifier: GPL-2.0
/* -m mac [!] --mac-source XX:XX:XX:XX:XX:XX; the kernel allows it only where a MAC
 * header exists: PREROUTING, INPUT, FORWARD (so not OUTPUT, see .hooks). */
#include "ext.h"
#include "misc_ext.h"

#include <stdlib.h>

static const struct ipt_ext_opt mac_opts[] = {
	{ "mac-source", true, 0, false },
	{ NULL, false, 0, false },
};

/* libxtables' XTTYPE_ETHERMAC: six hex fields of at most two characters each. */
static int parse_mac(const char *arg, __u8 out[6])
{
	char *end;

	for (int i = 0; i < 6; i++) {
		unsigned long v = strtoul(arg, &end, 16);

		if (end - arg > 2 || *end != (i < 5 ? ':' : '\0'))
			return -1;
		out[i] = (__u8)v;
		arg = end + 1;
	}
	return 0;
}

static int mac_parse(void *data, const struct ipt_ext_call *c)
{
	struct mac_data *d = data;

	if (ipt_xt_opt_begin(c, "mac", true))
		return -1;
	if (parse_mac(c->arg, d->addr))
		return ipt_err_param(c->err, "Invalid MAC address specified.");
	d->invert = c->invert;
	return 0;
}

static int mac_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!(f->flags & 1u))
		return ipt_xt_opt_mandatory(f->err, "mac", "mac-source");
	return 0;
}

static void put_mac(struct strbuf *sb, const __u8 a[6])
{
	sb_addf(sb, " %02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void mac_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct mac_data *d = data;

	(void)ip;
	sb_adds(sb, d->invert ? " ! --mac-source" : " --mac-source");
	put_mac(sb, d->addr);
}

static void mac_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
		      bool numeric)
{
	const struct mac_data *d = data;

	(void)ip;
	(void)numeric;
	sb_adds(sb, d->invert ? " MAC !" : " MAC");
	put_mac(sb, d->addr);
}

const struct ipt_ext ipt_ext_mac = {
	.name = "mac",
	.is_target = false,
	.size = sizeof(struct mac_data),
	.opts = mac_opts,
	.parse = mac_parse,
	.check = mac_check,
	.save = mac_save,
	.print = mac_print,
	.hooks = IPT_HOOK_INPUT | IPT_HOOK_FORWARD,
};
