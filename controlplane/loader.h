/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader: puts a compiled ruleset (struct cp_compiled) into the kernel,
 * switches to it atomically, reads its counters back, and removes everything.
 *
 * INSTANCE. A network namespace has at most one: the programs of
 * dataplane/bpfipt.bpf.c and their maps, attached to every interface: tc ingress
 * and egress everywhere (the L3 variants on tun/wireguard/ipip-like devices), XDP
 * on the Ethernet ones and lo on request. The programs are loaded once and never
 * replaced; a program a later command needs (XDP, the L3 variants) is loaded
 * into the running instance's maps.
 *
 * GENERATIONS. A ruleset is a generation: inner maps held at one index of the
 * nine outer ARRAY_OF_MAPS maps, and its bpfipt_conf entry; each family (IPv4,
 * IPv6) has two, at family * 2 + 0 or 1. dp_load() writes the new ruleset into
 * the spare generation of its family (cc->family) while the running one keeps
 * filtering, then writes bpfipt_inst.cur[family]: one 4-byte write switches every
 * hook of every interface for that family (each packet reads its family's cur
 * once); the other family's generations are not touched. Reads (counters, -Z,
 * the tag) are of the family of the process (ipt_af). After a grace period
 * (controlplane/grace.h: a thread of ours on every CPU, or the kernel's RCU
 * grace period) no packet uses the old generation: its
 * counters are final, and it becomes the spare the next command rewrites. A
 * large one (dp_opts.spare_keep) is settled by the install itself instead, and
 * its maps dropped: a large ruleset is held once between commands.
 * The spare's maps are rewritten in place when they are big enough; a map is
 * replaced only when it must grow, because the kernel makes every userspace
 * update of an outer map wait for a grace period (10-50 ms here; the updates
 * overlap, in threads). A family's first install gives the other generation
 * an empty twin of each map it makes, while the verifier takes the programs,
 * so that the second command makes none either (unless the spare would not be
 * kept). (A prog_array slot would need pins: the kernel empties a prog_array
 * when its last user reference goes, measured here.)
 *
 * COUNTERS. Per CPU, laid out by hand in an array (a PERCPU_ARRAY cannot be an
 * inner map of varying size): row c holds CPU c's counters, the last row the
 * values the generation started from (seed, carry). dp_read_counters() sums them.
 *
 * NO PINS. Nothing is pinned: bpffs does not survive `ip netns exec`. The
 * attachments hold the programs, the programs the maps, the outer maps the
 * generations. A later invocation finds the instance from the kernel: our tc
 * filters (priority DP_TC_PRIO, handle DP_TC_HANDLE_*; lo first) give the
 * programs, their map_ids the maps by name. When the namespace goes, so does
 * everything.
 *
 * REMOVAL. dp_remove() detaches from every interface and deletes the clsact
 * qdiscs it created (the filter handle records whether the qdisc was ours), so
 * the namespace is left as it was; programs and maps then vanish.
 *
 * LIMITS. Interfaces that appear after a command are covered by the next command
 * (or bpf-iptables --watch, controlplane/linkwatch.h). Switching between XDP and tc ingress attaches or
 * detaches interface by interface: during that short window a packet may be
 * judged twice (never by neither). An interface that already has another XDP
 * program keeps it; its ingress is judged at tc. Devices that are neither
 * Ethernet-like nor IP (InfiniBand, CAN, ...) are not filtered (a warning).
 *
 * Messages: quiet by default; BPF_IPTABLES_DEBUG=1 prints the loader's and
 * libbpf's (and the verifier's) messages on stderr.
 */
#ifndef BPFIPT_LOADER_H
#define BPFIPT_LOADER_H

#include <stdbool.h>
#include <linux/bpf.h>	/* struct bpf_spin_lock of bpfipt.h */
#include "bpfipt.h"
#include "compile.h"
#include "errors.h"

#define DP_TC_PRIO		0xb1f		/* tc filter priority of our programs */
#define DP_TC_HANDLE_OURS	0xb1f1		/* ... handle when we created the clsact qdisc */
#define DP_TC_HANDLE_THEIRS	0xb1f0		/* ... handle when it was already there */

enum dp_ingress {
	DP_INGRESS_KEEP,	/* the running instance's; DP_INGRESS_AUTO for a new one */
	DP_INGRESS_TC,		/* tc ingress (clsact) */
	DP_INGRESS_XDP,		/* XDP, native where the driver has it, else generic */
	DP_INGRESS_XDP_GENERIC,	/* XDP, generic (skb) mode everywhere */
	DP_INGRESS_AUTO,	/* XDP native where the driver has it on the wire (not
				 * veth: its XDP copies every skb and gives up GSO),
				 * tc elsewhere */
	DP_INGRESS_MAX,
};

struct ct_settings;

