// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-conntrack: conntrack-tools' `conntrack` for the eBPF connection table of
 * this network namespace (conntrack/ct_table.h), plus -T for its settings
 * (conntrack/ct.h) and --sweep.
 *
 * Options, messages and exit codes are conntrack 1.4.7's where it has them
 * (measured on the real tool): -C and -F take no filter; --sport/--dport/... need
 * -p with ports and --state needs -p tcp; -D prints the entries it deleted and
 * exits 1 when it deleted none (scripts test for "0 flow entries have been
 * deleted"); summaries go to stderr as "bpf-conntrack v0.1.0: N flow entries have
 * been shown." Every error names the token it is about; exit 2 for a bad
 * parameter, 1 when the operation failed.
 *
 * Without a data plane in the namespace (or with BPF_IPTABLES_DATAPLANE=off) the
 * table is empty: -L shows 0 entries, -C prints 0, -F and -D delete nothing; -T
 * still stores the settings, which the next instance is created with.
 */
#include "cli.h"
#include "ct_table.h"
#include "loader.h"
#include "state.h"
#include "strbuf.h"
#include "sync.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <bpf/bpf.h>

#define CT_PROG		"bpf-conntrack"
#define CT_LOCK_WAIT	30	/* seconds -T waits for the state lock */

enum ct_command {
	CTC_NONE,
	CTC_LIST,
	CTC_COUNT,
	CTC_FLUSH,
	CTC_DELETE,
	CTC_TUNABLES,
	CTC_SWEEP,
	CTC_HELP,
	CTC_VERSION,
	CTC_MAX,
};

/* Long-only options. */
enum {
	OPT_SWEEP = 256,
	OPT_SPORT,
	OPT_DPORT,
	OPT_REPLY_SPORT,
	OPT_REPLY_DPORT,
	OPT_STATE,
};

struct ct_cmdline {
	enum ct_command cmd;
	char cmd_tok[32];		/* the command as given ("-L", "--dump") */
	struct ct_filter f;
	char filter_tok[32];		/* the first filter option, "" when none */
	char port_tok[32];		/* the first port option, "" when none */
	char family_tok[32];		/* -f as given, "" when none */
	char **settings;		/* -T name=value tokens */
	int nsettings;
};

static int report(const struct ipt_err *err)
{
	const char *p = err->msg;

	/* one "prog vX: text" line per line of the message */
	while (*p) {
		size_t n = strcspn(p, "\n");

		fprintf(stderr, "%s v%s: %.*s\n", CT_PROG, BPFIPT_VERSION, (int)n, p);
		p += n + (p[n] == '\n');
	}
	if (err->code == IPT_EXIT_PARAM) {
		fprintf(stderr, "Try `%s -h' or '%s --help' for more information.\n", CT_PROG,
			CT_PROG);
		return IPT_EXIT_PARAM;
	}
	return IPT_EXIT_OTHER;
}

/* conntrack's closing line on stderr, after what went to stdout */
static void summary(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void summary(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s v%s: ", CT_PROG, BPFIPT_VERSION);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void print_help(void)
{
	printf(
"%s v%s: the connection table of bpf-iptables' eBPF data plane, with\n"
"conntrack-tools' commands and output (conntrack 1.4.7).\n"
"Usage: %s [commands] [options]\n"
"\n"
"Commands:\n"
"  -L, --dump [conntrack] [filter]\tList the connections\n"
"  -C, --count\t\t\t\tShow the number of connections\n"
"  -F, --flush\t\t\t\tDelete every connection\n"
"  -D, --delete [filter]\t\t\tDelete the connections the filter matches\n"
"  -T, --tunables [name=value ...]\tShow or set the timeouts and table size\n"
"  --sweep\t\t\t\tDelete the expired entries now\n"
"  -h, --help\t\t\t\tThis help\n"
"  -V, --version\t\t\t\tThe version\n"
"\n"
"Filter (-L and -D; every option given must hold):\n"
"  -s, --src, --orig-src ip[/len]\tSource address from original direction\n"
"  -d, --dst, --orig-dst ip[/len]\tDestination address from original direction\n"
"  -r, --reply-src ip[/len]\t\tSource address from reply direction\n"
"  -q, --reply-dst ip[/len]\t\tDestination address from reply direction\n"
"  -p, --protonum, --proto proto\t\tLayer 4 protocol, eg. 'tcp' or 6\n"
"  -f, --family proto\t\t\tLayer 3 protocol, eg. 'ipv6' (default: both)\n"
"  --sport, --orig-port-src port\t\tSource port from original direction\n"
"  --dport, --orig-port-dst port\t\tDestination port from original direction\n"
"  --reply-port-src port\t\t\tSource port from reply direction\n"
"  --reply-port-dst port\t\t\tDestination port from reply direction\n"
"\t(the ports need -p tcp, udp, udplite, sctp or dccp)\n"
"  --state state\t\t\t\tTCP state (with -p tcp), eg. ESTABLISHED\n"
"\n"
"Settings (-T): without arguments, every setting as \"name value\"; with\n"
"name=value arguments, set them: the timeouts in seconds under the kernel's\n"
"names (net.netfilter.nf_conntrack_<name>: tcp_timeout_established,\n"
"udp_timeout, icmp_timeout, ...), max=N the number of entries (1 to %u).\n"
"They are kept in the namespace's state directory (conntrack.conf); the\n"
"timeouts apply to the running data plane at once, max when the data plane is\n"
"created next (bpf-iptables --unload, then any bpf-iptables command).\n"
"\n"
"Entries past their timeout are never listed or counted; the data plane reuses\n"
"their slots (LRU), and --sweep deletes them.\n"
"State: $BPF_IPTABLES_STATE_DIR, else /run/bpf-iptables/netns-<cookie>.\n",
	       CT_PROG, BPFIPT_VERSION, CT_PROG, CT_MAX_LIMIT);
}

/* ------------------------------------------------------------ parsing ---- */

/* conntrack's set_family(): the first family given (-f, or an address's) holds;
 * another one is an error. */
static int set_family(struct ct_filter *f, __u8 family, const char *tok, struct ipt_err *err)
{
	if ((f->set & CT_F_FAMILY) && f->family != family)
		return ipt_err_param(err, "mismatched address family `%s'", tok);
	f->family = family;
	f->set |= CT_F_FAMILY;
	return 0;
}

/* An IPv4 or IPv6 address, /prefix length optional; its family becomes the
 * filter's (conntrack: an address of the other family than -f is an error). */
static int parse_addr(const char *s, enum ct_field fld, struct ct_filter *f,
		      struct ipt_err *err)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	unsigned long len, max;
	__u8 family;
	struct in_addr a;
	struct in6_addr a6;
	char *end;

	if (strlen(s) >= sizeof(buf))
		return ipt_err_param(err, "Invalid IP address `%s'", s);
	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - s) : (int)strlen(s), s);
	memset(f->addr[fld], 0, sizeof(f->addr[fld]));
	if (inet_aton(buf, &a)) {
		family = 4;
		max = 32;
		f->addr[fld][0] = a.s_addr;
	} else if (inet_pton(AF_INET6, buf, &a6) == 1) {
		family = 6;
		max = 128;
		memcpy(f->addr[fld], &a6, sizeof(a6));
	} else {
		return ipt_err_param(err, "Invalid IP address `%s'", s);
	}
	len = max;
	if (slash) {
		len = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || len > max)
			return ipt_err_param(err, "Invalid netmask `%s'", s);
	}
	if (set_family(f, family, s, err))
		return -1;
	for (int w = 0; w < 4; w++) {
		unsigned long bits = len > 32ul * w ? len - 32ul * w : 0;

		f->mask[fld][w] = bits >= 32 ? 0xffffffffu : bits ? htonl(0xffffffffu << (32 - bits)) : 0;
		f->addr[fld][w] &= f->mask[fld][w];
	}
	f->set |= CT_F_ADDR0 << fld;
	return 0;
}

