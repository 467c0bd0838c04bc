// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the protocol matches: tcp, udp, icmp, multiport, conntrack, state,
 * and the port helpers.
 *
 * A small rule reader stands in for the command parser: it understands "-p [!]PROTO",
 * "-m NAME", "[!] --option [ARG [ARG2]]" and drives the extensions through
 * ipt_ext_find() exactly as the interface in parser/ext.h describes. The iptables
 * conformance files (libxt_tcp.t, ...) are read from $IPT_CONFORMANCE_DIR, by default
 * ../shared/conformance (relative to the repository root).
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"
#include "ext/proto_ext.h"

#define MAX_M 8

struct rule {
	struct ipt_ip ip;
	unsigned int n;
	const struct ipt_ext *ext[MAX_M];
	unsigned int flags[MAX_M];
	unsigned char data[MAX_M][256];
	struct ipt_err err;
};

static int proto_num(const char *s, __u16 *p)
{
	static const struct { const char *n; __u16 v; } t[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "sctp", 132 }, { "dccp", 33 },
		{ "udplite", 136 }, { "all", 0 }, { "ipv6-icmp", 58 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n)) {
			*p = t[i].v;
			return 0;
		}
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v > 255)
		return -1;
	*p = (__u16)v;
	return 0;
}

/* Parse RULE into r; 0 when accepted, -1 with r->err set (or a reader error). */
static int read_rule(const char *text, struct rule *r)
{
	char buf[1024], *w[128];
	int nw = 0;

	memset(r, 0, sizeof(*r));
	ipt_err_clear(&r->err);
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *tok = strtok(buf, " "); tok && nw < 128; tok = strtok(NULL, " "))
		w[nw++] = tok;

	bool inv = false;
	for (int i = 0; i < nw; i++) {
		if (!strcmp(w[i], "!")) {
			inv = true;
			continue;
		}
		if (!strcmp(w[i], "-p")) {
			if (i + 1 >= nw || proto_num(w[++i], &r->ip.proto))
				return ipt_err_param(&r->err, "reader: bad -p");
			if (inv)
				r->ip.invflags |= IPT_INV_PROTO;
			inv = false;
			continue;
		}
		if (!strcmp(w[i], "-m")) {
			const struct ipt_ext *e = i + 1 < nw ? ipt_ext_find(w[++i], false) : NULL;
			if (!e || r->n == MAX_M || e->size > sizeof(r->data[0]))
				return ipt_err_param(&r->err, "reader: bad -m");
			r->ext[r->n] = e;
			if (e->init)
				e->init(r->data[r->n]);
			r->n++;
			continue;
		}
		if (strncmp(w[i], "--", 2) || !r->n)
			return ipt_err_param(&r->err, "reader: Bad argument `%s'", w[i]);
		unsigned int m = r->n - 1;
		const struct ipt_ext_opt *o = r->ext[m]->opts;
		while (o->name && strcmp(o->name, w[i] + 2))
			o++;
		if (!o->name)
			return ipt_err_param(&r->err, "reader: unknown option `%s'", w[i]);
		struct ipt_ext_call c = {
			.opt = o, .invert = inv, .flags = r->flags[m], .ip = &r->ip, .err = &r->err,
		};
		if (o->has_arg) {
			if (i + 1 >= nw)
				return ipt_err_param(&r->err, "reader: missing argument");
			c.arg = w[++i];
			if (o->two_args && i + 1 < nw && w[i + 1][0] != '-' && w[i + 1][0] != '!')
				c.arg2 = w[++i];
		}
		inv = false;
		if (r->ext[m]->parse(r->data[m], &c))
			return -1;
		r->flags[m] |= 1u << o->id;
	}
	for (unsigned int m = 0; m < r->n; m++) {
		struct ipt_ext_final f = { .flags = r->flags[m], .ip = &r->ip, .err = &r->err };
		if (r->ext[m]->check && r->ext[m]->check(r->data[m], &f))
			return -1;
	}
	return 0;
}

/* What iptables-save prints after "-A CHAIN " for this rule (IP part reduced to -p). */
static void save_rule(const struct rule *r, struct strbuf *sb)
{
	sb_reset(sb);
	if (r->ip.proto) {
		const char *n = ipt_proto_name(r->ip.proto);
		sb_addf(sb, "%s-p ", (r->ip.invflags & IPT_INV_PROTO) ? "! " : "");
		if (n)
			sb_adds(sb, n);
		else
			sb_addf(sb, "%u", r->ip.proto);
	}
	for (unsigned int m = 0; m < r->n; m++) {
		sb_addf(sb, "%s-m %s", sb->len ? " " : "", r->ext[m]->name);
		r->ext[m]->save(sb, r->data[m], &r->ip);
	}
}

static void print_rule(const struct rule *r, bool numeric, struct strbuf *sb)
{
	sb_reset(sb);
	for (unsigned int m = 0; m < r->n; m++)
		r->ext[m]->print(sb, r->data[m], &r->ip, numeric);
}

/* ---- direct helpers for the assertions below ---- */

static struct strbuf out = STRBUF_INIT;

static const char *saved(const char *rule)
{
	static struct rule r;

	if (read_rule(rule, &r))
		return r.err.msg;
	save_rule(&r, &out);
	return sb_str(&out);
}

static const char *listed(const char *rule, bool numeric)
{
	static struct rule r;

	if (read_rule(rule, &r))
		return r.err.msg;
	print_rule(&r, numeric, &out);
	return sb_str(&out);
}

static const char *error_of(const char *rule, int *code)
{
	static struct rule r;

	if (read_rule(rule, &r) == 0) {
		*code = 0;
		return "(accepted)";
	}
	*code = r.err.code;
	return r.err.msg;
}

#define ck_saved(rule, want) ck_assert_str_eq(saved(rule), want)
#define ck_listed(rule, num, want) ck_assert_str_eq(listed(rule, num), want)
#define ck_error(rule, want_code, want_msg) do {				\
		int code_;							\
		const char *m_ = error_of(rule, &code_);			\
		ck_assert_str_eq(m_, want_msg);					\
		ck_assert_int_eq(code_, want_code);				\
	} while (0)

