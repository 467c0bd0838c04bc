/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a network namespace's ruleset lives between commands, and the lock that
 * serialises writers (iptables' xtables lock, per namespace).
 *
 * The state directory is $BPF_IPTABLES_STATE_DIR when set (isolated instances,
 * tests), else /run/bpf-iptables/netns-<cookie>, where <cookie> is the kernel's
 * network-namespace cookie (SO_NETNS_COOKIE): unique for the boot and never
 * reused, so a new namespace never inherits a dead one's rules (nor one of a
 * later boot an earlier boot's: see "boot" below). /run is shared by
 * every `ip netns exec` invocation, unlike /sys/fs/bpf.
 *
 * FILES of the state directory (0700, files 0600):
 *   lock           the writer lock (flock)
 *   snapshot       the saved ruleset: a binary snapshot of struct ipt_table
 *                  (snapshot.h: magic, version, tag, checksum, lengths)
 *   snapshot.new   the next one, while a writer switches the data plane to it
 *   rules          an older version's saved ruleset (iptables-save -c text, first
 *   rules.new      line "# tag N"): read only while no snapshot exists, the
 *                  upgrade path; the first change writes the snapshot and
 *                  deletes "rules"
 *                  (a version older than the snapshot does not read it: to go
 *                  back, bpf-iptables-save before and restore after)
 *   snapshot6      the IPv6 ruleset (bpf-ip6tables), the same format with
 *   snapshot6.new  16-byte addresses, written and switched the same way; one
 *                  lock for both families, as iptables and ip6tables share
 *                  the xtables lock. A process works on one family (ipt_af).
 *   conntrack.conf conntrack settings (conntrack/)
 *   boot           the boot that wrote the directory (the kernel's boot_id): a
 *                  directory of an earlier boot (a /run that is not a tmpfs, a
 *                  BPF_IPTABLES_STATE_DIR on a disk) describes a data plane that
 *                  is gone, and namespace cookies count again from each boot, so
 *                  its first command of this boot empties it, under the lock;
 *                  a directory without the file (an older version's) is kept
 *
 * CRASHES. The saved ruleset and the one the data plane runs change together,
 * whenever a command is killed: a writer (holding the lock) writes the new
 * ruleset to "snapshot.new", switches the data plane to it, then renames
 * it over "snapshot" (exchanges the two names and unlinks the older file,
 * where the filesystem can: the older ruleset is the ".new" file between the
 * two). Each saved ruleset carries a tag (in the snapshot header;
 * in a text file its first line, "# tag N") and the data-plane switch records
 * the tag of the ruleset it installs in the same 4-byte-atomic write
 * (bpfipt_inst). So a ".new" file is in force exactly when the data plane runs
 * its tag: the next command renames it (the switch happened) or deletes it (it
 * did not). A reader without the lock takes whichever of the two files the data
 * plane runs (retrying while a writer is between switch and rename); when the
 * data plane is off or runs neither, "snapshot" is the ruleset (else "rules").
 * Nothing is synced to the disk: a killed command's writes are in the page cache
 * for the next one, and what a power loss would lose belongs to a data plane
 * that is gone with it (a later boot empties the directory, "boot" above).
 */
#ifndef BPFIPT_STATE_H
#define BPFIPT_STATE_H

#include "model.h"
#include "errors.h"

struct ipt_state {
	char dir[512];
	int lock_fd;		/* -1 when not held */
	__u32 tag;		/* of the ruleset ipt_state_load read (0: none) */
	__u32 next_tag;		/* of the one ipt_state_prepare wrote */
};

/* Find (and create) the state directory of the current network namespace. */
int ipt_state_open(struct ipt_state *st, struct ipt_err *err);
/* Take the writer lock: wait_secs < 0 waits forever, 0 does not wait (without -w,
 * iptables fails at once). */
int ipt_state_lock(struct ipt_state *st, bool wait, int wait_secs, struct ipt_err *err);
void ipt_state_close(struct ipt_state *st);
/* Read the saved ruleset (an empty table when none was saved): the one in force
 * (see CRASHES). With the lock, finish what a killed writer left. */
int ipt_state_load(struct ipt_state *st, struct ipt_table **t, struct ipt_err *err);
/* A change, in three steps: write t as "snapshot.new" (tag st->next_tag); switch
 * the data plane (cp_sync_out with st->next_tag); commit: "snapshot.new" becomes
 * "snapshot" when `loaded` (the switch succeeded, or the data plane is off) or
 * when the data plane runs it anyway (it failed after the switch), else it is
 * deleted. err may be NULL (an error is already being reported). */
int ipt_state_prepare(struct ipt_state *st, const struct ipt_table *t, struct ipt_err *err);
int ipt_state_commit(struct ipt_state *st, bool loaded, struct ipt_err *err);

#endif
