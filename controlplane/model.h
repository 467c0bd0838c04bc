/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule model: table -> chains -> rules, as iptables-legacy sees them.
 *
 * The parser builds it, the printers (-S, -L, save) read it, the control plane
 * compiles it. Everything here is plain data: a rule's matches and target carry
 * fixed-size, pointer-free payloads so that two rules compare with memcmp
 * exactly as libiptc compares entries for -D/-C.
 */
#ifndef BPFIPT_MODEL_H
#define BPFIPT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <sys/socket.h>

#define IPT_CHAIN_MAXLEN 28		/* longest name -N, -A, -j accept (XT_EXTENSION_MAXNAMELEN - 1) */
#define IPT_CHAIN_NAMESZ 32		/* storage: -E accepts up to 31 (libiptc's chain label) */
#define IPT_IFNAMSIZ 16
#define IPT_MAX_MATCHES 32

/* Inversion flags of the IP part: same values as <linux/netfilter_ipv4/ip_tables.h>. */
enum {
	IPT_INV_VIA_IN	= 0x01,
	IPT_INV_VIA_OUT	= 0x02,
	IPT_INV_SRCIP	= 0x08,
	IPT_INV_DSTIP	= 0x10,
	IPT_INV_FRAG	= 0x20,
	IPT_INV_PROTO	= 0x40,
};

#define IPT_F_FRAG 0x01		/* family 4: -f */
#define IP6T_F_PROTO 0x01	/* family 6: -p was given (also -p all), as ip6tables sets it */

/* An address or mask: IPv4 in v4 (the other bytes zero), IPv6 in all 16 bytes,
 * network order. The table's family says which. */
union ipt_addr {
	__be32 v4;
	__be32 w[4];
	__u8 b[16];
};

struct ipt_ip {
	union ipt_addr src, smsk, dst, dmsk;
	char iniface[IPT_IFNAMSIZ], outiface[IPT_IFNAMSIZ];
	__u16 proto;
	__u8 flags;
	__u8 invflags;
};

enum ipt_verdict {
	IPT_V_ACCEPT,
	IPT_V_DROP,
	IPT_V_RETURN,
	IPT_V_MAX,
};

/* What a rule does when it matches. */
enum ipt_target_kind {
	IPT_T_NONE,		/* no -j: counters only, continue */
	IPT_T_VERDICT,		/* ACCEPT, DROP, RETURN */
	IPT_T_JUMP,		/* -j CHAIN */
	IPT_T_GOTO,		/* -g CHAIN */
	IPT_T_EXT,		/* an extension target: REJECT, LOG, ... */
	IPT_T_MAX,
};

struct ipt_ext;

/* One match or extension target: ext->size bytes of payload, zero-initialised,
 * pointer-free, canonical (equal meaning <=> equal bytes). */
struct ipt_match {
	const struct ipt_ext *ext;
	void *data;
};

struct ipt_rule {
	struct ipt_ip ip;
	unsigned int nmatches;
	struct ipt_match *matches;		/* in command-line order */
	enum ipt_target_kind tkind;
	enum ipt_verdict verdict;		/* IPT_T_VERDICT */
	char chain[IPT_CHAIN_NAMESZ];		/* IPT_T_JUMP / IPT_T_GOTO */
	struct ipt_match target;		/* IPT_T_EXT */
	__u64 pcnt, bcnt;
	/* Transient (never saved): the rule's counter index in the running data
	 * plane when it was read, so a new generation continues its counter;
	 * IPT_NO_CIDX for rules the command created or zeroed. */
	__u32 cidx;
};

#define IPT_NO_CIDX 0xffffffffu

struct ipt_chain {
	char name[IPT_CHAIN_NAMESZ];
	bool builtin;
	enum ipt_verdict policy;		/* builtin chains only */
	__u64 pcnt, bcnt;			/* policy counters */
	__u32 cidx;				/* as struct ipt_rule's, for the policy */
	struct ipt_rule **rules;
	unsigned int nrules, cap;
	/* The rules a snapshot brought, in one block (ipt_chain_slab): a rule that
	 * lies in it is not freed alone; the block goes with the chain. */
	struct ipt_rule *slab;
	unsigned int nslab;
};