struct dp_opts {
	enum dp_ingress ingress;
	/* Optional, exact counters across a switch: carry[i] is the counter of the
	 * running generation that new counter i continues (BPFIPT_NO_COUNTER: none).
	 * It is read after the switch, so no packet counted in between is lost. A
	 * counter with a carry ignores its seed: give BPFIPT_NO_COUNTER to counters
	 * whose value the command sets (-Z, -c). */
	const __u32 *carry;
	unsigned int ncarry;
	/* Connection tracking settings used when the instance is created (NULL:
	 * Linux's defaults); a running instance keeps its own. */
	const struct ct_settings *ct;
	/* Written with the switch, read back by dp_read_tag(): which saved ruleset
	 * the data plane runs (controlplane/state.h). */
	__u32 tag;
	/* The most the maps of the generation left behind by the switch may hold
	 * (bytes) until the next command rewrites them; more, and they are dropped
	 * once no packet uses them. 0: DP_SPARE_KEEP. */
	size_t spare_keep;
};

/* dp_opts.spare_keep's default, about the instance's own maps: 100 000 mixed
 * rules (9.7 MB besides their tuple hash) and 10 000 user chains with a jump
 * to each (27 MB) keep their spare, to be rewritten in place by the next
 * command (dropping it costs a grace period, and new maps another at the next
 * command: 30-50 ms of an -A into those chains); a deny list of a million
 * entries (46 MB) is held once. */
#define DP_SPARE_KEEP	(32u << 20)

/* Install cc in this namespace: create the instance (and attach it to every
 * interface) or switch the running one to a new generation; attach to the
 * interfaces that appeared since. seed[i] = { packets, bytes } starts counter i
 * (nseed may be less than cc->ncounters; seed may be NULL); o may be NULL. */
int dp_load(const struct cp_compiled *cc, const __u64 (*seed)[2], unsigned int nseed,
	    const struct dp_opts *o, struct ipt_err *err);

/* The tag of the running generation of this process's family (ipt_af; dp_opts.tag);
 * false when nothing runs. */
bool dp_read_tag(__u32 *tag);

/* The running generation's counters, { packets, bytes } summed over the CPUs,
 * indexed like cp_compiled's counters; *n = 0 and *out = NULL when nothing runs.
 * Free *out with free(). */
int dp_read_counters(__u64 (**out)[2], unsigned int *n, struct ipt_err *err);

/* Zero the running generation's counters in place (-Z). */
int dp_zero_counters(struct ipt_err *err);

/* Keep the instance the next dp_inst_open() finds (on) for the opens after it,
 * until dp_load() or dp_inst_keep(false): a command that holds the ruleset's
 * lock (state.h) reads the running ruleset's tag, its counters and installs,
 * and finds the instance once (each search: its programs by netlink, their
 * maps by id, the BTF; 0.5 ms, a tenth of a one-rule change), and lists the
 * interfaces once (about a millisecond on a host of 100 links). */
void dp_inst_keep(bool on);

/* Begin the grace period the next install owes the previous switch, in a
 * thread of its own, so that it passes while this command does other work;
 * called by a command that holds the ruleset's lock (state.h) and may install.
 * Without it the install waits for a whole one. */
void dp_grace_begin(void);

/* Where no instance runs in this namespace, begin making its maps and loading
 * its programs (with the features feat, BPFIPT_FEAT_*) in a thread of its own,
 * for the next dp_load() (its first install) to take: it builds its first
 * generation while the programs are verified, and loads them again if that
 * generation needs more. Called with dp_grace_begin(); nothing is attached
 * before dp_load(). */
void dp_prepare_begin(unsigned int feat);
/* The features (BPFIPT_FEAT_*) a change whose input is text (a restore's, or a
 * command's words) may need: a guess, all of them when text is NULL; with
 * DP_FEAT_LATER, one too unsure to load programs by (dp_prepare_begin() makes
 * the maps, the install loads the programs its generation needs). */
#define DP_FEAT_LATER	(1u << 31)
unsigned int dp_feat_guess(const char *text, size_t len);

/* The data plane's own statistics (enum bpfipt_stat), summed over the CPUs;
 * zeros when nothing runs. */
int dp_read_stats(__u64 st[BPFIPT_ST_MAX], struct ipt_err *err);

/* Detach from every interface, delete the qdiscs we created; no-op if nothing
 * runs. */
int dp_remove(struct ipt_err *err);

/* One line per interface of this namespace: its class and what of ours is
 * attached (tc ingress/egress, XDP native/generic). Returns the number of
 * interfaces with our programs, -1 when the links cannot be listed. */
struct strbuf;
int dp_describe(struct strbuf *sb);

/* Is an instance running in this namespace? */
bool dp_running(void);

/* The links of this namespace, for the compiler's -i/-o (lo first): the
 * listing the command's other steps use while an instance is kept
 * (dp_inst_keep()). 0, or -1 when they cannot be listed. */
