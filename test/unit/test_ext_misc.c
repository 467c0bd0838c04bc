// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the extensions iprange, comment, limit, mark, length, mac and the
 * targets REJECT, LOG, NFLOG, TCPMSS: every case of their iptables .t files plus the
 * messages and -L texts of iptables-legacy 1.8.9 (asked live in a namespace).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

/* What the core does for one extension instance, on a pre-split argument list:
 * init, one parse per option ("!" inverts the next one), check, then save and print. */
struct run {
	int rc;
	struct ipt_err err;
	char save[2048];
	char print[2048];	/* numeric */
	char print_names[2048];	/* without -n */
	unsigned char data[1024];
	const struct ipt_ext *ext;
};

static int run_ext(struct run *r, const char *name, bool target, const struct ipt_ip *ip,
		   const struct ipt_match *matches, unsigned int nmatches, const char **argv)
{
	static const struct ipt_ip any;
	unsigned int flags = 0;
	bool invert = false;

	memset(r, 0, sizeof(*r));
	ipt_err_clear(&r->err);
	if (!ip)
		ip = &any;
	r->ext = ipt_ext_find(name, target);
	ck_assert_ptr_nonnull(r->ext);
	ck_assert_uint_le(r->ext->size, sizeof(r->data));
	if (r->ext->init)
		r->ext->init(r->data);
	for (int i = 0; argv[i]; i++) {
		if (!strcmp(argv[i], "!")) {
			invert = true;
			continue;
		}
		ck_assert_msg(!strncmp(argv[i], "--", 2), "bad test word %s", argv[i]);
		const struct ipt_ext_opt *o = r->ext->opts;
		while (o->name && strcmp(o->name, argv[i] + 2))
			o++;
		ck_assert_msg(o->name != NULL, "unknown option %s", argv[i]);
		struct ipt_ext_call c = {
			.opt = o, .arg = NULL, .invert = invert, .flags = flags, .ip = ip,
			.err = &r->err,
		};
		if (o->has_arg) {
			ck_assert_ptr_nonnull(argv[i + 1]);
			c.arg = argv[++i];
			if (o->two_args && argv[i + 1])
				c.arg2 = argv[++i];
		}
		invert = false;
		if (r->ext->parse(r->data, &c))
			return r->rc = -1;
		flags |= 1u << o->id;
	}
	if (r->ext->check) {
		struct ipt_ext_final f = {
			.flags = flags, .ip = ip, .err = &r->err, .matches = matches,
			.nmatches = nmatches,
		};
		if (r->ext->check(r->data, &f))
			return r->rc = -1;
	}
	struct strbuf sb = STRBUF_INIT;
	r->ext->save(&sb, r->data, ip);
	snprintf(r->save, sizeof(r->save), "%s", sb_str(&sb));
	sb_reset(&sb);
	r->ext->print(&sb, r->data, ip, true);
	snprintf(r->print, sizeof(r->print), "%s", sb_str(&sb));
	sb_reset(&sb);
	r->ext->print(&sb, r->data, ip, false);
	snprintf(r->print_names, sizeof(r->print_names), "%s", sb_str(&sb));
	sb_free(&sb);
	return 0;
}

/* Split a command-line tail on blanks; "'...'" groups words (no escapes). */
static const char **split(const char *line)
{
	static char buf[4096];
	static const char *argv[64];
	int n = 0;
	char *p = buf;

	snprintf(buf, sizeof(buf), "%s", line);
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == '\'') {
			argv[n++] = ++p;
			p = strchr(p, '\'');
			*p++ = '\0';
			continue;
		}
		argv[n++] = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = '\0';
	}
	argv[n] = NULL;
	return argv;
}

static struct run R;

static int m(const char *name, const char *line)
{
	return run_ext(&R, name, false, NULL, NULL, 0, split(line));
}

static int t(const char *name, const char *line)
{
	return run_ext(&R, name, true, NULL, NULL, 0, split(line));
}

#define OK_SAVE(expr, want) do { \
	ck_assert_int_eq((expr), 0); \
	ck_assert_str_eq(R.save, (want)); \
} while (0)

#define FAIL_MSG(expr, exitcode, want) do { \
	ck_assert_int_eq((expr), -1); \
	ck_assert_int_eq(R.err.code, (exitcode)); \
	ck_assert_str_eq(R.err.msg, (want)); \
} while (0)

