/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Extensions: the matches (-m NAME) and targets (-j NAME) of the rule language.
 *
 * One extension = one file in parser/ext/ that defines its options, how an
 * option's argument becomes payload bytes (parse), the checks done once the
 * whole command line is read (check), and the two ways of printing it back:
 * save/-S syntax and the -L column. Payloads are canonical: parsing the save
 * text gives the same bytes, so save -> restore -> save is the identity.
 */
#ifndef BPFIPT_EXT_H
#define BPFIPT_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include "model.h"
#include "strbuf.h"
#include "errors.h"

struct ipt_ext_opt {
	const char *name;	/* long option without "--" */
	bool has_arg;
	int id;			/* passed to parse; also bit index in the seen-flags */
	/* The option takes a second argv word as well (only --tcp-flags MASK COMP):
	 * the scanner hands the word after the argument to parse() as call->arg2
	 * and consumes it, unless it is missing or starts with '-' or '!' (then
	 * arg2 is NULL and nothing more is consumed; the extension reports
	 * iptables' error). Requires has_arg. */
	bool two_args;
};

/* Everything parse() gets for one option occurrence. */
struct ipt_ext_call {
	const struct ipt_ext_opt *opt;
	const char *arg;	/* NULL when !opt->has_arg */
	bool invert;		/* a '!' preceded the option */
	unsigned int flags;	/* ids of this instance's options seen so far (bitmask) */
	const struct ipt_ip *ip;/* the IP part parsed so far */
	struct ipt_err *err;
	const char *arg2;	/* second word of a two_args option, or NULL (see above) */
};

/* Everything check() gets once the command line is complete. */
struct ipt_ext_final {
	unsigned int flags;	/* ids of options seen (bitmask) */
	const struct ipt_ip *ip;
	struct ipt_err *err;
	/* The rule's matches (all parsed), for the targets whose kernel check looks at
	 * them (TCPMSS wants a tcp match on SYN). NULL/0 when checking a match. */
	const struct ipt_match *matches;
	unsigned int nmatches;
};

/* Builtin chains of the filter table, as bits of struct ipt_ext.hooks. */
#define IPT_HOOK_INPUT		(1u << 0)
#define IPT_HOOK_FORWARD	(1u << 1)
#define IPT_HOOK_OUTPUT		(1u << 2)

struct ipt_ext {
	const char *name;
	bool is_target;
	size_t size;			/* payload bytes: flat, no pointer (saved raw in the snapshot) */
	const struct ipt_ext_opt *opts;	/* terminated by { NULL } */
	void (*init)(void *data);	/* optional: defaults (data is already zeroed) */
	int (*parse)(void *data, const struct ipt_ext_call *c);		/* 0 or -1 (err set) */
	int (*check)(void *data, const struct ipt_ext_final *f);	/* optional, 0 or -1 */
	/* save/-S syntax, each option with a leading space: " --dport 22" */
	void (*save)(struct strbuf *sb, const void *data, const struct ipt_ip *ip);
	/* the -L text after the destination column, each piece with a leading space, as
	 * iptables 1.8 prints it: " tcp dpt:22", " reject-with icmp-port-unreachable" */
	void (*print)(struct strbuf *sb, const void *data, const struct ipt_ip *ip, bool numeric);
	/* The builtin chains (IPT_HOOK_* bits) the kernel lets this extension run from;
	 * 0 = all. A rule using it in a chain that is, or is reachable from, a builtin
	 * chain outside the mask is refused like the kernel does: exit 1, "Invalid
	 * argument" (e.g. -m mac in OUTPUT). check() cannot do it: the chain is unknown. */
	unsigned int hooks;
	/* optional: the same mask computed from the payload, overrides hooks when set
	 * (TCPMSS --clamp-mss-to-pmtu is FORWARD/OUTPUT only, --set-mss is anywhere). */
	unsigned int (*hooks_of)(const void *data);
	/* The families it exists in, as in iptables-legacy and ip6tables-legacy
	 * (IPT_EXT_F4, IPT_EXT_F6 bits; 0 = both): elsewhere it is not found
	 * (-m icmp in bpf-ip6tables: "Couldn't load match `icmp'"). */
	unsigned int families;
};

#define IPT_EXT_F4 (1u << 0)
#define IPT_EXT_F6 (1u << 1)

/* True while the saved state is written: a save() must then print payloads
 * iptables-save would lose (tcp --tcp-flags with an empty mask) so that the
 * state reads back to the same bytes. */