struct cp_link;
int dp_links(struct cp_link **out, unsigned int *n);

/* Mirror the local routing table into the running data plane's bpfipt_rtlocal
 * (-m addrtype; controlplane/rtlocal.h). Nothing to do (0) without one. */
int dp_rtlocal_sync(struct ipt_err *err);

/* ---- lower level: tests and benchmarks ---- */

struct dp_inst;

enum dp_prog {
	DP_PROG_XDP,		/* Ethernet devices and lo */
	DP_PROG_TC_IN,		/* Ethernet devices and lo */
	DP_PROG_TC_OUT,
	DP_PROG_TC_IN3,		/* L3 devices (tun, wireguard, ipip, ...) */
	DP_PROG_TC_OUT3,
	DP_PROG_TEST,		/* not attached: chain/iif/oif from skb->cb[0..2] */
	DP_PROG_MAX,
};

/* What bpfipt_test returns for a packet it leaves to the kernel (non-IPv4). */
#define DP_TEST_PASS 100

/* Load the programs in `progs` (bit 1 << enum dp_prog) and the instance maps,
 * without attaching them anywhere. */
int dp_inst_create(struct dp_inst **out, unsigned int progs, struct ipt_err *err);
/* Load the programs in `progs` of an instance made without any (dp_inst_create()
 * with progs 0, then dp_inst_install()) with the parts its generation needs, as
 * a namespace's first command loads them (BPFIPT_FEAT_*: what the ruleset uses;
 * dp_inst_create()'s have every part). */
int dp_inst_fit(struct dp_inst *in, unsigned int progs, struct ipt_err *err);
/* The running instance of this namespace; *out = NULL when none. */
int dp_inst_open(struct dp_inst **out, struct ipt_err *err);
/* Build a generation from cc and switch to it (see dp_load for seed and carry). */
int dp_inst_install(struct dp_inst *in, const struct cp_compiled *cc,
		    const __u64 (*seed)[2], unsigned int nseed, const __u32 *carry,
		    unsigned int ncarry, struct ipt_err *err);
/* What a map holds in memory: the kernel's memlock (fdinfo, as bpftool shows
 * it); 0 when unknown. */
unsigned long long dp_map_memlock(int fd);
/* dp_opts.spare_keep for the next dp_inst_install(). */
void dp_inst_set_spare_keep(struct dp_inst *in, size_t bytes);
int dp_inst_prog_fd(const struct dp_inst *in, enum dp_prog p);
/* The features (BPFIPT_FEAT_*) a loaded program of ours has; -1 if unknown. */
int dp_prog_feat(int prog_fd);
/* Whether the kernel has may_goto (Linux >= 6.9: the walk's loops then cost no
 * call an iteration), probed once. */
bool dp_may_goto(void);
/* may_goto instructions this process patched out of the programs it loaded
 * (a kernel without it, or BPF_IPTABLES_MAY_GOTO=0). */
unsigned long dp_may_goto_patched(void);
/* The connection tables of an instance, ct_fd[0] IPv4's (bpfipt_ct), ct_fd[1]
 * IPv6's (bpfipt_ct6), and their settings (bpfipt_ct_conf); the fds stay owned
 * by `in`. A family's is -1 while it has no table: the first install of a
 * ruleset of that family that tracks connections makes it. */
int dp_inst_ct_fds(struct dp_inst *in, int ct_fd[BPFIPT_NFAMILIES], int *conf_fd);
/* Make both connection tables (bpf-conntrack -T max's entries: dp_opts.ct at the
 * install, else the default) and the first fragments' LRU now, if there are
 * none. */
int dp_inst_ct_make(struct dp_inst *in, struct ipt_err *err);
/* Mark interface ifindex as judged at XDP, as attaching XDP there does (tests
 * that run the programs by hand). */
int dp_inst_xdp_mark(const struct dp_inst *in, int ifindex);
/* The LOG ring buffer (bpfipt_log) of an instance, owned by `in`; -ENOENT while
 * there is none (the first install of a ruleset with a LOG rule makes it), another
 * negative errno when it cannot be read. */
int dp_inst_log_fd(struct dp_inst *in);
/* -m addrtype's copy of the local routing table (LPM, bpfipt_rt_key -> _val). */
int dp_inst_rtlocal_fd(const struct dp_inst *in);
int dp_inst_counters(const struct dp_inst *in, __u64 (**out)[2], unsigned int *n,
		     struct ipt_err *err);
/* The conf of this family's running generation (counter layout, sizes). */
int dp_inst_conf(const struct dp_inst *in, struct bpfipt_conf *cf, struct ipt_err *err);
int dp_inst_stats(const struct dp_inst *in, __u64 st[BPFIPT_ST_MAX], struct ipt_err *err);
void dp_inst_free(struct dp_inst **in);

#endif
