/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything that crosses the boundary between the BPF programs and userspace:
 * map keys and values, slot kinds, verdicts, field ids. Included by
 * dataplane/bpfipt.bpf.c and by the control plane; uapi types only.
 *
 * The classifier (Linear Bit Vector Search). Each base chain c (INPUT, FORWARD,
 * OUTPUT) is compiled into a list of SLOTS numbered 0..nslots[c]-1:
 *   - the chain's own rules, in order, then its POLICY slot (always matches);
 *   - then, for every user chain reachable from c, a BLOCK: that chain's rules
 *     followed by an implicit RETURN slot (always matches).
 * For each FIELD a packet has (source address, protocol, destination port, ...),
 * a map gives the bit vector of the slots whose constraint on that field accepts
 * the packet's value (a slot that does not constrain the field has its bit set
 * everywhere). The slots that match are the AND of the field vectors. The
 * program walks them in order from a CURSOR:
 *
 *   cursor = 0, depth = 0
 *   loop (at most BPFIPT_MAX_STEPS times):
 *     s = first slot >= cursor whose bit is set in the AND of all field vectors
 *     if slot s has extra checks (BPFIPT_X_*) and they fail: cursor = s + 1; continue
 *     count the packet on counter slot[s].counter (if != BPFIPT_NO_COUNTER);
 *       a group slot (BPFIPT_X_GROUP_SRC/DST) counts on the value of its
 *       address set (slot[s].ival) for the src/dst address instead, a tuple
 *       group slot (BPFIPT_X_GROUP_TUPLE) on its tuple's, and does not match
 *       without one
 *     VERDICT:  done, slot[s].verdict
 *     CONTINUE: (LOG, NFLOG, no target, ...) cursor = s + 1
 *     JUMP:     push s + 1 (depth < BPFIPT_MAX_DEPTH), cursor = slot[s].target
 *     GOTO:     cursor = slot[s].target
 *       (a verdict map, BPFIPT_X_VMAP: the target of the member slot of the
 *       rule whose counter was counted, after the chain's slots)
 *     RETURN:   if depth == 0: cursor = policy slot of c, else cursor = pop()
 *     POLICY:   done, slot[s].verdict (the chain policy)
 * A rule in a base chain with -j RETURN is a RETURN slot (depth 0: policy).
 * Termination is guaranteed by BPFIPT_MAX_STEPS; a packet that exhausts it gets
 * BPFIPT_V_DROP and is counted in the stats map (documented limit).
 */
#ifndef BPFIPT_SHARED_H
#define BPFIPT_SHARED_H

#include <linux/types.h>

enum bpfipt_chain {
	BPFIPT_INPUT,
	BPFIPT_FORWARD,
	BPFIPT_OUTPUT,
	BPFIPT_NCHAINS,
};

/* Fields with a bit-vector map. The value a packet has for each: */
enum bpfipt_field {
	BPFIPT_F_SRC,		/* address set: source address */
	BPFIPT_F_DST,		/* address set: destination address */
	BPFIPT_F_PROTO,		/* array: IP protocol 0..255 (IPv6: the upper-layer
				 * protocol after the extension headers) */
	BPFIPT_F_SPORT,		/* class: source port 0..65535, BPFIPT_NO_PORT without one */
	BPFIPT_F_DPORT,		/* class: destination port, same */
	BPFIPT_F_IIF,		/* hash: input ifindex, 0 in OUTPUT */
	BPFIPT_F_OIF,		/* hash: output ifindex, 0 in INPUT; for both, a missing key
				 * (0 included) takes the chain's default vector: look them up
				 * in every chain (-i in a chain reached from OUTPUT matters) */
	BPFIPT_F_TCPFLAGS,	/* array: TCP flags byte 0..255, BPFIPT_NO_TCP otherwise */
	BPFIPT_F_ICMP,		/* class: type << 8 | code, BPFIPT_NO_ICMP otherwise */
	BPFIPT_F_FRAG,		/* array: 0 = not a non-first fragment, 1 = non-first fragment */
	BPFIPT_F_LEN,		/* class: IP total length 0..65535 (IPv6: payload + 40) */
	BPFIPT_F_CTSTATE,	/* array: the packet's enum bpfipt_ct_state */
	BPFIPT_F_MAX,
};

/* The fields looked up in the generation's field arrays (bpfipt_fields): the
 * array and class ones above. A generation that looks none of them up, in its
 * chains' lookups or in their slot prefixes' tests, has no field arrays. */
#define BPFIPT_ARRAY_FIELDS						\
	(1u << BPFIPT_F_PROTO | 1u << BPFIPT_F_SPORT | 1u << BPFIPT_F_DPORT |	\
	 1u << BPFIPT_F_TCPFLAGS | 1u << BPFIPT_F_ICMP | 1u << BPFIPT_F_FRAG |	\
	 1u << BPFIPT_F_LEN | 1u << BPFIPT_F_CTSTATE)

/* Special values of the class-mapped fields (index 65536 of their class array). */
#define BPFIPT_NO_PORT		65536	/* no TCP/UDP/SCTP/DCCP/UDPLITE header (or a fragment) */
#define BPFIPT_NO_ICMP		65536	/* not ICMP, or a fragment, or truncated */
#define BPFIPT_NO_TCP		256	/* index in the tcpflags array: not a TCP header */
#define BPFIPT_CLASS_KEYS	65537	/* entries per chain of a 16-bit class array */

/* Limits (documented in docs/dataplane.md). */
#define BPFIPT_MAX_WORDS	16384	/* bit-vector words: 1 048 576 slots per chain */
#define BPFIPT_MAX_STEPS	256	/* slots visited per packet per chain */
#define BPFIPT_MAX_DEPTH	16	/* nested -j calls */

/* Address sets (bpfipt_ival_find() in dataplane/bpfipt.bpf.c, controlplane/ival.c).
 * A set maps an IPv4 address to the value of its longest matching prefix (IPv6:
 * struct bpfipt_ival6_page below). The loader flattens the prefixes into sorted
 * disjoint intervals (each one [start, next start) with one value; the first start
 * is 0; addresses no prefix holds get BPFIPT_IVAL_NONE) and writes them as a
 * B+-tree of pages into the
 * generation map bpfipt_ival: a leaf page holds up to BPFIPT_IVAL_FANOUT starts
 * (host order, ascending) and their values, an inner page the first start of
 * each child and the child's page index. A search takes, page after page from
 * the root, the last key <= the address. A page's unused tail repeats its last
 * value under key 0xffffffff: below 255.255.255.255 the tail is never taken,
 * and 255.255.255.255 takes the last real interval's value, as it should.
 * Depth 1..BPFIPT_IVAL_MAX_DEPTH: 16M intervals per set. A set of at most
 * BPFIPT_IVAL_FANOUT / 2 intervals takes a WINDOW of a page shared with other small
 * sets: 2^w entries (w = 2..7) at offset index * 2^w, padded as a page's tail; the
 * search of its one level stays inside it. A descriptor names a set: its root page
 * (BPFIPT_IVAL_PAGE_MASK), window index and w (8 and 0: the whole page), depth
 * (0: no set). The address fields have one set per chain and direction
 * (bpfipt_conf.addr_set: value = vector id), each group slot one (bpfipt_slot.ival:
 * value = the counter of the run's rule that the address hits first). */
#define BPFIPT_IVAL_FANOUT	256
#define BPFIPT_IVAL_MAX_DEPTH	3
#define BPFIPT_IVAL_PAGE_MASK	((1u << 20) - 1)	/* 1M pages: 2 GiB */
#define BPFIPT_IVAL_IDX_SHIFT	20			/* 6 bits: window index */
#define BPFIPT_IVAL_WIN_SHIFT	26			/* 4 bits: w */
#define BPFIPT_IVAL_DEPTH_SHIFT	30			/* 2 bits */
#define BPFIPT_IVAL_NONE	0xffffffffu
/* A generation whose sets fit in BPFIPT_IVAL_FIXED pages keeps them in
 * bpfipt_ivalfx (IPv6: bpfipt_ival6fx), an inner array of that size in every
 * generation, whose lookups the verifier inlines (BPFIPT_C_IVAL_FIXED); a larger
 * one in bpfipt_ival (bpfipt_ival6), of its own size, each page's lookup a
 * call. 135 KiB (IPv6: 344 KiB). */
#define BPFIPT_IVAL_FIXED	64

/* A page's separators: sep[j] repeats key[j * BPFIPT_IVAL_SEP], so that a search's
 * first four steps read one cache line (a line of IPv4 keys holds one group of
 * BPFIPT_IVAL_SEP), not four lines across the page. */
#define BPFIPT_IVAL_SEP		16
#define BPFIPT_IVAL_NSEP	(BPFIPT_IVAL_FANOUT / BPFIPT_IVAL_SEP)

struct bpfipt_ival_page {
	__u32 sep[BPFIPT_IVAL_NSEP];
	__u32 key[BPFIPT_IVAL_FANOUT];
	__u32 val[BPFIPT_IVAL_FANOUT];
};

/* IPv6 address sets are the same trees of 128-bit starts (bpfipt_ival6_find(),
 * generation map bpfipt_ival6, the same descriptors): a key is two words in host
 * order, [0] its low 64 bits and [1] its high 64 bits (the first 8 bytes of the
 * address), and the unused tail's key is all ones; the separators likewise. */
struct bpfipt_ival6_page {
	__u64 sep[BPFIPT_IVAL_NSEP][2];
	__u64 key[BPFIPT_IVAL_FANOUT][2];
	__u32 val[BPFIPT_IVAL_FANOUT];
};

/* Hash key of the interface fields. */
struct bpfipt_if_key {
	__u32 chain;
	__u32 ifindex;
};

enum bpfipt_slot_kind {
	BPFIPT_S_VERDICT,
	BPFIPT_S_CONTINUE,
	BPFIPT_S_JUMP,
	BPFIPT_S_GOTO,
	BPFIPT_S_RETURN,
	BPFIPT_S_POLICY,
	BPFIPT_S_MAX,
};

enum bpfipt_verdict {
	BPFIPT_V_ACCEPT,
	BPFIPT_V_DROP,
	BPFIPT_V_REJECT,	/* dropped; the reply is generated in issue 5 */
	BPFIPT_V_MAX,
};

/* --reject-with of a REJECT slot: for IPv4 the kernel's enum ipt_reject_with
 * values; for IPv6 BPFIPT_REJ6 + the kernel's enum ip6t_reject_with value (the
 * compiler maps a REJECT payload of an ip6tables table there), so one byte tells
 * the family's reply apart (dataplane/reject.bpf.h). A code of the other family
 * than the packet's is dropped without a reply. */
enum bpfipt_reject_with {
	BPFIPT_REJ_NET_UNREACH = 0,
	BPFIPT_REJ_HOST_UNREACH = 1,
	BPFIPT_REJ_PROT_UNREACH = 2,
	BPFIPT_REJ_PORT_UNREACH = 3,	/* the default */
	BPFIPT_REJ_NET_PROHIB = 5,
	BPFIPT_REJ_HOST_PROHIB = 6,
	BPFIPT_REJ_TCP_RESET = 7,
	BPFIPT_REJ_ADMIN_PROHIB = 8,
	BPFIPT_REJ6 = 16,
	BPFIPT_REJ6_NO_ROUTE = BPFIPT_REJ6 + 0,		/* icmp6-no-route: code 0 */
	BPFIPT_REJ6_ADM_PROHIBITED = BPFIPT_REJ6 + 1,	/* icmp6-adm-prohibited: 1 */
	BPFIPT_REJ6_NOT_NEIGHBOUR = BPFIPT_REJ6 + 2,	/* (no option names it): 2 */
	BPFIPT_REJ6_ADDR_UNREACH = BPFIPT_REJ6 + 3,	/* icmp6-addr-unreachable: 3 */
	BPFIPT_REJ6_PORT_UNREACH = BPFIPT_REJ6 + 4,	/* icmp6-port-unreachable: 4, the default */
	BPFIPT_REJ6_ECHOREPLY = BPFIPT_REJ6 + 5,	/* the kernel sends nothing */
	BPFIPT_REJ6_TCP_RESET = BPFIPT_REJ6 + 6,	/* tcp-reset */
	BPFIPT_REJ6_POLICY_FAIL = BPFIPT_REJ6 + 7,	/* icmp6-policy-fail: 5 */
	BPFIPT_REJ6_REJECT_ROUTE = BPFIPT_REJ6 + 8,	/* icmp6-reject-route: 6 */
};

/* -j LOG (dataplane/log.bpf.h, controlplane/logfmt.c). A LOG slot the walk passes
 * is noted (at most BPFIPT_LOG_PENDING per packet); once the chain is decided the
 * program writes one event per note into the ring buffer bpfipt_log (in slot 0
 * of the instance map bpfipt_log_slot, made by the first ruleset that logs): the
 * rule's level, flags and prefix, the interfaces and the first
 * BPFIPT_LOG_CAP bytes of the packet from its IP header. The reader
 * (bpf-iptables --log-follow) prints the kernel's LOG line for it. An event
 * that finds the ring full, or a note beyond the limit, is counted in
 * BPFIPT_ST_LOG_LOST, never lost silently. */
#define BPFIPT_LOG_PREFIX	30		/* the kernel's LOG prefix, NUL included */
#define BPFIPT_LOG_CAP		256		/* packet bytes (at most CAP - 1 taken): IP
						 * header, options, transport headers */
#define BPFIPT_LOG_PENDING	4
#define BPFIPT_LOG_RING		(1u << 20)	/* bytes of the ring buffer */

struct bpfipt_log_event {
	__u64 ts;		/* bpf_ktime_get_boot_ns() */
	__u32 iif, oif;		/* ifindex, 0 when none (INPUT's out, OUTPUT's in) */
	__u32 mark;		/* skb mark (0 at XDP) */
	__u32 uid, gid;		/* the socket's file's owner, when has_uid */
	__u32 len;		/* bytes from the IP header to the end of the packet */
	__u16 caplen;		/* of them in pkt */
	__u8 chain;		/* enum bpfipt_chain */
	__u8 level, flags;	/* the rule's --log-level and XT_LOG_* flags */
	__u8 maclen;		/* link-layer header bytes in mac: 14, or 0 */
	__u8 has_uid;
	__u8 pad;
	__u8 mac[14];
	char prefix[BPFIPT_LOG_PREFIX];
	__u8 pkt[BPFIPT_LOG_CAP];
};

/* Extra checks: constraints not expressed as LBVS fields, tested only on a
 * candidate slot. Bits of struct bpfipt_slot.xflags; parameters in bpfipt_extra. */
enum {
	BPFIPT_X_PORTS_EITHER	= 1 << 0,	/* multiport --ports: sport or dport in the set */
	BPFIPT_X_MARK		= 1 << 1,	/* (skb mark & mask) == value, tc hooks only */
	BPFIPT_X_MAC		= 1 << 2,	/* source MAC */
	BPFIPT_X_LIMIT		= 1 << 3,	/* token bucket */
	BPFIPT_X_CT		= 1 << 4,	/* -m conntrack tuple/dir/status/expire options */
	BPFIPT_X_GROUP_SRC	= 1 << 5,	/* group slot: counter from its address set (src) */
	BPFIPT_X_GROUP_DST	= 1 << 6,	/* group slot: counter from its address set (dst) */
	BPFIPT_X_ADDRTYPE	= 1 << 7,	/* -m addrtype: address types (bpfipt_rtlocal) */
	BPFIPT_X_RECENT		= 1 << 8,	/* -m recent: a list of bpfipt_recent */
	BPFIPT_X_PROTO6		= 1 << 9,	/* IPv6 rule with -p (IP6T_F_PROTO): a packet whose
						 * extension-header chain is cut drops here, not
						 * counted (ip6_packet_match's hotdrop) */
	BPFIPT_X_GROUP_TUPLE	= 1 << 10,	/* tuple group slot: counter from bpfipt_tuple
						 * (struct bpfipt_tuple_key), no entry: no match */
	BPFIPT_X_VMAP		= 1 << 11,	/* a group of -j/-g rules that name different
						 * chains (a verdict map): the rule's own
						 * slot, target + (counter - the slot's
						 * counter), says where it goes */
};
/* the extra matches a candidate slot's extra_ok() tests (bpfipt_extras) */
#define BPFIPT_X_EXTRA	(BPFIPT_X_PORTS_EITHER | BPFIPT_X_MARK | BPFIPT_X_MAC |		\
			 BPFIPT_X_LIMIT | BPFIPT_X_CT | BPFIPT_X_ADDRTYPE | BPFIPT_X_RECENT)

