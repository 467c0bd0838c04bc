// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the extensions: numbers, strings, protocol names. */
#include "ext.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

int ipt_parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	/* Plain decimal without a leading 0 (what rules mostly hold: address bytes,
	 * masks, ports): the same value strtoull gives, without its locale-aware
	 * generality. 18 digits cannot overflow. Anything else takes strtoull. */
	if (*s >= '1' && *s <= '9') {
		unsigned long long x = 0;
		const char *p = s;

		while (*p >= '0' && *p <= '9' && p - s < 18)
			x = x * 10 + (unsigned long long)(*p++ - '0');
		if (!*p) {
			if (x > max)
				return -1;
			*v = x;
			return 0;
		}
	} else if (*s == '0' && !s[1]) {
		*v = 0;
		return 0;
	}
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* iptables-save's quoting (xtables_save_string): a word of [A-Za-z0-9_-] is printed
 * as is; anything else (including "") goes in double quotes with " \ and ' escaped. */
void ipt_save_string(struct strbuf *sb, const char *s)
{
	static const char plain[] = "_-0123456789abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t n = strspn(s, plain);

	if (n > 0 && s[n] == '\0') {
		sb_adds(sb, s);
		return;
	}
	sb_addc(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\' || *s == '\'')
			sb_addc(sb, '\\');
		sb_addc(sb, *s);
	}
	sb_addc(sb, '"');
}

const char *ipt_proto_name(__u16 proto)
{
	/* The names iptables prints itself (xtables_chain_protos), not /etc/protocols. */
	switch (proto) {
	case 1: return "icmp";
	case 2: return "igmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 33: return "dccp";
	case 47: return "gre";
	case 50: return "esp";
	case 51: return "ah";
	case 58: return "icmpv6";
	case 94: return "ipip";
	case 132: return "sctp";
	case 136: return "udplite";
	case 135: return "mh";
	default: return NULL;
	}
}

int ipt_xt_opt_begin(const struct ipt_ext_call *c, const char *ext, bool invertible)
{
	if (c->flags & (1u << c->opt->id))
		return ipt_err_param(c->err, "%s: option \"--%s\" can only be used once.\n",
				     ext, c->opt->name);
	if (c->invert && !invertible)
		return ipt_err_param(c->err, "%s: option \"--%s\" cannot be inverted.\n",
				     ext, c->opt->name);
	return 0;
}

int ipt_xt_opt_mandatory(struct ipt_err *err, const char *ext, const char *opt)
{
	return ipt_err_param(err, "%s: option \"--%s\" must be specified\n", ext, opt);
}

int ipt_xt_parse_string(const char *arg, size_t min, char *dst, size_t size, struct ipt_err *err)
{
	size_t n = strlen(arg);

	if (n < min)
		return ipt_err_param(err, "Argument must have a minimum length of %zu characters\n",
				     min);
	if (n >= size)
		n = size - 1;
	memset(dst, 0, size);
	memcpy(dst, arg, n);
	return 0;
}

/* ------------------------------------------------------------ IPv6 text -- */

int ipt_mask6_cidr(const union ipt_addr *m)
{
	int bits = 0, i = 0;

	while (i < 16 && m->b[i] == 0xff)
		i++, bits += 8;
	if (i < 16) {
		__u8 b = m->b[i];

		/* ones then zeros: the complement plus one is a power of two */
		if ((__u8)(~b & (__u8)(~b + 1)))
			return -1;
		bits += __builtin_popcount(b);
		while (++i < 16)
			if (m->b[i])
				return -1;
	}
	return bits;
}

void ipt_mask6_from_cidr(unsigned int bits, union ipt_addr *m)
{
	memset(m, 0, sizeof(*m));
	for (unsigned int i = 0; i < 16 && bits; i++) {
		unsigned int n = bits < 8 ? bits : 8;

		m->b[i] = (__u8)(0xff00u >> n);
		bits -= n;
	}
}

void ipt_add_addr6(struct strbuf *sb, const union ipt_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, a->b, buf, sizeof(buf));
	sb_adds(sb, buf);
}

void ipt_add_mask6(struct strbuf *sb, const union ipt_addr *m)
{
	int bits = ipt_mask6_cidr(m);

	if (bits < 0)
		ipt_add_addr6(sb, m);
	else
		sb_add_u64(sb, (unsigned int)bits);
}

bool ipt_addr6_zero(const union ipt_addr *a)
{
	static const union ipt_addr zero;

	return !memcmp(a, &zero, sizeof(zero));
}

void ipt_add_mask6_suffix(struct strbuf *sb, const union ipt_addr *m)
{
	if (ipt_mask6_cidr(m) == 128)
		return;
	sb_addc(sb, '/');
	ipt_add_mask6(sb, m);
}

void ipt_add_addr6_name(struct strbuf *sb, const union ipt_addr *a)
{
	char host[NI_MAXHOST];
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };

	memcpy(&sa.sin6_addr, a->b, 16);
	if (getnameinfo((const struct sockaddr *)&sa, sizeof(sa), host, sizeof(host) - 1,
			NULL, 0, 0))
		ipt_add_addr6(sb, a);
	else
		sb_adds(sb, host);
}
