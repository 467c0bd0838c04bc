// SPDX-License-Identifier: GPL-2.0
/*
 * The loader: instance, generations, attachment, discovery, removal.
 * See loader.h for the design; dataplane/bpfipt.h for the maps' contents.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "loader.h"
#include "crashpoint.h"
#include "grace.h"
#include "ival.h"
#include "strbuf.h"
#include "ct.h"
#include "rtlocal.h"
#include "tcfind.h"
#include "xdpfeat.h"
#include "bpfipt.skel.h"
#include "bpfipt_maps.skel.h"

/* ------------------------------------------------------------- logging ---- */

enum dp_level { DP_ERR, DP_WARN, DP_INFO, DP_DEBUG };

static int dp_verbosity = -1;

static void dp_log(enum dp_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	/* libbpf's warnings include expected probes: shown only when debugging */
	if (dp_verbosity < DP_DEBUG)
		return 0;
	fprintf(stderr, "libbpf: ");
	return vfprintf(stderr, fmt, ap);
}

static void dp_log_init(void)
{
	const char *e;

	if (dp_verbosity >= 0)
		return;
	e = getenv("BPF_IPTABLES_DEBUG");
	dp_verbosity = e && *e && strcmp(e, "0") ? DP_DEBUG : DP_ERR - 1;
	libbpf_set_print(libbpf_print);
}

static void dp_log(enum dp_level lvl, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	va_list ap;

	if ((int)lvl > dp_verbosity)
		return;
	fprintf(stderr, "bpf-iptables loader %s: ", names[lvl]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Record the error (first one wins) and return r, a negative errno. */
static int dp_fail(struct ipt_err *err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int dp_fail(struct ipt_err *err, int r, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r >= 0)
		r = -EINVAL;
	dp_log(DP_ERR, "%s: %s", msg, strerror(-r));
	if (err)
		ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "data plane: %s: %s", msg,
			    strerror(-r));
	return r;
}

/* --------------------------------------------------------------- maps ---- */

enum om {
	OM_IVAL, OM_FIELDS, OM_IFS,
	OM_EXTRAS, OM_LIMITS, OM_COUNTERS,
	OM_IVAL6, OM_TUPLE, OM_TUPLE6, OM_CNTFX, OM_TBITS, OM_IVALFX, OM_IVAL6FX,
	OM_SLOTSFX, OM_MAX,
};

#define POOL_CHUNK_BYTES (BPFIPT_POOL_WORDS * 8)
/* a page of the pool (pages_get()) */
#define PAGE_BYTES ((size_t)BPFIPT_PAGE_CHUNKS * POOL_CHUNK_BYTES)
_Static_assert(PAGE_BYTES % 4096 == 0, "a page maps whole memory pages");
_Static_assert(BPFIPT_MAX_WORDS / BPFIPT_CHUNK_WORDS <= 64 * BPFIPT_TOP_WORDS,
	       "the chunk bitmap of chunk 0 and a vector's summary rows cover every chunk");
#define VAR_ARRAY (BPF_F_INNER_MAP | BPF_F_MMAPABLE)
/* an mmapped array's elements are value_size rounded up to 8 bytes apart */
_Static_assert(sizeof(struct bpfipt_slot) % 8 == 0 && sizeof(struct bpfipt_extra) % 8 == 0 &&
	       sizeof(struct bpfipt_ival_page) % 8 == 0 &&
	       sizeof(struct bpfipt_ival6_page) % 8 == 0, "mmapped values are packed");

/* The shape of each generation map: must match the inner-map templates of
 * dataplane/bpfipt.bpf.c (the kernel compares type, sizes and flags). */
static const struct om_def {
	const char *outer;	/* the outer map's name */
	const char *inner;	/* name given to the inner maps */
	enum bpf_map_type type;
	__u32 key_size, value_size, flags;
	__u32 fixed;		/* fixed-size arrays: max_entries */
} om_defs[OM_MAX] = {
	[OM_IVAL] = { "bpfipt_ival", "g_ival", BPF_MAP_TYPE_ARRAY, 4,
		      sizeof(struct bpfipt_ival_page), VAR_ARRAY },
	[OM_FIELDS] = { "bpfipt_fields", "g_fields", BPF_MAP_TYPE_ARRAY, 4, 4 * BPFIPT_PACK,
			BPF_F_MMAPABLE, BPFIPT_FB_END / BPFIPT_PACK },
	[OM_IFS] = { "bpfipt_ifs", "g_ifs", BPF_MAP_TYPE_HASH,
		     sizeof(struct bpfipt_if_key), 4, BPF_F_NO_PREALLOC },
	[OM_EXTRAS] = { "bpfipt_extras", "g_extras", BPF_MAP_TYPE_ARRAY, 4,
			sizeof(struct bpfipt_extra), VAR_ARRAY },
	[OM_LIMITS] = { "bpfipt_limits", "g_limits", BPF_MAP_TYPE_ARRAY, 4,
			sizeof(struct bpfipt_limit_state), BPF_F_INNER_MAP },
	[OM_COUNTERS] = { "bpfipt_counters", "g_counters", BPF_MAP_TYPE_ARRAY, 4,
			  sizeof(struct bpfipt_counter), VAR_ARRAY },
	[OM_IVAL6] = { "bpfipt_ival6", "g_ival6", BPF_MAP_TYPE_ARRAY, 4,
		       sizeof(struct bpfipt_ival6_page), VAR_ARRAY },
	[OM_TUPLE] = { "bpfipt_tuple", "g_tuple", BPF_MAP_TYPE_HASH,
		       sizeof(struct bpfipt_tuple_key), 4, BPF_F_NO_PREALLOC },
	[OM_TUPLE6] = { "bpfipt_tuple6", "g_tuple6", BPF_MAP_TYPE_HASH,
			sizeof(struct bpfipt_tuple6_key), 4, BPF_F_NO_PREALLOC },
	[OM_CNTFX] = { "bpfipt_cntfx", "g_cntfx", BPF_MAP_TYPE_ARRAY, 4,
		       sizeof(struct bpfipt_counter), BPF_F_MMAPABLE, BPFIPT_CNT_FIXED },
	[OM_TBITS] = { "bpfipt_tbits", "g_tbits", BPF_MAP_TYPE_ARRAY, 4, 8, BPF_F_MMAPABLE,
		       BPFIPT_TBITS_WORDS },
	[OM_IVALFX] = { "bpfipt_ivalfx", "g_ivalfx", BPF_MAP_TYPE_ARRAY, 4,
			sizeof(struct bpfipt_ival_page), BPF_F_MMAPABLE, BPFIPT_IVAL_FIXED },
	[OM_IVAL6FX] = { "bpfipt_ival6fx", "g_ival6fx", BPF_MAP_TYPE_ARRAY, 4,
			 sizeof(struct bpfipt_ival6_page), BPF_F_MMAPABLE, BPFIPT_IVAL_FIXED },
	[OM_SLOTSFX] = { "bpfipt_slotsfx", "g_slotsfx", BPF_MAP_TYPE_ARRAY, 4,
			 sizeof(struct bpfipt_slot), BPF_F_MMAPABLE, BPFIPT_SLOTS_FIXED },
};

static const char *const prog_names[DP_PROG_MAX] = {
	[DP_PROG_XDP] = "bpfipt_xdp",
	[DP_PROG_TC_IN] = "bpfipt_tc_in",
	[DP_PROG_TC_OUT] = "bpfipt_tc_out",
	[DP_PROG_TC_IN3] = "bpfipt_tc_in3",
	[DP_PROG_TC_OUT3] = "bpfipt_tc_out3",
	[DP_PROG_TEST] = "bpfipt_test",
};

/* Instance maps (created once with the programs). */
enum im { IM_INST, IM_CONF, IM_STATS, IM_XDPIFS, IM_SCRATCH, IM_CT, IM_CT6, IM_CT_CONF, IM_CT_FRAG,
	  IM_LOG, IM_RTLOCAL, IM_RECENT, IM_PAGES, IM_MAX };

static const char *const im_names[IM_MAX] = {
	[IM_INST] = "bpfipt_inst",
	[IM_CONF] = "bpfipt_conf",
	[IM_STATS] = "bpfipt_stats",
	[IM_XDPIFS] = "bpfipt_xdp_slot",
	[IM_SCRATCH] = "bpfipt_scratch",
	[IM_CT] = "bpfipt_ct_slot",
	[IM_CT6] = "bpfipt_ct6_slot",
	[IM_CT_CONF] = "bpfipt_ct_conf",
	[IM_CT_FRAG] = "bpfipt_ctf_slot",
	[IM_LOG] = "bpfipt_log_slot",
	[IM_RTLOCAL] = "bpfipt_rtlocal",
	[IM_RECENT] = "bpfipt_recent",
	[IM_PAGES] = "bpfipt_pages",
};

_Static_assert(OM_MAX == 14, "om_defs covers every generation map");
_Static_assert(DP_PROG_MAX == 6, "prog_names covers every program");
_Static_assert(IM_MAX == 13, "im_names covers every instance map");

/* Instance maps made when a ruleset first needs them, each in slot 0 of an
 * instance map of maps of one entry, and kept from then on: a namespace whose
 * rulesets never need them holds none. */
enum lazy { LZ_CT, LZ_CT6, LZ_FRAG, LZ_LOG, LZ_XDPIFS, LZ_MAX };

static const struct lazy_def {
	enum im slot;			/* the outer map */
	const char *name;
	enum bpf_map_type type;
	__u32 key_size, value_size, max_entries, flags;
} lazy_defs[LZ_MAX] = {
	/* an IPv4 ruleset that tracks connections (BPFIPT_C_CT); in->ct_max entries */
	[LZ_CT] = { IM_CT, "bpfipt_ct", BPF_MAP_TYPE_LRU_HASH, BPFIPT_CT_KEY4,
		    sizeof(struct bpfipt_ct_entry), 0, 0 },
	/* an IPv6 one */
	[LZ_CT6] = { IM_CT6, "bpfipt_ct6", BPF_MAP_TYPE_LRU_HASH, sizeof(struct bpfipt_ct_key),
		     sizeof(struct bpfipt_ct_entry), 0, 0 },
	/* with either, the first fragments' results */
	[LZ_FRAG] = { IM_CT_FRAG, "bpfipt_ct_frag", BPF_MAP_TYPE_LRU_HASH,
		      sizeof(struct ct_frag_key), sizeof(struct ct_result), BPFIPT_CT_FRAG_MAX, 0 },
	/* a ruleset with a LOG rule (bytes) */
	[LZ_LOG] = { IM_LOG, "bpfipt_log", BPF_MAP_TYPE_RINGBUF, 0, 0, BPFIPT_LOG_RING, 0 },
	/* the first interface XDP judges (xdp_mark()); entries made as marked */
	[LZ_XDPIFS] = { IM_XDPIFS, "bpfipt_xdpifs", BPF_MAP_TYPE_HASH, 4, 4, 65536,
			BPF_F_NO_PREALLOC },
};

struct dp_inst {
	int prog[DP_PROG_MAX];		/* -1: not loaded */
	int map[IM_MAX];
	int outer[OM_MAX];
	int ncpus;
	__u32 tag;			/* written with the switch (dp_opts.tag) */
	size_t spare_keep;		/* spare_drop(): dp_opts.spare_keep */
	__u32 ct_max;			/* entries of a connection table made here */
	int lazy_fd[LZ_MAX];		/* lazy maps (lazy_defs), once looked up: -1 */
	__u32 feat;			/* BPFIPT_FEAT_* of its programs (a running
					 * instance's: bpfipt_inst's BPFIPT_I_FEAT) */
	int refs;			/* dp_inst_free() frees at the last */
};

/* The running instance a command holding the ruleset's lock found, for its
 * later opens (dp_inst_keep()). */
static struct {
	bool on;
	struct dp_inst *in;
	struct iface *v;	/* the interfaces it listed (iface_list_kept()) */
	int n;
} kept;

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static struct dp_inst *inst_alloc(void)
{
	struct dp_inst *in = calloc(1, sizeof(*in));
	int i;

	if (!in)
		return NULL;
	for (i = 0; i < DP_PROG_MAX; i++)
		in->prog[i] = -1;
	for (i = 0; i < IM_MAX; i++)
		in->map[i] = -1;
	for (i = 0; i < OM_MAX; i++)
		in->outer[i] = -1;
	in->ncpus = libbpf_num_possible_cpus();
	in->spare_keep = DP_SPARE_KEEP;
	in->ct_max = BPFIPT_CT_MAX_DEFAULT;
	for (i = 0; i < LZ_MAX; i++)
		in->lazy_fd[i] = -1;
	in->feat = BPFIPT_FEAT_ALL;
	in->refs = 1;
	return in;
}

void dp_inst_free(struct dp_inst **pin)
{
	struct dp_inst *in = *pin;
	int i;

	*pin = NULL;
	if (!in || --in->refs > 0)
		return;
	for (i = 0; i < DP_PROG_MAX; i++)
		fd_close(&in->prog[i]);
	for (i = 0; i < IM_MAX; i++)
		fd_close(&in->map[i]);
	for (i = 0; i < OM_MAX; i++)
		fd_close(&in->outer[i]);
	for (i = 0; i < LZ_MAX; i++)
		fd_close(&in->lazy_fd[i]);
	free(in);
}

void dp_inst_keep(bool on)
{
	kept.on = on;
	dp_inst_free(&kept.in);
	free(kept.v);
	kept.v = NULL;
	kept.n = 0;
}

int dp_inst_prog_fd(const struct dp_inst *in, enum dp_prog p)
{
	return p < DP_PROG_MAX ? in->prog[p] : -1;
}

static int dup_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* Is program `id` one of ours called `name`? */
static bool prog_named(__u32 id, const char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	bool r;
	int fd;

	if (!id)
		return false;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	r = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name);
	close(fd);
	return r;
}

/* A grace period: every program run that started before has finished
 * (controlplane/grace.h: a thread of ours on every CPU, or the kernel's RCU
 * grace period); BPF_IPTABLES_DEBUG says which. */
static bool grace_done(enum cp_grace_how how)
{
	static const char *const what[] = {
		[CP_GRACE_CPUS] = "a thread on every CPU",
		[CP_GRACE_RCU] = "the kernel's RCU grace period",
		[CP_GRACE_FAILED] = "none, membarrier failed",
	};

	dp_log(DP_DEBUG, "grace period: %s", what[how]);
	return how != CP_GRACE_FAILED;
}

static bool grace_now(void)
{
	return grace_done(cp_grace());
}

/* The grace period a command owes the previous switch (BPFIPT_I_PENDING),
 * begun by dp_grace_begin() as soon as the command holds the lock, so that it
 * passes while the command reads the state and compiles (the kernel's lasts
 * 8-15 ms here: more than half of a one-rule change when waited for at the
 * end). */
static struct {
	pthread_t th;
	bool started;
	enum cp_grace_how how;
} early_gp;

static void *early_gp_run(void *arg)
{
	(void)arg;
	early_gp.how = cp_grace();
	return NULL;
}

void dp_grace_begin(void)
{
	/* one begun before (a command of a long-lived process that did not
	 * install) may be older than the last switch */
	if (early_gp.started)
		pthread_join(early_gp.th, NULL);
	early_gp.started = !pthread_create(&early_gp.th, NULL, early_gp_run, NULL);
}

/* A grace period that began after dp_grace_begin() was called, or now. */
static bool grace_wait(void)
{
	if (!early_gp.started)
		return grace_now();
	pthread_join(early_gp.th, NULL);
	early_gp.started = false;
	return grace_done(early_gp.how);
}

/* -------------------------------------------------------- loading ---- */

/* Create the instance's maps and take their fds, with the maps-only
 * object (dataplane/bpf.cmake): no program, so libbpf does not read the kernel's
 * BTF, which the programs' objects each read when they are loaded into these
 * maps. */
static int inst_create_maps(struct dp_inst *in, struct ipt_err *err)
{
	struct bpfipt_maps_bpf *skel = bpfipt_maps_bpf__open();
	struct bpf_object *obj;
	struct bpf_map *m;
	int r = 0, i;

	if (!skel)
		return dp_fail(err, -errno, "cannot open the BPF maps' object");
	obj = skel->obj;
	if ((r = bpfipt_maps_bpf__load(skel))) {
		r = dp_fail(err, r, "cannot create the BPF maps");
		goto out;
	}
	for (i = 0; i < IM_MAX + OM_MAX; i++) {
		const char *name = i < IM_MAX ? im_names[i] : om_defs[i - IM_MAX].outer;
		int *fd = i < IM_MAX ? &in->map[i] : &in->outer[i - IM_MAX];

		m = bpf_object__find_map_by_name(obj, name);
		*fd = m ? dup_fd(bpf_map__fd(m)) : -1;
		if (*fd < 0) {
			r = dp_fail(err, -ENOENT, "map %s", name);
			goto out;
		}
	}
	dp_log(DP_DEBUG, "created the maps");
out:
	bpfipt_maps_bpf__destroy(skel);
	return r;
}

/* BPF_IPTABLES_VERIFIER_LOG=DIR: each program a command loads leaves the
 * verifier's level-2 log in DIR/<program>.log, to see what the verifier follows
 * (bench/vlog.py splits it by function; docs/troubleshooting.md). The kernel
 * takes a buffer of up to 1 GiB; it is mapped, and only what the log writes is
 * touched. */
#define VLOG_SIZE (UINT32_MAX >> 2)

static char *vlog_begin(struct bpf_program *pg)
{
	const char *dir = getenv("BPF_IPTABLES_VERIFIER_LOG");
	char *buf;

	if (!dir || !*dir)
		return NULL;
	buf = mmap(NULL, VLOG_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		dp_log(DP_WARN, "no buffer for the verifier's log: %s", strerror(errno));
		return NULL;
	}
	if (bpf_program__set_log_buf(pg, buf, VLOG_SIZE) ||
	    bpf_program__set_log_level(pg, 2)) {
		munmap(buf, VLOG_SIZE);
		return NULL;
	}
	return buf;
}

static void vlog_end(struct bpf_program *pg, char *buf)
{
	const char *dir = getenv("BPF_IPTABLES_VERIFIER_LOG");
	char path[4096];
	FILE *f;

	if (!buf)
		return;
	snprintf(path, sizeof(path), "%s/%s.log", dir, bpf_program__name(pg));
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, strnlen(buf, VLOG_SIZE), f) != strnlen(buf, VLOG_SIZE))
		dp_log(DP_WARN, "cannot write %s: %s", path, strerror(errno));
	if (f)
		fclose(f);
	munmap(buf, VLOG_SIZE);
}

/* ------------------------------------------------------------ may_goto ---- */

/* The walk's loops test may_goto (dataplane/bpfipt.bpf.c, LOOP_UPTO()) where
 * the kernel has it (Linux >= 6.9), else they run open-coded iterators, a kfunc
 * call an iteration. Older kernels refuse an opcode they do not know anywhere
 * in a program, so there each may_goto becomes a conditional jump of the same
 * target before the load, in code the verifier does not follow (bpfipt_may_goto
 * is 0): libbpf's last step before a load is a section handler's, registered
 * here for the sections of our programs ("xdp", "tc"). */
static int may_goto_kernel = -1;	/* dp_may_goto(): probed once */
static unsigned long may_goto_patched;	/* instructions patched, all loads */
static pthread_once_t may_goto_once = PTHREAD_ONCE_INIT;

bool dp_may_goto(void)
{
	/* may_goto +1; r0 = 0; r0 = 0; exit (the kernel refuses a may_goto +0) */
	const struct bpf_insn insns[] = {
		{ .code = BPFIPT_OP_MAY_GOTO, .off = 1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, k = __atomic_load_n(&may_goto_kernel, __ATOMIC_RELAXED);

	if (k < 0) {
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
				   sizeof(insns) / sizeof(insns[0]), NULL);
		k = fd >= 0;
		if (fd >= 0)
			close(fd);
		__atomic_store_n(&may_goto_kernel, k, __ATOMIC_RELAXED);
	}
	return k;
}

/* Whether the programs loaded now use may_goto: the kernel has it, and
 * BPF_IPTABLES_MAY_GOTO=0 (the tests of the iterators' loops) does not say no. */
static bool may_goto_use(void)
{
	const char *e = getenv("BPF_IPTABLES_MAY_GOTO");

	return dp_may_goto() && !(e && !strcmp(e, "0"));
}

unsigned long dp_may_goto_patched(void)
{
	return __atomic_load_n(&may_goto_patched, __ATOMIC_RELAXED);
}

static int may_goto_prepare(struct bpf_program *pg, struct bpf_prog_load_opts *opts, long cookie)
{
	const struct bpf_insn *in = bpf_program__insns(pg);
	size_t n = bpf_program__insn_cnt(pg), i, np = 0;
	struct bpf_insn *out;
	int r;

	(void)opts;
	(void)cookie;
	if (may_goto_use())
		return 0;
	out = malloc(n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	memcpy(out, in, n * sizeof(*out));
	for (i = 0; i < n; i++) {
		if (out[i].code != BPFIPT_OP_MAY_GOTO)
			continue;
		out[i].code = BPF_JMP | BPF_JEQ | BPF_K;	/* if r0 == 0 goto off */
		out[i].dst_reg = 0;
		out[i].src_reg = 0;
		out[i].imm = 0;
		np++;
	}
	r = np ? bpf_program__set_insns(pg, out, n) : 0;
	free(out);
	dp_log(DP_DEBUG, "%s: %zu may_goto patched out", bpf_program__name(pg), np);
	__atomic_add_fetch(&may_goto_patched, np, __ATOMIC_RELAXED);
	return r;
}

static void may_goto_handlers(void)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, o, .prog_prepare_load_fn = may_goto_prepare);

	if (libbpf_register_prog_handler("xdp", BPF_PROG_TYPE_XDP, BPF_XDP, &o) < 0 ||
	    libbpf_register_prog_handler("tc", BPF_PROG_TYPE_SCHED_CLS, 0, &o) < 0)
		dp_log(DP_WARN, "cannot register the section handlers: programs loaded "
		       "without may_goto may not load on Linux < 6.9");
}

/* Load the programs in `progs` that `in` does not have yet, with one BPF object,
 * into the maps of `in`. */
static int inst_load_obj(struct dp_inst *in, unsigned int progs, struct ipt_err *err)
{
	char *vlog[DP_PROG_MAX] = { NULL };
	struct bpfipt_bpf *skel;
	struct bpf_program *pg;
	struct bpf_map *m;
	unsigned int load = 0;
	int r = 0, i;

	for (i = 0; i < DP_PROG_MAX; i++)
		if ((progs & (1u << i)) && in->prog[i] < 0)
			load |= 1u << i;
	if (!load)
		return 0;
	pthread_once(&may_goto_once, may_goto_handlers);
	skel = bpfipt_bpf__open();
	if (!skel)
		return dp_fail(err, -errno, "cannot open the BPF object");
	skel->rodata->bpfipt_feat = in->feat;
	skel->rodata->bpfipt_may_goto = may_goto_use();
	for (i = 0; i < DP_PROG_MAX; i++) {
		pg = bpf_object__find_program_by_name(skel->obj, prog_names[i]);
		if (!pg) {
			r = dp_fail(err, -ENOENT, "BPF program %s missing", prog_names[i]);
			goto out;
		}
		bpf_program__set_autoload(pg, !!(load & (1u << i)));
		if (load & (1u << i))
			vlog[i] = vlog_begin(pg);
	}
	for (i = 0; i < IM_MAX + OM_MAX; i++) {
		const char *name = i < IM_MAX ? im_names[i] : om_defs[i - IM_MAX].outer;
		int fd = i < IM_MAX ? in->map[i] : in->outer[i - IM_MAX];

		m = bpf_object__find_map_by_name(skel->obj, name);
		if (!m || fd < 0 || (r = bpf_map__reuse_fd(m, fd))) {
			r = dp_fail(err, r ? r : -ENOENT, "cannot reuse map %s", name);
			goto out;
		}
	}
	r = bpfipt_bpf__load(skel);
	for (i = 0; i < DP_PROG_MAX; i++)
		if (vlog[i]) {
			vlog_end(bpf_object__find_program_by_name(skel->obj, prog_names[i]),
				 vlog[i]);
			vlog[i] = NULL;
		}
	if (r) {
		r = dp_fail(err, r, "cannot load the BPF programs (root and a kernel >= 6.4 "
			    "with BTF are needed; BPF_IPTABLES_DEBUG=1 shows why)");
		goto out;
	}
	for (i = 0; i < DP_PROG_MAX; i++) {
		if (!(load & (1u << i)))
			continue;
		pg = bpf_object__find_program_by_name(skel->obj, prog_names[i]);
		in->prog[i] = dup_fd(bpf_program__fd(pg));
		if (in->prog[i] < 0) {
			r = dp_fail(err, -errno, "dup");
			goto out;
		}
	}
	dp_log(DP_DEBUG, "loaded programs 0x%x", load);
out:
	for (i = 0; i < DP_PROG_MAX; i++)
		if (vlog[i])	/* a failure before the load */
			munmap(vlog[i], VLOG_SIZE);
	bpfipt_bpf__destroy(skel);
	return r;
}

/* One program of inst_load(), verified on a thread of its own. */
struct load_job {
	struct dp_inst *in;
	unsigned int prog;
	pthread_t th;
	bool started;
	int r;
	struct ipt_err err;
};

static void *load_job_run(void *arg)
{
	struct load_job *j = arg;

	j->r = inst_load_obj(j->in, j->prog, &j->err);
	return NULL;
}

/* Load the programs in `progs` that `in` does not have yet (inst_load_obj()),
 * into the maps of `in`: a running or already loaded instance's (reuse), else
 * created first (inst_create_maps()). Two or more are verified side by side: the
 * verifier is most of a namespace's first command (docs/performance.md), and
 * programs are verified in parallel. */
static int inst_load(struct dp_inst *in, unsigned int progs, bool reuse, struct ipt_err *err)
{
	struct load_job jobs[DP_PROG_MAX];
	unsigned int load = 0;
	int r = 0, i, n = 0;

	for (i = 0; i < DP_PROG_MAX; i++)
		if ((progs & (1u << i)) && in->prog[i] < 0)
			load |= 1u << i;
	if (!reuse && (r = inst_create_maps(in, err)))
		return r;
	if (__builtin_popcount(load) < 2)
		return inst_load_obj(in, load, err);
	for (i = 0; i < DP_PROG_MAX; i++) {
		if (!(load & (1u << i)))
			continue;
		jobs[n] = (struct load_job){ .in = in, .prog = 1u << i };
		jobs[n].started = !pthread_create(&jobs[n].th, NULL, load_job_run, &jobs[n]);
		if (!jobs[n].started)
			load_job_run(&jobs[n]);
		n++;
	}
	for (i = 0; i < n; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
		if (jobs[i].r && !r) {
			r = jobs[i].r;
			if (err)	/* dp_fail() takes none too */
				*err = jobs[i].err;
		}
	}
	return r;
}

static struct dp_inst *early_inst_maps(void);
static void early_inst_join(void);

static int inst_create(struct dp_inst **out, unsigned int progs, const struct ct_settings *ct,
		       struct ipt_err *err)
{
	/* nothing installed for either family: generation 0 of each */
	struct bpfipt_inst iv = { .abi = BPFIPT_ABI, .cur = { 0, 2 } };
	struct ct_settings dflt;
	struct bpfipt_ct_conf cc;
	struct dp_inst *in;
	__u32 zero = 0;
	int r = 0;

	dp_log_init();
	*out = NULL;
	if (!ct) {
		ct_settings_default(&dflt);
		ct = &dflt;
	}
	ct_conf_from_settings(ct, &cc);
	/* made early (its programs loading: early_inst_join()), or now */
	in = early_inst_maps();
	if (in) {
		dp_log(DP_DEBUG, "the maps made while the command read its input");
	} else {
		in = inst_alloc();
		if (!in)
			return dp_fail(err, -ENOMEM, "out of memory");
		r = inst_load(in, progs, false, err);
	}
	in->ct_max = ct->max;
	if (!r && bpf_map_update_elem(in->map[IM_CT_CONF], &zero, &cc, BPF_ANY))
		r = dp_fail(err, -errno, "cannot write bpfipt_ct_conf");
	if (!r && bpf_map_update_elem(in->map[IM_INST], &zero, &iv, BPF_ANY))
		r = dp_fail(err, -errno, "cannot write bpfipt_inst");
	if (r) {
		early_inst_join();	/* its programs may be loading into `in` */
		dp_inst_free(&in);
		return r;
	}
	*out = in;
	return 0;
}

int dp_inst_create(struct dp_inst **out, unsigned int progs, struct ipt_err *err)
{
	return inst_create(out, progs, NULL, err);
}

/* Lazy map z, from slot 0 of its outer map, into in->lazy_fd[z]: 0, or -ENOENT
 * while the slot is empty. */
static int lazy_get(struct dp_inst *in, enum lazy z)
{
	__u32 zero = 0, id;

	if (in->lazy_fd[z] >= 0)
		return 0;
	if (bpf_map_lookup_elem(in->map[lazy_defs[z].slot], &zero, &id))
		return -errno;
	in->lazy_fd[z] = bpf_map_get_fd_by_id(id);
	return in->lazy_fd[z] < 0 ? -errno : 0;
}

/* A new lazy map z, not yet in its slot: its fd, or a negative errno. */
static int lazy_create(const struct dp_inst *in, enum lazy z, struct ipt_err *err)
{
	const struct lazy_def *d = &lazy_defs[z];
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = d->flags);
	__u32 max = d->max_entries ? d->max_entries : in->ct_max;
	int fd = bpf_map_create(d->type, d->name, d->key_size, d->value_size, max, &o);

	if (fd < 0)
		return dp_fail(err, -errno, "cannot create map %s (%u entries)", d->name, max);
	return fd;
}

/* Lazy map z for a ruleset that needs it, made when the instance has none: *fd,
 * for the caller to put in its slot before the switch (outer_set_all()); -1 when
 * there is one already. One made by a command killed before its switch is the
 * next one's. */
static int lazy_new(struct dp_inst *in, enum lazy z, int *fd, struct ipt_err *err)
{
	int r = lazy_get(in, z);

	*fd = -1;
	if (r != -ENOENT)
		return r ? dp_fail(err, r, "cannot read %s", im_names[lazy_defs[z].slot]) : 0;
	*fd = lazy_create(in, z, err);
	if (*fd < 0)
		return *fd;
	cp_crash_point(z == LZ_LOG ? "log-ring" : "ct-table");
	return 0;
}

int dp_inst_ct_make(struct dp_inst *in, struct ipt_err *err)
{
	__u32 zero = 0;
	int fd, r = 0;

	for (enum lazy z = LZ_CT; z <= LZ_FRAG && !r; z++) {	/* the tables, the fragments' */
		if ((r = lazy_new(in, z, &fd, err)) || fd < 0)
			continue;
		if (bpf_map_update_elem(in->map[lazy_defs[z].slot], &zero, &fd, BPF_ANY)) {
			r = dp_fail(err, -errno, "cannot install map %s", lazy_defs[z].name);
			close(fd);
			continue;
		}
		in->lazy_fd[z] = fd;
	}
	return r;
}

int dp_inst_ct_fds(struct dp_inst *in, int ct_fd[BPFIPT_NFAMILIES], int *conf_fd)
{
	for (int f = 0; f < BPFIPT_NFAMILIES; f++) {
		enum lazy z = f ? LZ_CT6 : LZ_CT;
		int r = lazy_get(in, z);

		if (r && r != -ENOENT)
			return r;
		ct_fd[f] = in->lazy_fd[z];
	}
	*conf_fd = in->map[IM_CT_CONF];
	return *conf_fd >= 0 ? 0 : -ENOENT;
}

