// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line driver: getopt_long's rules for splitting words into
 * options and arguments (cmd_lex), the grammar's actions (cmd_*), and the
 * checks iptables runs once the whole line is read (cmd_finish), in
 * iptables' order so that the first error reported is the one iptables
 * reports.
 */
#include "cmd_internal.h"
#include "cmdgram.h"
#include "cmdword.h"
#include "resolve.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum arg_kind { ARG_NONE, ARG_REQ, ARG_OPT };

struct core_opt {
	const char *lname;	/* long name or NULL */
	char c;			/* short letter (or a private code for long-only options) */
	enum arg_kind arg;
	int tok;		/* grammar token */
};

#define OPT_LINE_NUMBERS_C '0'

static const struct core_opt core_opts[] = {
	{ "append",		'A', ARG_REQ, TOK_CMD },
	{ "check",		'C', ARG_REQ, TOK_CMD },
	{ "delete",		'D', ARG_REQ, TOK_CMD_POS },
	{ "insert",		'I', ARG_REQ, TOK_CMD_POS },
	{ "replace",		'R', ARG_REQ, TOK_CMD_POS },
	{ "list",		'L', ARG_OPT, TOK_CMD_POS },
	{ "list-rules",		'S', ARG_OPT, TOK_CMD_POS },
	{ "flush",		'F', ARG_OPT, TOK_CMD_POS },
	{ "zero",		'Z', ARG_OPT, TOK_CMD_POS },
	{ "new-chain",		'N', ARG_REQ, TOK_CMD },
	{ "delete-chain",	'X', ARG_OPT, TOK_CMD_POS },
	{ "rename-chain",	'E', ARG_REQ, TOK_CMD_POS },
	{ "policy",		'P', ARG_REQ, TOK_CMD_POS },
	{ "source",		's', ARG_REQ, TOK_OPT },
	{ "destination",	'd', ARG_REQ, TOK_OPT },
	{ "src",		's', ARG_REQ, TOK_OPT },
	{ "dst",		'd', ARG_REQ, TOK_OPT },
	{ "protocol",		'p', ARG_REQ, TOK_OPT },
	{ "in-interface",	'i', ARG_REQ, TOK_OPT },
	{ "out-interface",	'o', ARG_REQ, TOK_OPT },
	{ "fragment",		'f', ARG_NONE, TOK_OPT },
	{ "jump",		'j', ARG_REQ, TOK_OPT },
	{ "goto",		'g', ARG_REQ, TOK_OPT },
	{ "match",		'm', ARG_REQ, TOK_OPT },
	{ "table",		't', ARG_REQ, TOK_OPT },
	{ "numeric",		'n', ARG_NONE, TOK_OPT },
	{ "verbose",		'v', ARG_NONE, TOK_OPT },
	{ "exact",		'x', ARG_NONE, TOK_OPT },
	{ "line-numbers",	OPT_LINE_NUMBERS_C, ARG_NONE, TOK_OPT },
	{ "wait",		'w', ARG_OPT, TOK_OPT_POS },
	{ "wait-interval",	'W', ARG_OPT, TOK_OPT_POS },
	{ "set-counters",	'c', ARG_REQ, TOK_OPT },
	{ "version",		'V', ARG_NONE, TOK_OPT },
	{ "help",		'h', ARG_OPT, TOK_OPT },
	{ "modprobe",		'M', ARG_REQ, TOK_OPT },
	{ "ipv4",		'4', ARG_NONE, TOK_OPT },
	{ "ipv6",		'6', ARG_NONE, TOK_OPT },
	{ NULL,			0, ARG_NONE, 0 },
};

static const struct core_opt *core_short(char c)
{
	for (const struct core_opt *o = core_opts; o->c; o++)
		if (o->c == c && c != OPT_LINE_NUMBERS_C)
			return o;
	return NULL;
}

static int err_at(struct cmd_parse *ps, int argi)
{
	if (ps->err->argi < 0)
		ps->err->argi = argi;
	return -1;
}

/* ---------------------------------------------------------------- lexer -- */

/* The word classes getopt_long sees, as the rules
 *   "!"  "--"  "--"[^=]+"=".*  "--"[^=]+  "-"[^-].*  (.|\n)+  (longest match
 * over the whole word, the first rule on a tie) would give them. This was a flex
 * scanner run on every word: its buffer setup per word cost more than the
 * classification; test_parser keeps the table of what that scanner returned. */
enum cmd_word cmd_word_class(const char *w)
{
	size_t len = strlen(w);

	if (!len)
		return W_EMPTY;
	if (len == 1 && w[0] == '!')
		return W_BANG;
	if (w[0] == '-' && w[1] == '-') {
		if (len == 2)
			return W_DASHDASH;
		/* "--" [^=]+ "=" .*: the name is not empty, the value has no newline */
		const char *eq = strchr(w + 2, '=');

		if (!eq)
			return W_LONG;
		if (eq > w + 2 && !strchr(eq + 1, '\n'))
			return W_LONG_EQ;
		return W_WORD;
	}
	/* "-" [^-] .*: a cluster of short options, no newline after its first */
	if (w[0] == '-' && len >= 2 && !strchr(w + 2, '\n'))
		return W_SHORT;
	return W_WORD;
}

static bool is_positional(const char *w)
{
	/* iptables' xs_has_arg: the next word is an argument unless it looks like
	 * an option or a '!'. */
	return w[0] != '-' && w[0] != '!';
}

static const char *next_word(struct cmd_parse *ps, int *argi)
{
	if (ps->pos >= ps->argc)
		return NULL;
	*argi = ps->pos;
	return ps->argv[ps->pos++];
}

/* ip6tables' option table has no --fragment (only -f, with its own message). */
static bool core_long_ok(const struct core_opt *o)
{
	return o->c != 'f' || ipt_af != AF_INET6;
}

/* Long-option lookup as getopt_long does it: exact name, else a unique prefix. */
struct long_hit {
	const struct core_opt *core;
	const struct ipt_ext_opt *ext;
};

static int long_lookup(const char *name, size_t len, struct long_hit *hit)
{
	int n = 0;

	memset(hit, 0, sizeof(*hit));
	for (const struct core_opt *o = core_opts; o->c; o++)
		if (strlen(o->lname) == len && !strncmp(o->lname, name, len) && core_long_ok(o)) {
			hit->core = o;
			return 1;
		}
	const struct ipt_ext_opt *e;
	char buf[128];

	if (len < sizeof(buf)) {
		memcpy(buf, name, len);
		buf[len] = '\0';
		if ((e = ipt_ext_any_opt(buf))) {
			hit->ext = e;
			return 1;
		}
	}
	/* Abbreviations: only among the core options, which are always loaded. */
	for (const struct core_opt *o = core_opts; o->c; o++)
		if (!strncmp(o->lname, name, len) && core_long_ok(o)) {
			if (n++ == 0)
				hit->core = o;
			else if (hit->core->c != o->c)
				return 2;	/* ambiguous */
		}
	return n ? 1 : 0;
}

static void tok_init(struct cmd_tok *t, int argi)
{
	memset(t, 0, sizeof(*t));
	t->argi = argi;
}

