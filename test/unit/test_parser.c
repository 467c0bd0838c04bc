// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line scanner and grammar, the post-parse validation, the model
 * operations and the save/restore round trip: exact texts and exit codes as
 * iptables-legacy 1.8.9 gives them (each expectation was read off the oracle).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmdword.h"
#include "ext.h"
#include "ops.h"
#include "restore.h"
#include "save.h"

/* Split a command line at spaces (no quoting needed in these tests). */
static int split(const char *line, char *buf, size_t n, char **argv)
{
	int argc = 0;

	snprintf(buf, n, "%s", line);
	for (char *p = strtok(buf, " "); p; p = strtok(NULL, " "))
		argv[argc++] = p;
	return argc;
}

/* Parse, apply to a copy of t as the CLI does, keep the copy on success, and
 * return the exit code (0 on success). */
static int run(struct ipt_table *t, const char *line, struct ipt_err *err)
{
	char buf[2048], *argv[128];
	int argc = split(line, buf, sizeof(buf), argv);
	struct ipt_table *work = NULL;
	struct ipt_cmd cmd;
	int rc = 0;

	if (ipt_cmd_parse(argc, argv, false, &cmd, err)) {
		rc = err->code;
		goto out;
	}
	ipt_table_copy(t, &work);
	/* as the CLI: no whole-table check after a command that keeps it valid */
	bool validate = !ipt_cmd_keeps_valid(&cmd);

	if (ipt_table_apply(work, &cmd, err) || (validate && ipt_table_validate(work, err))) {
		rc = err->code;
		goto out;
	}
	/* swap the contents: the caller's pointer stays valid */
	struct ipt_table tmp = *t;

	*t = *work;
	*work = tmp;
out:
	ipt_table_free(&work);
	ipt_cmd_free(&cmd);
	return rc;
}

static char *list_rules(const struct ipt_table *t)
{
	struct strbuf sb = STRBUF_INIT;

	ipt_save_list_rules(&sb, t, NULL, 0, false);
	return sb.buf ? sb.buf : strdup("");
}

static const char *rules_header = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n";

/* Each accepted command and the -S line it leaves. */
static const struct { const char *cmd, *saved; } ok_cases[] = {
	{ "-A INPUT -s 10.11.12.13/8 -j DROP", "-A INPUT -s 10.0.0.0/8 -j DROP" },
	{ "-A INPUT -s 10.11.12.13/255.0.255.0", "-A INPUT -s 10.0.12.0/255.0.255.0" },
	{ "-A INPUT ! -d 1.2.3.4 -p 6 --dport 22:23", "-A INPUT ! -d 1.2.3.4/32 -p tcp -m tcp --dport 22:23" },
	{ "-A INPUT -ptcp -s1.2.3.4 -jACCEPT", "-A INPUT -s 1.2.3.4/32 -p tcp -j ACCEPT" },
	{ "-A FORWARD --protocol=udp --in-interface=eth+ --jump=DROP", "-A FORWARD -i eth+ -p udp -j DROP" },
	{ "-A INPUT -i + -p tcp", "-A INPUT -p tcp" },
	{ "-A OUTPUT ! -f ! -p udp -o eth0", "-A OUTPUT -o eth0 ! -p udp ! -f" },
	{ "-A INPUT -s 10 -d 10.1", "-A INPUT -s 10.0.0.0/32 -d 10.1.0.0/32" },
	{ "--append INPUT --src 1.2.3.4 --dst 5.6.7.8", "-A INPUT -s 1.2.3.4/32 -d 5.6.7.8/32" },
	/* getopt abbreviation: --dport is multiport's --dports when udp is not loaded */
	{ "-A INPUT -p udp -m multiport --dport 5,6", "-A INPUT -p udp -m multiport --dports 5,6" },
	/* abbreviations that take arguments (iptables-legacy 1.8.9's -S, checked by hand) */
	{ "-A INPUT -p tcp --dp 22 -j ACCEPT", "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT" },
	{ "-A INPUT -p tcp --dp=80", "-A INPUT -p tcp -m tcp --dport 80" },
	{ "-A INPUT -p tcp --tcp-f SYN,ACK SYN", "-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN" },
	{ "-A INPUT -p tcp -m multiport --dp 1,2", "-A INPUT -p tcp -m multiport --dports 1,2" },
	{ "-A INPUT -m comment --comm x", "-A INPUT -m comment --comment x" },
	{ "-A INPUT -j LOG --log-p pfx --log-l 6", "-A INPUT -j LOG --log-prefix pfx --log-level 6" },
	{ "-A INPUT -p 47", "-A INPUT -p gre" },
	{ "-A INPUT -j LOG --log-prefix x", "-A INPUT -j LOG --log-prefix x" },
	/* one rule per pair, source-major; the last pair is the parsed rule itself,
	 * the others copies; more addresses than the inline ones of the list */
	{ "-A INPUT -s 1.1.1.1,2.2.2.2 -d 3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7 -p tcp --dport 80 -j DROP",
	  "-A INPUT -s 1.1.1.1/32 -d 3.3.3.3/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 1.1.1.1/32 -d 4.4.4.4/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 1.1.1.1/32 -d 5.5.5.5/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 1.1.1.1/32 -d 6.6.6.6/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 1.1.1.1/32 -d 7.7.7.7/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 2.2.2.2/32 -d 3.3.3.3/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 2.2.2.2/32 -d 4.4.4.4/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 2.2.2.2/32 -d 5.5.5.5/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 2.2.2.2/32 -d 6.6.6.6/32 -p tcp -m tcp --dport 80 -j DROP\n"
	  "-A INPUT -s 2.2.2.2/32 -d 7.7.7.7/32 -p tcp -m tcp --dport 80 -j DROP" },
	{ "-A INPUT -d 0010.0x10.255.0/255.255.0.0", "-A INPUT -d 8.16.0.0/16" },
};

