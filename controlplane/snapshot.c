// SPDX-License-Identifier: GPL-2.0
/* The binary snapshot of the rule model (see snapshot.h for the format). */
#include "snapshot.h"
#include "ext.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char snap_magic[8] = { 'B', 'P', 'F', 'I', 'P', 'T', 'S', 'S' };

struct snap_hdr {
	char magic[8];
	__u32 version;
	__u32 tag;
	__u64 body_len;
	__u64 sum;
};

/* Which optional parts of a rule follow its "present" byte. */
enum {
	SNAP_R_SRC	= 0x01,		/* src, smsk */
	SNAP_R_DST	= 0x02,		/* dst, dmsk */
	SNAP_R_IN	= 0x04,		/* iniface[16] */
	SNAP_R_OUT	= 0x08,		/* outiface[16] */
	SNAP_R_PROTO	= 0x10,		/* proto, flags, invflags */
	SNAP_R_CNT	= 0x20,		/* pcnt, bcnt */
};

#define SNAP_MAX_EXTS 256	/* distinct extensions in one table (18 exist) */

/* 64-bit FNV-1a over 8-byte words, then the tail: catches a torn or damaged file
 * at about a nanosecond per word. The version and tag seed it, so a damaged tag
 * is caught too (each step is a bijection of h: a different seed always ends
 * different). Not a defence against someone who can write the state directory
 * (state.c refuses such directories). */
static __u64 snap_sum(__u32 version, __u32 tag, const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ull ^ ((__u64)version << 32 | tag), w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- writing ---- */

/* Bytes in place while the buffer has room (sb_addn, a call that writes a NUL
 * each time, only to grow it); ipt_snap_write terminates it at the end. */
static inline void put(struct strbuf *sb, const void *p, size_t n)
{
	if (sb->cap - sb->len > n) {
		memcpy(sb->buf + sb->len, p, n);
		sb->len += n;
	} else {
		sb_addn(sb, p, n);
	}
}

static void put_u8(struct strbuf *sb, __u8 v) { put(sb, &v, 1); }
static void put_u16(struct strbuf *sb, __u16 v) { put(sb, &v, 2); }
static void put_u32(struct strbuf *sb, __u32 v) { put(sb, &v, 4); }
static void put_u64(struct strbuf *sb, __u64 v) { put(sb, &v, 8); }

struct ext_tab {
	const struct ipt_ext *ext[SNAP_MAX_EXTS];
	unsigned int n;
};

static unsigned int ext_index(struct ext_tab *et, const struct ipt_ext *e)
{
	for (unsigned int i = 0; i < et->n; i++)
		if (et->ext[i] == e)
			return i;
	if (et->n == SNAP_MAX_EXTS)
		abort();	/* the registry holds far fewer */
	et->ext[et->n] = e;
	return et->n++;
}

static void put_match(struct strbuf *sb, struct ext_tab *et, const struct ipt_match *m)
{
	put_u16(sb, (__u16)ext_index(et, m->ext));
	put(sb, m->data, m->ext->size);
}

/* alen: the address bytes of the table's family (4, or 16 for IPv6) */
static void put_rule(struct strbuf *sb, struct ext_tab *et, const struct ipt_rule *r,
		     size_t alen)
{
	const struct ipt_ip *ip = &r->ip;
	__u8 present = 0;

	if (alen == 4 ? ip->src.v4 || ip->smsk.v4 : !ipt_addr6_zero(&ip->smsk))
		present |= SNAP_R_SRC;
	if (alen == 4 ? ip->dst.v4 || ip->dmsk.v4 : !ipt_addr6_zero(&ip->dmsk))
		present |= SNAP_R_DST;
	if (ip->iniface[0])
		present |= SNAP_R_IN;
	if (ip->outiface[0])
		present |= SNAP_R_OUT;
	if (ip->proto || ip->flags || ip->invflags)
		present |= SNAP_R_PROTO;
	if (r->pcnt || r->bcnt)
		present |= SNAP_R_CNT;
	put_u8(sb, present);
	if (present & SNAP_R_SRC) {
		put(sb, ip->src.b, alen);
		put(sb, ip->smsk.b, alen);
	}
	if (present & SNAP_R_DST) {
		put(sb, ip->dst.b, alen);
		put(sb, ip->dmsk.b, alen);
	}
	/* interface names: the whole array, bytes after the NUL included, so the
	 * rule reads back memcmp-equal (-D compares them) */
	if (present & SNAP_R_IN)
		put(sb, ip->iniface, IPT_IFNAMSIZ);
	if (present & SNAP_R_OUT)
		put(sb, ip->outiface, IPT_IFNAMSIZ);
	if (present & SNAP_R_PROTO) {
		put_u16(sb, ip->proto);
		put_u8(sb, ip->flags);
		put_u8(sb, ip->invflags);
	}
	if (present & SNAP_R_CNT) {
		put_u64(sb, r->pcnt);
		put_u64(sb, r->bcnt);
	}
	put_u8(sb, (__u8)r->nmatches);
	put_u8(sb, (__u8)r->tkind);
	put_u8(sb, (__u8)r->verdict);
	if (r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO)
		put(sb, r->chain, IPT_CHAIN_NAMESZ);
	for (unsigned int i = 0; i < r->nmatches; i++)
		put_match(sb, et, &r->matches[i]);
	if (r->tkind == IPT_T_EXT)
		put_match(sb, et, &r->target);
}

void ipt_snap_write(struct strbuf *out, const struct ipt_table *t, __u32 tag)
{
	struct strbuf exts = STRBUF_INIT;
	struct ext_tab et = { .n = 0 };
	size_t at = out->len, body;
	struct snap_hdr h;

	/* One pass over the rules (each pass over a million rules is a walk
	 * through memory): the chains go where the body starts, the extension
	 * table they name is made on the way and moved in before them. */
	memset(&h, 0, sizeof(h));
	put(out, &h, sizeof(h));
	body = out->len;
	put_u32(out, t->nchains);
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i];
		char name[IPT_CHAIN_NAMESZ] = { 0 };

		snprintf(name, sizeof(name), "%s", c->name);
		put(out, name, sizeof(name));
		put_u8(out, c->builtin);
		put_u8(out, (__u8)c->policy);
		put_u64(out, c->pcnt);
		put_u64(out, c->bcnt);
		put_u32(out, c->nrules);
		for (unsigned int j = 0; j < c->nrules; j++)
			put_rule(out, &et, c->rules[j], t->family == AF_INET6 ? 16 : 4);
	}
	put_u32(&exts, et.n);
	for (unsigned int i = 0; i < et.n; i++) {
		size_t n = strlen(et.ext[i]->name);

		put_u8(&exts, et.ext[i]->is_target);
		put_u8(&exts, (__u8)n);
		put(&exts, et.ext[i]->name, n);
		put_u32(&exts, (__u32)et.ext[i]->size);
	}
	sb_addn(out, exts.buf, exts.len);	/* room, and the NUL the puts left out */
	memmove(out->buf + body + exts.len, out->buf + body, out->len - exts.len - body);
	memcpy(out->buf + body, exts.buf, exts.len);
	sb_free(&exts);
	memcpy(h.magic, snap_magic, sizeof(h.magic));
	h.version = IPT_SNAP_VERSION | (t->family == AF_INET6 ? IPT_SNAP_FAMILY6 : 0);
	h.tag = tag;
	h.body_len = out->len - body;
	/* the checksum runs over the body as one piece: exts then chains */
	h.sum = snap_sum(h.version, h.tag, (const unsigned char *)out->buf + body, h.body_len);
	memcpy(out->buf + at, &h, sizeof(h));
}

