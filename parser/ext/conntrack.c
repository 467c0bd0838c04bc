// SPDX-License-Identifier: GPL-2.0
/* -m conntrack (revision 3): connection tracking state, tuple, status, expiry, direction. */
#include "ext.h"
#include "resolve.h"
#include "proto_ext.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/xt_conntrack.h>

enum {
	O_CTSTATE, O_CTPROTO, O_CTORIGSRC, O_CTORIGDST, O_CTREPLSRC, O_CTREPLDST,
	O_CTORIGSRCPORT, O_CTORIGDSTPORT, O_CTREPLSRCPORT, O_CTREPLDSTPORT,
	O_CTSTATUS, O_CTEXPIRE, O_CTDIR,
};

static const struct ipt_ext_opt conntrack_opts[] = {
	{ .name = "ctstate", .has_arg = true, .id = O_CTSTATE },
	{ .name = "ctproto", .has_arg = true, .id = O_CTPROTO },
	{ .name = "ctorigsrc", .has_arg = true, .id = O_CTORIGSRC },
	{ .name = "ctorigdst", .has_arg = true, .id = O_CTORIGDST },
	{ .name = "ctreplsrc", .has_arg = true, .id = O_CTREPLSRC },
	{ .name = "ctrepldst", .has_arg = true, .id = O_CTREPLDST },
	{ .name = "ctorigsrcport", .has_arg = true, .id = O_CTORIGSRCPORT },
	{ .name = "ctorigdstport", .has_arg = true, .id = O_CTORIGDSTPORT },
	{ .name = "ctreplsrcport", .has_arg = true, .id = O_CTREPLSRCPORT },
	{ .name = "ctrepldstport", .has_arg = true, .id = O_CTREPLDSTPORT },
	{ .name = "ctstatus", .has_arg = true, .id = O_CTSTATUS },
	{ .name = "ctexpire", .has_arg = true, .id = O_CTEXPIRE },
	{ .name = "ctdir", .has_arg = true, .id = O_CTDIR },
	{ NULL },
};

static const char *const opt_names[] = {
	"ctstate", "ctproto", "ctorigsrc", "ctorigdst", "ctreplsrc", "ctrepldst",
	"ctorigsrcport", "ctorigdstport", "ctreplsrcport", "ctrepldstport",
	"ctstatus", "ctexpire", "ctdir",
};

struct named_bit {
	const char *name;
	unsigned int bit;
};

/* Parse order (abbreviations resolve to the first name they begin) and print order differ. */
static const struct named_bit ct_states_parse[] = {
	{ "INVALID", XT_CONNTRACK_STATE_INVALID },
	{ "NEW", XT_CONNTRACK_STATE_BIT(IP_CT_NEW) },
	{ "ESTABLISHED", XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) },
	{ "RELATED", XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) },
	{ "UNTRACKED", XT_CONNTRACK_STATE_UNTRACKED },
	{ "SNAT", XT_CONNTRACK_STATE_SNAT },
	{ "DNAT", XT_CONNTRACK_STATE_DNAT },
	{ NULL, 0 },
};

static const struct named_bit ct_states_print[] = {
	{ "INVALID", XT_CONNTRACK_STATE_INVALID },
	{ "NEW", XT_CONNTRACK_STATE_BIT(IP_CT_NEW) },
	{ "RELATED", XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) },
	{ "ESTABLISHED", XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) },
	{ "UNTRACKED", XT_CONNTRACK_STATE_UNTRACKED },
	{ "SNAT", XT_CONNTRACK_STATE_SNAT },
	{ "DNAT", XT_CONNTRACK_STATE_DNAT },
	{ NULL, 0 },
};

static const struct named_bit ct_statuses[] = {
	{ "NONE", 0 },
	{ "EXPECTED", IPS_EXPECTED },
	{ "SEEN_REPLY", IPS_SEEN_REPLY },
	{ "ASSURED", IPS_ASSURED },
	{ "CONFIRMED", IPS_CONFIRMED },
	{ NULL, 0 },
};

/* One list element: any prefix of a name, case-insensitively (strncasecmp as iptables). */
static bool lookup(const struct named_bit *t, const char *s, size_t len, __u16 *mask)
{
	for (; t->name; t++) {
		if (!strncasecmp(s, t->name, len)) {
			*mask |= (__u16)t->bit;
			return true;
		}
	}
	return false;
}

