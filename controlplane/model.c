// SPDX-License-Identifier: GPL-2.0
/* The rule model: allocation, copying, comparison. */
#include "model.h"
#include "ext.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int ipt_af = AF_INET;

static const char *const verdict_names[] = {
	[IPT_V_ACCEPT] = "ACCEPT",
	[IPT_V_DROP] = "DROP",
	[IPT_V_RETURN] = "RETURN",
};
_Static_assert(sizeof(verdict_names) / sizeof(verdict_names[0]) == IPT_V_MAX,
	       "one name per verdict");

static const char *const builtin_names[] = { "INPUT", "FORWARD", "OUTPUT" };

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		abort();	/* a firewall rule model half-built is worse than no answer */
	return p;
}

static void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz);
	if (!p)
		abort();
	return p;
}

const char *ipt_verdict_name(enum ipt_verdict v)
{
	return v < IPT_V_MAX ? verdict_names[v] : "?";
}

int ipt_verdict_parse(const char *s, enum ipt_verdict *v)
{
	for (int i = 0; i < IPT_V_MAX; i++)
		if (!strcmp(s, verdict_names[i])) {
			*v = (enum ipt_verdict)i;
			return 0;
		}
	return -1;
}

bool ipt_is_builtin_name(const char *name)
{
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(name, builtin_names[i]))
			return true;
	return false;
}

struct ipt_rule *ipt_rule_new(void)
{
	struct ipt_rule *r = xcalloc(1, sizeof(struct ipt_rule));

	r->cidx = IPT_NO_CIDX;
	return r;
}

static void match_free(struct ipt_match *m)
{
	free(m->data);
	m->data = NULL;
	m->ext = NULL;
}

void ipt_rule_clear(struct ipt_rule *r)
{
	for (unsigned int i = 0; i < r->nmatches; i++)
		match_free(&r->matches[i]);
	free(r->matches);
	r->matches = NULL;
	r->nmatches = 0;
	match_free(&r->target);
}

void ipt_rule_free(struct ipt_rule **pr)
{
	if (!*pr)
		return;
	ipt_rule_clear(*pr);
	free(*pr);
	*pr = NULL;
}

/* A rule of c's: freed alone, or only emptied when it lies in c's slab. */
static void chain_rule_free(struct ipt_chain *c, struct ipt_rule **pr)
{
	struct ipt_rule *r = *pr;

	if (r && c->slab && r >= c->slab && r < c->slab + c->nslab) {
		/* a snapshot's rule holds a target only when its kind says so
		 * (read_rule): most hold nothing, and their third line is not read */
		if (r->nmatches || r->tkind == IPT_T_EXT)
			ipt_rule_clear(r);
		*pr = NULL;
		return;
	}
	ipt_rule_free(pr);
}

struct ipt_match *ipt_rule_add_match(struct ipt_rule *r, const struct ipt_ext *ext)
{
	if (r->nmatches >= IPT_MAX_MATCHES)
		return NULL;
	r->matches = xrealloc(r->matches, (r->nmatches + 1) * sizeof(*r->matches));
	struct ipt_match *m = &r->matches[r->nmatches++];
	m->ext = ext;
	m->data = xcalloc(1, ext->size);
	if (ext->init)
		ext->init(m->data);
	return m;
}

static void match_copy(struct ipt_match *dst, const struct ipt_match *src)
{
	dst->ext = src->ext;
	dst->data = NULL;
	if (src->ext) {
		dst->data = xcalloc(1, src->ext->size);
		memcpy(dst->data, src->data, src->ext->size);
	}
}

struct ipt_rule *ipt_rule_dup(const struct ipt_rule *r)
{
	struct ipt_rule *n = ipt_rule_new();

	*n = *r;
	n->matches = r->nmatches ? xcalloc(r->nmatches, sizeof(*n->matches)) : NULL;
	for (unsigned int i = 0; i < r->nmatches; i++)
		match_copy(&n->matches[i], &r->matches[i]);
	match_copy(&n->target, &r->target);
	return n;
}

static bool match_equal(const struct ipt_match *a, const struct ipt_match *b)
{
	if (a->ext != b->ext)
		return false;
	return !a->ext || !memcmp(a->data, b->data, a->ext->size);
}