/* Equal meaning -> equal bytes. */
static void ck_same_bytes(const char *a, const char *b)
{
	static struct rule ra, rb;

	ck_assert_msg(read_rule(a, &ra) == 0, "%s: %s", a, ra.err.msg);
	ck_assert_msg(read_rule(b, &rb) == 0, "%s: %s", b, rb.err.msg);
	ck_assert_uint_eq(ra.n, rb.n);
	for (unsigned int m = 0; m < ra.n; m++)
		ck_assert_msg(!memcmp(ra.data[m], rb.data[m], ra.ext[m]->size),
			      "'%s' and '%s' differ in bytes", a, b);
}

/* ---- conformance files ---- */

static const char *conf_dir(void)
{
	const char *d = getenv("IPT_CONFORMANCE_DIR");

	return d && *d ? d : "../shared/conformance";
}

/* Run every filter-table case of one .t file; returns the number of failures. */
static int run_t_file(const char *name, int *ncases)
{
	char path[512], line[2048];
	FILE *f;
	int bad = 0;

	snprintf(path, sizeof(path), "%s/iptables-t/%s", conf_dir(), name);
	f = fopen(path, "r");
	if (!f) {
		const char *ci = getenv("CI");
		if (ci && !strcmp(ci, "true"))
			ck_abort_msg("conformance file %s is missing (CI=true)", path);
		fprintf(stderr, "SKIPPED: %s not found (set IPT_CONFORMANCE_DIR to a "
			"directory holding iptables-t/*.t)\n", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[5] = { 0 }, *p = line;
		int nf = 0;

		line[strcspn(line, "\r\n")] = '\0';
		if (!*line || strchr("#:@%*", *line))
			continue;
		while (nf < 5) {
			fld[nf++] = p;
			p = strchr(p, ';');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (nf < 3)
			continue;
		const char *rule = fld[0], *want = strcmp(fld[1], "=") ? fld[1] : fld[0];
		const char *result = fld[2];
		/* A backend-specific case: the LEGACY result, else the opposite of NFT's. */
		if (nf >= 4 && !strcmp(fld[3], "NFT"))
			result = nf >= 5 ? fld[4] : (!strcmp(fld[2], "OK") ? "FAIL" : "OK");
		static struct rule r, r2;
		int rc = read_rule(rule, &r);

		(*ncases)++;
		if (!strcmp(result, "FAIL")) {
			if (rc == 0) {
				fprintf(stderr, "%s: accepted but must FAIL: %s\n", name, rule);
				bad++;
			}
			continue;
		}
		if (rc) {
			fprintf(stderr, "%s: refused (%s): %s\n", name, r.err.msg, rule);
			bad++;
			continue;
		}
		save_rule(&r, &out);
		bool same = !strcmp(sb_str(&out), want);
		if (!strcmp(result, "OK") ? !same : same) {
			fprintf(stderr, "%s: %s\n  saved: %s\n  want:  %s (%s)\n", name, rule,
				sb_str(&out), want, result);
			bad++;
			continue;
		}
		/* The saved text reads back to the same bytes (save -> restore -> save). */
		if (read_rule(sb_str(&out), &r2) || r2.n != r.n) {
			fprintf(stderr, "%s: saved text refused: %s\n", name, sb_str(&out));
			bad++;
			continue;
		}
		for (unsigned int m = 0; m < r.n; m++)
			if (memcmp(r.data[m], r2.data[m], r.ext[m]->size)) {
				fprintf(stderr, "%s: round trip changed bytes: %s\n", name, rule);
				bad++;
			}
	}
	fclose(f);
	return bad;
}

static void ck_t_file(const char *name)
{
	int n = 0, bad = run_t_file(name, &n);

	ck_assert_msg(bad == 0, "%s: %d of %d cases wrong (details on stderr)", name, bad, n);
}

START_TEST(t_file_tcp) { ck_t_file("libxt_tcp.t"); }
END_TEST
START_TEST(t_file_udp) { ck_t_file("libxt_udp.t"); }
END_TEST
START_TEST(t_file_icmp) { ck_t_file("libipt_icmp.t"); }
END_TEST
START_TEST(t_file_multiport) { ck_t_file("libxt_multiport.t"); }
END_TEST
START_TEST(t_file_conntrack) { ck_t_file("libxt_conntrack.t"); }
END_TEST
START_TEST(t_file_ipt_conntrack) { ck_t_file("libipt_conntrack.t"); }
END_TEST
START_TEST(t_file_state) { ck_t_file("libxt_state.t"); }
END_TEST

/* ---- port helpers ---- */

START_TEST(ports_helpers)
{
	struct ipt_err e;
	__u16 p, r[2];
	unsigned long long v;

	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_port("22", "tcp", &p, &e), 0);
	ck_assert_uint_eq(p, 22);
	ck_assert_int_eq(ipt_parse_port("ssh", "tcp", &p, &e), 0);
	ck_assert_uint_eq(p, 22);
	ck_assert_int_eq(ipt_parse_port("0x16", "tcp", &p, &e), 0);
	ck_assert_uint_eq(p, 22);
	ck_assert_int_eq(ipt_parse_port("+22", "tcp", &p, &e), 0);
	ck_assert_int_eq(ipt_parse_port("65535", "tcp", &p, &e), 0);
	ck_assert_uint_eq(p, 65535);
	ck_assert_int_eq(ipt_parse_port("70000", "tcp", &p, &e), -1);
	ck_assert_str_eq(e.msg, "invalid port/service `70000' specified");
	ck_assert_int_eq(e.code, IPT_EXIT_PARAM);

	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_port("-0", "tcp", &p, &e), -1);
	ck_assert_str_eq(e.msg, "invalid port/service `-0' specified");
	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_port("", "tcp", &p, &e), -1);
	ck_assert_str_eq(e.msg, "invalid port/service `' specified");

	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_port_range(":", "tcp", r, &e), 0);
	ck_assert(r[0] == 0 && r[1] == 65535);
	ck_assert_int_eq(ipt_parse_port_range(":ssh", "tcp", r, &e), 0);
	ck_assert(r[0] == 0 && r[1] == 22);
	ck_assert_int_eq(ipt_parse_port_range("22:", "tcp", r, &e), 0);
	ck_assert(r[0] == 22 && r[1] == 65535);
	ck_assert_int_eq(ipt_parse_port_range("http:https", "tcp", r, &e), 0);
	ck_assert(r[0] == 80 && r[1] == 443);
	ck_assert_int_eq(ipt_parse_port_range("4:3", "tcp", r, &e), -1);
	ck_assert_str_eq(e.msg, "invalid portrange (min > max)");
	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_port_range("1:2:3", "tcp", r, &e), -1);
	ck_assert_str_eq(e.msg, "invalid port/service `2:3' specified");

	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_portrc("", "udp", "dport", r, &e), 0);
	ck_assert(r[0] == 0 && r[1] == 0);
	ck_assert_int_eq(ipt_parse_portrc("1::", "udp", "destination-port", r, &e), -1);
	ck_assert_str_eq(e.msg, "udp: Too many components for option \"--destination-port\" (max: 2)\n");
	ipt_err_clear(&e);
	ck_assert_int_eq(ipt_parse_portrc("22 ", "udp", "dport", r, &e), -1);
	ck_assert_str_eq(e.msg, "Port \"22 \" does not resolve to anything.\n");

	ck_assert_int_eq(ipt_strtoul(" +7", NULL, 0, 10, &v), 0);
	ck_assert_int_eq(ipt_strtoul(" -0", NULL, 0, 10, &v), -1);
	ck_assert_int_eq(ipt_strtoul("11", NULL, 0, 10, &v), -1);
	ck_assert_int_eq(ipt_strtoul("", NULL, 0, 10, &v), -1);

	struct strbuf sb = STRBUF_INIT;
	ipt_print_port(&sb, 22, "tcp", false);
	sb_adds(&sb, ",");
	ipt_print_port(&sb, 22, "tcp", true);
	sb_adds(&sb, ",");
	ipt_print_port(&sb, 65535, "tcp", false);
	ck_assert_str_eq(sb_str(&sb), "ssh,22,65535");
	sb_free(&sb);
}
END_TEST

