// SPDX-License-Identifier: GPL-2.0
/*
 * The three commands: bpf-iptables, bpf-iptables-save, bpf-iptables-restore, and
 * the same code as bpf-ip6tables, bpf-ip6tables-save, bpf-ip6tables-restore.
 * Parse first (nothing touched on a bad parameter), then lock, load, apply to the
 * loaded model, check, and store atomically: a failed command leaves the ruleset
 * and the saved state exactly as they were (the model is this process's own and
 * is dropped on failure, so it needs no copy).
 */
#include "cli.h"
#include "cmd.h"
#include "list.h"
#include "ops.h"
#include "restore.h"
#include "save.h"
#include "state.h"
#include "strbuf.h"
#include "sync.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the names of the family run (main.c): bpf-iptables* or bpf-ip6tables* */
#define IPT_PROG	IPT_AF_CMD
#define SAVE_PROG	(ipt_af == AF_INET6 ? "bpf-ip6tables-save" : "bpf-iptables-save")
#define RESTORE_PROG	(ipt_af == AF_INET6 ? "bpf-ip6tables-restore" : "bpf-iptables-restore")

static void print_caret(int argc, char **argv, int argi)
{
	size_t col = 0, len = 0;
	struct strbuf line = STRBUF_INIT;

	if (argi < 0 || argi >= argc)
		return;
	for (int i = 0; i < argc; i++) {
		if (i)
			sb_addc(&line, ' ');
		if (i == argi) {
			col = line.len;
			len = strlen(argv[i]);
		}
		sb_adds(&line, argv[i]);
	}
	fprintf(stderr, "  %s\n  %*s", sb_str(&line), (int)col, "");
	for (size_t i = 0; i < (len ? len : 1); i++)
		fputc('^', stderr);
	fputc('\n', stderr);
	sb_free(&line);
}

/* iptables' three ways of reporting, see errors.h. line > 0: restore's
 * "Error occurred at line: N". */
static int report(const char *prog, const struct ipt_err *err, int argc, char **argv,
		  unsigned int line)
{
	switch (err->style) {
	case IPT_ES_IPTC: {
		/* one "prog: text" line per line of the message */
		const char *p = err->msg;

		while (*p) {
			size_t n = strcspn(p, "\n");

			fprintf(stderr, "%s: %.*s\n", prog, (int)n, p);
			p += n + (p[n] == '\n');
		}
		return err->code;
	}
	case IPT_ES_PLAIN:
		fprintf(stderr, "%s\n", err->msg);
		return err->code;
	case IPT_ES_XT_ONLY:
		fprintf(stderr, "%s v%s (bpf): %s\n", prog, BPFIPT_VERSION, err->msg);
		return err->code;
	case IPT_ES_XT:
		fprintf(stderr, "%s v%s (bpf): %s\n", prog, BPFIPT_VERSION, err->msg);
		break;
	case IPT_ES_BARE:
	default:
		if (err->msg[0])
			fprintf(stderr, "%s\n", err->msg);
		break;
	}
	if (argv)
		print_caret(argc, argv, err->argi);
	if (line)
		fprintf(stderr, "Error occurred at line: %u\n", line);
	fprintf(stderr, "Try `%s -h' or '%s --help' for more information.\n", prog, prog);
	return err->code;
}