int dp_inst_log_fd(struct dp_inst *in)
{
	int r = lazy_get(in, LZ_LOG);

	return r ? r : in->lazy_fd[LZ_LOG];
}

int dp_inst_rtlocal_fd(const struct dp_inst *in)
{
	return in->map[IM_RTLOCAL];
}

/* Whether a slot of cc logs (-j LOG, NFLOG): the ruleset needs the LOG ring. */
static bool cc_logs(const struct cp_compiled *cc)
{
	for (__u32 c = 0; c < BPFIPT_NCHAINS; c++)
		for (__u32 k = 0; k < cc->nslots[c]; k++)
			if (cc->slots[c][k].log)
				return true;
	return false;
}

/* The running instance's bpfipt_inst says it comes from these programs. */
static int inst_abi_check(struct dp_inst *in, struct ipt_err *err)
{
	struct bpfipt_inst iv = {};
	__u32 zero = 0;

	if (in->map[IM_INST] < 0)
		return dp_fail(err, -ENOENT, "running data plane: no map %s", im_names[IM_INST]);
	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv))
		return dp_fail(err, -errno, "cannot read bpfipt_inst");
	if (iv.abi != BPFIPT_ABI)
		return dp_fail(err, -EPROTO, "the running data plane comes from another version "
			       "of bpf-iptables (ABI %u, this one %u): remove it first", iv.abi,
			       BPFIPT_ABI);
	in->feat = (iv.flags >> BPFIPT_I_FEAT_SHIFT) & BPFIPT_FEAT_ALL;
	return 0;
}

/* The maps of a running instance, from its programs (prog2: -1 or a second
 * one). */
static int inst_maps_from_prog(struct dp_inst *in, int prog_fd, int prog2, struct ipt_err *err)
{
	__u32 ids[128], n = 0, i;
	int r = 0, j, p;

	for (p = 0; p < 2; p++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = p ? prog2 : prog_fd;

		if (fd < 0)
			continue;
		info.nr_map_ids = 64;
		info.map_ids = (__u64)(unsigned long)(ids + n);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return dp_fail(err, -errno, "cannot read the running program");
		n += info.nr_map_ids < 64 ? info.nr_map_ids : 64;
	}
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]), *slot = NULL;

		if (fd < 0)
			return dp_fail(err, -errno, "cannot open map id %u", ids[i]);
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			return dp_fail(err, -errno, "cannot read map id %u", ids[i]);
		}
		for (j = 0; j < IM_MAX && !slot; j++)
			if (!strcmp(mi.name, im_names[j]))
				slot = &in->map[j];
		for (j = 0; j < OM_MAX && !slot; j++)
			if (!strcmp(mi.name, om_defs[j].outer))
				slot = &in->outer[j];
		if (slot && *slot < 0)
			*slot = fd;
		else
			close(fd);
	}
	/* first the version: another one's maps may have other names */
	if ((r = inst_abi_check(in, err)))
		return r;
	for (j = 0; j < IM_MAX; j++)
		if (in->map[j] < 0)
			return dp_fail(err, -ENOENT, "running data plane: no map %s", im_names[j]);
	for (j = 0; j < OM_MAX; j++)
		if (in->outer[j] < 0)
			return dp_fail(err, -ENOENT, "running data plane: no map %s",
				       om_defs[j].outer);
	return r;
}

/* ------------------------------------------------------ interfaces ---- */

/* IF_PORT: a bridge port, or a bond/team member: its frames are bridged, or
 * become the master's; IP (and iptables without br_netfilter) sees them on the
 * master device, where they are judged. Attaching XDP there would also fail
 * once the master has a program ("an upper device already has a program"). */
enum ifclass { IF_ETH, IF_L3, IF_SKIP, IF_PORT };

struct iface {
	int ifindex;
	char name[IF_NAMESIZE];
	enum ifclass cls;
	bool veth;		/* rtnetlink's kind "veth" */
	bool xdp;		/* dp_load(): the policy wants XDP tried here */
	bool xdp_on;		/* ... and it judges there (in bpfipt_xdpifs) */
	bool tc_found;		/* tc holds our filters as found (iface_tc_find()) */
	struct cp_tc_found tc[2];	/* ... on its ingress and egress */
};

#ifndef ARPHRD_RAWIP
#define ARPHRD_RAWIP 519
#endif
#ifndef ARPHRD_IP6GRE
#define ARPHRD_IP6GRE 823
#endif

static enum ifclass iface_class(unsigned short type)
{
	switch (type) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:	/* lo carries a zeroed Ethernet header */
		return IF_ETH;
	case ARPHRD_NONE:	/* tun, wireguard */
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_SIT:
	case ARPHRD_IPGRE:
	case ARPHRD_IP6GRE:
	case ARPHRD_PPP:
	case ARPHRD_RAWIP:
		return IF_L3;
	default:
		return IF_SKIP;
	}
}

static void detach_iface(const struct dp_inst *in, const struct iface *f);

/* iface_list()'s dump: the links, each one's master and kind (rtnetlink's
 * IFLA_INFO_KIND: "veth", "bridge", ...) */
struct link_dump {
	struct iface *v;
	struct link_more {
		int master;
		char kind[16];
	} *x;
	int n, cap;
	bool oom;
};

static int on_link(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];
	struct link_dump *d = arg;
	struct ifinfomsg *ifi;
	struct iface *f;

	if (h->nlmsg_type != RTM_NEWLINK ||
	    nlmsg_parse(h, sizeof(*ifi), tb, IFLA_MAX, NULL) < 0 || !tb[IFLA_IFNAME])
		return NL_SKIP;
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 16;
		struct iface *v = realloc(d->v, cap * sizeof(*v));
		struct link_more *x = v ? realloc(d->x, cap * sizeof(*x)) : NULL;

		if (v)
			d->v = v;
		if (!x) {
			d->oom = true;
			return NL_STOP;
		}
		d->x = x;
		d->cap = cap;
	}
	ifi = nlmsg_data(h);
	f = memset(&d->v[d->n], 0, sizeof(*f));
	f->ifindex = ifi->ifi_index;
	nla_strlcpy(f->name, tb[IFLA_IFNAME], sizeof(f->name));
	f->cls = iface_class(ifi->ifi_type);
	d->x[d->n].master = tb[IFLA_MASTER] ? (int)nla_get_u32(tb[IFLA_MASTER]) : 0;
	d->x[d->n].kind[0] = 0;
	if (tb[IFLA_LINKINFO] && !nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], NULL) &&
	    li[IFLA_INFO_KIND])
		nla_strlcpy(d->x[d->n].kind, li[IFLA_INFO_KIND], sizeof(d->x[d->n].kind));
	d->n++;
	return NL_OK;
}

/* Members of a bridge, bond or team (their master's kind); the veth devices. */
static void mark_ports(struct iface *v, const struct link_more *x, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		v[i].veth = !strcmp(x[i].kind, "veth");
		for (j = 0; x[i].master && j < n && v[j].ifindex != x[i].master; j++)
			;
		if (!x[i].master || j == n || (strcmp(x[j].kind, "bridge") &&
					      strcmp(x[j].kind, "bond") && strcmp(x[j].kind, "team")))
			continue;
		v[i].cls = IF_PORT;
		dp_log(DP_DEBUG, "%s: a port of %s (%s): judged there", v[i].name, v[j].name,
		       x[j].kind);
	}
}

/* Every interface of the namespace, lo first: one rtnetlink dump, without the
 * links' statistics (a listing is a few hundred microseconds for 100 links;
 * if_nameindex(), an ioctl a link and libnl's link cache took 1.7-2.4 ms). */
static int iface_list(struct iface **out, int *n, struct ipt_err *err)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_sock *sk = nl_socket_alloc();
	struct link_dump d = { 0 };
	struct nl_msg *m = NULL;
	int i, r = -NLE_NOMEM;

	*out = NULL;
	*n = 0;
	/* a dump datagram read whole (the kernel makes them under 32 KiB; a
	 * peek first sizes a larger one) */
	if (sk) {
		nl_socket_enable_msg_peek(sk);
		r = nl_socket_set_msg_buf_size(sk, 32768);
	}
	if (!r && (r = nl_connect(sk, NETLINK_ROUTE)) == 0 &&
	    (r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_link, &d)) == 0) {
		m = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_DUMP);
		r = !m || nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO) ||
		    nla_put_u32(m, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) ? -NLE_NOMEM : 0;
	}
	if (!r && (r = nl_send_auto(sk, m)) >= 0)
		r = nl_recvmsgs_default(sk);
	nlmsg_free(m);
	nl_socket_free(sk);
	if (r < 0 || d.oom) {
		free(d.v);
		free(d.x);
		return dp_fail(err, d.oom ? -ENOMEM : -EIO, "cannot list the interfaces: %s",
			       d.oom ? "out of memory" : nl_geterror(r));
	}
	for (i = 1; i < d.n; i++)
		if (!strcmp(d.v[i].name, "lo")) {
			struct iface t = d.v[0];
			struct link_more u = d.x[0];

			d.v[0] = d.v[i];
			d.v[i] = t;
			d.x[0] = d.x[i];
			d.x[i] = u;
		}
	mark_ports(d.v, d.x, d.n);
	free(d.x);
	if (!d.v)
		d.v = calloc(1, sizeof(*d.v));
	*out = d.v;
	*n = d.n;
	return d.v ? 0 : dp_fail(err, -ENOMEM, "out of memory");
}

/* iface_list() for the command's own steps while an instance is kept
 * (dp_inst_keep()): one listing for dp_running(), dp_inst_open() and
 * dp_load(), each a copy (dp_load() marks its own). On a host of 100 links a
 * listing is about a millisecond (an ioctl a link, libnl's link cache). */
static int iface_list_kept(struct iface **out, int *n, struct ipt_err *err)
{
	int r;

	if (!kept.on)
		return iface_list(out, n, err);
	if (!kept.v && (r = iface_list(&kept.v, &kept.n, err)))
		return r;
	*out = malloc((kept.n ? kept.n : 1) * sizeof(**out));
	if (!*out)
		return dp_fail(err, -ENOMEM, "out of memory");
	memcpy(*out, kept.v, kept.n * sizeof(**out));
	*n = kept.n;
	return 0;
}

/* Our tc filter on a hook: its program id (0 if none) and handle. */
static __u32 tc_ours(int ifindex, enum bpf_tc_attach_point ap, __u32 *handle)
{
	static const __u32 handles[] = { DP_TC_HANDLE_OURS, DP_TC_HANDLE_THEIRS };
	unsigned int i;

	for (i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = ap);
		LIBBPF_OPTS(bpf_tc_opts, o, .handle = handles[i], .priority = DP_TC_PRIO);

		if (!bpf_tc_query(&hook, &o)) {
			*handle = handles[i];
			return o.prog_id;
		}
	}
	return 0;
}

/* Our tc filters on all n interfaces of v, found over one netlink socket, for
 * a loop that looks at each (attach_iface()); the loop's own changes make them
 * stale. Where netlink fails, each is asked for on its own (tc_ours()). */
static void iface_tc_find(struct iface *v, int n)
{
	static const __u32 handles[] = { DP_TC_HANDLE_OURS, DP_TC_HANDLE_THEIRS };
	struct cp_tc_found *t = malloc(2 * (n ? n : 1) * sizeof(*t));
	int *ifx = malloc((n ? n : 1) * sizeof(*ifx));
	int i, r = 1;

	for (i = 0; ifx && i < n; i++)
		ifx[i] = v[i].ifindex;
	if (t && ifx)
		r = cp_tc_find(ifx, n, DP_TC_PRIO, handles, 2, t);
	if (r)
		dp_log(DP_DEBUG, "cannot list the tc filters (%s): asked one by one",
		       r < 0 ? nl_geterror(r) : "out of memory");
	for (i = 0; i < n; i++) {
		v[i].tc_found = !r;
		if (!r)
			memcpy(v[i].tc, &t[2 * i], sizeof(v[i].tc));
	}
	free(ifx);
	free(t);
}

/* tc_ours() of f's hook (0: ingress, 1: egress), as iface_tc_find() found it. */
static __u32 iface_tc(const struct iface *f, int hook, __u32 *handle)
{
	if (!f->tc_found)
		return tc_ours(f->ifindex, hook ? BPF_TC_EGRESS : BPF_TC_INGRESS, handle);
	*handle = f->tc[hook].handle;
	return f->tc[hook].id;
}

/* flags: BPF_TC_F_REPLACE to put fd in place of our filter's program */
static int tc_attach(const struct iface *f, enum bpf_tc_attach_point ap, __u32 handle, int fd,
		     __u32 flags, struct ipt_err *err)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex, .attach_point = ap);
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = fd, .handle = handle, .priority = DP_TC_PRIO,
		    .flags = flags);
	int r = bpf_tc_attach(&hook, &o);

	if (r)
		return dp_fail(err, r, "cannot attach to %s %s", f->name,
			       ap == BPF_TC_INGRESS ? "ingress" : "egress");
	return 0;
}

static void xdp_ids(int ifindex, __u32 *drv, __u32 *skb)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	*drv = *skb = 0;
	if (!bpf_xdp_query(ifindex, 0, &q)) {
		*drv = q.drv_prog_id;
		*skb = q.skb_prog_id;
	}
}

/* Our program on interface f's hook (0: tc ingress, 1: tc egress, 2: XDP): its
 * kind, or -1; its id, and the tc filter's handle or the XDP mode. */
static int attached_kind(const struct iface *f, int hook, __u32 *id, __u32 *how)
{
	__u32 drv, skb;

	if (hook < 2) {
		*id = tc_ours(f->ifindex, hook ? BPF_TC_EGRESS : BPF_TC_INGRESS, how);
		if (!*id)
			return -1;
		if (f->cls == IF_L3)
			return hook ? DP_PROG_TC_OUT3 : DP_PROG_TC_IN3;
		return hook ? DP_PROG_TC_OUT : DP_PROG_TC_IN;
	}
	xdp_ids(f->ifindex, &drv, &skb);
	*id = prog_named(drv, prog_names[DP_PROG_XDP]) ? drv :
	      prog_named(skb, prog_names[DP_PROG_XDP]) ? skb : 0;
	*how = *id == drv ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	return *id ? DP_PROG_XDP : -1;
}

/* The fd of a program of kind p we find attached to some interface, or -1. */
static int find_attached(const struct iface *v, int n, enum dp_prog p)
{
	int hook = p == DP_PROG_XDP ? 2 : p == DP_PROG_TC_OUT || p == DP_PROG_TC_OUT3 ? 1 : 0;
	__u32 id, how;
	int i;

	if (p == DP_PROG_TEST)
		return -1;
	for (i = 0; i < n; i++)
		if (attached_kind(&v[i], hook, &id, &how) == (int)p &&
		    prog_named(id, prog_names[p]))
			return bpf_prog_get_fd_by_id(id);
	return -1;
}

/* Make sure `in` has the programs in `progs`: the ones already attached
 * somewhere, else freshly loaded into its maps. */
static int inst_need(struct dp_inst *in, const struct iface *v, int n, unsigned int progs,
		     struct ipt_err *err)
{
	int i;

	for (i = 0; i < DP_PROG_MAX; i++)
		if ((progs & (1u << i)) && in->prog[i] < 0)
			in->prog[i] = find_attached(v, n, i);
	return inst_load(in, progs, true, err);
}

/* Whether XDP judges interface ifindex (bpfipt_xdpifs, in slot 0 of
 * bpfipt_xdp_slot; made with the first mark: its slot's update waits for a grace
 * period, once in the namespace's life). */
static int xdp_mark(const struct dp_inst *in, int ifindex, bool on)
{
	__u32 k = ifindex, one = 1, zero = 0, id;
	int fd, r = 0;

	if (!bpf_map_lookup_elem(in->map[IM_XDPIFS], &zero, &id)) {
		fd = bpf_map_get_fd_by_id(id);
	} else if (!on) {
		return 0;	/* no map: nothing was marked */
	} else {
		fd = lazy_create(in, LZ_XDPIFS, NULL);
		if (fd >= 0 && bpf_map_update_elem(in->map[IM_XDPIFS], &zero, &fd, BPF_ANY)) {
			r = -errno;
			close(fd);
			return r;
		}
	}
	if (fd < 0)
		return -errno;
	if (on && bpf_map_update_elem(fd, &k, &one, BPF_ANY))
		r = -errno;
	if (!on)
		bpf_map_delete_elem(fd, &k);
	close(fd);
	return r;
}

int dp_inst_xdp_mark(const struct dp_inst *in, int ifindex)
{
	return xdp_mark(in, ifindex, true);
}

/* How attach_iface() puts XDP on a device. */
enum xdp_how {
	XH_NONE,	/* tc judges its ingress */
	XH_NATIVE,	/* native XDP, else tc (DP_INGRESS_AUTO) */
	XH_ANY,		/* native XDP, else generic (DP_INGRESS_XDP) */
	XH_GENERIC,	/* generic XDP (DP_INGRESS_XDP_GENERIC) */
};

/* tc ingress + egress on every IP-capable interface; XDP on the Ethernet ones
 * when asked (f->xdp), f->xdp_on set where it judges. Idempotent: what is
 * already attached stays (an XDP program the policy no longer wants is left to
 * dp_load(), which detaches it after the switch). */
static int attach_iface(const struct dp_inst *in, struct iface *f, enum xdp_how how,
			struct ipt_err *err)
{
	int pin = f->cls == IF_ETH ? DP_PROG_TC_IN : DP_PROG_TC_IN3;
	int pout = f->cls == IF_ETH ? DP_PROG_TC_OUT : DP_PROG_TC_OUT3;
	__u32 hin = 0, hout = 0, handle = 0, id_in, id_out, drv, skb;
	int r;

	if (f->cls == IF_SKIP) {
		dp_log(DP_WARN, "%s: neither an Ethernet nor an IP device: not filtered", f->name);
		return 0;
	}
	if (f->cls == IF_PORT) {
		/* it became a port since it was attached: judged on its master now */
		detach_iface(in, f);
		return 0;
	}
	id_in = iface_tc(f, 0, &hin);
	id_out = iface_tc(f, 1, &hout);
	handle = id_in ? hin : id_out ? hout : 0;
	if (!handle) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);

		r = bpf_tc_hook_create(&hook);
		if (r && r != -EEXIST)
			return dp_fail(err, r, "cannot add a clsact qdisc to %s", f->name);
		/* the handle remembers whether the qdisc is ours to delete */
		handle = r ? DP_TC_HANDLE_THEIRS : DP_TC_HANDLE_OURS;
	}
	if (!id_in && (r = tc_attach(f, BPF_TC_INGRESS, handle, in->prog[pin], 0, err)))
		return r;
	if (!id_out && (r = tc_attach(f, BPF_TC_EGRESS, handle, in->prog[pout], 0, err)))
		return r;
	if (how == XH_NONE || !f->xdp || f->cls != IF_ETH)
		return 0;
	xdp_ids(f->ifindex, &drv, &skb);
	if (prog_named(drv, prog_names[DP_PROG_XDP]) ||
	    (how != XH_NATIVE && prog_named(skb, prog_names[DP_PROG_XDP]))) {
		f->xdp_on = true;
		return xdp_mark(in, f->ifindex, true);
	}
	if (drv || (skb && !prog_named(skb, prog_names[DP_PROG_XDP]))) {
		dp_log(DP_WARN, "%s: another XDP program is attached: ingress judged at tc",
		       f->name);
		return 0;
	}
	if (skb)	/* ours, generic, where only native is wanted: tc judges */
		return 0;
	r = -EOPNOTSUPP;
	if (how != XH_GENERIC)
		r = bpf_xdp_attach(f->ifindex, in->prog[DP_PROG_XDP],
				   XDP_FLAGS_UPDATE_IF_NOEXIST | XDP_FLAGS_DRV_MODE, NULL);
	if (r && how == XH_NATIVE) {
		dp_log(DP_DEBUG, "%s: no native XDP (%s): ingress judged at tc", f->name,
		       strerror(-r));
		return 0;
	}
	if (r)
		r = bpf_xdp_attach(f->ifindex, in->prog[DP_PROG_XDP],
				   XDP_FLAGS_UPDATE_IF_NOEXIST | XDP_FLAGS_SKB_MODE, NULL);
	if (r)
		return dp_fail(err, r, "cannot attach XDP to %s", f->name);
	dp_log(DP_DEBUG, "%s: XDP attached", f->name);
	f->xdp_on = true;
	return xdp_mark(in, f->ifindex, true);
}

/* DP_INGRESS_AUTO: XDP where the driver runs it natively on received frames.
 * Not on veth: its XDP copies every skb the peer sends into a page of its own
 * and gives up GSO (a TCP stream through a veth with XDP attached moved 2-3
 * Gbit/s against 13-19 with tc on this machine; docs/performance.md), and not
 * on lo or drivers without native XDP, where only generic XDP would run (after
 * the skb is built: tc's place, at a higher cost). A kernel that cannot say
 * (before 6.3) gets a try at native XDP on every other Ethernet device. */
static bool xdp_auto_wanted(const struct iface *f)
{
	__u64 feat;
	int r;

	if (f->cls != IF_ETH || f->veth || !strcmp(f->name, "lo"))
		return false;
	r = cp_xdp_features(f->ifindex, &feat);
	return r ? r == -EOPNOTSUPP : (feat & CP_XDP_ACT_BASIC) != 0;
}

static void detach_xdp(const struct dp_inst *in, const struct iface *f)
{
	static const __u32 modes[2] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };
	__u32 ids[2];
	int i;

	if (in)
		xdp_mark(in, f->ifindex, false);
	xdp_ids(f->ifindex, &ids[0], &ids[1]);
	for (i = 0; i < 2; i++) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o);

		if (!prog_named(ids[i], prog_names[DP_PROG_XDP]))
			continue;
		o.old_prog_fd = bpf_prog_get_fd_by_id(ids[i]);
		if (o.old_prog_fd < 0)
			continue;
		if (bpf_xdp_detach(f->ifindex, modes[i], &o))
			dp_log(DP_WARN, "%s: cannot detach XDP", f->name);
		close(o.old_prog_fd);
	}
}

static void detach_iface(const struct dp_inst *in, const struct iface *f)
{
	static const enum bpf_tc_attach_point aps[2] = { BPF_TC_INGRESS, BPF_TC_EGRESS };
	bool ours = false;
	__u32 h;
	int i;

	detach_xdp(in, f);
	for (i = 0; i < 2; i++) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex, .attach_point = aps[i]);
		LIBBPF_OPTS(bpf_tc_opts, o, .priority = DP_TC_PRIO);

		if (!tc_ours(f->ifindex, aps[i], &h))
			continue;
		o.handle = h;
		if (bpf_tc_detach(&hook, &o))
			dp_log(DP_WARN, "%s: cannot detach the tc program", f->name);
		ours |= h == DP_TC_HANDLE_OURS;
	}
	if (ours) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);

		bpf_tc_hook_destroy(&hook);
	}
}

/* ------------------------------------------------------- features ---- */

/* Chain c of cf has a packet that only the walk judges (BPFIPT_FEAT_WALK):
 * classify()'s fast paths, in its order, leave one to it. Not a chain without
 * a rule (its policy judges), nor one whose group slot 0 judges a hit (FAST_HIT)
 * and a miss (FAST_MISS, or a slot prefix after it that reaches the policy),
 * nor one whose slot prefix from slot 0 reaches the policy. */
static bool chain_walks(const struct bpfipt_conf *cf, unsigned int c)
{
	__u32 fast = cf->fast[c];
	bool pfx_whole = BPFIPT_FAST_PFX_N(fast) && (fast & BPFIPT_FAST_PFX_END);

	if (!cf->policy[c])
		return false;
	if (fast & (BPFIPT_FAST_TUPLE | BPFIPT_FAST_HIT | BPFIPT_FAST_MISS))
		return !(fast & BPFIPT_FAST_HIT) || !(fast & BPFIPT_FAST_MISS || pfx_whole);
	return !pfx_whole;
}

/* What a generation of family fam (0 IPv4, 1 IPv6) needs of the programs
 * (BPFIPT_FEAT_*, bpfipt.h). IPv6 walks a packet whose headers it cannot read
 * to the end (pkt's cut: no ports, no fast path). */
static __u32 conf_feat(const struct bpfipt_conf *cf, unsigned int fam)
{
	bool walk = fam != 0;
	unsigned int c;
	__u32 feat;

	for (c = 0; c < BPFIPT_NCHAINS && !walk; c++)
		walk = chain_walks(cf, c);
	feat = (cf->flags & BPFIPT_C_CT ? BPFIPT_FEAT_CT : 0) |
	       (cf->flags & BPFIPT_C_RECENT ? BPFIPT_FEAT_RECENT : 0) |
	       (cf->flags & BPFIPT_C_WINDOWS ? BPFIPT_FEAT_WINDOWS : 0) |
	       (cf->nrows ? BPFIPT_FEAT_ROWS : 0) |
	       (cf->flags & BPFIPT_C_LOG ? BPFIPT_FEAT_LOG : 0) |
	       (cf->flags & BPFIPT_C_REJECT ? BPFIPT_FEAT_REJECT : 0) |
	       (cf->flags & (BPFIPT_C_ONE_PAGE | BPFIPT_C_WINDOWS) ? 0 : BPFIPT_FEAT_PAGES) |
	       (cf->flags & BPFIPT_C_SLOTS_FIXED ? 0 : BPFIPT_FEAT_SLOTPOOL) |
	       (cf->policy[BPFIPT_OUTPUT] ? BPFIPT_FEAT_OUTPUT : 0) |
	       (cf->policy[BPFIPT_FORWARD] ? BPFIPT_FEAT_FORWARD : 0) |
	       (fam ? BPFIPT_FEAT_IP6 : 0);
	/* the walk's own parts (its pool's kinds, its rows): only with it */
	return walk ? feat | BPFIPT_FEAT_WALK
		    : feat & ~(BPFIPT_FEAT_WINDOWS | BPFIPT_FEAT_PAGES | BPFIPT_FEAT_ROWS);
}

/* fd in place of XDP program id on f, in one step (mode: its XDP_FLAGS_*_MODE). */
static int xdp_replace(const struct iface *f, __u32 id, __u32 mode, int fd, struct ipt_err *err)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = bpf_prog_get_fd_by_id(id));
	int r;

	if (o.old_prog_fd < 0)
		return dp_fail(err, -errno, "%s: cannot open the XDP program", f->name);
	r = bpf_xdp_attach(f->ifindex, fd, XDP_FLAGS_REPLACE | mode, &o);
	close(o.old_prog_fd);
	return r ? dp_fail(err, r, "cannot replace XDP on %s", f->name) : 0;
}

/* Put in's program of each kind in place of ours on every interface: tc's
 * filter and XDP are each replaced in one step (a packet runs the old program
 * or the new one, both of which judge the running generation). */
static int replace_all(const struct dp_inst *in, const struct iface *v, int n,
		       struct ipt_err *err)
{
	__u32 id, how;
	int i, hook, k, r = 0;

	for (i = 0; i < n && !r; i++)
		for (hook = 0; hook < 3 && !r; hook++) {
			k = attached_kind(&v[i], hook, &id, &how);
			if (k < 0)
				continue;
			cp_crash_point("replace");
			r = k == DP_PROG_XDP ? xdp_replace(&v[i], id, how, in->prog[k], err) :
			    tc_attach(&v[i], hook ? BPF_TC_EGRESS : BPF_TC_INGRESS, how,
				      in->prog[k], BPF_TC_F_REPLACE, err);
		}
	return r;
}

/* Programs with what a generation needs (want, conf_feat()): the programs of
 * `in` that lack some of it are loaded again with it, and a running instance's
 * replace its attached ones on every interface (v) before the switch, which
 * writes the new features to bpfipt_inst (inst_switch()). A fresh instance
 * whose programs are not loaded yet gets exactly what it needs. The features
 * only grow: a namespace that once needed conntrack keeps the code. */
static int inst_feat(struct dp_inst *in, const struct iface *v, int n, __u32 want, bool fresh,
		     struct ipt_err *err)
{
	unsigned int progs = 0;
	__u32 id, how;
	int i, hook, k, r;

	for (i = 0; i < DP_PROG_MAX; i++)
		if (in->prog[i] >= 0)
			progs |= 1u << i;
	if (fresh && !progs) {
		in->feat = want;
		return 0;
	}
	if (!(want & ~in->feat))
		return 0;
	dp_log(DP_DEBUG, "programs of features 0x%x loaded again with 0x%x", in->feat,
	       in->feat | want);
	in->feat |= want;
	for (i = 0; i < DP_PROG_MAX; i++)
		fd_close(&in->prog[i]);
	if (fresh)		/* nothing attached yet: inst_need() loads them */
		return 0;
	for (i = 0; i < n; i++)
		for (hook = 0; hook < 3; hook++)
			if ((k = attached_kind(&v[i], hook, &id, &how)) >= 0)
				progs |= 1u << k;
	r = inst_load(in, progs, true, err);
	return r ? r : replace_all(in, v, n, err);
}

/* The features (BPFIPT_FEAT_*) program fd was loaded with: bpfipt_feat in its
 * .rodata, at the offset the map's BTF gives the variable; -1 if unknown. */
int dp_prog_feat(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], i, zero = 0;
	int feat = -1;

	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	for (i = 0; i < info.nr_map_ids && i < 64 && feat < 0; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi), k;
		int mfd = bpf_map_get_fd_by_id(ids[i]);
		const struct btf_var_secinfo *vs;
		const struct btf_type *t;
		struct btf *b = NULL;
		__s32 sec;
		char *val = NULL;

		if (mfd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen) || !mi.btf_id ||
		    strlen(mi.name) < 7 || strcmp(mi.name + strlen(mi.name) - 7, ".rodata") ||
		    !(b = btf__load_from_kernel_by_id(mi.btf_id)) ||
		    (sec = btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC)) < 0 ||
		    !(val = malloc(mi.value_size)) || bpf_map_lookup_elem(mfd, &zero, val))
			goto next;
		t = btf__type_by_id(b, sec);
		vs = btf_var_secinfos(t);
		for (k = 0; k < btf_vlen(t); k++, vs++)
			if (!strcmp(btf__name_by_offset(b, btf__type_by_id(b, vs->type)->name_off),
				    "bpfipt_feat") && vs->offset + sizeof(__u32) <= mi.value_size)
				feat = (int)*(__u32 *)(val + vs->offset);
next:
		free(val);
		btf__free(b);
		close(mfd);
	}
	return feat;
}

/* The features both acc (-1: none known yet) and program id (0: none) have. */
static int feat_and(int acc, __u32 id)
{
	int fd = id ? bpf_prog_get_fd_by_id(id) : -1, f;

	if (fd < 0)
		return acc;
	f = dp_prog_feat(fd);
	close(fd);
	return f < 0 ? acc : acc < 0 ? f : (acc & f);
}

/* ------------------------------------------------------- discovery ---- */

