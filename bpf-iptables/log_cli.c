// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-iptables --log-follow: the reader of -j LOG events (dataplane/log.bpf.h).
 *
 * It reads the ring buffer of this network namespace's data plane and writes one
 * line per event in the kernel's LOG format (controlplane/logfmt.c): to stdout,
 * or with --syslog to syslog(3) (ident "bpf-iptables", facility LOG_DAEMON: a
 * program cannot log as the kernel) at the rule's --log-level. One reader per
 * namespace (a lock file in the state directory): events are consumed once.
 * Events lost by the data plane (ring full) are reported as they happen, and
 * the count lost before the reader started when it starts. The reader follows
 * the data plane across --unload and re-creation; a ruleset change keeps it.
 */
#include "cli.h"
#include "loader.h"
#include "logfmt.h"
#include "state.h"
#include "sync.h"

#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define PROG "bpf-iptables"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct reader {
	bool use_syslog;
	long long count;		/* stop after this many lines; < 0: never */
	long long lines;
	__u64 lost;			/* BPFIPT_ST_LOG_LOST already reported */
	struct strbuf sb;
};

static void emit(struct reader *rd, int level, const char *line)
{
	if (rd->use_syslog)
		syslog(LOG_DAEMON | (level & 7), "%s", line);
	else
		printf("%s\n", line);
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct bpfipt_log_event *ev = data;
	struct reader *rd = ctx;
	char in[IF_NAMESIZE] = "", out[IF_NAMESIZE] = "";

	if (size < sizeof(*ev))
		return 0;
	if (stop)
		return -EINTR;	/* --count reached within a batch */
	/* an interface gone since the packet shows as its index */
	if (ev->iif && !if_indextoname(ev->iif, in))
		snprintf(in, sizeof(in), "if%u", ev->iif);
	if (ev->oif && !if_indextoname(ev->oif, out))
		snprintf(out, sizeof(out), "if%u", ev->oif);
	sb_reset(&rd->sb);
	lf_format(&rd->sb, ev, in, out);
	emit(rd, ev->level, sb_str(&rd->sb));
	rd->lines++;
	if (rd->count >= 0 && rd->lines >= rd->count)
		stop = 1;
	return 0;
}

static void report_lost(struct reader *rd, const struct dp_inst *in, bool first)
{
	__u64 st[BPFIPT_ST_MAX];
	struct ipt_err err;
	char line[160];

	if (dp_inst_stats(in, st, &err))
		return;
	if (st[BPFIPT_ST_LOG_LOST] > rd->lost) {
		snprintf(line, sizeof(line), "%s: %llu LOG events lost%s", PROG,
			 (unsigned long long)(st[BPFIPT_ST_LOG_LOST] - rd->lost),
			 first ? " before this reader started" : " (ring buffer full)");
		if (rd->use_syslog)
			syslog(LOG_DAEMON | LOG_WARNING, "%s", line);
		fprintf(stderr, "%s\n", line);
	}
	rd->lost = st[BPFIPT_ST_LOG_LOST];
}

/* The id of an instance's ring buffer: tells a re-created data plane apart. */
static __u32 map_id(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

static __u32 running_log_id(void)
{
	struct dp_inst *in = NULL;
	struct ipt_err err;
	__u32 id = 0;

	if (!dp_inst_open(&in, &err) && in) {
		int fd = dp_inst_log_fd(in);

		id = fd >= 0 ? map_id(fd) : 0;
		dp_inst_free(&in);
	}
	return id;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s v%s: ", PROG, BPFIPT_VERSION);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry `%s -h' or '%s --help' for more information.\n", PROG, PROG);
	return 2;
}

static bool parse_num(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && end != s && !*end && *v >= 0;
}

int ipt_cli_log_follow(int argc, char **argv)
{
	struct reader rd = { .count = -1, .sb = STRBUF_INIT };
	struct ipt_state st = { .lock_fd = -1 };
	struct ring_buffer *rb = NULL;
	struct dp_inst *in = NULL;
	long long timeout = -1;
	struct ipt_err err;
	double t0 = now_s(), next_check = 0;
	int lock_fd = -1, rc = 0, fd;
	__u32 id = 0;
	char path[600];

	/* argv[1] is --log-follow */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--syslog")) {
			rd.use_syslog = true;
		} else if (!strcmp(argv[i], "--count") || !strcmp(argv[i], "--timeout")) {
			long long *v = argv[i][2] == 'c' ? &rd.count : &timeout;

			if (i + 1 >= argc)
				return usage_error("option \"%s\" requires an argument", argv[i]);
			if (!parse_num(argv[++i], v))
				return usage_error("invalid number \"%s\"", argv[i]);
		} else {
			return usage_error("unknown option \"%s\" (--log-follow takes --syslog, "
					   "--count N, --timeout SECONDS)", argv[i]);
		}
	}
	if (!cp_dataplane_enabled()) {
		fprintf(stderr, "%s: the data plane is off (BPF_IPTABLES_DATAPLANE=off): "
			"no LOG events\n", PROG);
		return 1;
	}
	if (ipt_state_open(&st, &err))
		goto fail;
	snprintf(path, sizeof(path), "%s/log.lock", st.dir);
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		fprintf(stderr, "%s: another reader (bpf-iptables --log-follow) has the LOG "
			"events of this network namespace\n", PROG);
		rc = 4;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rd.use_syslog)
		openlog(PROG, LOG_PID, LOG_DAEMON);
	while (!stop) {
		double t = now_s();

		if (timeout >= 0 && t - t0 >= (double)timeout)
			break;
		if (t >= next_check) {
			/* once a second: the data plane still the same one? */
			next_check = t + 1;
			if (in && running_log_id() != id) {
				ring_buffer__free(rb);
				rb = NULL;
				dp_inst_free(&in);
			}
			if (!in) {
				if (dp_inst_open(&in, &err))
					goto fail;
				fd = in ? dp_inst_log_fd(in) : -ENOENT;
				/* no ring before the first ruleset that logs */
				if (in && fd == -ENOENT)
					dp_inst_free(&in);
				if (in) {
					if (fd >= 0) {
						id = map_id(fd);
						rb = ring_buffer__new(fd, on_event, &rd, NULL);
					}
					if (!rb) {
						fprintf(stderr, "%s: cannot read the LOG ring buffer: %s\n",
							PROG, strerror(fd < 0 ? -fd : errno));
						rc = 1;
						goto out;
					}
					rd.lost = 0;
					report_lost(&rd, in, true);
				}
			} else {
				report_lost(&rd, in, false);
			}
		}
		if (!rb) {
			usleep(100000);	/* no data plane yet: wait for one */
			continue;
		}
		int n = ring_buffer__poll(rb, 100);

		if (n < 0 && n != -EINTR && !stop) {
			fprintf(stderr, "%s: reading the LOG ring buffer: %s\n", PROG,
				strerror(-n));
			rc = 1;
			break;
		}
	}
	if (in)
		report_lost(&rd, in, false);
	goto out;
fail:
	fprintf(stderr, "%s: %s\n", PROG, err.msg);
	rc = err.code ? err.code : 1;
out:
	ring_buffer__free(rb);
	dp_inst_free(&in);
	if (lock_fd >= 0)
		close(lock_fd);
	ipt_state_close(&st);
	sb_free(&rd.sb);
	return rc;
}
