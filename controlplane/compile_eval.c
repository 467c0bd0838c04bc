// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane's per-packet algorithm (dataplane/bpfipt.h, top comment) run in C
 * on a struct cp_compiled, so the compiler can be tested against cp_ref_eval()
 * without a kernel; and counter indexes mapped back to the model.
 */
#include "compile.h"

#include <arpa/inet.h>
#include <linux/netfilter/xt_conntrack.h>
#include <stdlib.h>
#include <string.h>

/* Order of cp_compiled.tuples: by key (group, source, destination, ports,
 * protocol); equal keys (a tuple repeated along a run) by offset. */
static int cmp_u32(__u32 a, __u32 b)
{
	return a < b ? -1 : a > b;
}

int cp_tuple_key_cmp(const struct bpfipt_tuple6_key *x, const struct bpfipt_tuple6_key *y)
{
	/* field by field, returning at the first difference (the sorts of a
	 * 10 000-entry group compare 130 000 times) */
	if (x->group != y->group)
		return cmp_u32(x->group, y->group);
	for (int w = 0; w < 4; w++)
		if (x->src[w] != y->src[w])
			return cmp_u32(ntohl(x->src[w]), ntohl(y->src[w]));
	for (int w = 0; w < 4; w++)
		if (x->dst[w] != y->dst[w])
			return cmp_u32(ntohl(x->dst[w]), ntohl(y->dst[w]));
	if (x->sport != y->sport || x->dport != y->dport)
		return cmp_u32((__u32)x->sport << 16 | x->dport, (__u32)y->sport << 16 | y->dport);
	return cmp_u32(x->proto, y->proto);
}

__u32 cp_word_mask(unsigned int plen, unsigned int w)
{
	unsigned int bits = plen > 32 * w ? plen - 32 * w : 0;

	return bits >= 32 ? ~0u : bits ? ~0u << (32 - bits) : 0;
}

void cp_tuple_addr6(__be32 out[4], const __u8 a[16], unsigned int plen)
{
	for (unsigned int w = 0; w < 4; w++) {
		__u32 v;

		memcpy(&v, a + 4 * w, 4);
		out[w] = v & htonl(cp_word_mask(plen, w));
	}
}

int cp_tuple_cmp(const void *a, const void *b)
{
	const struct cp_tuple *x = a, *y = b;
	int r = cp_tuple_key_cmp(&x->k, &y->k);

	return r ? r : cmp_u32(x->off, y->off);
}

/* Longest prefix match in a sorted (key, addr, plen) array; -1 when none. */
static long lpm_lookup(const struct cp_lpm *l, __u32 key, __be32 addr)
{
	__u32 a = ntohl(addr);

	for (int plen = 32; plen >= 0; plen--) {
		__u32 m = plen ? 0xffffffffu << (32 - plen) : 0;
		__u32 want = a & m;
		size_t lo = 0, hi = l->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct cp_lpm_entry *e = &l->e[mid];
			int c;

			if (e->key != key)
				c = e->key < key ? -1 : 1;
			else if (ntohl(e->addr) != want)
				c = ntohl(e->addr) < want ? -1 : 1;
			else if (e->plen != plen)
				c = e->plen < plen ? -1 : 1;
			else
				return (long)e->value;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return -1;
}

/* The same on IPv6 entries (16-byte addresses). */
static long lpm_lookup6(const struct cp_lpm *l, __u32 key, const __u8 addr[16])
{
	for (int plen = 128; plen >= 0; plen--) {
		__u8 want[16];
		size_t lo = 0, hi = l->n;

		for (int i = 0; i < 16; i++) {
			int bits = plen - 8 * i;

			want[i] = bits >= 8 ? addr[i] : bits <= 0 ? 0 : addr[i] & (0xff << (8 - bits));
		}
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct cp_lpm_entry6 *e = &l->e6[mid];
			int c;

			/* the order of cp_lpm_sort6(): key, address, length */
			if (e->key != key)
				c = e->key < key ? -1 : 1;
			else if ((c = memcmp(e->addr, want, 16)) == 0 && e->plen != plen)
				c = e->plen < plen ? -1 : 1;
			if (!c)
				return (long)e->value;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return -1;
}

static long addr_lookup(const struct cp_lpm *l, __u32 key, const struct cp_packet *p, bool dst)
{
	if (p->family == 6)
		return l->e6 ? lpm_lookup6(l, key, dst ? p->daddr6 : p->saddr6) : -1;
	return lpm_lookup(l, key, dst ? p->daddr : p->saddr);
}

static __u32 if_lookup(const struct cp_if_field *f, __u32 chain, __u32 ifindex)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cp_if_entry *e = &f->e[mid];

		if (e->chain == chain && e->ifindex == ifindex)
			return e->vec;
		if (e->chain < chain || (e->chain == chain && e->ifindex < ifindex))
			lo = mid + 1;
		else
			hi = mid;
	}
	return f->dflt[chain];
}