static void print_help(void)
{
	printf("%s v%s\n\n"
"Usage: %s -[ACD] chain rule-specification [options]\n"
"       %s -I chain [rulenum] rule-specification [options]\n"
"       %s -R chain rulenum rule-specification [options]\n"
"       %s -D chain rulenum [options]\n"
"       %s -[LS] [chain [rulenum]] [options]\n"
"       %s -[FZ] [chain] [options]\n"
"       %s -[NX] chain\n"
"       %s -E old-chain-name new-chain-name\n"
"       %s -P chain target [options]\n"
"       %s -h (print this help information)\n\n",
	       IPT_PROG, BPFIPT_VERSION, IPT_PROG, IPT_PROG, IPT_PROG, IPT_PROG, IPT_PROG,
	       IPT_PROG, IPT_PROG, IPT_PROG, IPT_PROG, IPT_PROG);
	printf(
"The %s command line for the filter table, enforced by eBPF.\n"
"Commands, options, matches (tcp udp %s multiport conntrack state iprange\n"
"comment limit mark length mac) and targets (ACCEPT DROP RETURN REJECT LOG NFLOG\n"
"TCPMSS, user chains with -j/-g) are those of %s(8).\n"
"State: $BPF_IPTABLES_STATE_DIR, else /run/bpf-iptables/netns-<cookie>.\n"
"\n"
"Not in iptables:\n"
"  --log-follow [--syslog] [--count N] [--timeout S]\n"
"                 print the LOG lines of this namespace (to syslog)\n"
"  --watch [-v]   attach to interfaces created later (link watcher)\n"
"  --unload       remove the data plane, keep the saved rules\n",
	       IPT_AF_IPT, ipt_af == AF_INET6 ? "icmp6" : "icmp", IPT_AF_IPT);
}

static unsigned int list_format(const struct ipt_cmd *cmd)
{
	unsigned int f = 0;

	if (cmd->options & OPT_NUMERIC)
		f |= IPT_FMT_NUMERIC;
	if (cmd->verbose)
		f |= IPT_FMT_VERBOSE;
	if (cmd->options & OPT_EXPANDED)
		f |= IPT_FMT_EXACT;
	if (cmd->options & OPT_LINENUMBERS)
		f |= IPT_FMT_LINENUMBERS;
	return f;
}

static int do_list(const struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	if (cmd->command & CMD_LIST)
		r = ipt_list(&sb, t, cmd->chain, cmd->rulenum, list_format(cmd));
	else
		r = ipt_save_list_rules(&sb, t, cmd->chain, cmd->rulenum, cmd->verbose) == -1 ? -1 : 0;
	if (r)
		ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "No chain/target/match by that name.");
	else
		sb_write(&sb, stdout);
	sb_free(&sb);
	return r;
}

/* What iptables -v says before it acts: the rule lines of -A/-I/-R/-D/-C, and
 * one line per chain for -F, -Z and -X. */
static void verbose_echo(const struct ipt_table *t, const struct ipt_cmd *cmd)
{
	struct strbuf sb = STRBUF_INIT;
	const char *what = NULL;

	if (cmd->command & (CMD_APPEND | CMD_INSERT | CMD_REPLACE | CMD_DELETE | CMD_CHECK)) {
		for (unsigned int i = 0; i < cmd->nrules; i++)
			ipt_list_rule_echo(&sb, cmd->rules[i]);
	} else if (cmd->command == CMD_FLUSH) {
		what = "Flushing";
	} else if (cmd->command & CMD_ZERO) {
		what = "Zeroing";
	} else if (cmd->command == CMD_DELETE_CHAIN) {
		what = "Deleting";
	}
	if (what && cmd->chain) {
		sb_addf(&sb, "%s chain `%s'\n", what, cmd->chain);
	} else if (what) {
		for (unsigned int i = 0; i < t->nchains; i++)
			if (cmd->command != CMD_DELETE_CHAIN || !t->chains[i]->builtin)
				sb_addf(&sb, "%s chain `%s'\n", what, t->chains[i]->name);
	}
	sb_write(&sb, stdout);
	sb_free(&sb);
}

/* The new state file, written in a thread while the ruleset compiles: it must
 * be on disk before the switch (a command killed after it finds the file of
 * the ruleset in force, state.h), not before the compile. The 1M deny list's
 * 12 MB and fsync took 31 ms of an -A, in line. */
struct prep {
	pthread_t th;
	struct ipt_state *st;
	const struct ipt_table *t;
	struct ipt_err err;
	int r;
	bool started;
};