/* "A,B,C": iptables names the rest of the list from the bad element on. */
static int parse_list(const struct named_bit *t, const char *arg, const char *what, __u16 *mask,
		      struct ipt_err *err)
{
	const char *comma;

	while ((comma = strchr(arg, ',')) != NULL) {
		if (comma == arg || !lookup(t, arg, (size_t)(comma - arg), mask))
			return ipt_err_param(err, "Bad %s \"%s\"", what, arg);
		arg = comma + 1;
	}
	if (!*arg || !lookup(t, arg, strlen(arg), mask))
		return ipt_err_param(err, "Bad %s \"%s\"", what, arg);
	return 0;
}

/* xtables_parse_protocol(): number, "all", /etc/protocols, iptables' own names. */
static int parse_proto(const char *s, __u16 *proto, struct ipt_err *err)
{
	unsigned long long v;
	const struct protoent *pe;

	if (ipt_strtoul(s, NULL, 0, 255, &v) == 0) {
		*proto = (__u16)v;
		return 0;
	}
	if (!strcmp(s, "all")) {
		*proto = 0;
		return 0;
	}
	pe = getprotobyname(s);
	if (pe) {
		*proto = (__u16)pe->p_proto;
		return 0;
	}
	for (unsigned int i = 1; i < 256; i++) {
		const char *n = ipt_proto_name((__u16)i);

		if (n && !strcmp(n, s)) {
			*proto = (__u16)i;
			return 0;
		}
	}
	return ipt_err_param(err, "unknown protocol \"%s\" specified", s);
}

/* address[/mask]: a host name or dotted quad, a CIDR length 0-32 or a dotted mask. The
 * address is kept as written (iptables does not apply the mask). A dotted mask that is
 * not a prefix is kept as such (iptables 1.8.10+; 1.8.9 turned it into /32). */
static int parse_hostmask(const char *arg, const char *opt, __be32 *addr, __be32 *mask,
			  struct ipt_err *err)
{
	char host[256];
	const char *slash = strchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
	struct addrinfo hints, *res = NULL;
	int rc;