static __u32 arr(const struct cp_array_field *f, unsigned int chain, unsigned int key)
{
	return cp_array_vec(f, chain, key);
}

/* The data plane's ct_match() (dataplane/bpfipt.bpf.c) on the compiled extra. */
static bool ct_fails(const struct bpfipt_extra *e, __u16 flag, bool ok)
{
	return (e->ct_flags & flag) && (ok ^ !(e->ct_inv & flag));
}

static bool in_range(__u32 v, const __u16 r[2])
{
	return v >= r[0] && v <= r[1];
}

static bool ct_ok(const struct bpfipt_extra *e, const struct cp_packet *p)
{
	const __be32 a[4] = { p->ct_osrc, p->ct_odst, p->ct_odst, p->ct_osrc };
	const __u16 pt[4] = { p->ct_osport, p->ct_odport, p->ct_odport, p->ct_osport };

	if (!p->has_ct)
		return e->ct_flags & XT_CONNTRACK_STATE;
	if (ct_fails(e, XT_CONNTRACK_DIRECTION, p->ctdir == 0))
		return false;
	for (int i = 0; i < 4; i++)
		if (ct_fails(e, XT_CONNTRACK_ORIGSRC << i,
			     ((a[i] ^ e->ct_addr[i][0]) & e->ct_mask[i][0]) == 0))
			return false;
	if (ct_fails(e, XT_CONNTRACK_PROTO, p->ct_proto == e->ct_proto))
		return false;
	for (int i = 0; i < 4; i++)
		if (ct_fails(e, XT_CONNTRACK_ORIGSRC_PORT << i, in_range(pt[i], e->ct_port[i])))
			return false;
	if (ct_fails(e, XT_CONNTRACK_STATUS, p->ctstatus & e->ct_status))
		return false;
	return !ct_fails(e, XT_CONNTRACK_EXPIRES,
			 p->ct_expire >= e->ct_expire[0] && p->ct_expire <= e->ct_expire[1]);
}

bool cp_addrtype_ok(__u16 src, __u16 dst, __u8 flags, const struct cp_packet *p)
{
	int dev = flags & BPFIPT_AT_LIMIT_IN ? 1 : flags & BPFIPT_AT_LIMIT_OUT ? 2 : 0;

	if (src && !(!!(src & (1u << (p->atype[0][dev] & 15))) ^ !!(flags & BPFIPT_AT_INVERT_SRC)))
		return false;
	return !dst || (!!(dst & (1u << (p->atype[1][dev] & 15))) ^ !!(flags & BPFIPT_AT_INVERT_DST));
}

static bool extras_ok(const struct cp_compiled *cc, const struct bpfipt_slot *s,
		      const struct cp_packet *p, bool has_ports)
{
	const struct bpfipt_extra *e;

	if (!(s->xflags & (BPFIPT_X_PORTS_EITHER | BPFIPT_X_MARK | BPFIPT_X_MAC | BPFIPT_X_CT |
			   BPFIPT_X_ADDRTYPE)))
		return true;	/* LIMIT: matches (see compile.h) */
	if (s->extra >= cc->nextras)
		return false;
	e = &cc->extras[s->extra];
	if (s->xflags & BPFIPT_X_PORTS_EITHER) {
		bool m = false;

		if (!has_ports)
			return false;
		for (unsigned int i = 0; i < e->nports && i < 15; i++) {
			__u16 lo = e->ports[2 * i], hi = e->ports[2 * i + 1];

			if ((p->sport >= lo && p->sport <= hi) || (p->dport >= lo && p->dport <= hi))
				m = true;
		}
		if (m == !!e->ports_invert)
			return false;
	}
	if (s->xflags & BPFIPT_X_MARK) {
		if (((p->mark & e->mark_mask) == e->mark_value) == !!e->mark_invert)
			return false;
	}
	if (s->xflags & BPFIPT_X_MAC) {
		if (!p->has_mac)
			return false;
		if ((memcmp(p->mac, e->mac, 6) == 0) == !!e->mac_invert)
			return false;
	}
	if ((s->xflags & BPFIPT_X_CT) && !ct_ok(e, p))
		return false;
	if ((s->xflags & BPFIPT_X_ADDRTYPE) && !cp_addrtype_ok(e->at_src, e->at_dst, e->at_flags, p))
		return false;
	return true;
}

/* A tuple group slot: the counter of the packet's tuple, -1 without one; with
 * cut, of its address pair (BPFIPT_TG_CUT: IPv6, a chain cut short). */