/* -f: conntrack compares the first letters only ("ipv6x" is ipv6). */
static int parse_family(const char *s, struct ct_filter *f, struct ipt_err *err)
{
	if (!strncmp(s, "ipv4", 4))
		return set_family(f, 4, s, err);
	if (!strncmp(s, "ipv6", 4))
		return set_family(f, 6, s, err);
	return ipt_err_param(err, "`%s' unsupported protocol", s);
}

static int parse_port(const char *s, const char *opt, __u16 *port, struct ipt_err *err)
{
	unsigned long v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9' && v <= 65535; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (!*s || *p || v > 65535)
		return ipt_err_param(err, "invalid port `%s' for `%s': 0 to 65535", s, opt);
	*port = (__u16)v;
	return 0;
}

/* conntrack's -p: a number 0-255 or a protocol name (its own, then /etc/protocols). */
static int parse_proto(const char *s, __u8 *proto, struct ipt_err *err)
{
	static const char *const names[] = { "tcp", "udp", "udplite", "icmp", "icmpv6",
					     "sctp", "gre", "dccp" };
	static const __u8 nums[] = { 6, 17, 136, 1, 58, 132, 47, 33 };
	struct protoent *pe;
	unsigned long v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9' && v <= 255; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (*s && !*p && v <= 255) {
		*proto = (__u8)v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(nums); i++)
		if (!strcasecmp(s, names[i])) {
			*proto = nums[i];
			return 0;
		}
	pe = *s && (*p || v > 255) ? getprotobyname(s) : NULL;
	if (pe && pe->p_proto >= 0 && pe->p_proto <= 255) {
		*proto = (__u8)pe->p_proto;
		return 0;
	}
	return ipt_err_param(err, "`%s' unsupported protocol", s);
}