int dp_inst_open(struct dp_inst **out, struct ipt_err *err)
{
	struct iface *v = NULL;
	struct dp_inst *in = NULL;
	__u32 h, id = 0;
	int n, i, r, fd = -1, kind = DP_PROG_TC_OUT;

	dp_log_init();
	*out = NULL;
	if (kept.in) {
		kept.in->refs++;
		*out = kept.in;
		return 0;
	}
	r = iface_list_kept(&v, &n, err);
	if (r)
		return r;
	/* lo first: the common case is one netlink query */
	for (i = 0; i < n && !id; i++) {
		id = tc_ours(v[i].ifindex, BPF_TC_EGRESS, &h);
		kind = v[i].cls == IF_L3 ? DP_PROG_TC_OUT3 : DP_PROG_TC_OUT;
	}
	if (!id)
		goto out;
	in = inst_alloc();
	if (!in) {
		r = dp_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		r = dp_fail(err, -errno, "cannot open the running program");
		goto out;
	}
	in->prog[kind] = fd;
	/* the maps: the union of what the egress and ingress programs use */
	id = tc_ours(v[i - 1].ifindex, BPF_TC_INGRESS, &h);
	fd = id ? bpf_prog_get_fd_by_id(id) : -1;
	if (fd >= 0)
		in->prog[kind == DP_PROG_TC_OUT ? DP_PROG_TC_IN : DP_PROG_TC_IN3] = fd;
	r = inst_maps_from_prog(in, in->prog[kind], fd, err);
	if (r)
		goto out;
	dp_log(DP_DEBUG, "found the running instance (program id %u)", id);
	if (kept.on) {
		in->refs++;
		kept.in = in;
	}
	*out = in;
	in = NULL;
out:
	dp_inst_free(&in);
	free(v);
	return r;
}

int dp_describe(struct strbuf *sb)
{
	static const char *const cls[] = { [IF_ETH] = "ethernet", [IF_L3] = "ip",
					   [IF_SKIP] = "not filtered",
					   [IF_PORT] = "port of a bridge/bond, judged there" };
	static const char *const parts[] = { "conntrack", "recent", "windows", "rows", "log",
					     "reject", "pages", "slots in pages", "output",
					     "forward", "ipv6", "walk" };
	struct iface *v = NULL;
	__u32 h, drv, skb;
	int n, i, k, on = 0;

	_Static_assert(BPFIPT_FEAT_ALL == (1 << 12) - 1, "parts names every feature");
	dp_log_init();
	if (iface_list(&v, &n, NULL))
		return -1;
	iface_tc_find(v, n);
	for (i = 0; i < n; i++) {
		__u32 in = iface_tc(&v[i], 0, &h);
		__u32 out = iface_tc(&v[i], 1, &h);
		const char *x = "", *sep = " ";
		int feat = feat_and(feat_and(-1, in), out);

		xdp_ids(v[i].ifindex, &drv, &skb);
		if (prog_named(drv, prog_names[DP_PROG_XDP])) {
			x = ", XDP native";
			feat = feat_and(feat, drv);
		} else if (prog_named(skb, prog_names[DP_PROG_XDP])) {
			x = ", XDP generic";
			feat = feat_and(feat, skb);
		} else if (drv || skb) {
			x = ", another XDP program (ingress at tc)";
		}
		sb_addf(sb, "  %-15s %s: %s%s", v[i].name,
			v[i].cls < sizeof(cls) / sizeof(cls[0]) && cls[v[i].cls] ? cls[v[i].cls] : "?",
			in && out ? "tc ingress+egress" : in ? "tc ingress" : out ? "tc egress" :
			"not attached", x);
		/* the parts of the code loaded (BPFIPT_FEAT_*): what the rulesets used */
		if (feat >= 0) {
			sb_adds(sb, "; parts:");
			for (k = 0; k < (int)(sizeof(parts) / sizeof(parts[0])); k++)
				if (feat & (1 << k)) {
					sb_addf(sb, "%s%s", sep, parts[k]);
					sep = ", ";
				}
			if (!feat)
				sb_adds(sb, " none");
		}
		sb_addc(sb, '\n');
		on += in || out;
	}
	free(v);
	return on;
}

int dp_links(struct cp_link **out, unsigned int *n)
{
	struct iface *v = NULL;
	int cnt, i;

	dp_log_init();
	*out = NULL;
	*n = 0;
	if (iface_list_kept(&v, &cnt, NULL))
		return -1;
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	for (i = 0; *out && i < cnt; i++) {
		(*out)[i].ifindex = v[i].ifindex;
		snprintf((*out)[i].name, sizeof((*out)[i].name), "%s", v[i].name);
	}
	free(v);
	if (!*out)
		return -1;
	*n = cnt;
	return 0;
}

bool dp_running(void)
{
	struct iface *v = NULL;
	__u32 h = 0;
	bool r = false;
	int n, i;

	dp_log_init();
	if (iface_list_kept(&v, &n, NULL))
		return false;
	for (i = 0; i < n && !r; i++)
		r = tc_ours(v[i].ifindex, BPF_TC_EGRESS, &h) != 0;
	free(v);
	return r;
}

/* A namespace's first install loads its programs while the command reads the
 * state, parses and compiles, and builds its first generation while they are
 * verified: dp_prepare_begin() starts a thread where no instance runs, which
 * creates the maps (inst_create_maps()), hands them over (early_inst_maps(),
 * for inst_create()) and loads the programs into them (early_inst_join()). The
 * verifier is most of that command; nothing is attached or pinned here, so a
 * command that fails first leaves nothing (its fds close with it). */
static struct {
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool maps_done;		/* under mu: `in` holds the maps, or is NULL */
	struct dp_inst *in;
	__u32 feat;		/* its programs' (dp_prepare_begin()) */
} early_inst = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void early_inst_maps_done(struct dp_inst *in)
{
	pthread_mutex_lock(&early_inst.mu);
	early_inst.in = in;
	early_inst.maps_done = true;
	pthread_cond_broadcast(&early_inst.cv);
	pthread_mutex_unlock(&early_inst.mu);
}

static void *early_inst_run(void *arg)
{
	unsigned int progs = 1u << DP_PROG_TC_IN | 1u << DP_PROG_TC_OUT;
	struct iface *v = NULL;
	struct dp_inst *in = NULL;
	bool running = false;
	__u32 h;
	int n, i;

	(void)arg;
	/* where an instance runs, lo has it (ifindex 1 in every namespace): the
	 * common case asks once and lists nothing */
	if (tc_ours(1, BPF_TC_EGRESS, &h)) {
		early_inst_maps_done(NULL);
		return NULL;
	}
	if (iface_list(&v, &n, NULL)) {
		early_inst_maps_done(NULL);
		return NULL;
	}
	/* no filter on lo: the other links' found in one search (a first install) */
	iface_tc_find(v, n);
	for (i = 0; i < n && !running; i++) {
		running = iface_tc(&v[i], 1, &h) != 0;
		if (v[i].cls == IF_L3)
			progs |= 1u << DP_PROG_TC_IN3 | 1u << DP_PROG_TC_OUT3;
	}
	free(v);
	if (!running && (in = inst_alloc())) {
		in->feat = early_inst.feat & BPFIPT_FEAT_ALL;
		if (inst_create_maps(in, NULL))
			dp_inst_free(&in);
	}
	early_inst_maps_done(in);
	/* a failure is the install's to report: inst_need() loads again what
	 * is missing (and, DP_FEAT_LATER, what its generation needs) */
	if (in && !(early_inst.feat & DP_FEAT_LATER))
		inst_load(in, progs, true, NULL);
	return NULL;
}

/* Wait for the early load: the programs are in the instance early_inst_maps()
 * returned, or are not (inst_need() loads them). An instance not taken is
 * dropped. */
static void early_inst_join(void)
{
	if (!early_inst.started)
		return;
	pthread_join(early_inst.th, NULL);
	early_inst.started = false;
	early_inst.maps_done = false;
	dp_inst_free(&early_inst.in);
}

/* The maps dp_prepare_begin() made, for the first install (NULL: none, or no
 * early load); its programs are still loading until early_inst_join(). */
static struct dp_inst *early_inst_maps(void)
{
	struct dp_inst *in;

	if (!early_inst.started)
		return NULL;
	pthread_mutex_lock(&early_inst.mu);
	while (!early_inst.maps_done)
		pthread_cond_wait(&early_inst.cv, &early_inst.mu);
	in = early_inst.in;
	early_inst.in = NULL;
	pthread_mutex_unlock(&early_inst.mu);
	if (!in)
		early_inst_join();
	return in;
}

/* What the pool of a ruleset of L lines may need. Up to GUESS_ONE_CHUNK lines it
 * holds one chunk of slots at most (4096: a rule is one slot at most, a chain
 * adds its policy or return slot), never windowed, and no summary rows below
 * eight chunks. A flat pool takes more than POOL_FLAT_MAX (windowed) with many
 * user chains (each has vectors of its own), or with some 11 000 rules no group
 * takes (bench/rules.py's mixed rulesets are tuple groups, runs of lines alike
 * that do not count: lines_alike());
 * more than a page (BPFIPT_FEAT_PAGES) from some 2 700 rules no group takes, but
 * guessed from GUESS_WIN_LINES only: a ruleset of 10 000 rules of tuple groups
 * has a pool of a page, and its first install would verify the search of pages
 * for nothing (a wrong guess loads the programs again, as for windows). */
#define GUESS_ONE_CHUNK		3500
#define GUESS_WIN_CHAINS	256
#define GUESS_WIN_LINES		11000
#define GUESS_ROWS_LINES	28000
/* more slots than BPFIPT_SLOTS_FIXED: in the pool (BPFIPT_FEAT_SLOTPOOL); a
 * chain's policy and the empty slots before it (cp_compiled.npad) are slots too */
#define GUESS_SLOTPOOL_LINES	(BPFIPT_SLOTS_FIXED - 256)
/* A run of lines alike but for addresses and ports this long is one slot
 * (a tuple group: CP_TUPLE_MIN_DEFAULT), and does not count. */
#define GUESS_TUPLE_RUN		CP_TUPLE_MIN_DEFAULT
/* Lines looked at, at most: a run's lines cost ~0.15 us each to compare, 1M
 * of them 0.15 s of a restore's critical path */
#define GUESS_SCAN_LINES	(128 * 1024)
/* The walk (BPFIPT_FEAT_WALK), half of what the verifier checks of a first
 * install's bpfipt_tc_in: up to GUESS_PFX_LINES lines but lists and runs of
 * CP_TUPLE_MIN_TOP lines alike (a deny list, fail2ban's, a host's few rules),
 * the slot prefix most often takes every chain whole, and the programs are
 * loaded early without it (a wrong guess loads them again, ~0.1 s); past
 * GUESS_WALK_LINES (a prefix holds 63 rules), early with it; between, a compile
 * of a few hundred rules is quick, and the programs are loaded once it has
 * said which (DP_FEAT_LATER). */
#define GUESS_PFX_LINES		16
#define GUESS_WALK_LINES	256

/* The first occurrence of w in [from, end), NULL if none. */
static const char *text_find(const char *from, const char *end, const char *w)
{
	const char *p = from;
	size_t n = strlen(w);

	while ((size_t)(end - p) >= n && (p = memchr(p, w[0], (size_t)(end - p) - n + 1))) {
		if (!memcmp(p, w, n))
			return p;
		p++;
	}
	return NULL;
}

static bool text_has(const char *t, size_t len, const char *w)
{
	return text_find(t, t + len, w) != NULL;
}

/* A line of [t, t + len) names chain c, other than a restore's declaration of
 * the chain (":OUTPUT ACCEPT [0:0]") or a comment: a rule there (or its
 * policy, -P, taken for one). */
static bool names_chain(const char *t, size_t len, const char *c)
{
	const char *p = t, *ls;

	while ((p = text_find(p, t + len, c))) {
		for (ls = p; ls > t && ls[-1] != '\n'; ls--)
			;
		while (ls < p && (*ls == ' ' || *ls == '\t'))
			ls++;
		if (*ls != ':' && *ls != '#')
			return true;
		p++;
	}
	return false;
}

/* The next word of [*p, end) (spaces and a CR skipped): its start, *n its length
 * (0 at the end). */
static const char *next_word(const char **p, const char *end, size_t *n)
{
	const char *w = *p;

	while (w < end && (*w == ' ' || *w == '\r'))
		w++;
	for (*n = 0; w + *n < end && w[*n] != ' ' && w[*n] != '\r'; (*n)++)
		;
	*p = w + *n;
	return w;
}

/* A line of a deny list, "-A CHAIN -s ADDR -j TARGET" (or -d), [p, end): a run
 * of them folds into one set whatever its length, so it does not count towards
 * the pool's size (a 1M-entry list loaded every part: +0.1 s of the restore). */
static bool list_line(const char *p, const char *end)
{
	static const char *const want[] = { "-A", NULL, "-s|-d", NULL, "-j", NULL };
	const char *w;
	size_t n, i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		w = next_word(&p, end, &n);
		if (!n || (want[i] && !(n == 2 && (!memcmp(w, want[i], 2) ||
						   (want[i][2] == '|' && !memcmp(w, want[i] + 3, 2))))))
			return false;
	}
	next_word(&p, end, &n);
	return !n;
}

/* Whether word w (n bytes) is an option whose value lines_alike() lets differ:
 * 1 an address's, 2 a port's; else 0. */
static int value_opt(const char *w, size_t n)
{
#define OPT(s, kind)	{ s, sizeof(s) - 1, kind }
	static const struct {
		const char *s;
		size_t n;
		int kind;	/* 1: an address follows, 2: a port */
	} opts[] = {
		OPT("-s", 1), OPT("-d", 1), OPT("--dport", 2), OPT("--sport", 2),
		OPT("--source", 1), OPT("--destination", 1), OPT("--src", 1), OPT("--dst", 1),
		OPT("--destination-port", 2), OPT("--source-port", 2),
	};
#undef OPT
	size_t i;

	if (w[0] != '-')
		return 0;
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (opts[i].n == n && !memcmp(w, opts[i].s, n))
			return opts[i].kind;
	return 0;
}

/* Lines [a, ae) and [b, be) alike but for the values of their addresses and
 * exact ports (an address's prefix length kept): a run of them makes one tuple
 * group (controlplane/compile.c, tuple_run()) or one set, whatever its length. */
static bool lines_alike(const char *a, const char *ae, const char *b, const char *be)
{
	int val = 0;	/* 1: the word is an address, 2: a port */
	size_t na, nb, i;

	for (;;) {
		const char *wa = next_word(&a, ae, &na), *wb = next_word(&b, be, &nb);
		const char *sa, *sb;

		if (!na || !nb)
			return !na && !nb;
		if (val == 1) {		/* the prefix lengths, if any, equal */
			sa = memchr(wa, '/', na);
			sb = memchr(wb, '/', nb);
			if (!sa != !sb || (sa && (wa + na - sa != wb + nb - sb ||
						  memcmp(sa, sb, (size_t)(wa + na - sa)))))
				return false;
		} else if (val == 2) {	/* exact ports: digits (a range is no key) */
			for (i = 0; i < na; i++)
				if (wa[i] < '0' || wa[i] > '9')
					return false;
			for (i = 0; i < nb; i++)
				if (wb[i] < '0' || wb[i] > '9')
					return false;
		} else if (na != nb || memcmp(wa, wb, na)) {
			return false;
		}
		val = value_opt(wa, na);
	}
}

unsigned int dp_feat_guess(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *prev = NULL, *prev_end = NULL;
	size_t lines = 0, chains = 0, run = 0, scanned = 0, plain = 0;
	unsigned int feat = 0;

	if (!text)
		return BPFIPT_FEAT_ALL;
	/* -m state, -m conntrack (--ctstate); -m recent */
	if (text_has(text, len, "state") || text_has(text, len, "conntrack"))
		feat |= BPFIPT_FEAT_CT;
	if (text_has(text, len, "recent"))
		feat |= BPFIPT_FEAT_RECENT;
	/* -j LOG, -j NFLOG; -j REJECT */
	if (text_has(text, len, "LOG"))
		feat |= BPFIPT_FEAT_LOG;
	if (text_has(text, len, "REJECT"))
		feat |= BPFIPT_FEAT_REJECT;
	/* a rule in OUTPUT, in FORWARD (a host firewall's restore often has
	 * none) */
	if (names_chain(text, len, "OUTPUT"))
		feat |= BPFIPT_FEAT_OUTPUT;
	if (names_chain(text, len, "FORWARD"))
		feat |= BPFIPT_FEAT_FORWARD;
	/* bpf-ip6tables */
	if (ipt_af == AF_INET6)
		feat |= BPFIPT_FEAT_IP6;
	/* the lines but a deny list's and runs of GUESS_TUPLE_RUN lines alike (each
	 * one slot), and the chains a restore declares (":NAME POLICY [p:b]"); plain,
	 * the lines but a deny list's and runs of CP_TUPLE_MIN_TOP (the slot
	 * prefix's groups) */
	while (lines - run <= GUESS_ROWS_LINES && scanned++ < GUESS_SCAN_LINES && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		bool list;

		if (!nl)
			break;
		chains += *p == ':';
		list = list_line(p, nl);
		if (list || !prev || !lines_alike(prev, prev_end, p, nl)) {
			if (run >= GUESS_TUPLE_RUN)
				lines -= run;
			if (run >= CP_TUPLE_MIN_TOP)
				plain -= run;
			run = 0;
		}
		if (!list) {
			run++;
			lines++;
			plain++;
		}
		prev = list ? NULL : p;
		prev_end = nl;
		p = nl + 1;
	}
	if (run >= GUESS_TUPLE_RUN)	/* (a run still going is taken to go on) */
		lines -= run;
	if (run >= CP_TUPLE_MIN_TOP)
		plain -= run;
	if (lines > GUESS_ONE_CHUNK && (chains > GUESS_WIN_CHAINS || lines > GUESS_WIN_LINES))
		feat |= BPFIPT_FEAT_WINDOWS;
	if (lines > GUESS_WIN_LINES)
		feat |= BPFIPT_FEAT_PAGES;
	if (lines > GUESS_SLOTPOOL_LINES)
		feat |= BPFIPT_FEAT_SLOTPOOL;
	if (lines > GUESS_ROWS_LINES)
		feat |= BPFIPT_FEAT_ROWS;
	if (feat & (BPFIPT_FEAT_WINDOWS | BPFIPT_FEAT_PAGES | BPFIPT_FEAT_SLOTPOOL |
		    BPFIPT_FEAT_ROWS | BPFIPT_FEAT_IP6) || plain > GUESS_WALK_LINES)
		feat |= BPFIPT_FEAT_WALK;	/* IPv6 walks what it cannot read */
	else if (plain > GUESS_PFX_LINES)
		feat |= DP_FEAT_LATER;
	return feat;
}

void dp_prepare_begin(unsigned int feat)
{
	early_inst_join();	/* a long-lived caller's last */
	dp_log_init();
	early_inst.feat = feat & (BPFIPT_FEAT_ALL | DP_FEAT_LATER);
	early_inst.started = !pthread_create(&early_inst.th, NULL, early_inst_run, NULL);
}

/* ------------------------------------------------------ generations ---- */

struct outer_set {
	int outer, inner, rc;
	__u32 slot;
	/* n > 0: inners[i] into keys[i], i < n, in one batch (one grace period) */
	const __u32 *keys;
	const int *inners;
	__u32 n;
};

static void *outer_set_run(void *arg)
{
	struct outer_set *o = arg;
	__u32 n = o->n;
	int r = n ? bpf_map_update_batch(o->outer, o->keys, o->inners, &n, NULL) :
		o->inner < 0 ? bpf_map_delete_elem(o->outer, &o->slot) :
			       bpf_map_update_elem(o->outer, &o->slot, &o->inner, BPF_ANY);

	o->rc = r ? -errno : 0;
	return NULL;
}

/* o run in a thread of its own (true: *th to join), or here when none can be
 * made */
static bool outer_set_start(struct outer_set *o, pthread_t *th)
{
	if (!pthread_create(th, NULL, outer_set_run, o))
		return true;
	outer_set_run(o);
	return false;
}

struct gen {
	int fd[OM_MAX];
	bool fresh[OM_MAX];		/* a new map: the outer map must get it */
	/* fresh maps put into their outer maps while the generation is written
	 * (gen_outer_begin()): os[m] begun (osent), in a thread (othr) */
	struct outer_set os[OM_MAX];
	pthread_t oth[OM_MAX];
	bool osent[OM_MAX], othr[OM_MAX];
	size_t cap[OM_MAX];		/* a fresh map's entries */
	/* twins (gen_twins()): an empty map of the same size for each fresh
	 * one, put into slot `twin` (-1: none) in a thread of its own */
	int twin;
	struct outer_set ts[OM_MAX];
	pthread_t tth[OM_MAX];
	bool tsent[OM_MAX], tthr[OM_MAX];
	struct bpfipt_conf conf;
	struct bpfipt_counter *cnt;	/* the counters map, mmapped */
	size_t cnt_len;
	/* the pool's pages (pages_get()): npg of them; the fresh ones' keys and
	 * maps (npgnew), put into bpfipt_pages in one batch (pgs), in a thread */
	int *pg, *pgnew;
	__u32 *pgkey, npgnew;
	size_t npg;
	struct outer_set pgs;
	pthread_t pgth;
	bool pgsent, pgthr;
	/* ... and the twin slot's pages made for them (gen_twins()) */
	int *tpg;
	__u32 *tpgkey;
	struct outer_set tpgs;
	pthread_t tpgth;
	bool tpgsent, tpgthr;
};

static size_t page_round(size_t n)
{
	size_t ps = sysconf(_SC_PAGESIZE);

	return (n + ps - 1) / ps * ps;
}

/* An array map's values from byte off (a multiple of the page size) on. */
static void *map_mmap_at(int fd, size_t off, size_t bytes, bool write, struct ipt_err *err)
{
	void *p = mmap(NULL, page_round(bytes ? bytes : 1), PROT_READ | (write ? PROT_WRITE : 0),
		       MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED) {
		dp_fail(err, -errno, "cannot map %zu bytes of a BPF map", bytes);
		return NULL;
	}
	return p;
}

static void *map_mmap(int fd, size_t bytes, bool write, struct ipt_err *err)
{
	return map_mmap_at(fd, 0, bytes, write, err);
}

static int inner_create(const struct dp_inst *in, enum om m, size_t entries,
			struct ipt_err *err);
static int page_create(void);
static size_t pages_held(const struct dp_inst *in, __u32 slot, size_t from);
static __u32 page_key(__u32 slot, size_t i);

/* The twin slot's pages up to g's, made and put there in one batch, in a
 * thread (gen_twins()). */
static void pages_twin(const struct dp_inst *in, struct gen *g)
{
	__u32 n = 0;
	size_t i;
	int fd;

	g->tpgsent = true;
	if (!g->npg || !(g->tpg = malloc(g->npg * sizeof(int))) ||
	    !(g->tpgkey = malloc(g->npg * sizeof(__u32))))
		return;
	for (i = pages_held(in, (__u32)g->twin, 0); i < g->npg && (fd = page_create()) >= 0; i++) {
		g->tpgkey[n] = page_key((__u32)g->twin, i);
		g->tpg[n++] = fd;
	}
	g->tpgs = (struct outer_set){ .outer = in->map[IM_PAGES], .keys = g->tpgkey,
				      .inners = g->tpg, .n = n };
	if (n)
		g->tpgthr = outer_set_start(&g->tpgs, &g->tpgth);
}

/*
 * A family's first install (its running generation judges nothing, nwords 0,
 * so no packet reads that generation's maps): each fresh map of g gets an
 * empty twin of its size in the other generation's slot, g->twin, put there in
 * a thread like the map itself (gen_outer_begin()), while the verifier takes
 * the programs. The next command finds its spare's maps made and rewrites them
 * in place, instead of making them and waiting for the kernel's grace period
 * after each outer-map update: the second command in a namespace took 25-60 ms
 * where the ones after it take 5. Only while the fresh maps hold no more than
 * in->spare_keep bytes: a larger spare is not kept between commands
 * (spare_drop()). A slot that has a map keeps it; a twin not made is made by
 * the next command, as before.
 */
static void gen_twins(const struct dp_inst *in, struct gen *g)
{
	struct ipt_err e = { 0 };
	size_t total = 0;
	__u32 id;
	int m;

	for (m = 0; m < OM_MAX; m++)
		if (g->fresh[m])
			total += g->cap[m] * (om_defs[m].value_size +
					      (om_defs[m].type == BPF_MAP_TYPE_ARRAY ? 0 :
					       om_defs[m].key_size));
	total += g->npgnew * PAGE_BYTES;
	if (total > in->spare_keep)
		g->twin = -1;	/* the next command drops its spare anyway */
	if (g->twin >= 0 && g->npgnew && !g->tpgsent)
		pages_twin(in, g);
	for (m = 0; g->twin >= 0 && m < OM_MAX; m++) {
		__u32 slot = (__u32)g->twin;
		int fd;

		if (!g->fresh[m] || g->tsent[m])
			continue;
		g->tsent[m] = true;
		g->ts[m].inner = -1;
		if (!bpf_map_lookup_elem(in->outer[m], &slot, &id) ||
		    (fd = inner_create(in, m, g->cap[m], &e)) < 0)
			continue;
		g->ts[m] = (struct outer_set){ .outer = in->outer[m], .inner = fd, .slot = slot };
		g->tthr[m] = outer_set_start(&g->ts[m], &g->tth[m]);
	}
}

/* The fresh maps of g so far into slot `slot` of their outer maps, each in a
 * thread (outer_run_all()): the kernel's grace period after each update passes
 * while the generation is written, not after it (the 1M deny list's new maps:
 * 19-24 ms). Slot `slot` is the spare generation's, which no packet uses. */
static void gen_outer_begin(const struct dp_inst *in, __u32 slot, struct gen *g)
{
	for (int m = 0; m < OM_MAX; m++) {
		if (!g->fresh[m] || g->osent[m])
			continue;
		g->os[m] = (struct outer_set){ .outer = in->outer[m], .inner = g->fd[m],
					       .slot = slot };
		g->osent[m] = true;
		g->othr[m] = outer_set_start(&g->os[m], &g->oth[m]);
	}
	if (g->npgnew && !g->pgsent) {
		g->pgs = (struct outer_set){ .outer = in->map[IM_PAGES], .keys = g->pgkey,
					     .inners = g->pgnew, .n = g->npgnew };
		g->pgsent = true;
		g->pgthr = outer_set_start(&g->pgs, &g->pgth);
	}
	gen_twins(in, g);
}

static void gen_outer_join(struct gen *g)
{
	if (g->pgthr) {
		pthread_join(g->pgth, NULL);
		g->pgthr = false;
	}
	if (g->tpgthr) {
		pthread_join(g->tpgth, NULL);
		g->tpgthr = false;
	}
	for (__u32 i = 0; g->tpg && i < g->tpgs.n; i++)
		fd_close(&g->tpg[i]);	/* its outer map holds it, or it goes */
	for (int m = 0; m < OM_MAX; m++) {
		if (g->othr[m]) {
			pthread_join(g->oth[m], NULL);
			g->othr[m] = false;
		}
		if (g->tthr[m]) {
			pthread_join(g->tth[m], NULL);
			g->tthr[m] = false;
		}
		if (g->tsent[m] && g->ts[m].inner >= 0) {
			if (g->ts[m].rc)
				dp_log(DP_DEBUG, "generation %u: no twin %s: %s", g->twin,
				       om_defs[m].inner, strerror(-g->ts[m].rc));
			fd_close(&g->ts[m].inner);	/* its outer map holds it */
		}
	}
}

static void gen_release(struct gen *g)
{
	int i;

	gen_outer_join(g);
	for (i = 0; i < OM_MAX; i++)
		fd_close(&g->fd[i]);
	for (size_t k = 0; g->pg && k < g->npg; k++)
		fd_close(&g->pg[k]);
	free(g->pg);
	free(g->pgnew);
	free(g->pgkey);
	free(g->tpg);
	free(g->tpgkey);
	g->pg = g->pgnew = g->tpg = NULL;
	g->pgkey = g->tpgkey = NULL;
	g->npg = g->npgnew = 0;
	if (g->cnt)
		munmap(g->cnt, page_round(g->cnt_len));
	g->cnt = NULL;
}

static int inner_create(const struct dp_inst *in, enum om m, size_t entries, struct ipt_err *err)
{
	const struct om_def *d = &om_defs[m];
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = d->flags);
	int fd;

	if (entries > 0xffffffffu / 2 || entries * d->value_size > (1ull << 40))
		return dp_fail(err, -E2BIG, "map %s: %zu entries", d->inner, entries);
	fd = bpf_map_create(d->type, d->inner, d->key_size, d->value_size, entries, &o);
	if (fd < 0)
		return dp_fail(err, -errno, "cannot create map %s (%zu entries of %u bytes)",
			       d->inner, entries, d->value_size);
	return fd;
}

/* Delete n keys of ksz bytes from hash fd: in one batch where the kernel has
 * it, else one by one. One by one, the 1 000 entries of a tuple group that an
 * -I 1 broke up cost that command 11-28 ms more (the kernel frees each entry
 * of a BPF_F_NO_PREALLOC hash on its own); in one batch, nothing to see. */
static int delete_many(int fd, const char *keys, __u32 n, size_t ksz)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	__u32 i, cnt = n;

	if (!n || !bpf_map_delete_batch(fd, keys, &cnt, &bo))
		return 0;
	for (i = cnt < n ? cnt : 0; i < n; i++)
		if (bpf_map_delete_elem(fd, keys + i * ksz) && errno != ENOENT)
			return -1;
	return 0;
}

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* the kernel's own, which bpf(2) can return */
#endif

/* Delete every key of a hash in batches that read and delete
 * (BPF_MAP_LOOKUP_AND_DELETE_BATCH): 0, 1 when the kernel has no such batch
 * for the map, or -errno. */
static int map_clear_batch(int fd, size_t ksz, size_t vsz)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	const __u32 cap = 1024;
	char *keys = malloc(cap * ksz), *vals = malloc(cap * vsz);
	__u32 token, cnt;
	bool first = true;
	int r;

	for (r = keys && vals ? 0 : -ENOMEM; !r; first = false) {
		cnt = cap;
		if (!bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys, vals,
						     &cnt, &bo))
			continue;
		r = errno == ENOENT ? 2 : first && (errno == EINVAL || errno == ENOTSUPP ||
						    errno == EOPNOTSUPP) ? 1 : -errno;
	}
	free(keys);
	free(vals);
	return r == 2 ? 0 : r;
}

/* Delete every key of a (small) trie or hash: a hash in batches (a map of
 * 600 interface entries took 600 syscalls to list), else key by key. */
static int map_clear(int fd, size_t ksz, size_t vsz)
{
	size_t n = 0, cap = 64;
	char *keys;
	int r = map_clear_batch(fd, ksz, vsz);

	if (r <= 0)
		return r;
	keys = malloc(cap * ksz);
	r = 0;
	if (!keys)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			char *k = realloc(keys, 2 * cap * ksz);

			if (!k) {
				free(keys);
				return -ENOMEM;
			}
			keys = k;
			cap *= 2;
		}
		if (bpf_map_get_next_key(fd, n ? keys + (n - 1) * ksz : NULL, keys + n * ksz))
			break;
		n++;
	}
	if (delete_many(fd, keys, n, ksz))
		r = -errno;
	free(keys);
	return r;
}

/* Map m of generation `slot`, for `need` entries: the one already there when it
 * is big enough (a trie or hash also small enough to empty quickly: old_n
 * entries), emptied; else a new one with room to grow. Replacing a map costs a
 * grace period (the outer map update); rewriting one costs nothing. */
static int inner_get(const struct dp_inst *in, enum om m, __u32 slot, size_t need, __u32 old_n,
		     struct gen *g, struct ipt_err *err)
{
	const struct om_def *d = &om_defs[m];
	bool keyed = d->type != BPF_MAP_TYPE_ARRAY;
	size_t cap;
	__u32 id;
	int fd;

