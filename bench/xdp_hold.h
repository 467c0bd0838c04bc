/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_hold(): an XDP program kept in the kernel's XDP dispatcher while a tool
 * runs it with bpf_prog_test_run (pktcost, addrsearch, flood's generator).
 *
 * A test run of more than one packet puts an XDP program into the dispatcher
 * (the direct call an attached program gets) and takes it out again at its
 * end: each rewrites the dispatcher and waits for an RCU grace period, ~8 ms
 * each on the 2-CPU VM, more than 50 000 packets of a walk take. A program
 * attached somewhere stays in it, and the runs call it the same way without
 * those waits. Here it is attached (a link) to the loopback device, down, of a
 * network namespace of its own, kept by an fd: it sees no traffic. The
 * dispatcher has 48 places, the machine's attached programs take some: a
 * program that finds none is called through a pointer, by runs held or not.
 *
 * Raw syscalls, no libbpf: flood depends on libc only.
 */
#ifndef BPFIPT_XDP_HOLD_H
#define BPFIPT_XDP_HOLD_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

struct xdp_hold {
	int link;	/* the attachment; -1: not held */
	int ns;		/* the namespace it is in */
};

/* XDP program prog_fd attached to device ifindex of this thread's namespace by a
 * link (detached when it is closed): the link's fd, -1 on a failure. */
static inline int xdp_link(int prog_fd, int ifindex)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog_fd;
	a.link_create.target_ifindex = ifindex;
	a.link_create.attach_type = BPF_XDP;
	return syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

/* Hold program prog_fd; h->link -1 (the runs go on unheld) when it cannot be.
 * The calling thread is back in its namespace on return (or the process exits). */
static inline void xdp_hold(int prog_fd, struct xdp_hold *h)
{
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	h->link = h->ns = -1;
	if (self < 0 || unshare(CLONE_NEWNET)) {
		perror("xdp_hold: a namespace to hold the program in");
		if (self >= 0)
			close(self);
		return;
	}
	h->ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	h->link = xdp_link(prog_fd, 1);	/* the namespace's loopback device */
	if (h->link < 0)
		perror("xdp_hold: attaching the program");
	if (setns(self, CLONE_NEWNET)) {
		perror("xdp_hold: back to the namespace");
		exit(1);
	}
	close(self);
}

static inline void xdp_unhold(struct xdp_hold *h)
{
	if (h->link >= 0)
		close(h->link);
	if (h->ns >= 0)
		close(h->ns);
	h->link = h->ns = -1;
}

#endif
