// SPDX-License-Identifier: GPL-2.0
/* The per-namespace saved ruleset and writer lock (see state.h). */
#define _GNU_SOURCE	/* renameat2 */
#include "state.h"
#include "restore.h"
#include "save.h"
#include "snapshot.h"
#include "strbuf.h"
#include "sync.h"
#include "crashpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BOOT_FILE	"boot"
#define BOOT_ID_LEN	36	/* a UUID's text */

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, mode) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

static int netns_id(char *out, size_t n)
{
	__u64 cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd >= 0 && !getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len)) {
		close(fd);
		snprintf(out, n, "netns-%llu", (unsigned long long)cookie);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	/* older kernels: the namespace inode (may be reused after the namespace dies) */
	struct stat sb;

	if (stat("/proc/self/ns/net", &sb))
		return -errno;
	snprintf(out, n, "netns-ino-%llu", (unsigned long long)sb.st_ino);
	return 0;
}

/* Whoever can write the state directory or one above it decides the rules the
 * next command loads. Refuse a directory that is a symbolic link, is not owned
 * by us, or that someone else could replace: each component up to / must be
 * owned by root or by us and not writable by group or others, unless sticky
 * (/tmp). As OpenSSH checks its files. */
static int state_dir_safe(const char *dir, struct ipt_err *err)
{
	char path[PATH_MAX], *slash;
	struct stat sb;
	uid_t me = geteuid();

	if (lstat(dir, &sb))
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot use state directory "
				   "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != me || (sb.st_mode & 022))
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "state directory %s is not "
				   "safe: %s (it must be a directory of uid %u that only its "
				   "owner can write)", dir, !S_ISDIR(sb.st_mode) ?
				   "not a directory (a symbolic link?)" : sb.st_uid != me ?
				   "owned by another user" : "writable by others", (unsigned int)me);
	if (!realpath(dir, path))
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot use state directory "
				   "%s: %s", dir, strerror(errno));
	while ((slash = strrchr(path, '/'))) {
		slash[slash == path] = '\0';	/* "/a/b" -> "/a", "/a" -> "/" */
		if (stat(path, &sb))
			return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot use state "
					   "directory %s: %s: %s", dir, path, strerror(errno));
		if ((sb.st_uid != 0 && sb.st_uid != me) ||
		    ((sb.st_mode & 022) && !(sb.st_mode & S_ISVTX)))
			return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "state directory %s "
					   "is not safe: %s can be changed by another user", dir,
					   path);
		if (!strcmp(path, "/"))
			break;
	}
	return 0;
}

/* The id of this boot (36 characters), or "" where the kernel has none to give. */
static void boot_id(char out[BOOT_ID_LEN + 1])
{
	const char *env = getenv("BPF_IPTABLES_BOOT_ID");	/* the tests' reboot */
	int fd;
	ssize_t n;

	out[0] = '\0';
	if (env) {
		snprintf(out, BOOT_ID_LEN + 1, "%s", env);
		return;
	}
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, BOOT_ID_LEN);
	close(fd);
	out[n == BOOT_ID_LEN ? BOOT_ID_LEN : 0] = '\0';
}

/* The boot recorded in the directory's "boot" file ("" when it has none). */
static void boot_was(const char *dir, char out[BOOT_ID_LEN + 1])
{
	char path[600];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, BOOT_FILE);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, out, BOOT_ID_LEN);
		close(fd);
	}
	out[n > 0 ? n : 0] = '\0';
}