static long tuple_lookup(const struct cp_compiled *cc, const struct bpfipt_slot *sl,
			 const struct cp_packet *p, bool has_ports, bool cut)
{
	__u32 tp = cut ? 0 : sl->tp_ports;
	struct bpfipt_tuple6_key k = {
		.group = sl->group | (cut ? BPFIPT_TG_CUT : 0),
		.sport = tp & BPFIPT_TP_SPORT ? p->sport : 0,
		.dport = tp & BPFIPT_TP_DPORT ? p->dport : 0,
		.proto = tp & BPFIPT_TP_PROTO ? p->proto : 0,
	};
	size_t lo = 0, hi = cc->ntuples;

	if (p->family == 6) {
		cp_tuple_addr6(k.src, p->saddr6, sl->tp_splen);
		cp_tuple_addr6(k.dst, p->daddr6, sl->tp_dplen);
	} else {
		k.src[0] = sl->tp_splen ? p->saddr & htonl(~0u << (32 - sl->tp_splen)) : 0;
		k.dst[0] = sl->tp_dplen ? p->daddr & htonl(~0u << (32 - sl->tp_dplen)) : 0;
	}

	if ((tp & (BPFIPT_TP_SPORT | BPFIPT_TP_DPORT)) && !has_ports)
		return -1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cp_tuple_key_cmp(&cc->tuples[mid].k, &k);

		if (!c)
			return (long)sl->counter + cc->tuples[mid].off;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void trace_count(struct cp_trace *tr, __u32 counter)
{
	if (tr->ncounted < CP_TRACE_MAX)
		tr->counted[tr->ncounted] = counter;
	tr->ncounted++;
}

int cp_lbvs_eval(const struct cp_compiled *cc, enum bpfipt_chain c, const struct cp_packet *p,
		 struct cp_trace *tr)
{
	unsigned int nw = cc->nwords, n = cc->nslots[c];
	bool frag = p->nonfirst_frag;
	bool has_ports = p->has_ports && !frag;
	long vid[BPFIPT_F_MAX];
	__u64 stackbuf[64], *and = nw <= 64 ? stackbuf : malloc(nw * sizeof(__u64));
	__u32 stack[BPFIPT_MAX_DEPTH];
	unsigned int cursor = 0, depth = 0;
	int rc = 1;

	tr->verdict = BPFIPT_V_DROP;
	tr->ncounted = 0;
	if (!and)
		return -1;
	vid[BPFIPT_F_SRC] = addr_lookup(&cc->src, c, p, false);
	vid[BPFIPT_F_DST] = addr_lookup(&cc->dst, c, p, true);
	vid[BPFIPT_F_PROTO] = arr(&cc->proto, c, p->proto);
	vid[BPFIPT_F_SPORT] = arr(&cc->sport, c, has_ports ? p->sport : BPFIPT_NO_PORT);
	vid[BPFIPT_F_DPORT] = arr(&cc->dport, c, has_ports ? p->dport : BPFIPT_NO_PORT);
	vid[BPFIPT_F_IIF] = if_lookup(&cc->iif, c, p->iif);
	vid[BPFIPT_F_OIF] = if_lookup(&cc->oif, c, p->oif);
	vid[BPFIPT_F_TCPFLAGS] = arr(&cc->tcpflags, c,
				     p->has_tcp && !frag ? p->tcpflags : BPFIPT_NO_TCP);
	vid[BPFIPT_F_ICMP] = arr(&cc->icmp, c, p->has_icmp && !frag ?
				 (unsigned int)p->icmp_type << 8 | p->icmp_code : BPFIPT_NO_ICMP);
	vid[BPFIPT_F_FRAG] = arr(&cc->frag, c, frag);
	vid[BPFIPT_F_LEN] = arr(&cc->len, c, p->len);
	vid[BPFIPT_F_CTSTATE] = arr(&cc->ctstate, c, p->ctstate & 31);
	for (unsigned int w = 0; w < nw; w++)
		and[w] = ~0ull;
	for (int f = 0; f < BPFIPT_F_MAX; f++) {
		/* IPv6, a cut chain: every slot is a candidate for these (the data
		 * plane's classify()); the -p ones drop the packet */
		if (p->family == 6 && p->cut &&
		    (f == BPFIPT_F_PROTO || f == BPFIPT_F_SPORT || f == BPFIPT_F_DPORT ||
		     f == BPFIPT_F_TCPFLAGS || f == BPFIPT_F_ICMP || f == BPFIPT_F_LEN ||
		     f == BPFIPT_F_CTSTATE))
			continue;
		if (vid[f] < 0 || (size_t)vid[f] >= cc->nvecs) {
			rc = -1;
			goto out;
		}
		for (unsigned int w = 0; w < nw; w++)
			and[w] &= cp_vec_chunk(cc, vid[f], w / BPFIPT_CHUNK_WORDS)[w % BPFIPT_CHUNK_WORDS];
	}

	for (unsigned int step = 0; step < BPFIPT_MAX_STEPS; step++) {
		unsigned int s = n, w = cursor / 64;

		if (cursor < n) {
			__u64 bits = and[w] & (~0ull << (cursor % 64));

			for (;;) {
				if (bits) {
					s = w * 64 + __builtin_ctzll(bits);
					break;
				}
				if (++w >= nw)
					break;
				bits = and[w];
			}
		}
		if (s >= n) {
			rc = -1;	/* POLICY/RETURN always match: cannot happen */
			goto out;
		}
		const struct bpfipt_slot *sl = &cc->slots[c][s];

		/* a group slot: the address in its list, and which rule's counter (a
		 * chain's only group on a field is in every vector of the field:
		 * cp_compiled.gfold) */
		long gv = -1;
		bool hot = (sl->xflags & BPFIPT_X_PROTO6) && p->family == 6 && p->cut;

		if (sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)) {
			bool dst = sl->xflags & BPFIPT_X_GROUP_DST;

			gv = addr_lookup(dst ? &cc->group_dst : &cc->group_src, sl->group, p, dst);
			if (gv < 0) {
				cursor = s + 1;
				continue;
			}
		}
		/* a tuple group of -p rules and a cut chain: its vectors said its
		 * addresses match, ports unseen, when one address varies along the
		 * run; when both do, its pairs say it (bpfipt.h) */
		if ((sl->xflags & BPFIPT_X_GROUP_TUPLE) &&
		    (!hot || (sl->tp_splen && sl->tp_dplen))) {
			gv = tuple_lookup(cc, sl, p, has_ports, hot);
			if (gv < 0) {
				cursor = s + 1;
				continue;
			}
		}
		/* the data plane's order (bpfipt_step()): the groups' lists, then the
		 * hotdrop of a cut chain */
		if (hot) {
			tr->verdict = BPFIPT_V_DROP;	/* hotdrop, uncounted */
			rc = 0;
			goto out;
		}
		if (p->family == 6 && p->cut &&
		    (!cp_vec_bit(cc, vid[BPFIPT_F_LEN], s) ||
		     !cp_vec_bit(cc, vid[BPFIPT_F_CTSTATE], s))) {
			/* a rule without -p: its length and state, left out of the AND */
			cursor = s + 1;
			continue;
		}
		if (!extras_ok(cc, sl, p, has_ports)) {
			cursor = s + 1;
			continue;
		}
		if (gv >= 0)
			trace_count(tr, (__u32)gv);
		else if (sl->counter != BPFIPT_NO_COUNTER)
			trace_count(tr, sl->counter);
		/* a verdict map: the rule's own slot says where it goes */
		if (sl->xflags & BPFIPT_X_VMAP) {
			size_t m = (size_t)sl->target + ((__u32)gv - sl->counter);

			if (gv < 0 || m < n || m >= n + cc->nmslots[c]) {
				rc = -1;
				goto out;
			}
			sl = &cc->slots[c][m];
		}
		switch (sl->kind) {
		case BPFIPT_S_VERDICT:
		case BPFIPT_S_POLICY:
			tr->verdict = sl->verdict;
			rc = 0;
			goto out;
		case BPFIPT_S_CONTINUE:
			cursor = s + 1;
			break;
		case BPFIPT_S_JUMP:
			if (depth >= BPFIPT_MAX_DEPTH) {
				rc = 2;
				goto out;
			}
			stack[depth++] = s + 1;
			cursor = sl->target;
			break;
		case BPFIPT_S_GOTO:
			cursor = sl->target;
			break;
		case BPFIPT_S_RETURN:
			cursor = depth ? stack[--depth] : cc->policy_slot[c];
			break;
		default:
			rc = -1;
			goto out;
		}
	}
out:
	if (rc)
		tr->verdict = BPFIPT_V_DROP;
	if (and != stackbuf)
		free(and);
	return rc;
}

void cp_counter_owner(const struct ipt_table *t, __u32 counter, unsigned int *chain, int *rule)
{
	static const char *const names[BPFIPT_NCHAINS] = { "INPUT", "FORWARD", "OUTPUT" };
	__u32 base = 0;

	for (unsigned int i = 0; i < t->nchains; i++) {
		if (counter < base + t->chains[i]->nrules) {
			*chain = i;
			*rule = (int)(counter - base);
			return;
		}
		base += t->chains[i]->nrules;
	}
	*rule = -1;
	*chain = UINT32_MAX;
	if (counter - base < BPFIPT_NCHAINS) {
		for (unsigned int i = 0; i < t->nchains; i++)
			if (t->chains[i]->builtin && !strcmp(t->chains[i]->name, names[counter - base]))
				*chain = i;
	}
}
