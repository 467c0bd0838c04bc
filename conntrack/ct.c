// SPDX-License-Identifier: GPL-2.0
/* The connection table from userspace: read, filter, format, delete, sweep
 * (see ct_table.h); the -T settings tokens. */
#include "ct_table.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* the kernel's, not in userspace errno.h */
#endif

bool ct_walk_no_batch;

__u64 ct_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* ------------------------------------------------------------ names ---- */

/* libnetfilter_conntrack's __proto2str(): the rest is "unknown". */
const char *ct_proto_name(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:	return "tcp";
	case IPPROTO_UDP:	return "udp";
	case IPPROTO_UDPLITE:	return "udplite";
	case IPPROTO_ICMP:	return "icmp";
	case IPPROTO_ICMPV6:	return "icmpv6";
	case IPPROTO_SCTP:	return "sctp";
	case IPPROTO_GRE:	return "gre";
	case IPPROTO_DCCP:	return "dccp";
	default:		return "unknown";
	}
}

static const char *const tcp_states[BPFIPT_TCP_MAX] = {
	[BPFIPT_TCP_NONE] = "NONE",
	[BPFIPT_TCP_SYN_SENT] = "SYN_SENT",
	[BPFIPT_TCP_SYN_RECV] = "SYN_RECV",
	[BPFIPT_TCP_ESTABLISHED] = "ESTABLISHED",
	[BPFIPT_TCP_FIN_WAIT] = "FIN_WAIT",
	[BPFIPT_TCP_CLOSE_WAIT] = "CLOSE_WAIT",
	[BPFIPT_TCP_LAST_ACK] = "LAST_ACK",
	[BPFIPT_TCP_TIME_WAIT] = "TIME_WAIT",
	[BPFIPT_TCP_CLOSE] = "CLOSE",
	[BPFIPT_TCP_SYN_SENT2] = "SYN_SENT2",
};

_Static_assert(BPFIPT_TCP_MAX == 10, "tcp_states covers every TCP state");

const char *ct_tcp_state_name(unsigned int state)
{
	return state < BPFIPT_TCP_MAX ? tcp_states[state] : NULL;
}

int ct_family(const struct bpfipt_ct_key *k)
{
	return k->family == 6 ? 6 : 4;
}

bool ct_proto_has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
	       proto == IPPROTO_SCTP || proto == IPPROTO_DCCP;
}

/* The answer to an ICMP query (the kernel's invmap of nf_conntrack_proto_icmp
 * and nf_conntrack_proto_icmpv6). */
static __u8 icmp_reply_type(__u8 proto, __u8 type)
{
	if (proto == IPPROTO_ICMPV6)
		return type == 128 ? 129 : type == 139 ? 140 : type;
	switch (type) {
	case 8:		return 0;	/* echo */
	case 13:	return 14;	/* timestamp */
	case 15:	return 16;	/* information */
	case 17:	return 18;	/* address mask */
	default:	return type;
	}
}

/* ------------------------------------------------------------ tuples ---- */

/* End i's address (IPv4: word 0, the rest 0). */
static void key_addr(const struct bpfipt_ct_key *k, unsigned int i, __be32 a[4])
{
	a[0] = k->a[i];
	memcpy(a + 1, k->a6[i], sizeof(k->a6[i]));
}

void ct_tuples(const struct bpfipt_ct_key *k, const struct bpfipt_ct_entry *e,
	       struct ct_tuple t[2])
{
	unsigned int o = e->orig & 1, r = !o;

	memset(t, 0, 2 * sizeof(*t));
	key_addr(k, o, t[0].src);
	key_addr(k, o, t[1].dst);
	key_addr(k, r, t[0].dst);
	key_addr(k, r, t[1].src);
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		/* port[0] = port[1] = the identifier */
		t[0].sport = t[0].dport = t[1].sport = t[1].dport = ntohs(k->port[0]);
		t[0].type = k->type;
		t[1].type = icmp_reply_type(k->proto, k->type);
		return;
	}
	t[0].sport = t[1].dport = ntohs(k->port[o]);
	t[0].dport = t[1].sport = ntohs(k->port[r]);
}