/* Record boot now in dir (written beside, then renamed). */
static int boot_record(const char *dir, const char *now)
{
	char path[600], tmp[620];
	size_t len = strlen(now);
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, BOOT_FILE);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (write(fd, now, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	close(fd);
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

/*
 * A state directory describes a data plane of the boot that wrote it. /run is
 * emptied by a reboot on most systems; where it is not (or the directory is
 * elsewhere), the rules of an earlier boot would be listed, and loaded by the
 * next change, in a namespace that runs none of them: namespace cookies count
 * again from every boot, so not even the same namespace's. A directory whose
 * "boot" file names another boot is emptied first (under the writer lock: no
 * command of this boot is between its steps), as iptables' tables are empty
 * after a reboot. A directory without the file is new, or an older version's of
 * this boot (kept; it gets the file).
 */
static int state_boot(const char *dir, struct ipt_err *err)
{
	char now[BOOT_ID_LEN + 1], was[BOOT_ID_LEN + 1], path[600];
	struct dirent *de;
	int lock, r = 0;
	DIR *d;

	boot_id(now);
	if (!now[0])
		return 0;
	boot_was(dir, was);
	if (!strcmp(was, now))
		return 0;
	if (!was[0]) {
		(void)boot_record(dir, now);	/* or next time */
		return 0;
	}
	snprintf(path, sizeof(path), "%s/lock", dir);
	lock = open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		r = -errno;
		goto out;
	}
	boot_was(dir, was);
	if (!strcmp(was, now))
		goto out;	/* another command of this boot emptied it */
	d = opendir(dir);
	if (!d) {
		r = -errno;
		goto out;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "lock") && strcmp(de->d_name, BOOT_FILE) &&
		    unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT && !r)
			r = -errno;
	closedir(d);
	if (!r)
		r = boot_record(dir, now);
out:
	if (lock >= 0)
		close(lock);
	return r ? ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC,
			       "cannot empty %s, left by an earlier boot: %s", dir, strerror(-r))
		 : 0;
}

int ipt_state_open(struct ipt_state *st, struct ipt_err *err)
{
	const char *env = getenv("BPF_IPTABLES_STATE_DIR");
	char id[64];
	int r;

	st->lock_fd = -1;
	if (env && *env) {
		snprintf(st->dir, sizeof(st->dir), "%s", env);
	} else {
		if ((r = netns_id(id, sizeof(id))))
			return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC,
					   "cannot identify the network namespace: %s", strerror(-r));
		snprintf(st->dir, sizeof(st->dir), "/run/bpf-iptables/%s", id);
	}
	r = mkdir_p(st->dir, 0700);
	if (!r && access(st->dir, R_OK | W_OK | X_OK))
		r = -errno;
	/* iptables' words when the table cannot be read: not root */
	if (r == -EACCES || r == -EPERM)
		return ipt_err_set(err, IPT_EXIT_VERSION, IPT_ES_XT_ONLY, "can't initialize "
				   "%s table `filter': Permission denied (you must be root)",
				   IPT_AF_IPT);
	if (r)
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC,
				   "cannot create state directory %s: %s", st->dir, strerror(-r));
	return state_dir_safe(st->dir, err) ? -1 : state_boot(st->dir, err);
}

int ipt_state_lock(struct ipt_state *st, bool wait, int wait_secs, struct ipt_err *err)
{
	char path[600];
	struct timespec start, now;

	snprintf(path, sizeof(path), "%s/lock", st->dir);
	st->lock_fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->lock_fd < 0)
		return ipt_err_set(err, IPT_EXIT_RESOURCE, IPT_ES_IPTC,
				   "Fatal: can't open lock file %s: %s", path, strerror(errno));
	if (!flock(st->lock_fd, LOCK_EX | LOCK_NB))
		return 0;
	if (!wait)
		return ipt_err_set(err, IPT_EXIT_RESOURCE, IPT_ES_PLAIN,
				   "Another app is currently holding the xtables lock. Perhaps "
				   "you want to use the -w option?");
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (!flock(st->lock_fd, LOCK_EX | LOCK_NB))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long waited_ms = (now.tv_sec - start.tv_sec) * 1000LL +
				      (now.tv_nsec - start.tv_nsec) / 1000000;

		if (wait_secs >= 0 && waited_ms >= wait_secs * 1000LL)
			return ipt_err_set(err, IPT_EXIT_RESOURCE, IPT_ES_PLAIN,
					   "Another app is currently holding the xtables lock. "
					   "Stopped waiting after %ds.", wait_secs);
		usleep(10000);
	}
}

void ipt_state_close(struct ipt_state *st)
{
	if (st->lock_fd >= 0) {
		cp_sync_end();
		close(st->lock_fd);	/* releases the flock */
	}
	st->lock_fd = -1;
}

#define TAG_LINE "# tag "

/* The tag of an old text ruleset: its first line (0: none, an older file). */
static __u32 text_tag(const struct strbuf *sb)
{
	size_t n = strlen(TAG_LINE);

	if (sb->len <= n || strncmp(sb->buf, TAG_LINE, n))
		return 0;
	return (__u32)strtoul(sb->buf + n, NULL, 10);
}