/* ---- tcp ---- */

START_TEST(tcp_save_and_list)
{
	ck_saved("-p tcp -m tcp --dport 22", "-p tcp -m tcp --dport 22");
	ck_saved("-p tcp -m tcp --destination-port ssh --source-port 5",
		 "-p tcp -m tcp --sport 5 --dport 22");
	ck_saved("-p tcp -m tcp ! --sport 1:1023 ! --dport http:https",
		 "-p tcp -m tcp ! --sport 1:1023 ! --dport 80:443");
	ck_saved("-p tcp -m tcp --dport 22 --sport 1 --tcp-option 3 --syn",
		 "-p tcp -m tcp --sport 1 --dport 22 --tcp-option 3 --tcp-flags FIN,SYN,RST,ACK SYN");
	ck_saved("-p tcp -m tcp ! --syn", "-p tcp -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN");
	ck_saved("-p tcp -m tcp --tcp-flags ALL NONE",
		 "-p tcp -m tcp --tcp-flags FIN,SYN,RST,PSH,ACK,URG NONE");
	ck_saved("-p tcp -m tcp --tcp-flags syn,,ack, syn", "-p tcp -m tcp --tcp-flags SYN,ACK SYN");
	ck_saved("-p tcp -m tcp --tcp-flags ACK,SYN SYN,ACK,FIN",
		 "-p tcp -m tcp --tcp-flags SYN,ACK FIN,SYN,ACK");
	ck_saved("-p tcp -m tcp --tcp-flags NONE NONE", "-p tcp -m tcp");
	ck_saved("-p tcp -m tcp ! --tcp-flags NONE NONE", "-p tcp -m tcp ! --tcp-flags NONE NONE");
	ck_saved("-p tcp -m tcp ! --tcp-option 0x10", "-p tcp -m tcp ! --tcp-option 16");
	ck_saved("-p tcp -m tcp --sport 0:0", "-p tcp -m tcp --sport 0");

	ck_listed("-p tcp -m tcp", true, " tcp");
	ck_listed("-p tcp -m tcp --dport 22", true, " tcp dpt:22");
	ck_listed("-p tcp -m tcp --dport 22", false, " tcp dpt:ssh");
	ck_listed("-p tcp -m tcp --dport :ssh", false, " tcp dpts:0:ssh");
	ck_listed("-p tcp -m tcp --dport 22:", false, " tcp dpts:ssh:65535");
	ck_listed("-p tcp -m tcp ! --dport :", true, " tcp dpts:!0:65535");
	ck_listed("-p tcp -m tcp ! --sport 1:1023 ! --dport http:https", true,
		  " tcp spts:!1:1023 dpts:!80:443");
	ck_listed("-p tcp -m tcp ! --sport 1:1023 ! --dport http:https", false,
		  " tcp spts:!tcpmux:1023 dpts:!http:https");
	ck_listed("-p tcp -m tcp --dport 22 --sport 1 --tcp-option 3 --syn", true,
		  " tcp spt:1 dpt:22 option=3 flags:0x17/0x02");
	ck_listed("-p tcp -m tcp --dport 22 --sport 1 --tcp-option 3 --syn", false,
		  " tcp spt:tcpmux dpt:ssh option=3 flags:FIN,SYN,RST,ACK/SYN");
	ck_listed("-p tcp -m tcp ! --tcp-option 5", false, " tcp option=!5");
	ck_listed("-p tcp -m tcp ! --syn", true, " tcp flags:!0x17/0x02");
	ck_listed("-p tcp -m tcp --tcp-flags ALL NONE", false,
		  " tcp flags:FIN,SYN,RST,PSH,ACK,URG/NONE");
	ck_listed("-p tcp -m tcp --tcp-flags ALL ALL", true, " tcp flags:0x3F/0x3F");
	ck_listed("-p tcp -m tcp ! --tcp-flags NONE NONE", false, " tcp flags:!NONE/NONE");
}
END_TEST