/* A short option (possibly the head of a cluster "-nvL"). */
static int lex_short(struct cmd_tok *t, struct cmd_parse *ps)
{
	const char *p = ps->cluster;
	int argi = ps->cluster_argi;
	char c = *p++;
	const struct core_opt *o = core_short(c);

	ps->cluster = *p ? p : NULL;
	tok_init(t, argi);
	t->opt = c;
	if (!o) {
		ipt_err_param(ps->err, "unknown option \"%s\"", ps->argv[argi]);
		err_at(ps, argi);
		return TOK_FAIL;
	}
	switch (o->arg) {
	case ARG_NONE:
		break;
	case ARG_REQ:
		if (ps->cluster) {
			t->arg = ps->cluster;
			ps->cluster = NULL;
		} else {
			int ai;

			t->arg = next_word(ps, &ai);
			if (!t->arg) {
				ipt_err_param(ps->err, "option \"-%c\" requires an argument", c);
				err_at(ps, argi);
				return TOK_FAIL;
			}
		}
		break;
	case ARG_OPT:
		if (ps->cluster) {
			t->arg = ps->cluster;
			ps->cluster = NULL;
		}
		break;
	}
	return o->tok;
}

static int lex_ext_args(struct cmd_tok *t, struct cmd_parse *ps, const char *glued,
			bool has_arg, bool two_args)
{
	int ai;

	if (!has_arg)
		return 0;
	t->arg = glued ? glued : next_word(ps, &ai);
	if (two_args && t->arg && ps->pos < ps->argc && is_positional(ps->argv[ps->pos]))
		t->arg2 = next_word(ps, &ai);
	return 0;
}

int cmd_lex(struct cmd_tok *t, struct cmd_parse *ps)
{
	if (ps->err->code)
		return TOK_FAIL;
	if (ps->cluster)
		return lex_short(t, ps);
	if (ps->pos >= ps->argc)
		return 0;	/* end of input */

	int argi = ps->pos;
	const char *w = ps->argv[ps->pos++];
	enum cmd_word kind = cmd_word_class(w);

	tok_init(t, argi);
	switch (kind) {
	case W_BANG:
		return TOK_BANG;
	case W_DASHDASH:
		/* getopt stops at "--"; iptables then complains about what follows */
		if (ps->pos < ps->argc) {
			t->arg = ps->argv[ps->pos];
			t->argi = ps->pos;
			return TOK_STRAY;
		}
		return 0;
	case W_SHORT:
		ps->cluster = w + 1;
		ps->cluster_argi = argi;
		return lex_short(t, ps);
	case W_LONG:
	case W_LONG_EQ: {
		const char *name = w + 2;
		const char *eq = kind == W_LONG_EQ ? strchr(name, '=') : NULL;
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
		const char *glued = eq ? eq + 1 : NULL;
		struct long_hit hit;
		int r = long_lookup(name, nlen, &hit);

		t->lname = name;
		t->lname_len = nlen;
		if (r != 1) {
			bool has_arg, two_args;

			/* unknown, or an extension option's abbreviation: the action
			 * resolves it among the loaded extensions (or reports it); its
			 * arguments are taken here when every candidate takes the same */
			t->name = w;
			t->arg = NULL;
			if (r == 0 && ipt_ext_prefix_shape(name, nlen, &has_arg, &two_args) == 1)
				lex_ext_args(t, ps, glued, has_arg, two_args);
			return TOK_EXT;
		}
		if (hit.ext) {
			t->name = w;
			t->eopt = hit.ext;
			lex_ext_args(t, ps, glued, hit.ext->has_arg, hit.ext->two_args);
			return TOK_EXT;
		}
		t->opt = hit.core->c;
		if (hit.core->arg == ARG_REQ) {
			int ai;

			t->arg = glued ? glued : next_word(ps, &ai);
			if (!t->arg) {
				ipt_err_param(ps->err, "option \"%s\" requires an argument", w);
				err_at(ps, argi);
				return TOK_FAIL;
			}
		} else if (hit.core->arg == ARG_OPT) {
			t->arg = glued;
		} else if (glued) {
			ipt_err_param(ps->err, "unknown option \"%s\"", w);
			err_at(ps, argi);
			return TOK_FAIL;
		}
		return hit.core->tok;
	}
	case W_EMPTY:
	case W_WORD:
	default:
		t->arg = w;
		return is_positional(w) ? TOK_WORD : TOK_STRAY;
	}
}

/* -------------------------------------------------------------- actions -- */

char ipt_cmd2char(unsigned int cmd)
{
	static const char cmdflags[] = { 'I', 'D', 'D', 'R', 'A', 'L', 'F', 'Z',
					 'N', 'X', 'P', 'E', 'S', 'Z', 'C' };
	unsigned int i = 0;

	while (cmd > 1) {
		cmd >>= 1;
		i++;
	}
	return i < sizeof(cmdflags) ? cmdflags[i] : '?';
}

static char opt2char(unsigned int opt)
{
	static const char optflags[] = { 'n', 's', 'd', 'p', 'j', 'v', 'x', 'i', 'o', '0',
					 'c', 'f' };
	unsigned int i = 0;

	while (opt > 1) {
		opt >>= 1;
		i++;
	}
	return i < sizeof(optflags) ? optflags[i] : '?';
}

static int parse_rulenumber(struct cmd_parse *ps, const struct cmd_tok *t, unsigned int *num)
{
	unsigned long long v;

	if (ipt_parse_uint(t->arg, INT_MAX, &v) || v < 1) {
		ipt_err_param(ps->err, "Invalid rule number `%s'", t->arg);
		return err_at(ps, t->argi);
	}
	*num = (unsigned int)v;
	return 0;
}

static int add_command(struct cmd_parse *ps, const struct cmd_tok *t, unsigned int newcmd,
		       unsigned int othercmds)
{
	struct ipt_cmd *cmd = ps->cmd;

	if (ps->invert) {
		ipt_err_param(ps->err, "unexpected '!' flag");
		return err_at(ps, t->argi);
	}
	if (cmd->command & ~othercmds) {
		ipt_err_param(ps->err, "Cannot use -%c with -%c", ipt_cmd2char(newcmd),
			      ipt_cmd2char(cmd->command & ~othercmds));
		return err_at(ps, t->argi);
	}
	cmd->command |= newcmd;
	return 0;
}

static int bad_argument(struct cmd_parse *ps, const struct cmd_tok *t)
{
	ipt_err_set(ps->err, IPT_EXIT_PARAM, IPT_ES_BARE, "Bad argument `%s'", t->arg);
	return err_at(ps, t->argi);
}