	if (!need)
		need = 1;
	if (!bpf_map_lookup_elem(in->outer[m], &slot, &id) && (fd = bpf_map_get_fd_by_id(id)) >= 0) {
		struct bpf_map_info mi = {};
		__u32 ml = sizeof(mi);

		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && mi.max_entries >= need &&
		    (!keyed || (old_n <= 4096 && !map_clear(fd, d->key_size, d->value_size)))) {
			g->fd[m] = fd;
			return 0;
		}
		close(fd);
	}
	cap = d->fixed ? d->fixed : keyed ? (need < 512 ? 1024 : 2 * need) : need + need / 4 + 15;
	g->fd[m] = inner_create(in, m, cap, err);
	if (g->fd[m] < 0)
		return g->fd[m];
	g->fresh[m] = true;
	g->cap[m] = cap;
	dp_log(DP_DEBUG, "generation %u: a new %s of %zu entries (%zu needed)", slot, d->inner,
	       cap, need);
	return 0;
}

/* Many updates at once; element by element where batches are not supported. */
static int update_many(int fd, const void *keys, const void *vals, __u32 n, size_t ksz,
		       size_t vsz)
{
	__u32 i, count = n;

	if (!n || !bpf_map_update_batch(fd, keys, vals, &count, NULL))
		return 0;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * ksz,
					(const char *)vals + i * vsz, BPF_ANY))
			return -errno;
	return 0;
}

/* The address sets of a generation (bpfipt.h, "Address sets"): the source and
 * destination set of every chain that looks the field up, then one per group. */
struct sets {
	bool v6;			/* IPv6: iv6, else iv */
	struct cp_ival *iv;		/* [c * 2 + d], then [6 + group] */
	struct cp_ival6 *iv6;
	size_t *at;			/* a small set: its window's first entry (page * 256 +
					 * offset); a large one: its first page */
	__u32 *gdesc;			/* group id -> descriptor */
	size_t n, npages;
};

static void sets_free(struct sets *s)
{
	size_t i;

	for (i = 0; s->iv && i < s->n; i++)
		cp_ival_free(&s->iv[i]);
	for (i = 0; s->iv6 && i < s->n; i++)
		cp_ival_free6(&s->iv6[i]);
	free(s->iv);
	free(s->iv6);
	free(s->at);
	free(s->gdesc);
	memset(s, 0, sizeof(*s));
}

/* Set i: made (its field is looked up, or a group), its intervals and values,
 * its window (0: whole pages) and pages. */
static bool set_made(const struct sets *s, size_t i)
{
	return s->v6 ? s->iv6[i].start != NULL : s->iv[i].start != NULL;
}

static size_t set_n(const struct sets *s, size_t i)
{
	return s->v6 ? s->iv6[i].n : s->iv[i].n;
}

static __u32 *set_vals(const struct sets *s, size_t i)
{
	return s->v6 ? s->iv6[i].val : s->iv[i].val;
}

static size_t set_window(const struct sets *s, size_t i)
{
	return s->v6 ? cp_ival_window6(&s->iv6[i]) : cp_ival_window(&s->iv[i]);
}

static size_t set_pages(const struct sets *s, size_t i)
{
	return s->v6 ? cp_ival_pages6(&s->iv6[i]) : cp_ival_pages(&s->iv[i]);
}

static const struct sets *win_base;

/* small sets by window, largest first */
static int win_cmp(const void *a, const void *b)
{
	size_t x = set_window(win_base, *(const size_t *)a);
	size_t y = set_window(win_base, *(const size_t *)b);

	return x > y ? -1 : x < y;
}

/* The entries of l with key k (l is sorted by key): [*b, *e). */
static void lpm_slice(const struct cp_lpm *l, __u32 k, size_t *b, size_t *e)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((l->e ? l->e[mid].key : l->e6[mid].key) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	*b = lo;
	while (lo < l->n && (l->e ? l->e[lo].key : l->e6[lo].key) == k)
		lo++;
	*e = lo;
}

/* Group g's prefixes: entries b .. e - 1 of the list returned (a group is a -s
 * run or a -d run: its entries are in one of the two). */
static const struct cp_lpm *group_slice(const struct cp_compiled *cc, __u32 g, size_t *b,
					size_t *e)
{
	lpm_slice(&cc->group_src, g, b, e);
	if (*b != *e)
		return &cc->group_src;
	lpm_slice(&cc->group_dst, g, b, e);
	return &cc->group_dst;
}

/* ------------------------------------------------------------ counters ---- */

/* The shared counters of cc (bpfipt.h, struct bpfipt_counter): the id ranges of
 * its largest groups, at most BPFIPT_SHARED_RANGES of at least BPFIPT_SHARED_MIN
 * ids, sorted; nper and ncounters follow. */
static void cnt_layout(const struct cp_compiled *cc, struct bpfipt_conf *cf)
{
	const struct cp_lpm *ls[2] = { &cc->group_src, &cc->group_dst };
	__u32 (*rg)[2], nsh = 0, i, j, l;

	cf->ncounters = cc->ncounters;
	cf->nper = cc->ncounters;
	cf->nshared = 0;
	if (!cc->ngroups)
		return;
	rg = calloc(cc->ngroups, sizeof(*rg));	/* per group: first id, last id + 1 */
	if (!rg)
		return;			/* every counter per-CPU: correct, only larger */
	for (l = 0; l < 2; l++)
		for (i = 0; i < ls[l]->n; i++) {
			__u32 k = cc->family == AF_INET6 ? ls[l]->e6[i].key : ls[l]->e[i].key;
			__u32 v = cc->family == AF_INET6 ? ls[l]->e6[i].value : ls[l]->e[i].value;

			if (k >= cc->ngroups || v >= cc->ncounters)
				continue;
			if (rg[k][1] == 0 || v < rg[k][0])
				rg[k][0] = v;
			if (v + 1 > rg[k][1])
				rg[k][1] = v + 1;
		}
	/* the largest ranges: insertion into a short list sorted by size */
	for (i = 0; i < cc->ngroups; i++) {
		__u32 n = rg[i][1] - rg[i][0];

		if (rg[i][1] == 0 || n < BPFIPT_SHARED_MIN)
			continue;
		for (j = nsh; j > 0 && cf->shared[j - 1].n < n; j--)
			if (j < BPFIPT_SHARED_RANGES)
				cf->shared[j] = cf->shared[j - 1];
		if (j < BPFIPT_SHARED_RANGES) {
			cf->shared[j].lo = rg[i][0];
			cf->shared[j].n = n;
			if (nsh < BPFIPT_SHARED_RANGES)
				nsh++;
		}
	}
	free(rg);
	/* by id; groups are runs of distinct rules, so the ranges never overlap */
	for (i = 1; i < nsh; i++)
		for (j = i; j > 0 && cf->shared[j - 1].lo > cf->shared[j].lo; j--) {
			__typeof__(cf->shared[0]) t = cf->shared[j];

			cf->shared[j] = cf->shared[j - 1];
			cf->shared[j - 1] = t;
		}
	cf->nshared = nsh;
	for (i = 0; i < nsh; i++)
		cf->nper -= cf->shared[i].n;
}

/* The physical index of counter id (BPFIPT_NO_COUNTER stays). */
static __u32 cnt_phys(const struct bpfipt_conf *cf, __u32 id)
{
	__u32 below = 0, r;

	if (id == BPFIPT_NO_COUNTER)
		return id;
	for (r = 0; r < cf->nshared && r < BPFIPT_SHARED_RANGES; r++) {
		if (id < cf->shared[r].lo)
			break;
		if (id - cf->shared[r].lo < cf->shared[r].n)
			return cf->nper + below + (id - cf->shared[r].lo);
		below += cf->shared[r].n;
	}
	return id - below;
}

/* Entries of the counters map: the per-CPU rows, the carried row, the shared. */
static size_t cnt_entries(const struct bpfipt_conf *cf)
{
	size_t n = (size_t)(cf->ncpus + 1) * cf->nper + (cf->ncounters - cf->nper);

	return n ? n : 1;
}

/* Entry of the counters map where physical counter P takes carried values (the
 * carried row, or the shared counter itself). */
static size_t cnt_carry_at(const struct bpfipt_conf *cf, __u32 P)
{
	return (size_t)cf->ncpus * cf->nper + P;
}

/* After the counters, the origins (loader only): for each counter id i of the
 * generation, the id in the generation before whose count it continues
 * (BPFIPT_NO_COUNTER: none), four to an entry; what that one counts after the
 * carry is added by the next install (gen_fold()). */
static __u32 *cnt_origins(const struct bpfipt_conf *cf, struct bpfipt_counter *p)
{
	return (__u32 *)(p + cnt_entries(cf));
}

static size_t cnt_map_entries(const struct bpfipt_conf *cf)
{
	return cnt_entries(cf) + (cf->ncounters + 3) / 4;
}

/* The map that holds a generation's counters (bpfipt.h): the fixed-size one
 * when they fit in it (BPFIPT_C_CNT_FIXED, set by gen_conf()) */
static enum om cnt_om_of(bool fixed)
{
	return fixed ? OM_CNTFX : OM_COUNTERS;
}

static enum om cnt_om(const struct bpfipt_conf *cf)
{
	return cnt_om_of(cf->flags & BPFIPT_C_CNT_FIXED);
}

/* Flatten every set and place it: the large ones in pages of their own, then the
 * small ones in windows of shared pages (largest first, so each window is aligned
 * to its size and no window straddles two pages). Pages: cf->npages. */
static int sets_flatten(const struct cp_compiled *cc, struct bpfipt_conf *cf, struct sets *s,
			struct ipt_err *err)
{
	size_t i, b, e, np, nsmall = 0, pos, *small;
	__u32 c, d;

	memset(s, 0, sizeof(*s));
	s->v6 = cc->family == AF_INET6;
	s->n = 2 * BPFIPT_NCHAINS + cc->ngroups;
	if (s->v6)
		s->iv6 = calloc(s->n, sizeof(*s->iv6));
	else
		s->iv = calloc(s->n, sizeof(*s->iv));
	s->at = calloc(s->n, sizeof(*s->at));
	s->gdesc = calloc(cc->ngroups ? cc->ngroups : 1, sizeof(*s->gdesc));
	small = calloc(s->n, sizeof(*small));
	if ((!s->iv && !s->iv6) || !s->at || !s->gdesc || !small)
		goto nomem;
	for (i = 0; i < s->n; i++) {
		const struct cp_lpm *l;

		if (i < 2 * BPFIPT_NCHAINS) {
			c = i / 2;
			d = i % 2;
			if (!(cf->lookup[c] & (1u << (d ? BPFIPT_F_DST : BPFIPT_F_SRC))))
				continue;
			l = d ? &cc->dst : &cc->src;
			lpm_slice(l, c, &b, &e);
		} else {
			l = group_slice(cc, (__u32)(i - 2 * BPFIPT_NCHAINS), &b, &e);
		}
		if (s->v6 ? cp_ival_flatten6(l->e6 + b, e - b, &s->iv6[i])
			  : cp_ival_flatten(l->e + b, e - b, &s->iv[i]))
			goto nomem;
		if (i >= 2 * BPFIPT_NCHAINS && cf->nshared) {	/* a group's counters */
			__u32 *val = set_vals(s, i);

			for (size_t v = 0; v < set_n(s, i); v++)
				if (val[v] != BPFIPT_IVAL_NONE)
					val[v] = cnt_phys(cf, val[v]);
		}
		if (set_window(s, i)) {
			small[nsmall++] = i;
			continue;
		}
		np = set_pages(s, i);
		if (!np) {
			size_t n = set_n(s, i);

			free(small);
			sets_free(s);
			return dp_fail(err, -E2BIG, "address set %zu: %zu intervals", i, n);
		}
		s->at[i] = s->npages;
		s->npages += np;
	}
	win_base = s;
	qsort(small, nsmall, sizeof(*small), win_cmp);
	pos = s->npages * BPFIPT_IVAL_FANOUT;
	for (i = 0; i < nsmall; i++) {
		s->at[small[i]] = pos;
		pos += set_window(s, small[i]);
	}
	s->npages = (pos + BPFIPT_IVAL_FANOUT - 1) / BPFIPT_IVAL_FANOUT;
	free(small);
	if (s->npages > BPFIPT_IVAL_PAGE_MASK) {
		sets_free(s);
		return dp_fail(err, -E2BIG, "address sets: %zu pages", s->npages);
	}
	cf->npages = s->npages;
	return 0;
nomem:
	free(small);
	sets_free(s);
	return dp_fail(err, -ENOMEM, "out of memory");
}

/* ------------------------------------------------- the pool's pages ---- */

/* The pool is in pages (bpfipt.h, BPFIPT_PAGE_CHUNKS): page i of generation
 * `slot` at slot * BPFIPT_PAGES_MAX + i of bpfipt_pages, pages 0 .. n - 1 held,
 * no more (pages_drop()). */

static __u32 page_key(__u32 slot, size_t i)
{
	return slot * BPFIPT_PAGES_MAX + (__u32)i;
}

static size_t pool_pages(size_t npool)
{
	return (npool + BPFIPT_PAGE_CHUNKS - 1) / BPFIPT_PAGE_CHUNKS;
}

/* The pages generation `slot` holds: the first key from `from` on without one
 * (the pages below `from` known to be there). */
static size_t pages_held(const struct dp_inst *in, __u32 slot, size_t from)
{
	size_t n = from;
	__u32 k, id;

	while (n < BPFIPT_PAGES_MAX &&
	       (k = page_key(slot, n), !bpf_map_lookup_elem(in->map[IM_PAGES], &k, &id)))
		n++;
	return n;
}

/* A page of a pool: an inner map of bpfipt_pages (an fd, or -1). */
static int page_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "g_page", 4, POOL_CHUNK_BYTES,
			      BPFIPT_PAGE_CHUNKS, &o);
}

/* The n pages of generation `slot`'s pool into g->pg: those it holds, rewritten
 * in place, and new ones (g->pgnew) that gen_outer_begin() puts into
 * bpfipt_pages, all at once. */
static int pages_get(const struct dp_inst *in, __u32 slot, size_t n, struct gen *g,
		     struct ipt_err *err)
{
	__u32 k, id;
	size_t i;
	int fd;

	if (n > BPFIPT_PAGES_MAX)
		return dp_fail(err, -E2BIG, "a pool of %zu pages (at most %u)", n,
			       BPFIPT_PAGES_MAX);
	g->pg = malloc((n ? n : 1) * sizeof(int));
	g->pgnew = malloc((n ? n : 1) * sizeof(int));
	g->pgkey = malloc((n ? n : 1) * sizeof(__u32));
	if (!g->pg || !g->pgnew || !g->pgkey)
		return dp_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		g->pg[i] = -1;
	g->npg = n;
	for (i = 0; i < n; i++) {
		k = page_key(slot, i);
		if (!bpf_map_lookup_elem(in->map[IM_PAGES], &k, &id) &&
		    (fd = bpf_map_get_fd_by_id(id)) >= 0) {
			g->pg[i] = fd;
			continue;
		}
		fd = page_create();
		if (fd < 0)
			return dp_fail(err, -errno, "cannot create a page of the pool (%zu bytes)",
				       PAGE_BYTES);
		g->pg[i] = fd;
		g->pgkey[g->npgnew] = k;
		g->pgnew[g->npgnew++] = fd;
	}
	if (g->npgnew)
		dp_log(DP_DEBUG, "generation %u: %u new pages of the pool (%zu in all)", slot,
		       g->npgnew, n);
	return 0;
}

/* Pages from .. held - 1 of generation `slot` out of bpfipt_pages, the last
 * first; true when all went. A map of maps has no batch delete and the kernel
 * waits a grace period after each one: a thread each, up to 64 at a time, so
 * that the waits overlap. */
static bool pages_drop(const struct dp_inst *in, __u32 slot, size_t from, size_t held)
{
	enum { AT_ONCE = 64 };
	struct outer_set o[AT_ONCE];
	pthread_t th[AT_ONCE];
	bool started[AT_ONCE], all = true;
	size_t n, j;

	while (held > from) {
		n = held - from < AT_ONCE ? held - from : AT_ONCE;
		held -= n;
		for (j = 0; j < n; j++) {
			o[j] = (struct outer_set){ .outer = in->map[IM_PAGES], .inner = -1,
						   .slot = page_key(slot, held + j) };
			started[j] = outer_set_start(&o[j], &th[j]);
		}
		for (j = 0; j < n; j++) {
			if (started[j])
				pthread_join(th[j], NULL);
			if (o[j].rc)
				dp_log(DP_DEBUG, "generation %u: page %zu kept: %s", slot,
				       held + j, strerror(-o[j].rc));
			all &= !o[j].rc;
		}
	}
	return all;
}

/* The pool's pages mapped side by side, one pool of g->npg pages to write
 * (*len bytes to unmap after). */
static __u64 *pool_mmap(const struct gen *g, size_t *len, struct ipt_err *err)
{
	size_t ps = sysconf(_SC_PAGESIZE);
	char *base;

	*len = g->npg * PAGE_BYTES;
	if (PAGE_BYTES % ps) {
		dp_fail(err, -EINVAL, "the pool's pages (%zu bytes) are not whole pages of %zu",
			PAGE_BYTES, ps);
		return NULL;
	}
	base = mmap(NULL, *len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		dp_fail(err, -errno, "cannot reserve %zu bytes for the pool", *len);
		return NULL;
	}
	for (size_t i = 0; i < g->npg; i++)
		if (mmap(base + i * PAGE_BYTES, PAGE_BYTES, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, g->pg[i], 0) == MAP_FAILED) {
			dp_fail(err, -errno, "cannot map page %zu of the pool", i);
			munmap(base, *len);
			return NULL;
		}
	return (__u64 *)base;
}

/* Slot gi of a generation in the memory its slots are written to, base: the
 * array of one size (BPFIPT_C_SLOTS_FIXED), else the pool's pages side by side
 * (pool_mmap()), BPFIPT_POOL_SLOTS slots an entry from entry cf->sbase on, as
 * slot_at() in bpfipt.bpf.c reads them. */
static struct bpfipt_slot *slot_dst(void *base, const struct bpfipt_conf *cf, size_t gi)
{
	if (cf->flags & BPFIPT_C_SLOTS_FIXED)
		return (struct bpfipt_slot *)base + gi;
	return (struct bpfipt_slot *)((char *)base + ((size_t)cf->sbase + gi / BPFIPT_POOL_SLOTS) *
				      POOL_CHUNK_BYTES) + gi % BPFIPT_POOL_SLOTS;
}

/* The map of a family's address sets: of one size (BPFIPT_C_IVAL_FIXED), or of
 * their own. */
static enum om ival_om_of(bool fixed, bool v6)
{
	if (fixed)
		return v6 ? OM_IVAL6FX : OM_IVALFX;
	return v6 ? OM_IVAL6 : OM_IVAL;
}

static enum om ival_om(const struct bpfipt_conf *cf, bool v6)
{
	return ival_om_of(cf->flags & BPFIPT_C_IVAL_FIXED, v6);
}

/* Slot `slot` (the spare, which no packet reads) keeps only the maps of a pair
 * (sized, one size) that its new generation cf reads: the other, left by an
 * earlier generation, goes, so that a slot holds what its generation uses and
 * no more (the 16 384 slots' array after the ruleset grew past it and its
 * slots went to the pool, say; a large generation's counters two switches
 * after it); and the pool's pages past its npg. */
static void slot_pairs_drop(const struct dp_inst *in, __u32 slot, const struct bpfipt_conf *cf,
			    bool v6, size_t npg)
{
	enum om unused[] = {
		ival_om_of(!(cf->flags & BPFIPT_C_IVAL_FIXED), v6),
		cnt_om_of(!(cf->flags & BPFIPT_C_CNT_FIXED)),
		OM_SLOTSFX,	/* without BPFIPT_C_SLOTS_FIXED: the slots are in the pool */
	};
	size_t n = sizeof(unused) / sizeof(unused[0]) - !!(cf->flags & BPFIPT_C_SLOTS_FIXED);
	__u32 id;

	for (size_t i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(in->outer[unused[i]], &slot, &id) &&
		    bpf_map_delete_elem(in->outer[unused[i]], &slot))
			dp_log(DP_DEBUG, "generation %u: %s kept: %s", slot,
			       om_defs[unused[i]].inner, strerror(errno));
	pages_drop(in, slot, npg, pages_held(in, slot, npg));	/* past the pool's */
}

/* Write the sets' pages (mmapped map fd); their descriptors into cf and s->gdesc. */
static int sets_write(int fd, struct sets *s, struct bpfipt_conf *cf, struct ipt_err *err)
{
	size_t psz = s->v6 ? sizeof(struct bpfipt_ival6_page) : sizeof(struct bpfipt_ival_page);
	size_t bytes = (s->npages ? s->npages : 1) * psz, i;
	void *pages = map_mmap(fd, bytes, true, err);
	__u32 desc, pg;
	size_t off;

	if (!pages)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		if (!set_made(s, i))
			continue;
		pg = (__u32)(s->at[i] / BPFIPT_IVAL_FANOUT);
		off = s->at[i] % BPFIPT_IVAL_FANOUT;
		if (s->v6)
			desc = set_window(s, i) ? cp_ival_build_window6(&s->iv6[i], pages, pg, off)
						: cp_ival_build6(&s->iv6[i], pages, (__u32)s->at[i]);
		else
			desc = set_window(s, i) ? cp_ival_build_window(&s->iv[i], pages, pg, off)
						: cp_ival_build(&s->iv[i], pages, (__u32)s->at[i]);
		if (i < 2 * BPFIPT_NCHAINS)
			cf->addr_set[i / 2][i % 2] = desc;
		else
			s->gdesc[i - 2 * BPFIPT_NCHAINS] = desc;
	}
	munmap(pages, page_round(bytes));
	return 0;
}

static int fill_ifs(int fd, const struct cp_if_field *in_, const struct cp_if_field *out,
		    struct ipt_err *err)
{
	size_t n = in_->n + out->n, i;
	struct bpfipt_if_key *keys = calloc(n ? n : 1, sizeof(*keys));
	__u32 *vals = calloc(n ? n : 1, sizeof(*vals));
	int r;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return dp_fail(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct cp_if_entry *e = i < in_->n ? &in_->e[i] : &out->e[i - in_->n];

		keys[i].chain = e->chain | (i < in_->n ? 0 : BPFIPT_KEY_OIF);
		keys[i].ifindex = e->ifindex;
		vals[i] = e->vec;
	}
	r = update_many(fd, keys, vals, n, sizeof(*keys), sizeof(*vals));
	free(keys);
	free(vals);
	return r ? dp_fail(err, r, "cannot fill the interface map") : 0;
}

/* Does a field give every packet of chain c the same vector (*vid)? */
static int lpm_const(const struct cp_lpm *l, __u32 c, __u32 nvecs, bool *cst, __u32 *vid,
		     __u32 full, bool *hasf, const char *what, struct ipt_err *err)
{
	bool any = false, dflt = false, same = true;
	__u32 v = 0;
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		__u32 key = l->e6 ? l->e6[i].key : l->e[i].key;
		__u32 val = l->e6 ? l->e6[i].value : l->e[i].value;
		__u32 plen = l->e6 ? l->e6[i].plen : l->e[i].plen;

		if (key >= BPFIPT_NCHAINS || val >= nvecs || plen > (l->e6 ? 128u : 32u))
			return dp_fail(err, -EINVAL, "%s trie: bad entry %u", what, i);
		if (key != c)
			continue;
		*hasf |= val == full;
		if (any && val != v)
			same = false;
		v = val;
		any = true;
		dflt |= plen == 0;
	}
	if (any && !dflt)
		return dp_fail(err, -EINVAL, "%s trie of chain %u has no 0.0.0.0/0 entry", what, c);
	*cst = !any || same;
	*vid = any ? v : BPFIPT_NO_VEC;		/* no entry at all: unconstrained */
	return 0;
}

static const struct {
	const char *name;
	unsigned int keys, base;
} fa_def[] = {
	{ "proto", BPFIPT_KEYS_PROTO, BPFIPT_FB_PROTO },
	{ "sport", BPFIPT_CLASS_KEYS, BPFIPT_FB_SPORT },
	{ "dport", BPFIPT_CLASS_KEYS, BPFIPT_FB_DPORT },
	{ "tcpflags", BPFIPT_KEYS_TCPFLAGS, BPFIPT_FB_TCPFLAGS },
	{ "icmp", BPFIPT_CLASS_KEYS, BPFIPT_FB_ICMP },
	{ "frag", BPFIPT_KEYS_FRAG, BPFIPT_FB_FRAG },
	{ "len", BPFIPT_KEYS_LEN, BPFIPT_FB_LEN },
	{ "ctstate", BPFIPT_KEYS_CTSTATE, BPFIPT_FB_CTSTATE },
};
static const int fa_field[] = { BPFIPT_F_PROTO, BPFIPT_F_SPORT, BPFIPT_F_DPORT,
				BPFIPT_F_TCPFLAGS, BPFIPT_F_ICMP, BPFIPT_F_FRAG, BPFIPT_F_LEN,
				BPFIPT_F_CTSTATE };
#define NFA ((int)(sizeof(fa_def) / sizeof(fa_def[0])))

static const struct cp_array_field *fa_of(const struct cp_compiled *cc, int i)
{
	const struct cp_array_field *t[] = { &cc->proto, &cc->sport, &cc->dport, &cc->tcpflags,
					     &cc->icmp, &cc->frag, &cc->len, &cc->ctstate };
	return t[i];
}

static int array_const(const struct cp_compiled *cc, int i, __u32 c, bool *cst, __u32 *vid,
		       __u32 full, bool *hasf, struct ipt_err *err)
{
	const struct cp_array_field *a = fa_of(cc, i);
	const struct cp_key_run *r = a->run[c];
	unsigned int k;

	if (!r || !a->nrun[c] || r[0].start || a->nkeys != fa_def[i].keys)
		return dp_fail(err, -EINVAL, "field %s: %u keys per chain, expected %u",
			       fa_def[i].name, a->nkeys, fa_def[i].keys);
	*cst = a->nrun[c] == 1;
	*vid = r[0].vid;
	for (k = 0; k < a->nrun[c]; k++) {
		if (r[k].vid >= cc->nvecs || (k && r[k].start <= r[k - 1].start) ||
		    r[k].start >= a->nkeys)
			return dp_fail(err, -EINVAL, "field %s: bad vector id", fa_def[i].name);
		*hasf |= r[k].vid == full;
	}
	return 0;
}

static int if_const(const struct cp_if_field *f, __u32 c, __u32 nvecs, bool *cst, __u32 *vid,
		    __u32 full, bool *hasf, struct ipt_err *err)
{
	unsigned int i;

	if (f->dflt[c] >= nvecs)
		return dp_fail(err, -EINVAL, "interface field: bad default vector");
	*cst = true;
	*vid = f->dflt[c];
	*hasf |= f->dflt[c] == full;
	for (i = 0; i < f->n; i++) {
		if (f->e[i].vec >= nvecs || f->e[i].chain >= BPFIPT_NCHAINS)
			return dp_fail(err, -EINVAL, "interface field: bad entry");
		if (f->e[i].chain != c)
			continue;
		*hasf |= f->e[i].vec == full;
		if (f->e[i].vec != f->dflt[c])
			*cst = false;
	}
	return 0;
}

/* Array field i's rows of the chains whose rows[c] has the field's bit
 * (conf_fields_read()) into bpfipt_fields (fd): only their pages mapped, not
 * the whole 3 MiB map nor the other fields' rows between two used ones (a
 * page each to set up and tear down). */
static int fa_write(int fd, const struct cp_compiled *cc, int i, const __u32 *rows,
		    struct ipt_err *err)
{
	const struct cp_array_field *a = fa_of(cc, i);
	size_t lo = SIZE_MAX, hi = 0, bytes;
	__u32 *m;

	for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++)
		if (rows[c] & (1u << fa_field[i])) {
			size_t w = fa_def[i].base + (size_t)c * fa_def[i].keys;

			lo = w < lo ? w : lo;
			hi = w + fa_def[i].keys;
		}
	if (!hi)
		return 0;
	lo -= lo % (page_round(1) / 4);	/* from its page's first word */
	bytes = (hi - lo) * 4;
	m = map_mmap_at(fd, lo * 4, bytes, true, err);
	if (!m)
		return -ENOMEM;
	for (unsigned int c = 0; c < BPFIPT_NCHAINS; c++) {
		__u32 *out = m + (fa_def[i].base + (size_t)c * a->nkeys - lo);

		if (!(rows[c] & (1u << fa_field[i])))
			continue;
		for (unsigned int j = 0; j < a->nrun[c]; j++) {
			unsigned int end = cp_run_end(a, c, j);

			for (unsigned int k = a->run[c][j].start; k < end; k++)
				out[k] = a->run[c][j].vid;
		}
	}
	munmap(m, page_round(bytes));
	return 0;
}

/* Vector vid has every slot of chain c (its empty ones are in none,
 * cp_compiled.npad). */
static bool vec_full(const struct cp_compiled *cc, __u32 vid, unsigned int c)
{
	unsigned int pad = cc->policy_slot[c] - cc->npad[c];

	for (unsigned int s = 0; s < cc->nslots[c]; s++)
		if (!cp_vec_bit(cc, vid, s) && s - pad >= cc->npad[c])
			return false;
	return true;
}