/* A tuple group: a run of rules alike but for the values of their source and
 * destination prefixes (each of one length along the run) and their exact source
 * and destination ports (-p tcp/udp --sport/--dport N), with a verdict that ends
 * the chain's scan. One slot, whose fields hold the union of the run's values;
 * the packet's masked tuple, looked up in the generation's bpfipt_tuple hash,
 * gives the first rule of the run with exactly that tuple (the rule that would
 * judge it) as an offset from the slot's counter (the run's first rule, whose
 * counters follow it), no entry: none does. Lengths and ports come from
 * the slot (tp_splen, tp_dplen, tp_ports). IPv6 tables key their hash
 * (bpfipt_tuple6) with struct bpfipt_tuple6_key. There a rule with -p drops a
 * packet whose extension-header chain is cut once its addresses match, ports
 * unseen (the walk's BPFIPT_X_PROTO6). When one address varies along such a run,
 * the slot's union of it is exact for that packet; when both vary, the union of
 * the sources and the union of the destinations are not (a source of one rule
 * with a destination of another), and the hash also holds each rule's address
 * pair under group | BPFIPT_TG_CUT, ports and protocol 0: the cut packet's pair
 * is looked up there, and with an entry the packet drops. */
enum {
	BPFIPT_TP_SPORT	= 1 << 0,	/* the key holds the source port (else 0) */
	BPFIPT_TP_DPORT	= 1 << 1,	/* ... the destination port (with either, a
					 * packet without ports has no entry) */
	BPFIPT_TP_PROTO	= 1 << 2,	/* ... the protocol (-p, not negated) */
};
#define BPFIPT_TG_CUT	(1u << 31)	/* IPv6: a key's group bit of an address pair */

struct bpfipt_tuple_key {
	__u32 group;		/* struct bpfipt_slot.group */
	__be32 src, dst;	/* masked to tp_splen / tp_dplen bits */
	__u16 sport, dport;	/* host order, 0 when not in the key */
	__u8 proto;		/* 0 when not in the key */
	__u8 pad[3];
};

/*
 * The tuple bitmap (bpfipt_tbits, a generation with tuple groups or a folded
 * list's filter, below): bit
 * bpfipt_tbit(k) (IPv6: bpfipt_tbit6()) is set for every key k of the
 * generation's tuple hash, so a
 * packet whose key's bit is clear is in no group without the hash's search
 * (three calls in the kernel). One size for every generation, so that the
 * verifier inlines its lookup: 2^20 bits, 128 KiB; at 100 000 keys one bit in
 * ten is set. The same function in the data plane and the loader.
 */
#define BPFIPT_TBITS_LOG	20
#define BPFIPT_TBITS_WORDS	(1u << (BPFIPT_TBITS_LOG - 6))

/* ... the ports and protocol mixed into the addresses' hash h, and its bit */
static inline __attribute__((always_inline)) __u32
bpfipt_tbit_mix(__u64 h, __u16 sport, __u16 dport, __u8 proto)
{
	h ^= ((__u64)sport << 24 | (__u64)dport << 8 | proto) * 0x27d4eb2f165667c5ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (__u32)(h >> (64 - BPFIPT_TBITS_LOG));
}

static inline __attribute__((always_inline)) __u32
bpfipt_tbit(const struct bpfipt_tuple_key *k)
{
	__u64 h = (__u64)k->group * 0x9e3779b97f4a7c15ULL;

	h ^= (__u64)k->src * 0xc2b2ae3d27d4eb4fULL;
	h ^= (__u64)k->dst * 0x165667b19e3779f9ULL;
	return bpfipt_tbit_mix(h, k->sport, k->dport, k->proto);
}

struct bpfipt_tuple6_key {
	__u32 group;
	__be32 src[4], dst[4];	/* masked to tp_splen / tp_dplen bits */
	__u16 sport, dport;
	__u8 proto;
	__u8 pad[3];
};

static inline __attribute__((always_inline)) __u32
bpfipt_tbit6(const struct bpfipt_tuple6_key *k)
{
	__u64 h = (__u64)k->group * 0x9e3779b97f4a7c15ULL;

	h ^= ((__u64)k->src[0] << 32 | k->src[1]) * 0xc2b2ae3d27d4eb4fULL;
	h ^= ((__u64)k->src[2] << 32 | k->src[3]) * 0x165667b19e3779f9ULL;
	h ^= ((__u64)k->dst[0] << 32 | k->dst[1]) * 0x94d049bb133111ebULL;
	h ^= ((__u64)k->dst[2] << 32 | k->dst[3]) * 0xff51afd7ed558ccdULL;
	return bpfipt_tbit_mix(h, k->sport, k->dport, k->proto);
}