START_TEST(tcp_errors)
{
	ck_error("-p tcp -m tcp --sport 70000", 2, "invalid port/service `70000' specified");
	ck_error("-p tcp -m tcp --dport foo", 2, "invalid port/service `foo' specified");
	ck_error("-p tcp -m tcp --dport 4:3", 2, "invalid portrange (min > max)");
	ck_error("-p tcp -m tcp --dport 1:2:3", 2, "invalid port/service `2:3' specified");
	ck_error("-p tcp -m tcp --dport 1:2 --dport 3", 2, "Only one `--destination-port' allowed");
	ck_error("-p tcp -m tcp --sport 1 --source-port 2", 2, "Only one `--source-port' allowed");
	ck_error("-p tcp -m tcp --tcp-flags FOO SYN", 2, "Unknown TCP flag `FOO'");
	ck_error("-p tcp -m tcp --tcp-flags SYN", 2, "--tcp-flags requires two args.");
	ck_error("-p tcp -m tcp --tcp-flags SYN --syn", 2, "--tcp-flags requires two args.");
	ck_error("-p tcp -m tcp --syn --tcp-flags SYN SYN", 2,
		 "Only one of `--syn' or `--tcp-flags'  allowed");
	ck_error("-p tcp -m tcp --syn --syn", 2, "Only one of `--syn' or `--tcp-flags'  allowed");
	ck_error("-p tcp -m tcp --tcp-option 256", 2, "Bad TCP option \"256\"");
	ck_error("-p tcp -m tcp --tcp-option 0", 2, "Bad TCP option \"0\"");
	ck_error("-p tcp -m tcp --tcp-option 1a", 2, "Bad TCP option \"1a\"");
	ck_error("-p tcp -m tcp --tcp-option 1 --tcp-option 2", 2, "Only one `--tcp-option' allowed");
	ck_error("-m tcp --dport 1", 1, "Invalid argument: tcp match: only valid for protocol 6");
	ck_error("! -p tcp -m tcp", 1, "Invalid argument: tcp match: only valid for protocol 6");
	ck_error("-p udp -m tcp", 1, "Invalid argument: tcp match: only valid for protocol 6");
}
END_TEST

START_TEST(tcp_canonical)
{
	ck_same_bytes("-p tcp -m tcp --sport 4:4", "-p tcp -m tcp --sport 4");
	ck_same_bytes("-p tcp -m tcp --dport :", "-p tcp -m tcp");
	ck_same_bytes("-p tcp -m tcp --syn", "-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN");
	ck_same_bytes("-p tcp -m tcp --dport ssh", "-p tcp -m tcp --destination-port 22");

	static struct rule r;
	ck_assert_int_eq(read_rule("-p tcp -m tcp --sport 1:1023 ! --dport 80", &r), 0);
	const struct ipt_tcp_info *t = (const void *)r.data[0];
	ck_assert(t->spts[0] == 1 && t->spts[1] == 1023 && t->dpts[0] == 80 && t->dpts[1] == 80);
	ck_assert_uint_eq(t->invflags, IPT_TCP_INV_DSTPT);
}
END_TEST

/* ---- udp ---- */

START_TEST(udp_all)
{
	ck_saved("-p udp -m udp --dport domain", "-p udp -m udp --dport 53");
	ck_saved("-p udp -m udp ! --sport 1:1023 --dport 53", "-p udp -m udp ! --sport 1:1023 --dport 53");
	ck_saved("-p udp -m udp --source-port 5 --destination-port 6", "-p udp -m udp --sport 5 --dport 6");
	ck_saved("-p udp -m udp --dport +22", "-p udp -m udp --dport 22");
	ck_listed("-p udp -m udp --dport 53", false, " udp dpt:domain");
	ck_listed("-p udp -m udp ! --sport 1:1023 --dport 53", true, " udp spts:!1:1023 dpt:53");
	ck_listed("-p udp -m udp ! --dport :", true, " udp dpts:!0:65535");
	ck_listed("-p udp -m udp", true, " udp");

	ck_error("-p udp -m udp --dport 1 --dport 2", 2,
		 "udp: option \"--destination-port\" can only be used once.\n");
	ck_error("-p udp -m udp --sport 1 --source-port 2", 2,
		 "udp: option \"--source-port\" can only be used once.\n");
	ck_error("-p udp -m udp --dport 1::", 2,
		 "udp: Too many components for option \"--destination-port\" (max: 2)\n");
	ck_error("-p udp -m udp --dport foo", 2, "Port \"foo\" does not resolve to anything.\n");
	ck_error("-p udp -m udp --sport 65536", 2, "Port \"65536\" does not resolve to anything.\n");
	ck_error("-p udp -m udp --dport 4:3", 2, "invalid portrange (min > max)");
	/* XTTYPE_PORTRC numbers are decimal only */
	ck_error("-p udp -m udp --dport 0x35", 2, "Port \"0x35\" does not resolve to anything.\n");
	ck_error("-p udp -m udp --dport -1", 2, "Port \"-1\" does not resolve to anything.\n");
	ck_saved("-p udp -m udp --dport 010", "-p udp -m udp --dport 10");
	ck_saved("-p tcp -m tcp --dport 010", "-p tcp -m tcp --dport 8");
	ck_error("-m udp --dport 1", 1, "Invalid argument: udp match: only valid for protocol 17");
	ck_same_bytes("-p udp -m udp --sport 4:4", "-p udp -m udp --sport 4");
}
END_TEST

/* ---- icmp ---- */