/* Read a whole file in one read() when its size is known; *exists false (and 0)
 * when there is none. */
static int read_file(const char *path, struct strbuf *sb, bool *exists)
{
	struct stat sbuf;
	int fd, e = 0;

	sb->len = 0;
	*exists = false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &sbuf)) {
		e = errno;
		goto out;
	}
	if (S_ISDIR(sbuf.st_mode)) {	/* never taken for an empty ruleset */
		e = EISDIR;
		goto out;
	}
	for (;;) {
		size_t want = sbuf.st_size > 0 && (size_t)sbuf.st_size >= sb->len ?
			      (size_t)sbuf.st_size - sb->len + 1 : 65536;
		ssize_t n;

		if (sb->cap < sb->len + want + 1) {
			char *nb = realloc(sb->buf, sb->len + want + 1);

			if (!nb) {
				e = ENOMEM;
				goto out;
			}
			sb->buf = nb;
			sb->cap = sb->len + want + 1;
		}
		n = read(fd, sb->buf + sb->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto out;
		}
		if (!n)
			break;
		sb->len += (size_t)n;
	}
	sb->buf[sb->len] = '\0';
	*exists = true;
out:
	close(fd);
	return -e;
}

/* The four files of state.h, in the order a reader without the lock reads them:
 * a pending file before the one its rename replaces. */
enum { F_SNAP_NEW, F_SNAP, F_TEXT_NEW, F_TEXT, F_MAX };
static const char *const file_names4[] = {
	[F_SNAP_NEW] = "snapshot.new", [F_SNAP] = "snapshot",
	[F_TEXT_NEW] = "rules.new", [F_TEXT] = "rules",
};
_Static_assert(sizeof(file_names4) / sizeof(file_names4[0]) == F_MAX, "one name per file");
/* The IPv6 ruleset (bpf-ip6tables) beside the IPv4 one, under the same lock (as
 * iptables and ip6tables share xtables.lock). No older text files: no version
 * before the snapshot had IPv6. */
static const char *const file_names6[] = {
	[F_SNAP_NEW] = "snapshot6.new", [F_SNAP] = "snapshot6",
	[F_TEXT_NEW] = NULL, [F_TEXT] = NULL,
};
_Static_assert(sizeof(file_names6) / sizeof(file_names6[0]) == F_MAX, "one name per file");

#define file_names (ipt_af == AF_INET6 ? file_names6 : file_names4)

static __u32 file_tag(int f, const struct strbuf *sb)
{
	return f <= F_SNAP ? ipt_snap_tag(sb->buf, sb->len) : text_tag(sb);
}

int ipt_state_load(struct ipt_state *st, struct ipt_table **t, struct ipt_err *err)
{
	char path[F_MAX][620];
	struct strbuf buf[F_MAX] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	bool have[F_MAX] = { false }, running;
	__u32 t1 = 0, t2 = 0;
	int r = 0, use = -1, f;

	ipt_table_new(t);
	for (f = 0; f < F_MAX; f++)
		snprintf(path[f], sizeof(path[f]), "%s/%s", st->dir,
			 file_names[f] ? file_names[f] : "");
	/* Which file is in force (state.h, CRASHES). Without the lock a writer may
	 * switch and rename meanwhile: read again until the data plane's tag stayed
	 * the same around the reads (tags only grow, so the same tag means nothing
	 * moved); a ".new" first, since a rename can only make it the other. The
	 * text files (an older version's) only count while no snapshot exists. */
	for (int tries = 0;; tries++) {
		running = cp_running_tag(&t1);
		for (f = 0; f < F_MAX; f++) {
			if (f == F_TEXT_NEW && have[F_SNAP]) {
				have[F_TEXT_NEW] = have[F_TEXT] = false;
				break;
			}
			if (!file_names[f])
				break;
			if ((r = read_file(path[f], &buf[f], &have[f]))) {
				r = ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot read %s: %s",
						path[f], strerror(-r));
				goto out;
			}
		}
		if (!running || st->lock_fd >= 0 || tries >= 200 ||
		    (cp_running_tag(&t2) && t2 == t1))
			break;
		usleep(1000);
	}
	if (running && have[F_SNAP_NEW] && file_tag(F_SNAP_NEW, &buf[F_SNAP_NEW]) == t1)
		use = F_SNAP_NEW;
	else if (have[F_SNAP])
		use = F_SNAP;
	else if (running && have[F_TEXT_NEW] && file_tag(F_TEXT_NEW, &buf[F_TEXT_NEW]) == t1)
		use = F_TEXT_NEW;
	else if (have[F_TEXT])
		use = F_TEXT;
	if (st->lock_fd >= 0) {
		/* a killed writer's: in force (it switched) or never in force */
		for (f = F_SNAP_NEW; f <= F_TEXT_NEW; f += F_TEXT_NEW - F_SNAP_NEW) {
			if (!have[f])
				continue;
			if (use == f ? rename(path[f], path[f + 1]) : unlink(path[f])) {
				r = ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC,
						"cannot recover %s: %s", path[f], strerror(errno));
				goto out;
			}
		}
	}
	st->tag = use >= 0 ? file_tag(use, &buf[use]) : 0;
	st->next_tag = (st->tag > t1 ? st->tag : t1) + 1;
	if (!st->next_tag)
		st->next_tag = 1;
	if (use == F_SNAP_NEW || use == F_SNAP) {
		char why[256];

		if (ipt_snap_read(buf[use].buf, buf[use].len, t, why, sizeof(why)))
			r = ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC,
					"saved ruleset %s is corrupt: %s", path[use], why);
	} else if (use >= 0 && buf[use].len && ipt_restore_state(buf[use].buf, buf[use].len, t, err)) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		ipt_err_clear(err);
		r = ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "saved ruleset %s is corrupt: %s",
				path[use], why);
	}
