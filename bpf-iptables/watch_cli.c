// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-iptables --watch: the link watcher (controlplane/linkwatch.h) of this
 * network namespace, in the foreground (bpf-iptables.service runs it). When the
 * interfaces change it re-applies the saved ruleset under the writer lock, as
 * any command would: the programs get attached to the new interfaces and -i/-o
 * names are resolved again. Nothing happens while no data plane runs here (the
 * first command creates it, on every interface there is).
 */
#include "cli.h"
#include "linkwatch.h"
#include "loader.h"
#include "state.h"
#include "sync.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define PROG "bpf-iptables"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void reapply(void *arg, enum cp_watch_event ev, const char *why)
{
	struct ipt_state st = { .lock_fd = -1 };
	struct ipt_table *t = NULL;
	struct ipt_err err;
	bool *verbose = arg;

	if (!dp_running()) {
		if (*verbose)
			fprintf(stderr, "%s: %s: no data plane in this namespace yet\n", PROG, why);
		return;
	}
	if (ev == CP_WATCH_LOCAL) {
		/* -m addrtype's copy of the local routing table; the rules stay */
		if (dp_rtlocal_sync(&err))
			fprintf(stderr, "%s: %s: %s\n", PROG, why, err.msg);
		else if (*verbose)
			fprintf(stderr, "%s: %s: address types updated\n", PROG, why);
		return;
	}
	bool failed = ipt_state_open(&st, &err) || ipt_state_lock(&st, true, -1, &err);

	if (!failed) {
		cp_sync_begin(NULL, 0);
		failed = ipt_state_load(&st, &t, &err) || cp_sync_counters_in(t, &err) ||
			 cp_sync_out(t, st.dir, st.tag, &err);
	}
	if (failed)
		fprintf(stderr, "%s: %s: cannot re-apply the ruleset: %s\n", PROG, why, err.msg);
	else if (*verbose || strcmp(why, "start"))
		fprintf(stderr, "%s: %s: ruleset re-applied\n", PROG, why);
	ipt_table_free(&t);
	ipt_state_close(&st);
}

int ipt_cli_watch(int argc, char **argv)
{
	bool verbose = false;
	struct ipt_err err;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		fprintf(stderr, "%s v%s: unknown option \"%s\" (--watch takes -v)\n"
			"Try `%s -h' or '%s --help' for more information.\n", PROG,
			BPFIPT_VERSION, argv[i], PROG, PROG);
		return 2;
	}
	if (!cp_dataplane_enabled()) {
		fprintf(stderr, "%s: the data plane is off (BPF_IPTABLES_DATAPLANE=off): "
			"nothing to watch for\n", PROG);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (cp_linkwatch_run(&stop, reapply, &verbose, &err)) {
		fprintf(stderr, "%s: %s\n", PROG, err.msg);
		return 1;
	}
	return 0;
}