START_TEST(icmp_all)
{
	ck_saved("-p icmp -m icmp --icmp-type echo-request", "-p icmp -m icmp --icmp-type 8");
	ck_saved("-p icmp -m icmp --icmp-type ping", "-p icmp -m icmp --icmp-type 8");
	ck_saved("-p icmp -m icmp --icmp-type ECHO-REQ", "-p icmp -m icmp --icmp-type 8");
	ck_saved("-p icmp -m icmp --icmp-type host-unreach", "-p icmp -m icmp --icmp-type 3/1");
	ck_saved("-p icmp -m icmp --icmp-type network-unreachable", "-p icmp -m icmp --icmp-type 3/0");
	ck_saved("-p icmp -m icmp ! --icmp-type 8", "-p icmp -m icmp ! --icmp-type 8");
	ck_saved("-p icmp -m icmp --icmp-type 3/0:255", "-p icmp -m icmp --icmp-type 3");
	ck_saved("-p icmp -m icmp --icmp-type 3/4:5", "-p icmp -m icmp --icmp-type 3/4");
	ck_saved("-p icmp -m icmp --icmp-type 0x3/0x1", "-p icmp -m icmp --icmp-type 3/1");
	ck_saved("-p icmp -m icmp --icmp-type 255/0", "-p icmp -m icmp --icmp-type 255/0");
	ck_saved("-p icmp -m icmp ! --icmp-type any", "-p icmp -m icmp ! --icmp-type any");

	ck_listed("-p icmp -m icmp --icmp-type any", true, " icmptype 255");
	ck_listed("-p icmp -m icmp --icmp-type any", false, " icmp any");
	ck_listed("-p icmp -m icmp --icmp-type 8", true, " icmptype 8");
	ck_listed("-p icmp -m icmp --icmp-type 8", false, " icmp echo-request");
	ck_listed("-p icmp -m icmp ! --icmp-type 8", true, " icmp !type 8");
	ck_listed("-p icmp -m icmp ! --icmp-type 8", false, " icmp !echo-request");
	ck_listed("-p icmp -m icmp --icmp-type 3/1", true, " icmptype 3 code 1");
	ck_listed("-p icmp -m icmp --icmp-type 3/1", false, " icmp host-unreachable");
	ck_listed("-p icmp -m icmp --icmp-type 255/255", false, " icmptype 255 code 255");
	ck_listed("-p icmp -m icmp --icmp-type 3/4:5", false, " icmptype 3 codes 4-5");
	ck_listed("-p icmp -m icmp --icmp-type 200/3", false, " icmptype 200 code 3");
	ck_listed("-p icmp -m icmp --icmp-type 8/0", false, " icmptype 8 code 0");
	ck_listed("-p icmp -m icmp --icmp-type ttl-exceeded", false, " icmp time-exceeded");
	ck_listed("-p icmp -m icmp --icmp-type 11/1", false, " icmp ttl-zero-during-reassembly");

	ck_error("-p icmp -m icmp --icmp-type 256", 2, "Unknown ICMP type `256'");
	ck_error("-p icmp -m icmp --icmp-type foo", 2, "Unknown ICMP type `foo'");
	ck_error("-p icmp -m icmp --icmp-type -8", 2, "Unknown ICMP type `-8'");
	ck_error("-p icmp -m icmp --icmp-type 3/256", 2, "Unknown ICMP code `3/256'");
	ck_error("-p icmp -m icmp --icmp-type 3/", 2, "Unknown ICMP code `3/'");
	ck_error("-p icmp -m icmp --icmp-type 3/1:", 2, "Unknown ICMP code `3/1:'");
	ck_error("-p icmp -m icmp --icmp-type 3/1/2", 2, "unknown character /");
	ck_error("-p icmp -m icmp --icmp-type 8a", 2, "unknown character a");
	ck_error("-p icmp -m icmp --icmp-type 3/1:2:3", 2, "unknown character :");
	ck_error("-p icmp -m icmp --icmp-type 3:4", 2, "ICMP type range not supported");
	ck_error("-p icmp -m icmp --icmp-type echo", 2,
		 "Ambiguous ICMP type `echo': `echo-reply' or `echo-request'?");
	ck_error("-p icmp -m icmp --icmp-type p", 2,
		 "Ambiguous ICMP type `p': `pong' or `protocol-unreachable'?");
	ck_error("-p icmp -m icmp --icmp-type tt", 2,
		 "Ambiguous ICMP type `tt': `ttl-exceeded' or `ttl-zero-during-transit'?");
	ck_error("-p icmp -m icmp --icmp-type 8 --icmp-type 0", 2,
		 "icmp: option \"--icmp-type\" can only be used once.\n");
	ck_error("-p icmp -m icmp", 2, "icmp: option \"--icmp-type\" must be specified\n");
	ck_error("-m icmp --icmp-type 8", 1, "Invalid argument: icmp match: only valid for protocol 1");
	ck_same_bytes("-p icmp -m icmp --icmp-type 255/0:255", "-p icmp -m icmp --icmp-type any");
	ck_same_bytes("-p icmp -m icmp --icmp-type pong", "-p icmp -m icmp --icmp-type 0");
}
END_TEST

/* ---- icmp6 and conntrack's IPv6 addresses (bpf-ip6tables: ipt_af = AF_INET6) ---- */