extern bool ipt_save_lossless;

/* The extension of that name in the family run (ipt_af), or NULL. A match name
 * goes through ipt_ext_match_name() first. */
const struct ipt_ext *ipt_ext_find(const char *name, bool target);
/* The name libxtables loads for -m NAME: "icmpv6" and "ipv6-icmp" are "icmp6"
 * (in both families: iptables says "Couldn't load match `icmp6'"). */
const char *ipt_ext_match_name(const char *name);
/* An extension of iptables that bpf-iptables does not implement (its error
 * says "not supported by bpf-iptables" rather than "No such file"). */
bool ipt_ext_unsupported(const char *name, bool target);
/* Every option name any extension knows, for the scanner (has_arg must be consistent). */
const struct ipt_ext_opt *ipt_ext_any_opt(const char *name);
/* What every extension option starting with name[0..len) takes: 1 and *has_arg,
 * *two_args when they all agree, 0 when no option starts so, -1 when they differ.
 * The scanner consumes an abbreviation's arguments before the parser knows which
 * loaded extension it names ("--dp 22" is tcp's --dport). */
int ipt_ext_prefix_shape(const char *name, size_t len, bool *has_arg, bool *two_args);

/* Shared helpers for extension parsers (parser/ext/common.c). */
int ipt_parse_port(const char *s, const char *proto, __u16 *port, struct ipt_err *err);
int ipt_parse_port_range(const char *s, const char *proto, __u16 range[2], struct ipt_err *err);
int ipt_parse_uint(const char *s, unsigned long long max, unsigned long long *v);
void ipt_print_port(struct strbuf *sb, __u16 port, const char *proto, bool numeric);
/* libxtables' xtables_strtoul(): base 0, leading blanks and '+' allowed, no '-',
 * min <= value <= max; with end == NULL the whole string must be the number,
 * otherwise *end gets the first unparsed char. 0 or -1. (parser/ext/ports.c) */
int ipt_strtoul(const char *s, char **end, unsigned long long min, unsigned long long max,
		unsigned long long *v);
/* XTTYPE_PORTRC (udp --dport, conntrack --ct*port): "a", "a:b", ":b", "a:", ":";
 * names resolve for any protocol; messages name ext and option. */
int ipt_parse_portrc(const char *s, const char *ext, const char *opt, __u16 range[2],
		     struct ipt_err *err);
void ipt_save_string(struct strbuf *sb, const char *s);	/* iptables-save quoting */
const char *ipt_proto_name(__u16 proto);		/* "tcp" or NULL */
/* The name iptables prints for a protocol (its own table, then /etc/protocols
 * unless nolookup), NULL when it has none. */
const char *ipt_proto_to_name(__u16 proto, bool nolookup);
/* The checks libxtables makes before parsing any option of an x6 extension, with its
 * messages: "EXT: option \"--NAME\" can only be used once." / "... cannot be inverted." */
int ipt_xt_opt_begin(const struct ipt_ext_call *c, const char *ext, bool invertible);
/* "EXT: option \"--NAME\" must be specified" for a mandatory option that is missing. */
int ipt_xt_opt_mandatory(struct ipt_err *err, const char *ext, const char *opt);
/* XTTYPE_STRING with a buffer of size bytes: min length (error like iptables),
 * longer text silently cut to size - 1 (as iptables 1.8.9 does). */
int ipt_xt_parse_string(const char *arg, size_t min, char *dst, size_t size, struct ipt_err *err);

/* IPv6 addresses and masks (all 16 bytes of union ipt_addr). */
int ipt_mask6_cidr(const union ipt_addr *m);		/* prefix length, -1 if not a prefix */
void ipt_mask6_from_cidr(unsigned int bits, union ipt_addr *m);	/* bits <= 128 */
void ipt_add_addr6(struct strbuf *sb, const union ipt_addr *a);	/* inet_ntop's text */
/* the mask after '/', as ip6tables-save prints it: "64", or "ffff:0:ffff::" */
void ipt_add_mask6(struct strbuf *sb, const union ipt_addr *m);
bool ipt_addr6_zero(const union ipt_addr *a);
/* -L's suffix (xtables_ip6mask_to_numeric): "" for /128, "/N", "/MASK" */
void ipt_add_mask6_suffix(struct strbuf *sb, const union ipt_addr *m);
/* -L without -n (xtables_ip6addr_to_anyname): getnameinfo()'s name, else numeric */
void ipt_add_addr6_name(struct strbuf *sb, const union ipt_addr *a);

#endif