/*
 * The folded list's filter (bpfipt_conf.gfold_g, in the same bitmap): a list
 * that is not too long for the bitmap (BPFIPT_GBIT_MAX prefixes) has a bit set
 * for each of its prefixes, in the word of the /g1 block holding it, g1 the
 * list's shortest prefix (>= 1). Which bit: that of the /g1 block, or, when
 * the loader chose a second level g2 and the prefix has g2 bits or more, that
 * of its /g2 block (a deny list of /32s and /24s among a few /16s: 16 and 24;
 * the word of a block of 2^(32-16) addresses, its bit for each /24 there).
 * bpfipt_ghash(set, g, hi, lo) is the hash of the /g block holding address
 * hi, lo (its high and low 64 bits in host order; IPv4: the address in hi's
 * high 32 bits) in the list whose descriptor is set; BPFIPT_GWORD() of the
 * /g1 block's hash is the word, BPFIPT_GBIT() of the level's hash the bit. An
 * address whose word has neither of its two bits (one of each level) is in
 * none of the list's prefixes, and its search is spared: the packets a
 * fail2ban jail or a deny list does not name, most of them. An address near a
 * listed one (in its block, or in one whose bit a collision set) is searched.
 * One word, one lookup, for both levels.
 */
#define BPFIPT_GBIT_MAX		(1u << (BPFIPT_TBITS_LOG - 3))	/* one bit in eight */
#define BPFIPT_GWORD(h)		((__u32)((h) >> (64 - (BPFIPT_TBITS_LOG - 6))))
#define BPFIPT_GBIT(h)		(1ULL << ((h) & 63))