static int parse_state(const char *s, __u8 *state, struct ipt_err *err)
{
	for (unsigned int i = 0; i < BPFIPT_TCP_MAX; i++)
		if (!strcmp(s, ct_tcp_state_name(i))) {
			*state = (__u8)i;
			return 0;
		}
	/* conntrack-tools' old name of the state after SYN_SENT2's slot */
	if (!strcmp(s, "LISTEN")) {
		*state = BPFIPT_TCP_SYN_SENT2;
		return 0;
	}
	return ipt_err_param(err, "unknown TCP state `%s'", s);
}

static int set_command(struct ct_cmdline *c, enum ct_command cmd, const char *tok,
		       struct ipt_err *err)
{
	if (c->cmd != CTC_NONE)
		return ipt_err_param(err, "Invalid commands combination: `%s' with `%s'", tok,
				     c->cmd_tok);
	c->cmd = cmd;
	snprintf(c->cmd_tok, sizeof(c->cmd_tok), "%s", tok);
	return 0;
}

static const struct option long_opts[] = {
	{ "dump", optional_argument, NULL, 'L' },
	{ "count", optional_argument, NULL, 'C' },
	{ "flush", optional_argument, NULL, 'F' },
	{ "delete", optional_argument, NULL, 'D' },
	{ "tunables", no_argument, NULL, 'T' },
	{ "sweep", no_argument, NULL, OPT_SWEEP },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "orig-src", required_argument, NULL, 's' },
	{ "src", required_argument, NULL, 's' },
	{ "orig-dst", required_argument, NULL, 'd' },
	{ "dst", required_argument, NULL, 'd' },
	{ "reply-src", required_argument, NULL, 'r' },
	{ "reply-dst", required_argument, NULL, 'q' },
	{ "protonum", required_argument, NULL, 'p' },
	{ "proto", required_argument, NULL, 'p' },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "orig-port-src", required_argument, NULL, OPT_SPORT },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "orig-port-dst", required_argument, NULL, OPT_DPORT },
	{ "reply-port-src", required_argument, NULL, OPT_REPLY_SPORT },
	{ "reply-port-dst", required_argument, NULL, OPT_REPLY_DPORT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "family", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

/* An option word as typed, without its "=value" ("--sport=5" -> "--sport"). */
static void word_token(const char *w, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(w, "="), w);
}

