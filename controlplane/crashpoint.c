// SPDX-License-Identifier: GPL-2.0
/* Test-only crash points (see crashpoint.h). */
#include "crashpoint.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_POINTS 32

static struct {
	const char *name;
	unsigned int hits;
} seen[MAX_POINTS];

static unsigned int hit(const char *name)
{
	for (int i = 0; i < MAX_POINTS; i++) {
		if (!seen[i].name)
			seen[i].name = name;
		if (!strcmp(seen[i].name, name))
			return ++seen[i].hits;
	}
	return 0;
}

void (*cp_point_hook)(const char *name);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void cp_crash_point(const char *name)
{
	const char *at = getenv("BPF_IPTABLES_CRASH_AT");
	const char *trace = getenv("BPF_IPTABLES_CRASH_TRACE");
	unsigned int n;
	size_t len;

	if (cp_point_hook)
		cp_point_hook(name);
	if (!(at && *at) && !(trace && *trace))
		return;
	/* the state file is written in a thread of its own (cli.c, store()) */
	pthread_mutex_lock(&lock);
	n = hit(name);
	pthread_mutex_unlock(&lock);
	if (trace && !strcmp(trace, "time")) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		fprintf(stderr, "crash point %s %u at %lld.%06ld\n", name, n, (long long)ts.tv_sec,
			ts.tv_nsec / 1000);
	} else if (trace && *trace) {
		fprintf(stderr, "crash point %s %u\n", name, n);
	}
	if (!at)
		return;
	len = strcspn(at, ":");
	if (len != strlen(name) || strncmp(at, name, len))
		return;
	if (n == (at[len] == ':' ? (unsigned int)strtoul(at + len + 1, NULL, 10) : 1u))
		kill(getpid(), SIGKILL);
}
