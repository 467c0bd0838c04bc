// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-iptables -V: the version, what the kernel offers that the data plane
 * needs (probed, nothing attached), and what is attached in this namespace.
 */
#include "cli.h"
#include "loader.h"
#include "strbuf.h"
#include "sync.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *feature(int r, bool *missing)
{
	static char buf[64];

	if (r > 0)
		return "yes";
	if (r == 0) {
		*missing = true;
		return "NO";
	}
	snprintf(buf, sizeof(buf), "unknown (%s)", strerror(-r));
	return buf;
}

void ipt_print_version_report(const char *prog)
{
	struct strbuf sb = STRBUF_INIT;
	const char *ing = getenv("BPF_IPTABLES_INGRESS"), *how;
	bool missing = false;
	struct utsname u;
	int n;

	printf("%s v%s (bpf)\n", prog, BPFIPT_VERSION);
	if (!uname(&u))
		printf("kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	printf("kernel features (probed):\n");
	printf("  BTF (/sys/kernel/btf/vmlinux): %s\n",
	       feature(access("/sys/kernel/btf/vmlinux", R_OK) ? 0 : 1, &missing));
	printf("  XDP programs: %s\n",
	       feature(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL), &missing));
	printf("  tc (clsact, sched_cls) programs: %s\n",
	       feature(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, NULL), &missing));
	printf("  bpf_fib_lookup (chain selector): %s\n",
	       feature(libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS, BPF_FUNC_fib_lookup, NULL),
		  &missing));
	printf("  LPM trie maps: %s\n",
	       feature(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_LPM_TRIE, NULL), &missing));
	printf("  array-of-maps (atomic switch): %s\n",
	       feature(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL), &missing));
	printf("  ring buffer (LOG): %s\n",
	       feature(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL), &missing));
	printf("  may_goto (Linux 6.9; the walk's loops without a call an iteration): %s\n",
	       dp_may_goto() ? "yes" : "no (open-coded iterators instead: slower walks of "
				       "long chains)");
	if (missing)
		printf("  a feature marked NO is missing: the data plane cannot load on this "
		       "kernel (Linux >= 6.4 with BTF is needed); BPF_IPTABLES_DATAPLANE=off "
		       "keeps the rule language only\n");
	how = !ing || !*ing ? "the running data plane's choice (auto for a new one: XDP "
			      "where the driver runs it natively, not veth; tc elsewhere)" :
	      !strcmp(ing, "auto") ? "XDP where the driver runs it natively (not veth), "
				     "tc elsewhere" :
	      !strcmp(ing, "xdp") ? "XDP (native where the driver has it, else generic)" :
	      !strcmp(ing, "xdp-generic") ? "XDP generic" : !strcmp(ing, "tc") ? "tc" : NULL;
	if (how)
		printf("hooks: ingress at %s, egress at tc\n", how);
	else
		printf("hooks: BPF_IPTABLES_INGRESS=%s is not an ingress hook (auto, xdp, "
		       "xdp-generic or tc): commands refuse it; egress at tc\n", ing);
	if (!cp_dataplane_enabled()) {
		printf("data plane: off (BPF_IPTABLES_DATAPLANE=off)\n");
		return;
	}
	n = dp_describe(&sb);
	if (n > 0)
		printf("this namespace: data plane running\n%s", sb_str(&sb));
	else if (n == 0)
		printf("this namespace: no data plane (the first command creates it)\n");
	sb_free(&sb);
}