START_TEST(icmp6_all)
{
	ipt_af = AF_INET6;
	ck_assert_ptr_null(ipt_ext_find("icmp", false));
	ck_assert_ptr_nonnull(ipt_ext_find("icmp6", false));
	ck_assert_str_eq(ipt_ext_match_name("icmpv6"), "icmp6");
	ck_assert_str_eq(ipt_ext_match_name("ipv6-icmp"), "icmp6");
	ck_saved("-p ipv6-icmp -m icmp6 --icmpv6-type echo-request", "-p icmpv6 -m icmp6 --icmpv6-type 128");
	ck_saved("-p ipv6-icmp -m icmp6 --icmpv6-type NEIGHBOR-S", "-p icmpv6 -m icmp6 --icmpv6-type 135");
	ck_saved("-p ipv6-icmp -m icmp6 --icmpv6-type port-unreachable", "-p icmpv6 -m icmp6 --icmpv6-type 1/4");
	ck_saved("-p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3", "-p icmpv6 -m icmp6 ! --icmpv6-type 1/3");
	ck_saved("-p ipv6-icmp -m icmp6 --icmpv6-type 255/0:255", "-p icmpv6 -m icmp6 --icmpv6-type 255");
	ck_saved("-p ipv6-icmp -m icmp6 --icmpv6-type 1/2:3", "-p icmpv6 -m icmp6 --icmpv6-type 1/2");
	/* -L as ip6tables 1.8.9: no space between "ipv6-icmp" and "type" */
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 128", true, " ipv6-icmptype 128");
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 128", false, " ipv6-icmp echo-request");
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 1/2", false, " ipv6-icmp beyond-scope");
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 1/2", true, " ipv6-icmptype 1 code 2");
	ck_listed("-p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3", true, " ipv6-icmp !type 1 code 3");
	ck_listed("-p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3", false, " ipv6-icmp !address-unreachable");
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 255", false, " ipv6-icmptype 255");
	ck_listed("-p ipv6-icmp -m icmp6 --icmpv6-type 1/2:3", false, " ipv6-icmptype 1 codes 2-3");
	ck_error("-p ipv6-icmp -m icmp6 --icmpv6-type any", 2, "Unknown ICMPv6 type `any'");
	ck_error("-p ipv6-icmp -m icmp6 --icmpv6-type 1/300", 2, "Unknown ICMPv6 code `1/300'");
	ck_error("-p ipv6-icmp -m icmp6 --icmpv6-type 1x", 2, "unknown character x");
	ck_error("-p ipv6-icmp -m icmp6 --icmpv6-type r", 2,
		 "Ambiguous ICMPv6 type `r': `reject-route' or `router-solicitation'?");
	ck_error("-p ipv6-icmp -m icmp6", 2, "icmp6: option \"--icmpv6-type\" must be specified\n");
	ck_error("-p icmp -m icmp6 --icmpv6-type 1", 1,
		 "Invalid argument: icmp6 match: only valid for protocol 58");
	ck_same_bytes("-p ipv6-icmp -m icmp6 --icmpv6-type ping", "-p ipv6-icmp -m icmp6 --icmpv6-type 128/0:255");
	ipt_af = AF_INET;
	/* and the other way round: no icmp6 in bpf-iptables */
	ck_assert_ptr_null(ipt_ext_find("icmp6", false));
}
END_TEST

START_TEST(conntrack6_addresses)
{
	ipt_af = AF_INET6;
	ck_saved("-m conntrack --ctorigsrc 2001:db8::1/64 ! --ctrepldst ::/128",
		 "-m conntrack --ctorigsrc 2001:db8::1/64 ! --ctrepldst ::");
	ck_saved("-m conntrack --ctorigdst ::1/ffff:0:ffff::",
		 "-m conntrack --ctorigdst ::1/ffff:0:ffff::");
	ck_listed("-m conntrack --ctreplsrc ::/0", false, " ctreplsrc anywhere");
	ck_listed("-m conntrack --ctreplsrc ::/0", true, " ctreplsrc ::/0");
	ck_error("-m conntrack --ctorigsrc 10.0.0.1", 2,
		 "getaddrinfo: Address family for hostname not supported\n");
	ck_error("-m conntrack --ctorigsrc ::1/129", 2, "conntrack: bad value for option "
		 "\"--ctorigsrc\", neither a valid network mask nor valid CIDR (0-128).\n");
	/* the IPv4 fields of the payload stay zero: equal rules are equal bytes */
	ck_same_bytes("-m conntrack --ctstate NEW --ctorigsrc ::1", "-m conntrack --ctorigsrc ::1/128 --ctstate NEW");
	ipt_af = AF_INET;
}
END_TEST

/* ---- multiport ---- */

START_TEST(multiport_all)
{
	ck_saved("-p tcp -m multiport --dports 22,80:90,https", "-p tcp -m multiport --dports 22,80:90,443");
	ck_saved("-p tcp -m multiport ! --sports 22,80", "-p tcp -m multiport ! --sports 22,80");
	ck_saved("-p tcp -m multiport --source-ports 1", "-p tcp -m multiport --sports 1");
	ck_saved("-p tcp -m multiport --destination-ports 1,2", "-p tcp -m multiport --dports 1,2");
	ck_saved("-p 6 -m multiport --dports ssh", "-p tcp -m multiport --dports 22");
	ck_saved("-p tcp -m multiport --dports 1,1", "-p tcp -m multiport --dports 1,1");
	ck_saved("-p tcp -m multiport --ports 1:2,3:4,5:6,7:8,9:10,11:12,13:14,15",
		 "-p tcp -m multiport --ports 1:2,3:4,5:6,7:8,9:10,11:12,13:14,15");

	ck_listed("-p tcp -m multiport --dports 22,80:90,https", true, " multiport dports 22,80:90,443");
	ck_listed("-p tcp -m multiport --dports 22,80:90,https", false,
		  " multiport dports ssh,http:90,https");
	ck_listed("-p tcp -m multiport ! --sports 22,80", true, " multiport sports  !22,80");
	ck_listed("-p tcp -m multiport ! --sports 22,80", false, " multiport sports  !ssh,http");
	ck_listed("-p udp -m multiport --ports domain,1:2,65535", false,
		  " multiport ports domain,1:2,65535");

	ck_error("-p tcp -m multiport --ports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", 2,
		 "too many ports specified");
	ck_error("-p tcp -m multiport --ports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:16", 2,
		 "too many ports specified");
	ck_error("-p tcp -m multiport --dports 4:3", 2, "invalid portrange specified");
	ck_error("-p tcp -m multiport --dports 4:4", 2, "invalid portrange specified");
	ck_error("-p tcp -m multiport --dports foo", 2, "invalid port/service `foo' specified");
	ck_error("-p tcp -m multiport --dports 1,", 2, "invalid port/service `' specified");
	ck_error("-p tcp -m multiport --dports :5", 2, "invalid port/service `' specified");
	ck_error("-p tcp -m multiport --dports 1:2:3", 2, "invalid port/service `2:3' specified");
	ck_error("-p tcp -m multiport --dports 1 --sports 2", 2,
		 "multiport: option \"--source-ports\" cannot be used together with "
		 "\"--destination-ports\".\n");
	ck_error("-p tcp -m multiport --dports 1 --dports 2", 2,
		 "multiport: option \"--destination-ports\" can only be used once.\n");
	ck_error("-m multiport --dports 1", 2,
		 "multiport needs `-p tcp', `-p udp', `-p udplite', `-p sctp' or `-p dccp'");
	ck_error("-m multiport --dports 1 -p tcp", 2,
		 "multiport needs `-p tcp', `-p udp', `-p udplite', `-p sctp' or `-p dccp'");
	ck_error("-p icmp -m multiport --dports 1", 2,
		 "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP");
	ck_error("! -p tcp -m multiport --dports 1", 2,
		 "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP");
	ck_error("-p tcp -m multiport", 2, "multiport expection an option");

	static struct rule r;
	ck_assert_int_eq(read_rule("-p tcp -m multiport --dports 53,1024:65535", &r), 0);
	const struct ipt_multiport_info *m = (const void *)r.data[0];
	ck_assert_uint_eq(m->count, 3);
	ck_assert_uint_eq(m->flags, IPT_MPORT_DESTINATION);
	ck_assert(m->ports[0] == 53 && m->ports[1] == 1024 && m->ports[2] == 65535);
	ck_assert(m->pflags[0] == 0 && m->pflags[1] == 1);
	ck_same_bytes("-p tcp -m multiport --dports ssh,http", "-p tcp -m multiport --destination-ports 22,80");
}
END_TEST