static inline __attribute__((always_inline)) __u64
bpfipt_ghash(__u32 set, __u32 g, __u64 hi, __u64 lo)
{
	__u64 h = ((__u64)set << 8 | g) * 0x9e3779b97f4a7c15ULL;

	if (g <= 64) {
		hi &= ~0ULL << ((64 - g) & 63);
		lo = 0;
	} else {
		lo &= ~0ULL << ((128 - g) & 63);
	}
	h ^= hi * 0xc2b2ae3d27d4eb4fULL;
	h ^= lo * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* The word and bit of a list's prefix of plen bits at hi, lo (the loader),
 * in the filter of levels g1, g2 of the list whose descriptor is set. */
static inline __attribute__((always_inline)) void
bpfipt_gprefix(__u32 set, __u32 g1, __u32 g2, __u32 plen, __u64 hi, __u64 lo, __u32 *word,
	       __u64 *bit)
{
	__u64 h = bpfipt_ghash(set, g1, hi, lo);

	*word = BPFIPT_GWORD(h);
	*bit = BPFIPT_GBIT(g2 && plen >= g2 ? bpfipt_ghash(set, g2, hi, lo) : h);
}

/* ... and of an address (the data plane): its word, and its bits of both
 * levels (one when g2 is 0) */
static inline __attribute__((always_inline)) void
bpfipt_gaddr(__u32 set, __u32 g1, __u32 g2, __u64 hi, __u64 lo, __u32 *word, __u64 *bits)
{
	__u64 h = bpfipt_ghash(set, g1, hi, lo);

	*word = BPFIPT_GWORD(h);
	*bits = BPFIPT_GBIT(h) | (g2 ? BPFIPT_GBIT(bpfipt_ghash(set, g2, hi, lo)) : 0);
}

/* The bounds of a tuple group's keys (struct bpfipt_tfast): source, destination,
 * source port, destination port. An IPv6 address is bounded by its 32-bit word
 * BPFIPT_TB_WORD6 (bits 32-63: the site and subnet of 2001:db8:SITE:NET::/64,
 * where the keys of one site's rules differ; its first word they mostly share). */
enum { BPFIPT_TB_SRC, BPFIPT_TB_DST, BPFIPT_TB_SPORT, BPFIPT_TB_DPORT, BPFIPT_TB_N };
#define BPFIPT_TB_WORD6	1

/* -m recent. Each list (--name) is one value of the instance map bpfipt_recent
 * (a hash without preallocation: a list costs memory only while a rule uses
 * it), keyed by an id the loader gives the name; lists outlive ruleset
 * switches as the kernel's do while some rule still names them. A list holds
 * BPFIPT_RECENT_ENTRIES addresses (xt_recent's ip_list_tot), the least recently
 * set or updated one makes room; each address keeps its last
 * BPFIPT_RECENT_STAMPS sighting times (the kernel keeps
 * max(32 for --hitcount 0, --hitcount rounded up to a power of 2), so a
 * --hitcount up to 32 sees the same). One spin lock per list, as the kernel's
 * one lock. Times are bpf_ktime_get_ns(). */
#define BPFIPT_RECENT_TABLES	1024
#define BPFIPT_RECENT_ENTRIES	100
#define BPFIPT_RECENT_STAMPS	32
#define BPFIPT_RECENT_NAME	200		/* XT_RECENT_NAME_LEN, NUL included */

struct bpfipt_recent_entry {
	__be32 addr;		/* masked with the list's mask */
	__u8 ttl;		/* of the last packet that set or updated it */
	__u8 index;		/* next stamp: stamps[index & (STAMPS - 1)] */
	__u8 nstamps;		/* valid stamps */
	__u8 used;
	__u64 lru;		/* the list's clock when last set or updated */
	__u64 stamps[BPFIPT_RECENT_STAMPS];
};

struct bpfipt_recent_table {
	struct bpf_spin_lock lock;
	__u32 nentries;
	__u64 clock;
	__be32 mask;		/* --mask of the rule that created the list */
	__u32 nstamps_mask;	/* the kernel's per-list stamp mask: only grows, and a
				 * growth empties the list (as xt_recent's checkentry) */
	char name[BPFIPT_RECENT_NAME];
	struct bpfipt_recent_entry e[BPFIPT_RECENT_ENTRIES];
};

/* -m addrtype. An address's type is what the kernel's inet_dev_addr_type() says:
 * 0.0.0.0/8 and 255.255.255.255 are BROADCAST, 224.0.0.0/4 MULTICAST, otherwise
 * the type of the longest prefix of the LOCAL routing table (table 255) holding
 * it (LOCAL, BROADCAST, ...; with --limit-iface-in/out only when the route's
 * device is the packet's in/out interface), else UNICAST. bpfipt_rtlocal (an
 * instance map, LPM) mirrors table 255: written by every command that installs
 * a ruleset using addrtype and kept current by bpf-iptables --watch. Types are
 * the kernel's RTN_* numbers; a rule's masks are bits 1 << RTN_*. The data
 * plane looks each of a packet's addresses up once, for all its rules. */
#define BPFIPT_RTLOCAL_MAX	16384		/* routes of the local table mirrored */

struct bpfipt_rt_key {
	__u32 prefixlen;	/* 0..32 */
	__u8 addr[4];		/* network order */
};

struct bpfipt_rt_val {
	__u32 type;		/* RTN_* */
	__u32 ifindex;		/* the route's device (first next hop), 0 = none */
};

/* struct bpfipt_extra.at_flags: xt_addrtype_info_v1's flags */
enum {
	BPFIPT_AT_INVERT_SRC	= 1 << 0,
	BPFIPT_AT_INVERT_DST	= 1 << 1,
	BPFIPT_AT_LIMIT_IN	= 1 << 2,
	BPFIPT_AT_LIMIT_OUT	= 1 << 3,
};

#define BPFIPT_NO_COUNTER	0xffffffffu
#define BPFIPT_NO_EXTRA		0xffffffffu

/* A generation's slots (all chains', bpfipt_conf.slot_base) sit in
 * bpfipt_slotsfx, an inner array of BPFIPT_SLOTS_FIXED entries in every
 * generation, when they fit there (BPFIPT_C_SLOTS_FIXED); more sit in the
 * pool's pages past its chunks and rows, BPFIPT_POOL_SLOTS an entry from
 * bpfipt_conf.sbase on. Either way their lookups are inline, where an array of
 * the generation's size cost a call (and a return thunk) each step of the
 * walk. */
#define BPFIPT_SLOTS_FIXED	16384	/* entries: 512 KiB */
#define BPFIPT_POOL_SLOTS	16	/* slots a pool entry (512 of its 560 bytes) */

struct bpfipt_slot {
	__u8 kind;		/* enum bpfipt_slot_kind */
	__u8 verdict;		/* enum bpfipt_verdict (VERDICT, POLICY) */
	__u8 reject_with;	/* REJECT: BPFIPT_REJ_* (issue 5) */
	__u8 log;		/* CONTINUE: 1 = LOG (an event, bpfipt_log), 2 = NFLOG */
	__u32 xflags;		/* BPFIPT_X_* */
	__u32 target;		/* JUMP/GOTO: first slot of the block; a verdict
				 * map (BPFIPT_X_VMAP): its first member slot,
				 * at nslots or after (bpfipt_conf.nslots) */
	__u32 counter;		/* index in the counters map, or BPFIPT_NO_COUNTER */
	__u32 extra;		/* index in the extras map, or BPFIPT_NO_EXTRA */
	union {			/* BPFIPT_X_GROUP_* only: */
		__u32 group;	/* the group id (the compiler's tables; a tuple
				 * group's in bpfipt_tuple keys) */
		__u32 ival;	/* its address set (the map: the loader's copy) */
	};
	__u8 tp_splen, tp_dplen;	/* BPFIPT_X_GROUP_TUPLE: prefix lengths, */
	__u8 tp_ports;			/* ... BPFIPT_TP_* */
	__u8 tp_pad[5];
};

/* Parameters of the extra checks of one slot. */
struct bpfipt_extra {
	__u32 mark_value, mark_mask;
	__u8 mark_invert, mac_invert, ports_invert, nports;
	__u8 mac[6];
	__u16 pad;
	__u16 ports[2 * 15];	/* nports [lo, hi] ranges */
	/* limit: iptables' credit algorithm, in nanoseconds */
	__u64 limit_cost, limit_credit_cap;
	/* -m conntrack, what the ctstate field does not cover (xt_conntrack's
	 * conntrack_mt after its state test): ct_flags/ct_inv are XT_CONNTRACK_*
	 * bits (XT_CONNTRACK_STATE in ct_flags: a packet without a connection
	 * matches, as the state test already passed; else it does not) */
	__u16 ct_flags, ct_inv;
	__u16 ct_status;			/* IPS_* bits of --ctstatus */
	__u8 ct_proto, ct_pad;
	/* origsrc, origdst, replsrc, repldst: 16 bytes each (IPv4 in word 0, the
	 * other words and their masks 0) */
	__be32 ct_addr[4][4], ct_mask[4][4];
	__u16 ct_port[4][2];			/* the same four, [lo, hi] host order */
	__u32 ct_expire[2];			/* seconds, [lo, hi] */
	/* -j LOG: what the event carries to the reader */
	__u8 log_level, log_flags;		/* --log-level, XT_LOG_* bits */
	char log_prefix[BPFIPT_LOG_PREFIX];	/* --log-prefix, NUL-terminated */
	/* -m addrtype: 1 << RTN_* masks (0: that side is not tested), BPFIPT_AT_* */
	__u16 at_src, at_dst;
	__u8 at_flags, at_pad[3];
	/* -m recent: the list (bpfipt_recent key), XT_RECENT_* bits, --rdest */
	__u32 rc_table, rc_seconds, rc_hitcount;
	__u8 rc_flags, rc_invert, rc_side, rc_pad;
};

/* A -m limit's state (bpfipt_limits, an entry per extra): the time (bpf_ktime_get_ns()) at which its credit is
 * full again. xt_limit's credit at time t is cap - (full - t), cap at most: a
 * packet at t takes a token when that is at least its cost, and full becomes
 * max(full, t) + cost; 0 at first (full credit). */
struct bpfipt_limit_state {
	__u64 full;
};

/*
 * Packet/byte counters, one per model rule and one per chain policy (the
 * compiler's counter ids). The data plane sees physical indexes P < ncounters
 * (struct bpfipt_conf), which the loader writes into the slots and group sets:
 *   P < nper   a per-CPU counter: entry cpu * nper + P of the counters map, and
 *              the carried row (values of earlier generations, written by the
 *              loader only) at ncpus * nper + P;
 *   P >= nper  a shared counter, entry ncpus * nper + P: one for all CPUs, added
 *              atomically (by the loader too, when it carries values in).
 * The members of large groups (deny lists) get shared counters: a 1M-entry list
 * costs 16 bytes per entry, not 16 x (CPUs + 1); a group member is one rule of
 * many, where per-CPU rows would cost most and buy least.
 *
 * The map is bpfipt_counters (sized per generation) or, when the counters and
 * their origins fit in BPFIPT_CNT_FIXED entries, bpfipt_cntfx
 * (BPFIPT_C_CNT_FIXED): an inner array of one size for all generations, whose
 * lookups the verifier inlines. One of varying size (BPF_F_INNER_MAP) is
 * looked up through a call, and where the kernel's returns are costly (AMD's
 * Safe RET, spec_rstack_overflow) a call cost ~8 ns, a packet's counter one.
 */
#define BPFIPT_CNT_FIXED	16384	/* entries: 256 KiB */
struct bpfipt_counter {
	__u64 packets;
	__u64 bytes;
};

#define BPFIPT_SHARED_RANGES	16	/* counter id ranges that are shared */
#define BPFIPT_SHARED_MIN	256	/* the smallest group whose counters are */

/* Per-CPU statistics of the data plane itself. */
enum bpfipt_stat {
	BPFIPT_ST_PASSED_NON_IPV4,	/* neither IPv4 nor IPv6 */
	BPFIPT_ST_PASSED_NOT_OURS,	/* forwarded packet at egress, not routable, ... */
	BPFIPT_ST_STEPS_EXHAUSTED,
	BPFIPT_ST_DEPTH_EXHAUSTED,
	BPFIPT_ST_MALFORMED,
	BPFIPT_ST_INTERNAL,		/* a lookup that cannot fail failed (loader bug): dropped */
	BPFIPT_ST_REJECT_SENT,		/* REJECT replies sent */
	BPFIPT_ST_REJECT_DROPPED,	/* REJECTed without a reply (dataplane/reject.bpf.h) */
	BPFIPT_ST_LOG_SENT,		/* LOG events written to bpfipt_log */
	BPFIPT_ST_LOG_LOST,		/* LOG events lost: ring full, or too many per packet */
	BPFIPT_ST_ROUTE_MEMO,		/* ingress chains chosen from the route memo, not the FIB */
	BPFIPT_ST_FAST,			/* packets judged by a deny list's search alone
					 * (bpfipt_conf.fast), without the walk */
	BPFIPT_ST_ROWS,			/* walks that took the chunks' summary rows
					 * (BPFIPT_ROWS_MIN) */
	BPFIPT_ST_MAX,
};

/*
 * Generations (dataplane/bpfipt.bpf.c <-> controlplane/loader.c).
 * The programs are attached once; a ruleset is a GENERATION: a set of inner maps
 * held at one index of the outer ARRAY_OF_MAPS maps (bpfipt_ival, bpfipt_slotsfx,
 * ...; the pool's pages at index * BPFIPT_PAGES_MAX + page of bpfipt_pages),
 * plus bpfipt_conf[index]. Each family has its own ruleset and its own two
 * generations: index = family * 2 + generation (family 0: IPv4, 1: IPv6). A
 * packet reads bpfipt_inst.cur[its family] once and uses that generation only,
 * so writing cur[f] switches every hook of every interface at once, for that
 * family only; a family with nothing installed (conf.nwords == 0) passes its
 * packets untouched. IPv4 generations keep their address sets in bpfipt_ival,
 * IPv6 ones in bpfipt_ival6; the other maps are the same for both.
 * (A prog_array slot cannot do it: the kernel empties a prog_array when its last
 * user reference goes, and without bpffs pins nothing holds one between commands.)
 * The generation not in use keeps its maps; the next ruleset is written into them
 * when they are big enough (every userspace update of an outer map costs an RCU
 * grace period).
 */
#define BPFIPT_ABI		68	/* 3: the chunk bitmap (BPFIPT_TOP_WORDS); 4: addrtype, recent;
					 * 5: address sets (bpfipt_ival) instead of LPM tries;
					 * 6: IPv6: family generations, bpfipt_lpm6, conntrack
					 *    keys of 16-byte addresses;
					 * 7: shared counters for large groups;
					 * 8: the route memo (BPFIPT_ST_ROUTE_MEMO);
					 * 9: bpfipt_conf.fast (BPFIPT_FAST_*);
					 * 10: tuple groups (bpfipt_tuple);
					 * 11: bpfipt_conf.tuple_sum;
					 * 12: counter origins, BPFIPT_I_FOLD;
					 * 13: a slot prefix after a tuple group,
					 *     BPFIPT_FAST_PFX_END;
					 * 14: and after a list (fast_judge());
					 * 15: bpfipt_conf.pfx_direct;
					 * 16: eight prefix slots;
					 * 17: the conntrack state in pfx_direct,
					 *     sixteen prefix slots, the folded
					 *     list in the prefix;
					 * 18: an interface in pfx_direct;
					 * 19: struct scratch (the value size of
					 *     bpfipt_scratch): pctr;
					 * 20: the pool's summary rows
					 *     (bpfipt_conf.nrows, rbase),
					 *     BPFIPT_ST_ROWS;
					 * 21: bpfipt_conf.full, fullf;
					 * 22: the tuple group's bounds
					 *     (bpfipt_tfast.lo, span);
					 * 23: the connection table, the LOG
					 *     ring and the XDP interfaces made
					 *     when first needed (bpfipt_ct_slot,
					 *     bpfipt_ctf_slot, bpfipt_log_slot,
					 *     bpfipt_xdp_slot);
					 * 24: IPv6 address sets as intervals
					 *     (bpfipt_ival6 for bpfipt_lpm6);
					 * 25: IPv6 tuple groups (bpfipt_tuple6);
					 * 26: their address pairs (BPFIPT_TG_CUT);
					 * 27: struct scratch: the slot
					 *     prefix's vector words (pword);
					 * 28: IPv6 tuple groups' address
					 *     bounds (BPFIPT_TB_WORD6);
					 * 29: windowed pools (BPFIPT_C_WINDOWS);
					 * 30: their windows in chunk 0
					 *     (BPFIPT_WIN_WORD);
					 * 31: verdict maps (BPFIPT_X_VMAP),
					 *     their member slots after a
					 *     chain's nslots;
					 * 32: programs loaded without what
					 *     their rulesets do not use
					 *     (BPFIPT_FEAT_*, BPFIPT_I_FEAT);
					 * 33: address set pages' separators
					 *     (BPFIPT_IVAL_SEP);
					 * 34: a connection table per family,
					 *     IPv4's key 16 bytes
					 *     (bpfipt_ct6_slot, BPFIPT_CT_KEY4);
					 * 35: a tuple group in the slot prefix
					 *     (BPFIPT_FAST_PFX_TUPLE);
					 * 36: rules that let a packet go on
					 *     (LOG) in it (bpfipt_conf.pfx_cont);
					 * 37: and rules with extra matches
					 *     (bpfipt_conf.pfx_extra);
					 * 38: and jumps, the rules of the
					 *     chains they call after them
					 *     (bpfipt_conf.pfx_slot, pfx_skip,
					 *     pfx_next);
					 * 39: its noted rules counted by their
					 *     physical counter (pfx_ctr, pfx_log);
					 * 40: a protocol and its destination
					 *     ports as one range
					 *     (BPFIPT_FAST_PFX_PDPORT);
					 * 41: its ranges as lo and span, which
					 *     may wrap (pfx_span);
					 * 42: the folded list searched in the
					 *     prefix (the scratch's pj gone);
					 * 43: another list as a TUPLE field;
					 * 44: struct scratch: the walk's
					 *     chunk 0 words kept (c0word);
					 * 45: an IPv6 address's range in
					 *     the prefix: its word
					 *     BPFIPT_TB_WORD6;
					 * 46: a prefix of 64 rules, its
					 *     ranges as tables (pfx_tab),
					 *     64-bit masks;
					 * 47: the prefix's verdicts, the
					 *     policy's and its tuple groups'
					 *     keys in the conf (pfx_verdict,
					 *     pfx_tup), a tuple key in
					 *     struct scratch; the first
					 *     rule compared first
					 *     (pfx_first);
					 * 48: the folded list searched
					 *     from the prefix's loop
					 *     (pfx_flist); jumps and LOGs
					 *     the tables decide never
					 *     visited (pfx_plain, the
					 *     tables' miss);
					 * 49: small counters maps of a
					 *     fixed size (bpfipt_cntfx,
					 *     BPFIPT_C_CNT_FIXED);
					 * 50: a -m limit's state one time,
					 *     no spin lock;
					 * 51: the one tuple group the
					 *     prefix's tables keep searched
					 *     before its loop (scratch's
					 *     tpre);
					 * 52: the tuple bitmap
					 *     (bpfipt_tbits);
					 * 53: ... of IPv6 too;
					 * 54: the folded list's filter
					 *     (bpfipt_conf.gfold_g);
					 * 55: IPv4 address sets of one size
					 *     (bpfipt_ivalfx);
					 * 56: ... and the pool
					 *     (bpfipt_poolfx);
					 * 57: ... and IPv6's sets
					 *     (bpfipt_ival6fx);
					 * 58: ... and the slots
					 *     (bpfipt_slotsfx);
					 * 59: the packet's local
					 *     routes kept (rt_seen);
					 * 60: the pool in pages
					 *     (bpfipt_pages), no
					 *     bpfipt_poolfx;
					 * 61: ... of 2 048 chunks,
					 *     BPFIPT_C_ONE_PAGE,
					 *     BPFIPT_FEAT_PAGES;
					 * 62: the walk's step count
					 *     in the scratch (loops
					 *     with may_goto);
					 * 63: the policy at the start
					 *     of its word (empty
					 *     slots before it), the
					 *     scratch's pw, policy;
					 * 64: the scratch's rvid
					 *     (the rows' passes);
					 * 65: the slots past
					 *     BPFIPT_SLOTS_FIXED in the
					 *     pool (sbase), no
					 *     bpfipt_slots;
					 * 66: parts BPFIPT_FEAT_OUTPUT,
					 *     BPFIPT_FEAT_FORWARD,
					 *     BPFIPT_FEAT_IP6
					 *     (bpfipt_inst.flags);
					 * 67: struct scratch: pgi, the walk's
					 *     page cache;
					 * 68: part BPFIPT_FEAT_WALK */
#define BPFIPT_NFAMILIES	2	/* 0: IPv4, 1: IPv6 */
#define BPFIPT_NGENS		(2 * BPFIPT_NFAMILIES)
#define BPFIPT_NO_VEC		0xffffffffu

/* Pool: entry (vector * nchunks + chunk) holds words [64 chunk, 64 chunk + 64) of
 * the vector, so a pool entry has a fixed size whatever nwords is, then a summary
 * word: bit j set when word j is not zero. The AND of the summaries tells which
 * words can hold a match: a packet that matches nothing in 4096 slots costs one
 * word per field instead of 64. */
#define BPFIPT_CHUNK_WORDS	64
/* A second level for long vectors: chunk 0 of every vector also holds, after its
 * summary, one bit per chunk of the vector that is not all zero (BPFIPT_TOP_WORDS
 * words cover BPFIPT_MAX_WORDS). The AND of these bitmaps, taken once per packet,
 * tells which chunks can hold a match: a packet whose source no rule names skips
 * a 100 000-rule chain's 25 chunks at the cost of one lookup per field, instead of
 * one per field and chunk. */
#define BPFIPT_TOP_WORDS	4
/* A third for many chunks (nchunks >= BPFIPT_ROWS_MIN): after the chunks of
 * every vector (entries from bpfipt_conf.rbase on), entry rbase + vector * nrows
 * + r is its summary row r: word j is the summary word of chunk 64 r + j. When
 * the chunk bitmap leaves a packet BPFIPT_ROWS_CAND candidate chunks or more, the
 * AND of the rows gives each one's candidate words, and the chunks where its
 * vectors share no word are skipped without a lookup (bench/pktcost's 100 000
 * unlike rules, none-worst: each of its 25 chunks has rules of the packet's source
 * and of its port, 3 have a word of both). */
#define BPFIPT_ROWS_MIN		8
#define BPFIPT_ROWS_CAND	4
/* A windowed pool (BPFIPT_C_WINDOWS): a vector owns, past its chunk 0, only the
 * chunks where it differs from a base vector (controlplane/compile.h, struct
 * cp_vwin), which the loader picks when whole vectors would be large and windows
 * half of that: 10 000 user chains, each jumped to from its own rule, are 20 000
 * vectors of 10 chunks that differ from their field's first in one. Entry v is
 * chunk 0 of vector v, with its chunk bitmap and, in word BPFIPT_WIN_WORD, its
 * window: chunk k >= 1 of v is entry first + k - lo when k - lo < n (32-bit
 * arithmetic), else bfirst + k - 1, bfirst being its base's chunk 1 (a base owns
 * chunks 1 .. nchunks - 1; entries < 2^24). The chunks the windows own follow,
 * then the summary rows (rbase) as in the flat pool. The walk reads the window
 * with the chunk bitmap, from the entries its first step reads anyway. */
#define BPFIPT_WIN_WORD		(BPFIPT_CHUNK_WORDS + 1 + BPFIPT_TOP_WORDS)
#define BPFIPT_POOL_WORDS	(BPFIPT_WIN_WORD + 1)
_Static_assert(BPFIPT_POOL_SLOTS * sizeof(struct bpfipt_slot) <= BPFIPT_POOL_WORDS * 8 &&
	       !(BPFIPT_POOL_SLOTS & (BPFIPT_POOL_SLOTS - 1)), "a pool entry's slots");
/* The pool is in pages of BPFIPT_PAGE_CHUNKS chunks (1.1 MiB), each an inner
 * array of that size of bpfipt_pages: page i of generation g at g *
 * BPFIPT_PAGES_MAX + i. A chunk is two lookups, the page's and its own, both
 * inline, where a pool in a map of its own size cost a call a chunk. A pool of
 * one page, neither windowed nor with summary rows (BPFIPT_C_ONE_PAGE: 2 048
 * rules of some 1 500 distinct values), is searched by bpfipt_find_slot_page(),
 * which looks the page up once; a larger one by bpfipt_find_slot()
 * (BPFIPT_FEAT_PAGES). The loader maps a generation's pages side by side and
 * writes them as one pool. */
#define BPFIPT_PAGE_CHUNKS	2048
#define BPFIPT_PAGES_MAX	2048	/* a generation's: 4M chunks, 2.2 GiB */
#define BPFIPT_WIN_LO(w)	((__u32)(w) & 0xff)
#define BPFIPT_WIN_N(w)		((__u32)((w) >> 8) & 0xff)
#define BPFIPT_WIN_FIRST(w)	((__u32)((w) >> 16) & 0xffffff)
#define BPFIPT_WIN_BFIRST(w)	((__u32)((w) >> 40) & 0xffffff)
#define BPFIPT_WIN_ENTRIES	(1u << 24)
_Static_assert(64 * BPFIPT_TOP_WORDS <= 256, "a window's lo and n fit 8 bits");

/* Generation maps (inner maps of the outer maps of the same name):
 *   bpfipt_ival    array of struct bpfipt_ival_page: every address set of an IPv4
 *                  generation (the fields' and the groups'), see "Address sets"
 *   bpfipt_ival6   array of struct bpfipt_ival6_page: the same for an IPv6
 *                  generation
 *   bpfipt_fields  the array fields: the vector id of key k of field f in chain c
 *                  is element BPFIPT_FB_<f> + c * keys + k of a flat __u32 array,
 *                  stored BPFIPT_PACK ids per map entry
 *   bpfipt_ifs     hash, struct bpfipt_if_key: .chain = chain (input interface) or
 *                  chain | BPFIPT_KEY_OIF (output interface)
 *   bpfipt_slotsfx (or the pool's pages), bpfipt_extras, bpfipt_limits,
 *   bpfipt_counters, bpfipt_cntfx (struct bpfipt_counter) */
#define BPFIPT_KEY_OIF		0x10
#define BPFIPT_PACK		16
#define BPFIPT_KEYS_PROTO	256
#define BPFIPT_KEYS_TCPFLAGS	257
#define BPFIPT_KEYS_FRAG	2
#define BPFIPT_KEYS_LEN		65536
#define BPFIPT_KEYS_CTSTATE	32
#define BPFIPT_FB_AL(n)		(((n) * BPFIPT_NCHAINS + BPFIPT_PACK - 1) / BPFIPT_PACK * BPFIPT_PACK)
#define BPFIPT_FB_PROTO		0
#define BPFIPT_FB_SPORT		(BPFIPT_FB_PROTO + BPFIPT_FB_AL(BPFIPT_KEYS_PROTO))
#define BPFIPT_FB_DPORT		(BPFIPT_FB_SPORT + BPFIPT_FB_AL(BPFIPT_CLASS_KEYS))
#define BPFIPT_FB_TCPFLAGS	(BPFIPT_FB_DPORT + BPFIPT_FB_AL(BPFIPT_CLASS_KEYS))
#define BPFIPT_FB_ICMP		(BPFIPT_FB_TCPFLAGS + BPFIPT_FB_AL(BPFIPT_KEYS_TCPFLAGS))
#define BPFIPT_FB_FRAG		(BPFIPT_FB_ICMP + BPFIPT_FB_AL(BPFIPT_CLASS_KEYS))
#define BPFIPT_FB_LEN		(BPFIPT_FB_FRAG + BPFIPT_FB_AL(BPFIPT_KEYS_FRAG))
#define BPFIPT_FB_CTSTATE	(BPFIPT_FB_LEN + BPFIPT_FB_AL(BPFIPT_KEYS_LEN))
#define BPFIPT_FB_END		(BPFIPT_FB_CTSTATE + BPFIPT_FB_AL(BPFIPT_KEYS_CTSTATE))

/* may_goto's opcode, BPF_JMP | BPF_JCOND (Linux 6.9; the uapi headers here
 * predate it): dataplane/bpfipt.bpf.c writes it, controlplane/loader.c patches
 * it out for older kernels. */
#define BPFIPT_OP_MAY_GOTO	0xe5

struct bpfipt_inst {
	__u32 cur[BPFIPT_NFAMILIES];	/* generation in use per family: 2 * family + 0 or 1 */
	__u32 flags;		/* BPFIPT_I_* */
	__u32 abi;		/* BPFIPT_ABI of the programs */
	__u32 tag[BPFIPT_NFAMILIES];	/* the running rulesets' (userspace only:
					 * controlplane/state.h) */
};

enum {
	BPFIPT_I_XDP	= 1 << 0,	/* XDP attached: ingress judged there (unless BPFIPT_C_TC_INGRESS) */
	BPFIPT_I_PENDING = 1 << 1,	/* switched; the grace period not yet waited for */
	BPFIPT_I_AUTO	= 1 << 2,	/* userspace: the ingress hook is chosen per device
					 * (DP_INGRESS_AUTO); BPFIPT_I_XDP says whether
					 * some device got XDP */
};
/* userspace: family f's running generation carried the counters of its spare
 * one at the switch; what the spare counted after (runs under way then) is
 * added at the next install, after the grace period (controlplane/loader.c,
 * gen_fold()) */
#define BPFIPT_I_FOLD(f)	(1u << (3 + (f)))

/* What a program was loaded to do: the constant bpfipt_feat in its .rodata,
 * set by the loader before the load. The verifier checks a global function only
 * where a call to it is reachable (Linux >= 6.8), and a branch on a constant it
 * follows one way, so a program loaded without what no ruleset of its namespace
 * uses is verified in less (the first command of a namespace pays the verifier:
 * docs/performance.md). A generation needs the features of its conf
 * (controlplane/loader.c, conf_feat()); the loader loads the programs again with
 * more, and replaces them on every interface, before it switches to a generation
 * that needs what they lack. */
enum {
	BPFIPT_FEAT_CT		= 1 << 0,	/* bpfipt_ct_track(), bpfipt_ct_confirm():
						 * BPFIPT_C_CT */
	BPFIPT_FEAT_RECENT	= 1 << 1,	/* bpfipt_recent_mt(): BPFIPT_C_RECENT */
	BPFIPT_FEAT_WINDOWS	= 1 << 2,	/* bpfipt_find_slot_win(): BPFIPT_C_WINDOWS */
	BPFIPT_FEAT_ROWS	= 1 << 3,	/* bpfipt_chunk_row(): bpfipt_conf.nrows */
	BPFIPT_FEAT_LOG		= 1 << 4,	/* log_emit(): BPFIPT_C_LOG */
	BPFIPT_FEAT_REJECT	= 1 << 5,	/* the replies (reject.bpf.h): BPFIPT_C_REJECT */
	BPFIPT_FEAT_PAGES	= 1 << 6,	/* bpfipt_find_slot(): a flat pool of more than
						 * a page (no BPFIPT_C_ONE_PAGE) */
	BPFIPT_FEAT_SLOTPOOL	= 1 << 7,	/* slot_at() in the pool: more slots than
						 * BPFIPT_SLOTS_FIXED */
	BPFIPT_FEAT_OUTPUT	= 1 << 8,	/* OUTPUT's walk (without: OUTPUT has no
						 * rule, its policy judges; tc_out then
						 * verifies in a fraction) */
	BPFIPT_FEAT_FORWARD	= 1 << 9,	/* FORWARD's walk (without: FORWARD has
						 * no rule, its policy judges) */
	BPFIPT_FEAT_IP6		= 1 << 10,	/* IPv6 (without: no IPv6 ruleset, the
						 * packets pass as a family with nothing
						 * installed does) */
	BPFIPT_FEAT_WALK	= 1 << 11,	/* the walk of the slots (bpfipt_step()):
						 * without, every chain with a rule is
						 * judged whole by its fast paths
						 * (bpfipt_conf.fast: a group slot 0 that
						 * judges a hit and a miss, a slot prefix
						 * that reaches the policy) */
	BPFIPT_FEAT_ALL		= (1 << 12) - 1,
};
/* userspace: the features every program attached in the namespace has
 * (BPFIPT_FEAT_*), in bpfipt_inst.flags; written with the switch, after the
 * programs that have them replaced the ones that did not */
#define BPFIPT_I_FEAT_SHIFT	8
#define BPFIPT_I_FEAT(x)	((__u32)(x) << BPFIPT_I_FEAT_SHIFT)

/* The slot prefix (fast_prefix() in dataplane/bpfipt.bpf.c): BPFIPT_FAST_PFX_N(fast)
 * slots (at most BPFIPT_FAST_PFX_MAX) at the top of the chain, or right after its
 * group slot 0 (a list or BPFIPT_FAST_TUPLE), are plain verdicts that one to
 * BPFIPT_FAST_PFX_FIELDS fields each constrain (-i lo -j ACCEPT, -m conntrack
 * --ctstate ESTABLISHED,RELATED -j ACCEPT, -s 10.0.0.0/8 -p tcp --dport 22 -j
 * ACCEPT: the source, and the protocol with its ports as one range, the other
 * port and the TCP flags, which every packet with ports has, implied; Docker's
 * -d, ! -i, -o, -p tcp --dport: four): the j-th, slot s, matches a packet when
 * bit s is
 * set in the packet's vectors of fields BPFIPT_FAST_PFX_FIELD(pfx, j, k) of
 * bpfipt_conf.pfx, k = 0, 1, ... up to the first BPFIPT_FAST_PFX_NONE; every
 * other field's vectors have it. The fields a range decides are tested for all
 * the rules at once (bpfipt_conf.pfx_tab, a table per field); the rules left
 * then one by one, their other fields looked up (the vectors found are kept),
 * so that a long prefix (ufw's INPUT: 62 rules) costs a packet the rules it
 * nearly matches, not all of them. The chain's folded list (gfold, a
 * deny list: a plain verdict that only its list constrains) may be one of them,
 * its only field BPFIPT_FAST_PFX_LIST: its search there (done once per packet),
 * a hit counted on the entry's counter as the walk would. So may a tuple group
 * that nothing but its keys constrains, its field BPFIPT_FAST_PFX_TUPLE: its
 * hash searched there, a hit counted on its rule's counter (a range before it,
 * its keys' narrowest bound, spares the search where the packet is outside);
 * since it stands for many narrow rules, only in a prefix that reaches the
 * policy (a chain of a few rules around a large group judges every packet
 * without a walk). So may a list
 * that is not the chain's folded one (a second list on the same address:
 * fail2ban's second jail; ABI 43), its only field BPFIPT_FAST_PFX_TUPLE too: its
 * own set searched there, a hit counted on the entry's counter. A rule after
 * which a matching packet goes on (-j LOG, NFLOG, no target; bit j of
 * bpfipt_conf.pfx_cont), with up to BPFIPT_FAST_PFX_FIELDS fields or none, is
 * counted and its LOG noted there, and the prefix goes on (the drops a chain
 * logs before its policy). A jump (-j CHAIN) or goto is such a rule too,
 * followed in the prefix by the rules of the chain it calls (and of those that
 * chain calls), up to its end or its first RETURN without a field: the j-th rule
 * is slot bpfipt_conf.pfx_slot[c][j] of the chain (its block, dataplane.md), a
 * jump that does not match turns its chain's rules off (pfx_skip[c][j][0], a
 * mask of the prefix's rules), a RETURN that matches the rest of its chain
 * (pfx_skip[c][j][1]; in a base chain: its policy), a goto that matches the rest
 * of its own chain past the called one's rules; so the prefix tests what the
 * walk would, in its order, with no stack. A prefix that does not reach the
 * policy has at most BPFIPT_FAST_PFX_OPEN rules, none of BPFIPT_FAST_PFX_FIELDS
 * fields: every packet that walks after it pays its tests (the loader's
 * prefix_of()); the walk then starts at slot pfx_next[c] with an empty stack
 * (the prefix ends with a rule of the chain itself, before a goto or RETURN of
 * the chain itself). */
#define BPFIPT_FAST_PFX_MAX		64	/* bits of the prefix's masks */
#define BPFIPT_FAST_PFX_RULES		(BPFIPT_FAST_PFX_MAX - 1)	/* its rules: one short,
						 * so that every rule's range of a field fits a
						 * table (BPFIPT_PFX_CUTS) */
#define BPFIPT_FAST_PFX_OPEN		4	/* ... when the walk follows them */
#define BPFIPT_FAST_PFX_FIELDS		4	/* -s, -d, -i, -p --dport */
#define BPFIPT_FAST_PFX_N(fast)		(((fast) >> 8) & 127)
/* slots per 64-bit word of bpfipt_conf.pfx[c], and words */
#define BPFIPT_FAST_PFX_PER_WORD	(64 / (4 * BPFIPT_FAST_PFX_FIELDS))
#define BPFIPT_FAST_PFX_WORDS		(BPFIPT_FAST_PFX_MAX / BPFIPT_FAST_PFX_PER_WORD)
/* field k of the j-th slot, pfx: a chain's words */
#define BPFIPT_FAST_PFX_FIELD(pfx, j, k)						\
	((__u32)((pfx)[((j) / BPFIPT_FAST_PFX_PER_WORD) & (BPFIPT_FAST_PFX_WORDS - 1)] >>	\
		 (4 * BPFIPT_FAST_PFX_FIELDS * ((j) % BPFIPT_FAST_PFX_PER_WORD) + 4 * (k))) & 15)
/* a protocol and a range of destination ports as one field (-p tcp --dport 80),
 * direct only: the packet's value is (protocol & 0xff) << 17 | dport, whose
 * BPFIPT_NO_PORT keeps bit 16 (the loader's pfx_rule()) */
#define BPFIPT_FAST_PFX_PDPORT		12
#define BPFIPT_FAST_PFX_PDPORT_VAL(proto, dport)	((((__u32)(proto) & 0xff) << 17) | (__u32)(dport))
#define BPFIPT_FAST_PFX_NEVER		0xffffffffu	/* pfx_lo of a field no packet passes */
#define BPFIPT_FAST_PFX_TUPLE		13	/* the slot's tuple group */
#define BPFIPT_FAST_PFX_LIST		14	/* the chain's folded list (gfold) */
#define BPFIPT_FAST_PFX_NONE		15
_Static_assert(BPFIPT_FAST_PFX_WORDS * BPFIPT_FAST_PFX_PER_WORD == BPFIPT_FAST_PFX_MAX &&
	       !(BPFIPT_FAST_PFX_WORDS & (BPFIPT_FAST_PFX_WORDS - 1)),
	       "the prefix's fields fill bpfipt_conf.pfx");
#define BPFIPT_FAST_PFX_DWORDS		(BPFIPT_FAST_PFX_MAX * BPFIPT_FAST_PFX_FIELDS / 64)
_Static_assert(BPFIPT_FAST_PFX_MAX <= 64, "a bit of a 64-bit mask per rule of the prefix");
_Static_assert(BPFIPT_F_MAX <= BPFIPT_FAST_PFX_PDPORT, "a field id is not the list's, a tuple's nor -p --dport's");
_Static_assert(BPFIPT_NO_PORT < (1 << 17), "BPFIPT_FAST_PFX_PDPORT_VAL");
/* the prefix's fields by range, as tables (bpfipt_conf.pfx_tab): the fields
 * that may be (source, destination, interfaces, protocol, ports, the conntrack
 * state, -p --dport), and each table's cuts: two a rule, the first 0 */
#define BPFIPT_PFX_TABS		9
#define BPFIPT_PFX_CUTS		128
#define BPFIPT_PFX_SMALL	256
_Static_assert(!(BPFIPT_PFX_CUTS & (BPFIPT_PFX_CUTS - 1)) &&
	       2 * BPFIPT_FAST_PFX_RULES + 1 <= BPFIPT_PFX_CUTS, "a table's search, its cuts");

struct bpfipt_conf {
	__u32 nwords, nchunks;
	__u32 nrows, rbase;			/* the pool's summary rows (0: none) */
	__u32 sbase, pad_sbase;			/* the slots' first pool entry (without
						 * BPFIPT_C_SLOTS_FIXED) */
	__u32 flags;				/* BPFIPT_C_* */
	__u32 ncounters;			/* physical counters (struct bpfipt_counter) */
	__u32 nper;				/* ... of which per-CPU: [0, nper) */
	__u32 ncpus;				/* rows of per-CPU counters (+1: carried values) */
	__u32 nshared;				/* loader: counter ids shared[r].lo, .., lo + n - 1 */
	struct { __u32 lo, n; } shared[BPFIPT_SHARED_RANGES];	/* are shared (sorted) */
	__u32 nslots[BPFIPT_NCHAINS];
	__u32 slot_base[BPFIPT_NCHAINS];	/* slot s of chain c: entry slot_base[c] + s */
	__u32 policy[BPFIPT_NCHAINS];		/* the policy slot */
	__u32 iif_dflt[BPFIPT_NCHAINS], oif_dflt[BPFIPT_NCHAINS];
	__u32 lookup[BPFIPT_NCHAINS];		/* bit f: field f varies in the chain, look it up */
	__u32 cvec[BPFIPT_NCHAINS];		/* AND of the chain's constant fields' vectors */
	__u32 full[BPFIPT_NCHAINS];		/* the vector of all the chain's slots (or
						 * NO_VEC): the walk leaves its AND out */
	__u32 fullf[BPFIPT_NCHAINS];		/* bit f: a value of field f has it */
	__u32 addr_set[BPFIPT_NCHAINS][2];	/* [c][0] source, [c][1] destination set */
	__u32 npages, nifs;			/* bpfipt_ival(6) pages, hash entries (loader) */
	__u32 ntuple, pad_tuple;		/* bpfipt_tuple entries (loader) */
	__u64 tuple_sum;			/* loader: cp_compiled.tuple_sum of those
						 * entries, 0 while they may be anything */
	/* A chain's only group slot on an address field (a deny list): its list is
	 * not in the field's set, where its bit is set for every address
	 * (controlplane/compile.h, cp_compiled.gfold); per field (0 source, 1
	 * destination), that slot + 1 (0: none) and the group's set. classify()
	 * searches it once per packet and masks the slot out of the walk when the
	 * address is not in the list. */
	__u32 gfold[BPFIPT_NCHAINS][2];
	__u32 gfold_set[BPFIPT_NCHAINS][2];
	/* ... and its filter's levels (bpfipt_ghash(), BPFIPT_C_TBITS): [c][d][0]
	 * the list's shortest prefix, 0 when there is no filter (search every
	 * address); [c][d][1] the second level, 0 when there is none */
	__u8 gfold_g[BPFIPT_NCHAINS][2][2];
	__u8 pad_gfold[4];
	/* BPFIPT_FAST_*: a chain that begins with its folded group slot (a deny
	 * list at the top of the chain) is judged by that search alone when it
	 * can be, without the walk (classify(), fast_judge()); else the slot
	 * prefix (BPFIPT_FAST_PFX_*) */
	__u32 fast[BPFIPT_NCHAINS];
	__u32 pad_pfx;
	__u64 pfx[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_WORDS];	/* BPFIPT_FAST_PFX_FIELD */
	/* BPFIPT_FAST_TUPLE: what fast_tuple() needs of slot 0 (the group) and of
	 * the policy slot 1 (BPFIPT_FAST_MISS), so that it looks no slot up;
	 * counters are physical (the slots map's). lo and span bound the group's
	 * keys (BPFIPT_TB_*, host order, the addresses' unmasked bits included;
	 * IPv6 addresses: word BPFIPT_TB_WORD6): a packet's value v with
	 * v - lo > span is in no key, and the hash is not asked; a field not in
	 * the key (or an IPv6 prefix of 32 bits or fewer) has lo 0, span
	 * 0xffffffff. */
	struct bpfipt_tfast {
		__u32 group, counter, pcounter;
		__u8 splen, dplen, ports, verdict;
		__u8 reject_with, pverdict, preject_with, pad;
		__u32 lo[BPFIPT_TB_N], span[BPFIPT_TB_N];
	} tfast[BPFIPT_NCHAINS];
	/* The slot prefix's fields that a range of the packet's value decides
	 * (bit j * BPFIPT_FAST_PFX_FIELDS + k of pfx_direct: field k of its j-th
	 * slot): the slot is in the vector of every value v with v - pfx_lo <=
	 * pfx_span (32-bit: [lo, lo + span], or, wrapping past 0xffffffff, every
	 * value outside a range: ! -i docker0, ! -s NET, ! -p tcp) and of no
	 * other, so fast_prefix() compares (in the tables built from these,
	 * pfx_tab, for all the rules at once) instead of looking the vector up. The
	 * source and destination (IPv4, host order; IPv6: the address's word
	 * BPFIPT_TB_WORD6, a tuple group's bound only), the interface (the one
	 * ifindex a rule names), protocol, ports and the conntrack state. A field
	 * no packet passes (-i wg0 before wg0 exists) is the protocol compared
	 * with BPFIPT_FAST_PFX_NEVER, a value it never has. */
	__u64 pfx_direct[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_DWORDS];
	/* bit j: the prefix's j-th slot is a rule after which a matching packet
	 * goes on (-j LOG, NFLOG, no target): counted, a LOG noted, and the
	 * prefix's next slot tested; it may have no field at all */
	__u64 pfx_cont[BPFIPT_NCHAINS];
	/* bit j: the prefix's j-th slot has extra matches (-m limit, recent,
	 * mac, mark, ...: BPFIPT_X_EXTRA), tested once its fields matched, as the
	 * walk tests a candidate's; it may have no field at all */
	__u64 pfx_extra[BPFIPT_NCHAINS];
	/* the prefix's j-th rule is slot pfx_slot[c][j] of the chain (the slots
	 * after a jump's are its chain's, in its block), below 64: a field that no
	 * range decides tests the slot's bit in word 0 of the packet's vector */
	__u8 pfx_slot[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX];
	/* the prefix's rules a packet skips, bit k its k-th: [c][j][0] when rule
	 * j does not match (a jump's chain), [c][j][1] when it matches (the rest
	 * of the chain a RETURN leaves); indexed by the match, no branch */
	__u64 pfx_skip[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX][2];
	/* a prefix without BPFIPT_FAST_PFX_END: the slot the walk starts from */
	__u32 pfx_next[BPFIPT_NCHAINS];
	/* of a rule after which the packet goes on (pfx_cont): bit j of pfx_log,
	 * a LOG (its event noted from its slot). pfx_ctr[c][j]: the j-th rule's
	 * physical counter (a tuple group's: its first rule's), and of a rule
	 * that judges, pfx_verdict and pfx_rejw its verdict and --reject-with;
	 * pfx_pctr, pfx_pverdict, pfx_prejw the policy's: a packet is counted
	 * and judged without a slot looked up */
	__u64 pfx_log[BPFIPT_NCHAINS];
	__u32 pfx_ctr[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX];
	__u8 pfx_verdict[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX];
	__u8 pfx_rejw[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX];
	__u32 pfx_pctr[BPFIPT_NCHAINS];
	__u8 pfx_pverdict[BPFIPT_NCHAINS], pfx_prejw[BPFIPT_NCHAINS];
	/* 1: the prefix's first rule judges (not pfx_cont), and ranges decide
	 * every field of it (pfx_direct, none of pfx_rest): compared first,
	 * its match judges the packet before the tables (an ESTABLISHED rule
	 * at the top of the chain, most packets' rule) */
	__u8 pfx_first[BPFIPT_NCHAINS];
	__u8 pad_pv[3];
	/* bit j of pfx_tgrp: the j-th rule is a tuple group alone (of
	 * pfx_tuple, not a list), its key's shape pfx_tup[c][j] (the slot's
	 * group, tp_splen, tp_dplen, tp_ports): its hash searched without its
	 * slot */
	__u64 pfx_tgrp[BPFIPT_NCHAINS];
	struct bpfipt_pfx_tup {
		__u32 group;
		__u8 splen, dplen, ports, pad;
	} pfx_tup[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX];
	__u32 pfx_lo[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX * BPFIPT_FAST_PFX_FIELDS];
	__u32 pfx_span[BPFIPT_NCHAINS][BPFIPT_FAST_PFX_MAX * BPFIPT_FAST_PFX_FIELDS];
	/* The same ranges by field, every rule at once: pfx_ntab[c] tables, the
	 * t-th for the packet's value pval[pfx_tab[c][t].field]: the rules whose
	 * ranges of that field hold value v are mask[i] of the last cut[i] <= v
	 * (cut[0] 0, sorted; past the last cut, copies of it), bit j the j-th rule
	 * (a rule without a range of the field: every mask). fast_prefix() ANDs
	 * the masks of the packet's values, then tests only the rules left (their
	 * other fields) and the jumps of pfx_visit[c] that are not plain (a jump
	 * that does not match turns its chain's rules off). */
	__u32 pfx_ntab[BPFIPT_NCHAINS];
	__u32 pad_tab;
	__u64 pfx_visit[BPFIPT_NCHAINS];
	/* bit j: the j-th rule has a field no table decides, a list or tuple
	 * group (pfx_group: BPFIPT_FAST_PFX_LIST first, or
	 * BPFIPT_FAST_PFX_TUPLE) or a vector (pfx_vec), or extra matches
	 * (pfx_extra): pfx_rest, any of them */
	__u64 pfx_rest[BPFIPT_NCHAINS];
	__u64 pfx_group[BPFIPT_NCHAINS];
	__u64 pfx_vec[BPFIPT_NCHAINS];
	/* of pfx_group, the tuple groups and lists (BPFIPT_FAST_PFX_TUPLE)
	 * with nothing else to test: searched from the prefix's loop; and
	 * (pfx_flist) the folded list (BPFIPT_FAST_PFX_LIST) with nothing else
	 * to test: its search there too */
	__u64 pfx_tuple[BPFIPT_NCHAINS];
	__u64 pfx_flist[BPFIPT_NCHAINS];
	/* bit j: the j-th rule is one the packet goes on from (a jump, a LOG;
	 * pfx_cont) that the tables decide alone (none of pfx_rest) and that
	 * skips nothing when it matches: never visited; noted at the end when
	 * the tables kept it and no rule turned it off, and a jump's miss turns
	 * its chain's rules off from the tables (pfx_tab's miss) */
	__u64 pfx_plain[BPFIPT_NCHAINS];
	struct bpfipt_pfx_tab {
		__u32 field;
		__u16 quart, bin;	/* the search: 4-ary steps from quart
					 * (a power of 2, or 0) down, then a
					 * binary step of 1 when bin */
		__u32 cut[BPFIPT_PFX_CUTS];
		__u64 mask[BPFIPT_PFX_CUTS];
		/* the rules turned off by the plain jumps (pfx_plain) whose
		 * range of the field does not hold the cut: the OR of their
		 * pfx_skip[c][j][0] (a jump misses when one of its ranges does,
		 * so the OR over the tables is the OR of the misses') */
		__u64 miss[BPFIPT_PFX_CUTS];
		/* the cut of each value below BPFIPT_PFX_SMALL, without the
		 * search (a protocol, a conntrack state, most interfaces) */
		__u8 small[BPFIPT_PFX_SMALL];
	} pfx_tab[BPFIPT_NCHAINS][BPFIPT_PFX_TABS];
};

enum {
	BPFIPT_FAST_DST	= 1 << 0,	/* slot 0 is gfold[c][1] (else gfold[c][0]) */
	BPFIPT_FAST_HIT	= 1 << 1,	/* slot 0 matches every packet whose address is
					 * in its list: a plain verdict (no LOG, no
					 * extra match), its bit set in every vector of
					 * the chain; a hit is judged by it */
	BPFIPT_FAST_MISS = 1 << 2,	/* the chain is slot 0 and its policy: a miss
					 * is judged by the policy (else it goes on to
					 * the slot prefix from slot 1, if any) */
	BPFIPT_FAST_TUPLE = 1 << 3,	/* slot 0 is a tuple group instead, searched
					 * first (HIT and MISS as above); a miss that
					 * the policy does not judge goes on to the slot
					 * prefix from slot 1, if any, else walks from
					 * slot 1 */
	BPFIPT_FAST_PFX_END = 1 << 4,	/* the slot prefix reaches the policy slot: a
					 * packet that none of its slots matches is
					 * judged by the policy */
};

enum {
	BPFIPT_C_TC_INGRESS = 1 << 0,	/* INPUT/FORWARD test the mark: judge ingress at tc */
	BPFIPT_C_CT	= 1 << 1,	/* a chain tests conntrack state: track connections */
	BPFIPT_C_WINDOWS = 1 << 2,	/* the pool is windowed (BPFIPT_WIN_WORD) */
	BPFIPT_C_RECENT	= 1 << 3,	/* userspace: a rule has -m recent (BPFIPT_X_RECENT) */
	BPFIPT_C_LOG	= 1 << 4,	/* userspace: a rule logs (-j LOG, NFLOG) */
	BPFIPT_C_REJECT	= 1 << 5,	/* userspace: a rule rejects (-j REJECT) */
	BPFIPT_C_CNT_FIXED = 1 << 6,	/* the counters in bpfipt_cntfx */
	BPFIPT_C_TBITS	= 1 << 7,	/* the tuple bitmap written (bpfipt_tbits) */
	BPFIPT_C_IVAL_FIXED = 1 << 8,	/* the address sets in bpfipt_ivalfx (ival6fx) */
	BPFIPT_C_ONE_PAGE = 1 << 9,	/* the pool is page 0, neither windowed nor
					 * with rows (bpfipt_find_slot_page()) */
	BPFIPT_C_SLOTS_FIXED = 1 << 10,	/* the slots in bpfipt_slotsfx */
};

/* ------------------------------------------------------------ conntrack ----
 * conntrack/ct.bpf.h (data path), conntrack/ct.c (userspace). One LRU hash per
 * namespace and family, bpfipt_ct (IPv4) and bpfipt_ct6, one entry per
 * connection for both directions. Each sits in an instance map (bpfipt_ct_slot,
 * bpfipt_ct6_slot: it survives ruleset switches), made by the first ruleset of
 * its family that tracks connections. See docs/conntrack.md.
 */

/* A packet's state: the key of the BPFIPT_F_CTSTATE field. */
enum bpfipt_ct_state {
	BPFIPT_CT_INVALID,
	BPFIPT_CT_NEW,
	BPFIPT_CT_ESTABLISHED,
	BPFIPT_CT_RELATED,
	BPFIPT_CT_UNTRACKED,		/* ICMPv6 neighbour discovery and MLD (as the
					 * kernel's noct_valid_new); no raw table /
					 * NOTRACK */
	BPFIPT_CT_MAX,
};

/* TCP states, in the kernel's enum tcp_conntrack order (conntrack -L names). */
enum bpfipt_tcp_state {
	BPFIPT_TCP_NONE,
	BPFIPT_TCP_SYN_SENT,
	BPFIPT_TCP_SYN_RECV,
	BPFIPT_TCP_ESTABLISHED,
	BPFIPT_TCP_FIN_WAIT,
	BPFIPT_TCP_CLOSE_WAIT,
	BPFIPT_TCP_LAST_ACK,
	BPFIPT_TCP_TIME_WAIT,
	BPFIPT_TCP_CLOSE,
	BPFIPT_TCP_SYN_SENT2,
	BPFIPT_TCP_MAX,
};

/* Timeouts: index into bpfipt_ct_conf.timeout_ns; a TCP state is its own index.
 * Names (bpf-conntrack -T) are the kernel's sysctls without "nf_conntrack_". */
enum bpfipt_ct_timeout {
	BPFIPT_CTT_TCP_UNACK = BPFIPT_TCP_NONE,	/* ESTABLISHED, not yet assured */
	BPFIPT_CTT_UDP = BPFIPT_TCP_MAX,
	BPFIPT_CTT_UDP_STREAM,
	BPFIPT_CTT_ICMP,
	BPFIPT_CTT_GENERIC,
	BPFIPT_CTT_GRE,
	BPFIPT_CTT_GRE_STREAM,
	BPFIPT_CTT_ICMPV6,
	BPFIPT_CTT_MAX,
};

/* Status bits of an entry: the kernel's IPS_* values, so --ctstatus and
 * bpf-conntrack -L's [UNREPLIED]/[ASSURED] read them directly. */
#define BPFIPT_CTS_SEEN_REPLY	(1 << 1)	/* IPS_SEEN_REPLY */
#define BPFIPT_CTS_ASSURED	(1 << 2)	/* IPS_ASSURED */
#define BPFIPT_CTS_CONFIRMED	(1 << 3)	/* IPS_CONFIRMED: in the table */

/* Key: the connection's two ends in a canonical order, so both directions find
 * the same entry. TCP/UDP/UDP-Lite/SCTP/DCCP: ends ordered by (address, port)
 * compared as network-order bytes; ICMP queries (echo, timestamp, info, address
 * mask) and ICMPv6 queries (echo, node information): end 0 is the requester,
 * port[0] = port[1] = the identifier, type = the request type; other protocols:
 * addresses ordered, ports 0. An address's first word is in a[], its other
 * three (IPv6) in a6[]: an IPv4 key is the first BPFIPT_CT_KEY4 bytes, the key
 * of bpfipt_ct, where hashing and comparing take 16 bytes instead of 40
 * (docs/conntrack.md); an IPv6 key the whole struct, the key of bpfipt_ct6. In
 * userspace an IPv4 key is the whole struct with a6[] zero, and family tells the
 * two apart. */
struct bpfipt_ct_key {
	__be32 a[2];		/* word 0 of end 0's and end 1's address */
	__be16 port[2];
	__u8 proto;
	__u8 type;		/* ICMP/ICMPv6 request type, else 0 */
	__u8 family;		/* 4 or 6 */
	__u8 pad;
	__be32 a6[2][3];	/* IPv6: words 1-3 of each end's address */
};

#define BPFIPT_CT_KEY4		16	/* key size of bpfipt_ct */
_Static_assert(__builtin_offsetof(struct bpfipt_ct_key, a6) == BPFIPT_CT_KEY4,
	       "an IPv4 key is the key's head");

struct bpfipt_ct_entry {
	__u64 expires;		/* CLOCK_MONOTONIC deadline (ns; the data plane reads
				 * bpf_ktime_get_coarse_ns()); past it the entry is absent */
	__u64 start;		/* creation time (UDP: a stream after 2 s) */
	__u64 packets[2];	/* [0] original direction, [1] reply */
	__u64 bytes[2];
	__u8 orig;		/* which end of the key opened the connection: 0 or 1 */
	__u8 tcp_state;		/* enum bpfipt_tcp_state */
	__u8 status;		/* BPFIPT_CTS_* */
	__u8 flags;		/* BPFIPT_CTF_*, and the data path's own bookkeeping */
	__u32 pad;
};

/* A connection the data path ended (an RST answering an unreplied SYN): absent
 * for everyone but lo's ingress, for the second it stays (conntrack/ct.bpf.h). */
#define BPFIPT_CTF_KILLED	0x08

/* Instance map bpfipt_ct_conf[0], written by userspace (defaults, bpf-conntrack
 * -T); a timeout of 0 is never written (the data plane would expire at once). */
struct bpfipt_ct_conf {
	__u64 timeout_ns[32];	/* [BPFIPT_CTT_MAX]; 32: an index & 31 is in bounds */
};

#define BPFIPT_CT_MAX_DEFAULT	65536	/* entries of bpfipt_ct and of bpfipt_ct6 (bpf-conntrack
					 * -T max=N) */

/* What conntrack tells the classifier about a packet (conntrack/ct.bpf.h). */
struct ct_result {
	__u8 state;		/* enum bpfipt_ct_state */
	__u8 has;		/* a connection (xt_conntrack's ct != NULL) */
	__u8 dir;		/* 1: reply direction */
	__u8 status;		/* BPFIPT_CTS_* */
	__u8 proto;
	__u8 pad[3];
	__be32 osrc[4], odst[4];	/* the original direction's tuple (IPv4: word 0) */
	__u32 osport, odport;
	__u32 expire;		/* seconds left */
};

/* No reassembly, but the fragments of a datagram share its first fragment's
 * state: the first one (offset 0, more to come) leaves its result (struct
 * ct_result) in bpfipt_ct_frag, keyed like the kernel's reassembly queue (addresses, protocol, IP id; IPv6: the
 * Fragment header's 32-bit identification, proto its next header); a later
 * fragment that finds no entry (it came first, or too late) is INVALID. */
struct ct_frag_key {
	__be32 saddr[4], daddr[4];
	__u32 id;
	__u8 proto;
	__u8 family;
	__u16 pad;
};

#define BPFIPT_CT_FRAG_MAX	4096	/* entries of bpfipt_ct_frag */

#endif