	if (n >= sizeof(host))
		n = sizeof(host) - 1;
	memcpy(host, arg, n);
	host[n] = '\0';

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_DGRAM;
	rc = ipt_getaddrinfo(host, &hints, &res);
	if (rc != 0)
		return ipt_err_param(err, "getaddrinfo: %s\n", gai_strerror(rc));
	*addr = ((const struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
	freeaddrinfo(res);

	*mask = 0xFFFFFFFFu;
	if (slash) {
		unsigned long long v;
		struct in_addr m;

		if (ipt_strtoul(slash + 1, NULL, 0, 32, &v) == 0)
			*mask = v ? htonl(0xFFFFFFFFu << (32 - v)) : 0;
		else if (slash[1] && inet_aton(slash + 1, &m))
			*mask = m.s_addr;
		else
			return ipt_err_param(err, "conntrack: bad value for option \"--%s\", neither a "
					     "valid network mask nor valid CIDR (0-32).\n", opt);
	}
	return 0;
}

/* The same in an IPv6 table: an IPv6 address or AAAA name, a CIDR length 0-128
 * or a mask in address form. */
static int parse_hostmask6(const char *arg, const char *opt, union ipt_addr am[2],
			   struct ipt_err *err)
{
	char host[256];
	const char *slash = strchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
	struct addrinfo hints, *res = NULL;
	int rc;

	if (n >= sizeof(host))
		n = sizeof(host) - 1;
	memcpy(host, arg, n);
	host[n] = '\0';

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET6;
	hints.ai_socktype = SOCK_DGRAM;
	rc = ipt_getaddrinfo(host, &hints, &res);
	if (rc != 0)
		return ipt_err_param(err, "getaddrinfo: %s\n", gai_strerror(rc));
	memcpy(am[0].b, &((const struct sockaddr_in6 *)res->ai_addr)->sin6_addr, 16);
	freeaddrinfo(res);

	memset(&am[1], 0xff, sizeof(am[1]));
	if (slash) {
		unsigned long long v;

		if (ipt_strtoul(slash + 1, NULL, 0, 128, &v) == 0)
			ipt_mask6_from_cidr((unsigned int)v, &am[1]);
		else if (!slash[1] || inet_pton(AF_INET6, slash + 1, am[1].b) != 1)
			return ipt_err_param(err, "conntrack: bad value for option \"--%s\", neither a "
					     "valid network mask nor valid CIDR (0-128).\n", opt);
	}
	return 0;
}

/* XTTYPE_UINT32RC: "a", "a:b", ":b", "a:", at most two parts. */
static int parse_expire(const char *arg, __u32 out[2], struct ipt_err *err)
{
	const char *p = arg;
	unsigned long long v;
	unsigned int nvals = 0;
	char *end;

	out[0] = 0;
	out[1] = 0xFFFFFFFFu;
	for (;;) {
		if (nvals == 2)
			return ipt_err_param(err, "conntrack: Too many components for option "
					     "\"--ctexpire\" (max: 2)\n");
		if (*p == '\0' || *p == ':') {
			end = (char *)p;
			v = nvals == 1 ? 0xFFFFFFFFu : 0;
		} else if (ipt_strtoul(p, &end, 0, 0xFFFFFFFFu, &v) || (*end && *end != ':')) {
			return ipt_err_param(err, "conntrack: bad value for option \"--ctexpire\" "
					     "near \"%s\", or out of range (0-4294967295).\n", p);
		}
		out[nvals++] = (__u32)v;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	if (nvals == 1)
		out[1] = out[0];
	if (out[0] > out[1])
		return ipt_err_param(err, "conntrack: invalid range (min > max) for option "
				     "\"--ctexpire\"\n");
	return 0;
}

static __u16 *port_field(struct ipt_conntrack_info *ct, int id)
{
	switch (id) {
	case O_CTORIGSRCPORT: return ct->origsrc_port;
	case O_CTORIGDSTPORT: return ct->origdst_port;
	case O_CTREPLSRCPORT: return ct->replsrc_port;
	default: return ct->repldst_port;
	}
}

static int conntrack_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_conntrack_info *ct = data;
	int id = c->opt->id;
	__u16 flag = 0;

	if (c->flags & (1u << id))
		return ipt_err_param(c->err, "conntrack: option \"--%s\" can only be used once.\n",
				     opt_names[id]);
	if (c->invert && id == O_CTDIR)
		return ipt_err_param(c->err, "conntrack: option \"--ctdir\" cannot be inverted.\n");

	/* an IPv6 table's payload is struct ipt_conntrack6_info (ct is its head) */
	if (ipt_af == AF_INET6 && id >= O_CTORIGSRC && id <= O_CTREPLDST) {
		struct ipt_conntrack6_info *ct6 = data;

		if (parse_hostmask6(c->arg, opt_names[id], ct6->addr[id - O_CTORIGSRC], c->err))
			return -1;
		flag = (__u16)(XT_CONNTRACK_ORIGSRC << (id - O_CTORIGSRC));
		goto set;
	}
	switch (id) {
	case O_CTSTATE:
		if (parse_list(ct_states_parse, c->arg, "ctstate", &ct->state_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_STATE;
		break;
	case O_CTPROTO:
		if (parse_proto(c->arg, &ct->l4proto, c->err))
			return -1;
		/* iptables 1.8.13 refuses protocol 0 with or without '!' */
		if (ct->l4proto == 0)
			return ipt_err_param(c->err, "conntrack: rule would never match protocol");
		flag = XT_CONNTRACK_PROTO;
		break;
	case O_CTORIGSRC:
		if (parse_hostmask(c->arg, "ctorigsrc", &ct->origsrc_addr, &ct->origsrc_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_ORIGSRC;
		break;
	case O_CTORIGDST:
		if (parse_hostmask(c->arg, "ctorigdst", &ct->origdst_addr, &ct->origdst_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_ORIGDST;
		break;
	case O_CTREPLSRC:
		if (parse_hostmask(c->arg, "ctreplsrc", &ct->replsrc_addr, &ct->replsrc_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_REPLSRC;
		break;
	case O_CTREPLDST:
		if (parse_hostmask(c->arg, "ctrepldst", &ct->repldst_addr, &ct->repldst_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_REPLDST;
		break;
	case O_CTORIGSRCPORT:
	case O_CTORIGDSTPORT:
	case O_CTREPLSRCPORT:
	case O_CTREPLDSTPORT:
		if (ipt_parse_portrc(c->arg, "conntrack", opt_names[id], port_field(ct, id), c->err))
			return -1;
		flag = (__u16)(XT_CONNTRACK_ORIGSRC_PORT << (id - O_CTORIGSRCPORT));
		break;
	case O_CTSTATUS:
		if (parse_list(ct_statuses, c->arg, "ctstatus", &ct->status_mask, c->err))
			return -1;
		flag = XT_CONNTRACK_STATUS;
		break;
	case O_CTEXPIRE:
		if (parse_expire(c->arg, ct->expires, c->err))
			return -1;
		flag = XT_CONNTRACK_EXPIRES;
		break;
	case O_CTDIR:
		if (!strcasecmp(c->arg, "ORIGINAL"))
			ct->invert_flags &= (__u16)~XT_CONNTRACK_DIRECTION;
		else if (!strcasecmp(c->arg, "REPLY"))
			ct->invert_flags |= XT_CONNTRACK_DIRECTION;
		else
			return ipt_err_param(c->err, "conntrack: Bad value for \"--ctdir\" option: \"%s\"",
					     c->arg);
		ct->match_flags |= XT_CONNTRACK_DIRECTION;
		return 0;
	default:
		return ipt_err_param(c->err, "conntrack: unknown option");
	}
set:
	ct->match_flags |= flag;
	if (c->invert)
		ct->invert_flags |= flag;
	return 0;
}

static int conntrack_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!f->flags)
		return ipt_err_param(f->err, "conntrack: At least one option is required");
	return 0;
}

static void add_mask(struct strbuf *sb, __be32 mask)
{
	__u32 m = ntohl(mask);
	int bits = 0;

	while (bits < 32 && (m & (0x80000000u >> bits)))
		bits++;
	if (bits < 32 && (m << bits) != 0) {	/* not a prefix */
		struct in_addr a = { .s_addr = mask };

		sb_addf(sb, "/%s", inet_ntoa(a));
	} else if (bits != 32) {
		sb_addf(sb, "/%d", bits);
	}
}

/* xtables_ipaddr_to_anyname(): host name, else network name, else numeric. */
static void add_anyname(struct strbuf *sb, __be32 addr)
{
	struct in_addr a = { .s_addr = addr };
	const struct hostent *h = gethostbyaddr(&a, sizeof(a), AF_INET);
	const struct netent *n;

	if (h && h->h_name) {
		sb_adds(sb, h->h_name);
		return;
	}
	n = getnetbyaddr(ntohl(addr), AF_INET);
	if (n && n->n_name) {
		sb_adds(sb, n->n_name);
		return;
	}
	sb_adds(sb, inet_ntoa(a));
}

static void add_addr(struct strbuf *sb, __be32 addr, __be32 mask, bool numeric)
{
	struct in_addr a = { .s_addr = addr };

	sb_addc(sb, ' ');
	if (!numeric && addr == 0) {
		sb_adds(sb, "anywhere");
		return;
	}
	if (numeric)
		sb_adds(sb, inet_ntoa(a));
	else
		add_anyname(sb, addr);
	add_mask(sb, mask);
}

/* ip6tables' conntrack_dump_addr for IPv6: "anywhere" for :: without -n, else
 * the address (a name without -n) and the mask suffix of -L */
static void add_addr6(struct strbuf *sb, const union ipt_addr am[2], bool numeric)
{
	sb_addc(sb, ' ');
	if (!numeric && ipt_addr6_zero(&am[0])) {
		sb_adds(sb, "anywhere");
		return;
	}
	if (numeric)
		ipt_add_addr6(sb, &am[0]);
	else
		ipt_add_addr6_name(sb, &am[0]);
	ipt_add_mask6_suffix(sb, &am[1]);
}

static void add_names(struct strbuf *sb, const struct named_bit *t, __u16 mask)
{
	const char *sep = " ";

	for (; t->name; t++) {
		if (t->bit && (mask & t->bit)) {
			sb_addf(sb, "%s%s", sep, t->name);
			sep = ",";
		}
	}
}

/* iptables' conntrack_dump(): save (prefix "--", numeric) and -L (prefix "") share it. */
static void dump(struct strbuf *sb, const struct ipt_conntrack_info *ct, const char *pfx,
		 bool numeric)
{
	static const struct { __u16 flag; const char *name; size_t off_addr, off_mask; } addrs[] = {
		{ XT_CONNTRACK_ORIGSRC, "ctorigsrc", offsetof(struct ipt_conntrack_info, origsrc_addr),
		  offsetof(struct ipt_conntrack_info, origsrc_mask) },
		{ XT_CONNTRACK_ORIGDST, "ctorigdst", offsetof(struct ipt_conntrack_info, origdst_addr),
		  offsetof(struct ipt_conntrack_info, origdst_mask) },
		{ XT_CONNTRACK_REPLSRC, "ctreplsrc", offsetof(struct ipt_conntrack_info, replsrc_addr),
		  offsetof(struct ipt_conntrack_info, replsrc_mask) },
		{ XT_CONNTRACK_REPLDST, "ctrepldst", offsetof(struct ipt_conntrack_info, repldst_addr),
		  offsetof(struct ipt_conntrack_info, repldst_mask) },
	};
	const char *const port_names[] = { "ctorigsrcport", "ctorigdstport", "ctreplsrcport",
					   "ctrepldstport" };
	const __u16 *ports[] = { ct->origsrc_port, ct->origdst_port, ct->replsrc_port,
				 ct->repldst_port };
	__u16 mf = ct->match_flags, inv = ct->invert_flags;

#define NOT(f) ((inv & (f)) ? " !" : "")
	if (mf & XT_CONNTRACK_STATE) {
		sb_addf(sb, "%s %sctstate", NOT(XT_CONNTRACK_STATE), pfx);
		add_names(sb, ct_states_print, ct->state_mask);
	}
	if (mf & XT_CONNTRACK_PROTO)
		sb_addf(sb, "%s %sctproto %u", NOT(XT_CONNTRACK_PROTO), pfx, ct->l4proto);
	for (size_t i = 0; i < 4; i++) {
		if (!(mf & addrs[i].flag))
			continue;
		sb_addf(sb, "%s %s%s", NOT(addrs[i].flag), pfx, addrs[i].name);
		if (ipt_af == AF_INET6) {
			/* ct heads a struct ipt_conntrack6_info (proto_ext.h) */
			add_addr6(sb, ((const struct ipt_conntrack6_info *)ct)->addr[i], numeric);
			continue;
		}
		add_addr(sb, *(const __be32 *)((const char *)ct + addrs[i].off_addr),
			 *(const __be32 *)((const char *)ct + addrs[i].off_mask), numeric);
	}
	for (int i = 0; i < 4; i++) {
		__u16 f = (__u16)(XT_CONNTRACK_ORIGSRC_PORT << i);

		if (!(mf & f))
			continue;
		sb_addf(sb, "%s %s%s %u", NOT(f), pfx, port_names[i], ports[i][0]);
		if (ports[i][0] != ports[i][1])
			sb_addf(sb, ":%u", ports[i][1]);
	}
	if (mf & XT_CONNTRACK_STATUS) {
		sb_addf(sb, "%s %sctstatus", NOT(XT_CONNTRACK_STATUS), pfx);
		if (ct->status_mask)
			add_names(sb, ct_statuses, ct->status_mask);
		else
			sb_adds(sb, " NONE");
	}
	if (mf & XT_CONNTRACK_EXPIRES) {
		sb_addf(sb, "%s %sctexpire %u", NOT(XT_CONNTRACK_EXPIRES), pfx, ct->expires[0]);
		if (ct->expires[0] != ct->expires[1])
			sb_addf(sb, ":%u", ct->expires[1]);
	}
	if (mf & XT_CONNTRACK_DIRECTION)
		sb_addf(sb, " %sctdir %s", pfx,
			(inv & XT_CONNTRACK_DIRECTION) ? "REPLY" : "ORIGINAL");
#undef NOT
}

static void conntrack_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	(void)ip;
	dump(sb, data, "--", true);
}

static void conntrack_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			    bool numeric)
{
	(void)ip;
	dump(sb, data, "", numeric);
}

const struct ipt_ext ipt_ext_conntrack = {
	.name = "conntrack",
	.size = sizeof(struct ipt_conntrack_info),
	.opts = conntrack_opts,
	.parse = conntrack_parse,
	.check = conntrack_check,
	.save = conntrack_save,
	.print = conntrack_print,
	.families = IPT_EXT_F4,
};

/* The same code in an IPv6 table, with the payload of 16-byte addresses. */
const struct ipt_ext ipt_ext_conntrack6 = {
	.name = "conntrack",
	.size = sizeof(struct ipt_conntrack6_info),
	.opts = conntrack_opts,
	.parse = conntrack_parse,
	.check = conntrack_check,
	.save = conntrack_save,
	.print = conntrack_print,
	.families = IPT_EXT_F6,
};