int cmd_bad_argument(struct cmd_parse *ps, const struct cmd_tok *t)
{
	return bad_argument(ps, t);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort();
	return d;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

/* The chain name check iptables runs for -N (parse_chain). */
static int check_new_chain_name(struct cmd_parse *ps, const char *name, int argi)
{
	if (strlen(name) > IPT_CHAIN_MAXLEN) {
		ipt_err_param(ps->err, "chain name `%s' too long (must be under %u chars)", name,
			      IPT_CHAIN_MAXLEN + 1);
		return err_at(ps, argi);
	}
	if (*name == '-' || *name == '!') {
		ipt_err_param(ps->err, "chain name not allowed to start with `%c'", *name);
		return err_at(ps, argi);
	}
	/* "" finds iptables' standard target, whose name is empty */
	if (!*name || ipt_ext_find(name, true) || ipt_ext_unsupported(name, true) ||
	    !strcmp(name, "ACCEPT") || !strcmp(name, "DROP") ||
	    !strcmp(name, "RETURN") || !strcmp(name, "QUEUE")) {
		ipt_err_param(ps->err, "chain name may not clash with target name");
		return err_at(ps, argi);
	}
	for (const char *p = name; *p; p++)
		if (isspace((unsigned char)*p)) {
			ipt_err_param(ps->err, "Invalid chain name `%s'", name);
			return err_at(ps, argi);
		}
	return 0;
}

int cmd_command(struct cmd_parse *ps, const struct cmd_tok *t, const struct cmd_tok *pos,
		unsigned int npos)
{
	struct ipt_cmd *cmd = ps->cmd;
	unsigned int used = 0;
	int r = 0;

	switch (t->opt) {
	case 'A':
		r = add_command(ps, t, CMD_APPEND, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		break;
	case 'C':
		r = add_command(ps, t, CMD_CHECK, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		break;
	case 'D':
		r = add_command(ps, t, CMD_DELETE, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		if (!r && npos > used) {
			r = parse_rulenumber(ps, &pos[used++], &cmd->rulenum);
			cmd->command = CMD_DELETE_NUM;
		}
		break;
	case 'R':
		r = add_command(ps, t, CMD_REPLACE, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		if (!r && npos > used)
			r = parse_rulenumber(ps, &pos[used++], &cmd->rulenum);
		else if (!r) {
			ipt_err_param(ps->err, "-%c requires a rule number", 'R');
			r = err_at(ps, t->argi);
		}
		break;
	case 'I':
		r = add_command(ps, t, CMD_INSERT, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		cmd->rulenum = 1;
		if (!r && npos > used)
			r = parse_rulenumber(ps, &pos[used++], &cmd->rulenum);
		break;
	case 'L':
	case 'S':
		r = add_command(ps, t, t->opt == 'L' ? CMD_LIST : CMD_LIST_RULES,
				CMD_ZERO | CMD_ZERO_NUM);
		if (t->arg)
			set_str(&cmd->chain, t->arg);
		else if (npos > used)
			set_str(&cmd->chain, pos[used++].arg);
		if (!r && npos > used)
			r = parse_rulenumber(ps, &pos[used++], &cmd->rulenum);
		break;
	case 'F':
	case 'X':
		r = add_command(ps, t, t->opt == 'F' ? CMD_FLUSH : CMD_DELETE_CHAIN, CMD_NONE);
		if (t->arg)
			set_str(&cmd->chain, t->arg);
		else if (npos > used)
			set_str(&cmd->chain, pos[used++].arg);
		break;
	case 'Z':
		r = add_command(ps, t, CMD_ZERO, CMD_LIST | CMD_LIST_RULES);
		if (t->arg)
			set_str(&cmd->chain, t->arg);
		else if (npos > used)
			set_str(&cmd->chain, pos[used++].arg);
		if (!r && npos > used) {
			r = parse_rulenumber(ps, &pos[used++], &cmd->rulenum);
			/* iptables assigns here: an earlier -L is forgotten */
			cmd->command = CMD_ZERO_NUM;
		}
		break;
	case 'N':
		r = check_new_chain_name(ps, t->arg, t->argi);
		if (!r)
			r = add_command(ps, t, CMD_NEW_CHAIN, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		break;
	case 'E':
		r = add_command(ps, t, CMD_RENAME_CHAIN, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		if (!r && npos > used)
			set_str(&cmd->newname, pos[used++].arg);
		else if (!r) {
			ipt_err_param(ps->err, "-%c requires old-chain-name and new-chain-name", 'E');
			r = err_at(ps, t->argi);
		}
		break;
	case 'P':
		r = add_command(ps, t, CMD_SET_POLICY, CMD_NONE);
		set_str(&cmd->chain, t->arg);
		if (!r && npos > used)
			set_str(&cmd->policy, pos[used++].arg);
		else if (!r) {
			ipt_err_param(ps->err, "-%c requires a chain and a policy", 'P');
			r = err_at(ps, t->argi);
		}
		break;
	default:
		return ipt_err_param(ps->err, "internal: unknown command -%c", t->opt);
	}
	if (!r && used < npos)
		r = bad_argument(ps, &pos[used]);
	ps->invert = false;
	return r;
}

static const unsigned int inverse_for_options[OPT_MAX_BIT] = {
	[1] = IPT_INV_SRCIP,	/* -s */
	[2] = IPT_INV_DSTIP,	/* -d */
	[3] = IPT_INV_PROTO,	/* -p */
	[7] = IPT_INV_VIA_IN,	/* -i */
	[8] = IPT_INV_VIA_OUT,	/* -o */
	[11] = IPT_INV_FRAG,	/* -f */
};

static int set_option(struct cmd_parse *ps, const struct cmd_tok *t, unsigned int option)
{
	struct ipt_cmd *cmd = ps->cmd;

	if (cmd->options & option) {
		ipt_err_param(ps->err, "multiple -%c flags not allowed", opt2char(option));
		return err_at(ps, t->argi);
	}
	cmd->options |= option;
	if (ps->invert) {
		unsigned int i = 0;

		while ((1u << i) != option)
			i++;
		if (!inverse_for_options[i]) {
			ipt_err_param(ps->err, "cannot have ! before -%c", opt2char(option));
			return err_at(ps, t->argi);
		}
		ps->rule->ip.invflags |= inverse_for_options[i];
	}
	return 0;
}

/* Protocol numbers and names as xtables_parse_protocol accepts them, in
 * libxtables 1.8.9's order: the first name of a number is the one the -v echo
 * prints (58 "ipv6-icmp", 135 "mobility-header", as ip6tables-legacy and
 * iptables-legacy print them). */
static const struct { const char *name; __u16 num; } chain_protos[] = {
	{ "tcp", 6 }, { "sctp", 132 }, { "udp", 17 }, { "udplite", 136 }, { "icmp", 1 },
	{ "ipv6-icmp", 58 }, { "icmpv6", 58 }, { "esp", 50 }, { "ah", 51 },
	{ "mobility-header", 135 }, { "ipv6-mh", 135 }, { "mh", 135 }, { "all", 0 },
};

/* The system's protocol names (/etc/protocols), read once per process:
 * getprotobyname()/getprotobynumber() open and scan the file at every call, and
 * a command reading a saved ruleset of 10 000 rules made 10 000 of them (a third
 * of the time of a -A into that chain). First entry wins, as with the libc calls. */
struct proto_name {
	char *name;
	__u16 num;
};
static struct proto_name *proto_names;
static size_t proto_nnames;

static void proto_names_load(void)
{
	static bool loaded;
	struct protoent *pe;
	size_t cap = 0;

	if (loaded)
		return;
	loaded = true;
	setprotoent(1);
	while ((pe = getprotoent())) {
		for (char **a = NULL; !a || *a; a = a ? a + 1 : pe->p_aliases) {
			const char *name = a ? *a : pe->p_name;
			struct proto_name *n;

			if (proto_nnames == cap) {
				cap = cap ? 2 * cap : 256;
				n = realloc(proto_names, cap * sizeof(*n));
				if (!n)
					goto out;
				proto_names = n;
			}
			n = &proto_names[proto_nnames];
			n->name = strdup(name);
			n->num = (__u16)pe->p_proto;
			if (!n->name)
				goto out;
			proto_nnames++;
			if (!pe->p_aliases)
				break;
		}
	}
out:
	endprotoent();
}

/* getprotobyname(s)->p_proto, or -1 */
static int proto_by_name(const char *s)
{
	proto_names_load();
	for (size_t i = 0; i < proto_nnames; i++)
		if (!strcmp(proto_names[i].name, s))
			return proto_names[i].num;
	return -1;
}

static int parse_protocol(struct cmd_parse *ps, const char *s, int argi, __u16 *proto)
{
	int pnum;

	unsigned long long v;

	if (!ipt_parse_uint(s, 255, &v)) {
		*proto = (__u16)v;
		return 0;
	}
	/* iptables asks the system's names first, then its own table; its own
	 * names are IANA's, which /etc/protocols gives the same numbers, so they
	 * are taken without the system's lookup: the C library's goes through
	 * NSS, which on Debian tries a "db" source first, ~160 failed file
	 * lookups (0.2-0.4 ms of a -C -p tcp of 0.8) */
	for (size_t i = 0; i < sizeof(chain_protos) / sizeof(chain_protos[0]); i++)
		if (!strcmp(s, chain_protos[i].name)) {
			*proto = chain_protos[i].num;
			return 0;
		}
	pnum = proto_by_name(s);
	if (pnum >= 0) {
		*proto = (__u16)pnum;
		return 0;
	}
	ipt_err_param(ps->err, "unknown protocol \"%s\" specified", s);
	return err_at(ps, argi);
}

/* The name iptables uses for a protocol number (proto_to_name): the system's
 * name first (/etc/protocols: 58 is "ipv6-icmp"), then iptables' own table;
 * nolookup (finding the match -p loads) uses iptables' table only. */
const char *ipt_proto_to_name(__u16 proto, bool nolookup)
{
	if (proto && !nolookup) {
		/* getprotobynumber(proto)->p_name: the first entry with that number
		 * (its official name: aliases follow their entry's name) */
		proto_names_load();
		for (size_t i = 0; i < proto_nnames; i++)
			if (proto_names[i].num == proto)
				return proto_names[i].name;
	}
	for (size_t i = 0; i < sizeof(chain_protos) / sizeof(chain_protos[0]); i++)
		if (chain_protos[i].num == proto)
			return chain_protos[i].name;
	return NULL;
}

static int parse_interface(struct cmd_parse *ps, const char *arg, int argi, char *dst)
{
	if (!*arg) {
		ipt_err_param(ps->err, "Empty interface is likely to be undesired");
		return err_at(ps, argi);
	}
	if (strlen(arg) >= IPT_IFNAMSIZ) {
		ipt_err_param(ps->err, "interface name `%s' must be shorter than IFNAMSIZ (%i)", arg,
			      IPT_IFNAMSIZ - 1);
		return err_at(ps, argi);
	}
	if (strchr(arg, '/') || strchr(arg, ' '))
		ipt_warn("Warning: weird character in interface `%s' ('/' and ' ' are not "
			"allowed by the kernel).\n", arg);
	memset(dst, 0, IPT_IFNAMSIZ);
	/* "+" alone matches every name: iptables keeps it (shown by -L -v) with an
	 * all-zero mask (not printed by save); save.c does the same */
	strcpy(dst, arg);
	return 0;
}

static struct cmd_match *load_match(struct cmd_parse *ps, const struct ipt_ext *ext,
				    bool implicit, int argi)
{
	if (ps->nmatches >= IPT_MAX_MATCHES) {
		ipt_err_param(ps->err, "too many matches in one rule (at most %d)", IPT_MAX_MATCHES);
		err_at(ps, argi);
		return NULL;
	}
	struct cmd_match *cm = &ps->matches[ps->nmatches++];

	ipt_rule_add_match(ps->rule, ext);
	cm->idx = ps->rule->nmatches - 1;
	cm->flags = 0;
	cm->implicit = implicit;
	return cm;
}

/* Matches of iptables that bpf-iptables does not implement: a clearer error
 * than "No such file or directory". */
static int command_match(struct cmd_parse *ps, const struct cmd_tok *t)
{
	if (ps->invert) {
		ipt_err_param(ps->err, "unexpected ! flag before --match");
		return err_at(ps, t->argi);
	}
	const char *name = ipt_ext_match_name(t->arg);
	const struct ipt_ext *ext = ipt_ext_find(name, false);

	if (!ext) {
		if (ipt_ext_unsupported(name, false))
			ipt_err_param(ps->err, "Couldn't load match `%s': not supported by bpf-iptables\n",
				      name);
		else
			ipt_err_param(ps->err, "Couldn't load match `%s':No such file or directory\n",
				      name);
		return err_at(ps, t->argi);
	}
	return load_match(ps, ext, false, t->argi) ? 0 : -1;
}

bool ipt_cmd_state_names;

static unsigned int chain_maxlen(void)
{
	return ipt_cmd_state_names ? IPT_CHAIN_NAMESZ - 1 : IPT_CHAIN_MAXLEN;
}

static int parse_target_name(struct cmd_parse *ps, const struct cmd_tok *t)
{
	const char *name = t->arg;

	if (!*name) {
		ipt_err_param(ps->err, "Invalid target name (too short)");
		return err_at(ps, t->argi);
	}
	if (strlen(name) > chain_maxlen()) {
		ipt_err_param(ps->err, "Invalid target name `%s' (%u chars max)", name,
			      IPT_CHAIN_MAXLEN);
		return err_at(ps, t->argi);
	}
	for (const char *p = name; *p; p++)
		if (isspace((unsigned char)*p)) {
			ipt_err_param(ps->err, "Invalid target name `%s'", name);
			return err_at(ps, t->argi);
		}
	set_str(&ps->jumpto, name);
	return 0;
}

static int parse_wait(struct cmd_parse *ps, const char *s, int argi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (end == s || errno || v < INT_MIN || v > INT_MAX) {
		ipt_err_param(ps->err, "wait seconds not numeric");
		return err_at(ps, argi);
	}
	*out = (int)v;
	return 0;
}

int cmd_option(struct cmd_parse *ps, const struct cmd_tok *t, const struct cmd_tok *pos,
	       unsigned int npos)
{
	struct ipt_cmd *cmd = ps->cmd;
	struct ipt_ip *ip = &ps->rule->ip;
	int r = 0;

	switch (t->opt) {
	case 'p': {
		char *lower = xstrdup(t->arg);

		for (char *c = lower; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		set_str(&ps->protocol, lower);
		free(lower);
		r = set_option(ps, t, OPT_PROTOCOL);
		if (!r)
			r = parse_protocol(ps, ps->protocol, t->argi, &ip->proto);
		if (!r && ip->proto == 0 && (ip->invflags & IPT_INV_PROTO)) {
			ipt_err_param(ps->err, "rule would never match protocol");
			r = err_at(ps, t->argi);
		}
		/* ip6tables marks every -p (-p all too): the kernel then finds the
		 * transport header, and -D compares the flag */
		if (!r && ipt_af == AF_INET6)
			ip->flags |= IP6T_F_PROTO;
		/* an extension header is never the transport header ip6tables
		 * finds: it says so (and takes the rule) */
		if (!r && ipt_af == AF_INET6 && !(ip->invflags & IPT_INV_PROTO) &&
		    (ip->proto == 43 || ip->proto == 44 || ip->proto == 51 || ip->proto == 60))
			ipt_warn("Warning: never matched protocol: %s. use extension match "
				 "instead.\n", ps->protocol);
		break;
	}
	case 's':
		r = set_option(ps, t, OPT_SOURCE);
		ps->saddr = t->arg;
		break;
	case 'd':
		r = set_option(ps, t, OPT_DESTINATION);
		ps->daddr = t->arg;
		break;
	case 'i':
		if (!*t->arg) {
			ipt_err_param(ps->err, "Empty interface is likely to be undesired");
			r = err_at(ps, t->argi);
			break;
		}
		r = set_option(ps, t, OPT_VIANAMEIN);
		if (!r)
			r = parse_interface(ps, t->arg, t->argi, ip->iniface);
		break;
	case 'o':
		if (!*t->arg) {
			ipt_err_param(ps->err, "Empty interface is likely to be undesired");
			r = err_at(ps, t->argi);
			break;
		}
		r = set_option(ps, t, OPT_VIANAMEOUT);
		if (!r)
			r = parse_interface(ps, t->arg, t->argi, ip->outiface);
		break;
	case 'f':
		if (ipt_af == AF_INET6) {
			ipt_err_param(ps->err, "`-f' is not supported in IPv6, use -m frag instead");
			r = err_at(ps, t->argi);
			break;
		}
		r = set_option(ps, t, OPT_FRAGMENT);
		ip->flags |= IPT_F_FRAG;
		break;
	case 'j':
		r = set_option(ps, t, OPT_JUMP);
		if (!r)
			r = parse_target_name(ps, t);
		/* the standard verdicts are no extension (a 1M-line deny list asked
		 * both tables for DROP: 6% of its restore) */
		if (!r && strcmp(t->arg, "ACCEPT") && strcmp(t->arg, "DROP") &&
		    strcmp(t->arg, "RETURN")) {
			ps->target = ipt_ext_find(t->arg, true);
			/* iptables would load it (its options follow): say so now, not
			 * "unknown option" at the first of them */
			if (!ps->target && ipt_ext_unsupported(t->arg, true)) {
				ipt_err_param(ps->err, "Couldn't load target `%s': not supported by "
					      "bpf-iptables\n", t->arg);
				r = err_at(ps, t->argi);
			}
			if (ps->target) {
				ps->rule->tkind = IPT_T_EXT;
				ps->rule->target.ext = ps->target;
				ps->rule->target.data = calloc(1, ps->target->size);
				if (!ps->rule->target.data)
					abort();
				if (ps->target->init)
					ps->target->init(ps->rule->target.data);
			}
		}
		break;
	case 'g':
		r = set_option(ps, t, OPT_JUMP);
		ps->goto_set = true;
		if (!r)
			r = parse_target_name(ps, t);
		break;
	case 'm':
		r = command_match(ps, t);
		break;
	case 't':
		if (ps->invert) {
			ipt_err_param(ps->err, "unexpected ! flag before --table");
			r = err_at(ps, t->argi);
		} else if (cmd->restore) {
			ipt_err_param(ps->err, "The -t option cannot be used in %s-restore.",
				      IPT_AF_CMD);
			r = err_at(ps, t->argi);
		}
		set_str(&cmd->table, t->arg);
		break;
	case 'n':
		r = set_option(ps, t, OPT_NUMERIC);
		break;
	case 'v':
		if (!cmd->verbose)
			r = set_option(ps, t, OPT_VERBOSE);
		cmd->verbose++;
		break;
	case 'x':
		r = set_option(ps, t, OPT_EXPANDED);
		break;
	case OPT_LINE_NUMBERS_C:
		r = set_option(ps, t, OPT_LINENUMBERS);
		break;
	case 'w':
	case 'W':
		if (cmd->restore) {
			ipt_err_param(ps->err, "You cannot use `-%c' from iptables-restore", t->opt);
			r = err_at(ps, t->argi);
			break;
		}
		if (t->opt == 'w') {
			cmd->wait_set = true;
			cmd->wait_secs = -1;
			if (t->arg)
				r = parse_wait(ps, t->arg, t->argi, &cmd->wait_secs);
			else if (npos)
				r = parse_wait(ps, pos[0].arg, pos[0].argi, &cmd->wait_secs);
		}
		break;
	case 'c':
		r = set_option(ps, t, OPT_COUNTERS);
		ps->pcnt = t->arg;
		ps->bcnt = NULL;
		if (t->arg[0] && strchr(t->arg + 1, ',')) {
			/* "-c pkts,bytes" (not a comma first; "" is not numeric, below) */
			static char buf[64];

			snprintf(buf, sizeof(buf), "%s", t->arg);
			char *comma = strchr(buf + 1, ',');
			if (comma) {
				*comma = '\0';
				ps->pcnt = buf;
				ps->bcnt = t->arg + (comma - buf) + 1;
			}
		} else if (ps->pos < ps->argc && is_positional(ps->argv[ps->pos])) {
			ps->bcnt = ps->argv[ps->pos++];
		}
		if (!r && !ps->bcnt) {
			ipt_err_param(ps->err, "-%c requires packet and byte counter", 'c');
			r = err_at(ps, t->argi);
		}
		if (!r && sscanf(ps->pcnt, "%llu", (unsigned long long *)&ps->rule->pcnt) != 1) {
			ipt_err_param(ps->err, "-%c packet counter not numeric", 'c');
			r = err_at(ps, t->argi);
		}
		if (!r && sscanf(ps->bcnt, "%llu", (unsigned long long *)&ps->rule->bcnt) != 1) {
			ipt_err_param(ps->err, "-%c byte counter not numeric", 'c');
			r = err_at(ps, t->argi);
		}
		break;
	case 'V':
		cmd->version = true;
		cmd->version_inverted = ps->invert;
		break;
	case 'h':
		cmd->help = true;
		break;
	case 'M':
	case '4':
	case '6':
		/* the other family's option: refused (only "Try ..."), and in a
		 * restore file the line is meant for the other tool: ignored */
		if (t->opt == (ipt_af == AF_INET6 ? '6' : '4'))
			break;
		if (!cmd->restore) {
			ipt_err_set(ps->err, IPT_EXIT_PARAM, IPT_ES_BARE, "%s", "");
			r = err_at(ps, t->argi);
			break;
		}
		/* iptables-restore stops parsing here and does nothing with the line */
		cmd->other_family = true;
		ps->cluster = NULL;
		ps->pos = ps->argc;
		npos = 0;
		break;
	default:
		r = ipt_err_param(ps->err, "internal: unknown option -%c", t->opt);
	}
	if (!r && t->opt != 'w' && npos)
		r = bad_argument(ps, &pos[0]);
	ps->invert = false;
	return r;
}

int cmd_bang(struct cmd_parse *ps, const struct cmd_tok *t)
{
	if (ps->invert) {
		ipt_err_param(ps->err, "multiple consecutive ! not allowed");
		return err_at(ps, t->argi);
	}
	ps->invert = true;
	return 0;
}

/* An extension's option by exact name, or by unique prefix (getopt_long's
 * abbreviations, which iptables inherits: "--dport" is multiport's "--dports"
 * when only multiport is loaded). */
static const struct ipt_ext_opt *ext_opt(const struct ipt_ext *ext, const char *name,
					 size_t len, bool exact)
{
	const struct ipt_ext_opt *hit = NULL;

	for (const struct ipt_ext_opt *p = ext->opts; p && p->name; p++) {
		if (strncmp(p->name, name, len))
			continue;
		if (strlen(p->name) == len)
			return p;
		if (!exact) {
			if (hit)
				return NULL;	/* ambiguous */
			hit = p;
		}
	}
	return exact ? NULL : hit;
}

static int ext_parse(struct cmd_parse *ps, const struct ipt_ext *ext, void *data,
		     unsigned int *flags, const struct ipt_ext_opt *o, const struct cmd_tok *t)
{
	if (o->has_arg && !t->arg) {
		ipt_err_param(ps->err, "option \"%s\" requires an argument", t->name);
		return err_at(ps, t->argi);
	}
	struct ipt_ext_call c = {
		.opt = o,
		.arg = o->has_arg ? t->arg : NULL,
		.arg2 = o->two_args ? t->arg2 : NULL,
		.invert = ps->invert,
		.flags = *flags,
		.ip = &ps->rule->ip,
		.err = ps->err,
	};
	if (ext->parse(data, &c)) {
		if (!ps->err->code)
			ipt_err_param(ps->err, "%s: bad value for option \"--%s\"", ext->name,
				      o->name);
		return err_at(ps, t->argi);
	}
	*flags |= 1u << o->id;
	return 0;
}

/* The protocol's match, loaded on demand when -p names one (iptables' load_proto). */
static const struct ipt_ext *proto_ext(struct cmd_parse *ps)
{
	const char *pname = ps->protocol;
	unsigned long long num;

	if (!pname || ps->proto_used)
		return NULL;
	if (!ipt_parse_uint(pname, 255, &num))
		pname = ipt_proto_to_name((__u16)num, true);
	return pname ? ipt_ext_find(ipt_ext_match_name(pname), false) : NULL;
}

/* An option no core rule claims goes, as in iptables' command_default, to the
 * target or to the most recently loaded match that has it (exact name first, then an
 * abbreviation: getopt_long's rules over the options loaded so far), else to the
 * -p protocol's match loaded on demand. */
int cmd_ext_option(struct cmd_parse *ps, const struct cmd_tok *t)
{
	const struct ipt_ext_opt *o = NULL;
	int r;

	for (int exact = 1; t->lname && exact >= 0 && !o; exact--) {
		if (ps->target && (o = ext_opt(ps->target, t->lname, t->lname_len, exact))) {
			r = ext_parse(ps, ps->target, ps->rule->target.data, &ps->tflags, o, t);
			goto out;
		}
		for (unsigned int i = ps->nmatches; i-- > 0;) {
			struct cmd_match *cm = &ps->matches[i];
			struct ipt_match *m = &ps->rule->matches[cm->idx];

			if ((o = ext_opt(m->ext, t->lname, t->lname_len, exact))) {
				r = ext_parse(ps, m->ext, m->data, &cm->flags, o, t);
				goto out;
			}
		}
	}
	const struct ipt_ext *pe = t->lname ? proto_ext(ps) : NULL;

	if (pe) {
		const struct ipt_ext_opt *po = ext_opt(pe, t->lname, t->lname_len, true);

		if (!po)
			po = ext_opt(pe, t->lname, t->lname_len, false);
		if (po) {
			struct cmd_match *cm = load_match(ps, pe, true, t->argi);

			if (!cm)
				return -1;
			ps->proto_used = true;
			r = ext_parse(ps, pe, ps->rule->matches[cm->idx].data, &cm->flags, po, t);
			goto out;
		}
	}
	ipt_err_param(ps->err, "unknown option \"%s\"", t->name);
	return err_at(ps, t->argi);
out:
	ps->invert = false;
	return r;
}

/* ------------------------------------------------------------ post-parse -- */

/* xtables' dotted-quad parser: 1 to 4 parts, missing trailing parts are 0
 * ("10" is 10.0.0.0); each part 0..255 in C notation (0x.., 0..). */
static int numeric_to_addr(const char *s, bool is_mask, __be32 *out)
{
	unsigned char b[4] = { 0 };
	char buf[20];
	char *p = buf;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (int i = 0; i < 4; i++) {
		char *q = i < 3 ? strchr(p, '.') : NULL;
		unsigned long long v;

		if (q)
			*q = '\0';
		else if (i < 3 && is_mask)
			return -1;
		if (ipt_parse_uint(p, 255, &v))
			return -1;
		b[i] = (unsigned char)v;
		if (!q)
			break;
		p = q + 1;
	}
	memcpy(out, b, 4);
	return 0;
}

/* The addresses of -s or -d. Almost always one: the first few live inline, so
 * that a rule costs no allocation for them. Either family: IPv4 in .v4. */
#define ADDR_INLINE 4
struct addr_list {
	union ipt_addr *addr, *mask;
	unsigned int n, cap;
	union ipt_addr inl_addr[ADDR_INLINE], inl_mask[ADDR_INLINE];
};

static void addr_list_init(struct addr_list *l)
{
	l->addr = l->inl_addr;
	l->mask = l->inl_mask;
	l->n = 0;
	l->cap = ADDR_INLINE;
}

/* Append a & m (canonical: the address masked by its prefix). */
static void addr_push(struct addr_list *l, const union ipt_addr *a, const union ipt_addr *m)
{
	if (l->n == l->cap) {
		l->cap *= 2;
		if (l->addr == l->inl_addr) {
			l->addr = malloc(l->cap * sizeof(*l->addr));
			l->mask = malloc(l->cap * sizeof(*l->mask));
			if (l->addr && l->mask) {
				memcpy(l->addr, l->inl_addr, sizeof(l->inl_addr));
				memcpy(l->mask, l->inl_mask, sizeof(l->inl_mask));
			}
		} else {
			l->addr = realloc(l->addr, l->cap * sizeof(*l->addr));
			l->mask = realloc(l->mask, l->cap * sizeof(*l->mask));
		}
		if (!l->addr || !l->mask)
			abort();
	}
	for (int i = 0; i < 4; i++)
		l->addr[l->n].w[i] = a->w[i] & m->w[i];
	l->mask[l->n] = *m;
	l->n++;
}

static void addr_push4(struct addr_list *l, __be32 a, __be32 m)
{
	union ipt_addr ua = { .v4 = a }, um = { .v4 = m };

	addr_push(l, &ua, &um);
}

static void addr_list_free(struct addr_list *l)
{
	if (l->addr != l->inl_addr) {
		free(l->addr);
		free(l->mask);
	}
	addr_list_init(l);
}

static int parse_one_host(struct cmd_parse *ps, const char *spec, struct addr_list *l)
{
	char buf[256];
	__be32 mask = 0xffffffff, a;
	char *slash;

	/* as xtables: a cut-off spec could mean another address or mask */
	size_t len = strlen(spec);

	if (len >= sizeof(buf))
		return ipt_err_param(ps->err, "Hostname too long");
	memcpy(buf, spec, len + 1);
	slash = strrchr(buf, '/');
	if (slash) {
		const char *m = slash + 1;
		unsigned long long bits;

		*slash = '\0';
		if (strchr(m, '.')) {
			if (numeric_to_addr(m, true, &mask))
				return ipt_err_param(ps->err, "invalid mask `%s' specified", m);
		} else if (ipt_parse_uint(m, 32, &bits)) {
			return ipt_err_param(ps->err, "invalid mask `%s' specified", m);
		} else {
			mask = bits ? htonl(0xffffffffu << (32 - bits)) : 0;
		}
	}
	if (!numeric_to_addr(buf, false, &a)) {
		addr_push4(l, a, mask);
		return 0;
	}
	/* a host name: every IPv4 address it has, as xtables' host_to_ipaddr */
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_RAW,
				  .ai_flags = AI_CANONNAME };
	struct addrinfo *res = NULL;

	if (*buf && !ipt_getaddrinfo(buf, &hints, &res) && res) {
		unsigned int first = l->n;

		for (struct addrinfo *p = res; p; p = p->ai_next) {
			__be32 v = ((struct sockaddr_in *)p->ai_addr)->sin_addr.s_addr;
			bool dup = false;

			for (unsigned int i = first; i < l->n; i++)
				if (l->addr[i].v4 == (v & mask))
					dup = true;
			if (!dup)
				addr_push4(l, v, mask);
		}
		freeaddrinfo(res);
		return 0;
	}
	return ipt_err_param(ps->err, "host/network `%s' not found", buf);
}

/* One element of an IPv6 -s/-d, as xtables_ip6parse_multiple takes it: leading
 * blanks skipped; "/N" (0..128, C notation) or "/MASK" in address form; a zero
 * mask ignores the name ("any/0" is ::/0); the address numeric (inet_pton), else
 * every AAAA address of a host name. */
static int parse_one_host6(struct cmd_parse *ps, const char *spec, struct addr_list *l)
{
	union ipt_addr a, mask;
	char buf[256];
	char *slash;

	while (isspace((unsigned char)*spec))
		spec++;
	size_t len = strlen(spec);

	if (len >= sizeof(buf))
		return ipt_err_param(ps->err, "Hostname too long");
	memcpy(buf, spec, len + 1);
	memset(&mask, 0xff, sizeof(mask));
	slash = strrchr(buf, '/');
	if (slash) {
		const char *m = slash + 1;
		unsigned long long bits;

		*slash = '\0';
		if (inet_pton(AF_INET6, m, mask.b) != 1) {
			if (ipt_strtoul(m, NULL, 0, 128, &bits))
				return ipt_err_param(ps->err, "invalid mask `%s' specified", m);
			ipt_mask6_from_cidr((unsigned int)bits, &mask);
		}
	}
	if (ipt_addr6_zero(&mask))
		strcpy(buf, "::");
	if (inet_pton(AF_INET6, buf, a.b) == 1) {
		addr_push(l, &a, &mask);
		return 0;
	}
	struct addrinfo hints = { .ai_family = AF_INET6, .ai_socktype = SOCK_RAW,
				  .ai_flags = AI_CANONNAME };
	struct addrinfo *res = NULL;

	if (*buf && !ipt_getaddrinfo(buf, &hints, &res) && res) {
		unsigned int first = l->n;

		for (struct addrinfo *p = res; p; p = p->ai_next) {
			union ipt_addr v, vm;
			bool dup = false;

			memcpy(v.b, &((struct sockaddr_in6 *)p->ai_addr)->sin6_addr, 16);
			for (int i = 0; i < 4; i++)
				vm.w[i] = v.w[i] & mask.w[i];
			for (unsigned int i = first; i < l->n; i++)
				if (!memcmp(&l->addr[i], &vm, sizeof(vm)))
					dup = true;
			if (!dup)
				addr_push(l, &v, &mask);
		}
		freeaddrinfo(res);
		return 0;
	}
	return ipt_err_param(ps->err, "host/network `%s' not found", buf);
}

static int parse_hosts(struct cmd_parse *ps, const char *spec, struct addr_list *l)
{
	/* the common case, one element: nothing to split */
	int (*one)(struct cmd_parse *, const char *, struct addr_list *) =
		ipt_af == AF_INET6 ? parse_one_host6 : parse_one_host;

	if (*spec && !strchr(spec, ','))
		return one(ps, spec, l);

	char *copy = xstrdup(spec);
	int r = 0;

	/* xtables_ipparse_multiple: comma-separated, each with its own mask; an empty
	 * element ("-d ,1.2.3.4") is a host that is not found */
	for (char *p = copy;;) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p) {
			r = ipt_err_param(ps->err, "host/network `' not found");
			break;
		}
		if ((r = one(ps, p, l)))
			break;
		if (!comma)
			break;
		p = comma + 1;
	}
	free(copy);
	return r;
}

/* iptables' commands_v_options: x = illegal with that command. */
static const char commands_v_options[CMD_MAX_BIT][OPT_MAX_BIT] = {
	/*              -n  -s  -d  -p  -j  -v  -x  -i  -o --line -c -f */
	/*INSERT*/     {'x',' ',' ',' ',' ',' ','x',' ',' ','x',' ',' '},
	/*DELETE*/     {'x',' ',' ',' ',' ',' ','x',' ',' ','x','x',' '},
	/*DELETE_NUM*/ {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*REPLACE*/    {'x',' ',' ',' ',' ',' ','x',' ',' ','x',' ',' '},
	/*APPEND*/     {'x',' ',' ',' ',' ',' ','x',' ',' ','x',' ',' '},
	/*LIST*/       {' ','x','x','x','x',' ',' ','x','x',' ','x','x'},
	/*FLUSH*/      {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*ZERO*/       {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*NEW_CHAIN*/  {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*DEL_CHAIN*/  {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*SET_POLICY*/ {'x','x','x','x','x',' ','x','x','x','x',' ','x'},
	/*RENAME*/     {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*LIST_RULES*/ {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*ZERO_NUM*/   {'x','x','x','x','x',' ','x','x','x','x','x','x'},
	/*CHECK*/      {'x',' ',' ',' ',' ',' ','x',' ',' ','x','x',' '},
};

static int generic_opt_check(struct cmd_parse *ps)
{
	unsigned int command = ps->cmd->command, options = ps->cmd->options;

	for (int i = 0; i < OPT_MAX_BIT; i++) {
		int legal = 0;

		if (!(options & (1u << i)))
			continue;
		for (int j = 0; j < CMD_MAX_BIT; j++) {
			if (!(command & (1u << j)))
				continue;
			if (commands_v_options[j][i] != 'x')
				legal = 1;
			else if (legal == 0)
				legal = -1;
		}
		if (legal == -1) {
			const char *lname = (1u << i) == OPT_LINENUMBERS ? "-line-numbers" : NULL;

			if (lname)
				return ipt_err_param(ps->err, "Illegal option `-%s' with this command",
						     lname);
			return ipt_err_param(ps->err, "Illegal option `-%c' with this command",
					     opt2char(1u << i));
		}
	}
	return 0;
}

static int finish_target(struct cmd_parse *ps)
{
	struct ipt_rule *r = ps->rule;

	if (!ps->jumpto)
		return 0;
	if (ps->goto_set) {
		r->tkind = IPT_T_GOTO;
		snprintf(r->chain, sizeof(r->chain), "%s", ps->jumpto);
		return 0;
	}
	if (ps->target)
		return 0;	/* IPT_T_EXT, set when -j was seen */
	enum ipt_verdict v;

	if (!ipt_verdict_parse(ps->jumpto, &v)) {
		r->tkind = IPT_T_VERDICT;
		r->verdict = v;
		return 0;
	}
	/* a chain, or a target we do not have: decided against the table */
	r->tkind = IPT_T_JUMP;
	snprintf(r->chain, sizeof(r->chain), "%s", ps->jumpto);
	return 0;
}

/* Run an extension check; a kernel-side refusal is kept for later (cmd.h). */
static int ext_check(struct cmd_parse *ps, int r)
{
	if (!r || ps->err->code != IPT_EXIT_OTHER)
		return r;
	if (!ps->cmd->deferred.code)
		ps->cmd->deferred = *ps->err;
	ipt_err_clear(ps->err);
	return 0;
}

static int cmd_finish(struct cmd_parse *ps)
{
	struct ipt_cmd *cmd = ps->cmd;
	struct ipt_rule *rule = ps->rule;

	/* extension final checks, matches first, then the target */
	for (unsigned int i = 0; i < ps->nmatches; i++) {
		struct cmd_match *cm = &ps->matches[i];
		struct ipt_match *m = &rule->matches[cm->idx];

		if (m->ext->check) {
			struct ipt_ext_final f = { .flags = cm->flags, .ip = &rule->ip,
						   .err = ps->err };
			if (ext_check(ps, m->ext->check(m->data, &f)))
				return -1;
		}
	}
	if (ps->target && ps->target->check) {
		struct ipt_ext_final f = { .flags = ps->tflags, .ip = &rule->ip, .err = ps->err,
					   .matches = rule->matches, .nmatches = rule->nmatches };

		if (ext_check(ps, ps->target->check(rule->target.data, &f)))
			return -1;
	}
	if (!cmd->command && !cmd->help && !cmd->version)
		return ipt_err_param(ps->err, "no command specified");
	if (ps->invert)
		return ipt_err_param(ps->err, "nothing appropriate following !");

	bool rule_cmd = cmd->command & (CMD_REPLACE | CMD_INSERT | CMD_DELETE | CMD_APPEND |
					CMD_CHECK);
	struct addr_list s, d;
	int r = 0;

	addr_list_init(&s);
	addr_list_init(&d);

	const char *any = ipt_af == AF_INET6 ? "::/0" : "0.0.0.0/0";

	if (ps->saddr || rule_cmd)
		r = parse_hosts(ps, ps->saddr ? ps->saddr : any, &s);
	if (!r && (ps->daddr || rule_cmd))
		r = parse_hosts(ps, ps->daddr ? ps->daddr : any, &d);
	if (!r && (s.n > 1 || d.n > 1) && (rule->ip.invflags & (IPT_INV_SRCIP | IPT_INV_DSTIP)))
		r = ipt_err_param(ps->err,
				  "! not allowed with multiple source or destination IP addresses");
	if (!r && cmd->command == CMD_REPLACE && (s.n != 1 || d.n != 1))
		r = ipt_err_param(ps->err, "Replacement rule does not specify a unique address");
	if (!r)
		r = generic_opt_check(ps);
	if (!r && cmd->chain && strlen(cmd->chain) > chain_maxlen())
		r = ipt_err_param(ps->err, "chain name `%s' too long (must be under %u chars)",
				  cmd->chain, IPT_CHAIN_MAXLEN + 1);
	if (!r && rule_cmd) {
		const char *c = cmd->chain;

		if ((!strcmp(c, "INPUT") || !strcmp(c, "PREROUTING")) &&
		    (cmd->options & OPT_VIANAMEOUT))
			r = ipt_err_param(ps->err, "Can't use -%c with %s\n", 'o', c);
		else if ((!strcmp(c, "OUTPUT") || !strcmp(c, "POSTROUTING")) &&
			 (cmd->options & OPT_VIANAMEIN))
			r = ipt_err_param(ps->err, "Can't use -%c with %s\n", 'i', c);
	}
	if (!r && cmd->table && strcmp(cmd->table, "filter"))
		r = ipt_err_set(ps->err, IPT_EXIT_VERSION, IPT_ES_XT,
				"can't initialize %s table `%s': not supported by "
				"bpf-iptables (only the filter table is)", IPT_AF_IPT, cmd->table);
	if (!r)
		r = finish_target(ps);
	cmd->policy_pcnt = rule->pcnt;
	cmd->policy_bcnt = rule->bcnt;
	if (!r && rule_cmd) {
		/* one rule per (source, destination) pair, source-major as iptables */
		cmd->rules = calloc((size_t)s.n * d.n, sizeof(*cmd->rules));
		if (!cmd->rules)
			abort();
		for (unsigned int i = 0; i < s.n; i++)
			for (unsigned int j = 0; j < d.n; j++) {
				/* the last pair takes the parsed rule itself, the others
				 * a copy: one rule, the usual case, is not copied */
				bool last = i == s.n - 1 && j == d.n - 1;
				struct ipt_rule *n = last ? rule : ipt_rule_dup(rule);

				n->ip.src = s.addr[i];
				n->ip.smsk = s.mask[i];
				n->ip.dst = d.addr[j];
				n->ip.dmsk = d.mask[j];
				cmd->rules[cmd->nrules++] = n;
				if (last)
					ps->rule = NULL;
			}
	}
	addr_list_free(&s);
	addr_list_free(&d);
	return r;
}

int ipt_cmd_parse(int argc, char **argv, bool restore, struct ipt_cmd *cmd,
		  struct ipt_err *err)
{
	struct cmd_parse ps = {
		.argc = argc,
		.argv = argv,
		.cmd = cmd,
		.err = err,
	};
	int r;

	/* deferred is last and cleared as a string: not its 1 KiB (once per rule) */
	memset(cmd, 0, offsetof(struct ipt_cmd, deferred));
	ipt_err_clear(&cmd->deferred);
	cmd->restore = restore;
	cmd->err_argi = -1;
	ipt_err_clear(err);
	ps.rule = ipt_rule_new();
	r = cmdgram_parse(&ps);
	if (!r && !err->code)
		r = cmd->other_family ? 0 : cmd_finish(&ps);
	else
		r = -1;
	if (!err->code && r)
		ipt_err_param(err, "syntax error");
	cmd->err_argi = err->argi;
	ipt_rule_free(&ps.rule);
	free(ps.protocol);
	free(ps.jumpto);
	return r ? -1 : 0;
}

void ipt_cmd_free(struct ipt_cmd *cmd)
{
	for (unsigned int i = 0; i < cmd->nrules; i++)
		ipt_rule_free(&cmd->rules[i]);
	free(cmd->rules);
	free(cmd->chain);
	free(cmd->newname);
	free(cmd->policy);
	free(cmd->table);
	memset(cmd, 0, offsetof(struct ipt_cmd, deferred));
	memset(&cmd->deferred, 0, offsetof(struct ipt_err, msg) + 1);
}