/* The filter table. Builtin chains first (INPUT, FORWARD, OUTPUT), then user chains
 * sorted by name, as libiptc keeps them. */
struct ipt_table {
	struct ipt_chain **chains;
	unsigned int nchains, cap;
	int family;				/* AF_INET or AF_INET6 (ipt_af when made) */
	/* ipt_chain_index()'s hash of the chains' names to their index, made
	 * after enough searches of a large table, dropped when a chain comes or
	 * goes (model.c only) */
	unsigned int *name_idx, name_cap, searches;
};

/* The family this process works on: AF_INET (bpf-iptables*) or AF_INET6
 * (bpf-ip6tables*), set once by main from the program name, as iptables'
 * afinfo. The parser, the printers and ipt_table_new() follow it. */
extern int ipt_af;

/* Names that follow the family: the command ("bpf-iptables", "bpf-ip6tables")
 * and iptables' own word in the messages it prints ("iptables", "ip6tables"). */
#define IPT_AF_CMD (ipt_af == AF_INET6 ? "bpf-ip6tables" : "bpf-iptables")
#define IPT_AF_IPT (ipt_af == AF_INET6 ? "ip6tables" : "iptables")

/* Table lifecycle */
int ipt_table_new(struct ipt_table **t);
void ipt_table_free(struct ipt_table **t);
int ipt_table_copy(const struct ipt_table *src, struct ipt_table **dst);
void ipt_table_flush_all(struct ipt_table *t);	/* what a restore without -n does */
/* ipt_table_copy then ipt_table_flush_all, without copying the rules first */
void ipt_table_copy_flushed(const struct ipt_table *src, struct ipt_table **dst);

struct ipt_chain *ipt_chain_find(const struct ipt_table *t, const char *name);
int ipt_chain_index(const struct ipt_table *t, const char *name);	/* -1: none */
void ipt_chain_insert(struct ipt_table *t, struct ipt_chain *c);	/* keeps the order */
struct ipt_chain *ipt_chain_new_user(struct ipt_table *t, const char *name);
void ipt_chain_remove(struct ipt_table *t, struct ipt_chain *c);	/* frees it */
void ipt_chain_rename(struct ipt_table *t, struct ipt_chain *c, const char *name);
void ipt_chain_flush(struct ipt_chain *c);
void ipt_chain_insert_rule(struct ipt_chain *c, unsigned int idx, struct ipt_rule *r);
void ipt_chain_delete_rule(struct ipt_chain *c, unsigned int idx);
void ipt_chain_replace_rule(struct ipt_chain *c, unsigned int idx, struct ipt_rule *r);
/* n rules for an empty chain in one zeroed block (their cidx IPT_NO_CIDX), owned
 * by the chain: what a snapshot's chain is read into (a 1M list's million
 * separate allocations cost a one-rule change to it 30 ms, and 13 more at
 * exit). The caller fills them and lists them in c->rules. */
struct ipt_rule *ipt_chain_slab(struct ipt_chain *c, unsigned int n);
unsigned int ipt_chain_refs(const struct ipt_table *t, const struct ipt_chain *c);
/* Every chain's references at once, by index (the caller frees it): what -L
 * and -X print or test for each chain, one pass instead of one per chain. */
unsigned int *ipt_table_refs(const struct ipt_table *t);

/* Rule helpers */
struct ipt_rule *ipt_rule_new(void);
void ipt_rule_free(struct ipt_rule **r);
void ipt_rule_clear(struct ipt_rule *r);	/* frees what r holds, not r */
struct ipt_match *ipt_rule_add_match(struct ipt_rule *r, const struct ipt_ext *ext);
struct ipt_rule *ipt_rule_dup(const struct ipt_rule *r);
bool ipt_rule_equal(const struct ipt_rule *a, const struct ipt_rule *b);
const char *ipt_verdict_name(enum ipt_verdict v);
int ipt_verdict_parse(const char *s, enum ipt_verdict *v);
bool ipt_is_builtin_name(const char *name);

#endif
