// SPDX-License-Identifier: GPL-2.0
/*
 * The binary snapshot of the saved state (controlplane/snapshot.c): every
 * extension's payload survives the round trip byte for byte (a table built from
 * every filter-table case of the upstream conformance files plus a restore file
 * that uses every extension), the printed text is unchanged, and a truncated or
 * damaged snapshot is refused with an error that names the file.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ext.h"
#include "restore.h"
#include "save.h"
#include "snapshot.h"
#include "state.h"

/* Every extension at least once, with counters, a user chain named with 31
 * characters (-E allows it), interfaces and inversions. */
static const char every_ext[] =
	"*filter\n"
	":INPUT DROP [7:8]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [1:2]\n"
	":aaa - [0:0]\n:zz - [0:0]\n"
	"[1:2] -A FORWARD -s 10.0.0.0/8 ! -d 192.0.2.1/32 -i eth+ ! -o lo -p tcp -m tcp --sport 1:2 --dport 22 --tcp-flags SYN,ACK SYN --tcp-option 2 -j ACCEPT\n"
	"[3:4] -A INPUT -p udp -m udp ! --dport 53 -j aaa\n"
	"-A INPUT -p icmp -m icmp --icmp-type 8/0 -j DROP\n"
	"-A INPUT -p tcp -m multiport --dports 1,2:3,4 -j RETURN\n"
	"-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED --ctproto 6 --ctorigsrc 1.2.3.4 -j ACCEPT\n"
	"-A INPUT -m state --state NEW -m iprange --src-range 1.1.1.1-1.1.1.9 -j ACCEPT\n"
	"-A INPUT -m comment --comment \"a b\" -m limit --limit 3/min --limit-burst 7 -m mark --mark 0x1/0xff\n"
	"-A INPUT -m length --length 10:20 -m mac --mac-source 00:11:22:33:44:55 -m addrtype --dst-type LOCAL\n"
	"-A INPUT -m recent --name x --rcheck --seconds 60 -j REJECT --reject-with tcp-reset -p tcp\n"
	"-A INPUT -f -j LOG --log-prefix \"p \" --log-level 7 --log-tcp-options\n"
	"-A OUTPUT -j NFLOG --nflog-group 3 --nflog-prefix q\n"
	"-A OUTPUT -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu\n"
	"-A aaa -g zz\n"
	"-A zz -p 47\n"
	"COMMIT\n";

static const char *conf_dir(void)
{
	const char *d = getenv("IPT_CONFORMANCE_DIR");

	return d && *d ? d : "../shared/conformance";
}

/* Append every filter-table OK/NOMATCH case of one .t file that this build
 * accepts (to the chains of its header); returns how many were added. */
static int add_t_file(struct ipt_table **t, const char *path)
{
	struct ipt_restore_opts o = { .noflush = true, .prog = "test" };
	char line[2048], chains[2048] = "INPUT", text[4200];
	bool filter = true;
	int added = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '*')
			filter = !strcmp(line, "*filter");
		if (line[0] == ':')
			snprintf(chains, sizeof(chains), "%s", line + 1);
		if (!*line || strchr("#:@%*", *line) || !filter || !strchr(line, ';'))
			continue;
		*strchr(line, ';') = '\0';
		char ch[2048], *save = NULL;

		snprintf(ch, sizeof(ch), "%s", chains);
		for (char *c = strtok_r(ch, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			struct ipt_err err = { 0 };
			unsigned int eline;

			snprintf(text, sizeof(text), "*filter\n-A %s %s\nCOMMIT\n", c, line);
			ipt_warnings_quiet = true;
			if (!ipt_restore(text, strlen(text), t, &o, &err, &eline))
				added++;
		}
	}
	fclose(f);
	return added;
}

static bool have_conformance;

