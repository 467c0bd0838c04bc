/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The saved ruleset as a binary snapshot of struct ipt_table: what every command
 * reads and every change writes (state.h), so that a one-rule change neither
 * parses nor prints the whole ruleset as text.
 *
 * FORMAT (version 1), host byte order: the file lives in /run of this machine
 * and is read by the same build family, never shipped elsewhere (the magic read
 * in the other byte order does not match, so such a file is refused, not
 * misread).
 *
 *   header   "BPFIPTSS" magic[8], u32 version, u32 tag, u64 body length,
 *            u64 body checksum (64-bit FNV-1a over 8-byte words).
 *            The version's bit IPT_SNAP_FAMILY6 marks an IPv6 table
 *            (bpf-ip6tables): its addresses below are 16 bytes, not 4. An IPv4
 *            snapshot is exactly what it was before IPv6 (version 1).
 *   body     u32 number of extensions, then each: u8 is_target, u8 name length,
 *            name, u32 payload size. Rules name an extension by its index here,
 *            so a name is looked up once per file, not once per rule.
 *            u32 number of chains, then each: name[32], u8 builtin, u8 policy,
 *            u64 pcnt, u64 bcnt, u32 number of rules, then each rule:
 *              u8 present: which parts of struct ipt_ip and the counters follow
 *                 (SNAP_R_*; most rules leave most of them zero); src, smsk,
 *                 dst, dmsk are 4 bytes each (IPv4) or 16 (IPv6)
 *              the present parts, u8 nmatches, u8 target kind, u8 verdict,
 *              chain[32] for a jump/goto, then per match (and the extension
 *              target): u16 extension index, payload bytes (its size).
 *
 * An extension payload is stored as its raw bytes: it must stay flat (no
 * pointer, no host-specific state), as model.h already requires for -D/-C.
 * An extension whose payload size changed between builds makes the snapshot
 * unreadable (a clear error naming the extension), like a corrupt file.
 *
 * Reading checks every length against what is left, the checksum, the chain
 * order and the targets of jumps: a truncated or corrupt file is an error
 * naming the file, never a crash or a half-read table.
 */
#ifndef BPFIPT_SNAPSHOT_H
#define BPFIPT_SNAPSHOT_H

#include "model.h"
#include "strbuf.h"

#define IPT_SNAP_VERSION 1
#define IPT_SNAP_FAMILY6 0x10000u	/* in the version field: an IPv6 table */

/* Append the snapshot of t (tagged tag) to sb. */
void ipt_snap_write(struct strbuf *sb, const struct ipt_table *t, __u32 tag);
/* The tag of a snapshot, 0 when buf does not start with a valid header. */
__u32 ipt_snap_tag(const void *buf, size_t len);
/* Build *t from a snapshot of the process's family (ipt_af; another family's is
 * refused). 0, or -1 with why[] set (the caller names the file). */
int ipt_snap_read(const void *buf, size_t len, struct ipt_table **t, char *why, size_t whylen);

#endif