static int validate(const struct cp_compiled *cc, struct ipt_err *err)
{
	unsigned int c, s, i, amax = cc && cc->family == AF_INET6 ? 128 : 32;

	if (!cc || !cc->vw || cc->nvecs == 0 || cc->nwords == 0 ||
	    cc->nwords > BPFIPT_MAX_WORDS ||
	    cc->nchunks != (cc->nwords + BPFIPT_CHUNK_WORDS - 1) / BPFIPT_CHUNK_WORDS)
		return dp_fail(err, -EINVAL, "compiled ruleset: %u words, %u vectors",
			       cc ? cc->nwords : 0, cc ? cc->nvecs : 0);
	for (i = 0; i < cc->nvecs; i++) {
		const struct cp_vwin *w = &cc->vw[i], *b = &cc->vw[w->base];

		if (w->base > i || w->lo > cc->nchunks || w->n > cc->nchunks - w->lo ||
		    w->at + (size_t)w->n * cc->cwords > cc->nowned * cc->cwords ||
		    b->lo || b->n != cc->nchunks || b->base != w->base)
			return dp_fail(err, -EINVAL, "compiled ruleset: vector %u's window", i);
	}
	for (c = 0; c < BPFIPT_NCHAINS; c++) {
		if (cc->nslots[c] == 0 || cc->nslots[c] > cc->nwords * 64 || !cc->slots[c] ||
		    cc->policy_slot[c] >= cc->nslots[c] || cc->npad[c] > cc->policy_slot[c])
			return dp_fail(err, -EINVAL, "compiled chain %u: %u slots", c,
				       cc->nslots[c]);
		if (cc->full_vec[c] != BPFIPT_NO_VEC &&
		    (cc->full_vec[c] >= cc->nvecs || !vec_full(cc, cc->full_vec[c], c)))
			return dp_fail(err, -EINVAL, "compiled chain %u: vector %u lacks a slot", c,
				       cc->full_vec[c]);
		if (cc->nmslots[c] > BPFIPT_MAX_WORDS * 64)
			return dp_fail(err, -EINVAL, "compiled chain %u: %u member slots", c,
				       cc->nmslots[c]);
		for (s = cc->nslots[c]; s < cc->nslots[c] + cc->nmslots[c]; s++) {
			const struct bpfipt_slot *sl = &cc->slots[c][s];

			/* a verdict map's member: where its rule goes, nothing else */
			if ((sl->kind != BPFIPT_S_JUMP && sl->kind != BPFIPT_S_GOTO) ||
			    sl->target >= cc->nslots[c] || sl->xflags ||
			    sl->counter >= cc->ncounters)
				return dp_fail(err, -EINVAL, "compiled chain %u: bad member slot %u",
					       c, s);
		}
		for (s = 0; s < cc->nslots[c]; s++) {
			const struct bpfipt_slot *sl = &cc->slots[c][s];
			bool vmap = sl->xflags & BPFIPT_X_VMAP;

			if (sl->kind >= BPFIPT_S_MAX || sl->verdict >= BPFIPT_V_MAX ||
			    ((sl->kind == BPFIPT_S_JUMP || sl->kind == BPFIPT_S_GOTO) && !vmap &&
			     sl->target >= cc->nslots[c]) ||
			    (vmap && (!(sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST |
						   BPFIPT_X_GROUP_TUPLE)) ||
				      (sl->kind != BPFIPT_S_JUMP && sl->kind != BPFIPT_S_GOTO) ||
				      sl->target < cc->nslots[c] ||
				      sl->target >= cc->nslots[c] + cc->nmslots[c])) ||
			    (sl->counter != BPFIPT_NO_COUNTER && sl->counter >= cc->ncounters) ||
			    ((sl->xflags & ~(BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST |
					     BPFIPT_X_GROUP_TUPLE | BPFIPT_X_PROTO6 |
					     BPFIPT_X_VMAP)) &&
			     sl->extra >= cc->nextras) ||
			    ((sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)) &&
			     sl->group >= cc->ngroups) ||
			    ((sl->xflags & BPFIPT_X_GROUP_TUPLE) &&
			     (sl->group >= cc->ntgroups || sl->tp_splen > amax ||
			      sl->tp_dplen > amax)))
				return dp_fail(err, -EINVAL, "compiled chain %u: bad slot %u", c, s);
		}
	}
	for (i = 0; i < cc->group_src.n + cc->group_dst.n; i++) {
		const struct cp_lpm *l = i < cc->group_src.n ? &cc->group_src : &cc->group_dst;
		unsigned int j = i < cc->group_src.n ? i : i - cc->group_src.n;
		__u32 key = l->e6 ? l->e6[j].key : l->e[j].key;
		__u32 val = l->e6 ? l->e6[j].value : l->e[j].value;
		__u32 plen = l->e6 ? l->e6[j].plen : l->e[j].plen;

		if (val >= cc->ncounters || plen > (l->e6 ? 128u : 32u) || key >= cc->ngroups)
			return dp_fail(err, -EINVAL, "group set: bad entry");
	}
	for (i = 0; i < cc->ntuples; i++) {
		__u32 g = cc->tuples[i].k.group;

		/* an address pair (BPFIPT_TG_CUT): IPv6 only */
		if (cc->family == AF_INET6)
			g &= ~BPFIPT_TG_CUT;
		if (cc->tuples[i].off >= cc->ncounters || g >= cc->ntgroups)
			return dp_fail(err, -EINVAL, "tuple group: bad entry");
	}
	if (cc->family == AF_INET6 ? cc->src.e || cc->dst.e || cc->group_src.e || cc->group_dst.e :
				     cc->src.e6 || cc->dst.e6 || cc->group_src.e6 || cc->group_dst.e6)
		return dp_fail(err, -EINVAL, "compiled ruleset: address sets of another family");
	return 0;
}

/* The fields an IPv6 packet whose extension-header chain is cut does not look
 * up (dataplane/bpfipt.bpf.c, classify()). */
#define CUT_FIELDS (1u << BPFIPT_F_PROTO | 1u << BPFIPT_F_SPORT | 1u << BPFIPT_F_DPORT |	\
		    1u << BPFIPT_F_TCPFLAGS | 1u << BPFIPT_F_ICMP | 1u << BPFIPT_F_LEN |	\
		    1u << BPFIPT_F_CTSTATE)

/* Bit s of vector vid is set. */
static bool vec_has(const struct cp_compiled *cc, __u32 vid, unsigned int s)
{
	return vid == BPFIPT_NO_VEC || cp_vec_bit(cc, vid, s);
}

/* Slot s of chain c is in the vectors of keys lo..hi of array field a. */
static bool keys_have(const struct cp_array_field *a, const struct cp_compiled *cc, __u32 c,
		      unsigned int s, unsigned int lo, unsigned int hi)
{
	if (hi >= a->nkeys)
		hi = a->nkeys - 1;
	if (lo > hi)
		return true;
	for (unsigned int j = 0; j < a->nrun[c]; j++) {
		unsigned int end = cp_run_end(a, c, j);

		if (end <= lo || a->run[c][j].start > hi)
			continue;
		if (!vec_has(cc, a->run[c][j].vid, s))
			return false;
	}
	return true;
}

/* Slot s of chain c is in every vector that field f (gen_conf's numbering: -4
 * source ... NFA - 1) can give a packet in that chain. */
static bool field_has(const struct cp_compiled *cc, int f, __u32 c, unsigned int s)
{
	const struct cp_lpm *l = f == -4 ? &cc->src : &cc->dst;
	const struct cp_if_field *iff = f == -2 ? &cc->iif : &cc->oif;
	unsigned int i;

	switch (f) {
	case -4:
	case -3:
		for (i = 0; i < l->n; i++) {
			__u32 key = l->e6 ? l->e6[i].key : l->e[i].key;
			__u32 val = l->e6 ? l->e6[i].value : l->e[i].value;

			if (key == c && !vec_has(cc, val, s))
				return false;
		}
		return true;
	case -2:
	case -1:
		if (!vec_has(cc, iff->dflt[c], s))
			return false;
		for (i = 0; i < iff->n; i++)
			if (iff->e[i].chain == c && !vec_has(cc, iff->e[i].vec, s))
				return false;
		return true;
	default:
		return keys_have(fa_of(cc, f), cc, c, s, 0, fa_of(cc, f)->nkeys - 1);
	}
}

/* Tuple group slot s of chain c is a plain verdict that nothing but its keys
 * constrains: its search alone judges a packet. The key holds the addresses,
 * ports and protocol it names; with a port it also says that the packet has
 * ports (and so, when it is TCP, flags, and is not a later fragment). */
static bool tuple_alone(const struct cp_compiled *cc, __u32 c, unsigned int s)
{
	const struct bpfipt_slot *sl = &cc->slots[c][s];
	__u32 tp = sl->tp_ports, i;
	bool ports = tp & (BPFIPT_TP_SPORT | BPFIPT_TP_DPORT);
	int proto = -1, f;

	/* BPFIPT_X_PROTO6 concerns cut packets only, and they never take the fast
	 * path (classify()) */
	if (!(sl->xflags & BPFIPT_X_GROUP_TUPLE) || sl->kind != BPFIPT_S_VERDICT || sl->log ||
	    (sl->xflags & ~(BPFIPT_X_GROUP_TUPLE | BPFIPT_X_PROTO6)))
		return false;
	for (i = 0; i < cc->ntuples; i++)
		if (cc->tuples[i].k.group == sl->group) {
			proto = cc->tuples[i].k.proto;
			break;
		}
	for (f = -4; f < NFA; f++) {
		int bf = f < 0 ? -1 : fa_field[f];
		const struct cp_array_field *a = f < 0 ? NULL : fa_of(cc, f);
		bool ok;

		if ((f == -4 && sl->tp_splen) || (f == -3 && sl->tp_dplen) ||
		    (bf == BPFIPT_F_PROTO && (tp & BPFIPT_TP_PROTO)) ||
		    (bf == BPFIPT_F_SPORT && (tp & BPFIPT_TP_SPORT)) ||
		    (bf == BPFIPT_F_DPORT && (tp & BPFIPT_TP_DPORT)))
			continue;
		if (ports && (bf == BPFIPT_F_SPORT || bf == BPFIPT_F_DPORT))
			ok = keys_have(a, cc, c, s, 0, 65535);
		else if (ports && bf == BPFIPT_F_FRAG)
			ok = keys_have(a, cc, c, s, 0, 0);
		else if (ports && bf == BPFIPT_F_TCPFLAGS && proto == IPPROTO_TCP &&
			 (tp & BPFIPT_TP_PROTO))
			ok = keys_have(a, cc, c, s, 0, 255);
		else
			ok = field_has(cc, f, c, s);
		if (!ok)
			return false;
	}
	return true;
}

/* The tuple group slot 0 of chain c (BPFIPT_FAST_TUPLE): judged by its search
 * alone when nothing else constrains the slot (tuple_alone()). */
static __u32 tuple_fast_of(const struct cp_compiled *cc, __u32 c)
{
	__u32 fast = BPFIPT_FAST_TUPLE;

	if (cc->nslots[c] == 2 && cc->policy_slot[c] == 1)
		fast |= BPFIPT_FAST_MISS;
	return tuple_alone(cc, c, 0) ? fast | BPFIPT_FAST_HIT : fast;
}

/* Slot s of chain c, a list, is a plain verdict that nothing but the list
 * constrains: no field but `own` (-4 the source, -3 the destination: the list's
 * own address, whose vectors hold the slot only for the list's entries when
 * the list is not folded; -5 none) leaves the slot out of a vector. */
static bool plain_list(const struct cp_compiled *cc, __u32 c, unsigned int s, int own)
{
	const struct bpfipt_slot *sl = &cc->slots[c][s];

	if (sl->kind != BPFIPT_S_VERDICT || sl->log ||
	    (sl->xflags & ~(BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)))
		return false;
	for (int f = -4; f < NFA; f++)
		if (f != own && !field_has(cc, f, c, s))
			return false;
	return true;
}

/* Slot s of chain c is its folded list (bpfipt_conf.gfold) with a plain verdict
 * that nothing but the list constrains: its search alone decides it. */
static bool folded_list(const struct cp_compiled *cc, const struct bpfipt_conf *cf, __u32 c,
			unsigned int s)
{
	return (cf->gfold[c][0] == s + 1 || cf->gfold[c][1] == s + 1) &&
	       plain_list(cc, c, s, -5);
}

/* Slot s of chain c is a list that is not the chain's folded one (a chain with
 * two lists on one address: fail2ban's second jail) with a plain verdict that
 * nothing but the list constrains: its bit is in its address's vectors for the
 * list's entries, and its own set tells whether the packet's address is one
 * (group_counter() in the data plane), so the slot prefix searches that set as
 * it searches a tuple group's hash (BPFIPT_FAST_PFX_TUPLE). */
static bool list_alone(const struct cp_compiled *cc, const struct bpfipt_conf *cf, __u32 c,
		       unsigned int s)
{
	__u32 x = cc->slots[c][s].xflags;

	return (x & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)) && cf->gfold[c][0] != s + 1 &&
	       cf->gfold[c][1] != s + 1 && plain_list(cc, c, s, x & BPFIPT_X_GROUP_SRC ? -4 : -3);
}

/* bpfipt_conf.fast of chain c: when the chain begins with its folded group slot
 * (a deny list at its top), whether the list's search judges a packet alone. */
static __u32 fast_of(const struct cp_compiled *cc, const struct bpfipt_conf *cf, __u32 c)
{
	const struct bpfipt_slot *s0 = &cc->slots[c][0];
	__u32 fast;

	if (cc->nslots[c] >= 2 && (s0->xflags & BPFIPT_X_GROUP_TUPLE))
		return tuple_fast_of(cc, c);
	if (cc->nslots[c] < 2 || (cf->gfold[c][0] != 1 && cf->gfold[c][1] != 1))
		return 0;
	fast = cf->gfold[c][1] == 1 ? BPFIPT_FAST_DST : 0;
	/* nothing else in the chain: a miss falls to the policy */
	if (cc->nslots[c] == 2 && cc->policy_slot[c] == 1)
		fast |= BPFIPT_FAST_MISS;
	/* a plain verdict that nothing but its list constrains */
	if (folded_list(cc, cf, c, 0))
		fast |= BPFIPT_FAST_HIT;
	return fast & (BPFIPT_FAST_HIT | BPFIPT_FAST_MISS) ? fast : 0;
}

_Static_assert(BPFIPT_F_MAX < BPFIPT_FAST_PFX_NONE, "a field id fits in 4 bits (BPFIPT_FAST_PFX_FIELD)");

/* The keys of array field a in chain c whose vectors hold slot s (inv: do not
 * hold it), when they are one range: true, and the range in [*lo, *hi]. */
static bool keys_range(const struct cp_array_field *a, const struct cp_compiled *cc, __u32 c,
		       unsigned int s, bool inv, __u32 *lo, __u32 *hi)
{
	bool seen = false, in = false;

	for (unsigned int j = 0; j < a->nrun[c]; j++) {
		bool has = vec_has(cc, a->run[c][j].vid, s) != inv;

		if (has && !in) {
			if (seen)
				return false;	/* a second range */
			*lo = a->run[c][j].start;
			seen = in = true;
		} else if (!has && in) {
			*hi = a->run[c][j].start - 1;
			in = false;
		}
	}
	if (in)
		*hi = a->nkeys - 1;
	return seen;
}

/* The IPv4 addresses (host order) of chain c's set l whose vectors hold slot s
 * (inv: do not hold it), when they are one prefix's: true, and its range in
 * [*lo, *hi]. Every prefix of the set inside that one must hold s, every other
 * none (inv: the other way round; the set's 0.0.0.0/0, which every chain's has,
 * holds it). */
static bool addr_range(const struct cp_lpm *l, const struct cp_compiled *cc, __u32 c,
		       unsigned int s, bool inv, __u32 *lo, __u32 *hi)
{
	const struct cp_lpm_entry *p = NULL;
	__u32 mask, base;
	unsigned int i;

	if (!l->e)
		return false;
	for (i = 0; i < l->n; i++)
		if (l->e[i].key == c && vec_has(cc, l->e[i].value, s) != inv &&
		    (!p || l->e[i].plen < p->plen))
			p = &l->e[i];
	if (!p || (inv && !p->plen))
		return false;
	mask = p->plen ? ~0u << (32 - p->plen) : 0;
	base = ntohl(p->addr) & mask;
	for (i = 0; i < l->n; i++) {
		const struct cp_lpm_entry *e = &l->e[i];

		if (e->key == c && (vec_has(cc, e->value, s) != inv) !=
		    (e->plen >= p->plen && (ntohl(e->addr) & mask) == base))
			return false;
	}
	*lo = base;
	*hi = base | ~mask;
	return true;
}

/* The one interface of chain c's field fl whose vector holds slot s, when no
 * other does and unknown interfaces (the default vector) do not: true, its
 * ifindex in *lo and *hi (`-i lo`, `-i eth0`); none (`-i wg0` before wg0
 * exists): true, an empty range. inv: the one whose vector does not hold it,
 * every other and the default vector do (`! -i docker0`). The field is compiled from the
 * links of the command, as the conf is: a link that comes later makes a new
 * install (bpf-iptables --watch), which computes both again. */
static bool if_range(const struct cp_if_field *fl, const struct cp_compiled *cc, __u32 c,
		     unsigned int s, bool inv, __u32 *lo, __u32 *hi)
{
	bool found = false;

	if (vec_has(cc, fl->dflt[c], s) != inv)
		return false;
	for (unsigned int i = 0; i < fl->n; i++) {
		if (fl->e[i].chain != c || vec_has(cc, fl->e[i].vec, s) == inv)
			continue;
		if (found)
			return false;
		*lo = *hi = fl->e[i].ifindex;
		found = true;
	}
	if (!found) {		/* no link of that name (yet): an empty range */
		if (inv)
			return false;	/* every interface: not constrained */
		*lo = 1;
		*hi = 0;
	}
	return true;
}

/* The slot prefix of a chain being built (prefix_of()): its rules so far, and
 * of each its fields' number (a list's 1, a tuple group's
 * BPFIPT_FAST_PFX_FIELDS), its depth (0: a rule of the chain itself, 1 of a
 * chain it calls, ...), whether it is a RETURN, and whether a goto (-g), then
 * where the rules of the chain it calls end. */
struct pfx_build {
	const struct cp_compiled *cc;
	struct bpfipt_conf *cf;
	__u32 c, n;
	__u32 nf[BPFIPT_FAST_PFX_MAX];
	__u8 lvl[BPFIPT_FAST_PFX_MAX];
	bool ret[BPFIPT_FAST_PFX_MAX];
	bool go[BPFIPT_FAST_PFX_MAX];
	__u8 gend[BPFIPT_FAST_PFX_MAX];
};

/* bits 0 .. a - 1 (a <= 64) */
static __u64 pfx_below(__u32 a)
{
	return a >= 64 ? ~0ULL : (1ULL << a) - 1;
}

/* bits a .. b - 1 (b <= BPFIPT_FAST_PFX_MAX) */
static __u64 pfx_bits(__u32 a, __u32 b)
{
	return pfx_below(b) & ~pfx_below(a);
}

/* The prefix's rule j: fields, BPFIPT_FAST_PFX_NONE after its n-th */
static void pfx_put(struct pfx_build *b, __u32 j, __u64 fields, int n)
{
	fields |= ~0ULL << (4 * n) & ((1ULL << (4 * BPFIPT_FAST_PFX_FIELDS)) - 1);
	b->cf->pfx[b->c][j / BPFIPT_FAST_PFX_PER_WORD] |=
		fields << (4 * BPFIPT_FAST_PFX_FIELDS * (j % BPFIPT_FAST_PFX_PER_WORD));
}

/* Whether a range decides field k of the j-th rule of chain c's prefix. */
static bool pfx_is_direct(const struct bpfipt_conf *cf, __u32 c, __u32 j, __u32 k)
{
	__u32 idx = j * BPFIPT_FAST_PFX_FIELDS + k;

	return cf->pfx_direct[c][idx / 64] & (1ULL << (idx % 64));
}

/* The prefix cut to its first k rules: the others' fields and bits cleared. */
static void pfx_cut(struct pfx_build *b, __u32 k)
{
	struct bpfipt_conf *cf = b->cf;
	__u32 c = b->c, w;

	for (w = 0; w < BPFIPT_FAST_PFX_WORDS; w++) {
		__u32 lo = w * BPFIPT_FAST_PFX_PER_WORD, keep = k > lo ? k - lo : 0;

		if (keep < BPFIPT_FAST_PFX_PER_WORD)
			cf->pfx[c][w] &= (1ULL << (4 * BPFIPT_FAST_PFX_FIELDS * keep)) - 1;
	}
	for (w = 0; w < BPFIPT_FAST_PFX_DWORDS; w++) {
		__u32 lo = w * 64, keep = k * BPFIPT_FAST_PFX_FIELDS;

		cf->pfx_direct[c][w] &= keep > lo ? pfx_below(keep - lo) : 0;
	}
	cf->pfx_cont[c] &= pfx_below(k);
	cf->pfx_extra[c] &= pfx_below(k);
	cf->pfx_log[c] &= pfx_below(k);
	cf->pfx_tgrp[c] &= pfx_below(k);
	for (w = k; w < BPFIPT_FAST_PFX_MAX; w++) {
		cf->pfx_slot[c][w] = 0;
		cf->pfx_ctr[c][w] = BPFIPT_NO_COUNTER;
		cf->pfx_verdict[c][w] = cf->pfx_rejw[c][w] = 0;
		cf->pfx_tup[c][w] = (struct bpfipt_pfx_tup){ 0 };
		cf->pfx_skip[c][w][0] = cf->pfx_skip[c][w][1] = 0;
	}
	b->n = k;
}

/* The rules of a chain at depth lvl, the prefix's from `from` on, have ended at
 * rule b->n: a RETURN of the chain's own that matches skips the rest of them,
 * and so does a goto, past the rules of the chain it calls (the packet comes
 * back to the chain that called this one, or to the base chain's policy). */
static void pfx_chain_end(struct pfx_build *b, __u32 from, unsigned int lvl)
{
	for (__u32 k = from; k < b->n; k++) {
		if (b->lvl[k] != lvl)
			continue;
		if (b->ret[k])
			b->cf->pfx_skip[b->c][k][1] = pfx_bits(k + 1, b->n);
		else if (b->go[k])
			b->cf->pfx_skip[b->c][k][1] = pfx_bits(b->gend[k], b->n);
	}
}

/* No field constrains slot s of chain c. */
static bool slot_free(const struct cp_compiled *cc, __u32 c, unsigned int s)
{
	for (int f = -4; f < NFA; f++)
		if (!field_has(cc, f, c, s))
			return false;
	return true;
}

/* A field of a rule of the slot prefix (pfx_rule()): its id in the 4 bits of
 * BPFIPT_FAST_PFX_FIELD, and whether a range decides it (pfx_direct). */
struct pfx_field {
	int id;
	bool direct, inv;	/* inv: every value outside [lo, hi] */
	__u32 lo, hi;
};

/* Of slot s's fields fl[0 .. n - 1], those that another's test implies left out,
 * and -p with a range of destination ports made one field
 * (BPFIPT_FAST_PFX_PDPORT): the number left. The parser sets both ports or
 * neither (BPFIPT_NO_PORT), and a TCP header's flags with its ports
 * (parse_l4()): a range of every port [0, 65535] adds nothing to a test of the
 * other port that no packet without ports passes; the flags every TCP header
 * has (-m tcp without --tcp-flags) nothing to -p tcp and such a port test, nor
 * "not a later fragment" (! -f). So -p tcp --dport 22, four fields in the
 * vectors, is one range. */
static int pfx_fold(const struct cp_compiled *cc, __u32 c, unsigned int s, struct pfx_field *fl,
		    int n)
{
	int pr = -1, sp = -1, dp = -1, tf = -1, fr = -1, i, k;
	bool ports;
	__u32 lo, hi;

	for (i = 0; i < n; i++) {
		int *at = fl[i].id == BPFIPT_F_PROTO ? &pr : fl[i].id == BPFIPT_F_SPORT ? &sp
			: fl[i].id == BPFIPT_F_DPORT ? &dp : fl[i].id == BPFIPT_F_TCPFLAGS ? &tf
			: fl[i].id == BPFIPT_F_FRAG ? &fr : NULL;

		if (at)
			*at = i;
	}
#define ALL_PORTS(i) ((i) >= 0 && fl[i].direct && !fl[i].inv && fl[i].lo == 0 && fl[i].hi == 65535)
#define NEEDS_PORTS(a, i) ((i) >= 0 && !keys_have(a, cc, c, s, BPFIPT_NO_PORT, BPFIPT_NO_PORT))
	if (ALL_PORTS(sp) && NEEDS_PORTS(&cc->dport, dp))
		fl[sp].id = -1;
	else if (ALL_PORTS(dp) && NEEDS_PORTS(&cc->sport, sp))
		fl[dp].id = -1;
	/* a test left that no packet without ports passes: nor does a later
	 * fragment (it has none) */
	ports = (dp >= 0 && fl[dp].id >= 0 && NEEDS_PORTS(&cc->dport, dp)) ||
		(sp >= 0 && fl[sp].id >= 0 && NEEDS_PORTS(&cc->sport, sp));
	if (ports && tf >= 0 && pr >= 0 && fl[pr].direct && !fl[pr].inv && fl[pr].lo == IPPROTO_TCP &&
	    fl[pr].hi == IPPROTO_TCP &&
	    keys_range(&cc->tcpflags, cc, c, s, false, &lo, &hi) && lo == 0 && hi == 255)
		fl[tf].id = -1;
	if (ports && fr >= 0 && keys_range(&cc->frag, cc, c, s, false, &lo, &hi) && lo == 0 &&
	    hi == 0)
		fl[fr].id = -1;
#undef ALL_PORTS
#undef NEEDS_PORTS
	if (pr >= 0 && dp >= 0 && fl[dp].id >= 0 && fl[pr].direct && !fl[pr].inv &&
	    fl[pr].lo == fl[pr].hi && fl[dp].direct && !fl[dp].inv && fl[dp].lo <= fl[dp].hi &&
	    fl[dp].hi < BPFIPT_NO_PORT) {
		fl[pr].id = BPFIPT_FAST_PFX_PDPORT;
		lo = BPFIPT_FAST_PFX_PDPORT_VAL(fl[pr].lo, fl[dp].lo);
		fl[pr].hi = BPFIPT_FAST_PFX_PDPORT_VAL(fl[pr].lo, fl[dp].hi);
		fl[pr].lo = lo;
		fl[dp].id = -1;
	}
	for (i = k = 0; i < n; i++)
		if (fl[i].id >= 0)
			fl[k++] = fl[i];
	return k;
}

/* The order in which fast_prefix() tests a rule's fields, which stops at the
 * first that fails: ranges before vectors (a vector costs a lookup the first
 * time a packet needs it); of the ranges, ports first (a port, or a protocol
 * and its ports, passes few packets), then addresses, then the protocol and the
 * conntrack state (most packets are TCP or UDP, most ESTABLISHED), then the
 * interfaces (a host has few); a range outside of which a packet must be
 * (! -i docker0) passes nearly all, last of them. Docker's published port, `-d
 * 172.17.0.2/32 ! -i docker0 -o docker0 -p tcp --dport 80`, tests the port
 * first: the packets to other ports pay one compare, not four. */
static int pfx_rank(const struct pfx_field *x)
{
	if (!x->direct)
		return 6;
	if (x->inv)
		return 5;
	if (x->lo > x->hi)
		return 0;	/* no packet passes it (-i wg0 before wg0 exists) */
	switch (x->id) {
	case BPFIPT_FAST_PFX_PDPORT:
	case BPFIPT_F_DPORT:
	case BPFIPT_F_SPORT:
		return 0;
	case BPFIPT_F_SRC:
	case BPFIPT_F_DST:
		return 1;
	case BPFIPT_F_PROTO:
	case BPFIPT_F_CTSTATE:
		return 2;
	default:
		return 4;
	}
}

/* fl[0 .. n - 1] in pfx_rank()'s order, stable. */
static void pfx_order(struct pfx_field *fl, int n)
{
	for (int i = 1; i < n; i++) {
		struct pfx_field x = fl[i];
		int k = i;

		for (; k > 0 && pfx_rank(&fl[k - 1]) > pfx_rank(&x); k--)
			fl[k] = fl[k - 1];
		fl[k] = x;
	}
}

/* Field x of the prefix as its direct range idx (pfx_direct, pfx_lo, pfx_span):
 * [lo, hi], the values outside it (inv: the range that wraps from hi + 1 to
 * lo - 1), or none (lo > hi: the protocol against BPFIPT_FAST_PFX_NEVER, which
 * x->id then says). */
static void pfx_range(struct bpfipt_conf *cf, __u32 c, __u32 idx, struct pfx_field *x)
{
	cf->pfx_direct[c][idx / 64] |= 1ULL << (idx % 64);
	if (x->inv) {
		cf->pfx_lo[c][idx] = x->hi + 1;
		cf->pfx_span[c][idx] = x->lo - x->hi - 2;
	} else if (x->lo > x->hi) {
		x->id = BPFIPT_F_PROTO;
		cf->pfx_lo[c][idx] = BPFIPT_FAST_PFX_NEVER;
		cf->pfx_span[c][idx] = 0;
	} else {
		cf->pfx_lo[c][idx] = x->lo;
		cf->pfx_span[c][idx] = x->hi - x->lo;
	}
}

/* The bounds of tuple group t->group's keys in t->lo and t->span (bpfipt.h,
 * struct bpfipt_tfast): an address's top is its prefix's last address, so that
 * fast_tuple() compares the packet's value unmasked; IPv6 addresses by their
 * word BPFIPT_TB_WORD6. */
static void tuple_bounds(const struct cp_compiled *cc, struct bpfipt_tfast *t)
{
	unsigned int aw = cc->family == AF_INET6 ? BPFIPT_TB_WORD6 : 0;
	__u32 mask[BPFIPT_TB_N] = {
		cp_word_mask(t->splen, aw), cp_word_mask(t->dplen, aw),
		t->ports & BPFIPT_TP_SPORT ? ~0u : 0, t->ports & BPFIPT_TP_DPORT ? ~0u : 0,
	};
	__u32 lo[BPFIPT_TB_N], hi[BPFIPT_TB_N];
	int f;

	for (f = 0; f < BPFIPT_TB_N; f++) {
		lo[f] = ~0u;
		hi[f] = 0;
	}
	for (__u32 i = 0; i < cc->ntuples; i++) {
		const struct bpfipt_tuple6_key *k = &cc->tuples[i].k;
		__u32 v[BPFIPT_TB_N] = { ntohl(k->src[aw]), ntohl(k->dst[aw]), k->sport, k->dport };

		if (k->group != t->group)
			continue;
		for (f = 0; f < BPFIPT_TB_N; f++) {
			lo[f] = v[f] < lo[f] ? v[f] : lo[f];
			hi[f] = v[f] > hi[f] ? v[f] : hi[f];
		}
	}
	for (f = 0; f < BPFIPT_TB_N; f++) {
		if (!mask[f] || lo[f] > hi[f]) {	/* not in the key (or no key) */
			t->lo[f] = 0;
			t->span[f] = ~0u;
			continue;
		}
		t->lo[f] = lo[f];
		t->span[f] = (hi[f] | ~mask[f]) - lo[f];
	}
}

/* The narrowest bound of tuple group slot sl's keys (tuple_bounds(): the one
 * that passes the smallest share of its field's values) as a range of the
 * prefix in *x, the group's own field after it: a packet outside it is in none
 * of the keys, and skips the slot's and the hash's lookups (~15 ns); one inside
 * pays the compare (~4 ns; each bound more ~2 ns). An IPv6 address's bound is
 * its word BPFIPT_TB_WORD6's, which fast_prefix() takes as the address's value.
 * 0 when no bound passes less than a sixteenth of its field's values, else 1. */
static int tuple_pfx_bound(const struct cp_compiled *cc, const struct bpfipt_slot *sl,
			   struct pfx_field *x)
{
	static const int id[BPFIPT_TB_N] = { [BPFIPT_TB_SRC] = BPFIPT_F_SRC,
					     [BPFIPT_TB_DST] = BPFIPT_F_DST,
					     [BPFIPT_TB_SPORT] = BPFIPT_F_SPORT,
					     [BPFIPT_TB_DPORT] = BPFIPT_F_DPORT };
	struct bpfipt_tfast t = { .group = sl->group, .splen = sl->tp_splen,
				  .dplen = sl->tp_dplen, .ports = sl->tp_ports };
	double best = 1.0 / 16;	/* a bound most packets pass would only cost */
	int f, n = 0;

	tuple_bounds(cc, &t);
	for (f = 0; f < BPFIPT_TB_N; f++) {
		bool addr = f == BPFIPT_TB_SRC || f == BPFIPT_TB_DST;
		/* the share of the field's values inside (ports: 17 bits,
		 * BPFIPT_NO_PORT's included) */
		double share = ((double)t.span[f] + 1) / (addr ? 4294967296.0 : 131072.0);

		if (t.span[f] == ~0u || share >= best)
			continue;
		best = share;
		*x = (struct pfx_field){ .id = id[f], .lo = t.lo[f], .hi = t.lo[f] + t.span[f],
					 .direct = true };
		n = 1;
	}
	return n;
}

