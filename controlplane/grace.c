// SPDX-License-Identifier: GPL-2.0
/* Grace periods (see grace.h). */
#define _GNU_SOURCE
#include "grace.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>

#define GRACE_MAX_CPUS	8192
#define GRACE_WAIT_MS	200		/* a CPU later than that: the kernel's way */
#define GRACE_STACK	(64 * 1024)

/* One call's threads; the last of them and the caller to let go frees it (a
 * thread that did not land in time may run after the call has returned). */
struct grace_set {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int left, refs;
	bool bad;
	struct grace_probe {
		struct grace_set *set;
		int cpu;
	} probe[];
};

static void set_put(struct grace_set *s)
{
	bool last;

	pthread_mutex_lock(&s->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
	}
}

static void *probe_run(void *arg)
{
	struct grace_probe *p = arg;
	struct grace_set *s = p->set;

	pthread_mutex_lock(&s->mu);
	if (sched_getcpu() != p->cpu)	/* its CPU went offline: not shown */
		s->bad = true;
	if (--s->left == 0)
		pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	set_put(s);
	return NULL;
}

/* The online CPUs ("0-3,6" in sysfs) into cpu[], at most max; their count, or
 * -1 when unreadable. */
static int online_cpus(int *cpu, int max)
{
	char buf[4096], *p = buf, *end;
	int n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	while (*p && *p != '\n') {
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(++p, &end, 10);
			if (end == p || hi < lo)
				return -1;
			p = end;
		}
		for (; lo <= hi; lo++) {
			if (n == max)
				return -1;
			cpu[n++] = (int)lo;
		}
		if (*p == ',')
			p++;
	}
	return n;
}

/* PREEMPT_RT: softirqs and bottom-half sections are preemptible. */
static bool realtime_kernel(void)
{
	struct utsname u;
	FILE *f = fopen("/sys/kernel/realtime", "re");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	if (c == '1')
		return true;
	return uname(&u) || strstr(u.version, "PREEMPT_RT");
}

bool cp_grace_cpus(void)
{
	struct grace_set *s;
	int *cpu;
	pthread_condattr_t ca;
	struct timespec dl;
	int n, i, made = 0;
	bool ok;

	if (realtime_kernel())
		return false;
	cpu = malloc(GRACE_MAX_CPUS * sizeof(*cpu));
	n = cpu ? online_cpus(cpu, GRACE_MAX_CPUS) : -1;
	s = n > 0 ? calloc(1, sizeof(*s) + (size_t)n * sizeof(s->probe[0])) : NULL;
	if (!s) {
		free(cpu);
		return false;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->left = n;
	s->refs = 1;
	for (i = 0; i < n; i++) {
		size_t sz = CPU_ALLOC_SIZE(cpu[i] + 1);
		cpu_set_t *set = CPU_ALLOC(cpu[i] + 1);
		pthread_attr_t a;
		pthread_t th;

		if (!set)
			break;
		s->probe[i] = (struct grace_probe){ s, cpu[i] };
		CPU_ZERO_S(sz, set);
		CPU_SET_S(cpu[i], sz, set);
		if (pthread_attr_init(&a)) {
			CPU_FREE(set);
			break;
		}
		pthread_attr_setstacksize(&a, GRACE_STACK);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		/* a CPU outside our cpuset: the create fails */
		ok = !pthread_attr_setaffinity_np(&a, sz, set);
		CPU_FREE(set);
		pthread_mutex_lock(&s->mu);
		s->refs++;
		pthread_mutex_unlock(&s->mu);
		ok = ok && !pthread_create(&th, &a, probe_run, &s->probe[i]);
		pthread_attr_destroy(&a);
		if (!ok) {
			pthread_mutex_lock(&s->mu);
			s->refs--;
			pthread_mutex_unlock(&s->mu);
			break;
		}
		made++;
	}
	free(cpu);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += GRACE_WAIT_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&s->mu);
	s->left -= n - made;	/* those never made count as failed below */
	while (s->left > 0 && made == n)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
			break;
	ok = made == n && s->left == 0 && !s->bad;
	pthread_mutex_unlock(&s->mu);
	set_put(s);
	return ok;
}

enum cp_grace_how cp_grace(void)
{
	const char *how = getenv("BPF_IPTABLES_GRACE");

	if (!(how && !strcmp(how, "rcu")) && cp_grace_cpus())
		return CP_GRACE_CPUS;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return CP_GRACE_FAILED;
	return CP_GRACE_RCU;
}