bool ct_filter_match(const struct ct_filter *f, const struct bpfipt_ct_key *k,
		     const struct bpfipt_ct_entry *e)
{
	struct ct_tuple t[2];

	if (!f)
		return true;
	if ((f->set & CT_F_FAMILY) && ct_family(k) != f->family)
		return false;
	if ((f->set & CT_F_PROTO) && k->proto != f->proto)
		return false;
	if ((f->set & CT_F_STATE) && (k->proto != IPPROTO_TCP || e->tcp_state != f->tcp_state))
		return false;
	ct_tuples(k, e, t);
	for (int i = 0; i < CT_FIELD_MAX; i++) {
		const struct ct_tuple *d = &t[i >= CT_REPL_SRC];
		bool src = i == CT_ORIG_SRC || i == CT_REPL_SRC;

		const __be32 *a = src ? d->src : d->dst;

		if (f->set & (CT_F_ADDR0 << i))
			for (int w = 0; w < 4; w++)
				if ((a[w] & f->mask[i][w]) != (f->addr[i][w] & f->mask[i][w]))
					return false;
		if ((f->set & (CT_F_PORT0 << i)) && (src ? d->sport : d->dport) != f->port[i])
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ format ---- */

static void format_tuple(struct strbuf *sb, int af, __u8 proto, const struct ct_tuple *t)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	inet_ntop(af, t->src, a, sizeof(a));
	inet_ntop(af, t->dst, b, sizeof(b));
	sb_addf(sb, "src=%s dst=%s ", a, b);
	if (ct_proto_has_ports(proto))
		sb_addf(sb, "sport=%u dport=%u ", t->sport, t->dport);
	else if (proto == IPPROTO_GRE)
		sb_addf(sb, "srckey=0x%x dstkey=0x%x ", t->sport, t->dport);
	else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		sb_addf(sb, "type=%u code=0 id=%u ", t->type, t->sport);
}

void ct_format(struct strbuf *sb, const struct bpfipt_ct_key *k,
	       const struct bpfipt_ct_entry *e, __u64 now)
{
	int af = ct_family(k) == 6 ? AF_INET6 : AF_INET;
	struct ct_tuple t[2];
	const char *st;

	ct_tuples(k, e, t);
	sb_addf(sb, "%-8s %u %llu ", ct_proto_name(k->proto), k->proto,
		(unsigned long long)(e->expires > now ? (e->expires - now) / 1000000000ull : 0));
	if (k->proto == IPPROTO_TCP) {
		st = ct_tcp_state_name(e->tcp_state);
		sb_addf(sb, "%s ", st ? st : "NONE");	/* libnetfilter_conntrack's fallback */
	}
	format_tuple(sb, af, k->proto, &t[0]);
	sb_addf(sb, "packets=%llu bytes=%llu ", (unsigned long long)e->packets[0],
		(unsigned long long)e->bytes[0]);
	if (!(e->status & BPFIPT_CTS_SEEN_REPLY))
		sb_adds(sb, "[UNREPLIED] ");
	format_tuple(sb, af, k->proto, &t[1]);
	sb_addf(sb, "packets=%llu bytes=%llu ", (unsigned long long)e->packets[1],
		(unsigned long long)e->bytes[1]);
	if (e->status & BPFIPT_CTS_ASSURED)
		sb_adds(sb, "[ASSURED] ");
	sb_adds(sb, "mark=0 use=1\n");
}

/* ------------------------------------------------------------- read ---- */

struct conns {
	struct ct_conn *v;
	size_t n, cap;
};

static void conns_add(struct conns *c, const struct bpfipt_ct_key *k,
		      const struct bpfipt_ct_entry *e)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct ct_conn *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			abort();	/* out of memory, as strbuf does */
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].key = *k;
	c->v[c->n].e = *e;
	c->n++;
}

/* The size of family f's keys in its table (bpfipt.h): an IPv4 key is the
 * head of struct bpfipt_ct_key. */
static size_t key_size(int f)
{
	return f ? sizeof(struct bpfipt_ct_key) : BPFIPT_CT_KEY4;
}

/* The table of k's family (may be -1). */
static int key_fd(const int fd[BPFIPT_NFAMILIES], const struct bpfipt_ct_key *k)
{
	return fd[ct_family(k) == 6];
}

static int check_map(int fd, int f)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return -errno;
	if ((mi.type != BPF_MAP_TYPE_LRU_HASH && mi.type != BPF_MAP_TYPE_HASH) ||
	    mi.key_size != key_size(f) || mi.value_size != sizeof(struct bpfipt_ct_entry))
		return -EPROTO;
	return 0;
}

/* Every entry of family f's table by batches. -EOPNOTSUPP: the kernel has no
 * batch lookups. */