static int parse_cmdline(int argc, char **argv, struct ct_cmdline *c, struct ipt_err *err)
{
	static const enum ct_field port_field[] = {
		[OPT_SPORT - OPT_SPORT] = CT_ORIG_SRC,
		[OPT_DPORT - OPT_SPORT] = CT_ORIG_DST,
		[OPT_REPLY_SPORT - OPT_SPORT] = CT_REPL_SRC,
		[OPT_REPLY_DPORT - OPT_SPORT] = CT_REPL_DST,
	};
	static const enum ct_command cmds[] = {
		['L'] = CTC_LIST, ['C'] = CTC_COUNT, ['F'] = CTC_FLUSH, ['D'] = CTC_DELETE,
		['T'] = CTC_TUNABLES, ['h'] = CTC_HELP, ['V'] = CTC_VERSION,
	};
	char tok[32];
	int o, li;

	memset(c, 0, sizeof(*c));
	c->settings = calloc((size_t)argc + 1, sizeof(*c->settings));
	if (!c->settings)
		abort();
	opterr = 0;
	optind = 1;
	for (;;) {
		li = -1;
		o = getopt_long(argc, argv, ":L::C::F::D::ThVs:d:r:q:p:f:", long_opts, &li);
		if (o == -1)
			break;
		/* the option's name: its long name, or the letter (getopt reorders argv
		 * and keeps no index of the word, so name it rather than point at it) */
		if (o == '?' && optopt)
			snprintf(tok, sizeof(tok), "-%c", optopt);
		else if (o == '?' || o == ':')
			word_token(argv[optind - 1], tok, sizeof(tok));
		else if (li >= 0)
			snprintf(tok, sizeof(tok), "--%s", long_opts[li].name);
		else
			snprintf(tok, sizeof(tok), "-%c", o);
		switch (o) {
		case 'L':
		case 'C':
		case 'F':
		case 'D':
			if (set_command(c, cmds[o], tok, err))
				return -1;
			if (optarg && strcmp(optarg, "conntrack"))
				return ipt_err_param(err, "unknown type `%s'", optarg);
			break;
		case 'T':
		case 'h':
		case 'V':
			if (set_command(c, cmds[o], tok, err))
				return -1;
			break;
		case OPT_SWEEP:
			if (set_command(c, CTC_SWEEP, tok, err))
				return -1;
			break;
		case 's':
		case 'd':
		case 'r':
		case 'q': {
			enum ct_field fld = o == 's' ? CT_ORIG_SRC : o == 'd' ? CT_ORIG_DST :
					    o == 'r' ? CT_REPL_SRC : CT_REPL_DST;

			if (parse_addr(optarg, fld, &c->f, err))
				return -1;
			break;
		}
		case 'f':
			if (parse_family(optarg, &c->f, err))
				return -1;
			if (!c->family_tok[0])
				snprintf(c->family_tok, sizeof(c->family_tok), "%s", tok);
			break;
		case 'p':
			if (parse_proto(optarg, &c->f.proto, err))
				return -1;
			c->f.set |= CT_F_PROTO;
			break;
		case OPT_SPORT:
		case OPT_DPORT:
		case OPT_REPLY_SPORT:
		case OPT_REPLY_DPORT: {
			enum ct_field fld = port_field[o - OPT_SPORT];

			if (parse_port(optarg, tok, &c->f.port[fld], err))
				return -1;
			c->f.set |= CT_F_PORT0 << fld;
			if (!c->port_tok[0])
				snprintf(c->port_tok, sizeof(c->port_tok), "%s", tok);
			break;
		}
		case OPT_STATE:
			if (parse_state(optarg, &c->f.tcp_state, err))
				return -1;
			c->f.set |= CT_F_STATE;
			break;
		case ':':
			return ipt_err_param(err, "option `%s' requires an argument", tok);
		case '?':
		default:
			return ipt_err_param(err, "unknown option `%s'", tok);
		}
		if ((o < 256 && strchr("sdrqp", o)) || (o > OPT_SWEEP && o <= OPT_STATE))
			if (!c->filter_tok[0])
				snprintf(c->filter_tok, sizeof(c->filter_tok), "%s", tok);
	}
	/* the words left: -L/-C/-F/-D's table (conntrack), -T's settings */
	for (int i = optind; i < argc; i++) {
		bool table = c->cmd == CTC_LIST || c->cmd == CTC_COUNT || c->cmd == CTC_FLUSH ||
			     c->cmd == CTC_DELETE;

		if (c->cmd == CTC_TUNABLES)
			c->settings[c->nsettings++] = argv[i];
		else if (table && strcmp(argv[i], "conntrack"))
			return ipt_err_param(err, "unknown type `%s'", argv[i]);
		else if (!table)
			return ipt_err_param(err, "unexpected argument `%s'", argv[i]);
	}
	/* what goes with what (conntrack's table of commands and options); -f also
	 * goes with -F, which empties the whole table all the same (conntrack
	 * 1.4.7 on Linux 6.18 does, measured) */
	if (c->filter_tok[0] && c->cmd != CTC_LIST && c->cmd != CTC_DELETE)
		return ipt_err_param(err, "Illegal option `%s' with this command", c->filter_tok);
	if (c->family_tok[0] && c->cmd != CTC_LIST && c->cmd != CTC_DELETE &&
	    c->cmd != CTC_FLUSH)
		return ipt_err_param(err, "Illegal option `%s' with this command", c->family_tok);
	if (c->port_tok[0] && (!(c->f.set & CT_F_PROTO) || !ct_proto_has_ports(c->f.proto)))
		return ipt_err_param(err, "option `%s' needs -p tcp, udp, udplite, sctp or dccp",
				     c->port_tok);
	if ((c->f.set & CT_F_STATE) && (!(c->f.set & CT_F_PROTO) || c->f.proto != IPPROTO_TCP))
		return ipt_err_param(err, "option `--state' needs -p tcp");
	return 0;
}