/* Slot s of chain c as the prefix's next rule, at depth lvl (a rule of a chain
 * called from the chain's own rules: 1, ...): a plain verdict that one to
 * BPFIPT_FAST_PFX_FIELDS fields constrain, the chain's folded list, a tuple
 * group alone, or a rule after which the packet goes on (a LOG: pfx_cont),
 * maybe with extra matches (pfx_extra); a verdict with no field. A jump or a
 * goto is such a rule, followed by the rules of the chain it calls, all of them
 * or the jump is not taken; so is a RETURN (in the base chain, its policy). 0: taken; 1:
 * taken, and every packet that reaches it is judged or returns there (a
 * verdict, a RETURN or a goto without a field; the block's end, with no
 * counter, is not a rule of the prefix): the rest of its chain is never
 * reached; -1: not (what it wrote is cut by the caller). */
static int pfx_rule(struct pfx_build *b, __u32 s, unsigned int lvl)
{
	const struct cp_compiled *cc = b->cc;
	struct bpfipt_conf *cf = b->cf;
	__u32 c = b->c, j = b->n, t, k;
	const struct bpfipt_slot *sl;
	struct pfx_field fl[NFA + 4];
	bool cont, extra, jump, ret, go;
	__u64 fields = 0;
	int f, n, nraw = 0, r;

	if (s >= cc->nslots[c] || s == cc->policy_slot[c] || s > UINT8_MAX)
		return -1;
	sl = &cc->slots[c][s];
	jump = (sl->kind == BPFIPT_S_JUMP || sl->kind == BPFIPT_S_GOTO) &&
	       !(sl->xflags & BPFIPT_X_VMAP);
	go = jump && sl->kind == BPFIPT_S_GOTO;
	ret = sl->kind == BPFIPT_S_RETURN;	/* in the base chain: its policy */
	extra = sl->xflags & BPFIPT_X_EXTRA;
	if (ret && !extra && slot_free(cc, c, s) && sl->counter == BPFIPT_NO_COUNTER)
		return 1;	/* the block's own end (compile.c) */
	if (j >= BPFIPT_FAST_PFX_RULES)
		return -1;
	cf->pfx_slot[c][j] = (__u8)s;
	cf->pfx_ctr[c][j] = cnt_phys(cf, sl->counter);
	cf->pfx_verdict[c][j] = (__u8)sl->verdict;
	cf->pfx_rejw[c][j] = (__u8)sl->reject_with;
	b->lvl[j] = (__u8)lvl;
	b->ret[j] = ret;
	b->go[j] = go;
	if (folded_list(cc, cf, c, s)) {
		/* the chain's folded list: its search decides */
		pfx_put(b, j, BPFIPT_FAST_PFX_LIST, 1);
		b->nf[j] = 1;
		b->n = j + 1;
		return 0;
	}
	if (list_alone(cc, cf, c, s)) {
		/* another list: its own set searched (the data plane's
		 * bpfipt_pfx_tuple() tells it from a tuple group by its slot).
		 * The walk pays nothing for it where the packet's address is not
		 * listed (its bit is in that address's vector only), the prefix a
		 * search: it ends a prefix that the walk follows, as a tuple
		 * group does (prefix_of()) */
		pfx_put(b, j, BPFIPT_FAST_PFX_TUPLE, 1);
		b->nf[j] = BPFIPT_FAST_PFX_FIELDS;
		b->n = j + 1;
		return 0;
	}
	if (tuple_alone(cc, c, s)) {
		/* a tuple group that nothing else constrains: its hash decides;
		 * many narrow rules, which end a prefix that the walk follows
		 * (prefix_of()). Its keys' narrowest bound first, a range (as
		 * fast_tuple() tests them all) */
		cf->pfx_tgrp[c] |= 1ULL << j;
		cf->pfx_tup[c][j] = (struct bpfipt_pfx_tup){ .group = sl->group,
			.splen = sl->tp_splen, .dplen = sl->tp_dplen, .ports = sl->tp_ports };
		n = tuple_pfx_bound(cc, sl, &fl[0]);
		if (n) {
			pfx_range(cf, c, j * BPFIPT_FAST_PFX_FIELDS, &fl[0]);
			fields = (__u64)fl[0].id;
		}
		fields |= (__u64)BPFIPT_FAST_PFX_TUPLE << (4 * n);
		pfx_put(b, j, fields, n + 1);
		b->nf[j] = BPFIPT_FAST_PFX_FIELDS;
		b->n = j + 1;
		return 0;
	}
	/* BPFIPT_X_PROTO6 (IPv6, -p) concerns cut packets only, which never take
	 * the prefix (classify()); a rule after which the packet goes on (a LOG,
	 * a jump, a RETURN) is counted and noted there, maybe with no field */
	cont = sl->kind == BPFIPT_S_CONTINUE || jump || ret;
	if ((sl->kind != BPFIPT_S_VERDICT && !cont) || (sl->log && !cont) ||
	    (sl->xflags & ~(BPFIPT_X_PROTO6 | BPFIPT_X_EXTRA)))
		return -1;
	for (f = -4; f < NFA; f++) {
		struct pfx_field *x = &fl[nraw];
		int bf = f == -4 ? BPFIPT_F_SRC : f == -3 ? BPFIPT_F_DST :
			 f == -2 ? BPFIPT_F_IIF : f == -1 ? BPFIPT_F_OIF : fa_field[f];

		if (field_has(cc, f, c, s))
			continue;
		/* source, destination, interfaces, protocol, ports, conntrack
		 * state: a range when it can (fast_prefix() knows these values), or
		 * the values outside one (! -i docker0); a field the chain does not
		 * look up (the same vector for every value, ! -s ::/0) and the slot
		 * is not in: the empty range, no packet */
		x->id = bf;
		x->lo = 1;
		x->hi = 0;
		x->inv = false;
		x->direct = !(cf->lookup[c] & (1u << bf));
		for (int inv = 0; inv < 2 && !x->direct; inv++) {
			x->inv = inv;
			x->direct = f < -2 ? addr_range(f == -4 ? &cc->src : &cc->dst, cc, c, s, inv,
							&x->lo, &x->hi)
				  : f < 0 ? if_range(f == -2 ? &cc->iif : &cc->oif, cc, c, s, inv,
						     &x->lo, &x->hi)
				  : f <= 2 || fa_field[f] == BPFIPT_F_CTSTATE
				  ? keys_range(fa_of(cc, f), cc, c, s, inv, &x->lo, &x->hi)
				  : false;
		}
		x->inv = x->inv && x->direct;
		nraw++;
	}
	n = pfx_fold(cc, c, s, fl, nraw);
	if (n > BPFIPT_FAST_PFX_FIELDS)
		return -1;
	pfx_order(fl, n);
	for (k = 0; k < (__u32)n; k++) {
		__u32 idx = j * BPFIPT_FAST_PFX_FIELDS + k;

		if (fl[k].direct)
			pfx_range(cf, c, idx, &fl[k]);
		else if (s >= 64)
			return -1;	/* its bit is not in a vector's word 0 */
		fields |= (__u64)fl[k].id << (4 * k);
	}
	/* its width as the vectors have it (-p tcp --dport 22: four), which
	 * prefix_of() weighs */
	b->nf[j] = (__u32)nraw;
	if (cont) {
		cf->pfx_cont[c] |= 1ULL << j;
		if (sl->log == 1)
			cf->pfx_log[c] |= 1ULL << j;
	}
	if (extra)
		cf->pfx_extra[c] |= 1ULL << j;
	pfx_put(b, j, fields, n);
	b->n = j + 1;
	if (!n && !extra && (sl->kind == BPFIPT_S_VERDICT || ret))
		return 1;	/* every packet takes it: the rest is never reached */
	if (!jump)
		return 0;
	/* the chain it calls, from the first slot of its block to its end: a
	 * packet that the jump does not take skips them, one that a RETURN of the
	 * chain itself takes back skips the rest of it */
	for (t = sl->target; (r = pfx_rule(b, t, lvl + 1)) == 0; t++)
		;
	if (r < 0)
		return -1;
	cf->pfx_skip[c][j][0] = pfx_bits(j + 1, b->n);
	pfx_chain_end(b, j + 1, lvl + 1);
	b->gend[j] = (__u8)b->n;
	/* a goto every packet takes: the rest of its chain is never reached */
	return go && !n && !extra ? 1 : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Whether the range of field k of the j-th rule of chain c's prefix (a field
 * a range decides) holds value v. */
static bool pfx_holds(const struct bpfipt_conf *cf, __u32 c, __u32 j, __u32 k, __u32 v)
{
	__u32 idx = j * BPFIPT_FAST_PFX_FIELDS + k;

	return v - cf->pfx_lo[c][idx] <= cf->pfx_span[c][idx];
}

/* Chain c's prefix of n rules: its ranges (pfx_direct, pfx_lo, pfx_span) as a
 * table per field (bpfipt_conf.pfx_tab: the cuts where a rule's range begins or
 * ends, and at each the rules whose ranges of the field hold it), the jumps
 * whose miss turns rules off (pfx_visit) and the rules with more to test
 * (pfx_rest). -1 if they do not fit (pfx_rule() sees that they do: at most
 * BPFIPT_FAST_PFX_RULES rules, each a range of a field of pval[]). */
static int pfx_tables(struct bpfipt_conf *cf, __u32 c, __u32 n)
{
	__u32 fields = 0, f, j, k, i, m;

	cf->pfx_ntab[c] = 0;
	cf->pfx_visit[c] = 0;
	cf->pfx_group[c] = 0;
	cf->pfx_vec[c] = 0;
	memset(cf->pfx_tab[c], 0, sizeof(cf->pfx_tab[c]));
	for (j = 0; j < n; j++) {
		if (cf->pfx_skip[c][j][0])
			cf->pfx_visit[c] |= 1ULL << j;
		for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++) {
			f = BPFIPT_FAST_PFX_FIELD(cf->pfx[c], j, k);
			if (f == BPFIPT_FAST_PFX_NONE)
				break;
			if (f == BPFIPT_FAST_PFX_LIST || f == BPFIPT_FAST_PFX_TUPLE) {
				cf->pfx_group[c] |= 1ULL << j;
			} else if (pfx_is_direct(cf, c, j, k)) {
				fields |= 1u << f;
			} else {
				cf->pfx_vec[c] |= 1ULL << j;
			}
		}
	}
	cf->pfx_rest[c] = cf->pfx_group[c] | cf->pfx_vec[c] | cf->pfx_extra[c];
	/* a group is searched from the prefix's loop alone (pfx_tgrp,
	 * pfx_tuple, pfx_flist), bpfipt_pfx_rest() tests the rest: pfx_rule()
	 * gives a group no other test */
	if (cf->pfx_group[c] & (cf->pfx_vec[c] | cf->pfx_extra[c]))
		return -1;
	/* the first rule compared before the tables when ranges decide it
	 * alone and it judges */
	cf->pfx_first[c] = n && !((cf->pfx_rest[c] | cf->pfx_cont[c]) & 1);
	for (k = 0; k < BPFIPT_FAST_PFX_FIELDS && cf->pfx_first[c]; k++)
		if (BPFIPT_FAST_PFX_FIELD(cf->pfx[c], 0, k) != BPFIPT_FAST_PFX_NONE &&
		    !pfx_is_direct(cf, c, 0, k))
			cf->pfx_first[c] = 0;
	cf->pfx_tuple[c] = 0;
	cf->pfx_flist[c] = 0;
	for (j = 0; j < n; j++)
		if (cf->pfx_group[c] & (1ULL << j)) {
			if (BPFIPT_FAST_PFX_FIELD(cf->pfx[c], j, 0) != BPFIPT_FAST_PFX_LIST)
				cf->pfx_tuple[c] |= 1ULL << j;
			else
				cf->pfx_flist[c] |= 1ULL << j;
		}
	/* a rule the packet goes on from (a jump to a chain, a LOG) that the
	 * tables decide alone and that skips nothing when it matches: noted
	 * from the tables' mask, its miss's skip from their miss */
	cf->pfx_plain[c] = 0;
	for (j = 0; j < n; j++)
		if ((cf->pfx_cont[c] & (1ULL << j)) && !(cf->pfx_rest[c] & (1ULL << j)) &&
		    !cf->pfx_skip[c][j][1])
			cf->pfx_plain[c] |= 1ULL << j;
	cf->pfx_visit[c] &= ~cf->pfx_plain[c];
	for (f = 0; f < 32; f++) {
		struct bpfipt_pfx_tab *tb;

		if (!(fields & (1u << f)))
			continue;
		if (cf->pfx_ntab[c] >= BPFIPT_PFX_TABS)
			return -1;
		tb = &cf->pfx_tab[c][cf->pfx_ntab[c]++];
		tb->field = f;
		m = 0;
		tb->cut[m++] = 0;
		for (j = 0; j < n; j++)
			for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++) {
				__u32 idx = j * BPFIPT_FAST_PFX_FIELDS + k;

				if (!pfx_is_direct(cf, c, j, k) ||
				    BPFIPT_FAST_PFX_FIELD(cf->pfx[c], j, k) != f)
					continue;
				if (m + 2 > BPFIPT_PFX_CUTS)
					return -1;
				tb->cut[m++] = cf->pfx_lo[c][idx];
				tb->cut[m++] = cf->pfx_lo[c][idx] + cf->pfx_span[c][idx] + 1;
			}
		qsort(tb->cut, m, sizeof(tb->cut[0]), cmp_u32);
		for (i = k = 1; i < m; i++)
			if (tb->cut[i] != tb->cut[k - 1])
				tb->cut[k++] = tb->cut[i];
		m = k;
		for (i = 0; i < m; i++) {
			__u64 mask = 0, miss = 0;

			for (j = 0; j < n; j++) {
				bool ok = true;

				for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++)
					if (pfx_is_direct(cf, c, j, k) &&
					    BPFIPT_FAST_PFX_FIELD(cf->pfx[c], j, k) == f &&
					    !pfx_holds(cf, c, j, k, tb->cut[i]))
						ok = false;
				if (ok)
					mask |= 1ULL << j;
				else if (cf->pfx_plain[c] & (1ULL << j))
					miss |= cf->pfx_skip[c][j][0];
			}
			tb->mask[i] = mask;
			tb->miss[i] = miss;
		}
		/* past the last cut, copies of it: a value above every cut finds
		 * the last, whichever of them the search ends on */
		for (i = m; i < BPFIPT_PFX_CUTS; i++) {
			tb->cut[i] = ~0u;
			tb->mask[i] = tb->mask[m - 1];
			tb->miss[i] = tb->miss[m - 1];
		}
		for (i = 0, k = 0; i < BPFIPT_PFX_SMALL; i++) {
			while (k + 1 < m && tb->cut[k + 1] <= i)
				k++;
			tb->small[i] = (__u8)k;
		}
		/* the search's steps over the smallest power of 2 of at least m
		 * cuts, 2^k: 4-ary steps of 2^(k-2), 2^(k-4), ... down to 1 or
		 * 2, then a binary one of 1 when k is odd */
		for (i = 1, k = 0; i < m; i *= 2, k++)
			;
		tb->quart = k >= 2 ? (__u16)(1u << (k - 2)) : 0;
		tb->bin = k % 2;
	}
	return 0;
}

/* The slot prefix of chain c from slot `first` (BPFIPT_FAST_PFX_*): its rules
 * while pfx_rule() takes them. Returns the fast bits that say so (their number,
 * BPFIPT_FAST_PFX_END when the policy slot follows them); the fields in
 * cf->pfx[c], those a range decides in cf->pfx_direct[c], pfx_lo and pfx_span,
 * the rules' slots and what they skip in pfx_slot and pfx_skip, the
 * walk's first slot after it in pfx_next. */
static __u32 prefix_of(const struct cp_compiled *cc, __u32 c, __u32 first, struct bpfipt_conf *cf)
{
	struct pfx_build b = { .cc = cc, .cf = cf, .c = c };
	__u32 s, k, at;
	int r;

	memset(cf->pfx[c], 0, sizeof(cf->pfx[c]));
	memset(cf->pfx_direct[c], 0, sizeof(cf->pfx_direct[c]));
	cf->pfx_cont[c] = 0;
	cf->pfx_extra[c] = 0;
	cf->pfx_log[c] = 0;
	cf->pfx_tgrp[c] = 0;
	pfx_cut(&b, 0);
	for (s = first;; s++) {
		at = b.n;
		r = pfx_rule(&b, s, 0);
		if (r > 0) {	/* a verdict every packet takes: as the policy */
			s = cc->policy_slot[c];
			break;
		}
		if (r < 0) {
			pfx_cut(&b, at);
			break;
		}
	}
	/* a prefix the walk follows is tested by every packet that walks: at most
	 * BPFIPT_FAST_PFX_OPEN rules (sixteen cost a walking packet of a 100-rule
	 * chain of unlike rules ~70 ns, eight ~50; docs/performance.md), and only
	 * the broad ones at the top of the chain: a rule of BPFIPT_FAST_PFX_FIELDS
	 * fields (-s, -p and both ports: one of many unlike rules) ends it, since
	 * few packets match it and every walking packet would test it (four such
	 * rules: ~25 ns on each, docs/performance.md). It ends before a rule of
	 * the chain itself: the walk starts there with an empty stack; and before
	 * a goto or RETURN of the chain itself, after which the walk must not come
	 * back to the chain's rules. */
	if (s != cc->policy_slot[c]) {
		__u32 open = b.n < BPFIPT_FAST_PFX_OPEN ? b.n : BPFIPT_FAST_PFX_OPEN;

		for (k = 0; k < open && b.nf[k] < BPFIPT_FAST_PFX_FIELDS &&
			    !((b.go[k] || b.ret[k]) && !b.lvl[k]); k++)
			;
		if (k < b.n) {
			while (k > 0 && b.lvl[k])
				k--;
			s = cf->pfx_slot[c][k];
			pfx_cut(&b, k);
		}
	} else {
		pfx_chain_end(&b, 0, 0);	/* the chain's own gotos and RETURNs */
	}
	if (!b.n || pfx_tables(cf, c, b.n))
		return 0;
	cf->pfx_next[c] = s;
	{
		const struct bpfipt_slot *pol = &cc->slots[c][cc->policy_slot[c]];

		cf->pfx_pctr[c] = cnt_phys(cf, pol->counter);
		cf->pfx_pverdict[c] = (__u8)pol->verdict;
		cf->pfx_prejw[c] = (__u8)pol->reject_with;
	}
	return b.n << 8 | (s == cc->policy_slot[c] ? BPFIPT_FAST_PFX_END : 0);
}

/* The array fields generation cf reads in chain c from its row of each in
 * bpfipt_fields (bits 1 << BPFIPT_F_*): those the chain looks up, and those a
 * rule of its slot prefix tests by its vector, not by a range (fast_prefix()
 * then asks bpfipt_field_vec()). Fields past a prefix's end are 0 (the source:
 * no array). The other rows are never read, and not written. */
static __u32 conf_fields_read(const struct bpfipt_conf *cf, __u32 c)
{
	__u32 m = cf->lookup[c] & BPFIPT_ARRAY_FIELDS, j, k, f;

	for (j = 0; j < BPFIPT_FAST_PFX_MAX; j++)
		for (k = 0; k < BPFIPT_FAST_PFX_FIELDS; k++) {
			f = BPFIPT_FAST_PFX_FIELD(cf->pfx[c], j, k);
			if (f < BPFIPT_F_MAX && (BPFIPT_ARRAY_FIELDS & (1u << f)) &&
			    !pfx_is_direct(cf, c, j, k))
				m |= 1u << f;
		}
	return m;
}

/* Vector i's window past its chunk 0, every vector's own in a windowed pool:
 * chunks *lo .. *lo + *n - 1 (the constant vectors, i >= cc->nvecs: all). */
static void win_past0(const struct cp_compiled *cc, size_t i, __u32 *lo, __u32 *n)
{
	const struct cp_vwin *w = i < cc->nvecs ? &cc->vw[i] : NULL;
	__u32 l = w ? w->lo : 0, h = w ? w->lo + w->n : cc->nchunks;

	if (l < 1)
		l = 1;
	*lo = l;
	*n = h > l ? h - l : 0;
}

/* A windowed pool's entries before the summary rows (bpfipt.h, BPFIPT_WIN_WORD):
 * each vector's chunk 0, then the chunks its window owns past it. */
static size_t win_chunks(const struct cp_compiled *cc)
{
	size_t nv = (size_t)cc->nvecs + BPFIPT_NCHAINS, total = nv;
	__u32 lo, n;

	for (size_t i = 0; i < nv; i++) {
		win_past0(cc, i, &lo, &n);
		total += n;
	}
	return total;
}

/* The pool windowed (BPFIPT_C_WINDOWS) when its whole vectors would take more
 * than POOL_FLAT_MAX and windows half the entries or fewer. A windowed walk
 * computes each chunk's entry from its window (bench/pktcost --chain-sizes 3000:
 * 5-10 ns a packet for 17 -> 10.5 MB, kept flat); with the summary rows its first
 * step's order makes it cheaper than flat for many user chains (10 000: 193-268
 * against 239-329 ns, 161 -> 46 MB). BPF_IPTABLES_POOL=flat or =windows decides
 * instead (tests, and measurements side by side). */
#define POOL_FLAT_MAX ((size_t)32 << 20)

static bool pool_windows(const struct cp_compiled *cc)
{
	const char *e = getenv("BPF_IPTABLES_POOL");
	size_t nv = (size_t)cc->nvecs + BPFIPT_NCHAINS, win;
	size_t rows = cc->nchunks >= BPFIPT_ROWS_MIN ? nv * ((cc->nchunks + 63) / 64) : 0;

	if (cc->nchunks < 2)
		return false;
	win = win_chunks(cc);
	if (win + rows >= BPFIPT_WIN_ENTRIES)
		return false;
	if (e && (!strcmp(e, "flat") || !strcmp(e, "windows")))
		return e[0] == 'w';
	return nv * cc->nchunks * POOL_CHUNK_BYTES > POOL_FLAT_MAX && 2 * win <= nv * cc->nchunks;
}

/* The pool's entries before the summary rows (bpfipt.h, "Pool"). */
static size_t pool_chunks(const struct cp_compiled *cc, const struct bpfipt_conf *cf)
{
	if (!(cf->flags & BPFIPT_C_WINDOWS))
		return ((size_t)cc->nvecs + BPFIPT_NCHAINS) * cf->nchunks;
	return win_chunks(cc);
}

/* The share of addresses a filter level of n blocks of g bits passes (n over
 * the 2^g blocks, at most 1). */
static double level_pass(size_t n, unsigned int g)
{
	double f = (double)n;

	for (unsigned int k = 0; k < g && f >= 1e-30; k++)
		f /= 2;
	return f < 1 ? f : 1;
}

/* The folded lists' filters (bpfipt.h, bpfipt_ghash()), for each list that fits
 * the bitmap: the first level g1, its shortest prefix; and the second g2 (one
 * of its longer prefix lengths, its prefixes of g2 bits or more there, the
 * others at g1) that lets the fewest addresses through, if any lets fewer
 * than g1 alone. */
static void fold_filters(const struct cp_compiled *cc, struct bpfipt_conf *cf)
{
	for (__u32 c = 0; c < BPFIPT_NCHAINS; c++) {
		for (__u32 d = 0; d < 2; d++) {
			size_t b, e, nlen[129] = { 0 }, below = 0;
			unsigned int g1 = 129, g2 = 0;
			const struct cp_lpm *l;
			double best;

			if (!cf->gfold[c][d])
				continue;
			l = group_slice(cc, cc->slots[c][cf->gfold[c][d] - 1].group, &b, &e);
			if (b == e || e - b > BPFIPT_GBIT_MAX)
				continue;
			for (size_t i = b; i < e; i++) {
				unsigned int plen = l->e ? l->e[i].plen : l->e6[i].plen;

				nlen[plen]++;
				if (plen < g1)
					g1 = plen;
			}
			if (!g1)
				continue;
			best = level_pass(e - b, g1);
			for (unsigned int g = g1 + 1; g <= 128; g++) {
				double pass;

				below += nlen[g - 1];
				if (!nlen[g])
					continue;
				pass = level_pass(below, g1) + level_pass(e - b - below, g);
				if (pass < best) {
					best = pass;
					g2 = g;
				}
			}
			cf->gfold_g[c][d][0] = (__u8)g1;
			cf->gfold_g[c][d][1] = (__u8)g2;
			cf->flags |= BPFIPT_C_TBITS;
		}
	}
}

/* The conf of cc: sizes, and the fields that never vary in a chain (never looked
 * up: folded into one vector per chain, written to cv). */
static int gen_conf(const struct dp_inst *in, const struct cp_compiled *cc,
		    struct bpfipt_conf *cf, __u64 *cv, struct ipt_err *err)
{
	__u32 nwords = cc->nwords, total = 0, vid = 0, c, k;
	bool cst = false;
	int f, r;

	memset(cf, 0, sizeof(*cf));
	cf->nwords = nwords;
	cf->nchunks = (nwords + BPFIPT_CHUNK_WORDS - 1) / BPFIPT_CHUNK_WORDS;
	if (pool_windows(cc))
		cf->flags |= BPFIPT_C_WINDOWS;
	if (cf->nchunks >= BPFIPT_ROWS_MIN) {	/* the summary rows, after the chunks */
		cf->nrows = (cf->nchunks + 63) / 64;
		cf->rbase = pool_chunks(cc, cf);
	}
	cf->ncpus = in->ncpus;
	cnt_layout(cc, cf);
	if (cnt_map_entries(cf) <= BPFIPT_CNT_FIXED)
		cf->flags |= BPFIPT_C_CNT_FIXED;
	if (cc->ntuples)
		cf->flags |= BPFIPT_C_TBITS;	/* written by gen_build() */
	cf->nifs = cc->iif.n + cc->oif.n;
	memset(cv, 0xff, (size_t)BPFIPT_NCHAINS * nwords * 8);
	for (c = 0; c < BPFIPT_NCHAINS; c++) {
		cf->nslots[c] = cc->nslots[c];
		cf->slot_base[c] = total;
		cf->policy[c] = cc->policy_slot[c];
		cf->iif_dflt[c] = cc->iif.dflt[c];
		cf->oif_dflt[c] = cc->oif.dflt[c];
		cf->cvec[c] = cc->nvecs + c;
		cf->full[c] = cc->full_vec[c];
		total += cc->nslots[c] + cc->nmslots[c];
		for (f = -4; f < NFA; f++) {
			bool hasf = false;
			int field;

			switch (f) {
			case -4:
				r = lpm_const(&cc->src, c, cc->nvecs, &cst, &vid, cf->full[c], &hasf,
					      "source", err);
				field = BPFIPT_F_SRC;
				break;
			case -3:
				r = lpm_const(&cc->dst, c, cc->nvecs, &cst, &vid, cf->full[c], &hasf,
					      "destination", err);
				field = BPFIPT_F_DST;
				break;
			case -2:
				r = if_const(&cc->iif, c, cc->nvecs, &cst, &vid, cf->full[c], &hasf, err);
				field = BPFIPT_F_IIF;
				break;
			case -1:
				r = if_const(&cc->oif, c, cc->nvecs, &cst, &vid, cf->full[c], &hasf, err);
				field = BPFIPT_F_OIF;
				break;
			default:
				r = array_const(cc, f, c, &cst, &vid, cf->full[c], &hasf, err);
				field = fa_field[f];
			}
			if (r)
				return r;
			/* IPv6: a packet with a cut chain skips these fields (classify()):
			 * one that is the same for all packets but not all slots' stays
			 * looked up, out of the constant vector */
			if (cst && cc->family == AF_INET6 && vid != BPFIPT_NO_VEC &&
			    ((1u << field) & CUT_FIELDS) && !vec_full(cc, vid, c))
				cst = false;
			/* the chain's only group slot on an address field: its list is
			 * not in the field's set (cp_compiled.gfold), classify()
			 * searches it; the field itself may be constant then */
			if (f < -2)
				cf->gfold[c][f == -3] = cc->gfold[c][f == -3];
			if (!cst) {
				cf->lookup[c] |= 1u << field;
				if (hasf && cf->full[c] != BPFIPT_NO_VEC)
					cf->fullf[c] |= 1u << field;
				continue;
			}
			for (k = 0; vid != BPFIPT_NO_VEC && k < nwords; k++)
				cv[(size_t)c * nwords + k] &=
					cp_vec_chunk(cc, vid, k / BPFIPT_CHUNK_WORDS)[k % BPFIPT_CHUNK_WORDS];
		}
		/* the empty slots before the policy (cp_compiled.npad): out of every
		 * AND the walk takes */
		for (k = cc->policy_slot[c] - cc->npad[c]; k < cc->policy_slot[c]; k++)
			cv[(size_t)c * nwords + k / 64] &= ~(1ULL << (k % 64));
		for (k = 0; k < cc->nslots[c]; k++) {
			if (c != BPFIPT_OUTPUT && (cc->slots[c][k].xflags & BPFIPT_X_MARK))
				cf->flags |= BPFIPT_C_TC_INGRESS;
			if (cc->slots[c][k].xflags & BPFIPT_X_CT)
				cf->flags |= BPFIPT_C_CT;
			if (cc->slots[c][k].xflags & BPFIPT_X_RECENT)
				cf->flags |= BPFIPT_C_RECENT;
			if (cc->slots[c][k].log)
				cf->flags |= BPFIPT_C_LOG;
			if (cc->slots[c][k].verdict == BPFIPT_V_REJECT)
				cf->flags |= BPFIPT_C_REJECT;
		}
		/* a chain that tells states apart: track connections at every hook */
		if (cf->lookup[c] & (1u << BPFIPT_F_CTSTATE))
			cf->flags |= BPFIPT_C_CT;
		cf->fast[c] = fast_of(cc, cf, c);
		if (cf->fast[c] & BPFIPT_FAST_TUPLE) {
			const struct bpfipt_slot *s0 = &cc->slots[c][0], *s1 = &cc->slots[c][1];

			cf->tfast[c] = (struct bpfipt_tfast){
				.group = s0->group, .counter = cnt_phys(cf, s0->counter),
				.pcounter = cnt_phys(cf, s1->counter), .splen = s0->tp_splen,
				.dplen = s0->tp_dplen, .ports = s0->tp_ports, .verdict = s0->verdict,
				.reject_with = s0->reject_with, .pverdict = s1->verdict,
				.preject_with = s1->reject_with,
			};
			tuple_bounds(cc, &cf->tfast[c]);
		}
		if (!cf->fast[c])
			cf->fast[c] = prefix_of(cc, c, 0, cf);
		else if (!(cf->fast[c] & BPFIPT_FAST_MISS))	/* after the group slot 0 */
			cf->fast[c] |= prefix_of(cc, c, 1, cf);
	}
	fold_filters(cc, cf);
	return 0;
}

/* A tuple key as the family's hash holds it: IPv6 struct bpfipt_tuple6_key, the
 * compiler's own form (cp_compiled.tuples), IPv4 struct bpfipt_tuple_key. */
static size_t tkey_size(bool v6)
{
	return v6 ? sizeof(struct bpfipt_tuple6_key) : sizeof(struct bpfipt_tuple_key);
}

static void tkey_to_map(const struct bpfipt_tuple6_key *k, bool v6, void *out)
{
	struct bpfipt_tuple_key k4 = {
		.group = k->group, .src = k->src[0], .dst = k->dst[0],
		.sport = k->sport, .dport = k->dport, .proto = k->proto,
	};

	if (v6)
		memcpy(out, k, sizeof(*k));
	else
		memcpy(out, &k4, sizeof(k4));
}

