// SPDX-License-Identifier: GPL-2.0
/*
 * Grace periods (controlplane/grace.c) on the real kernel. cp_grace_cpus()
 * returns only after a program run that was under way when it was called has
 * ended, for each kind of run our programs have: tc on transmit (in the
 * sender's context, bottom halves disabled), XDP and tc on receive (softirq);
 * test/dataplane/grace_hold.bpf.c makes such a run last 50 ms. And cp_grace()
 * takes the kernel's RCU grace period where the per-CPU way cannot be shown (a
 * cpuset without every CPU) or is not wanted (BPF_IPTABLES_GRACE=rcu).
 * Needs root and BPF, and fails without them (it never skips); runs in a network
 * namespace of its own, and its cpuset is removed after it.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "grace.h"
#include "grace_hold.h"
#include "grace_hold.skel.h"

static int sh(const char *cmd)
{
	int r = system(cmd);

	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ull + (__u64)t.tv_nsec;
}

/* One frame of EtherType GH_ETHERTYPE out of the interface, by a packet socket
 * (through the qdisc layer: tc's egress hook). */
static void *send_frame(void *arg)
{
	unsigned char f[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1,
				GH_ETHERTYPE >> 8, GH_ETHERTYPE & 0xff };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = *(int *)arg,
				  .sll_halen = 6 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0);
	ssize_t n = fd < 0 ? -1 : sendto(fd, f, sizeof(f), 0, (void *)&ll, sizeof(ll));

	if (fd >= 0)
		close(fd);
	return (void *)(long)(n == (ssize_t)sizeof(f));
}

/* A thread bound to cpu (pthread_create()'s attributes). */
static int thread_on(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof(set), &set);
	r = pthread_create(th, &a, fn, arg);
	pthread_attr_destroy(&a);
	return r;
}

static void tc_attach(int ifindex, enum bpf_tc_attach_point at, const struct bpf_program *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = at);
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = bpf_program__fd(p));
	int r = bpf_tc_hook_create(&hook);

	ck_assert_msg(!r || r == -EEXIST, "clsact on %d: %s", ifindex, strerror(-r));
	ck_assert_int_eq(bpf_tc_attach(&hook, &o), 0);
}

#define GH_TRIES	5

/* gA <-> gB: tc egress on gA, XDP (native) and tc ingress on gB. A frame sent
 * on gA meets the three in that order, all in one stretch without a schedule
 * (the receive runs as the transmit re-enables bottom halves): so each hook is
 * armed alone, one frame each, and held while cp_grace_cpus() is called. The
 * sender runs on CPU 1, this thread on CPU 0: on one CPU it would only see the
 * run begin once it had ended (the run holds the CPU; under load no other CPU
 * takes this thread). */
START_TEST(t_grace_waits_for_runs)
{
	static const char *const name[] = { "tc egress", "XDP", "tc ingress" };
	struct grace_hold_bpf *s;
	int a, b, h;

	cpu_set_t zero;

	ck_assert_msg(sysconf(_SC_NPROCESSORS_ONLN) >= 2, "one CPU online: the run would hold it");
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(zero), &zero), 0);
	ck_assert_msg(!unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET): %s", strerror(errno));
	ck_assert_int_eq(sh("ip link set lo up && ip link add gA type veth peer name gB && "
			    "ip link set gA up && ip link set gB up"), 0);
	a = (int)if_nametoindex("gA");
	b = (int)if_nametoindex("gB");
	ck_assert(a > 0 && b > 0);
	s = grace_hold_bpf__open_and_load();
	ck_assert_msg(s, "cannot load grace_hold.bpf.o: %s", strerror(errno));
	tc_attach(a, BPF_TC_EGRESS, s->progs.gh_tc_out);
	tc_attach(b, BPF_TC_INGRESS, s->progs.gh_tc_in);
	ck_assert_int_eq(bpf_xdp_attach(b, bpf_program__fd(s->progs.gh_xdp), XDP_FLAGS_DRV_MODE,
					NULL), 0);
	for (h = 0; h < GH_NHOOKS; h++) {
		int fd = bpf_map__fd(s->maps.gh_times), tries, shown = 0;
		__u32 k = (__u32)h;

		/* a try shows something when the run was still under way at the
		 * call: on a loaded machine this thread may come back to the CPU
		 * after the run has ended, and then it tries again */
		for (tries = 0; tries < GH_TRIES && !shown; tries++) {
			struct gh_times t = { 0, 0 };
			__u64 called, back, give_up = now_ns() + 2000000000ull;
			pthread_t th;
			void *sent;
			bool ok;

			ck_assert_int_eq(bpf_map_update_elem(fd, &k, &t, BPF_ANY), 0);
			s->bss->armed = (__u32)h + 1;
			ck_assert_int_eq(thread_on(&th, 1, send_frame, &a), 0);
			while (!t.begin && now_ns() < give_up)
				ck_assert_int_eq(bpf_map_lookup_elem(fd, &k, &t), 0);
			ck_assert_msg(t.begin, "%s: the frame never reached the program", name[h]);
			called = now_ns();
			ok = cp_grace_cpus();
			back = now_ns();
			ck_assert_int_eq(bpf_map_lookup_elem(fd, &k, &t), 0);
			ck_assert_msg(ok, "%s: no grace period the per-CPU way on this kernel",
				      name[h]);
			ck_assert_msg(t.end && t.end <= back,
				      "%s: the grace period returned %.2f ms after the call, before "
				      "the run under way at the call ended",
				      name[h], (double)(back - called) / 1e6);
			shown = t.end > called;
			pthread_join(th, &sent);
			ck_assert_msg(sent, "%s: the frame was not sent", name[h]);
			s->bss->armed = 0;
		}
		ck_assert_msg(shown, "%s: in %d tries the run had always ended before the call",
			      name[h], GH_TRIES);
	}
	grace_hold_bpf__destroy(s);
}
END_TEST