static int read_batch(int fd, int f, struct conns *c)
{
	size_t ksz = key_size(f);
	unsigned char *keys = NULL;
	struct bpfipt_ct_entry *vals = NULL;
	__u32 chunk = 256, in = 0, out = 0, count;
	bool first = true;
	int r;

	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		if (!keys) {
			keys = calloc(chunk, ksz);
			vals = calloc(chunk, sizeof(*vals));
			if (!keys || !vals)
				abort();
		}
		count = chunk;
		r = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, &o);
		r = r ? -errno : 0;
		if (r == -ENOSPC && !count) {
			/* a bucket holds more than a chunk: take bigger ones */
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			chunk *= 2;
			continue;
		}
		if (r && r != -ENOENT) {
			if (first && (r == -EINVAL || r == -ENOTSUPP || r == -EOPNOTSUPP ||
				      r == -ENOSYS))
				r = -EOPNOTSUPP;
			break;
		}
		for (__u32 i = 0; i < count; i++) {
			struct bpfipt_ct_key k = { 0 };

			memcpy(&k, keys + i * ksz, ksz);
			conns_add(c, &k, &vals[i]);
		}
		if (r == -ENOENT) {	/* the last batch */
			r = 0;
			break;
		}
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return r;
}

/* Every entry by BPF_MAP_GET_NEXT_KEY (may see an entry twice, see ct_table.h);
 * an IPv4 table writes the keys' heads, their tails stay zero. */
static int read_walk(int fd, struct conns *c)
{
	struct bpfipt_ct_key k = { 0 }, next = { 0 };
	struct bpfipt_ct_entry e;
	bool first = true;

	for (;;) {
		if (bpf_map_get_next_key(fd, first ? NULL : &k, &next))
			return errno == ENOENT ? 0 : -errno;
		first = false;
		k = next;
		if (!bpf_map_lookup_elem(fd, &k, &e))
			conns_add(c, &k, &e);
		else if (errno != ENOENT)
			return -errno;
	}
}

static int cmp_conn(const void *pa, const void *pb)
{
	const struct ct_conn *a = pa, *b = pb;
	struct ct_tuple ta[2], tb[2];
	int c;

	if (ct_family(&a->key) != ct_family(&b->key))
		return ct_family(&a->key) < ct_family(&b->key) ? -1 : 1;
	if (a->key.proto != b->key.proto)
		return a->key.proto < b->key.proto ? -1 : 1;
	ct_tuples(&a->key, &a->e, ta);
	ct_tuples(&b->key, &b->e, tb);
	/* network-order bytes compare as the addresses do */
	if ((c = memcmp(ta[0].src, tb[0].src, sizeof(ta[0].src))))
		return c < 0 ? -1 : 1;
	if ((c = memcmp(ta[0].dst, tb[0].dst, sizeof(ta[0].dst))))
		return c < 0 ? -1 : 1;
	if (ta[0].sport != tb[0].sport)
		return ta[0].sport < tb[0].sport ? -1 : 1;
	if (ta[0].dport != tb[0].dport)
		return ta[0].dport < tb[0].dport ? -1 : 1;
	return memcmp(&a->key, &b->key, sizeof(a->key));
}

enum which { LIVE, EXPIRED, ALL };

/* Past its deadline, or ended by the data path: absent (sweep deletes it). */
static bool alive(const struct bpfipt_ct_entry *e, __u64 now)
{
	return e->expires > now && !(e->flags & BPFIPT_CTF_KILLED);
}

/* The entries of one kind, sorted, a walk's duplicates dropped. */
static int read_table(const int fd[BPFIPT_NFAMILIES], __u64 now, enum which w,
		      struct conns *c)
{
	size_t i, j;
	int r;

	for (int f = 0; f < BPFIPT_NFAMILIES; f++) {
		size_t n0 = c->n;

		if (fd[f] < 0)
			continue;
		if ((r = check_map(fd[f], f)))
			return r;
		r = ct_walk_no_batch ? -EOPNOTSUPP : read_batch(fd[f], f, c);
		if (r == -EOPNOTSUPP) {
			c->n = n0;
			r = read_walk(fd[f], c);
		}
		if (r)
			return r;
	}
	for (i = j = 0; i < c->n; i++)
		if (w == ALL || alive(&c->v[i].e, now) == (w == LIVE))
			c->v[j++] = c->v[i];
	c->n = j;
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_conn);
	for (i = j = 0; i < c->n; i++)
		if (!j || memcmp(&c->v[i].key, &c->v[j - 1].key, sizeof(c->v[i].key)))
			c->v[j++] = c->v[i];
	c->n = j;
	return 0;
}

int ct_read(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, bool expired, struct ct_conn **out, size_t *n)
{
	struct conns c = { 0 };
	int r;

	r = read_table(ct_fd, now, expired ? EXPIRED : LIVE, &c);
	if (r) {
		free(c.v);
		c.v = NULL;
		c.n = 0;
	}
	*out = c.v;
	*n = c.n;
	return r;
}

/* ------------------------------------------------------- operations ---- */