out:
	for (f = 0; f < F_MAX; f++)
		sb_free(&buf[f]);
	return r;
}

int ipt_state_prepare(struct ipt_state *st, const struct ipt_table *t, struct ipt_err *err)
{
	char path[620];
	struct strbuf sb = STRBUF_INIT;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", st->dir, file_names[F_SNAP_NEW]);
	ipt_snap_write(&sb, t, st->next_tag);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	for (size_t off = 0; off < sb.len;) {
		ssize_t w = write(fd, sb.buf + off, sb.len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		off += (size_t)w;
		cp_crash_point("state-write");
	}
	close(fd);
	if (r)
		unlink(path);
	else
		cp_crash_point("prepared");
out:
	sb_free(&sb);
	if (r)
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot write %s: %s", path,
				   strerror(-r));
	return 0;
}

/* "snapshot.new" becomes "snapshot": the two names exchanged, then the older
 * file unlinked, where the filesystem can (renameat2's RENAME_EXCHANGE), else a
 * rename over it. A rename that replaces a file makes ext4 write the new one
 * back at once (auto_da_alloc: 0.2 ms of every change on this machine's /run),
 * an exchange does not. Until its unlink the older ruleset is the ".new" file,
 * which a reader or a recovery takes for what it is (state.h, CRASHES): a
 * ".new" whose tag the data plane does not run. */
static int replace(const char *pend, const char *path)
{
	if (!renameat2(AT_FDCWD, pend, AT_FDCWD, path, RENAME_EXCHANGE)) {
		cp_crash_point("exchanged");
		unlink(pend);	/* else the next writer's recovery deletes it */
		return 0;
	}
	/* no "snapshot" yet (ENOENT), or a filesystem without exchanges */
	return rename(pend, path);
}

int ipt_state_commit(struct ipt_state *st, bool loaded, struct ipt_err *err)
{
	char path[620], pend[620], text[620];
	__u32 run;

	snprintf(path, sizeof(path), "%s/%s", st->dir, file_names[F_SNAP]);
	snprintf(pend, sizeof(pend), "%s/%s", st->dir, file_names[F_SNAP_NEW]);
	if (!loaded && !(cp_running_tag(&run) && run == st->next_tag)) {
		unlink(pend);
		return 0;
	}
	if (replace(pend, path)) {
		int e = errno;

		unlink(pend);
		return err ? ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot write %s: %s",
					 path, strerror(e)) : -e;
	}
	st->tag = st->next_tag;
	/* the snapshot now outranks an older version's text file: drop it (a crash
	 * before this unlink leaves it ignored) */
	if (file_names[F_TEXT]) {
		snprintf(text, sizeof(text), "%s/%s", st->dir, file_names[F_TEXT]);
		unlink(text);
	}
	cp_crash_point("committed");
	return 0;
}