/* ---- reading ---- */

struct rd {
	const unsigned char *p, *end;
	char *why;
	size_t whylen;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static int rd_fail(struct rd *rd, const char *fmt, ...)
{
	va_list ap;

	if (!rd->failed) {
		va_start(ap, fmt);
		vsnprintf(rd->why, rd->whylen, fmt, ap);
		va_end(ap);
	}
	rd->failed = true;
	return -1;
}

/* Take n bytes; NULL (and failed) when fewer are left. */
static const void *take(struct rd *rd, size_t n, const char *what)
{
	const void *p = rd->p;

	if (rd->failed)
		return NULL;
	if ((size_t)(rd->end - rd->p) < n) {
		rd_fail(rd, "truncated (%s)", what);
		return NULL;
	}
	rd->p += n;
	return p;
}

static bool get(struct rd *rd, void *dst, size_t n, const char *what)
{
	const void *p = take(rd, n, what);

	if (p)
		memcpy(dst, p, n);
	return p != NULL;
}

static bool name_ok(const char name[IPT_CHAIN_NAMESZ])
{
	return name[0] && memchr(name, '\0', IPT_CHAIN_NAMESZ);
}

struct rd_exts {
	const struct ipt_ext *ext[SNAP_MAX_EXTS];
	unsigned int n;
};

static int read_exts(struct rd *rd, struct rd_exts *ex)
{
	__u32 n = 0;

	if (!get(rd, &n, 4, "extension count"))
		return -1;
	if (n > SNAP_MAX_EXTS)
		return rd_fail(rd, "%u extensions", n);
	for (ex->n = 0; ex->n < n; ex->n++) {
		__u8 is_target = 0, len = 0;
		char name[256];
		__u32 size = 0;

		if (!get(rd, &is_target, 1, "extension") || !get(rd, &len, 1, "extension") ||
		    !get(rd, name, len, "extension name") || !get(rd, &size, 4, "extension"))
			return -1;
		name[len] = '\0';
		const struct ipt_ext *e = ipt_ext_find(name, is_target);

		if (!e)
			return rd_fail(rd, "unknown %s %s", is_target ? "target" : "match", name);
		if (e->size != size)
			return rd_fail(rd, "extension %s: payload of %u bytes, this build's has %zu",
				       name, size, e->size);
		ex->ext[ex->n] = e;
	}
	return 0;
}

static int read_match(struct rd *rd, const struct rd_exts *ex, bool target, struct ipt_match *m)
{
	__u16 idx = 0;
	const void *p;

	if (!get(rd, &idx, 2, "extension index"))
		return -1;
	if (idx >= ex->n || ex->ext[idx]->is_target != target)
		return rd_fail(rd, "bad extension index %u", idx);
	m->ext = ex->ext[idx];
	if (!(p = take(rd, m->ext->size, m->ext->name)))
		return -1;
	m->data = malloc(m->ext->size ? m->ext->size : 1);
	if (!m->data)
		abort();	/* as model.c: no half-built model */
	memcpy(m->data, p, m->ext->size);
	return 0;
}

/* Into r, zeroed; on failure r holds nothing to free. */
static int read_rule(struct rd *rd, const struct rd_exts *ex, size_t alen, struct ipt_rule *r)
{
	struct ipt_ip *ip = &r->ip;
	__u8 present = 0, nm = 0, tk = 0, v = 0;

	if (!get(rd, &present, 1, "rule"))
		goto bad;
	if (present & ~(SNAP_R_SRC | SNAP_R_DST | SNAP_R_IN | SNAP_R_OUT | SNAP_R_PROTO |
			SNAP_R_CNT)) {
		rd_fail(rd, "bad rule flags 0x%x", present);
		goto bad;
	}
	if ((present & SNAP_R_SRC) && (!get(rd, ip->src.b, alen, "rule") ||
				       !get(rd, ip->smsk.b, alen, "rule")))
		goto bad;
	if ((present & SNAP_R_DST) && (!get(rd, ip->dst.b, alen, "rule") ||
				       !get(rd, ip->dmsk.b, alen, "rule")))
		goto bad;
	if ((present & SNAP_R_IN) && !get(rd, ip->iniface, IPT_IFNAMSIZ, "rule"))
		goto bad;
	if ((present & SNAP_R_OUT) && !get(rd, ip->outiface, IPT_IFNAMSIZ, "rule"))
		goto bad;
	if ((present & SNAP_R_PROTO) && (!get(rd, &ip->proto, 2, "rule") ||
					 !get(rd, &ip->flags, 1, "rule") ||
					 !get(rd, &ip->invflags, 1, "rule")))
		goto bad;
	if ((present & SNAP_R_CNT) && (!get(rd, &r->pcnt, 8, "rule") || !get(rd, &r->bcnt, 8, "rule")))
		goto bad;
	if (!get(rd, &nm, 1, "rule") || !get(rd, &tk, 1, "rule") || !get(rd, &v, 1, "rule"))
		goto bad;
	if (ip->iniface[IPT_IFNAMSIZ - 1] || ip->outiface[IPT_IFNAMSIZ - 1] ||
	    nm > IPT_MAX_MATCHES || tk >= IPT_T_MAX || v >= IPT_V_MAX) {
		rd_fail(rd, "bad rule (matches %u, target kind %u, verdict %u)", nm, tk, v);
		goto bad;
	}
	r->tkind = (enum ipt_target_kind)tk;
	r->verdict = (enum ipt_verdict)v;
	if (tk == IPT_T_JUMP || tk == IPT_T_GOTO) {
		if (!get(rd, r->chain, IPT_CHAIN_NAMESZ, "rule"))
			goto bad;
		if (!name_ok(r->chain)) {
			rd_fail(rd, "bad jump target");
			goto bad;
		}
	}
	if (nm) {
		r->matches = calloc(nm, sizeof(*r->matches));
		if (!r->matches)
			abort();
	}
	for (; r->nmatches < nm; r->nmatches++)
		if (read_match(rd, ex, false, &r->matches[r->nmatches]))
			goto bad;
	if (tk == IPT_T_EXT && read_match(rd, ex, true, &r->target))
		goto bad;
	return 0;
bad:
	ipt_rule_clear(r);
	return -1;
}

/* A user chain, found by name: they are sorted (checked on read) after the builtins. */
static bool user_chain_exists(const struct ipt_table *t, const char *name)
{
	int k = ipt_chain_index(t, name);

	return k >= 0 && !t->chains[k]->builtin;
}

static int read_chains(struct rd *rd, const struct rd_exts *ex, struct ipt_table *t)
{
	__u32 n = 0;

	if (!get(rd, &n, 4, "chain count"))
		return -1;
	if (n < 3 || n > (size_t)(rd->end - rd->p))
		return rd_fail(rd, "%u chains", n);
	for (__u32 i = 0; i < n; i++) {
		char name[IPT_CHAIN_NAMESZ];
		__u8 builtin = 0, policy = 0;
		__u64 pcnt = 0, bcnt = 0;
		__u32 nrules = 0;
		struct ipt_rule *slab;
		struct ipt_chain *c;

		if (!get(rd, name, sizeof(name), "chain") || !get(rd, &builtin, 1, "chain") ||
		    !get(rd, &policy, 1, "chain") || !get(rd, &pcnt, 8, "chain") ||
		    !get(rd, &bcnt, 8, "chain") || !get(rd, &nrules, 4, "chain"))
			return -1;
		if (!name_ok(name) || builtin != (i < 3) || policy >= IPT_V_MAX ||
		    (i < 3 && strcmp(name, t->chains[i]->name)) ||
		    (i >= 3 && (ipt_is_builtin_name(name) ||
				(i > 3 && strcmp(t->chains[i - 1]->name, name) >= 0))))
			return rd_fail(rd, "bad chain %u", i);
		/* each rule takes at least 4 bytes: a huge count is corruption, not a
		 * reason to allocate */
		if (nrules > (size_t)(rd->end - rd->p) / 4)
			return rd_fail(rd, "chain %.32s: %u rules", name, nrules);
		c = i < 3 ? t->chains[i] : ipt_chain_new_user(t, name);
		c->policy = (enum ipt_verdict)policy;
		c->pcnt = pcnt;
		c->bcnt = bcnt;
		c->rules = calloc(nrules ? nrules : 1, sizeof(*c->rules));
		if (!c->rules)
			abort();
		c->cap = nrules ? nrules : 1;
		slab = ipt_chain_slab(c, nrules);
		for (; c->nrules < nrules; c->nrules++) {
			if (read_rule(rd, ex, t->family == AF_INET6 ? 16 : 4, &slab[c->nrules]))
				return -1;
			c->rules[c->nrules] = &slab[c->nrules];
		}
	}
	return 0;
}

__u32 ipt_snap_tag(const void *buf, size_t len)
{
	struct snap_hdr h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	return memcmp(h.magic, snap_magic, sizeof(h.magic)) ? 0 : h.tag;
}

int ipt_snap_read(const void *buf, size_t len, struct ipt_table **pt, char *why, size_t whylen)
{
	struct rd rd = { .why = why, .whylen = whylen };
	struct rd_exts ex = { .n = 0 };
	struct ipt_table *t = NULL;
	struct snap_hdr h;

	if (len < sizeof(h))
		return snprintf(why, whylen, "truncated (%zu bytes, no header)", len), -1;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, snap_magic, sizeof(h.magic)))
		return snprintf(why, whylen, "not a bpf-iptables snapshot"), -1;
	if ((h.version & ~IPT_SNAP_FAMILY6) != IPT_SNAP_VERSION)
		return snprintf(why, whylen, "snapshot version %u, this build reads %u",
				h.version & ~IPT_SNAP_FAMILY6, IPT_SNAP_VERSION), -1;
	if (h.body_len != len - sizeof(h))
		return snprintf(why, whylen, "truncated or extended (body of %zu bytes, header "
				"says %llu)", len - sizeof(h), (unsigned long long)h.body_len), -1;
	rd.p = (const unsigned char *)buf + sizeof(h);
	rd.end = rd.p + h.body_len;
	if (snap_sum(h.version, h.tag, rd.p, h.body_len) != h.sum)
		return snprintf(why, whylen, "checksum mismatch"), -1;
	/* extensions are found in the family of the process: a table of the other
	 * family is refused as such, not as an unknown extension */
	if (!!(h.version & IPT_SNAP_FAMILY6) != (ipt_af == AF_INET6))
		return snprintf(why, whylen, "an IPv%c table",
				h.version & IPT_SNAP_FAMILY6 ? '6' : '4'), -1;
	ipt_table_new(&t);
	t->family = h.version & IPT_SNAP_FAMILY6 ? AF_INET6 : AF_INET;
	if (read_exts(&rd, &ex) || read_chains(&rd, &ex, t))
		goto bad;
	if (rd.p != rd.end) {
		rd_fail(&rd, "%zu bytes after the last chain", (size_t)(rd.end - rd.p));
		goto bad;
	}
	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++) {
			const struct ipt_rule *r = t->chains[i]->rules[j];

			if ((r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) &&
			    !user_chain_exists(t, r->chain)) {
				rd_fail(&rd, "chain %s jumps to %s, which does not exist",
					t->chains[i]->name, r->chain);
				goto bad;
			}
		}
	ipt_table_free(pt);
	*pt = t;
	return 0;
bad:
	ipt_table_free(&t);
	return -1;
}
