/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a network namespace's ruleset lives between commands, and the lock that
 * serialises writers (iptables' xtables lock, per namespace).
 *
 * The state directory is $BPF_IPTABLES_STATE_DIR when set (isolated instances,
 * tests), else /run/bpf-iptables/netns-<cookie>, where <cookie> is the kernel's
 * network-namespace cookie (SO_NETNS_COOKIE): unique for the boot and never
 * reused, so a new namespace never inherits a dead one's rules. /run is shared by
 * every `ip netns exec` invocation, unlike /sys/fs/bpf.
 *
 * The ruleset is kept as iptables-save -c text ("rules"), replaced atomically
 * (temporary file, fsync, rename); the directory is 0700 and files 0600.
 */
#ifndef BPFIPT_STATE_H
#define BPFIPT_STATE_H

#include "model.h"
#include "errors.h"

struct ipt_state {
	char dir[512];
	int lock_fd;		/* -1 when not held */
};

/* Find (and create) the state directory of the current network namespace. */
int ipt_state_open(struct ipt_state *st, struct ipt_err *err);
/* Take the writer lock: wait_secs < 0 waits forever, 0 does not wait (without -w,
 * iptables fails at once). */
int ipt_state_lock(struct ipt_state *st, bool wait, int wait_secs, struct ipt_err *err);
void ipt_state_close(struct ipt_state *st);
/* Read the saved ruleset (an empty table when none was saved). */
int ipt_state_load(const struct ipt_state *st, struct ipt_table **t, struct ipt_err *err);
/* Replace the saved ruleset atomically. */
int ipt_state_store(const struct ipt_state *st, const struct ipt_table *t, struct ipt_err *err);

#endif
