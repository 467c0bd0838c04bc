// SPDX-License-Identifier: GPL-2.0
/* -m multiport (revision 1): --sports/--dports/--ports LIST, ranges a:b, `!` on the list. */
#include "ext.h"
#include "proto_ext.h"

#include <stdlib.h>
#include <string.h>

enum { O_SPORTS, O_DPORTS, O_PORTS };

static const struct ipt_ext_opt multiport_opts[] = {
	{ .name = "source-ports", .has_arg = true, .id = O_SPORTS },
	{ .name = "sports", .has_arg = true, .id = O_SPORTS },
	{ .name = "destination-ports", .has_arg = true, .id = O_DPORTS },
	{ .name = "dports", .has_arg = true, .id = O_DPORTS },
	{ .name = "ports", .has_arg = true, .id = O_PORTS },
	{ NULL },
};

static const char *const long_names[] = { "source-ports", "destination-ports", "ports" };
static const char *const save_names[] = { "sports", "dports", "ports" };

/* The protocols multiport works with (their names resolve services), or NULL. */
static const char *mport_proto(__u16 p)
{
	switch (p) {
	case 6: return "tcp";
	case 17: return "udp";
	case 136: return "udplite";
	case 132: return "sctp";
	case 33: return "dccp";
	default: return NULL;
	}
}

static int parse_list(const char *arg, struct ipt_multiport_info *m, const char *proto,
		      struct ipt_err *err)
{
	/* a copy as long as the argument: a cut-off list would be another list */
	char *buf = strdup(arg), *cp, *next, *range;
	unsigned int i;
	int r = 0;

	if (!buf)
		abort();
	for (cp = buf, i = 0; cp && i < IPT_MULTI_PORTS; cp = next, i++) {
		next = strchr(cp, ',');
		if (next)
			*next++ = '\0';
		range = strchr(cp, ':');
		if (range) {
			if (i == IPT_MULTI_PORTS - 1) {
				r = ipt_err_param(err, "too many ports specified");
				goto out;
			}
			*range++ = '\0';
		}
		if ((r = ipt_parse_port(cp, proto, &m->ports[i], err)))
			goto out;
		if (range) {
			m->pflags[i] = 1;
			if ((r = ipt_parse_port(range, proto, &m->ports[++i], err)))
				goto out;
			if (m->ports[i - 1] >= m->ports[i]) {
				r = ipt_err_param(err, "invalid portrange specified");
				goto out;
			}
		}
	}
	if (cp && i == IPT_MULTI_PORTS) {
		r = ipt_err_param(err, "too many ports specified");
		goto out;
	}
	m->count = (__u8)i;
out:
	free(buf);
	return r;
}

static int multiport_parse(void *data, const struct ipt_ext_call *c)
{
	struct ipt_multiport_info *m = data;
	int id = c->opt->id;
	const char *proto;

	if (c->flags & (1u << id))
		return ipt_err_param(c->err, "multiport: option \"--%s\" can only be used once.\n",
				     long_names[id]);
	/* iptables checks the protocol while parsing: -p must come first. */
	if (c->ip->invflags & IPT_INV_PROTO)
		return ipt_err_param(c->err,
				     "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP");
	proto = mport_proto(c->ip->proto);
	if (!proto) {
		if (!c->ip->proto)
			return ipt_err_param(c->err, "multiport needs `-p tcp', `-p udp', "
					     "`-p udplite', `-p sctp' or `-p dccp'");
		return ipt_err_param(c->err,
				     "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP");
	}
	/* Only one list per match: start from a clean slate for the canonical bytes. */
	memset(m->ports, 0, sizeof(m->ports));
	memset(m->pflags, 0, sizeof(m->pflags));
	if (parse_list(c->arg, m, proto, c->err))
		return -1;
	m->flags = id == O_SPORTS ? IPT_MPORT_SOURCE :
		   id == O_DPORTS ? IPT_MPORT_DESTINATION : IPT_MPORT_EITHER;
	if (c->invert)
		m->invert = 1;
	return 0;
}

static int multiport_check(void *data, const struct ipt_ext_final *f)
{
	(void)data;
	if (!f->flags)
		return ipt_err_param(f->err, "multiport expection an option");
	/* --sports, --dports and --ports exclude each other; iptables names the
	 * two in its option-table order. */
	for (int a = 0; a < 3; a++) {
		if (!(f->flags & (1u << a)))
			continue;
		for (int b = 0; b < 3; b++)
			if (b != a && (f->flags & (1u << b)))
				return ipt_err_param(f->err, "multiport: option \"--%s\" cannot be "
						     "used together with \"--%s\".\n",
						     long_names[a], long_names[b]);
	}
	return 0;
}

static int flag_index(const struct ipt_multiport_info *m)
{
	return m->flags == IPT_MPORT_SOURCE ? 0 : m->flags == IPT_MPORT_DESTINATION ? 1 : 2;
}

static void add_list(struct strbuf *sb, const struct ipt_multiport_info *m, const char *proto,
		     bool numeric)
{
	for (unsigned int i = 0; i < m->count; i++) {
		if (i)
			sb_addc(sb, ',');
		ipt_print_port(sb, m->ports[i], proto, numeric);
		if (m->pflags[i] && i + 1 < m->count) {
			sb_addc(sb, ':');
			ipt_print_port(sb, m->ports[++i], proto, numeric);
		}
	}
}

static void multiport_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	const struct ipt_multiport_info *m = data;

	(void)ip;
	sb_addf(sb, "%s --%s ", m->invert ? " !" : "", save_names[flag_index(m)]);
	add_list(sb, m, NULL, true);
}

static void multiport_print(struct strbuf *sb, const void *data, const struct ipt_ip *ip,
			    bool numeric)
{
	const struct ipt_multiport_info *m = data;

	sb_addf(sb, " multiport %s %s", save_names[flag_index(m)], m->invert ? " !" : "");
	add_list(sb, m, mport_proto(ip->proto), numeric);
}

const struct ipt_ext ipt_ext_multiport = {
	.name = "multiport",
	.size = sizeof(struct ipt_multiport_info),
	.opts = multiport_opts,
	.parse = multiport_parse,
	.check = multiport_check,
	.save = multiport_save,
	.print = multiport_print,
};
