/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace side of the eBPF connection tracking (the data path is
 * conntrack/ct.bpf.h, the shared structs are in dataplane/bpfipt.h).
 *
 * SETTINGS: the timeouts and the table size of a namespace live in its state
 * directory (controlplane/state.h) as "conntrack.conf", lines "name value" with
 * the kernel's sysctl names without "nf_conntrack_" (tcp_timeout_established
 * 432000, udp_timeout 30, ..., and "max 65536"). A missing file means Linux's
 * defaults. The loader applies them when it creates the instance; bpf-conntrack
 * -T also writes the timeouts into the running instance at once (the size only
 * takes effect when the instance is created again: --unload, then any command).
 *
 * TABLE: list, count, flush, delete by tuple filter, sweep expired entries:
 * conntrack/ct_table.h.
 */
#ifndef BPFIPT_CT_H
#define BPFIPT_CT_H

#include <stdbool.h>
#include <linux/bpf.h>
#include "bpfipt.h"
#include "errors.h"

struct ct_settings {
	__u64 timeout_s[BPFIPT_CTT_MAX];	/* seconds, > 0 */
	__u32 max;				/* entries of bpfipt_ct, >= 1 */
};

/* Linux's defaults (sysctl nf_conntrack_*_timeout) and BPFIPT_CT_MAX_DEFAULT. */
void ct_settings_default(struct ct_settings *s);
/* The kernel-style name of timeout t ("tcp_timeout_syn_sent", "udp_timeout", ...). */
const char *ct_timeout_name(enum bpfipt_ct_timeout t);
/* Read <state_dir>/conntrack.conf over the defaults (missing file: defaults). */
int ct_settings_load(const char *state_dir, struct ct_settings *s, struct ipt_err *err);
/* Replace <state_dir>/conntrack.conf atomically (0600). */
int ct_settings_store(const char *state_dir, const struct ct_settings *s, struct ipt_err *err);
/* The data plane's form (nanoseconds). */
void ct_conf_from_settings(const struct ct_settings *s, struct bpfipt_ct_conf *c);

#endif