/* ---- conntrack ---- */

START_TEST(conntrack_all)
{
	ck_saved("-m conntrack --ctstate n,e", "-m conntrack --ctstate NEW,ESTABLISHED");
	ck_saved("-m conntrack --ctstatus NONE,ASSURED", "-m conntrack --ctstatus ASSURED");
	ck_saved("-m conntrack --ctdir reply", "-m conntrack --ctdir REPLY");
	ck_saved("-m conntrack --ctproto ICMP", "-m conntrack --ctproto 1");
	ck_saved("-m conntrack --ctorigsrc 1.2.3.4/8", "-m conntrack --ctorigsrc 1.2.3.4/8");
	ck_saved("-m conntrack --ctorigsrc 1.2.3.4/32", "-m conntrack --ctorigsrc 1.2.3.4");
	ck_saved("-m conntrack --ctorigsrc 1.2.3.4/255.255.0.0", "-m conntrack --ctorigsrc 1.2.3.4/16");
	ck_saved("-m conntrack --ctorigsrc 10.0.0.0/255.0.255.0",
		 "-m conntrack --ctorigsrc 10.0.0.0/255.0.255.0");
	ck_saved("-m conntrack --ctorigsrc 0.0.0.0/0", "-m conntrack --ctorigsrc 0.0.0.0/0");
	ck_saved("-m conntrack --ctorigsrc 1.2.3", "-m conntrack --ctorigsrc 1.2.0.3");
	ck_saved("-m conntrack --ctorigsrc localhost", "-m conntrack --ctorigsrc 127.0.0.1");
	ck_saved("-m conntrack --ctorigsrcport ssh:http", "-m conntrack --ctorigsrcport 22:80");
	ck_saved("-m conntrack --ctexpire :5", "-m conntrack --ctexpire 0:5");
	ck_saved("-m conntrack --ctexpire 5:", "-m conntrack --ctexpire 5:4294967295");

	const char *all = "-m conntrack ! --ctstate NEW ! --ctproto tcp ! --ctorigsrc 1.1.1.1 "
			  "! --ctorigdst 2.2.2.2/16 ! --ctreplsrc 3.3.3.3 ! --ctrepldst 4.4.4.4 "
			  "! --ctorigsrcport 1 ! --ctorigdstport 2:3 ! --ctreplsrcport 4 "
			  "! --ctrepldstport 5 ! --ctstatus NONE ! --ctexpire 7 --ctdir ORIGINAL";
	ck_saved(all, "-m conntrack ! --ctstate NEW ! --ctproto 6 ! --ctorigsrc 1.1.1.1 "
		 "! --ctorigdst 2.2.2.2/16 ! --ctreplsrc 3.3.3.3 ! --ctrepldst 4.4.4.4 "
		 "! --ctorigsrcport 1 ! --ctorigdstport 2:3 ! --ctreplsrcport 4 "
		 "! --ctrepldstport 5 ! --ctstatus NONE ! --ctexpire 7 --ctdir ORIGINAL");
	ck_listed(all, true, " ! ctstate NEW ! ctproto 6 ! ctorigsrc 1.1.1.1 ! ctorigdst 2.2.2.2/16 "
		  "! ctreplsrc 3.3.3.3 ! ctrepldst 4.4.4.4 ! ctorigsrcport 1 ! ctorigdstport 2:3 "
		  "! ctreplsrcport 4 ! ctrepldstport 5 ! ctstatus NONE ! ctexpire 7 ctdir ORIGINAL");
	const char *order = "-m conntrack --ctdir REPLY --ctexpire 5:6 --ctstatus "
			    "ASSURED,SEEN_REPLY,EXPECTED,CONFIRMED --ctstate "
			    "DNAT,SNAT,UNTRACKED,ESTABLISHED,RELATED,NEW,INVALID";
	ck_saved(order, "-m conntrack --ctstate INVALID,NEW,RELATED,ESTABLISHED,UNTRACKED,SNAT,DNAT "
		 "--ctstatus EXPECTED,SEEN_REPLY,ASSURED,CONFIRMED --ctexpire 5:6 --ctdir REPLY");
	ck_listed(order, false, " ctstate INVALID,NEW,RELATED,ESTABLISHED,UNTRACKED,SNAT,DNAT "
		  "ctstatus EXPECTED,SEEN_REPLY,ASSURED,CONFIRMED ctexpire 5:6 ctdir REPLY");
	ck_listed("-m conntrack --ctorigsrc 0.0.0.0/0", true, " ctorigsrc 0.0.0.0/0");
	ck_listed("-m conntrack --ctorigsrc 0.0.0.0/0", false, " ctorigsrc anywhere");
	ck_listed("-m conntrack --ctorigsrc 1.2.3.4/24", true, " ctorigsrc 1.2.3.4/24");
	ck_listed("-m conntrack --ctorigsrc 127.0.0.1", false, " ctorigsrc localhost");
	ck_listed("-m conntrack --ctorigsrcport :", true, " ctorigsrcport 0:65535");

	ck_error("-m conntrack", 2, "conntrack: At least one option is required");
	ck_error("-m conntrack --ctstate wrong", 2, "Bad ctstate \"wrong\"");
	ck_error("-m conntrack --ctstate NEW,", 2, "Bad ctstate \"\"");
	ck_error("-m conntrack --ctstate ,NEW", 2, "Bad ctstate \",NEW\"");
	ck_error("-m conntrack --ctstatus foo", 2, "Bad ctstatus \"foo\"");
	ck_error("-m conntrack --ctstate NEW --ctstate NEW", 2,
		 "conntrack: option \"--ctstate\" can only be used once.\n");
	ck_error("-m conntrack --ctproto foo", 2, "unknown protocol \"foo\" specified");
	ck_error("-m conntrack --ctproto 300", 2, "unknown protocol \"300\" specified");
	ck_error("-m conntrack --ctproto all", 2, "conntrack: rule would never match protocol");
	ck_error("-m conntrack --ctorigsrcport foo", 2, "Port \"foo\" does not resolve to anything.\n");
	ck_error("-m conntrack --ctorigsrcport 1:2:3", 2,
		 "conntrack: Too many components for option \"--ctorigsrcport\" (max: 2)\n");
	ck_error("-m conntrack --ctexpire 42949672956", 2,
		 "conntrack: bad value for option \"--ctexpire\" near \"42949672956\", "
		 "or out of range (0-4294967295).\n");
	ck_error("-m conntrack --ctexpire -1", 2,
		 "conntrack: bad value for option \"--ctexpire\" near \"-1\", "
		 "or out of range (0-4294967295).\n");
	ck_error("-m conntrack --ctexpire 1:2:3", 2,
		 "conntrack: Too many components for option \"--ctexpire\" (max: 2)\n");
	ck_error("-m conntrack --ctdir foo", 2, "conntrack: Bad value for \"--ctdir\" option: \"foo\"");
	ck_error("-m conntrack ! --ctdir REPLY", 2, "conntrack: option \"--ctdir\" cannot be inverted.\n");
	ck_error("-m conntrack --ctorigsrc 1.2.3.4/abc", 2,
		 "conntrack: bad value for option \"--ctorigsrc\", neither a valid network mask "
		 "nor valid CIDR (0-32).\n");
	ck_error("-m conntrack --ctrepldst 1.2.3.4/", 2,
		 "conntrack: bad value for option \"--ctrepldst\", neither a valid network mask "
		 "nor valid CIDR (0-32).\n");
	ck_error("-m conntrack --ctorigsrc 1.1.1.1 --ctorigsrc 1.2.3.5", 2,
		 "conntrack: option \"--ctorigsrc\" can only be used once.\n");

	ck_same_bytes("-m conntrack --ctexpire 3:3", "-m conntrack --ctexpire 3");
	ck_same_bytes("-m conntrack --ctorigdstport 4:4", "-m conntrack --ctorigdstport 4");
	ck_same_bytes("-m conntrack --ctstate NEW,ESTABLISHED", "-m conntrack --ctstate ESTABLISHED,NEW");

	static struct rule r;
	ck_assert_int_eq(read_rule("-m conntrack --ctorigdstport 3:4 --ctorigsrc 10.1.2.3/8", &r), 0);
	const struct ipt_conntrack_info *ct = (const void *)r.data[0];
	ck_assert(ct->origdst_port[0] == 3 && ct->origdst_port[1] == 4);
	ck_assert_uint_eq(ct->origsrc_addr, htonl(0x0A010203));
	ck_assert_uint_eq(ct->origsrc_mask, htonl(0xFF000000));
}
END_TEST