static void *prep_run(void *arg)
{
	struct prep *p = arg;

	p->r = ipt_state_prepare(p->st, p->t, &p->err);
	return NULL;
}

/* Its result once written (err: why not); again: the same. */
static int prep_done(void *arg, struct ipt_err *err)
{
	struct prep *p = arg;

	if (p->started) {
		pthread_join(p->th, NULL);
		p->started = false;
	}
	if (p->r && err)
		*err = p->err;
	return p->r ? -1 : 0;
}

/* Save t and switch the data plane to it (state.h, CRASHES). */
static int store(struct ipt_state *st, const struct ipt_table *t, struct ipt_err *err)
{
	struct prep p = { .st = st, .t = t };
	int r;

	ipt_err_clear(&p.err);
	p.started = !pthread_create(&p.th, NULL, prep_run, &p);
	if (!p.started)
		prep_run(&p);
	r = cp_sync_out_when(t, st->dir, st->next_tag, prep_done, &p, err);
	/* a compile that failed, or no data plane: the file is waited for here */
	if (prep_done(&p, r ? NULL : err))
		r = -1;
	return ipt_state_commit(st, !r, r ? NULL : err) || r ? -1 : 0;
}

int ipt_cli_iptables(int argc, char **argv)
{
	struct ipt_cmd cmd;
	struct ipt_err err;
	struct ipt_state st = { .lock_fd = -1 };
	struct ipt_table *t = NULL;
	int rc = 0;

	/* not iptables options: the LOG reader; removing the data plane */
	if (argc >= 2 && !strcmp(argv[1], "--log-follow"))
		return ipt_cli_log_follow(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "--watch"))
		return ipt_cli_watch(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "--unload")) {
		struct ipt_state ust = { .lock_fd = -1 };

		ipt_err_clear(&err);
		memset(&cmd, 0, sizeof(cmd));
		/* the state directory first: a user who may not change the ruleset
		 * gets iptables' permission error, not a silent success (the
		 * detaching itself does not report what it could not remove) */
		if (ipt_state_open(&ust, &err) || cp_unload(&err))
			rc = report(IPT_PROG, &err, 0, NULL, 0);
		return rc;
	}
	if (ipt_cmd_parse(argc - 1, argv + 1, false, &cmd, &err)) {
		rc = report(IPT_PROG, &err, argc - 1, argv + 1, 0);
		goto out;
	}
	if (cmd.help) {
		print_help();
		goto out;
	}
	if (cmd.version) {
		if (cmd.version_inverted)
			printf("Not %s ;-)\n", BPFIPT_VERSION);
		else
			ipt_print_version_report(IPT_PROG);
		goto out;
	}
	if (ipt_state_open(&st, &err))
		goto fail;
	bool modifies = ipt_cmd_modifies(&cmd);

	if (modifies && ipt_state_lock(&st, cmd.wait_set, cmd.wait_secs, &err))
		goto fail;
	if (modifies) {
		/* its words: what a namespace's first programs are loaded with */
		struct strbuf words = STRBUF_INIT;

		for (int i = 1; i < argc; i++) {
			sb_adds(&words, argv[i]);
			sb_addc(&words, ' ');
		}
		cp_sync_begin(sb_str(&words), words.len);
		sb_free(&words);
	}
	/* the running counters: for a change (each continues its own) and for a
	 * listing that shows them (-v); -C, -S and -L without -v print none */
	if (ipt_state_load(&st, &t, &err) ||
	    ((modifies || cmd.verbose) && cp_sync_counters_in(t, &err)))
		goto fail;
	/* -L/-S come before -Z when both are given, as in iptables */
	if ((cmd.command & (CMD_LIST | CMD_LIST_RULES)) && do_list(t, &cmd, &err))
		goto fail;
	if (!modifies && !(cmd.command & CMD_CHECK))
		goto out;
	if (ipt_cmd_resolve(t, &cmd, &err))
		goto fail;
	if (cmd.verbose)
		verbose_echo(t, &cmd);
	fflush(stdout);
	/* t is not used after the command: applied in place (a copy of a 10 000-rule
	 * model and its freeing were 7% of a one-rule change) */
	/* -C changes nothing: the stored table was valid when it was stored, and
	 * so is it after a command that keeps it so */
	bool validate = modifies && !ipt_cmd_keeps_valid(&cmd);

	if (ipt_table_apply(t, &cmd, &err) || (validate && ipt_table_validate(t, &err)))
		goto fail;
	/* the data plane between prepare and commit: a ruleset it cannot take is
	 * refused, state untouched; a crash anywhere leaves the old or the new one */
	if (modifies && store(&st, t, &err))
		goto fail;
	goto out;