static void build_table(struct ipt_table **t)
{
	struct ipt_restore_opts o = { .counters = true, .prog = "test", .state = true };
	struct ipt_err err = { 0 };
	unsigned int line;
	char dir[512];
	DIR *d;

	ipt_table_new(t);
	ck_assert_msg(!ipt_restore(every_ext, strlen(every_ext), t, &o, &err, &line),
		      "line %u: %s", line, err.msg);
	snprintf(dir, sizeof(dir), "%s/iptables-t", conf_dir());
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "note: %s not found, the conformance cases are left out\n", dir);
		return;
	}
	int n = 0;

	for (struct dirent *e; (e = readdir(d));) {
		char path[1024];

		if (!strstr(e->d_name, ".t"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n += add_t_file(t, path);
	}
	closedir(d);
	ck_assert_int_gt(n, 100);
	have_conformance = true;
}

static void text_of(const struct ipt_table *t, struct strbuf *sb)
{
	sb_reset(sb);
	ipt_save_table(sb, t, true);
}

START_TEST(round_trip_every_extension)
{
	static const char *const names[] = {
		"tcp", "udp", "icmp", "multiport", "conntrack", "state", "iprange", "comment",
		"limit", "mark", "length", "mac", "addrtype", "recent",
		"REJECT", "LOG", "NFLOG", "TCPMSS",
	};
	struct ipt_table *t, *t2 = NULL;
	struct strbuf snap = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	unsigned int nrules = 0;
	char why[256];

	build_table(&t);
	ipt_snap_write(&snap, t, 42);
	ck_assert_uint_eq(ipt_snap_tag(snap.buf, snap.len), 42);
	ck_assert_msg(!ipt_snap_read(snap.buf, snap.len, &t2, why, sizeof(why)), "%s", why);
	text_of(t, &a);
	text_of(t2, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	/* the same model: payloads byte for byte, counters, chains */
	ck_assert_uint_eq(t2->nchains, t->nchains);
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i], *c2 = t2->chains[i];

		ck_assert_str_eq(c2->name, c->name);
		ck_assert(c2->policy == c->policy && c2->pcnt == c->pcnt && c2->bcnt == c->bcnt);
		ck_assert_uint_eq(c2->nrules, c->nrules);
		for (unsigned int j = 0; j < c->nrules; j++) {
			ck_assert(ipt_rule_equal(c->rules[j], c2->rules[j]));
			ck_assert(c2->rules[j]->pcnt == c->rules[j]->pcnt &&
				  c2->rules[j]->bcnt == c->rules[j]->bcnt);
			ck_assert_uint_eq(c2->rules[j]->cidx, IPT_NO_CIDX);
			nrules++;
		}
	}
	ck_assert_uint_gt(nrules, have_conformance ? 100 : 10);
	/* every extension of the registry is in there */
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const struct ipt_ext *e = ipt_ext_find(names[k], names[k][0] <= 'Z');
		bool seen = false;

		ck_assert_ptr_nonnull(e);
		for (unsigned int i = 0; i < t->nchains && !seen; i++)
			for (unsigned int j = 0; j < t->chains[i]->nrules && !seen; j++) {
				const struct ipt_rule *r = t->chains[i]->rules[j];

				seen = r->target.ext == e;
				for (unsigned int m = 0; m < r->nmatches; m++)
					seen |= r->matches[m].ext == e;
			}
		ck_assert_msg(seen, "no rule uses %s", names[k]);
	}
	/* and the snapshot of the copy is the same file */
	struct strbuf snap2 = STRBUF_INIT;

	ipt_snap_write(&snap2, t2, 42);
	ck_assert_uint_eq(snap2.len, snap.len);
	ck_assert(!memcmp(snap2.buf, snap.buf, snap.len));
	sb_free(&snap);
	sb_free(&snap2);
	sb_free(&a);
	sb_free(&b);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* Every truncation, every flipped byte, a wrong magic or version: an error,
 * never a crash, and the table passed in stays as it was. */