/* ---- state ---- */

START_TEST(state_all)
{
	ck_saved("-m state --state e,i", "-m state --state INVALID,ESTABLISHED");
	ck_saved("-m state ! --state NEW", "-m state ! --state NEW");
	ck_saved("-m state --state ESTABLISHED,RELATED", "-m state --state RELATED,ESTABLISHED");
	ck_listed("-m state --state NEW,RELATED", true, " state NEW,RELATED");
	ck_listed("-m state ! --state NEW", false, " ! state NEW");
	ck_error("-m state --state SNAT", 2, "Bad state \"SNAT\"");
	ck_error("-m state --state foo,NEW", 2, "Bad state \"foo,NEW\"");
	ck_error("-m state --state ,NEW", 2, "Bad state \",NEW\"");
	ck_error("-m state --state NEW,", 2,
		 "\"--state\" requires a list of states with no spaces, e.g. ESTABLISHED,RELATED");
	ck_error("-m state", 2, "state: option \"--state\" must be specified\n");
	ck_error("-m state --state NEW --state NEW", 2,
		 "state: option \"--state\" can only be used once.\n");
	ck_same_bytes("-m state --state NEW,ESTABLISHED", "-m state --state est,new");
}
END_TEST

static Suite *proto_suite(void)
{
	Suite *s = suite_create("ext_proto");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, ports_helpers);
	tcase_add_test(tc, tcp_save_and_list);
	tcase_add_test(tc, tcp_errors);
	tcase_add_test(tc, tcp_canonical);
	tcase_add_test(tc, udp_all);
	tcase_add_test(tc, icmp_all);
	tcase_add_test(tc, icmp6_all);
	tcase_add_test(tc, conntrack6_addresses);
	tcase_add_test(tc, multiport_all);
	tcase_add_test(tc, conntrack_all);
	tcase_add_test(tc, state_all);
	suite_add_tcase(s, tc);

	tc = tcase_create("conformance");
	tcase_add_test(tc, t_file_tcp);
	tcase_add_test(tc, t_file_udp);
	tcase_add_test(tc, t_file_icmp);
	tcase_add_test(tc, t_file_multiport);
	tcase_add_test(tc, t_file_conntrack);
	tcase_add_test(tc, t_file_ipt_conntrack);
	tcase_add_test(tc, t_file_state);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	sb_free(&out);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