fail:
	rc = report(IPT_PROG, &err, 0, NULL, 0);
out:
	ipt_table_free(&t);
	ipt_state_close(&st);
	ipt_cmd_free(&cmd);
	return rc;
}

static void stamp(char *buf, size_t n)
{
	time_t now = time(NULL);

	snprintf(buf, n, "%s", ctime(&now));
	buf[strcspn(buf, "\n")] = '\0';
}

int ipt_cli_save(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "counters", no_argument, NULL, 'c' },
		{ "table", required_argument, NULL, 't' },
		{ "dump", no_argument, NULL, 'd' },
		{ "modprobe", required_argument, NULL, 'M' },
		{ "file", required_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool counters = false;
	const char *file = NULL;
	const char *table = NULL;
	struct ipt_err err;
	struct ipt_state st = { .lock_fd = -1 };
	struct ipt_table *t = NULL;
	int c, rc = 0;

	ipt_err_clear(&err);
	while ((c = getopt_long(argc, argv, "bcdt:M:f:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 'd':
		case 'M':
			break;
		case 'c':
			counters = true;
			break;
		case 't':
			table = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'V':
			printf("%s v%s (bpf)\n", SAVE_PROG, BPFIPT_VERSION);
			return 0;
		case 'h':
			printf("Usage: %s [-c] [-t table] [-f file]\n", SAVE_PROG);
			return 0;
		default:
			fprintf(stderr, "Look at manual page `%s.8' for more information.\n",
				SAVE_PROG);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "Unknown arguments found on commandline\n");
		return 1;
	}
	if (table && strcmp(table, "filter")) {
		fprintf(stderr, "%s: table `%s' is not supported: bpf-iptables filters the "
			"`filter' table only\n", SAVE_PROG, table);
		return 1;
	}
	if (ipt_state_open(&st, &err) || ipt_state_load(&st, &t, &err) ||
	    cp_sync_counters_in(t, &err)) {
		rc = report(SAVE_PROG, &err, 0, NULL, 0);
		goto out;
	}
	struct strbuf sb = STRBUF_INIT;
	char when[64];

	stamp(when, sizeof(when));
	sb_addf(&sb, "# Generated by %s v%s on %s\n", SAVE_PROG, BPFIPT_VERSION, when);
	ipt_save_table(&sb, t, counters);
	sb_addf(&sb, "# Completed on %s\n", when);
	/* -f: as iptables-save, the file replaces standard output (mode 0600:
	 * a ruleset is the firewall's map of the host) */
	if (file) {
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			fprintf(stderr, "Failed to open file, error: %s\n", strerror(errno));
			if (fd >= 0)
				close(fd);
			sb_free(&sb);
			rc = 1;
			goto out;
		}
		close(fd);
	}
	if (sb_write(&sb, stdout) || fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the ruleset: %s\n", SAVE_PROG, strerror(errno));
		rc = 1;
	}
	sb_free(&sb);
out:
	ipt_table_free(&t);
	ipt_state_close(&st);
	return rc;
}

static int read_all(FILE *f, struct strbuf *sb)
{
	char chunk[65536];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sb_addn(sb, chunk, n);
	return ferror(f) ? -1 : 0;
}