/* ------------------------------------------------------------ commands ---- */

/* The running instance's connection tables (IPv4's, IPv6's); *in = NULL (and
 * every fd -1) when no data plane runs here or BPF_IPTABLES_DATAPLANE=off; a
 * table's fd -1 alone while no ruleset of its family here has tracked
 * connections (no table: nothing to show). */
static int open_table(struct dp_inst **in, int ct_fd[BPFIPT_NFAMILIES], int *conf_fd,
		      struct ipt_err *err)
{
	int r;

	*in = NULL;
	ct_fd[0] = ct_fd[1] = *conf_fd = -1;
	if (!cp_dataplane_enabled())
		return 0;
	if (dp_inst_open(in, err))
		return -1;
	if (*in && (r = dp_inst_ct_fds(*in, ct_fd, conf_fd))) {
		dp_inst_free(in);
		ct_fd[0] = ct_fd[1] = *conf_fd = -1;
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
				   "cannot open the running data plane's connection table: %s",
				   strerror(-r));
	}
	return 0;
}

static int table_err(struct ipt_err *err, int r, const char *what)
{
	return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN, "cannot %s the connection table: %s",
			   what, r == -EPROTO ? "it comes from another version of bpf-iptables" :
			   strerror(-r));
}

static int do_table(const struct ct_cmdline *c, struct ipt_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct dp_inst *in;
	int ct_fd[BPFIPT_NFAMILIES], conf_fd, r = 0;
	__u64 now = ct_now();
	size_t n = 0;

	if (open_table(&in, ct_fd, &conf_fd, err))
		return -1;
	switch (c->cmd) {
	case CTC_LIST:
		if ((r = ct_list(ct_fd, &c->f, now, &sb, &n)))
			r = table_err(err, r, "read");
		sb_write(&sb, stdout);
		if (!r)
			summary("%zu flow entries have been shown.", n);
		break;
	case CTC_COUNT:
		if ((r = ct_count(ct_fd, now, &n)))
			r = table_err(err, r, "read");
		else
			printf("%zu\n", n);
		break;
	case CTC_FLUSH:
		if ((r = ct_flush(ct_fd, &n)))
			r = table_err(err, r, "flush");
		else
			summary("connection tracking table has been emptied.");
		break;
	case CTC_DELETE:
		if ((r = ct_delete(ct_fd, &c->f, now, &sb, &n)))
			r = table_err(err, r, "delete from");
		sb_write(&sb, stdout);
		summary("%zu flow entries have been deleted.", n);
		/* conntrack: deleting nothing is a failure (exit 1), without a message */
		if (!r && !n)
			r = 1;
		break;
	case CTC_SWEEP:
		if ((r = ct_sweep(ct_fd, now, &n)))
			r = table_err(err, r, "sweep");
		else
			summary("%zu expired entries have been deleted.", n);
		break;
	default:
		break;
	}
	sb_free(&sb);
	dp_inst_free(&in);
	return r;
}

