/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The connection tables of a namespace from userspace (conntrack/ct.c): what
 * bpf-conntrack lists, counts, flushes, deletes and sweeps. The settings side of
 * the module is conntrack/ct.h.
 *
 * TIME. An entry's `expires` is a CLOCK_MONOTONIC deadline in nanoseconds (the data
 * plane takes the tick's time, bpf_ktime_get_coarse_ns(), less than a tick behind
 * CLOCK_MONOTONIC). An entry with expires <= now (or BPFIPT_CTF_KILLED: ended by the
 * data path, kept a second for lo) is ABSENT: the data plane treats it as
 * no entry, and nothing here lists, counts, filters or deletes it (except the
 * sweep, which removes exactly those). Every function takes the `now` it judges
 * the table at (ct_now(): the clock), so a test can list a crafted table exactly.
 *
 * READING. A namespace has a table per family (bpfipt_ct, bpfipt_ct6: an IPv4
 * key is the head of struct bpfipt_ct_key, read into a whole one with the rest
 * zero, dataplane/bpfipt.h); every function takes both. One pass of
 * BPF_MAP_LOOKUP_BATCH over each LRU hash; kernels without batch lookups walk it
 * with BPF_MAP_GET_NEXT_KEY (a walk that loses its place when an entry goes
 * restarts, so it may see an entry twice: duplicates are dropped). The listing is sorted by the original tuple (protocol, source,
 * destination, ports), so its order does not depend on the hash seed.
 *
 * RACES. The data plane keeps creating, refreshing and evicting entries while we
 * read; a listing is what the table held while it was read. A deletion removes
 * the key it read: an entry the data plane renewed in between (same key) goes
 * too, which is what -D asked for. The sweep reads each expired entry again just
 * before deleting it and keeps it if it was renewed; a packet renewing it between
 * that read and the delete (a window of one syscall) loses its entry and is
 * tracked anew.
 *
 * FORMAT. ct_format() is conntrack-tools 1.4.7's `conntrack -L` line (libnetfilter_
 * conntrack's default output) with accounting on (nf_conntrack_acct=1), measured
 * against the kernel's own table:
 *
 *   tcp      6 431999 ESTABLISHED src=A dst=B sport=P dport=Q packets=N bytes=M
 *            src=B dst=A sport=Q dport=P packets=N bytes=M [ASSURED] mark=0 use=1
 *
 * (one line): "%-8s %u " protocol name and number (tcp udp udplite icmp icmpv6 sctp
 * gre dccp, else "unknown"), "%llu " seconds left (rounded down, as the kernel's
 * jiffies / HZ), TCP only the state name, then the original tuple, its counters,
 * "[UNREPLIED] " when no reply was seen, the reply tuple (the original one
 * inverted: no NAT), its counters, "[ASSURED] ", and "mark=0 use=1". Tuples:
 * "src=A dst=B " then "sport=P dport=Q " (tcp, udp, udplite, sctp, dccp),
 * "srckey=0x0 dstkey=0x0 " (gre: the kernel's GREv0 form), "type=T code=0 id=I "
 * (icmp: the reply type is the request's answer, echo 8 -> 0, 13 -> 14, 15 -> 16,
 * 17 -> 18; icmpv6: 128 -> 129, 139 -> 140), nothing for the other protocols.
 * IPv6 entries are the same line with the addresses as inet_ntop() writes them
 * (conntrack's default output has no family column: "icmpv6   58 29 src=::1
 * dst=::1 type=128 code=0 id=7 ..."). Both families are listed, IPv4 first;
 * the filter's family (-f ipv4 / -f ipv6, or the family of an address given)
 * keeps one.
 */
#ifndef BPFIPT_CT_TABLE_H
#define BPFIPT_CT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include "ct.h"
#include "strbuf.h"

/* One connection: its key and entry as the map holds them. */
struct ct_conn {
	struct bpfipt_ct_key key;
	struct bpfipt_ct_entry e;
};

/* A connection's tuple in one direction (conntrack's view). */
struct ct_tuple {
	__be32 src[4], dst[4];		/* IPv4: word 0, the rest 0 */
	__u16 sport, dport;	/* host order; ICMP: the identifier in both */
	__u8 type;		/* ICMP: the message type of this direction */
};

/* Tuple filter of -L and -D (conntrack's -s -d -r -q -p --sport --dport
 * --reply-port-src --reply-port-dst --state). Every criterion set must hold. */
enum ct_field {
	CT_ORIG_SRC,
	CT_ORIG_DST,
	CT_REPL_SRC,
	CT_REPL_DST,
	CT_FIELD_MAX,
};

enum {
	CT_F_ADDR0	= 1 << 0,	/* CT_F_ADDR0 << enum ct_field: addr/mask */
	CT_F_PORT0	= 1 << 4,	/* CT_F_PORT0 << enum ct_field: port (sport of
					 * ORIG_SRC/REPL_SRC, dport of the _DSTs) */
	CT_F_PROTO	= 1 << 8,
	CT_F_STATE	= 1 << 9,	/* TCP state (only TCP entries match) */
	CT_F_FAMILY	= 1 << 10,	/* only entries of `family` (-f, or an address) */
};

struct ct_filter {
	__u32 set;				/* CT_F_* */
	__u8 family;				/* 4 or 6 (CT_F_FAMILY) */
	__be32 addr[CT_FIELD_MAX][4], mask[CT_FIELD_MAX][4];
	__u16 port[CT_FIELD_MAX];		/* host order */
	__u8 proto;
	__u8 tcp_state;				/* enum bpfipt_tcp_state */
};

/* CLOCK_MONOTONIC in nanoseconds: bpf_ktime_get_ns()'s clock. */
__u64 ct_now(void);

/* conntrack's names: the protocol column ("unknown" for the rest), the TCP states
 * (NULL past BPFIPT_TCP_MAX). */
const char *ct_proto_name(__u8 proto);
const char *ct_tcp_state_name(unsigned int state);
/* An entry's family: 4 or 6. */
int ct_family(const struct bpfipt_ct_key *k);
/* Protocols whose tuples carry ports (tcp udp udplite sctp dccp). */
bool ct_proto_has_ports(__u8 proto);

/* The original ([0]) and reply ([1]) tuples of a connection. */
void ct_tuples(const struct bpfipt_ct_key *k, const struct bpfipt_ct_entry *e,
	       struct ct_tuple t[2]);
bool ct_filter_match(const struct ct_filter *f, const struct bpfipt_ct_key *k,
		     const struct bpfipt_ct_entry *e);
/* One `conntrack -L` line (with its newline). */
void ct_format(struct strbuf *sb, const struct bpfipt_ct_key *k,
	       const struct bpfipt_ct_entry *e, __u64 now);

/* Read the entries alive at `now` (expired: those that are not) of both tables
 * (ct_fd[0] IPv4's, ct_fd[1] IPv6's; -1: none), sorted; free *out with free().
 * 0 or a negative errno (-EPROTO: a table is not a connection table of this
 * version). */
int ct_read(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, bool expired, struct ct_conn **out, size_t *n);
/* The live entries matching f (NULL: all) as `conntrack -L` lines; *n of them. */
int ct_list(const int ct_fd[BPFIPT_NFAMILIES], const struct ct_filter *f, __u64 now, struct strbuf *sb, size_t *n);
/* The live entries. */
int ct_count(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, size_t *n);
/* Delete the live entries matching f (NULL: all); *n deleted, their lines into
 * shown (may be NULL) as conntrack -D prints them. */
int ct_delete(const int ct_fd[BPFIPT_NFAMILIES], const struct ct_filter *f, __u64 now, struct strbuf *shown,
	      size_t *n);
/* Delete every entry, live or expired; *n deleted. */
int ct_flush(const int ct_fd[BPFIPT_NFAMILIES], size_t *n);
/* Delete the expired entries; *n deleted. */
int ct_sweep(const int ct_fd[BPFIPT_NFAMILIES], __u64 now, size_t *n);

/* Tests: walk with BPF_MAP_GET_NEXT_KEY even where batch lookups work. */
extern bool ct_walk_no_batch;

/* ---- settings from the command line (bpf-conntrack -T) ---- */

/* Largest table size -T accepts: the LRU hash is preallocated (~130 bytes an
 * entry), so 2^24 entries are already ~2 GiB of kernel memory. */
#define CT_MAX_LIMIT	(1u << 24)

/* Apply one "name=value" token (a timeout name of ct_timeout_name(), in seconds,
 * 1 .. 2^32 - 1, or "max", 1 .. CT_MAX_LIMIT) to s; a bad token is an error that
 * names it (exit code 2) and leaves s as it was. */
int ct_settings_parse(struct ct_settings *s, const char *tok, struct ipt_err *err);
/* "max N" then "name seconds" per timeout, one a line (conntrack.conf's order). */
void ct_settings_format(struct strbuf *sb, const struct ct_settings *s);

#endif
