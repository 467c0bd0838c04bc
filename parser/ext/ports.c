// SPDX-License-Identifier: GPL-2.0
/*
 * Port numbers and service names, as the iptables extensions read and print them.
 *
 * Two spellings exist in iptables and scripts depend on both sets of messages:
 *  - the tcp/multiport style (xtables_parse_port): a number 0-65535 or a service
 *    name of the rule's protocol, "invalid port/service `X' specified";
 *  - the XTTYPE_PORTRC style (udp, conntrack): up to two ':'-separated parts,
 *    'Port "X" does not resolve to anything.'.
 * Ports are returned in host byte order.
 */
#include "ext.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static int strtoul_base(const char *s, char **end, unsigned long long min,
			unsigned long long max, unsigned long long *v, int base)
{
	const char *p;
	char *e;
	unsigned long long x;

	if (!s)
		return -1;
	for (p = s; isspace((unsigned char)*p); p++)
		;
	if (*p == '-')
		return -1;
	errno = 0;
	x = strtoull(s, &e, base);
	if (e == s)
		return -1;
	if (end)
		*end = e;
	else if (*e)
		return -1;
	if (errno == ERANGE || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

int ipt_strtoul(const char *s, char **end, unsigned long long min, unsigned long long max,
		unsigned long long *v)
{
	return strtoul_base(s, end, min, max, v, 0);
}

static int service_port(const char *name, const char *proto)
{
	struct servent *se = getservbyname(name, proto);

	return se ? ntohs((unsigned short)se->s_port) : -1;
}

int ipt_parse_port(const char *s, const char *proto, __u16 *port, struct ipt_err *err)
{
	unsigned long long v;
	int p;

	if (ipt_strtoul(s, NULL, 0, 65535, &v) == 0) {
		*port = (__u16)v;
		return 0;
	}
	p = service_port(s, proto);
	if (p >= 0) {
		*port = (__u16)p;
		return 0;
	}
	return ipt_err_param(err, "invalid port/service `%s' specified", s);
}

/* libxt_tcp's reading: "a" (both ends), "a:b", ":b" (0:b), "a:" (a:65535), ":". Only the
 * first ':' splits, so "1:2:3" reports `2:3'. Reversed ranges are refused (1.8.13). */
int ipt_parse_port_range(const char *s, const char *proto, __u16 range[2], struct ipt_err *err)
{
	const char *colon = strchr(s, ':');
	char lo[256];
	size_t n;

	if (!colon) {
		if (ipt_parse_port(s, proto, &range[0], err))
			return -1;
		range[1] = range[0];
		return 0;
	}
	n = (size_t)(colon - s);
	range[0] = 0;
	range[1] = 0xFFFF;
	if (n >= sizeof(lo)) {	/* never cut: "000...0022" is not port 0 */
		char *big = strndup(s, n);
		int r = big ? ipt_parse_port(big, proto, &range[0], err) : -1;

		free(big);
		if (r)
			return -1;
	} else {
		memcpy(lo, s, n);
		lo[n] = '\0';
		if (lo[0] && ipt_parse_port(lo, proto, &range[0], err))
			return -1;
	}
	if (colon[1] && ipt_parse_port(colon + 1, proto, &range[1], err))
		return -1;
	if (range[0] > range[1])
		return ipt_err_param(err, "invalid portrange (min > max)");
	return 0;
}

/* One part of an XTTYPE_PORTRC value: a decimal number (no 0x, 010 is ten) or a
 * service name of any protocol. */
static int portrc_one(const char *s, __u16 *port, struct ipt_err *err)
{
	unsigned long long v;
	int p;

	if (strtoul_base(s, NULL, 0, 65535, &v, 10) == 0) {
		*port = (__u16)v;
		return 0;
	}
	p = service_port(s, NULL);
	if (p >= 0) {
		*port = (__u16)p;
		return 0;
	}
	return ipt_err_param(err, "Port \"%s\" does not resolve to anything.\n", s);
}

/*
 * xtopt_parse_mport(): parts split on ':' (at most two), an empty part keeps its
 * default (0 for the first, 65535 for the second); a single part gives a one-port
 * range; "" is port 0 as in iptables. Numbers above 65535 are refused (1.8.9 silently
 * truncated them), and so are reversed ranges (1.8.13).
 */
int ipt_parse_portrc(const char *s, const char *ext, const char *opt, __u16 range[2],
		     struct ipt_err *err)
{
	const char *colon = strchr(s, ':');
	char part[256];
	size_t n;

	range[0] = 0;
	range[1] = 0xFFFF;
	if (!colon) {
		if (*s && portrc_one(s, &range[0], err))
			return -1;
		range[1] = range[0];
		return 0;
	}
	if (strchr(colon + 1, ':'))
		return ipt_err_param(err, "%s: Too many components for option \"--%s\" (max: 2)\n",
				     ext, opt);
	n = (size_t)(colon - s);
	if (n >= sizeof(part)) {	/* never cut: "000...0022" is not port 0 */
		char *big = strndup(s, n);
		int r = big ? portrc_one(big, &range[0], err) : -1;

		free(big);
		if (r)
			return -1;
	} else {
		memcpy(part, s, n);
		part[n] = '\0';
		if (part[0] && portrc_one(part, &range[0], err))
			return -1;
	}
	if (colon[1] && portrc_one(colon + 1, &range[1], err))
		return -1;
	if (range[0] > range[1])
		return ipt_err_param(err, "invalid portrange (min > max)");
	return 0;
}

void ipt_print_port(struct strbuf *sb, __u16 port, const char *proto, bool numeric)
{
	const struct servent *se;

	if (!numeric && (se = getservbyport(htons(port), proto)) != NULL) {
		sb_adds(sb, se->s_name);
		return;
	}
	sb_addf(sb, "%u", port);
}
