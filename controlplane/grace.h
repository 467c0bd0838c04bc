/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Grace periods: the wait after a switch of generations (controlplane/loader.h)
 * until no packet still uses the old one, so that it can be rewritten.
 *
 * The kernel's own, an RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL) is
 * synchronize_rcu()), lasts a few scheduler ticks however idle the machine:
 * 8-15 ms here, the larger half of a one-rule change. Our programs need less.
 * tc and XDP programs run with bottom halves disabled (in softirq, or under
 * rcu_read_lock_bh() on transmit), where a CPU does not schedule: once a thread
 * made after the switch has run on a CPU, no run begun there before the switch
 * is still under way. cp_grace() makes such a thread on every online CPU and
 * waits for all of them (well under a millisecond on an idle machine), and
 * falls back to the kernel's grace period where that does not hold or cannot be
 * shown: a PREEMPT_RT kernel (softirqs are preemptible there), a CPU we may not
 * run on (a cpuset), a thread that did not land on its CPU in time (a CPU held
 * by a real-time task, a CPU going offline), no thread at all.
 *
 *   BPF_IPTABLES_GRACE=rcu    always the kernel's grace period
 */
#ifndef BPFIPT_GRACE_H
#define BPFIPT_GRACE_H

#include <stdbool.h>

enum cp_grace_how {
	CP_GRACE_CPUS,		/* a thread ran on every online CPU */
	CP_GRACE_RCU,		/* the kernel's RCU grace period */
	CP_GRACE_FAILED,	/* neither (errno: membarrier's) */
};

/* Wait until every BPF program run that had begun when the call began has
 * ended; how it was shown. */
enum cp_grace_how cp_grace(void);

/* The per-CPU way alone (false: it cannot be shown here, see above). */
bool cp_grace_cpus(void);

#endif