/* What libiptc's -D/-C compare: everything but the counters. */
static bool plus_iface(const struct ipt_ip *ip)
{
	return !strcmp(ip->iniface, "+") || !strcmp(ip->outiface, "+");
}

/* The IP parts as libiptc compares them: interface names under their masks, so
 * "-i +" (its mask is empty; the name is kept for -L -v) is the same as no -i. */
static bool ip_equal(const struct ipt_ip *a, const struct ipt_ip *b)
{
	if (!memcmp(a, b, sizeof(*a)))
		return true;
	if (!plus_iface(a) && !plus_iface(b))
		return false;

	struct ipt_ip x = *a, y = *b;

	for (struct ipt_ip *p = &x; p; p = p == &x ? &y : NULL) {
		if (!strcmp(p->iniface, "+"))
			memset(p->iniface, 0, sizeof(p->iniface));
		if (!strcmp(p->outiface, "+"))
			memset(p->outiface, 0, sizeof(p->outiface));
	}
	return !memcmp(&x, &y, sizeof(x));
}

bool ipt_rule_equal(const struct ipt_rule *a, const struct ipt_rule *b)
{
	if (!ip_equal(&a->ip, &b->ip) || a->nmatches != b->nmatches || a->tkind != b->tkind)
		return false;
	for (unsigned int i = 0; i < a->nmatches; i++)
		if (!match_equal(&a->matches[i], &b->matches[i]))
			return false;
	switch (a->tkind) {
	case IPT_T_VERDICT:
		return a->verdict == b->verdict;
	case IPT_T_JUMP:
	case IPT_T_GOTO:
		return !strcmp(a->chain, b->chain);
	case IPT_T_EXT:
		return match_equal(&a->target, &b->target);
	default:
		return true;
	}
}

static struct ipt_chain *chain_new(const char *name, bool builtin)
{
	struct ipt_chain *c = xcalloc(1, sizeof(*c));

	snprintf(c->name, sizeof(c->name), "%s", name);
	c->builtin = builtin;
	c->policy = IPT_V_ACCEPT;
	c->cidx = IPT_NO_CIDX;
	return c;
}

static void chain_free(struct ipt_chain **pc)
{
	struct ipt_chain *c = *pc;

	if (!c)
		return;
	for (unsigned int i = 0; i < c->nrules; i++)
		chain_rule_free(c, &c->rules[i]);
	free(c->rules);
	free(c->slab);
	free(c);
	*pc = NULL;
}

#define NAME_IDX_MIN	256	/* chains before a hash pays */
#define NAME_IDX_AFTER	64	/* binary searches first (a change in between drops it) */