/* -T name=value ...: check every token, then store under the lock and write the
 * timeouts into the running data plane. */
static int do_tunables(const struct ct_cmdline *c, struct ipt_err *err)
{
	struct ipt_state st = { .lock_fd = -1 };
	struct strbuf sb = STRBUF_INIT;
	struct ct_settings s, scratch;
	struct bpfipt_ct_conf conf;
	struct dp_inst *in = NULL;
	int ct_fd[BPFIPT_NFAMILIES], conf_fd, r = -1;
	__u32 zero = 0;

	/* a bad token changes nothing: check them all before any I/O */
	ct_settings_default(&scratch);
	for (int i = 0; i < c->nsettings; i++)
		if (ct_settings_parse(&scratch, c->settings[i], err))
			return -1;
	if (ipt_state_open(&st, err))
		goto out;
	if (!c->nsettings) {
		if (ct_settings_load(st.dir, &s, err))
			goto out;
		ct_settings_format(&sb, &s);
		sb_write(&sb, stdout);
		r = 0;
		goto out;
	}
	if (ipt_state_lock(&st, true, CT_LOCK_WAIT, err) || ct_settings_load(st.dir, &s, err))
		goto out;
	for (int i = 0; i < c->nsettings; i++)
		if (ct_settings_parse(&s, c->settings[i], err))
			goto out;
	if (ct_settings_store(st.dir, &s, err))
		goto out;
	/* the running data plane takes the timeouts at once (under the lock: a
	 * bpf-iptables command creating the instance meanwhile reads the file) */
	if (open_table(&in, ct_fd, &conf_fd, err))
		goto stored;
	if (in) {
		ct_conf_from_settings(&s, &conf);
		if (bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY)) {
			ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_PLAIN,
				    "cannot write the timeouts into the running data plane: %s",
				    strerror(errno));
			goto stored;
		}
		for (int f = 0; f < BPFIPT_NFAMILIES; f++) {
			struct bpf_map_info mi = {};
			__u32 len = sizeof(mi);

			if (ct_fd[f] >= 0 && !bpf_obj_get_info_by_fd(ct_fd[f], &mi, &len) &&
			    mi.max_entries != s.max)
				fprintf(stderr, "%s v%s: max %u is stored; the running %s table "
					"keeps its %u entries until the data plane is created "
					"again (bpf-iptables --unload, then any bpf-iptables "
					"command)\n", CT_PROG, BPFIPT_VERSION, s.max,
					f ? "IPv6" : "IPv4", mi.max_entries);
		}
	}
	r = 0;
	goto out;
stored:
	/* keep the first message, say what did happen */
	snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
		 "\nthe settings are stored in %s/conntrack.conf", st.dir);
out:
	dp_inst_free(&in);
	ipt_state_close(&st);
	sb_free(&sb);
	return r;
}

int ct_cli_conntrack(int argc, char **argv)
{
	struct ct_cmdline c;
	struct ipt_err err;
	int r = 0;

	ipt_err_clear(&err);
	if (parse_cmdline(argc, argv, &c, &err)) {
		r = report(&err);
		goto out;
	}
	switch (c.cmd) {
	case CTC_NONE:
	case CTC_HELP:
		print_help();
		break;
	case CTC_VERSION:
		printf("%s v%s\n", CT_PROG, BPFIPT_VERSION);
		break;
	case CTC_TUNABLES:
		if (do_tunables(&c, &err))
			r = report(&err);
		break;
	default:
		r = do_table(&c, &err);
		if (r < 0)
			r = report(&err);
		break;
	}
out:
	free(c.settings);
	return r;
}