static bool realtime_kernel(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

START_TEST(t_grace_choice)
{
	enum cp_grace_how want = realtime_kernel() ? CP_GRACE_RCU : CP_GRACE_CPUS;

	ck_assert_int_eq(unsetenv("BPF_IPTABLES_GRACE"), 0);
	ck_assert_int_eq(cp_grace(), want);
	ck_assert_int_eq(setenv("BPF_IPTABLES_GRACE", "rcu", 1), 0);
	ck_assert_int_eq(cp_grace(), CP_GRACE_RCU);
	ck_assert_int_eq(setenv("BPF_IPTABLES_GRACE", "", 1), 0);
	ck_assert_int_eq(cp_grace(), want);
}
END_TEST

/* A cpuset of CPU 0 alone (cgroup v1's cpuset hierarchy, or v2's where it
 * offers the controller): the threads for the other CPUs cannot be made there.
 * Named after the runner, which removes it after the forked test. */
static const char *const cs_roots[] = { "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup",
					"/sys/fs/cgroup/unified" };
static char cs_dir[256], cs_parent[256];

static bool cs_name(void)
{
	char c[600];

	for (unsigned int i = 0; i < sizeof(cs_roots) / sizeof(cs_roots[0]); i++) {
		if (i == 0)
			snprintf(c, sizeof(c), "test -w %s/cpuset.cpus", cs_roots[i]);
		else	/* v2: a child gets the controller when its parent hands it on */
			snprintf(c, sizeof(c),
				 "grep -qw cpuset %1$s/cgroup.controllers 2>/dev/null && "
				 "echo +cpuset > %1$s/cgroup.subtree_control",
				 cs_roots[i]);
		if (sh(c))
			continue;
		snprintf(cs_parent, sizeof(cs_parent), "%s", cs_roots[i]);
		snprintf(cs_dir, sizeof(cs_dir), "%s/bpfipt-test-grace-%d", cs_roots[i],
			 (int)getppid());
		return true;
	}
	return false;
}

START_TEST(t_grace_cpuset)
{
	char cmd[2048];

	ck_assert_msg(sysconf(_SC_NPROCESSORS_ONLN) >= 2,
		      "one CPU online: no cpuset can leave a CPU out");
	ck_assert_msg(cs_name(), "no cpuset controller (cgroup v1 or v2) to test with");
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %1$s && echo 0 > %1$s/cpuset.cpus && "
		 "{ cat %2$s/cpuset.mems.effective 2>/dev/null || cat %2$s/cpuset.mems; } "
		 "> %1$s/cpuset.mems",
		 cs_dir, cs_parent);
	ck_assert_msg(!sh(cmd), "cannot make the cpuset %s", cs_dir);
	snprintf(cmd, sizeof(cmd), "echo %d > %s/cgroup.procs", (int)getpid(), cs_dir);
	ck_assert_msg(!sh(cmd), "cannot enter the cpuset %s", cs_dir);
	ck_assert_msg(!cp_grace_cpus(), "the per-CPU way claimed a CPU outside the cpuset");
	ck_assert_int_eq(cp_grace(), CP_GRACE_RCU);
	snprintf(cmd, sizeof(cmd), "echo %d > %s/cgroup.procs", (int)getpid(), cs_parent);
	ck_assert_int_eq(sh(cmd), 0);
	ck_assert_int_eq(cp_grace(), realtime_kernel() ? CP_GRACE_RCU : CP_GRACE_CPUS);
}
END_TEST

static void cs_teardown(void)
{
	char p[300];

	for (unsigned int i = 0; i < sizeof(cs_roots) / sizeof(cs_roots[0]); i++) {
		snprintf(p, sizeof(p), "%s/bpfipt-test-grace-%d", cs_roots[i], (int)getpid());
		rmdir(p);
	}
}

static Suite *suite(void)
{
	Suite *s = suite_create("grace");
	TCase *tc = tcase_create("grace");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, NULL, cs_teardown);
	tcase_add_test(tc, t_grace_waits_for_runs);
	tcase_add_test(tc, t_grace_choice);
	tcase_add_test(tc, t_grace_cpuset);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	if (geteuid()) {
		fprintf(stderr, "test_grace: FAILED: needs root (BPF, namespaces, cpusets)\n");
		return 1;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
