/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The link watcher (bpf-iptables --watch): interfaces that appear after a
 * command -- a container's veth, a VLAN, a hot-plugged NIC -- are filtered
 * within a second. It listens to rtnetlink link events (libnl-route-3) and,
 * when the set of the namespace's interfaces (index, name, master) changed, calls
 * back: the caller re-applies the saved ruleset, which attaches the programs
 * to the new interfaces and resolves -i/-o names against the links as they are
 * now. Events that do not change that set (up/down, carrier, our own XDP
 * attachment) cost nothing. Bursts are merged: the callback runs once the
 * events have been quiet for CP_LINKWATCH_SETTLE_MS.
 *
 * The chain selector needs no address watching: it asks the kernel's FIB for
 * every packet (bpf_fib_lookup), so a local address added or removed counts
 * from the next packet on. -m addrtype does: it reads a copy of the local
 * routing table (controlplane/rtlocal.h), so the watcher also listens to route
 * events and calls back when that table changed (CP_WATCH_LOCAL).
 */
#ifndef BPFIPT_LINKWATCH_H
#define BPFIPT_LINKWATCH_H

#include <signal.h>
#include "errors.h"

#define CP_LINKWATCH_SETTLE_MS	50

enum cp_watch_event {
	CP_WATCH_LINKS,		/* the interface set changed (or the start) */
	CP_WATCH_LOCAL,		/* only the local routing table changed */
};

/* Run until *stop is set (a signal handler sets it): fn(arg, CP_WATCH_LINKS)
 * once at the start, then after every change of the interface set, and
 * fn(arg, CP_WATCH_LOCAL) after a change of the local routing table alone. A failing fn is
 * reported by it and the watch goes on. Returns 0, or -1 with err set when
 * rtnetlink cannot be read. */
int cp_linkwatch_run(volatile sig_atomic_t *stop,
		     void (*fn)(void *arg, enum cp_watch_event ev, const char *why),
		     void *arg, struct ipt_err *err);

#endif
