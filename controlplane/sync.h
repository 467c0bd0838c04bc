/* SPDX-License-Identifier: GPL-2.0 */
/* The ruleset model and the running data plane of this namespace, together. */
#ifndef BPFIPT_SYNC_H
#define BPFIPT_SYNC_H

#include <stdbool.h>
#include "model.h"
#include "errors.h"

/* False when BPF_IPTABLES_DATAPLANE=off: rules are kept, listed and saved but not
 * loaded (tooling, and the rule-language tests). */
bool cp_dataplane_enabled(void);
/* A command that may change the ruleset, holding the lock: the data plane's
 * wait for the previous switch begins now (dp_grace_begin()), and a namespace's
 * first install loads its programs meanwhile (dp_prepare_begin()), with the
 * parts that input (the command's words or a restore's text; NULL: unknown)
 * suggests its ruleset will use (dp_feat_guess()); the running instance, once
 * found, is kept for the command's later steps (dp_inst_keep()). */
void cp_sync_begin(const char *input, size_t len);
/* The end of what cp_sync_begin() began: called when the lock is let go. */
void cp_sync_end(void);
/* Read the running generation's counters into t's rules and policies. */
int cp_sync_counters_in(struct ipt_table *t, struct ipt_err *err);
/* Compile t and switch the data plane to it (creating it on first use, with the
 * connection tracking settings of state_dir: conntrack/ct.h); the switch also
 * records `tag`, the saved ruleset's (state.h). */
int cp_sync_out(const struct ipt_table *t, const char *state_dir, __u32 tag,
		struct ipt_err *err);
/* The same, calling ready(arg, err) once t is compiled and before the data
 * plane is touched; a non-zero return stops there (err says why). What the
 * caller did meanwhile (the state file written in a thread: bpf-iptables/cli.c,
 * store()) must be done before a switch. */
int cp_sync_out_when(const struct ipt_table *t, const char *state_dir, __u32 tag,
		     int (*ready)(void *arg, struct ipt_err *err), void *arg,
		     struct ipt_err *err);
/* Compile t as cp_sync_out would, without loading it: what the data plane would
 * refuse (a limit of the compiler) fails here too (restore --test). */
int cp_check(const struct ipt_table *t, struct ipt_err *err);
/* The tag of the ruleset the data plane runs; false when it is off or nothing
 * runs in this namespace. */
bool cp_running_tag(__u32 *tag);
/* Remove the data plane from this namespace (programs, maps, qdiscs it made). */
int cp_unload(struct ipt_err *err);

#endif