int ipt_cli_restore(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "counters", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "test", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "noflush", no_argument, NULL, 'n' },
		{ "modprobe", required_argument, NULL, 'M' },
		{ "table", required_argument, NULL, 'T' },
		{ "wait", optional_argument, NULL, 'w' },
		{ "wait-interval", required_argument, NULL, 'W' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ipt_restore_opts o = { .prog = RESTORE_PROG };
	struct ipt_err err;
	struct ipt_state st = { .lock_fd = -1 };
	struct ipt_table *t = NULL;
	struct strbuf in = STRBUF_INIT;
	bool wait = false;
	int wait_secs = -1, c, rc = 0;
	unsigned int line = 0;
	FILE *f = stdin;

	ipt_err_clear(&err);
	while ((c = getopt_long(argc, argv, "bcvthnM:T:w::W:V", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 'v':
		case 'M':
		case 'W':
			break;
		case 'c':
			o.counters = true;
			break;
		case 't':
			o.test = true;
			break;
		case 'n':
			o.noflush = true;
			break;
		case 'T':
			o.only_table = optarg;
			break;
		case 'w':
			wait = true;
			/* iptables-restore: -w takes the next word unless it is an option */
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			if (optarg) {
				char *end;
				long v = strtol(optarg, &end, 10);

				if (*end || end == optarg || v < 0 || v > INT_MAX) {
					fprintf(stderr, "%s v%s (bpf): wait seconds not numeric\n"
						"Error occurred at line: 0\n"
						"Try `%s -h' or '%s --help' for more information.\n",
						RESTORE_PROG, BPFIPT_VERSION, RESTORE_PROG,
						RESTORE_PROG);
					return 2;
				}
				wait_secs = (int)v;
			}
			break;
		case 'V':
			printf("%s v%s (bpf)\n", RESTORE_PROG, BPFIPT_VERSION);
			return 0;
		case 'h':
			printf("Usage: %s [-c] [-v] [-V] [-t] [-h] [-n] [-w secs] [-T table] "
			       "[file]\n", RESTORE_PROG);
			return 0;
		default:	/* getopt said why; iptables-restore exits 1 here */
			fprintf(stderr, "Try `%s -h' for more information.\n", RESTORE_PROG);
			return 1;
		}
	}
	if (optind == argc - 1) {
		f = fopen(argv[optind], "re");
		if (!f) {
			fprintf(stderr, "Can't open %s: %s\n", argv[optind], strerror(errno));
			return 1;
		}
	} else if (optind < argc) {
		fprintf(stderr, "Unknown arguments found on commandline\n");
		return 1;
	}
	if (read_all(f, &in)) {
		fprintf(stderr, "%s: error reading input\n", RESTORE_PROG);
		rc = 1;
		goto out;
	}
	if (ipt_state_open(&st, &err) ||
	    (!o.test && ipt_state_lock(&st, wait, wait_secs, &err))) {
		rc = report(RESTORE_PROG, &err, 0, NULL, 0);
		goto out;
	}
	if (!o.test)
		cp_sync_begin(sb_str(&in), in.len);
	if (ipt_state_load(&st, &t, &err) || cp_sync_counters_in(t, &err)) {
		rc = report(RESTORE_PROG, &err, 0, NULL, 0);
		goto out;
	}
	if (ipt_restore(sb_str(&in), in.len, &t, &o, &err, &line)) {
		rc = report(RESTORE_PROG, &err, 0, NULL, err.style == IPT_ES_IPTC ? 0 : line);
		goto out;
	}
	/* --test: what the data plane would refuse is an error too, as the kernel's
	 * checks are at a real restore */
	if (o.test ? cp_check(t, &err) : store(&st, t, &err))
		rc = report(RESTORE_PROG, &err, 0, NULL, 0);
out:
	if (f && f != stdin)
		fclose(f);
	sb_free(&in);
	ipt_table_free(&t);
	ipt_state_close(&st);
	return rc;
}