START_TEST(corrupt_snapshots_rejected)
{
	struct ipt_table *t, *t2;
	struct strbuf snap = STRBUF_INIT;
	char why[256];

	build_table(&t);
	ipt_snap_write(&snap, t, 7);
	ipt_table_new(&t2);
	struct ipt_table *keep = t2;

	for (size_t n = 0; n < snap.len; n += (n < 4096 ? 1 : 97)) {
		why[0] = '\0';
		ck_assert_int_eq(ipt_snap_read(snap.buf, n, &t2, why, sizeof(why)), -1);
		ck_assert_msg(why[0], "no reason for a truncation at %zu", n);
	}
	for (size_t n = 0; n < snap.len; n += (n < 4096 ? 1 : 89)) {
		snap.buf[n] ^= 0x5a;
		ck_assert_msg(ipt_snap_read(snap.buf, snap.len, &t2, why, sizeof(why)) == -1,
			      "byte %zu flipped: accepted", n);
		snap.buf[n] ^= 0x5a;
	}
	/* one more byte at the end */
	sb_addn(&snap, "", 1);
	ck_assert_int_eq(ipt_snap_read(snap.buf, snap.len, &t2, why, sizeof(why)), -1);
	ck_assert_ptr_eq(t2, keep);
	ck_assert_uint_eq(t2->nchains, 3);
	sb_free(&snap);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* The snapshot's checksum (snapshot.h), to forge files whose damage only the
 * structure checks can see. */
static void reseal(struct strbuf *snap)
{
	__u32 version, tag;
	__u64 h, w;
	const unsigned char *p = (const unsigned char *)snap->buf + 32;
	size_t n = snap->len - 32, i = 0;

	memcpy(&version, snap->buf + 8, 4);
	memcpy(&tag, snap->buf + 12, 4);
	h = 0xcbf29ce484222325ull ^ ((__u64)version << 32 | tag);
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	memcpy(snap->buf + 24, &h, 8);
}

/* Damage that passes the checksum (the lengths, counts, indexes and names inside):
 * read fails or builds a table, never crashes (CK_FORK runs it in a child). */
START_TEST(forged_snapshots_never_crash)
{
	struct ipt_table *t, *t2 = NULL;
	struct strbuf snap = STRBUF_INIT, bad = STRBUF_INIT;
	unsigned int seed = 1, ok = 0, refused = 0;
	char why[256];

	build_table(&t);
	ipt_snap_write(&snap, t, 3);
	for (int i = 0; i < 20000; i++) {
		sb_reset(&bad);
		sb_addn(&bad, snap.buf, snap.len);
		for (int k = 0; k < 1 + i % 3; k++) {
			size_t at = 32 + (size_t)rand_r(&seed) % (snap.len - 32);

			bad.buf[at] = (char)(i & 1 ? rand_r(&seed) : bad.buf[at] ^ (1 << (i % 8)));
		}
		reseal(&bad);
		if (ipt_snap_read(bad.buf, bad.len, &t2, why, sizeof(why)))
			refused++;
		else
			ok++;
	}
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_eq(ok + refused, 20000);
	sb_free(&snap);
	sb_free(&bad);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

static void write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/* A test's state directory and every file in it. */
static void rm_state_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			ck_assert_int_eq(unlinkat(dirfd(d), de->d_name, 0), 0);
	closedir(d);
	ck_assert_int_eq(rmdir(dir), 0);
}

/* Through the state: a command reads the snapshot, an old text "rules" only when
 * there is none, and a damaged snapshot is an error naming the file. */
START_TEST(state_reads_snapshot_and_text)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[600];
	struct ipt_state st = { 0 };
	struct ipt_err err = { 0 };
	struct ipt_table *t = NULL, *t2 = NULL;
	struct strbuf snap = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("BPF_IPTABLES_STATE_DIR", dir, 1);
	setenv("BPF_IPTABLES_DATAPLANE", "off", 1);
	build_table(&t);
	text_of(t, &a);

	/* an older version's text file: read, tag kept */
	snprintf(path, sizeof(path), "%s/rules", dir);
	sb_addf(&snap, "# tag 5\n");
	ipt_save_table_state(&snap, t);
	write_file(path, snap.buf, snap.len);
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_int_eq(ipt_state_lock(&st, false, 0, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &t2, &err), "%s", err.msg);
	ck_assert_uint_eq(st.tag, 5);
	text_of(t2, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	/* a change writes the snapshot and drops the text */
	ck_assert_int_eq(ipt_state_prepare(&st, t2, &err), 0);
	ck_assert_int_eq(ipt_state_commit(&st, true, &err), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	ipt_table_free(&t2);
	ck_assert_msg(!ipt_state_load(&st, &t2, &err), "%s", err.msg);
	ck_assert_uint_eq(st.tag, 6);
	text_of(t2, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	/* a change over the snapshot (the names exchanged, the older file
	 * unlinked): the new one in force, no ".new" left */
	ck_assert_int_eq(ipt_state_prepare(&st, t2, &err), 0);
	ck_assert_int_eq(ipt_state_commit(&st, true, &err), 0);
	snprintf(path, sizeof(path), "%s/snapshot.new", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	ipt_table_free(&t2);
	ck_assert_msg(!ipt_state_load(&st, &t2, &err), "%s", err.msg);
	ck_assert_uint_eq(st.tag, 7);
	/* killed between the exchange and the unlink: the older ruleset is the
	 * ".new", which the next writer deletes; the snapshot stays in force */
	sb_reset(&snap);
	ipt_snap_write(&snap, t, 6);
	write_file(path, snap.buf, snap.len);
	ipt_table_free(&t2);
	ck_assert_msg(!ipt_state_load(&st, &t2, &err), "%s", err.msg);
	ck_assert_uint_eq(st.tag, 7);
	ck_assert_int_eq(access(path, F_OK), -1);
	text_of(t2, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ipt_state_close(&st);

	/* a snapshot cut in half: every command refuses it, naming the file */
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	sb_reset(&snap);
	ipt_snap_write(&snap, t, 9);
	write_file(path, snap.buf, snap.len / 2);
	memset(&err, 0, sizeof(err));
	ipt_table_free(&t2);
	ck_assert_int_eq(ipt_state_load(&st, &t2, &err), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "is corrupt") &&
		      strstr(err.msg, "truncated"), "%s", err.msg);
	/* garbage */
	write_file(path, "garbage\n", 8);
	memset(&err, 0, sizeof(err));
	ipt_table_free(&t2);
	ck_assert_int_eq(ipt_state_load(&st, &t2, &err), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "is corrupt"), "%s", err.msg);
	/* empty */
	write_file(path, "", 0);
	memset(&err, 0, sizeof(err));
	ipt_table_free(&t2);
	ck_assert_int_eq(ipt_state_load(&st, &t2, &err), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "is corrupt"), "%s", err.msg);

	rm_state_dir(dir);
	sb_free(&snap);
	sb_free(&a);
	sb_free(&b);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* ---- IPv6 (bpf-ip6tables): 16-byte addresses, the family in the header ---- */

static const char every_ext6[] =
	"*filter\n"
	":INPUT DROP [7:8]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [1:2]\n"
	":aaa - [0:0]\n"
	"[1:2] -A FORWARD -s 2001:db8::/32 ! -d 2001:db8:ffff:ffff:ffff:ffff:ffff:fffe/128 -i eth+ -p tcp -m tcp --dport 22 -j ACCEPT\n"
	"-A INPUT -s 2001::/ffff:0:ffff:: -d ::ffff:10.0.0.0/104 -j aaa\n"
	"-A INPUT -p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3 -j DROP\n"
	"-A INPUT -p all -j ACCEPT\n"
	"-A INPUT -m conntrack --ctstate ESTABLISHED --ctorigsrc 2001:db8::1/64 ! --ctrepldst ::1 -j ACCEPT\n"
	"-A INPUT -m iprange --src-range 2001:db8::1-2001:db8::ff ! --dst-range ::1-::2 -j ACCEPT\n"
	"-A INPUT -m recent --name x --rcheck --seconds 60 --mask ffff:ffff:: -j REJECT --reject-with icmp6-adm-prohibited\n"
	"-A INPUT -p tcp -j REJECT --reject-with tcp-reset\n"
	"-A aaa -j LOG --log-prefix \"v6 \"\n"
	"COMMIT\n";

/* A table of the other family never reads as this one's, and an IPv4 snapshot
 * is the version-1 file it always was. */
START_TEST(round_trip_ipv6)
{
	struct ipt_restore_opts o = { .prog = "test" };
	struct ipt_table *t = NULL, *t2 = NULL;
	struct strbuf snap = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	struct ipt_err err = { 0 };
	unsigned int line = 0;
	__u32 version;
	char why[256];

	ipt_af = AF_INET6;
	ipt_table_new(&t);
	ck_assert_msg(!ipt_restore(every_ext6, sizeof(every_ext6) - 1, &t, &o, &err, &line),
		      "line %u: %s", line, err.msg);
	ck_assert_int_eq(t->family, AF_INET6);
	ipt_snap_write(&snap, t, 7);
	memcpy(&version, snap.buf + 8, 4);
	ck_assert_uint_eq(version, IPT_SNAP_VERSION | IPT_SNAP_FAMILY6);
	ck_assert_msg(!ipt_snap_read(snap.buf, snap.len, &t2, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(t2->family, AF_INET6);
	text_of(t, &a);
	text_of(t2, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ck_assert_msg(strstr(sb_str(&a), "-s 2001::/ffff:0:ffff:: -d ::ffff:10.0.0.0/104"), "%s",
		      sb_str(&a));
	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++)
			ck_assert(ipt_rule_equal(t->chains[i]->rules[j], t2->chains[i]->rules[j]));
	ipt_table_free(&t);
	ipt_table_free(&t2);

	/* an IPv4 table: version 1, read back as family 4 */
	ipt_af = AF_INET;
	build_table(&t);
	sb_reset(&snap);
	ipt_snap_write(&snap, t, 7);
	memcpy(&version, snap.buf + 8, 4);
	ck_assert_uint_eq(version, 1);
	ck_assert_msg(!ipt_snap_read(snap.buf, snap.len, &t2, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(t2->family, AF_INET);
	sb_free(&snap);
	sb_free(&a);
	sb_free(&b);
	ipt_table_free(&t);
	ipt_table_free(&t2);
}
END_TEST

/* The two families in one state directory: each its own file, neither
 * disturbs the other. */
START_TEST(state_per_family)
{
	char dir[] = "/tmp/test_snapshot6.XXXXXX", path[600];
	struct ipt_state st = { 0 };
	struct ipt_err err = { 0 };
	struct ipt_restore_opts o = { .prog = "test" };
	struct ipt_table *t4 = NULL, *t6 = NULL, *r = NULL;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	unsigned int line = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("BPF_IPTABLES_STATE_DIR", dir, 1);
	setenv("BPF_IPTABLES_DATAPLANE", "off", 1);
	build_table(&t4);
	ipt_af = AF_INET6;
	ipt_table_new(&t6);
	ck_assert(!ipt_restore(every_ext6, sizeof(every_ext6) - 1, &t6, &o, &err, &line));

	/* IPv4 first */
	ipt_af = AF_INET;
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_int_eq(ipt_state_lock(&st, false, 0, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	ipt_table_free(&r);
	ck_assert_int_eq(ipt_state_prepare(&st, t4, &err), 0);
	ck_assert_int_eq(ipt_state_commit(&st, true, &err), 0);
	ipt_state_close(&st);
	/* then IPv6: an empty IPv6 table at first, whatever IPv4 holds */
	ipt_af = AF_INET6;
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_int_eq(ipt_state_lock(&st, false, 0, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	ck_assert_int_eq(r->family, AF_INET6);
	for (unsigned int i = 0; i < r->nchains; i++)
		ck_assert_uint_eq(r->chains[i]->nrules, 0);
	ipt_table_free(&r);
	ck_assert_int_eq(ipt_state_prepare(&st, t6, &err), 0);
	ck_assert_int_eq(ipt_state_commit(&st, true, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	text_of(t6, &a);
	text_of(r, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ipt_table_free(&r);
	ipt_state_close(&st);
	snprintf(path, sizeof(path), "%s/snapshot6", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	/* IPv4 still reads its own */
	ipt_af = AF_INET;
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	ck_assert_int_eq(r->family, AF_INET);
	text_of(t4, &a);
	text_of(r, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ipt_table_free(&r);
	ipt_state_close(&st);
	/* an IPv4 snapshot where the IPv6 one belongs is refused, naming the file */
	{
		struct strbuf snap = STRBUF_INIT;
		FILE *f = fopen(path, "w");

		ipt_snap_write(&snap, t4, 3);
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(snap.buf, 1, snap.len, f), snap.len);
		fclose(f);
		sb_free(&snap);
	}
	ipt_af = AF_INET6;
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(ipt_state_load(&st, &r, &err), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "an IPv4 table"), "%s", err.msg);
	ipt_state_close(&st);
	ipt_af = AF_INET;

	rm_state_dir(dir);
	sb_free(&a);
	sb_free(&b);
	ipt_table_free(&t4);
	ipt_table_free(&t6);
	ipt_table_free(&r);
}
END_TEST

/* A state directory of an earlier boot (its "boot" file names another) is
 * emptied by the first command of this one, under the lock; one of this boot,
 * or one without the file (an older version's), keeps its rules. */
START_TEST(state_of_an_earlier_boot)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[600], id[64];
	static const char *const boot1 = "11111111-1111-1111-1111-111111111111";
	static const char *const boot2 = "22222222-2222-2222-2222-222222222222";
	struct ipt_state st = { 0 };
	struct ipt_err err = { 0 };
	struct ipt_table *t = NULL, *r = NULL;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("BPF_IPTABLES_STATE_DIR", dir, 1);
	setenv("BPF_IPTABLES_DATAPLANE", "off", 1);
	build_table(&t);
	text_of(t, &a);
	snprintf(path, sizeof(path), "%s/boot", dir);

	/* a new directory gets this boot's file; a change is saved as ever */
	setenv("BPF_IPTABLES_BOOT_ID", boot1, 1);
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_int_eq(ipt_state_lock(&st, false, 0, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	ck_assert_int_eq(ipt_state_prepare(&st, t, &err), 0);
	ck_assert_int_eq(ipt_state_commit(&st, true, &err), 0);
	ipt_state_close(&st);
	ipt_table_free(&r);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(id, sizeof(id), f));
	fclose(f);
	ck_assert_str_eq(id, boot1);
	/* without the file (an older version's directory): kept, and it gets one */
	unlink(path);
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	text_of(r, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ipt_table_free(&r);
	/* the same boot again: kept */
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	text_of(r, &b);
	ck_assert_str_eq(sb_str(&b), sb_str(&a));
	ipt_table_free(&r);

	/* another boot: emptied, under the lock (a holder makes the command wait) */
	setenv("BPF_IPTABLES_BOOT_ID", boot2, 1);
	{
		char lpath[600], spath[600], c;
		int lk, pfd[2], status;
		pid_t pid;

		snprintf(lpath, sizeof(lpath), "%s/lock", dir);
		snprintf(spath, sizeof(spath), "%s/snapshot", dir);
		lk = open(lpath, O_RDWR);
		ck_assert_int_ge(lk, 0);
		ck_assert_int_eq(flock(lk, LOCK_EX), 0);
		ck_assert_int_eq(pipe(pfd), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (!pid) {
			struct ipt_state cst = { 0 };

			close(pfd[0]);
			_exit(ipt_state_open(&cst, &err) ? 1 : write(pfd[1], "o", 1) == 1 ? 0 : 2);
		}
		close(pfd[1]);
		usleep(200000);
		ck_assert_int_eq(access(spath, F_OK), 0);
		ck_assert_int_eq(flock(lk, LOCK_UN), 0);
		ck_assert_int_eq(read(pfd[0], &c, 1), 1);
		close(pfd[0]);
		close(lk);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status) && !WEXITSTATUS(status));
		ck_assert_int_eq(access(spath, F_OK), -1);
	}
	ck_assert_int_eq(ipt_state_open(&st, &err), 0);
	ck_assert_msg(!ipt_state_load(&st, &r, &err), "%s", err.msg);
	ck_assert_uint_eq(st.tag, 0);
	ck_assert_uint_eq(r->nchains, 3);
	for (unsigned int i = 0; i < r->nchains; i++)
		ck_assert_uint_eq(r->chains[i]->nrules, 0);
	ipt_table_free(&r);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(id, sizeof(id), f));
	fclose(f);
	ck_assert_str_eq(id, boot2);

	unsetenv("BPF_IPTABLES_BOOT_ID");
	rm_state_dir(dir);
	sb_free(&a);
	sb_free(&b);
	ipt_table_free(&t);
}
END_TEST

/* A table read from a snapshot holds each chain's rules in one block
 * (ipt_chain_slab): deleting, replacing, inserting, flushing and removing them,
 * copying the table and freeing it work as on rules made one by one (a rule of
 * the block freed alone aborts in free()), and both tables save the same bytes.
 * The snapshot is also written after bytes already in the buffer. */
START_TEST(slab_rules_change_like_any)
{
	static const char text[] =
		"*filter\n:INPUT DROP [1:2]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":a - [0:0]\n:b - [0:0]\n"
		"-A INPUT -s 10.0.0.1/32 -j a\n"
		"[5:300] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
		"-A INPUT -m comment --comment x -j LOG --log-prefix \"p \"\n"
		"-A INPUT -d 192.0.2.0/24 -j DROP\n"
		"-A a -d 10.1.0.0/16 -j DROP\n-A a -j b\n"
		"-A b -p udp -j REJECT\n-A b -j RETURN\nCOMMIT\n";
	struct ipt_restore_opts o = { .counters = true, .prog = "test", .state = true };
	struct ipt_table *t[2] = { NULL, NULL }, *copy = NULL;
	struct strbuf snap = STRBUF_INIT, out[3] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	struct ipt_err err = { 0 };
	unsigned int line;
	char why[256];

	ipt_table_new(&t[0]);
	ck_assert_msg(!ipt_restore(text, strlen(text), &t[0], &o, &err, &line), "line %u: %s",
		      line, err.msg);
	sb_adds(&snap, "xyz");
	ipt_snap_write(&snap, t[0], 5);
	ck_assert_uint_eq(ipt_snap_tag(snap.buf + 3, snap.len - 3), 5);
	ck_assert_msg(!ipt_snap_read(snap.buf + 3, snap.len - 3, &t[1], why, sizeof(why)), "%s",
		      why);
	ck_assert_ptr_nonnull(ipt_chain_find(t[1], "INPUT")->slab);
	for (int k = 0; k < 2; k++) {
		struct ipt_chain *in = ipt_chain_find(t[k], "INPUT"), *a = ipt_chain_find(t[k], "a");

		ipt_chain_delete_rule(in, 3);
		ipt_chain_replace_rule(in, 2, ipt_rule_dup(in->rules[1]));
		ipt_chain_replace_rule(in, 1, ipt_rule_dup(a->rules[0]));
		ipt_chain_insert_rule(in, 0, ipt_rule_dup(in->rules[2]));
		ipt_chain_delete_rule(a, 1);
		ipt_chain_flush(ipt_chain_find(t[k], "b"));
		ipt_chain_insert_rule(ipt_chain_find(t[k], "b"), 0, ipt_rule_dup(in->rules[0]));
		ipt_chain_remove(t[k], ipt_chain_find(t[k], "b"));
	}
	ipt_table_copy(t[1], &copy);
	ipt_snap_write(&out[0], t[0], 9);
	ipt_snap_write(&out[1], t[1], 9);
	ipt_snap_write(&out[2], copy, 9);
	for (int k = 1; k < 3; k++) {
		ck_assert_uint_eq(out[k].len, out[0].len);
		ck_assert(!memcmp(out[k].buf, out[0].buf, out[0].len));
	}
	/* INPUT: copies of the tcp rule (its counters too) around the jump and
	 * a's -d rule */
	ck_assert_uint_eq(ipt_chain_find(t[1], "INPUT")->nrules, 4);
	ck_assert_uint_eq(ipt_chain_find(t[1], "INPUT")->rules[0]->pcnt, 5);
	ck_assert_uint_eq(ipt_chain_find(t[1], "INPUT")->rules[3]->pcnt, 5);
	ck_assert_str_eq(ipt_chain_find(t[1], "INPUT")->rules[1]->chain, "a");
	ck_assert_uint_eq(t[1]->nchains, 4);
	for (int k = 0; k < 3; k++)
		sb_free(&out[k]);
	sb_free(&snap);
	ipt_table_free(&t[0]);
	ipt_table_free(&t[1]);
	ipt_table_free(&copy);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_every_extension);
	tcase_add_test(tc, corrupt_snapshots_rejected);
	tcase_add_test(tc, forged_snapshots_never_crash);
	tcase_add_test(tc, state_reads_snapshot_and_text);
	tcase_add_test(tc, round_trip_ipv6);
	tcase_add_test(tc, state_per_family);
	tcase_add_test(tc, slab_rules_change_like_any);
	tcase_add_test(tc, state_of_an_earlier_boot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(snapshot_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);

	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
