// SPDX-License-Identifier: GPL-2.0
/* The table of every extension the rule language knows. */
#include "ext.h"

#include <string.h>

extern const struct ipt_ext ipt_ext_tcp, ipt_ext_udp, ipt_ext_icmp, ipt_ext_icmp6, ipt_ext_multiport,
	ipt_ext_conntrack, ipt_ext_conntrack6, ipt_ext_state, ipt_ext_iprange, ipt_ext_iprange6,
	ipt_ext_comment, ipt_ext_recent6, ipt_ext_limit,
	ipt_ext_mark, ipt_ext_length, ipt_ext_mac, ipt_ext_addrtype, ipt_ext_recent;
extern const struct ipt_ext ipt_ext_REJECT, ipt_ext_LOG, ipt_ext_NFLOG, ipt_ext_TCPMSS;

static const struct ipt_ext *const all_exts[] = {
	&ipt_ext_tcp, &ipt_ext_udp, &ipt_ext_icmp, &ipt_ext_icmp6, &ipt_ext_multiport,
	&ipt_ext_conntrack, &ipt_ext_conntrack6, &ipt_ext_state, &ipt_ext_iprange,
	&ipt_ext_iprange6, &ipt_ext_comment, &ipt_ext_recent6,
	&ipt_ext_limit, &ipt_ext_mark, &ipt_ext_length, &ipt_ext_mac, &ipt_ext_addrtype, &ipt_ext_recent,
	&ipt_ext_REJECT, &ipt_ext_LOG, &ipt_ext_NFLOG, &ipt_ext_TCPMSS,
};

/* Whether an extension exists in the family run. */
static bool in_family(const struct ipt_ext *e)
{
	return !e->families || (e->families & (ipt_af == AF_INET6 ? IPT_EXT_F6 : IPT_EXT_F4));
}

/* The unsupported ones of one family only (the lists below hold those of both). */
static bool family_only(const char *name, bool target)
{
	static const char *const only4[] = { "realm", "ttl", NULL };
	static const char *const only4_t[] = { "CLUSTERIP", "ECN", "TTL", "ULOG", NULL };
	static const char *const only6[] = { "dst", "eui64", "frag", "hbh", "hl", "ipv6header",
					     "mh", "rt", "srh", NULL };
	static const char *const only6_t[] = { "HL", NULL };
	bool v6 = ipt_af == AF_INET6;

	for (const char *const *p = target ? (v6 ? only6_t : only4_t) : (v6 ? only6 : only4);
	     *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

const char *ipt_ext_match_name(const char *name)
{
	return !strcmp(name, "icmpv6") || !strcmp(name, "ipv6-icmp") ? "icmp6" : name;
}

bool ipt_ext_unsupported(const char *name, bool target)
{
	static const char *const matches[] = {
		"ah", "bpf", "cgroup", "cluster", "connbytes", "connlabel", "connlimit",
		"connmark", "cpu", "dccp", "devgroup", "dscp", "ecn", "esp", "hashlimit",
		"helper", "ipcomp", "ipvs", "nfacct", "osf", "owner", "physdev", "pkttype",
		"policy", "quota", "rateest", "rpfilter", "sctp", "set", "socket",
		"statistic", "string", "tcpmss", "time", "tos", "u32", "udplite", NULL,
	};
	static const char *const targets[] = {
		"AUDIT", "CHECKSUM", "CLASSIFY", "CONNMARK", "CONNSECMARK", "CT",
		"DNAT", "DSCP", "HMARK", "IDLETIMER", "LED", "MARK", "MASQUERADE",
		"NETMAP", "NFQUEUE", "NOTRACK", "RATEEST", "REDIRECT", "SECMARK", "SET",
		"SNAT", "SYNPROXY", "TEE", "TOS", "TPROXY", "TRACE", "QUEUE",
		NULL,
	};
	for (const char *const *p = target ? targets : matches; *p; p++)
		if (!strcmp(*p, name))
			return true;
	return family_only(name, target);
}

const struct ipt_ext *ipt_ext_find(const char *name, bool target)
{
	for (size_t i = 0; i < sizeof(all_exts) / sizeof(all_exts[0]); i++)
		if (all_exts[i]->is_target == target && !strcmp(all_exts[i]->name, name) &&
		    in_family(all_exts[i]))
			return all_exts[i];
	return NULL;
}

int ipt_ext_prefix_shape(const char *name, size_t len, bool *has_arg, bool *two_args)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(all_exts) / sizeof(all_exts[0]); i++)
		for (const struct ipt_ext_opt *o = all_exts[i]->opts; o && o->name; o++) {
			if (strncmp(o->name, name, len))
				continue;
			if (n++ == 0) {
				*has_arg = o->has_arg;
				*two_args = o->two_args;
			} else if (*has_arg != o->has_arg || *two_args != o->two_args) {
				return -1;
			}
		}
	return n ? 1 : 0;
}

const struct ipt_ext_opt *ipt_ext_any_opt(const char *name)
{
	for (size_t i = 0; i < sizeof(all_exts) / sizeof(all_exts[0]); i++)
		for (const struct ipt_ext_opt *o = all_exts[i]->opts; o && o->name; o++)
			if (!strcmp(o->name, name))
				return o;
	return NULL;
}