static void tkey_from_map(const void *in, bool v6, struct bpfipt_tuple6_key *k)
{
	struct bpfipt_tuple_key k4;

	if (v6) {
		memcpy(k, in, sizeof(*k));
		return;
	}
	memcpy(&k4, in, sizeof(k4));
	*k = (struct bpfipt_tuple6_key){
		.group = k4.group, .src = { k4.src }, .dst = { k4.dst },
		.sport = k4.sport, .dport = k4.dport, .proto = k4.proto,
	};
}

/* The tuple groups' keys (bpfipt.h, "A tuple group") as the hash holds them, each
 * with its rule's offset in the run, in *k and v[] (malloc'd). A run's counters
 * are consecutive and never shared (cnt_layout() shares address groups' only), so
 * the slot's physical counter + the offset is the rule's. */
static int tuple_entries(const struct cp_compiled *cc, void **k, __u32 **v)
{
	bool v6 = cc->family == AF_INET6;
	size_t ksz = tkey_size(v6);

	*k = malloc((cc->ntuples ? cc->ntuples : 1) * ksz);
	*v = malloc((cc->ntuples ? cc->ntuples : 1) * sizeof(**v));
	if (!*k || !*v) {
		free(*k);
		free(*v);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < cc->ntuples; i++) {
		tkey_to_map(&cc->tuples[i].k, v6, (char *)*k + i * ksz);
		(*v)[i] = cc->tuples[i].off;
	}
	return 0;
}

static int fill_tuples(int fd, const struct cp_compiled *cc, struct ipt_err *err)
{
	void *k;
	__u32 *v;
	int r;

	if (!cc->ntuples)
		return 0;
	if (tuple_entries(cc, &k, &v))
		return dp_fail(err, -ENOMEM, "out of memory");
	r = update_many(fd, k, v, cc->ntuples, tkey_size(cc->family == AF_INET6), sizeof(*v));
	free(k);
	free(v);
	return r ? dp_fail(err, r, "cannot fill map g_tuple") : 0;
}

/* The address of entry i of list l as bpfipt_ghash() takes it: high and low
 * 64 bits, host order (IPv4: the high 32 bits). */
static void entry_hilo(const struct cp_lpm *l, size_t i, __u64 *hi, __u64 *lo)
{
	*hi = *lo = 0;
	if (l->e) {
		*hi = (__u64)ntohl(l->e[i].addr) << 32;
		return;
	}
	for (int k = 0; k < 8; k++) {
		*hi = *hi << 8 | l->e6[i].addr[k];
		*lo = *lo << 8 | l->e6[i].addr[8 + k];
	}
}

/* The tuple bitmap of cc (bpfipt.h, bpfipt_tbit(), bpfipt_tbit6()): the bit of
 * each of its keys set, and each folded list's bits (bpfipt_gprefix(), cf's
 * filters, s the generation's sets), the rest clear. */
static int tbits_write(int fd, const struct cp_compiled *cc, const struct bpfipt_conf *cf,
		       const struct sets *s, struct ipt_err *err)
{
	size_t len = (size_t)BPFIPT_TBITS_WORDS * 8;
	__u64 *w = map_mmap(fd, len, true, err);

	if (!w)
		return -ENOMEM;
	memset(w, 0, len);
	for (__u32 c = 0; c < BPFIPT_NCHAINS; c++) {
		for (__u32 d = 0; d < 2; d++) {
			__u32 grp, g1 = cf->gfold_g[c][d][0], g2 = cf->gfold_g[c][d][1];
			const struct cp_lpm *l;
			size_t b, e;

			if (!g1)
				continue;
			grp = cc->slots[c][cf->gfold[c][d] - 1].group;
			l = group_slice(cc, grp, &b, &e);
			for (size_t i = b; i < e; i++) {
				__u64 hi, lo, bit;
				__u32 word;

				entry_hilo(l, i, &hi, &lo);
				bpfipt_gprefix(s->gdesc[grp], g1, g2,
					       l->e ? l->e[i].plen : l->e6[i].plen, hi, lo, &word,
					       &bit);
				w[word] |= bit;
			}
		}
	}
	for (__u32 i = 0; i < cc->ntuples; i++) {
		__u32 b;

		if (cc->family == AF_INET6) {
			b = bpfipt_tbit6(&cc->tuples[i].k);
		} else {
			struct bpfipt_tuple_key k;

			tkey_to_map(&cc->tuples[i].k, false, &k);
			b = bpfipt_tbit(&k);
		}
		w[b / 64] |= 1ULL << (b % 64);
	}
	munmap(w, page_round(len));
	return 0;
}

struct tuple_ent {
	struct bpfipt_tuple6_key k;
	__u32 v;
};

static int tuple_ent_cmp(const void *a, const void *b)
{
	return cp_tuple_key_cmp(&((const struct tuple_ent *)a)->k,
				&((const struct tuple_ent *)b)->k);
}

/* The spare generation's tuple hash fd made to hold exactly cc's tuples, in
 * place: its entries read in batches, the keys cc no longer has deleted, the
 * new and changed ones written. A fresh map would cost the outer map's grace
 * period: a -A into 10k rules of one tuple group waited 15-20 ms for it. -1 (the
 * map may be half written; it is not in use): make a new one. */
static int tuple_sync(int fd, const struct cp_compiled *cc)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	bool v6 = cc->family == AF_INET6;
	size_t ksz = tkey_size(v6);
	char *ok = NULL, *put = NULL, *del = NULL;
	__u32 *ov = NULL, *putv = NULL, n = 0, cap = 1024, batch, cnt;
	__u32 i = 0, j = 0, nput = 0, ndel = 0;
	struct tuple_ent *old = NULL;
	int r = -1;

	for (;;) {
		void *k2 = realloc(ok, cap * ksz), *v2 = realloc(ov, cap * sizeof(*ov));

		if (k2)
			ok = k2;
		if (v2)
			ov = v2;
		if (!k2 || !v2)
			goto out;
		cnt = cap - n;
		if (!bpf_map_lookup_batch(fd, n ? &batch : NULL, &batch, ok + n * ksz, ov + n, &cnt,
					  &bo)) {
			n += cnt;
			if (n == cap)
				cap *= 2;
			continue;
		}
		if (errno == ENOENT) {
			n += cnt;
			break;
		}
		if (errno != ENOSPC || cap > (1u << 26))
			goto out;
		cap *= 2;	/* a bucket did not fit: the same batch again, larger */
	}
	old = malloc((n ? n : 1) * sizeof(*old));
	put = malloc((cc->ntuples ? cc->ntuples : 1) * ksz);
	putv = malloc((cc->ntuples ? cc->ntuples : 1) * sizeof(*putv));
	del = malloc((n ? n : 1) * ksz);
	if (!old || !put || !putv || !del)
		goto out;
	for (i = 0; i < n; i++) {
		tkey_from_map(ok + i * ksz, v6, &old[i].k);
		old[i].v = ov[i];
	}
	qsort(old, n, sizeof(*old), tuple_ent_cmp);
	/* both sorted by cp_tuple_key_cmp (cc->tuples: tuples_finish()) */
	for (i = 0, j = 0; i < n || j < cc->ntuples;) {
		const struct cp_tuple *t = &cc->tuples[j];
		int c = i == n ? 1 : j == cc->ntuples ? -1 : cp_tuple_key_cmp(&old[i].k, &t->k);

		if (c < 0) {
			tkey_to_map(&old[i++].k, v6, del + ndel++ * ksz);
			continue;
		}
		if (c > 0 || old[i].v != t->off) {
			tkey_to_map(&t->k, v6, put + nput * ksz);
			putv[nput++] = t->off;
		}
		if (c == 0)
			i++;
		j++;
	}
	if (delete_many(fd, del, ndel, ksz))
		goto out;
	r = update_many(fd, put, putv, nput, ksz, sizeof(*putv)) ? -1 : 0;
out:
	free(ok);
	free(ov);
	free(old);
	free(put);
	free(putv);
	free(del);
	return r;
}

/* Generation `slot`'s tuple hash holding cc's tuples: the one there, as it is
 * when its digest (old->tuple_sum, what slot's conf says of it) is cc's, made
 * to hold them when it has room (tuple_sync()), else a new one. Reading and
 * sorting 10 000 entries to find them unchanged was a fifth of the CPU of an
 * -A into a chain of 10 000 rules. */
static int tuple_get(const struct dp_inst *in, __u32 slot, const struct bpfipt_conf *old,
		     const struct cp_compiled *cc, struct gen *g, struct ipt_err *err)
{
	bool same = old->tuple_sum == cc->tuple_sum && old->ntuple == cc->ntuples;
	enum om om = cc->family == AF_INET6 ? OM_TUPLE6 : OM_TUPLE;
	__u32 id;
	int fd, r;

	/* The sum stays in slot's conf until the next one is installed: from
	 * here on the hash may hold anything (a command killed half-way), so it
	 * says so first. */
	if (!same && old->tuple_sum) {
		struct bpfipt_conf c = *old;

		c.tuple_sum = 0;
		if (bpf_map_update_elem(in->map[IM_CONF], &slot, &c, BPF_ANY))
			return dp_fail(err, -errno, "cannot write bpfipt_conf");
	}
	if (!bpf_map_lookup_elem(in->outer[om], &slot, &id) &&
	    (fd = bpf_map_get_fd_by_id(id)) >= 0) {
		struct bpf_map_info mi = {};
		__u32 ml = sizeof(mi);

		if (same) {
			g->fd[om] = fd;
			return 0;
		}
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && mi.max_entries >= cc->ntuples &&
		    !tuple_sync(fd, cc)) {
			g->fd[om] = fd;
			return 0;
		}
		close(fd);
	}
	/* a new one (inner_get() never empties a hash of more entries), filled */
	if ((r = inner_get(in, om, slot, cc->ntuples, UINT32_MAX, g, err)))
		return r;
	return fill_tuples(g->fd[om], cc, err);
}

/* Chunk src (n words, the rest 0) into pool entry dst with its summary word; the
 * summary. */
static __u64 chunk_put(__u64 *dst, const __u64 *src, size_t n)
{
	__u64 sum = 0;

	memcpy(dst, src, n * 8);
	memset(dst + n, 0, (BPFIPT_POOL_WORDS - n) * 8);
	for (size_t j = 0; j < n; j++)
		sum |= (__u64)(dst[j] != 0) << j;
	dst[BPFIPT_CHUNK_WORDS] = sum;
	return sum;
}

/* Chunk k of vector i of cc (a constant vector's from cv), its words. */
static const __u64 *src_chunk(const struct cp_compiled *cc, const __u64 *cv, size_t i, __u32 k,
			      size_t *len)
{
	*len = cc->nwords - (size_t)k * BPFIPT_CHUNK_WORDS;
	if (*len > BPFIPT_CHUNK_WORDS)
		*len = BPFIPT_CHUNK_WORDS;
	if (i < cc->nvecs)
		return cp_vec_chunk(cc, i, k);
	return cv + (i - cc->nvecs) * cc->nwords + (size_t)k * BPFIPT_CHUNK_WORDS;
}

/* A windowed pool (bpfipt.h, BPFIPT_WIN_WORD): each vector's chunk 0 with its
 * chunk bitmap and window, the chunks the windows own past it (the constant
 * vectors, cv, whole), the summary rows. */
static int pool_write_windows(const struct cp_compiled *cc, const struct bpfipt_conf *cf,
			      const __u64 *cv, __u64 *pool, struct ipt_err *err)
{
	size_t nv = (size_t)cc->nvecs + BPFIPT_NCHAINS, nent = pool_chunks(cc, cf), e = nv, i, len;
	__u32 nchunks = cf->nchunks, k, lo, n;
	__u64 *sum = malloc(nent * sizeof(*sum));
	__u32 *first = malloc(nv * sizeof(*first));

	if (!sum || !first) {
		free(sum);
		free(first);
		return dp_fail(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < nv; i++) {
		const __u64 *c = src_chunk(cc, cv, i, 0, &len);

		sum[i] = chunk_put(pool + i * BPFIPT_POOL_WORDS, c, len);
		win_past0(cc, i, &lo, &n);
		first[i] = e;
		for (k = lo; k < lo + n; k++, e++) {
			c = src_chunk(cc, cv, i, k, &len);
			sum[e] = chunk_put(pool + e * BPFIPT_POOL_WORDS, c, len);
		}
	}
	if (e != nent || nent >= BPFIPT_WIN_ENTRIES) {
		free(sum);
		free(first);
		return dp_fail(err, -EPROTO, "internal: the windowed pool's size");
	}
	if (cf->nrows)
		memset(pool + (size_t)cf->rbase * BPFIPT_POOL_WORDS, 0,
		       nv * cf->nrows * POOL_CHUNK_BYTES);
	for (i = 0; i < nv; i++) {
		__u64 *c0 = pool + i * BPFIPT_POOL_WORDS, w;
		__u64 *row = pool + ((size_t)cf->rbase + i * cf->nrows) * BPFIPT_POOL_WORDS;
		__u32 bfirst = i < cc->nvecs ? first[cc->vw[i].base] : first[i];

		win_past0(cc, i, &lo, &n);
		w = lo | (__u64)n << 8 | (__u64)first[i] << 16 | (__u64)bfirst << 40;
		c0[BPFIPT_WIN_WORD] = w;
		for (k = 0; k < nchunks; k++) {
			/* bpfipt.bpf.c's win_entry() */
			__u64 s = sum[!k ? i : k - lo < n ? first[i] + k - lo : bfirst + k - 1];

			if (s)
				c0[BPFIPT_CHUNK_WORDS + 1 + k / 64] |= 1ULL << (k % 64);
			if (cf->nrows)
				row[(k / 64) * BPFIPT_POOL_WORDS + k % 64] = s;
		}
	}
	free(sum);
	free(first);
	return 0;
}

/* Write generation `slot` from cc: its maps reused when they fit, else new ones
 * (g->fresh). old: what the slot held before. Nothing is installed yet. */
static int gen_build(const struct dp_inst *in, __u32 slot, const struct bpfipt_conf *old,
		     const struct cp_compiled *cc, const __u64 (*seed)[2], unsigned int nseed,
		     const __u32 *carry, unsigned int ncarry, const __u32 *rc_ids, int twin,
		     struct gen *g, struct ipt_err *err)
{
	struct bpfipt_conf *cf = &g->conf;
	struct sets sets = { 0 };
	size_t total, bytes, i, k, npool;
	__u32 nwords, nchunks, nvecs, rows[BPFIPT_NCHAINS];
	__u64 *cv = NULL, *pool;
	bool v6 = cc->family == AF_INET6, fields;
	void *p;
	int r, m;

	memset(g, 0, sizeof(*g));
	for (m = 0; m < OM_MAX; m++)
		g->fd[m] = -1;
	g->twin = twin;
	if ((r = validate(cc, err)))
		return r;
	nwords = cc->nwords;
	nvecs = cc->nvecs;
	cv = malloc((size_t)BPFIPT_NCHAINS * nwords * 8);
	if (!cv)
		return dp_fail(err, -ENOMEM, "out of memory");
	if ((r = gen_conf(in, cc, cf, cv, err)))
		goto out;
	nchunks = cf->nchunks;
	total = (size_t)cf->slot_base[BPFIPT_OUTPUT] + cc->nslots[BPFIPT_OUTPUT] +
		cc->nmslots[BPFIPT_OUTPUT];

	if ((r = sets_flatten(cc, cf, &sets, err)))
		goto out;
	if (cf->npages <= BPFIPT_IVAL_FIXED)
		cf->flags |= BPFIPT_C_IVAL_FIXED;
	if ((r = inner_get(in, ival_om(cf, v6), slot, cf->npages, 0, g, err)))
		goto out;
	/* a generation that reads no field array has none: its slot keeps what
	 * the spare had (a generation that needs one then finds it), empty at first */
	for (m = 0, k = 0; m < NFA; m++)
		k |= 1u << fa_field[m];
	if (k != BPFIPT_ARRAY_FIELDS) {	/* classify() gates its reads by the header's */
		r = dp_fail(err, -EPROTO, "internal: BPFIPT_ARRAY_FIELDS is not the array fields");
		goto out;
	}
	for (i = 0, fields = false; i < BPFIPT_NCHAINS; i++) {
		rows[i] = conf_fields_read(cf, (__u32)i);
		fields |= rows[i] != 0;
	}
	npool = pool_chunks(cc, cf) + (size_t)(nvecs + BPFIPT_NCHAINS) * cf->nrows;
	if (!(cf->flags & BPFIPT_C_WINDOWS) && !cf->nrows && npool <= BPFIPT_PAGE_CHUNKS)
		cf->flags |= BPFIPT_C_ONE_PAGE;
	if (total <= BPFIPT_SLOTS_FIXED) {
		cf->flags |= BPFIPT_C_SLOTS_FIXED;
	} else {	/* past the rows, BPFIPT_POOL_SLOTS an entry (slot_dst()) */
		cf->sbase = npool;
		npool += (total + BPFIPT_POOL_SLOTS - 1) / BPFIPT_POOL_SLOTS;
	}
	if ((fields && (r = inner_get(in, OM_FIELDS, slot, om_defs[OM_FIELDS].fixed, 0, g, err))) ||
	    (r = inner_get(in, OM_IFS, slot, cf->nifs, old->nifs, g, err)) ||
	    (r = pages_get(in, slot, pool_pages(npool), g, err)) ||
	    ((cf->flags & BPFIPT_C_SLOTS_FIXED) &&
	     (r = inner_get(in, OM_SLOTSFX, slot, total, 0, g, err))) ||
	    (r = inner_get(in, OM_EXTRAS, slot, cc->nextras, 0, g, err)) ||
	    (r = inner_get(in, OM_LIMITS, slot, cc->nextras, 0, g, err)) ||
	    (r = inner_get(in, cnt_om(cf), slot, cnt_map_entries(cf), 0, g, err)) ||
	    ((cf->flags & BPFIPT_C_TBITS) &&
	     (r = inner_get(in, OM_TBITS, slot, BPFIPT_TBITS_WORDS, 0, g, err))))
		goto out;
	gen_outer_begin(in, slot, g);
	slot_pairs_drop(in, slot, cf, v6, g->npg);
	cf->ntuple = cc->ntuples;
	cf->tuple_sum = cc->tuple_sum;
	cp_crash_point("map-write");
	if ((r = tuple_get(in, slot, old, cc, g, err)))
		goto out;

	if ((r = sets_write(g->fd[ival_om(cf, v6)], &sets, cf, err)) ||
	    ((cf->flags & BPFIPT_C_TBITS) &&
	     (r = tbits_write(g->fd[OM_TBITS], cc, cf, &sets, err))))
		goto out;
	if ((r = fill_ifs(g->fd[OM_IFS], &cc->iif, &cc->oif, err)))
		goto out;
	cp_crash_point("map-write");

	/* the array fields: each one's flat id array at its base */
	for (i = 0; fields && i < (size_t)NFA; i++)
		if ((r = fa_write(g->fd[OM_FIELDS], cc, (int)i, rows, err)))
			goto out;
	cp_crash_point("map-write");

	/* pool: vector v, chunk k at entry v * nchunks + k; then the constant
	 * vectors; then, of BPFIPT_ROWS_MIN chunks or more, each one's summary rows
	 * (a windowed pool: pool_write_windows()) */
	pool = pool_mmap(g, &bytes, err);
	if (!pool) {
		r = -ENOMEM;
		goto out;
	}
	if (cf->flags & BPFIPT_C_WINDOWS) {
		r = pool_write_windows(cc, cf, cv, pool, err);
		munmap(pool, bytes);
		if (r)
			goto out;
		goto pool_done;
	}
	memset(pool + (size_t)cf->rbase * BPFIPT_POOL_WORDS, 0,
	       (size_t)(nvecs + BPFIPT_NCHAINS) * cf->nrows * POOL_CHUNK_BYTES);
	for (i = 0; i < (size_t)nvecs + BPFIPT_NCHAINS; i++) {
		__u64 *row = pool + ((size_t)cf->rbase + i * cf->nrows) * BPFIPT_POOL_WORDS;

		for (k = 0; k < nchunks; k++) {
			size_t n;
			const __u64 *src = src_chunk(cc, cv, i, k, &n);
			__u64 sum = chunk_put(pool + (i * nchunks + k) * BPFIPT_POOL_WORDS, src, n);

			if (sum)	/* the chunk bitmap, in chunk 0 */
				pool[i * nchunks * BPFIPT_POOL_WORDS + BPFIPT_CHUNK_WORDS + 1 +
				     k / 64] |= 1ULL << (k % 64);
			if (cf->nrows)	/* row k / 64, word k % 64 */
				row[(k / 64) * BPFIPT_POOL_WORDS + k % 64] = sum;
		}
	}
	munmap(pool, bytes);
pool_done:
	cp_crash_point("map-write");

	/* slots, chain after chain; extras; limits full */
	if (cf->flags & BPFIPT_C_SLOTS_FIXED) {
		bytes = page_round(total * sizeof(struct bpfipt_slot));
		p = map_mmap(g->fd[OM_SLOTSFX], bytes, true, err);
	} else {
		p = pool_mmap(g, &bytes, err);
	}
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < BPFIPT_NCHAINS; i++) {
		for (k = 0; k < cc->nslots[i] + cc->nmslots[i]; k++) {
			struct bpfipt_slot *sl = slot_dst(p, cf, cf->slot_base[i] + k);

			*sl = cc->slots[i][k];
			if (sl->xflags & (BPFIPT_X_GROUP_SRC | BPFIPT_X_GROUP_DST)) {
				unsigned int d = !(sl->xflags & BPFIPT_X_GROUP_SRC);

				sl->ival = sets.gdesc[sl->group];	/* a group slot: its set */
				if (cf->gfold[i][d] == k + 1)
					cf->gfold_set[i][d] = sl->ival;
			}
			sl->counter = cnt_phys(cf, sl->counter);
		}
	}
	munmap(p, bytes);
	cp_crash_point("map-write");
	if (cc->nextras) {
		bytes = cc->nextras * sizeof(*cc->extras);
		p = map_mmap(g->fd[OM_EXTRAS], bytes, true, err);
		if (!p) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(p, cc->extras, bytes);
		/* -m recent: the compiler's list index becomes the list's id */
		for (i = 0; i < cc->nextras; i++) {
			struct bpfipt_extra *x = (struct bpfipt_extra *)p + i;

			if (x->rc_flags && x->rc_table < cc->nrecent)
				x->rc_table = rc_ids[x->rc_table];
		}
		munmap(p, page_round(bytes));
	}
	for (i = 0; i < cc->nextras; i++) {
		struct bpfipt_limit_state ls = { 0 };	/* full credit */
		__u32 key = i;

		if (bpf_map_update_elem(g->fd[OM_LIMITS], &key, &ls, BPF_ANY)) {
			r = dp_fail(err, -errno, "cannot initialise a limit");
			goto out;
		}
	}

	/* counters: one row per CPU, the carried row, the shared ones; seeded;
	 * then their origins */
	g->cnt_len = cnt_map_entries(cf) * sizeof(struct bpfipt_counter);
	g->cnt = map_mmap(g->fd[cnt_om(cf)], g->cnt_len, true, err);
	if (!g->cnt) {
		r = -ENOMEM;
		goto out;
	}
	memset(g->cnt, 0, g->cnt_len);
	for (i = 0; seed && i < nseed && i < cc->ncounters; i++) {
		struct bpfipt_counter *b = &g->cnt[cnt_carry_at(cf, cnt_phys(cf, i))];

		b->packets = seed[i][0];
		b->bytes = seed[i][1];
	}
	for (i = 0; i < cc->ncounters; i++)
		cnt_origins(cf, g->cnt)[i] = carry && i < ncarry ? carry[i] : BPFIPT_NO_COUNTER;
out:
	sets_free(&sets);
	free(cv);
	if (r)
		gen_release(g);
	return r;
}

/* The counters map of generation `slot` (cf its conf) mmapped, *len bytes: the
 * counters, and their origins when `origins`. */
static struct bpfipt_counter *cnt_map(const struct dp_inst *in, __u32 slot,
				      const struct bpfipt_conf *cf, bool origins, bool wr,
				      size_t *len, struct ipt_err *err)
{
	struct bpfipt_counter *p;
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(in->outer[cnt_om(cf)], &slot, &id)) {
		dp_fail(err, -errno, "no counters in generation %u", slot);
		return NULL;
	}
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0) {
		dp_fail(err, -errno, "cannot open the counters");
		return NULL;
	}
	*len = (origins ? cnt_map_entries(cf) : cnt_entries(cf)) * sizeof(*p);
	p = map_mmap(fd, *len, wr, err);
	close(fd);
	return p;
}

/* The counters p of a generation (its conf cf), summed: n entries of
 * { packets, bytes }. */
static int cnt_sum(const struct bpfipt_counter *p, const struct bpfipt_conf *cf,
		   __u64 (**out)[2], unsigned int *n, struct ipt_err *err)
{
	__u64 (*v)[2] = calloc(cf->ncounters ? cf->ncounters : 1, sizeof(*v));
	size_t i, c;

	*out = NULL;
	*n = 0;
	if (!v)
		return dp_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < cf->ncounters; i++) {
		__u32 P = cnt_phys(cf, i);

		if (P >= cf->nper) {	/* shared: one entry */
			v[i][0] = p[cnt_carry_at(cf, P)].packets;
			v[i][1] = p[cnt_carry_at(cf, P)].bytes;
			continue;
		}
		for (c = 0; c <= cf->ncpus; c++) {	/* the CPUs' rows, the carried row */
			v[i][0] += p[c * cf->nper + P].packets;
			v[i][1] += p[c * cf->nper + P].bytes;
		}
	}
	*out = v;
	*n = cf->ncounters;
	return 0;
}

/* Counters of generation `slot`, summed (cnt_sum()). */
static int gen_counters(const struct dp_inst *in, __u32 slot, const struct bpfipt_conf *cf,
			__u64 (**out)[2], unsigned int *n, struct ipt_err *err)
{
	struct bpfipt_counter *p;
	size_t len;
	int r;

	*out = NULL;
	*n = 0;
	if (!cf->nwords || !cf->ncounters)
		return 0;
	p = cnt_map(in, slot, cf, false, false, &len, err);
	if (!p)
		return -ENOMEM;
	r = cnt_sum(p, cf, out, n, err);
	munmap(p, page_round(len));
	return r;
}

/* The family index (bpfipt.h, "Generations") of this process's (ipt_af) and of
 * a compiled ruleset's. */
static unsigned int fam_of(int af)
{
	return af == AF_INET6;
}

/* The generation index of family fam in use: fam * 2 + 0 or 1 (an instance
 * written otherwise is read as its generation 0). */
static __u32 cur_of(const struct bpfipt_inst *iv, unsigned int fam)
{
	return fam * 2 + (iv->cur[fam] & 1);
}

static int read_cur(const struct dp_inst *in, __u32 *cur, struct bpfipt_conf *cf,
		    struct ipt_err *err)
{
	struct bpfipt_inst iv;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv))
		return dp_fail(err, -errno, "cannot read bpfipt_inst");
	*cur = cur_of(&iv, fam_of(ipt_af));
	if (bpf_map_lookup_elem(in->map[IM_CONF], cur, cf))
		return dp_fail(err, -errno, "cannot read bpfipt_conf");
	return 0;
}

int dp_inst_conf(const struct dp_inst *in, struct bpfipt_conf *cf, struct ipt_err *err)
{
	__u32 cur;

	return read_cur(in, &cur, cf, err);
}

static int write_inst(const struct dp_inst *in, const struct bpfipt_inst *iv, struct ipt_err *err)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(in->map[IM_INST], &zero, iv, BPF_ANY))
		return dp_fail(err, -errno, "cannot write bpfipt_inst");
	return 0;
}

/* ---------------------------------------------------- -m recent lists ---- */

/* The lists of the running instance: which ids exist, and their names. */
struct rc_names {
	bool have[BPFIPT_RECENT_TABLES];
	char name[BPFIPT_RECENT_TABLES][BPFIPT_RECENT_NAME];
};

static int recent_read(const struct dp_inst *in, struct rc_names *rn,
		       struct bpfipt_recent_table *t, struct ipt_err *err)
{
	__u32 key, *prev = NULL;

	while (!bpf_map_get_next_key(in->map[IM_RECENT], prev, &key)) {
		prev = &key;
		if (key >= BPFIPT_RECENT_TABLES)
			continue;
		if (bpf_map_lookup_elem_flags(in->map[IM_RECENT], &key, t, BPF_F_LOCK))
			return dp_fail(err, -errno, "cannot read bpfipt_recent");
		rn->have[key] = true;
		memcpy(rn->name[key], t->name, BPFIPT_RECENT_NAME);
		rn->name[key][BPFIPT_RECENT_NAME - 1] = '\0';
	}
	return 0;
}

/* Before the switch: every list the ruleset names gets its id (the list of
 * that name if it exists, else a new empty one), as xt_recent's checkentry
 * finds or creates it; a list whose stamp mask grows is emptied, as there. */
static int recent_prepare(const struct dp_inst *in, const struct cp_compiled *cc, __u32 *ids,
			  struct ipt_err *err)
{
	struct bpfipt_recent_table *t = NULL;
	struct rc_names *rn = NULL;
	bool taken[BPFIPT_RECENT_TABLES] = { false };
	unsigned int i, id;
	int r;

	if (!cc->nrecent)
		return 0;
	rn = calloc(1, sizeof(*rn));
	t = malloc(sizeof(*t));
	if (!rn || !t) {
		r = dp_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = recent_read(in, rn, t, err);
	for (i = 0; !r && i < cc->nrecent; i++) {
		const struct cp_recent_list *l = &cc->recent[i];

		for (id = 0; id < BPFIPT_RECENT_TABLES; id++)
			if (rn->have[id] && !strcmp(rn->name[id], l->name))
				break;
		if (id < BPFIPT_RECENT_TABLES) {
			taken[id] = true;
			ids[i] = id;
			if (bpf_map_lookup_elem_flags(in->map[IM_RECENT], &id, t, BPF_F_LOCK)) {
				r = dp_fail(err, -errno, "cannot read -m recent list %s", l->name);
				break;
			}
			if (l->nstamps_mask <= t->nstamps_mask)
				continue;
			memset(t->e, 0, sizeof(t->e));
			t->nentries = 0;
			t->nstamps_mask = l->nstamps_mask;
		} else {
			/* a new list: an id no list has (the old ruleset may still use
			 * any existing one until the switch) */
			for (id = 0; id < BPFIPT_RECENT_TABLES && (rn->have[id] || taken[id]); id++)
				;
			if (id == BPFIPT_RECENT_TABLES) {
				r = dp_fail(err, -ENOSPC, "too many -m recent lists (at most %u)",
					    BPFIPT_RECENT_TABLES);
				break;
			}
			taken[id] = true;
			ids[i] = id;
			memset(t, 0, sizeof(*t));
			snprintf(t->name, sizeof(t->name), "%s", l->name);
			t->mask = l->mask;
			t->nstamps_mask = l->nstamps_mask;
		}
		if (bpf_map_update_elem(in->map[IM_RECENT], &id, t,
					rn->have[id] ? BPF_F_LOCK | BPF_EXIST : BPF_NOEXIST))
			r = dp_fail(err, -errno, "cannot write -m recent list %s", l->name);
	}
out:
	free(rn);
	free(t);
	return r;
}

/* After the switch: a list no rule names any more goes, with its addresses
 * (xt_recent's destroy when the last rule using it goes). */
static void recent_gc(const struct dp_inst *in, const struct cp_compiled *cc, const __u32 *ids)
{
	__u32 key, next, *prev = NULL;
	unsigned int i;

	while (!bpf_map_get_next_key(in->map[IM_RECENT], prev, &next)) {
		bool used = false;

		for (i = 0; i < cc->nrecent && !used; i++)
			used = ids[i] == next;
		key = next;
		if (!used) {
			bpf_map_delete_elem(in->map[IM_RECENT], &key);
			prev = NULL;	/* restart: the deleted key is no position */
			continue;
		}
		prev = &key;
	}
}

/* One generation map into its outer map's slot, or out of it (inner < 0). */
/* o[m] for every m < n with want[m] (n <= OM_MAX + LZ_MAX), each in a thread of
 * its own: the kernel waits for an RCU grace period after every update or delete of
 * a map of maps (maybe_wait_bpf_programs(), 2-20 ms here); in threads the waits
 * overlap. */
static void outer_run_all(struct outer_set *o, const bool *want, int n)
{
	pthread_t th[OM_MAX + LZ_MAX];
	bool started[OM_MAX + LZ_MAX] = { false };
	int m;

	for (m = 0; m < n; m++) {
		if (!want[m])
			continue;
		started[m] = outer_set_start(&o[m], &th[m]);
	}
	for (m = 0; m < n; m++)
		if (started[m])
			pthread_join(th[m], NULL);
}

/*
 * The fresh maps of generation g into slot nxt of their outer maps, and the new
 * lazy maps lz[z] (-1: none) into their slots. The kernel waits for a grace
 * period after each update, so that the caller knows no program still sees the
 * old inner map. Slot nxt is not in use (the spare generation), and a lazy map's
 * slot was empty, so those waits order nothing for us: the updates overlap
 * (outer_run_all()), one grace period for all instead of one per map (the 9 in
 * a row were up to 80 ms of a one-rule change).
 */
static int outer_set_all(struct dp_inst *in, __u32 nxt, struct gen *g, const int *lz,
			 struct ipt_err *err)
{
	struct outer_set o[OM_MAX + LZ_MAX];
	bool want[OM_MAX + LZ_MAX];
	int m, r = 0;