static unsigned int name_hash(const char *s)
{
	unsigned int h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void name_idx_drop(struct ipt_table *t)
{
	free(t->name_idx);
	t->name_idx = NULL;
	t->name_cap = 0;
	t->searches = 0;
}

/* Open addressing, index + 1 in each slot (0: empty), at most half full. */
static void name_idx_make(struct ipt_table *t)
{
	unsigned int cap = 1;

	while (cap < 2 * t->nchains)
		cap *= 2;
	t->name_idx = xcalloc(cap, sizeof(*t->name_idx));
	t->name_cap = cap;
	for (unsigned int i = 0; i < t->nchains; i++) {
		unsigned int h = name_hash(t->chains[i]->name) & (cap - 1);

		while (t->name_idx[h])
			h = (h + 1) & (cap - 1);
		t->name_idx[h] = i + 1;
	}
}

int ipt_table_new(struct ipt_table **pt)
{
	struct ipt_table *t = xcalloc(1, sizeof(*t));

	t->family = ipt_af;
	for (size_t i = 0; i < 3; i++)
		ipt_chain_insert(t, chain_new(builtin_names[i], true));
	*pt = t;
	return 0;
}

void ipt_table_free(struct ipt_table **pt)
{
	struct ipt_table *t = *pt;

	if (!t)
		return;
	for (unsigned int i = 0; i < t->nchains; i++)
		chain_free(&t->chains[i]);
	free(t->chains);
	name_idx_drop(t);
	free(t);
	*pt = NULL;
}

/* flushed: only what ipt_table_flush_all leaves (the builtin chains, no rules) */
static void table_copy(const struct ipt_table *src, struct ipt_table **pdst, bool flushed)
{
	struct ipt_table *t = xcalloc(1, sizeof(*t));

	t->family = src->family;
	t->cap = src->nchains;
	t->chains = xcalloc(t->cap, sizeof(*t->chains));
	for (unsigned int i = 0; i < src->nchains; i++) {
		const struct ipt_chain *s = src->chains[i];
		struct ipt_chain *c;

		if (flushed && !s->builtin)
			continue;
		c = chain_new(s->name, s->builtin);
		c->policy = s->policy;
		c->pcnt = s->pcnt;
		c->bcnt = s->bcnt;
		c->cidx = s->cidx;
		if (!flushed) {
			c->cap = c->nrules = s->nrules;
			c->rules = xcalloc(c->cap, sizeof(*c->rules));
			for (unsigned int j = 0; j < s->nrules; j++)
				c->rules[j] = ipt_rule_dup(s->rules[j]);
		}
		t->chains[t->nchains++] = c;
	}
	*pdst = t;
}

int ipt_table_copy(const struct ipt_table *src, struct ipt_table **pdst)
{
	table_copy(src, pdst, false);
	return 0;
}

void ipt_table_copy_flushed(const struct ipt_table *src, struct ipt_table **pdst)
{
	table_copy(src, pdst, true);
}

/* Builtins keep their fixed order; user chains follow, sorted with strcmp as libiptc
 * lists them. */
static int chain_order(const struct ipt_chain *a, const struct ipt_chain *b)
{
	if (a->builtin != b->builtin)
		return a->builtin ? -1 : 1;
	if (a->builtin)
		return 0;
	return strcmp(a->name, b->name);
}

void ipt_chain_insert(struct ipt_table *t, struct ipt_chain *c)
{
	unsigned int pos = t->nchains;

	name_idx_drop(t);
	if (t->nchains == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->chains = xrealloc(t->chains, t->cap * sizeof(*t->chains));
	}
	if (c->builtin) {
		while (pos > 0 && chain_order(t->chains[pos - 1], c) > 0)
			pos--;
	} else if (t->nchains && chain_order(t->chains[t->nchains - 1], c) <= 0) {
		pos = t->nchains;	/* in order (a snapshot's chains are): at the end */
	} else {
		/* after the last chain that sorts before it, by binary search: a
		 * restore file declares its chains in any order (kube-proxy's do),
		 * and a scan from the end made that quadratic */
		unsigned int lo = 0, hi = t->nchains;

		while (lo < hi) {
			unsigned int mid = lo + (hi - lo) / 2;

			if (chain_order(t->chains[mid], c) > 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		pos = lo;
	}
	memmove(&t->chains[pos + 1], &t->chains[pos], (t->nchains - pos) * sizeof(*t->chains));
	t->chains[pos] = c;
	t->nchains++;
}

struct ipt_chain *ipt_chain_new_user(struct ipt_table *t, const char *name)
{
	struct ipt_chain *c = chain_new(name, false);

	ipt_chain_insert(t, c);
	return c;
}

void ipt_chain_remove(struct ipt_table *t, struct ipt_chain *c)
{
	int k = ipt_chain_index(t, c->name);
	unsigned int i = k >= 0 && t->chains[k] == c ? (unsigned int)k : 0;

	/* found by name (a restore removes every user chain), else by a scan */
	for (; i < t->nchains; i++)
		if (t->chains[i] == c) {
			memmove(&t->chains[i], &t->chains[i + 1],
				(t->nchains - i - 1) * sizeof(*t->chains));
			t->nchains--;
			name_idx_drop(t);
			chain_free(&c);
			return;
		}
}

/* Rename keeps the sort order: take it out and put it back (which drops the
 * hash of names). References are renamed first, the chain's own ones (a
 * self-jump) included. */
void ipt_chain_rename(struct ipt_table *t, struct ipt_chain *c, const char *name)
{
	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++) {
			struct ipt_rule *r = t->chains[i]->rules[j];

			if ((r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) &&
			    !strcmp(r->chain, c->name))
				snprintf(r->chain, sizeof(r->chain), "%s", name);
		}
	for (unsigned int i = 0; i < t->nchains; i++)
		if (t->chains[i] == c) {
			memmove(&t->chains[i], &t->chains[i + 1],
				(t->nchains - i - 1) * sizeof(*t->chains));
			t->nchains--;
			break;
		}
	snprintf(c->name, sizeof(c->name), "%s", name);
	ipt_chain_insert(t, c);
}

void ipt_chain_flush(struct ipt_chain *c)
{
	for (unsigned int i = 0; i < c->nrules; i++)
		chain_rule_free(c, &c->rules[i]);
	c->nrules = 0;
	free(c->slab);
	c->slab = NULL;
	c->nslab = 0;
}

void ipt_table_flush_all(struct ipt_table *t)
{
	/* iptables-restore without --noflush: all rules and all user chains go, policies
	 * and their counters are set by the file's ":CHAIN POLICY [p:b]" lines. */
	for (unsigned int i = t->nchains; i-- > 0;) {
		struct ipt_chain *c = t->chains[i];

		if (c->builtin)
			ipt_chain_flush(c);
		else
			ipt_chain_remove(t, c);
	}
}

/* Insert before position idx (0-based; idx == nrules appends). */
void ipt_chain_insert_rule(struct ipt_chain *c, unsigned int idx, struct ipt_rule *r)
{
	if (c->nrules == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->rules = xrealloc(c->rules, c->cap * sizeof(*c->rules));
	}
	memmove(&c->rules[idx + 1], &c->rules[idx], (c->nrules - idx) * sizeof(*c->rules));
	c->rules[idx] = r;
	c->nrules++;
}

void ipt_chain_delete_rule(struct ipt_chain *c, unsigned int idx)
{
	chain_rule_free(c, &c->rules[idx]);
	memmove(&c->rules[idx], &c->rules[idx + 1], (c->nrules - idx - 1) * sizeof(*c->rules));
	c->nrules--;
}

void ipt_chain_replace_rule(struct ipt_chain *c, unsigned int idx, struct ipt_rule *r)
{
	chain_rule_free(c, &c->rules[idx]);
	c->rules[idx] = r;
}

struct ipt_rule *ipt_chain_slab(struct ipt_chain *c, unsigned int n)
{
	if (c->nrules || c->slab)
		abort();	/* a slab is made once, for a chain being read */
	c->slab = xcalloc(n ? n : 1, sizeof(*c->slab));
	c->nslab = n;
	for (unsigned int i = 0; i < n; i++)
		c->slab[i].cidx = IPT_NO_CIDX;
	return c->slab;
}

int ipt_chain_index(const struct ipt_table *ct, const char *name)
{
	/* the hash is a cache: made and used here, on a table given const */
	struct ipt_table *t = (struct ipt_table *)ct;
	unsigned int lo = 0, hi = t->nchains;

	if (!t->name_idx && t->nchains >= NAME_IDX_MIN && ++t->searches > NAME_IDX_AFTER)
		name_idx_make(t);
	if (t->name_idx) {
		for (unsigned int h = name_hash(name) & (t->name_cap - 1); t->name_idx[h];
		     h = (h + 1) & (t->name_cap - 1))
			if (!strcmp(t->chains[t->name_idx[h] - 1]->name, name))
				return (int)t->name_idx[h] - 1;
		return -1;
	}

	/* the builtins first, then the user chains sorted by name (struct
	 * ipt_table): a binary search, where a scan made a table of 10 000 chains
	 * with a jump to each compare 10^8 names per command */
	for (; lo < t->nchains && t->chains[lo]->builtin; lo++)
		if (!strcmp(t->chains[lo]->name, name))
			return (int)lo;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		int c = strcmp(t->chains[mid]->name, name);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct ipt_chain *ipt_chain_find(const struct ipt_table *t, const char *name)
{
	int i = ipt_chain_index(t, name);

	return i < 0 ? NULL : t->chains[i];
}

unsigned int ipt_chain_refs(const struct ipt_table *t, const struct ipt_chain *c)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++) {
			const struct ipt_rule *r = t->chains[i]->rules[j];

			if ((r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) &&
			    !strcmp(r->chain, c->name))
				n++;
		}
	return n;
}

unsigned int *ipt_table_refs(const struct ipt_table *t)
{
	unsigned int *n = xcalloc(t->nchains ? t->nchains : 1, sizeof(*n));

	for (unsigned int i = 0; i < t->nchains; i++)
		for (unsigned int j = 0; j < t->chains[i]->nrules; j++) {
			const struct ipt_rule *r = t->chains[i]->rules[j];
			int to;

			if ((r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) &&
			    (to = ipt_chain_index(t, r->chain)) >= 0)
				n[to]++;
		}
	return n;
}