int ct_list(const int ct_fd[BPFIPT_NFAMILIES], const struct ct_filter *f, __u64 now, struct strbuf *sb, size_t *n)
{
	struct ct_conn *v;
	size_t nv;
	int r;

	*n = 0;
	if ((r = ct_read(ct_fd, now, false, &v, &nv)))
		return r;
	for (size_t i = 0; i < nv; i++) {
		if (!ct_filter_match(f, &v[i].key, &v[i].e))
			continue;
		ct_format(sb, &v[i].key, &v[i].e, now);
		(*n)++;
	}
	free(v);
	return 0;
}

int ct_count(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, size_t *n)
{
	struct ct_conn *v;
	int r;

	r = ct_read(ct_fd, now, false, &v, n);
	free(v);
	return r;
}

int ct_delete(const int ct_fd[BPFIPT_NFAMILIES], const struct ct_filter *f, __u64 now, struct strbuf *shown,
	      size_t *n)
{
	struct ct_conn *v;
	size_t nv;
	int r;

	*n = 0;
	if ((r = ct_read(ct_fd, now, false, &v, &nv)))
		return r;
	for (size_t i = 0; i < nv && !r; i++) {
		if (!ct_filter_match(f, &v[i].key, &v[i].e))
			continue;
		if (bpf_map_delete_elem(key_fd(ct_fd, &v[i].key), &v[i].key)) {
			/* gone meanwhile (evicted): nothing to delete */
			if (errno != ENOENT)
				r = -errno;
			continue;
		}
		if (shown)
			ct_format(shown, &v[i].key, &v[i].e, now);
		(*n)++;
	}
	free(v);
	return r;
}

int ct_flush(const int ct_fd[BPFIPT_NFAMILIES], size_t *n)
{
	struct conns c = { 0 };
	int r;

	*n = 0;
	r = read_table(ct_fd, 0, ALL, &c);
	for (size_t i = 0; i < c.n && !r; i++) {
		if (!bpf_map_delete_elem(key_fd(ct_fd, &c.v[i].key), &c.v[i].key))
			(*n)++;
		else if (errno != ENOENT)
			r = -errno;
	}
	free(c.v);
	return r;
}

int ct_sweep(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, size_t *n)
{
	struct bpfipt_ct_entry e;
	struct ct_conn *v;
	size_t nv;
	int r;

	*n = 0;
	if ((r = ct_read(ct_fd, now, true, &v, &nv)))
		return r;
	for (size_t i = 0; i < nv && !r; i++) {
		/* renewed by the data plane since it was read: keep it */
		int fd = key_fd(ct_fd, &v[i].key);

		if (bpf_map_lookup_elem(fd, &v[i].key, &e) || alive(&e, now))
			continue;
		if (!bpf_map_delete_elem(fd, &v[i].key))
			(*n)++;
		else if (errno != ENOENT)
			r = -errno;
	}
	free(v);
	return r;
}

/* ---------------------------------------------------------- settings ---- */

/* A decimal number 1 .. max, nothing else ("", "+5", "0x10", "5s" are not). */
static bool parse_count(const char *s, unsigned long long max, unsigned long long *v)
{
	unsigned long long x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (unsigned long long)(*s - '0');
		if (x > max)
			return false;
	}
	*v = x;
	return x >= 1;
}

int ct_settings_parse(struct ct_settings *s, const char *tok, struct ipt_err *err)
{
	const char *eq = strchr(tok, '=');
	unsigned long long v;
	size_t len;
	int i;

	if (!eq || eq == tok)
		return ipt_err_param(err, "bad setting `%s': expected name=value", tok);
	len = (size_t)(eq - tok);
	if (len == 3 && !strncmp(tok, "max", 3)) {
		if (!parse_count(eq + 1, CT_MAX_LIMIT, &v))
			return ipt_err_param(err, "bad value `%s' for max: a number of entries, "
					     "1 to %u", eq + 1, CT_MAX_LIMIT);
		s->max = (__u32)v;
		return 0;
	}
	for (i = 0; i < BPFIPT_CTT_MAX; i++) {
		const char *name = ct_timeout_name(i);

		if (strlen(name) == len && !strncmp(tok, name, len))
			break;
	}
	if (i == BPFIPT_CTT_MAX)
		return ipt_err_param(err, "unknown setting `%.*s' (bpf-conntrack -T lists them)",
				     (int)len, tok);
	if (!parse_count(eq + 1, 0xffffffffull, &v))
		return ipt_err_param(err, "bad value `%s' for %s: seconds, 1 to 4294967295",
				     eq + 1, ct_timeout_name(i));
	s->timeout_s[i] = v;
	return 0;
}

void ct_settings_format(struct strbuf *sb, const struct ct_settings *s)
{
	sb_addf(sb, "max %u\n", s->max);
	for (int i = 0; i < BPFIPT_CTT_MAX; i++)
		sb_addf(sb, "%s %llu\n", ct_timeout_name(i), (unsigned long long)s->timeout_s[i]);
}