	/* twins of the maps made since (the tuple hash); those begun while the
	 * generation was written (gen_outer_begin()) */
	gen_twins(in, g);
	gen_outer_join(g);
	for (m = 0; m < OM_MAX; m++) {
		o[m] = g->osent[m] ? g->os[m] : (struct outer_set){ .outer = in->outer[m],
								      .inner = g->fd[m],
								      .slot = nxt };
		want[m] = g->fresh[m] && !g->osent[m];
	}
	for (m = 0; m < LZ_MAX; m++) {
		o[OM_MAX + m] = (struct outer_set){ .outer = in->map[lazy_defs[m].slot],
						    .inner = lz[m] };
		want[OM_MAX + m] = lz[m] >= 0;
	}
	outer_run_all(o, want, OM_MAX + LZ_MAX);
	for (m = 0; m < OM_MAX + LZ_MAX; m++)
		if ((want[m] || (m < OM_MAX && g->osent[m])) && o[m].rc && !r)
			r = dp_fail(err, o[m].rc, "cannot install map %s",
				    m < OM_MAX ? om_defs[m].inner : lazy_defs[m - OM_MAX].name);
	if (g->pgsent && g->pgs.rc && !r)
		r = dp_fail(err, g->pgs.rc, "cannot install the pool's %u new pages", g->npgnew);
	return r;
}

/* Add v[i] (or subtract it, neg) to counter id i of generation `slot`, for
 * every i < n: on the carried row of a per-CPU counter (the data plane never
 * writes there), atomically on a shared one. */
static int cnt_add(const struct dp_inst *in, __u32 slot, const struct bpfipt_conf *cf,
		   __u64 (*v)[2], unsigned int n, bool neg, struct ipt_err *err)
{
	struct bpfipt_counter *p;
	size_t len;

	p = cnt_map(in, slot, cf, false, true, &len, err);
	if (!p)
		return -ENOMEM;
	for (unsigned int i = 0; i < n && i < cf->ncounters; i++) {
		__u32 P = cnt_phys(cf, i);
		struct bpfipt_counter *b = &p[cnt_carry_at(cf, P)];
		__u64 pk = neg ? -v[i][0] : v[i][0], by = neg ? -v[i][1] : v[i][1];

		if (P >= cf->nper) {
			__atomic_fetch_add(&b->packets, pk, __ATOMIC_RELAXED);
			__atomic_fetch_add(&b->bytes, by, __ATOMIC_RELAXED);
		} else {
			b->packets += pk;
			b->bytes += by;
		}
	}
	munmap(p, page_round(len));
	return 0;
}

/*
 * The spare generation of a family whose running one `cur` continues its
 * counters (BPFIPT_I_FOLD): after the carry, the spare counts only the runs
 * that were under way at the switch; a grace period later that count (late,
 * summed: gen_counters()) is final and goes to the counters that continue
 * theirs (the running one's origins).
 */
static int fold_in(const struct dp_inst *in, __u64 (*late)[2], unsigned int nlate, __u32 cur,
		   const struct bpfipt_conf *ccf, struct ipt_err *err)
{
	__u64 (*add)[2] = NULL;
	struct bpfipt_counter *p;
	unsigned int i;
	bool any = false;
	size_t len;
	int r;

	if (!ccf->nwords || !ccf->ncounters)
		return 0;
	for (i = 0; i < nlate && !any; i++)
		any = late[i][0] || late[i][1];
	if (!any)
		return 0;
	p = cnt_map(in, cur, ccf, true, false, &len, err);
	add = calloc(ccf->ncounters, sizeof(*add));
	if (!p || !add) {
		r = p ? dp_fail(err, -ENOMEM, "out of memory") : -ENOMEM;
		goto out;
	}
	for (i = 0; i < ccf->ncounters; i++) {
		__u32 o = cnt_origins(ccf, p)[i];

		if (o < nlate) {
			add[i][0] = late[o][0];
			add[i][1] = late[o][1];
		}
	}
	r = cnt_add(in, cur, ccf, add, ccf->ncounters, false, err);
out:
	if (p)
		munmap(p, page_round(len));
	free(add);
	return r;
}

/* fold_in() what spare generation `old` (its conf ocf) counted. */
static int gen_fold(const struct dp_inst *in, __u32 old, const struct bpfipt_conf *ocf,
		    __u32 cur, const struct bpfipt_conf *ccf, struct ipt_err *err)
{
	__u64 (*late)[2] = NULL;
	unsigned int nlate = 0;
	int r;

	if (!ccf->nwords || !ccf->ncounters)
		return 0;
	if (!(r = gen_counters(in, old, ocf, &late, &nlate, err)))
		r = fold_in(in, late, nlate, cur, ccf, err);
	free(late);
	return r;
}

unsigned long long dp_map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f) && sscanf(line, "memlock: %llu", &v) != 1)
		;
	if (f)
		fclose(f);
	return v;
}

/* What map m of generation `slot` holds in memory, 0 when the slot has none:
 * its entries times their size, from the map's info (the kernel's memlock
 * figure in /proc/self/fdinfo, dp_map_memlock(), cost four more calls a map,
 * ~0.1 ms of every change for the eight maps; the spare's threshold needs no
 * more than the entries' bytes). */
static size_t inner_bytes(const struct dp_inst *in, enum om m, __u32 slot)
{
	struct bpf_map_info mi = {};
	__u32 id, len = sizeof(mi);
	size_t v = 0;
	int fd;

	if (bpf_map_lookup_elem(in->outer[m], &slot, &id) || (fd = bpf_map_get_fd_by_id(id)) < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &mi, &len))
		v = (size_t)mi.max_entries *
		    (mi.value_size + (mi.type == BPF_MAP_TYPE_ARRAY ? 0 : mi.key_size));
	close(fd);
	return v;
}

/*
 * After a switch: when the maps of the generation just left (`old`, its conf
 * ocf; now the spare) hold more than in->spare_keep bytes, they are dropped from
 * their outer maps, and the generation settled at once instead of by the next
 * command (BPFIPT_I_PENDING, BPFIPT_I_FOLD): between two commands a large
 * ruleset is held once, not twice (a 1M deny list: 46 of the instance's 59 MB,
 * 106 MB with the spare's copy). A smaller spare stays, for the next command to
 * rewrite in place, and so does the tuple hash.
 *
 * One grace period for all: the kernel waits for one after each delete from an
 * outer map, the deletes overlap (outer_run_all()), and when they are done no
 * packet uses the old generation. Its counters, mapped before
 * (the mapping keeps the map), are then final and fold into the running one.
 * The next command pays for new maps: their creation and the outer maps' grace
 * period (outer_set_all()). A failure leaves the rest of the spare as it is,
 * for the next command to settle: it only costs memory.
 */
static void spare_drop(struct dp_inst *in, struct bpfipt_inst *iv, unsigned int fam,
		       __u32 old, const struct bpfipt_conf *ocf, __u32 cur,
		       const struct bpfipt_conf *ccf)
{
	bool drop[OM_MAX] = { false }, fold = iv->flags & BPFIPT_I_FOLD(fam), waited = false;
	struct bpfipt_counter *late = NULL;
	struct outer_set o[OM_MAX];
	struct ipt_err err = { 0 };
	size_t total = 0, b, npg;
	__u64 (*v)[2] = NULL;
	unsigned int n = 0;
	size_t len = 0;
	int m;

	/* not the tuple hash (nor its bitmap): the next command keeps its
	 * entries as they are, or changes the few that differ (tuple_get()),
	 * where filling a new one doubled an -A into 100 000 rules of tuple
	 * groups (88 -> 195 ms) */
	for (m = 0; m < OM_MAX; m++) {
		drop[m] = m != OM_TUPLE && m != OM_TUPLE6 && m != OM_TBITS &&
			  (b = inner_bytes(in, m, old)) > 0;
		total += drop[m] ? b : 0;
	}
	npg = pages_held(in, old, 0);
	total += npg * PAGE_BYTES;
	if (total <= in->spare_keep)
		return;
	if (fold) {
		if (!(late = cnt_map(in, old, ocf, false, false, &len, &err)))
			goto fail;
		/* cleared first, as at an install: killed from here on, the runs
		 * under way at the switch go uncounted, never twice */
		iv->flags &= ~BPFIPT_I_FOLD(fam);
		if (write_inst(in, iv, &err))
			goto fail;
	}
	for (m = 0; m < OM_MAX; m++)
		o[m] = (struct outer_set){ .outer = in->outer[m], .inner = -1, .slot = old };
	outer_run_all(o, drop, OM_MAX);
	waited = npg && pages_drop(in, old, 0, npg);
	for (m = 0; m < OM_MAX; m++)
		waited |= drop[m] && !o[m].rc;
	cp_crash_point("dropped");
	if (!waited && !grace_now()) {
		dp_fail(&err, -errno, "membarrier");
		goto fail;
	}
	iv->flags &= ~BPFIPT_I_PENDING;
	if (write_inst(in, iv, &err))
		goto fail;
	if (fold && (cnt_sum(late, ocf, &v, &n, &err) || fold_in(in, v, n, cur, ccf, &err)))
		goto fail;
	goto out;
fail:
	dp_log(DP_WARN, "the generation left behind is kept: %s", err.msg);
out:
	if (late)
		munmap(late, page_round(len));
	free(v);
}

void dp_inst_set_spare_keep(struct dp_inst *in, size_t bytes)
{
	in->spare_keep = bytes ? bytes : DP_SPARE_KEEP;
}

/* An install up to its switch (inst_stage()): the spare generation built, in
 * its slots and described; inst_switch() makes it the running one. */
struct stage {
	struct bpfipt_conf run;		/* the running generation's */
	struct gen g;
	bool built;			/* g holds maps */
	__u32 *rc_ids;
	int lz[LZ_MAX];
	__u32 cur, nxt;
	unsigned int fam;
};

static void stage_release(struct stage *st)
{
	for (int z = 0; z < LZ_MAX; z++)
		if (st->lz[z] >= 0)
			close(st->lz[z]);
	free(st->rc_ids);
	if (st->built)
		gen_release(&st->g);
	st->rc_ids = NULL;
	st->built = false;
}

static int inst_stage(struct dp_inst *in, const struct cp_compiled *cc,
		      const __u64 (*seed)[2], unsigned int nseed, const __u32 *carry,
		      unsigned int ncarry, struct stage *st, struct ipt_err *err)
{
	struct bpfipt_conf spare = {};
	struct bpfipt_inst iv;
	__u32 zero = 0;
	int r, z;

	memset(st, 0, sizeof(*st));
	for (z = 0; z < LZ_MAX; z++)
		st->lz[z] = -1;
	st->fam = fam_of(cc->family);
	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv))
		return dp_fail(err, -errno, "cannot read bpfipt_inst");
	/* the other family's generations are left alone */
	st->cur = cur_of(&iv, st->fam);
	st->nxt = st->cur ^ 1;
	if (bpf_map_lookup_elem(in->map[IM_CONF], &st->cur, &st->run) ||
	    bpf_map_lookup_elem(in->map[IM_CONF], &st->nxt, &spare))
		return dp_fail(err, -errno, "cannot read bpfipt_conf");
	/* the spare generation is about to be rewritten: no packet may still use
	 * it, and what it counted after the last carry goes to the running one */
	if (iv.flags & (BPFIPT_I_PENDING | BPFIPT_I_FOLD(st->fam))) {
		bool fold = iv.flags & BPFIPT_I_FOLD(st->fam);

		if ((iv.flags & BPFIPT_I_PENDING) && !grace_wait())
			return dp_fail(err, -errno, "membarrier");
		cp_crash_point("grace");
		/* cleared first: a command killed while folding loses those few
		 * packets rather than count them twice */
		iv.flags &= ~(BPFIPT_I_PENDING | BPFIPT_I_FOLD(st->fam));
		if ((r = write_inst(in, &iv, err)) ||
		    (fold && (r = gen_fold(in, st->nxt, &spare, st->cur, &st->run, err))))
			return r;
		cp_crash_point("folded");
	}
	st->rc_ids = calloc(cc->nrecent + 1, sizeof(*st->rc_ids));
	if (!st->rc_ids)
		return dp_fail(err, -ENOMEM, "out of memory");
	r = recent_prepare(in, cc, st->rc_ids, err);
	if (!r)
		r = gen_build(in, st->nxt, &spare, cc, seed, nseed, st->run.nwords ? carry : NULL,
			      ncarry, st->rc_ids, st->run.nwords ? -1 : (int)st->cur, &st->g, err);
	if (r)
		return r;
	st->built = true;
	if (((st->g.conf.flags & BPFIPT_C_CT) &&
	     ((r = lazy_new(in, st->fam ? LZ_CT6 : LZ_CT, &st->lz[st->fam ? LZ_CT6 : LZ_CT],
			    err)) ||
	      (r = lazy_new(in, LZ_FRAG, &st->lz[LZ_FRAG], err)))) ||
	    (cc_logs(cc) && (r = lazy_new(in, LZ_LOG, &st->lz[LZ_LOG], err))))
		return r;
	r = outer_set_all(in, st->nxt, &st->g, st->lz, err);
	for (z = 0; !r && z < LZ_MAX; z++)
		if (st->lz[z] >= 0) {
			in->lazy_fd[z] = st->lz[z];
			st->lz[z] = -1;
		}
	if (r)
		return r;
	if (bpf_map_update_elem(in->map[IM_CONF], &st->nxt, &st->g.conf, BPF_ANY))
		return dp_fail(err, -errno, "cannot install the generation");
	return 0;
}

static int inst_switch(struct dp_inst *in, const struct cp_compiled *cc,
		       const __u64 (*seed)[2], unsigned int nseed, const __u32 *carry,
		       unsigned int ncarry, struct stage *st, struct ipt_err *err)
{
	const struct bpfipt_conf *run = &st->run;
	struct gen *g = &st->g;
	struct bpfipt_inst iv;
	__u64 (*tot)[2] = NULL;
	unsigned int ntot = 0, i, fam = st->fam;
	__u32 zero = 0;
	int r;

	/* the programs can run it (dp_load() loads them again where they cannot) */
	if (conf_feat(&g->conf, fam) & ~in->feat)
		return dp_fail(err, -EPROTO, "the programs lack features 0x%x of the ruleset",
			       conf_feat(&g->conf, fam) & ~in->feat);
	/* read again: the interfaces' flags may have changed since the stage */
	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv))
		return dp_fail(err, -errno, "cannot read bpfipt_inst");
	cp_crash_point("switch");
	/* The switch: one write; every packet from now on uses generation nxt. The
	 * tag names the ruleset it runs (controlplane/state.h), and the features
	 * the programs on the interfaces now all have, in the same write. */
	iv.cur[fam] = st->nxt;
	iv.flags |= BPFIPT_I_PENDING;
	iv.flags = (iv.flags & ~BPFIPT_I_FEAT(BPFIPT_FEAT_ALL)) | BPFIPT_I_FEAT(in->feat);
	iv.tag[fam] = in->tag;
	if ((r = write_inst(in, &iv, err)))
		return r;
	cp_crash_point("switched");
	dp_log(DP_DEBUG, "switched to generation %u", st->nxt);
	recent_gc(in, cc, st->rc_ids);
	/* The carry, at once: each counter continues the one of the old generation
	 * it comes from, read now. The old one's counts are then taken out of it,
	 * so that it counts only the runs still under way at the switch (a grace
	 * period would make them final: the next install waits for it anyway, and
	 * adds them, gen_fold()). */
	if (run->nwords && carry) {
		r = gen_counters(in, st->cur, run, &tot, &ntot, err);
		if (r)
			goto out;
		for (i = 0; i < ncarry && i < cc->ncounters; i++) {
			__u32 P = cnt_phys(&g->conf, i);
			struct bpfipt_counter *b = &g->cnt[cnt_carry_at(&g->conf, P)];

			if (carry[i] == BPFIPT_NO_COUNTER || carry[i] >= ntot)
				continue;
			if (P >= g->conf.nper) {
				/* shared: the data plane adds to it already, on top of the
				 * seed gen_build() wrote there; the carried value replaces
				 * the seed (unsigned: the difference may be negative) */
				__u64 sp = seed && i < nseed ? seed[i][0] : 0;
				__u64 sb = seed && i < nseed ? seed[i][1] : 0;

				__atomic_fetch_add(&b->packets, tot[carry[i]][0] - sp, __ATOMIC_RELAXED);
				__atomic_fetch_add(&b->bytes, tot[carry[i]][1] - sb, __ATOMIC_RELAXED);
				continue;
			}
			b->packets = tot[carry[i]][0];
			b->bytes = tot[carry[i]][1];
		}
		cp_crash_point("carried");
		if ((r = cnt_add(in, st->cur, run, tot, ntot, true, err)))
			goto out;
		iv.flags |= BPFIPT_I_FOLD(fam);
		if ((r = write_inst(in, &iv, err)))
			goto out;
	}
	spare_drop(in, &iv, fam, st->cur, run, st->nxt, &g->conf);
out:
	free(tot);
	return r;
}

int dp_inst_install(struct dp_inst *in, const struct cp_compiled *cc,
		    const __u64 (*seed)[2], unsigned int nseed, const __u32 *carry,
		    unsigned int ncarry, struct ipt_err *err)
{
	struct stage st;
	int r;

	dp_log_init();
	r = inst_stage(in, cc, seed, nseed, carry, ncarry, &st, err);
	if (!r)
		r = inst_switch(in, cc, seed, nseed, carry, ncarry, &st, err);
	stage_release(&st);
	return r;
}

int dp_inst_counters(const struct dp_inst *in, __u64 (**out)[2], unsigned int *n,
		     struct ipt_err *err)
{
	struct bpfipt_conf cf;
	__u32 cur;
	int r;

	*out = NULL;
	*n = 0;
	r = read_cur(in, &cur, &cf, err);
	return r ? r : gen_counters(in, cur, &cf, out, n, err);
}

int dp_inst_stats(const struct dp_inst *in, __u64 st[BPFIPT_ST_MAX], struct ipt_err *err)
{
	__u64 *v = calloc(in->ncpus, sizeof(*v));
	__u32 k;
	int c;

	if (!v)
		return dp_fail(err, -ENOMEM, "out of memory");
	for (k = 0; k < BPFIPT_ST_MAX; k++) {
		st[k] = 0;
		if (bpf_map_lookup_elem(in->map[IM_STATS], &k, v))
			continue;
		for (c = 0; c < in->ncpus; c++)
			st[k] += v[c];
	}
	free(v);
	return 0;
}

/* ------------------------------------------------------- commands ---- */

static void detach_all(const struct dp_inst *in, const struct iface *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		detach_iface(in, &v[i]);
}

/* Set the BPFIPT_I_* bits of mask to those of val. */
static int set_iflags(const struct dp_inst *in, __u32 mask, __u32 val, struct ipt_err *err)
{
	struct bpfipt_inst iv;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv))
		return dp_fail(err, -errno, "cannot read bpfipt_inst");
	if ((iv.flags & mask) == (val & mask))
		return 0;
	iv.flags = (iv.flags & ~mask) | (val & mask);
	if (bpf_map_update_elem(in->map[IM_INST], &zero, &iv, BPF_ANY))
		return dp_fail(err, -errno, "cannot write bpfipt_inst");
	return 0;
}

int dp_inst_fit(struct dp_inst *in, unsigned int progs, struct ipt_err *err)
{
	struct bpfipt_conf cf;
	__u32 cur;
	int r, i;

	for (i = 0; i < DP_PROG_MAX; i++)
		if (in->prog[i] >= 0)
			return dp_fail(err, -EEXIST, "the instance has its programs already");
	if ((r = read_cur(in, &cur, &cf, err)))
		return r;
	in->feat = conf_feat(&cf, fam_of(ipt_af));
	r = set_iflags(in, BPFIPT_I_FEAT(BPFIPT_FEAT_ALL), BPFIPT_I_FEAT(in->feat), err);
	return r ? r : inst_load(in, progs, true, err);
}

/* After the switch: the devices whose XDP program the policy no longer wants
 * are judged at tc again (bpfipt_xdpifs forgets them), then, after a grace
 * period, their XDP goes, and BPFIPT_I_XDP with it when no device judges at XDP
 * (last: a command killed before the detach leaves the flag, and the next one
 * finishes the work). was_xdp: BPFIPT_I_XDP before this command; without it no
 * device had our XDP (the flag is set before any is attached), and a host of
 * veths asks nothing per device. */
static int xdp_retire(const struct dp_inst *in, const struct iface *v, int n, bool was_xdp,
		      struct ipt_err *err)
{
	bool stale[n > 0 ? n : 1], any_on = false, any_stale = false;
	__u32 drv, skb;
	int i;

	for (i = 0; i < n; i++) {
		stale[i] = false;
		any_on |= v[i].xdp_on;
		if (!was_xdp || v[i].xdp_on)
			continue;
		xdp_mark(in, v[i].ifindex, false);
		xdp_ids(v[i].ifindex, &drv, &skb);
		stale[i] = prog_named(drv, prog_names[DP_PROG_XDP]) ||
			   prog_named(skb, prog_names[DP_PROG_XDP]);
		any_stale |= stale[i];
	}
	if (any_stale) {
		grace_now();
		for (i = 0; i < n; i++)
			if (stale[i])
				detach_xdp(in, &v[i]);
	}
	return any_on ? 0 : set_iflags(in, BPFIPT_I_XDP, 0, err);
}

static bool uses_addrtype(const struct cp_compiled *cc)
{
	for (int c = 0; c < BPFIPT_NCHAINS; c++)
		for (unsigned int k = 0; k < cc->nslots[c]; k++)
			if (cc->slots[c][k].xflags & BPFIPT_X_ADDRTYPE)
				return true;
	return false;
}

static int rtlocal_sync(const struct dp_inst *in, struct ipt_err *err)
{
	struct cp_rt *v = NULL;
	unsigned int n = 0;
	int r = cp_rtlocal_read(&v, &n, err);

	if (!r)
		r = cp_rtlocal_write(in->map[IM_RTLOCAL], v, n, err);
	free(v);
	return r;
}

int dp_rtlocal_sync(struct ipt_err *err)
{
	struct dp_inst *in = NULL;
	int r;

	dp_log_init();
	if ((r = dp_inst_open(&in, err)) || !in)
		return r;
	r = rtlocal_sync(in, err);
	dp_inst_free(&in);
	return r;
}

int dp_load(const struct cp_compiled *cc, const __u64 (*seed)[2], unsigned int nseed,
	    const struct dp_opts *o, struct ipt_err *err)
{
	static const struct dp_opts dflt;
	struct dp_inst *in = NULL;
	struct iface *v = NULL;
	struct bpfipt_inst iv = {};
	unsigned int need = 1u << DP_PROG_TC_IN | 1u << DP_PROG_TC_OUT;
	bool fresh = false, was_xdp, was_auto, xdp = false, staged = false;
	const __u32 *carry;
	struct stage st;
	enum dp_ingress ing;
	enum xdp_how how;
	__u32 zero = 0;
	int n = 0, i, r;

	dp_log_init();
	if (!o)
		o = &dflt;
	ing = o->ingress;
	if ((r = iface_list_kept(&v, &n, err)))
		return r;
	for (i = 0; i < n; i++)
		if (v[i].cls == IF_L3)
			need |= 1u << DP_PROG_TC_IN3 | 1u << DP_PROG_TC_OUT3;
	if ((r = dp_inst_open(&in, err)))
		goto out;
	fresh = !in;
	if (!fresh)
		early_inst_join();
	/* a fresh instance's maps: the ones made early, whose programs are being
	 * verified meanwhile (dp_prepare_begin()), or made now; its programs are
	 * settled below */
	if (fresh && (r = inst_create(&in, 0, o->ct, err)))
		goto out;
	if (o->ct)
		in->ct_max = o->ct->max;	/* for a table made by this install */
	in->tag = o->tag;
	dp_inst_set_spare_keep(in, o->spare_keep);
	/* the generation, built first: a fresh instance's while the verifier takes
	 * the programs made early; nothing runs it before the switch, after the
	 * attach below */
	carry = fresh ? NULL : o->carry;
	r = inst_stage(in, cc, seed, nseed, carry, o->ncarry, &st, err);
	staged = true;
	if (fresh)
		early_inst_join();
	/* programs that can run it: loaded again (and replaced on the interfaces)
	 * where they lack a part it needs */
	if (r || (r = inst_feat(in, v, n, conf_feat(&st.g.conf, st.fam), fresh, err)))
		goto out;
	if (bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv)) {
		r = dp_fail(err, -errno, "cannot read bpfipt_inst");
		goto out;
	}
	was_xdp = iv.flags & BPFIPT_I_XDP;
	was_auto = iv.flags & BPFIPT_I_AUTO;
	if (ing == DP_INGRESS_KEEP)
		ing = fresh || was_auto ? DP_INGRESS_AUTO : was_xdp ? DP_INGRESS_XDP :
		      DP_INGRESS_TC;
	how = ing == DP_INGRESS_AUTO ? XH_NATIVE : ing == DP_INGRESS_XDP ? XH_ANY :
	      ing == DP_INGRESS_XDP_GENERIC ? XH_GENERIC : XH_NONE;
	for (i = 0; i < n; i++) {
		v[i].xdp = how == XH_NATIVE ? xdp_auto_wanted(&v[i]) :
			   how != XH_NONE && v[i].cls == IF_ETH;
		xdp |= v[i].xdp;
	}
	/* no XDP program loaded where no device would take it */
	if (xdp)
		need |= 1u << DP_PROG_XDP;
	if ((r = inst_need(in, v, n, need, err)))
		goto out;

	/* addrtype reads the local routing table: current before the switch */
	if (uses_addrtype(cc) && (r = rtlocal_sync(in, err)))
		goto out;
	/* Attach before the switch: a new instance judges nothing until its first
	 * generation is installed (nwords == 0), so a command killed half-way
	 * through the interfaces leaves the old ruleset (none) in force everywhere,
	 * never the new one on some interfaces only. */
	if ((r = set_iflags(in, BPFIPT_I_XDP | BPFIPT_I_AUTO,
			    (xdp || was_xdp ? BPFIPT_I_XDP : 0) |
			    (how == XH_NATIVE ? BPFIPT_I_AUTO : 0), err)))
		goto out;
	iface_tc_find(v, n);
	for (i = 0; i < n && !r; i++) {
		cp_crash_point("attach");
		r = attach_iface(in, &v[i], how, err);
	}
	if (r)
		goto out;
	if ((r = inst_switch(in, cc, seed, nseed, carry, o->ncarry, &st, err)))
		goto out;
	r = xdp_retire(in, v, n, was_xdp, err);
out:
	if (r && fresh && in)
		detach_all(in, v, n);	/* no half-attached first install */
	if (staged)
		stage_release(&st);
	early_inst_join();	/* before its instance is freed */
	dp_inst_keep(false);	/* changed: a later open looks again */
	dp_inst_free(&in);
	free(v);
	return r;
}

bool dp_read_tag(__u32 *tag)
{
	struct dp_inst *in = NULL;
	struct bpfipt_inst iv;
	__u32 zero = 0;
	bool ok;

	*tag = 0;
	if (dp_inst_open(&in, NULL) || !in)
		return false;
	ok = !bpf_map_lookup_elem(in->map[IM_INST], &zero, &iv);
	if (ok)
		*tag = iv.tag[fam_of(ipt_af)];
	dp_inst_free(&in);
	return ok;
}

int dp_read_counters(__u64 (**out)[2], unsigned int *n, struct ipt_err *err)
{
	struct dp_inst *in = NULL;
	int r;

	*out = NULL;
	*n = 0;
	r = dp_inst_open(&in, err);
	if (!r && in)
		r = dp_inst_counters(in, out, n, err);
	dp_inst_free(&in);
	return r;
}

int dp_zero_counters(struct ipt_err *err)
{
	struct dp_inst *in = NULL;
	struct bpfipt_conf cf;
	struct bpfipt_counter *p;
	__u32 cur, id;
	size_t len;
	int r, fd;

	r = dp_inst_open(&in, err);
	if (r || !in)
		goto out;
	if ((r = read_cur(in, &cur, &cf, err)) || !cf.nwords || !cf.ncounters)
		goto out;
	if (bpf_map_lookup_elem(in->outer[cnt_om(&cf)], &cur, &id) ||
	    (fd = bpf_map_get_fd_by_id(id)) < 0) {
		r = dp_fail(err, -errno, "cannot open the counters");
		goto out;
	}
	len = cnt_entries(&cf) * sizeof(*p);
	p = map_mmap(fd, len, true, err);
	close(fd);
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	memset(p, 0, len);
	munmap(p, page_round(len));
	/* what the spare still counts is from before the zero */
	r = set_iflags(in, BPFIPT_I_FOLD(fam_of(ipt_af)), 0, err);
out:
	dp_inst_free(&in);
	return r;
}

int dp_read_stats(__u64 st[BPFIPT_ST_MAX], struct ipt_err *err)
{
	struct dp_inst *in = NULL;
	int r;

	memset(st, 0, BPFIPT_ST_MAX * sizeof(st[0]));
	r = dp_inst_open(&in, err);
	if (!r && in)
		r = dp_inst_stats(in, st, err);
	dp_inst_free(&in);
	return r;
}

int dp_remove(struct ipt_err *err)
{
	struct dp_inst *in = NULL;
	struct iface *v = NULL;
	int n, r;

	dp_log_init();
	if ((r = iface_list(&v, &n, err)))
		return r;
	/* an instance we cannot open (another version) is still ours to remove: the
	 * tc filters are known by priority and handle, XDP programs by name */
	dp_inst_open(&in, NULL);
	detach_all(in, v, n);
	dp_inst_free(&in);
	free(v);
	return 0;
}
