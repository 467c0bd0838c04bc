// SPDX-License-Identifier: GPL-2.0
/*
 * -j TCPMSS --set-mss N | --clamp-mss-to-pmtu (the last one given wins).
 * The kernel wants -p tcp, a tcp match on SYN in the same rule, and clamping only
 * from FORWARD/OUTPUT (POSTROUTING in other tables).
 */
#include "ext.h"
#include "misc_ext.h"

#include <string.h>

enum { O_SET_MSS, O_CLAMP };

static const struct ipt_ext_opt tcpmss_opts[] = {
	{ "set-mss", true, O_SET_MSS, false },
	{ "clamp-mss-to-pmtu", false, O_CLAMP, false },
	{ NULL, false, 0, false },
};

static int tcpmss_parse(void *data, const struct ipt_ext_call *c)
{
	struct tcpmss_data *d = data;
	unsigned long long v;

	if (ipt_xt_opt_begin(c, "TCPMSS", false))
		return -1;
	if (c->opt->id == O_CLAMP) {
		d->mss = TCPMSS_CLAMP_PMTU;
		return 0;
	}
	/* 65535 - 20 (IP header) */
	if (ipt_strtoul(c->arg, NULL, 0, 65515, &v))
		return ipt_err_param(c->err, "TCPMSS: bad value for option \"--set-mss\", "
				     "or out of range (0-65515).\n");
	d->mss = (__u16)v;
	return 0;
}

/* Does this saved tcp match ("... --tcp-flags MASK COMP ...") test SYN set, not
 * inverted? (xt_TCPMSS's find_syn_match(); read from the save text so that this
 * file does not depend on the tcp payload layout.) */
static bool tcp_match_has_syn(const struct ipt_match *m, const struct ipt_ip *ip)
{
	struct strbuf sb = STRBUF_INIT;
	bool syn = false;
	const char *s, *p;

	m->ext->save(&sb, m->data, ip);
	s = sb_str(&sb);
	p = strstr(s, "--tcp-flags ");
	if (p && !(p - s >= 2 && !strncmp(p - 2, "! ", 2))) {
		const char *comp = strchr(p + strlen("--tcp-flags "), ' ');

		if (comp) {
			size_t n;

			comp++;
			n = strcspn(comp, " ");
			for (const char *t = comp; t < comp + n;) {
				size_t k = strcspn(t, ", ");

				if (k == 3 && !strncmp(t, "SYN", 3))
					syn = true;
				if (k == 3 && !strncmp(t, "ALL", 3))
					syn = true;
				t += k;
				if (*t == ',')
					t++;
				else
					break;
			}
		}
	}
	sb_free(&sb);
	return syn;
}

static int tcpmss_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!f->flags)
		return ipt_err_param(f->err, "TCPMSS target: At least one parameter is required");
	if (f->ip->proto != 6 || (f->ip->invflags & IPT_INV_PROTO))
		return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "Invalid argument: TCPMSS needs -p tcp");
	for (unsigned int i = 0; i < f->nmatches; i++) {
		const struct ipt_match *m = &f->matches[i];

		if (m->ext && !strcmp(m->ext->name, "tcp") && m->ext->save &&
		    tcp_match_has_syn(m, f->ip))
			return 0;
	}
	return ipt_err_set(f->err, IPT_EXIT_OTHER, IPT_ES_IPTC,
			   "Invalid argument: TCPMSS only works on TCP SYN packets "
			   "(add -m tcp --tcp-flags SYN,RST SYN)");
}

static unsigned int tcpmss_hooks(const void *data)
{
	const struct tcpmss_data *d = data;

	return d->mss == TCPMSS_CLAMP_PMTU ? IPT_HOOK_FORWARD | IPT_HOOK_OUTPUT : 0;
}

static void tcpmss_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct tcpmss_data *d = data;

	(void)ip;
	if (d->mss == TCPMSS_CLAMP_PMTU)
		sb_adds(sb, " --clamp-mss-to-pmtu");
	else
		sb_addf(sb, " --set-mss %u", d->mss);
}

static void tcpmss_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			 bool numeric)
{
	const struct tcpmss_data *d = data;

	(void)ip;
	(void)numeric;
	if (d->mss == TCPMSS_CLAMP_PMTU)
		sb_adds(sb, " TCPMSS clamp to PMTU");
	else
		sb_addf(sb, " TCPMSS set %u", d->mss);
}

const struct ipt_ext ipt_ext_TCPMSS = {
	.name = "TCPMSS",
	.is_target = true,
	.size = sizeof(struct tcpmss_data),
	.opts = tcpmss_opts,
	.parse = tcpmss_parse,
	.check = tcpmss_check,
	.save = tcpmss_save,
	.print = tcpmss_print,
	.hooks_of = tcpmss_hooks,
};