START_TEST(accepted_and_saved)
{
	struct ipt_table *t;
	struct ipt_err err;
	char want[2048];

	ipt_table_new(&t);
	ck_assert_int_eq(run(t, ok_cases[_i].cmd, &err), 0);
	snprintf(want, sizeof(want), "%s%s\n", rules_header, ok_cases[_i].saved);
	char *got = list_rules(t);
	ck_assert_str_eq(got, want);
	free(got);
	ipt_table_free(&t);
}
END_TEST

/* Each rejected command: its exit code, style and message. */
static const struct { const char *cmd; int code; const char *msg; } bad_cases[] = {
	{ "-A INPUT --dport 1", 2, "unknown option \"--dport\"" },
	/* ambiguous abbreviations (--limit, --limit-burst): iptables says unknown */
	{ "-A INPUT -m limit --lim 3/s", 2, "unknown option \"--lim\"" },
	{ "-A INPUT -p tcp --dp", 2, "option \"--dp\" requires an argument" },
	/* targets iptables has and bpf-iptables not: named at -j, before their options */
	{ "-A INPUT -j MARK --set-mark 1", 2, "Couldn't load target `MARK': not supported by bpf-iptables\n" },
	{ "-N CONNMARK", 2, "chain name may not clash with target name" },
	{ "-A INPUT -p tcp --dport 70000", 2, "invalid port/service `70000' specified" },
	{ "-A INPUT -s 1.2.3.400", 2, "host/network `1.2.3.400' not found" },
	{ "-A INPUT stray", 2, "Bad argument `stray'" },
	{ "-A INPUT ! ! -s 1.2.3.4", 2, "multiple consecutive ! not allowed" },
	{ "-A INPUT -p tcp -p udp", 2, "multiple -p flags not allowed" },
	{ "-A INPUT -p foo", 2, "unknown protocol \"foo\" specified" },
	{ "-A INPUT -i abcdefghijklmnopq", 2, "interface name `abcdefghijklmnopq' must be shorter than IFNAMSIZ (15)" },
	{ "-A", 2, "option \"-A\" requires an argument" },
	{ "-A INPUT -A OUTPUT", 2, "Cannot use -A with -A" },
	{ "", 2, "no command specified" },
	{ "-A INPUT -n -j ACCEPT", 2, "Illegal option `-n' with this command" },
	{ "-F INPUT -s 1.2.3.4", 2, "Illegal option `-s' with this command" },
	{ "-N aaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, "chain name `aaaaaaaaaaaaaaaaaaaaaaaaaaaaa' too long (must be under 29 chars)" },
	{ "-N -foo", 2, "chain name not allowed to start with `-'" },
	{ "-N LOG", 2, "chain name may not clash with target name" },
	{ "-D INPUT 0", 2, "Invalid rule number `0'" },
	{ "-A INPUT -o eth0", 2, "Can't use -o with INPUT\n" },
	{ "-A INPUT !", 2, "nothing appropriate following !" },
	{ "-t nat -L", 3, NULL },
	{ "-A FOO -j ACCEPT", 1, "No chain/target/match by that name." },
	{ "-A INPUT -j FOO", 2, "Couldn't load target `FOO':No such file or directory\n" },
	{ "-A INPUT -g FOO", 2, "goto 'FOO' is not a chain" },
	{ "-D INPUT -s 1.1.1.1", 1, "Bad rule (does a matching rule exist in that chain?)." },
	{ "-D INPUT 5", 1, "Index of deletion too big." },
	/* by rule spec in a missing chain: libiptc looks for the rule first */
	{ "-D nochain -j RETURN", 1, "Bad rule (does a matching rule exist in that chain?)." },
	{ "-C nochain -j DROP", 1, "Bad rule (does a matching rule exist in that chain?)." },
	{ "-D nochain 1", 1, "No chain/target/match by that name." },
	{ "-I INPUT 5 -j ACCEPT", 1, "Index of insertion too big." },
	{ "-R INPUT 3 -j ACCEPT", 1, "Index of replacement too big." },
	{ "-P FOO DROP", 1, "Bad built-in chain name." },
	{ "-P INPUT RETURN", 1, "Bad policy name." },
	{ "-N INPUT", 1, "Chain already exists." },
	{ "-E INPUT x", 1, "No chain/target/match by that name." },
	{ "-X NOPE", 1, "No chain/target/match by that name." },
};

START_TEST(rejected_unchanged)
{
	struct ipt_table *t;
	struct ipt_err err;

	ipt_table_new(&t);
	char *before = list_rules(t);
	ck_assert_int_eq(run(t, bad_cases[_i].cmd, &err), bad_cases[_i].code);
	if (bad_cases[_i].msg)
		ck_assert_str_eq(err.msg, bad_cases[_i].msg);
	ipt_table_free(&t);
	free(before);
}
END_TEST

/* bpf-ip6tables (ipt_af = AF_INET6): each accepted command and its -S lines, as
 * ip6tables-legacy 1.8.9 prints them. */
static const struct { const char *cmd, *saved; } ok6_cases[] = {
	{ "-A INPUT -s 2001:db8::1/64 -d ::1 -j ACCEPT",
	  "-A INPUT -s 2001:db8::/64 -d ::1/128 -j ACCEPT" },
	{ "-A INPUT -s 2001:DB8::A/127", "-A INPUT -s 2001:db8::a/127" },
	{ "-A INPUT -s 2001:db8::/ffff:ffff::", "-A INPUT -s 2001:db8::/32" },
	{ "-A INPUT -s 2001:db8::/ffff:0:ffff::", "-A INPUT -s 2001::/ffff:0:ffff::" },
	{ "-A INPUT -s ::1/0x40", "-A INPUT -s ::/64" },
	{ "-A INPUT -s ::ffff:1.2.3.4", "-A INPUT -s ::ffff:1.2.3.4/128" },
	{ "-A INPUT ! -s ::/0", "-A INPUT ! -s ::/0" },
	{ "-A INPUT -s ::/0 -d ::/0", "-A INPUT" },
	/* a zero mask ignores the name, as xtables_ip6parse_multiple */
	{ "-A INPUT -s no.such.host.invalid/0", "-A INPUT" },
	{ "-A INPUT -s ::1,::2 -d ::3,::4",
	  "-A INPUT -s ::1/128 -d ::3/128\n-A INPUT -s ::1/128 -d ::4/128\n"
	  "-A INPUT -s ::2/128 -d ::3/128\n-A INPUT -s ::2/128 -d ::4/128" },
	{ "-A INPUT -p icmpv6", "-A INPUT -p ipv6-icmp" },
	{ "-A INPUT -p 58 --icmpv6-type ping", "-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128" },
	{ "-A INPUT -p ipv6-icmp -m icmpv6 ! --icmpv6-type 1/3",
	  "-A INPUT -p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3" },
	{ "-A INPUT -p ipv6-icmp --icmpv6-type 255/0:255",
	  "-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 255" },
	{ "-A INPUT -p all", "-A INPUT" },
	{ "-A INPUT -p 44", "-A INPUT -p ipv6-frag" },
	{ "-A INPUT -j REJECT", "-A INPUT -j REJECT --reject-with icmp6-port-unreachable" },
	{ "-A INPUT -j REJECT --reject-with p", "-A INPUT -j REJECT --reject-with icmp6-port-unreachable" },
	{ "-A INPUT -j REJECT --reject-with addr-unreach",
	  "-A INPUT -j REJECT --reject-with icmp6-addr-unreachable" },
	{ "-A INPUT -p tcp -j REJECT --reject-with tcp-reset",
	  "-A INPUT -p tcp -j REJECT --reject-with tcp-reset" },
	{ "-A INPUT -m iprange ! --dst-range ::1", "-A INPUT -m iprange ! --dst-range ::1-::1" },
	{ "-A INPUT -m conntrack ! --ctorigdst ::1/ffff:: --ctrepldst ::/128",
	  "-A INPUT -m conntrack ! --ctorigdst ::1/16 --ctrepldst ::" },
	{ "-A INPUT -m recent --set --mask ffff::",
	  "-A INPUT -m recent --set --name DEFAULT --mask ffff:: --rsource" },
};

START_TEST(accepted_and_saved6)
{
	struct ipt_table *t;
	struct ipt_err err;
	char want[2048];

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	ck_assert_int_eq(t->family, AF_INET6);
	ck_assert_int_eq(run(t, ok6_cases[_i].cmd, &err), 0);
	snprintf(want, sizeof(want), "%s%s\n", rules_header, ok6_cases[_i].saved);
	char *got = list_rules(t);
	ck_assert_str_eq(got, want);
	free(got);
	ipt_table_free(&t);
	ipt_af = AF_INET;
}
END_TEST

static const struct { const char *cmd; int code; const char *msg; } bad6_cases[] = {
	{ "-A INPUT -f", 2, "`-f' is not supported in IPv6, use -m frag instead" },
	{ "-A INPUT -s 1.2.3.4", 2, "host/network `1.2.3.4' not found" },
	{ "-A INPUT -s ::1/129", 2, "invalid mask `129' specified" },
	{ "-A INPUT -d ::1/", 2, "invalid mask `' specified" },
	{ "-A INPUT ! -s ::1,::2", 2, "! not allowed with multiple source or destination IP addresses" },
	{ "-A INPUT ! -p all", 2, "rule would never match protocol" },
	{ "-A INPUT -m icmp --icmp-type 8", 2, "Couldn't load match `icmp':No such file or directory\n" },
	{ "-A INPUT -m ttl", 2, "Couldn't load match `ttl':No such file or directory\n" },
	{ "-A INPUT -m frag", 2, "Couldn't load match `frag': not supported by bpf-iptables\n" },
	{ "-A INPUT -j TTL", 2, "Couldn't load target `TTL':No such file or directory\n" },
	{ "-A INPUT -p ipv6-icmp --icmpv6-type 256", 2, "Unknown ICMPv6 type `256'" },
	{ "-A INPUT -p ipv6-icmp --icmpv6-type n", 2,
	  "Ambiguous ICMPv6 type `n': `no-route' or `neighbour-solicitation'?" },
	{ "-A INPUT -p ipv6-icmp --icmpv6-type 1:2", 2, "ICMPv6 type range not supported" },
	{ "-A INPUT -m icmp6 --icmpv6-type 1", 1, "Invalid argument: icmp6 match: only valid for protocol 58" },
	{ "-A INPUT -j REJECT --reject-with icmp-net-unreachable", 2,
	  "unknown reject type \"icmp-net-unreachable\"" },
	{ "-A INPUT -j REJECT --reject-with tcp-reset", 1,
	  "Invalid argument: --reject-with tcp-reset needs -p tcp" },
	{ "-A INPUT -m iprange --src-range 1.2.3.4", 2,
	  "iprange: Bad value for \"--src-range\" option: \"1.2.3.4\"" },
	{ "-A INPUT -m conntrack --ctorigsrc ::1/129", 2,
	  "conntrack: bad value for option \"--ctorigsrc\", neither a valid network mask nor valid CIDR (0-128).\n" },
};

START_TEST(rejected6)
{
	struct ipt_table *t;
	struct ipt_err err;

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	ck_assert_int_eq(run(t, bad6_cases[_i].cmd, &err), bad6_cases[_i].code);
	ck_assert_str_eq(err.msg, bad6_cases[_i].msg);
	ipt_table_free(&t);
	ipt_af = AF_INET;
}
END_TEST

/* ip6tables sets IP6T_F_PROTO for every -p: a rule without -p and one with
 * -p all are different rules for -D and -C. */
START_TEST(delete6_proto_flag)
{
	struct ipt_table *t;
	struct ipt_err err;

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	ck_assert_int_eq(run(t, "-A INPUT -j ACCEPT", &err), 0);
	ck_assert_int_eq(run(t, "-D INPUT -p all -j ACCEPT", &err), 1);
	ck_assert_int_eq(run(t, "-C INPUT -p 0 -j ACCEPT", &err), 1);
	ck_assert_int_eq(run(t, "-A INPUT -p all -j ACCEPT", &err), 0);
	ck_assert_int_eq(run(t, "-D INPUT -j ACCEPT", &err), 0);
	ck_assert_int_eq(run(t, "-D INPUT -p 0 -j ACCEPT", &err), 0);
	ck_assert_uint_eq(t->chains[0]->nrules, 0);
	ipt_table_free(&t);
	ipt_af = AF_INET;
}
END_TEST

START_TEST(caret_location)
{
	char buf[256], *argv[16];
	int argc = split("-A INPUT -p tcp --dprt 22", buf, sizeof(buf), argv);
	struct ipt_cmd cmd;
	struct ipt_err err;

	ck_assert_int_ne(ipt_cmd_parse(argc, argv, false, &cmd, &err), 0);
	ck_assert_int_eq(err.argi, 4);	/* the word "--dprt" */
	ipt_cmd_free(&cmd);
}
END_TEST

START_TEST(chains_and_references)
{
	struct ipt_table *t;
	struct ipt_err err;

	ipt_table_new(&t);
	ck_assert_int_eq(run(t, "-N b", &err), 0);
	ck_assert_int_eq(run(t, "-N a", &err), 0);
	ck_assert_int_eq(run(t, "-A a -j b", &err), 0);
	/* a loop not reachable from a builtin chain is allowed, as in the kernel */
	ck_assert_int_eq(run(t, "-A b -j a", &err), 0);
	ck_assert_int_eq(run(t, "-A INPUT -j a", &err), 1);
	ck_assert_str_eq(err.msg, "Too many levels of symbolic links.");
	ck_assert_int_eq(run(t, "-X b", &err), 1);
	ck_assert_str_eq(err.msg, "Too many links.");
	ck_assert_int_eq(run(t, "-E a c", &err), 0);
	char *got = list_rules(t);
	ck_assert_str_eq(got, "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n-N b\n-N c\n"
			      "-A b -j c\n-A c -j b\n");
	free(got);
	ipt_table_free(&t);
}
END_TEST

/* The commands after which the CLI skips the whole-table check: -A and -I of
 * rules that neither jump nor use an extension limited to some hooks. */
static const struct { const char *line; bool keeps; } keeps_valid[] = {
	{ "-A INPUT -s 10.0.0.0/8 -p tcp --dport 22 -j ACCEPT", true },
	{ "-I OUTPUT 3 -d 192.0.2.1,192.0.2.2 -j DROP", true },
	{ "-A FORWARD -m conntrack --ctstate INVALID -j LOG", true },
	{ "-A INPUT -p tcp -j REJECT --reject-with tcp-reset", true },
	{ "-A INPUT", true },
	{ "-A INPUT -j a", false },
	{ "-I INPUT -g a", false },
	{ "-A OUTPUT -m mac --mac-source 00:11:22:33:44:55 -j DROP", false },
	{ "-A INPUT -m addrtype --dst-type LOCAL -j ACCEPT", false },
	{ "-A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu", false },
	{ "-R INPUT 1 -j DROP", false },
	{ "-D INPUT -j DROP", false },
	{ "-D INPUT 1", false },
	{ "-F INPUT", false },
	{ "-P INPUT DROP", false },
};

START_TEST(cmd_keeps_valid)
{
	char buf[512], *argv[32];
	int argc = split(keeps_valid[_i].line, buf, sizeof(buf), argv);
	struct ipt_cmd cmd;
	struct ipt_err err;

	ck_assert_msg(ipt_cmd_parse(argc, argv, false, &cmd, &err) == 0, "%s: %s",
		      keeps_valid[_i].line, err.msg);
	ck_assert_msg(ipt_cmd_keeps_valid(&cmd) == keeps_valid[_i].keeps, "%s",
		      keeps_valid[_i].line);
	ipt_cmd_free(&cmd);
}
END_TEST

START_TEST(insert_reverses_lists_and_delete_by_spec)
{
	struct ipt_table *t;
	struct ipt_err err;

	ipt_table_new(&t);
	ck_assert_int_eq(run(t, "-A INPUT -j ACCEPT", &err), 0);
	ck_assert_int_eq(run(t, "-I INPUT -s 1.1.1.1,2.2.2.2 -j DROP", &err), 0);
	char *got = list_rules(t);
	ck_assert_str_eq(got, "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
			      "-A INPUT -s 2.2.2.2/32 -j DROP\n-A INPUT -s 1.1.1.1/32 -j DROP\n"
			      "-A INPUT -j ACCEPT\n");
	free(got);
	ck_assert_int_eq(run(t, "-D INPUT -s 1.1.1.1,2.2.2.2 -j DROP", &err), 0);
	ck_assert_int_eq(run(t, "-C INPUT -j ACCEPT", &err), 0);
	ck_assert_int_eq(run(t, "-D INPUT 1", &err), 0);
	got = list_rules(t);
	ck_assert_str_eq(got, rules_header);
	free(got);
	ipt_table_free(&t);
}
END_TEST

static const char *restore_text =
	"# a comment\n"
	"*filter\n"
	":INPUT DROP [3:4]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	":web - [0:0]\n"
	"[5:600] -A INPUT -p tcp -m tcp --dport 80 -j web\n"
	"-A web -m comment --comment \"it's \\\"quoted\\\"\" -j ACCEPT\n"
	"COMMIT\n";

START_TEST(restore_save_roundtrip)
{
	struct ipt_table *t;
	struct ipt_err err;
	struct ipt_restore_opts o = { .counters = true, .prog = "test" };
	unsigned int line;
	struct strbuf sb = STRBUF_INIT;

	ipt_table_new(&t);
	ck_assert_int_eq(ipt_restore(restore_text, strlen(restore_text), &t, &o, &err, &line), 0);
	ipt_save_table(&sb, t, true);
	ck_assert_str_eq(sb_str(&sb),
		"*filter\n:INPUT DROP [3:4]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":web - [0:0]\n[5:600] -A INPUT -p tcp -m tcp --dport 80 -j web\n"
		"[0:0] -A web -m comment --comment \"it\\'s \\\"quoted\\\"\" -j ACCEPT\nCOMMIT\n");
	/* the saved text restores to the same bytes */
	struct ipt_table *t2;
	struct strbuf sb2 = STRBUF_INIT;

	ipt_table_new(&t2);
	ck_assert_int_eq(ipt_restore_state(sb.buf, sb.len, &t2, &err), 0);
	ipt_save_table(&sb2, t2, true);
	ck_assert_str_eq(sb_str(&sb2), sb_str(&sb));
	sb_free(&sb);
	sb_free(&sb2);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* A failing restore reports the line and leaves the table as it was. */
static const struct { const char *text; unsigned int line; int code; const char *msg; } bad_restores[] = {
	{ "*filter\n-A NOPE -j ACCEPT\nCOMMIT\n", 2, 1, "line 2 failed\nNo chain/target/match by that name." },
	{ "*filter\n-A INPUT --bogus\nCOMMIT\n", 2, 2, "unknown option \"--bogus\"" },
	{ "*filter\n-A INPUT -j ACCEPT\n", 3, 1, "COMMIT expected at line 3" },
	{ "*nat\nCOMMIT\n", 1, 2, NULL },
	{ "*filter\n:foo - [0:0]\n:foo - [0:0]\nCOMMIT\n", 3, 2, "error creating chain 'foo':File exists" },
	{ "*filter\n-A INPUT -t filter -j ACCEPT\nCOMMIT\n", 2, 2, NULL },
	{ "garbage\n", 1, 1, "line 1 failed" },
	{ "*filter\n:a - [0:0]\n-A INPUT -j a\n-A a -j INPUT\nCOMMIT\n", 5, 1, NULL },
	/* a table committed, then a failure: none of it stays */
	{ "*filter\n-A INPUT -j DROP\nCOMMIT\n*filter\n-A NOPE -j ACCEPT\nCOMMIT\n", 5, 1,
	  "line 5 failed\nNo chain/target/match by that name." },
};

START_TEST(restore_failures)
{
	struct ipt_table *t;
	struct ipt_err err;
	struct ipt_restore_opts o = { .prog = "test" };
	unsigned int line;
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;

	ipt_table_new(&t);
	ck_assert_int_eq(run(t, "-A INPUT -j ACCEPT", &err), 0);
	ipt_save_table(&before, t, true);
	ck_assert_int_ne(ipt_restore(bad_restores[_i].text, strlen(bad_restores[_i].text), &t, &o,
				     &err, &line), 0);
	ck_assert_int_eq(err.code, bad_restores[_i].code);
	ck_assert_uint_eq(line, bad_restores[_i].line);
	if (bad_restores[_i].msg)
		ck_assert_str_eq(err.msg, bad_restores[_i].msg);
	ipt_save_table(&after, t, true);
	ck_assert_str_eq(sb_str(&after), sb_str(&before));
	sb_free(&before);
	sb_free(&after);
	ipt_table_free(&t);
}
END_TEST

/* A restore without a table leaves the caller's table as it is, the same
 * object; each COMMIT replaces what the one before committed. */
START_TEST(restore_commits)
{
	struct ipt_table *t, *t0;
	struct ipt_err err;
	struct ipt_restore_opts o = { .prog = "test" };
	unsigned int line;
	struct strbuf sb = STRBUF_INIT;

	ipt_table_new(&t);
	ck_assert_int_eq(run(t, "-A INPUT -j ACCEPT", &err), 0);
	t0 = t;
	ck_assert_int_eq(ipt_restore("# nothing\n", strlen("# nothing\n"), &t, &o, &err, &line), 0);
	ck_assert_ptr_eq(t, t0);
	ipt_save_table(&sb, t, false);
	ck_assert_ptr_nonnull(strstr(sb_str(&sb), "-A INPUT -j ACCEPT\n"));
	sb_free(&sb);
	const char *two = "*filter\n-A INPUT -j DROP\nCOMMIT\n*filter\n-A OUTPUT -j DROP\nCOMMIT\n";

	ck_assert_int_eq(ipt_restore(two, strlen(two), &t, &o, &err, &line), 0);
	ipt_save_table(&sb, t, false);
	ck_assert_ptr_null(strstr(sb_str(&sb), "-A INPUT"));
	ck_assert_ptr_nonnull(strstr(sb_str(&sb), "-A OUTPUT -j DROP\n"));
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

/* ipt_parse_uint reads plain decimal itself: the same answers as strtoull
 * (base 0, no sign) on the cases around its fast path. */
static int parse_uint_strtoull(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);

	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

START_TEST(parse_uint_like_strtoull)
{
	static const char *const cases[] = {
		"0", "00", "1", "9", "10", "255", "256", "007", "08", "0x1f", "0X", "1a", "1 ",
		" 1", "+1", "-1", "", "65535", "65536", "4294967295", "4294967296",
		"999999999999999999", "1000000000000000000", "18446744073709551615",
		"18446744073709551616", "99999999999999999999", "1.2", "12345678901234567890",
	};
	static const unsigned long long maxes[] = { 0, 1, 32, 255, 65535, 0xffffffffull,
						    ~0ull };

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (unsigned int j = 0; j < sizeof(maxes) / sizeof(maxes[0]); j++) {
			unsigned long long a = 12345, b = 12345;
			int ra = ipt_parse_uint(cases[i], maxes[j], &a);
			int rb = parse_uint_strtoull(cases[i], maxes[j], &b);

			ck_assert_msg(ra == rb && a == b, "\"%s\" max %llu: %d %llu, strtoull %d %llu",
				      cases[i], maxes[j], ra, a, rb, b);
		}
	/* random digit strings, a few with another character */
	srand(7);
	for (int k = 0; k < 20000; k++) {
		char buf[24];
		int n = 1 + rand() % 22;

		for (int i = 0; i < n; i++)
			buf[i] = (char)('0' + rand() % 10);
		if (rand() % 8 == 0)
			buf[rand() % n] = "x. a-+"[rand() % 6];
		buf[n] = '\0';
		unsigned long long a = 1, b = 1, max = rand() % 2 ? ~0ull : (unsigned long long)rand();
		int ra = ipt_parse_uint(buf, max, &a);
		int rb = parse_uint_strtoull(buf, max, &b);

		ck_assert_msg(ra == rb && a == b, "\"%s\": %d %llu, strtoull %d %llu", buf, ra, a,
			      rb, b);
	}
}
END_TEST

/* What the flex scanner that classified words before (rules in cmd.c) returned
 * for each of these words; a 2M-word random differential over "-=!\\na" agreed
 * with cmd_word_class too when it was replaced. */
static const struct { const char *w; enum cmd_word kind; } word_classes[] = {
	{ "", W_EMPTY },
	{ "!", W_BANG },
	{ "!!", W_WORD },
	{ "-", W_WORD },
	{ "--", W_DASHDASH },
	{ "---", W_LONG },
	{ "--=", W_WORD },
	{ "--a", W_LONG },
	{ "--a=", W_LONG_EQ },
	{ "--a=b", W_LONG_EQ },
	{ "--=b", W_WORD },
	{ "--a=b=c", W_LONG_EQ },
	{ "--a\n", W_LONG },
	{ "--a=b\n", W_WORD },
	{ "--a=\nb", W_WORD },
	{ "--a\n=b", W_LONG_EQ },
	{ "--\n", W_LONG },
	{ "--\n=x", W_LONG_EQ },
	{ "-s", W_SHORT },
	{ "-s\n", W_WORD },
	{ "-\n", W_SHORT },
	{ "-\nx", W_SHORT },
	{ "-sx\ny", W_WORD },
	{ "-s\nx", W_WORD },
	{ "-!", W_SHORT },
	{ "-=", W_SHORT },
	{ "x", W_WORD },
	{ "x\n", W_WORD },
	{ "\n", W_WORD },
	{ "a-b", W_WORD },
	{ "--dport", W_LONG },
	{ "--dport=22", W_LONG_EQ },
	{ "--to-ports=1-2", W_LONG_EQ },
	{ "-nvL", W_SHORT },
	{ "-j", W_SHORT },
	{ "ACCEPT", W_WORD },
	{ "!x", W_WORD },
	{ "-p", W_SHORT },
	{ "--=", W_WORD },
	{ "--==", W_WORD },
	{ "--a==", W_LONG_EQ },
	{ "-s=1", W_SHORT },
	{ " -s", W_WORD },
	{ "--\t", W_LONG },
	{ "-\t", W_SHORT },
	{ "\t", W_WORD },
};

START_TEST(word_class_like_the_scanner)
{
	for (unsigned int i = 0; i < sizeof(word_classes) / sizeof(word_classes[0]); i++)
		ck_assert_msg(cmd_word_class(word_classes[i].w) == word_classes[i].kind,
			      "word %u: %d, want %d", i, cmd_word_class(word_classes[i].w),
			      word_classes[i].kind);
}
END_TEST

/* Bytes above 0x7f in a restore file (a UTF-8 comment): the scanner is 8-bit.
 * A 7-bit flex scanner (what %option fast gives by default) looped on them. */
START_TEST(restore_8bit)
{
	static const char text[] = "*filter\n-A INPUT -m comment --comment \"\xc3\x9cn\xc3\xaf" "code \xff\x80\" -j DROP\nCOMMIT\n";
	struct ipt_restore_opts o = { .prog = "test" };
	struct strbuf sb = STRBUF_INIT;
	struct ipt_table *t;
	struct ipt_err err;
	unsigned int line;

	ipt_table_new(&t);
	ck_assert_int_eq(ipt_restore(text, strlen(text), &t, &o, &err, &line), 0);
	ipt_save_list_rules(&sb, t, "INPUT", 0, false);
	ck_assert_str_eq(sb_str(&sb), "-P INPUT ACCEPT\n-A INPUT -m comment --comment \"\xc3\x9cn\xc3\xaf" "code \xff\x80\" -j DROP\n");
	sb_free(&sb);
	ipt_table_free(&t);
}
END_TEST

static Suite *parser_suite(void)
{
	Suite *s = suite_create("parser");
	TCase *tc = tcase_create("commands");

	tcase_add_loop_test(tc, accepted_and_saved, 0, sizeof(ok_cases) / sizeof(ok_cases[0]));
	tcase_add_loop_test(tc, rejected_unchanged, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, caret_location);
	tcase_add_test(tc, chains_and_references);
	tcase_add_loop_test(tc, cmd_keeps_valid, 0, sizeof(keeps_valid) / sizeof(keeps_valid[0]));
	tcase_add_test(tc, insert_reverses_lists_and_delete_by_spec);
	tcase_add_test(tc, parse_uint_like_strtoull);
	tcase_add_test(tc, word_class_like_the_scanner);
	suite_add_tcase(s, tc);
	tc = tcase_create("ipv6");
	tcase_add_loop_test(tc, accepted_and_saved6, 0, sizeof(ok6_cases) / sizeof(ok6_cases[0]));
	tcase_add_loop_test(tc, rejected6, 0, sizeof(bad6_cases) / sizeof(bad6_cases[0]));
	tcase_add_test(tc, delete6_proto_flag);
	suite_add_tcase(s, tc);
	tc = tcase_create("restore");
	tcase_add_test(tc, restore_save_roundtrip);
	tcase_add_test(tc, restore_8bit);
	tcase_add_loop_test(tc, restore_failures, 0, sizeof(bad_restores) / sizeof(bad_restores[0]));
	tcase_add_test(tc, restore_commits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(parser_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);

	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