static char *repeat(char c, int n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ---- iprange (libxt_iprange.t, libipt_iprange.t) ---- */
START_TEST(iprange_t_cases)
{
	FAIL_MSG(m("iprange", ""), 2,
		 "iprange match: You must specify `--src-range' or `--dst-range'");
	OK_SAVE(m("iprange", "--src-range 1.1.1.1-1.1.1.10"), " --src-range 1.1.1.1-1.1.1.10");
	OK_SAVE(m("iprange", "! --src-range 1.1.1.1-1.1.1.10"), " ! --src-range 1.1.1.1-1.1.1.10");
	OK_SAVE(m("iprange", "--dst-range 1.1.1.1-1.1.1.10"), " --dst-range 1.1.1.1-1.1.1.10");
	OK_SAVE(m("iprange", "! --dst-range 1.1.1.1-1.1.1.10"), " ! --dst-range 1.1.1.1-1.1.1.10");
}
END_TEST

START_TEST(iprange_oracle)
{
	/* a single address is a range of one in 1.8.9 */
	OK_SAVE(m("iprange", "--src-range 1.1.1.1"), " --src-range 1.1.1.1-1.1.1.1");
	ck_assert_str_eq(R.print, " source IP range 1.1.1.1-1.1.1.1");
	OK_SAVE(m("iprange", "! --dst-range 2.2.2.2-2.2.2.3 ! --src-range 1.1.1.1-1.1.1.10"),
		" ! --src-range 1.1.1.1-1.1.1.10 ! --dst-range 2.2.2.2-2.2.2.3");
	ck_assert_str_eq(R.print, " source IP range ! 1.1.1.1-1.1.1.10 destination IP range ! "
		"2.2.2.2-2.2.2.3");
	OK_SAVE(m("iprange", "--src-range 1.1-1.2"), " --src-range 1.1.0.0-1.2.0.0");
	OK_SAVE(m("iprange", "--src-range 0x1.010.1.1-1.1.1.2"), " --src-range 1.8.1.1-1.1.1.2");
	OK_SAVE(m("iprange", "--src-range '+1.1.1.1-1.1.1.2'"), " --src-range 1.1.1.1-1.1.1.2");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.1-1.1.1.10 --src-range 1.1.1.1-1.1.1.10"), 2,
		 "iprange: option \"--src-range\" can only be used once.\n");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.x-1.1.1.10"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.x\"");
	FAIL_MSG(m("iprange", "--dst-range 1.1.1.1-"), 2,
		 "iprange: Bad value for \"--dst-range\" option: \"\"");
	FAIL_MSG(m("iprange", "--src-range -1.1.1.1"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"\"");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.1-1.1.1.2-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.2-1.1.1.3\"");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.1/24-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.1/24\"");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.1.1-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.1.1\"");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.\"");
	FAIL_MSG(m("iprange", "--src-range 1..1.1-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1..1.1\"");
	FAIL_MSG(m("iprange", "--src-range 1.1.1.256-1.1.1.3"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"1.1.1.256\"");
	/* reversed: accepted with a warning on stderr */
	OK_SAVE(m("iprange", "--src-range 1.1.1.10-1.1.1.1"), " --src-range 1.1.1.10-1.1.1.1");
}
END_TEST

/* ---- comment (libxt_comment.t) ---- */
START_TEST(comment_t_cases)
{
	FAIL_MSG(m("comment", ""), 2, "comment: option \"--comment\" must be specified\n");
	/* "-m comment --comment" (no argument) is the scanner's error */
	OK_SAVE(m("comment", "--comment foo"), " --comment foo");
	char *x255 = repeat('x', 255), line[400], want[400];
	snprintf(line, sizeof(line), "--comment %s", x255);
	snprintf(want, sizeof(want), " --comment %s", x255);
	OK_SAVE(m("comment", line), want);
	/* 1.8.9 keeps the first 255 bytes of a longer comment */
	snprintf(line, sizeof(line), "--comment %sxyz", x255);
	OK_SAVE(m("comment", line), want);
	free(x255);
}
END_TEST

START_TEST(comment_oracle)
{
	OK_SAVE(m("comment", "--comment 'a \"b\\\\ c'"), " --comment \"a \\\"b\\\\\\\\ c\"");
	ck_assert_str_eq(R.print, " /* a \"b\\\\ c */");
	OK_SAVE(m("comment", "--comment ''"), " --comment \"\"");
	ck_assert_str_eq(R.print, " /*  */");
	OK_SAVE(m("comment", "--comment */x"), " --comment \"*/x\"");
	ck_assert_str_eq(R.print, " /* */x */");
	OK_SAVE(m("comment", "--comment it's"), " --comment \"it\\'s\"");
	ck_assert_str_eq(R.print, " /* it's */");
	OK_SAVE(m("comment", "--comment 'a b'"), " --comment \"a b\"");
	OK_SAVE(m("comment", "--comment -_aZ09"), " --comment -_aZ09");
	OK_SAVE(m("comment", "--comment $x"), " --comment \"$x\"");
	FAIL_MSG(m("comment", "--comment foo --comment bar"), 2,
		 "comment: option \"--comment\" can only be used once.\n");
	FAIL_MSG(m("comment", "! --comment foo"), 2,
		 "comment: option \"--comment\" cannot be inverted.\n");
}
END_TEST

/* ---- limit (libxt_limit.t) ---- */
START_TEST(limit_t_cases)
{
	OK_SAVE(m("limit", "--limit 1/sec"), " --limit 1/sec");
	OK_SAVE(m("limit", "--limit 1/min"), " --limit 1/min");
	OK_SAVE(m("limit", "--limit 1000/hour"), " --limit 1000/hour");
	OK_SAVE(m("limit", "--limit 1000/day"), " --limit 1000/day");
	OK_SAVE(m("limit", "--limit 1/sec --limit-burst 1"), " --limit 1/sec --limit-burst 1");
}
END_TEST

START_TEST(limit_oracle)
{
	static const char *const cases[][2] = {
		{ "--limit 60/min", " --limit 1/sec" },
		{ "--limit 1/s", " --limit 1/sec" },
		{ "--limit 2/m", " --limit 2/min" },
		{ "--limit 3/h", " --limit 3/hour" },
		{ "--limit 4/d", " --limit 4/day" },
		{ "--limit 5/second", " --limit 5/sec" },
		{ "--limit 5/minute", " --limit 5/min" },
		{ "--limit 5/mi", " --limit 5/min" },
		{ "--limit 5/hou", " --limit 5/hour" },
		{ "--limit 1/Sec", " --limit 1/sec" },
		{ "--limit 5", " --limit 5/sec" },
		{ "--limit 10000/sec", " --limit 10000/sec" },
		{ "--limit 7/min", " --limit 7/min" },
		{ "--limit ' 10abc/s'", " --limit 10/sec" },
		{ "", " --limit 3/hour" },
		{ "--limit-burst 5", " --limit 3/hour" },
		{ "--limit-burst 10", " --limit 3/hour --limit-burst 10" },
		{ "--limit-burst ' +0x10'", " --limit 3/hour --limit-burst 16" },
		{ "--limit 1/day --limit-burst 1", " --limit 1/day --limit-burst 1" },
		{ "--limit 2/day --limit-burst 2", " --limit 2/day --limit-burst 2" },
		{ "--limit 1/hour --limit-burst 119", " --limit 1/hour --limit-burst 119" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(m("limit", cases[i][0]) == 0, "%s: %s", cases[i][0], R.err.msg);
		ck_assert_str_eq(R.save, cases[i][1]);
	}
	ck_assert_int_eq(m("limit", "--limit 60/min"), 0);
	ck_assert_str_eq(R.print, " limit: avg 1/sec burst 5");
	ck_assert_int_eq(m("limit", "--limit 3/hour --limit-burst 10"), 0);
	ck_assert_str_eq(R.print, " limit: avg 3/hour burst 10");
	/* the same rule, whatever the spelling */
	struct run a;
	ck_assert_int_eq(m("limit", "--limit 60/minute"), 0);
	a = R;
	ck_assert_int_eq(m("limit", "--limit 1 --limit-burst 5"), 0);
	ck_assert_mem_eq(a.data, R.data, R.ext->size);

	FAIL_MSG(m("limit", "--limit 5/x"), 2, "bad rate \"5/x\"'");
	FAIL_MSG(m("limit", "--limit 0/sec"), 2, "bad rate \"0/sec\"'");
	FAIL_MSG(m("limit", "--limit abc/s"), 2, "bad rate \"abc/s\"'");
	FAIL_MSG(m("limit", "--limit 1/secx"), 2, "bad rate \"1/secx\"'");
	FAIL_MSG(m("limit", "--limit /s"), 2, "bad rate \"/s\"'");
	FAIL_MSG(m("limit", "--limit 5/"), 2, "bad rate \"5/\"'");
	FAIL_MSG(m("limit", "--limit 0x10/s"), 2, "bad rate \"0x10/s\"'");
	FAIL_MSG(m("limit", "--limit 4294967296/s"), 2, "bad rate \"4294967296/s\"'");
	FAIL_MSG(m("limit", "--limit 10001/sec"), 2, "Rate too fast \"10001/sec\"");
	FAIL_MSG(m("limit", "--limit -5/s"), 2, "Rate too fast \"-5/s\"");
	FAIL_MSG(m("limit", "--limit-burst 10001"), 2,
		 "limit: bad value for option \"--limit-burst\", or out of range (0-10000).\n");
	FAIL_MSG(m("limit", "--limit-burst -0"), 2,
		 "limit: bad value for option \"--limit-burst\", or out of range (0-10000).\n");
	FAIL_MSG(m("limit", "! --limit 1/s"), 2, "limit: option \"--limit\" cannot be inverted.\n");
	FAIL_MSG(m("limit", "--limit 1/s --limit 2/s"), 2,
		 "limit: option \"--limit\" can only be used once.\n");
	/* the kernel's ERANGE: exit 1 */
	ck_assert_int_eq(m("limit", "--limit 1/day"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(R.err.style, IPT_ES_IPTC);
	ck_assert_ptr_nonnull(strstr(R.err.msg, "Numerical result out of range"));
	ck_assert_int_eq(m("limit", "--limit-burst 0"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(m("limit", "--limit-burst 10000"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(m("limit", "--limit 1/day --limit-burst 2"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(m("limit", "--limit 1/hour --limit-burst 120"), -1);
	ck_assert_int_eq(R.err.code, 1);
}
END_TEST

/* ---- mark (libxt_mark.t) ---- */
START_TEST(mark_t_cases)
{
	OK_SAVE(m("mark", "--mark 0xfeedcafe/0xfeedcafe"), " --mark 0xfeedcafe/0xfeedcafe");
	OK_SAVE(m("mark", "--mark 0x0"), " --mark 0x0");
	OK_SAVE(m("mark", "--mark 4294967295"), " --mark 0xffffffff");
	FAIL_MSG(m("mark", "--mark 4294967296"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", "--mark -1"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", ""), 2, "mark: option \"--mark\" must be specified\n");
	OK_SAVE(m("mark", "--mark 0x0/0xff0"), " --mark 0x0/0xff0");
}
END_TEST

START_TEST(mark_oracle)
{
	OK_SAVE(m("mark", "! --mark 5"), " ! --mark 0x5");
	ck_assert_str_eq(R.print, " mark match ! 0x5");
	OK_SAVE(m("mark", "--mark 5/0xffffffff"), " --mark 0x5");
	ck_assert_str_eq(R.print, " mark match 0x5");
	OK_SAVE(m("mark", "--mark 5/0"), " --mark 0x5/0x0");
	OK_SAVE(m("mark", "--mark 0xff/0xf"), " --mark 0xff/0xf");
	ck_assert_str_eq(R.print, " mark match 0xff/0xf");
	OK_SAVE(m("mark", "--mark 010"), " --mark 0x8");
	OK_SAVE(m("mark", "--mark ' 5'"), " --mark 0x5");
	FAIL_MSG(m("mark", "--mark 10/"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", "--mark /5"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", "--mark abc"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", "--mark 5/-1"), 2,
		 "mark: bad integer value for option \"--mark\", or out of range.\n");
	FAIL_MSG(m("mark", "--mark 5/6/7"), 2,
		 "mark: trailing garbage after value for option \"--mark\".\n");
	FAIL_MSG(m("mark", "--mark 5 --mark 6"), 2,
		 "mark: option \"--mark\" can only be used once.\n");
}
END_TEST

/* ---- length (libxt_length.t) ---- */
START_TEST(length_t_cases)
{
	OK_SAVE(m("length", "--length 1"), " --length 1");
	OK_SAVE(m("length", "--length :2"), " --length 0:2");
	OK_SAVE(m("length", "--length 0:3"), " --length 0:3");
	OK_SAVE(m("length", "--length 4:"), " --length 4:65535");
	OK_SAVE(m("length", "--length :"), " --length 0:65535");
	OK_SAVE(m("length", "--length 0:65535"), " --length 0:65535");
	OK_SAVE(m("length", "! --length 0:65535"), " ! --length 0:65535");
	FAIL_MSG(m("length", "--length 0:65536"), 2, "length: bad value for option \"--length\" "
		 "near \"65536\", or out of range (0-65535).\n");
	FAIL_MSG(m("length", "--length -1:65535"), 2, "length: bad value for option \"--length\" "
		 "near \"-1:65535\", or out of range (0-65535).\n");
	OK_SAVE(m("length", "--length 4:4"), " --length 4");
	ck_assert_int_eq(m("length", "--length 4:3"), -1);	/* 1.8.13; 1.8.9 took it */
	ck_assert_int_eq(R.err.code, 2);
	FAIL_MSG(m("length", ""), 2, "length: option \"--length\" must be specified\n");
}
END_TEST

START_TEST(length_oracle)
{
	ck_assert_int_eq(m("length", "! --length 5"), 0);
	ck_assert_str_eq(R.save, " ! --length 5");
	ck_assert_str_eq(R.print, " length !5");
	ck_assert_int_eq(m("length", "--length 1:2"), 0);
	ck_assert_str_eq(R.print, " length 1:2");
	ck_assert_int_eq(m("length", "! --length 0:65535"), 0);
	ck_assert_str_eq(R.print, " length !0:65535");
	OK_SAVE(m("length", "--length 0x10:020"), " --length 16");
	OK_SAVE(m("length", "--length ' 5: 6'"), " --length 5:6");
	FAIL_MSG(m("length", "--length 5-6"), 2,
		 "length: Argument to \"--length\" has unexpected characters near \"-6\".\n");
	FAIL_MSG(m("length", "--length 5:6:7"), 2,
		 "length: Too many components for option \"--length\" (max: 2)\n");
	FAIL_MSG(m("length", "--length abc"), 2, "length: bad value for option \"--length\" "
		 "near \"abc\", or out of range (0-65535).\n");
	FAIL_MSG(m("length", "--length 5 --length 6"), 2,
		 "length: option \"--length\" can only be used once.\n");
	/* canonical: 4:4 and 4 are the same bytes */
	struct run a;
	ck_assert_int_eq(m("length", "--length 4:4"), 0);
	a = R;
	ck_assert_int_eq(m("length", "--length 4"), 0);
	ck_assert_mem_eq(a.data, R.data, R.ext->size);
}
END_TEST

/* ---- mac (libxt_mac.t) ---- */
START_TEST(mac_t_cases)
{
	OK_SAVE(m("mac", "--mac-source 42:01:02:03:04:05"), " --mac-source 42:01:02:03:04:05");
	FAIL_MSG(m("mac", "--mac-source 42:01:02:03:04"), 2, "Invalid MAC address specified.");
	FAIL_MSG(m("mac", "--mac-source 42:01:02:03:04:05:06"), 2,
		 "Invalid MAC address specified.");
	FAIL_MSG(m("mac", ""), 2, "mac: option \"--mac-source\" must be specified\n");
	/* the .t runs it in INPUT and FORWARD only: OUTPUT is refused by the kernel */
	const struct ipt_ext *e = ipt_ext_find("mac", false);
	ck_assert_uint_eq(e->hooks, IPT_HOOK_INPUT | IPT_HOOK_FORWARD);
}
END_TEST

START_TEST(mac_oracle)
{
	OK_SAVE(m("mac", "! --mac-source AA:bb:cc:dd:ee:ff"), " ! --mac-source aa:bb:cc:dd:ee:ff");
	ck_assert_str_eq(R.print, " MAC ! aa:bb:cc:dd:ee:ff");
	OK_SAVE(m("mac", "--mac-source a:b:c:d:e:f"), " --mac-source 0a:0b:0c:0d:0e:0f");
	ck_assert_str_eq(R.print, " MAC 0a:0b:0c:0d:0e:0f");
	OK_SAVE(m("mac", "--mac-source :bb:cc:dd:ee:ff"), " --mac-source 00:bb:cc:dd:ee:ff");
	FAIL_MSG(m("mac", "--mac-source AA-BB-CC-DD-EE-FF"), 2, "Invalid MAC address specified.");
	FAIL_MSG(m("mac", "--mac-source 1aa:bb:cc:dd:ee:ff"), 2, "Invalid MAC address specified.");
	FAIL_MSG(m("mac", "--mac-source aa:bb:cc:dd:ee:fg"), 2, "Invalid MAC address specified.");
	FAIL_MSG(m("mac", "--mac-source aa:bb:cc:dd:ee:ff --mac-source aa:bb:cc:dd:ee:ff"), 2,
		 "mac: option \"--mac-source\" can only be used once.\n");
}
END_TEST

/* ---- REJECT (libipt_REJECT.t) ---- */
START_TEST(reject_t_cases)
{
	OK_SAVE(t("REJECT", ""), " --reject-with icmp-port-unreachable");
	static const char *const types[] = {
		"icmp-net-unreachable", "icmp-host-unreachable", "icmp-port-unreachable",
		"icmp-proto-unreachable", "icmp-net-prohibited", "icmp-host-prohibited",
		"icmp-admin-prohibited",
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		char line[100], want[100];

		snprintf(line, sizeof(line), "--reject-with %s", types[i]);
		snprintf(want, sizeof(want), " --reject-with %s", types[i]);
		OK_SAVE(t("REJECT", line), want);
		snprintf(want, sizeof(want), " reject-with %s", types[i]);
		ck_assert_str_eq(R.print, want);
		ck_assert_str_eq(R.print_names, want);
	}
}
END_TEST

START_TEST(reject_oracle)
{
	static const char *const cases[][2] = {
		{ "net-unreach", "icmp-net-unreachable" },
		{ "host-unreach", "icmp-host-unreachable" },
		{ "port-unreach", "icmp-port-unreachable" },
		{ "proto-unreach", "icmp-proto-unreachable" },
		{ "net-prohib", "icmp-net-prohibited" },
		{ "host-prohib", "icmp-host-prohibited" },
		{ "admin-prohib", "icmp-admin-prohibited" },
		{ "icmp-port", "icmp-port-unreachable" },
		{ "''", "icmp-net-unreachable" },
		{ "p", "icmp-proto-unreachable" },
		{ "ICMP-HOST", "icmp-host-unreachable" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[100], want[100];

		snprintf(line, sizeof(line), "--reject-with %s", cases[i][0]);
		snprintf(want, sizeof(want), " --reject-with %s", cases[i][1]);
		OK_SAVE(t("REJECT", line), want);
	}
	FAIL_MSG(t("REJECT", "--reject-with foo"), 2, "unknown reject type \"foo\"");
	FAIL_MSG(t("REJECT", "--reject-with e"), 2, "unknown reject type \"e\"");
	FAIL_MSG(t("REJECT", "--reject-with x --reject-with y"), 2, "unknown reject type \"x\"");
	FAIL_MSG(t("REJECT", "--reject-with port-unreach --reject-with port-unreach"), 2,
		 "REJECT: option \"--reject-with\" can only be used once.\n");
	FAIL_MSG(t("REJECT", "! --reject-with port-unreach"), 2,
		 "REJECT: option \"--reject-with\" cannot be inverted.\n");

	/* tcp-reset: the kernel wants -p tcp, not inverted */
	struct ipt_ip tcp = { .proto = 6 }, ntcp = { .proto = 6, .invflags = IPT_INV_PROTO };
	ck_assert_int_eq(t("REJECT", "--reject-with tcp-reset"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(R.err.style, IPT_ES_IPTC);
	ck_assert_ptr_nonnull(strstr(R.err.msg, "Invalid argument"));
	ck_assert_int_eq(run_ext(&R, "REJECT", true, &ntcp, NULL, 0,
				 split("--reject-with tcp-rst")), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(run_ext(&R, "REJECT", true, &tcp, NULL, 0,
				 split("--reject-with tcp-res")), 0);
	ck_assert_str_eq(R.save, " --reject-with tcp-reset");
	ck_assert_str_eq(R.print, " reject-with tcp-reset");
}
END_TEST

/* ---- the IPv6 variants (bpf-ip6tables: ipt_af = AF_INET6), read off ip6tables-legacy ---- */
START_TEST(reject6_oracle)
{
	static const char *const cases[][2] = {
		{ "", "icmp6-port-unreachable" },
		{ "--reject-with no-route", "icmp6-no-route" },
		{ "--reject-with icmp6-adm-prohibited", "icmp6-adm-prohibited" },
		{ "--reject-with adm-prohibited", "icmp6-adm-prohibited" },
		{ "--reject-with addr-unreach", "icmp6-addr-unreachable" },
		{ "--reject-with port-unreach", "icmp6-port-unreachable" },
		{ "--reject-with policy-fail", "icmp6-policy-fail" },
		{ "--reject-with reject-route", "icmp6-reject-route" },
		/* abbreviations: the first entry in ip6tables' order */
		{ "--reject-with n", "icmp6-no-route" },
		{ "--reject-with icmp6", "icmp6-no-route" },
		{ "--reject-with p", "icmp6-port-unreachable" },
		{ "--reject-with a", "icmp6-adm-prohibited" },
	};

	ipt_af = AF_INET6;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[100];

		snprintf(want, sizeof(want), " --reject-with %s", cases[i][1]);
		OK_SAVE(t("REJECT", cases[i][0]), want);
		snprintf(want, sizeof(want), " reject-with %s", cases[i][1]);
		ck_assert_str_eq(R.print, want);
	}
	FAIL_MSG(t("REJECT", "--reject-with icmp-port-unreachable"), 2,
		 "unknown reject type \"icmp-port-unreachable\"");
	FAIL_MSG(t("REJECT", "--reject-with tcp-rst"), 2, "unknown reject type \"tcp-rst\"");
	FAIL_MSG(t("REJECT", "--reject-with echo-reply"), 2, "unknown reject type \"echo-reply\"");
	struct ipt_ip tcp = { .proto = 6, .flags = IP6T_F_PROTO };
	ck_assert_int_eq(t("REJECT", "--reject-with tcp-reset"), -1);
	ck_assert_int_eq(R.err.code, 1);
	ck_assert_int_eq(run_ext(&R, "REJECT", true, &tcp, NULL, 0,
				 split("--reject-with tcp-reset")), 0);
	ck_assert_str_eq(R.save, " --reject-with tcp-reset");
	ipt_af = AF_INET;
}
END_TEST

START_TEST(iprange6_recent6_oracle)
{
	ipt_af = AF_INET6;
	OK_SAVE(m("iprange", "--src-range 2001:db8::1-2001:db8::ff ! --dst-range ::1"),
		" --src-range 2001:db8::1-2001:db8::ff ! --dst-range ::1-::1");
	ck_assert_str_eq(R.print, " source IP range 2001:db8::1-2001:db8::ff destination IP range ! ::1-::1");
	FAIL_MSG(m("iprange", "--src-range 10.0.0.1-10.0.0.2"), 2,
		 "iprange: Bad value for \"--src-range\" option: \"10.0.0.1\"");
	FAIL_MSG(m("iprange", "--dst-range ::1-"), 2, "iprange: Bad value for \"--dst-range\" option: \"\"");
	OK_SAVE(m("recent", "--set"), " --set --name DEFAULT --mask ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff --rsource");
	OK_SAVE(m("recent", "--rcheck --seconds 9 --mask ffff:ffff:: --rdest"),
		" --rcheck --seconds 9 --name DEFAULT --mask ffff:ffff:: --rdest");
	ck_assert_str_eq(R.print, " recent: CHECK seconds: 9 name: DEFAULT side: dest mask: ffff:ffff::");
	ipt_af = AF_INET;
	/* IPv4 unchanged */
	OK_SAVE(m("recent", "--set"), " --set --name DEFAULT --mask 255.255.255.255 --rsource");
}
END_TEST

/* ---- LOG (libipt_LOG.t) ---- */
START_TEST(log_t_cases)
{
	OK_SAVE(t("LOG", ""), "");
	OK_SAVE(t("LOG", "--log-prefix 'test: '"), " --log-prefix \"test: \"");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-level 1"),
		" --log-prefix \"test: \" --log-level 1");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-level alert"),
		" --log-prefix \"test: \" --log-level 1");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-tcp-sequence"),
		" --log-prefix \"test: \" --log-tcp-sequence");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-tcp-options"),
		" --log-prefix \"test: \" --log-tcp-options");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-ip-options"),
		" --log-prefix \"test: \" --log-ip-options");
	OK_SAVE(t("LOG", "--log-prefix 'test: ' --log-uid"), " --log-prefix \"test: \" --log-uid");
	FAIL_MSG(t("LOG", "--log-prefix 'test: ' --log-level bad"), 2,
		 "log level \"bad\" unknown\n");
	/* "-j LOG --log-prefix" (no argument) is the scanner's error */
}
END_TEST

START_TEST(log_oracle)
{
	ck_assert_int_eq(t("LOG", ""), 0);
	ck_assert_str_eq(R.print_names, " LOG level warn");
	ck_assert_str_eq(R.print, " LOG flags 0 level 4");
	static const char *const levels[][3] = {
		{ "7", " --log-level 7", "debug" }, { "debug", " --log-level 7", "debug" },
		{ "emerg", " --log-level 0", "emerg" }, { "panic", " --log-level 0", "emerg" },
		{ "error", " --log-level 3", "err" }, { "warning", "", "warn" },
		{ "crit", " --log-level 2", "crit" }, { "notice", " --log-level 5", "notice" },
		{ "info", " --log-level 6", "info" }, { "alert", " --log-level 1", "alert" },
		{ "4", "", "warn" }, { "0x3", " --log-level 3", "err" },
		{ "' 3'", " --log-level 3", "err" },
	};
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		char line[100], want[100];

		snprintf(line, sizeof(line), "--log-level %s", levels[i][0]);
		OK_SAVE(t("LOG", line), levels[i][1]);
		snprintf(want, sizeof(want), " LOG level %s", levels[i][2]);
		ck_assert_str_eq(R.print_names, want);
	}
	static const char *const bad[] = { "8", "warn", "DEBUG", "deb", "none", "255", "err" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[100], want[100];

		snprintf(line, sizeof(line), "--log-level %s", bad[i]);
		snprintf(want, sizeof(want), "log level \"%s\" unknown\n", bad[i]);
		FAIL_MSG(t("LOG", line), 2, want);
	}
	char *p29 = repeat('p', 29), line[100], want[100];
	snprintf(line, sizeof(line), "--log-prefix %s", p29);
	snprintf(want, sizeof(want), " --log-prefix %s", p29);
	OK_SAVE(t("LOG", line), want);
	snprintf(line, sizeof(line), "--log-prefix %sqq", p29);	/* cut to 29 */
	OK_SAVE(t("LOG", line), want);
	snprintf(want, sizeof(want), " LOG level warn prefix \"%s\"", p29);
	ck_assert_str_eq(R.print_names, want);
	free(p29);
	FAIL_MSG(t("LOG", "--log-prefix ''"), 2,
		 "Argument must have a minimum length of 1 characters\n");
	const char *nl[] = { "--log-prefix", "a\nb", NULL };
	FAIL_MSG(run_ext(&R, "LOG", true, NULL, NULL, 0, nl), 2,
		 "Newlines not allowed in --log-prefix");
	FAIL_MSG(t("LOG", "--log-prefix a --log-prefix b"), 2,
		 "LOG: option \"--log-prefix\" can only be used once.\n");
	FAIL_MSG(t("LOG", "--log-uid --log-uid"), 2,
		 "LOG: option \"--log-uid\" can only be used once.\n");
	FAIL_MSG(t("LOG", "! --log-uid"), 2, "LOG: option \"--log-uid\" cannot be inverted.\n");

	OK_SAVE(t("LOG", "--log-macdecode --log-uid --log-ip-options --log-tcp-options "
		  "--log-tcp-sequence --log-level 0 --log-prefix z"),
		" --log-prefix z --log-level 0 --log-tcp-sequence --log-tcp-options "
		"--log-ip-options --log-uid --log-macdecode");
	ck_assert_str_eq(R.print_names, " LOG level emerg tcp-sequence tcp-options ip-options "
			 "uid macdecode prefix \"z\"");
	ck_assert_str_eq(R.print, " LOG flags 47 level 0 prefix \"z\"");
	OK_SAVE(t("LOG", "--log-prefix 'a b' --log-level 3 --log-uid"),
		" --log-prefix \"a b\" --log-level 3 --log-uid");
	ck_assert_str_eq(R.print_names, " LOG level err uid prefix \"a b\"");
	ck_assert_str_eq(R.print, " LOG flags 8 level 3 prefix \"a b\"");
}
END_TEST

/* ---- NFLOG ---- */
START_TEST(nflog_oracle)
{
	static const char *const cases[][3] = {
		{ "", "", "" },
		{ "--nflog-group 1 --nflog-threshold 5", " --nflog-group 1 --nflog-threshold 5",
		  " nflog-group 1 nflog-threshold 5" },
		{ "--nflog-group 65535", " --nflog-group 65535", " nflog-group 65535" },
		{ "--nflog-prefix abc", " --nflog-prefix abc", " nflog-prefix abc" },
		{ "--nflog-range 100", " --nflog-range 100", " nflog-range 100" },
		{ "--nflog-range 0", "", "" },
		{ "--nflog-size 100", " --nflog-size 100", " nflog-size 100" },
		{ "--nflog-size 0", " --nflog-size 0", " nflog-size 0" },
		{ "--nflog-threshold 0", "", "" },
		{ "--nflog-threshold 1", " --nflog-threshold 1", " nflog-threshold 1" },
		{ "--nflog-group 0", "", "" },
		{ "--nflog-size 4294967295", " --nflog-size 4294967295", " nflog-size 4294967295" },
		{ "--nflog-threshold 2 --nflog-size 3 --nflog-prefix 'x\"y' --nflog-group 4",
		  " --nflog-prefix \"x\\\"y\" --nflog-group 4 --nflog-size 3 --nflog-threshold 2",
		  " nflog-prefix \"x\\\"y\" nflog-group 4 nflog-size 3 nflog-threshold 2" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(t("NFLOG", cases[i][0]) == 0, "%s: %s", cases[i][0], R.err.msg);
		ck_assert_str_eq(R.save, cases[i][1]);
		ck_assert_str_eq(R.print, cases[i][2]);
	}
	char *p = repeat('p', 70), line[100], want[100];
	snprintf(line, sizeof(line), "--nflog-prefix %s", p);
	p[63] = '\0';
	snprintf(want, sizeof(want), " --nflog-prefix %s", p);
	OK_SAVE(t("NFLOG", line), want);
	free(p);
	FAIL_MSG(t("NFLOG", "--nflog-group 65536"), 2,
		 "NFLOG: bad value for option \"--nflog-group\", or out of range (0-65535).\n");
	FAIL_MSG(t("NFLOG", "--nflog-threshold 65536"), 2,
		 "NFLOG: bad value for option \"--nflog-threshold\", or out of range (0-65535).\n");
	FAIL_MSG(t("NFLOG", "--nflog-size 4294967296"), 2,
		 "NFLOG: bad value for option \"--nflog-size\", or out of range (0-4294967295).\n");
	FAIL_MSG(t("NFLOG", "--nflog-prefix ''"), 2,
		 "Argument must have a minimum length of 1 characters\n");
	FAIL_MSG(t("NFLOG", "--nflog-size 200 --nflog-range 100"), 2,
		 "NFLOG: option \"--nflog-range\" cannot be used together with \"--nflog-size\".\n");
	FAIL_MSG(t("NFLOG", "--nflog-group 1 --nflog-group 2"), 2,
		 "NFLOG: option \"--nflog-group\" can only be used once.\n");
	FAIL_MSG(t("NFLOG", "! --nflog-group 1"), 2,
		 "NFLOG: option \"--nflog-group\" cannot be inverted.\n");
}
END_TEST

/* ---- TCPMSS ---- */
static const char *fake_tcp_text;

static void fake_tcp_save(struct strbuf *sb, const void *data, const struct ipt_ip *ip)
{
	(void)data;
	(void)ip;
	sb_adds(sb, fake_tcp_text);
}

static const struct ipt_ext fake_tcp = { .name = "tcp", .save = fake_tcp_save };

static int tcpmss(const char *tcp_save, const struct ipt_ip *ip, const char *line)
{
	struct ipt_match mt = { &fake_tcp, NULL };

	fake_tcp_text = tcp_save;
	return run_ext(&R, "TCPMSS", true, ip, tcp_save ? &mt : NULL, tcp_save ? 1 : 0,
		       split(line));
}

START_TEST(tcpmss_oracle)
{
	struct ipt_ip tcp = { .proto = 6 }, any = { 0 }, ntcp = { .proto = 6,
							      .invflags = IPT_INV_PROTO };
	const char *syn = " --tcp-flags SYN,RST SYN";

	ck_assert_int_eq(tcpmss(syn, &tcp, "--clamp-mss-to-pmtu"), 0);
	ck_assert_str_eq(R.save, " --clamp-mss-to-pmtu");
	ck_assert_str_eq(R.print, " TCPMSS clamp to PMTU");
	ck_assert_uint_eq(R.ext->hooks_of(R.data), IPT_HOOK_FORWARD | IPT_HOOK_OUTPUT);
	ck_assert_int_eq(tcpmss(syn, &tcp, "--set-mss 1400"), 0);
	ck_assert_str_eq(R.save, " --set-mss 1400");
	ck_assert_str_eq(R.print, " TCPMSS set 1400");
	ck_assert_uint_eq(R.ext->hooks_of(R.data), 0);
	ck_assert_int_eq(tcpmss(" --tcp-flags FIN,SYN,RST,ACK SYN", &tcp, "--set-mss 0"), 0);
	ck_assert_str_eq(R.save, " --set-mss 0");
	ck_assert_int_eq(tcpmss(" --dport 5 --tcp-flags SYN SYN", &tcp, "--set-mss ' 0x10'"), 0);
	ck_assert_str_eq(R.save, " --set-mss 16");
	ck_assert_int_eq(tcpmss(syn, &tcp, "--set-mss 1400 --clamp-mss-to-pmtu"), 0);
	ck_assert_str_eq(R.save, " --clamp-mss-to-pmtu");
	ck_assert_int_eq(tcpmss(syn, &tcp, "--clamp-mss-to-pmtu --set-mss 1400"), 0);
	ck_assert_str_eq(R.save, " --set-mss 1400");

	FAIL_MSG(tcpmss(syn, &tcp, ""), 2, "TCPMSS target: At least one parameter is required");
	FAIL_MSG(tcpmss(syn, &tcp, "--set-mss 65516"), 2,
		 "TCPMSS: bad value for option \"--set-mss\", or out of range (0-65515).\n");
	FAIL_MSG(tcpmss(syn, &tcp, "--set-mss 1 --set-mss 2"), 2,
		 "TCPMSS: option \"--set-mss\" can only be used once.\n");
	FAIL_MSG(tcpmss(syn, &tcp, "--clamp-mss-to-pmtu --clamp-mss-to-pmtu"), 2,
		 "TCPMSS: option \"--clamp-mss-to-pmtu\" can only be used once.\n");
	FAIL_MSG(tcpmss(syn, &tcp, "! --set-mss 1"), 2,
		 "TCPMSS: option \"--set-mss\" cannot be inverted.\n");

	/* kernel refusals: exit 1 */
	const struct {
		const char *tcp;
		const struct ipt_ip *ip;
	} bad[] = {
		{ NULL, &any },				/* -j TCPMSS --set-mss 1400 */
		{ NULL, &tcp },				/* -p tcp, no tcp match */
		{ " ! --tcp-flags SYN,RST SYN", &tcp },
		{ " --tcp-flags SYN,RST RST", &tcp },
		{ " --tcp-flags SYN NONE", &tcp },
		{ " --dport 22", &tcp },
		{ " --tcp-flags SYN SYN", &ntcp },	/* ! -p tcp */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(tcpmss(bad[i].tcp, bad[i].ip, "--set-mss 1"), -1);
		ck_assert_int_eq(R.err.code, 1);
		ck_assert_int_eq(R.err.style, IPT_ES_IPTC);
		ck_assert_ptr_nonnull(strstr(R.err.msg, "Invalid argument"));
	}
	ck_assert_int_eq(tcpmss(" --tcp-flags FIN,SYN,RST,PSH,ACK,URG SYN", &tcp, "--set-mss 1"),
			 0);
}
END_TEST

/* The same with the real tcp match when it is linked in (not the stub of a partial build). */
START_TEST(tcpmss_real_tcp)
{
	const struct ipt_ext *tcpx = ipt_ext_find("tcp", false);
	struct ipt_ip tcp = { .proto = 6 };
	static const struct {
		const char *tcp;
		int rc;
	} cases[] = {
		{ "--tcp-flags SYN,RST SYN", 0 },
		{ "--syn", 0 },
		{ "--tcp-flags ALL SYN", 0 },
		{ "--dport 5", -1 },
		{ "! --tcp-flags SYN,RST SYN", -1 },
		{ "--tcp-flags SYN,RST RST", -1 },
		{ "--tcp-flags SYN NONE", -1 },
	};

	if (!tcpx || !tcpx->parse)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run tr;
		struct ipt_match mt;

		ck_assert_int_eq(run_ext(&tr, "tcp", false, &tcp, NULL, 0, split(cases[i].tcp)), 0);
		mt.ext = tr.ext;
		mt.data = tr.data;
		ck_assert_msg(run_ext(&R, "TCPMSS", true, &tcp, &mt, 1,
				      split("--clamp-mss-to-pmtu")) == cases[i].rc, "%s", cases[i].tcp);
	}
}
END_TEST

START_TEST(save_string_quoting)
{
	struct strbuf sb = STRBUF_INIT;

	ipt_save_string(&sb, "foo");
	ck_assert_str_eq(sb_str(&sb), "foo");
	sb_reset(&sb);
	ipt_save_string(&sb, "");
	ck_assert_str_eq(sb_str(&sb), "\"\"");
	sb_reset(&sb);
	ipt_save_string(&sb, "a'b\"c\\d e");
	ck_assert_str_eq(sb_str(&sb), "\"a\\'b\\\"c\\\\d e\"");
	sb_free(&sb);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ext_misc");
	TCase *tc = tcase_create("all");

	tcase_add_test(tc, iprange_t_cases);
	tcase_add_test(tc, reject6_oracle);
	tcase_add_test(tc, iprange6_recent6_oracle);
	tcase_add_test(tc, iprange_oracle);
	tcase_add_test(tc, comment_t_cases);
	tcase_add_test(tc, comment_oracle);
	tcase_add_test(tc, limit_t_cases);
	tcase_add_test(tc, limit_oracle);
	tcase_add_test(tc, mark_t_cases);
	tcase_add_test(tc, mark_oracle);
	tcase_add_test(tc, length_t_cases);
	tcase_add_test(tc, length_oracle);
	tcase_add_test(tc, mac_t_cases);
	tcase_add_test(tc, mac_oracle);
	tcase_add_test(tc, reject_t_cases);
	tcase_add_test(tc, reject_oracle);
	tcase_add_test(tc, log_t_cases);
	tcase_add_test(tc, log_oracle);
	tcase_add_test(tc, nflog_oracle);
	tcase_add_test(tc, tcpmss_oracle);
	tcase_add_test(tc, tcpmss_real_tcp);
	tcase_add_test(tc, save_string_quoting);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
