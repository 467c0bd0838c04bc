// SPDX-License-Identifier: GPL-2.0
/*
 * The ruleset and the running data plane kept together: live counters are read
 * into the model before a command (so -L -v, -S -v and save -c show them and a
 * rule keeps its counters wherever the command moves it), and after a command
 * the new model is compiled and loaded as the next generation, each rule
 * continuing the counter it had (carry) or starting from its stored value (seed).
 */
#include "sync.h"
#include "compile.h"
#include "loader.h"
#include "ct.h"
#include "crashpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cp_dataplane_enabled(void)
{
	const char *v = getenv("BPF_IPTABLES_DATAPLANE");

	return !v || strcmp(v, "off");
}

/* The counter order of cp_compiled: every rule in table order, then the three
 * builtin policies. Calls fn(rule or NULL, chain, index). */
static unsigned int count_rules(const struct ipt_table *t)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->nchains; i++)
		n += t->chains[i]->nrules;
	return n;
}

void cp_sync_begin(const char *input, size_t len)
{
	if (!cp_dataplane_enabled())
		return;
	dp_grace_begin();
	dp_prepare_begin(dp_feat_guess(input, len));
	dp_inst_keep(true);
}

void cp_sync_end(void)
{
	if (cp_dataplane_enabled())
		dp_inst_keep(false);
}

int cp_sync_counters_in(struct ipt_table *t, struct ipt_err *err)
{
	__u64 (*ctr)[2] = NULL;
	unsigned int n = 0, idx = 0, nrules = count_rules(t);

	if (!cp_dataplane_enabled() || !dp_running())
		return 0;
	if (dp_read_counters(&ctr, &n, err))
		return -1;
	/* the running generation was compiled from this very table (both change
	 * together under the lock); a mismatch means it was not: keep the stored
	 * counters then */
	if (n != nrules + BPFIPT_NCHAINS) {
		free(ctr);
		return 0;
	}
	for (unsigned int i = 0; i < t->nchains; i++) {
		struct ipt_chain *c = t->chains[i];

		for (unsigned int j = 0; j < c->nrules; j++, idx++) {
			c->rules[j]->pcnt = ctr[idx][0];
			c->rules[j]->bcnt = ctr[idx][1];
			c->rules[j]->cidx = idx;
		}
	}
	for (unsigned int b = 0, i = 0; i < t->nchains && b < BPFIPT_NCHAINS; i++) {
		struct ipt_chain *c = t->chains[i];

		if (!c->builtin)
			continue;
		c->pcnt = ctr[nrules + b][0];
		c->bcnt = ctr[nrules + b][1];
		c->cidx = nrules + b;
		b++;
	}
	free(ctr);
	return 0;
}

/* The links of this namespace, for -i/-o: the loader's listing (one a
 * command: glibc's if_nameindex() was a dump of its own, with every link's
 * statistics). None when they cannot be listed. */
static struct cp_link *read_links(unsigned int *n)
{
	struct cp_link *l;

	return dp_links(&l, n) ? NULL : l;
}

/* Ingress hook: BPF_IPTABLES_INGRESS=auto (XDP native on devices whose driver
 * runs it on the wire, tc on the others: veth, lo, drivers without native XDP),
 * =xdp (native where the driver has it, else generic, on every Ethernet
 * device), =xdp-generic, =tc. Unset: what the running data plane uses, so a
 * mode chosen once (a service's environment) stays until asked otherwise; auto
 * for a new one. DP_INGRESS_MAX: none of these (a typo must not pick a hook). */
static enum dp_ingress ingress_mode(void)
{
	const char *v = getenv("BPF_IPTABLES_INGRESS");

	if (!v || !*v)
		return DP_INGRESS_KEEP;
	if (!strcmp(v, "auto"))
		return DP_INGRESS_AUTO;
	if (!strcmp(v, "xdp"))
		return DP_INGRESS_XDP;
	if (!strcmp(v, "xdp-generic"))
		return DP_INGRESS_XDP_GENERIC;
	if (!strcmp(v, "tc"))
		return DP_INGRESS_TC;
	return DP_INGRESS_MAX;
}

/* BPF_IPTABLES_TUPLE_MIN: the shortest run compiled to a tuple group
 * (cp_env.tuple_min); the differential tests make short runs take one. */
static unsigned int tuple_min(void)
{
	const char *v = getenv("BPF_IPTABLES_TUPLE_MIN");

	return v ? (unsigned int)strtoul(v, NULL, 10) : 0;
}

/* BPF_IPTABLES_SPARE_KEEP: dp_opts.spare_keep, in bytes (1: the spare
 * generation's maps are all dropped after each switch; the tests' way to take
 * that path with small rulesets). */
static size_t spare_keep(void)
{
	const char *v = getenv("BPF_IPTABLES_SPARE_KEEP");

	return v ? (size_t)strtoull(v, NULL, 10) : 0;
}

bool cp_running_tag(__u32 *tag)
{
	*tag = 0;
	return cp_dataplane_enabled() && dp_read_tag(tag);
}

int cp_check(const struct ipt_table *t, struct ipt_err *err)
{
	struct cp_env env = { .tuple_min = tuple_min() };
	struct cp_compiled *cc = NULL;
	struct cp_link *links;
	int r;

	if (!cp_dataplane_enabled())
		return 0;
	links = read_links(&env.nlinks);
	env.links = links;
	r = cp_compile(t, &env, &cc, err);
	free(links);
	cp_compiled_free(&cc);
	return r ? -1 : 0;
}

int cp_sync_out(const struct ipt_table *t, const char *state_dir, __u32 tag,
		struct ipt_err *err)
{
	return cp_sync_out_when(t, state_dir, tag, NULL, NULL, err);
}

int cp_sync_out_when(const struct ipt_table *t, const char *state_dir, __u32 tag,
		     int (*ready)(void *arg, struct ipt_err *err), void *arg,
		     struct ipt_err *err)
{
	struct ct_settings cts;
	struct cp_env env = { .tuple_min = tuple_min() };
	struct cp_compiled *cc = NULL;
	struct cp_link *links;
	unsigned int nrules = count_rules(t), idx = 0;
	int r;

	if (!cp_dataplane_enabled())
		return 0;
	if (ingress_mode() == DP_INGRESS_MAX)
		return ipt_err_set(err, IPT_EXIT_PARAM, IPT_ES_IPTC,
				   "BPF_IPTABLES_INGRESS=%s: not an ingress hook (auto, xdp, "
				   "xdp-generic or tc)", getenv("BPF_IPTABLES_INGRESS"));
	if (ct_settings_load(state_dir, &cts, err))
		return -1;
	links = read_links(&env.nlinks);
	env.links = links;
	r = cp_compile(t, &env, &cc, err);
	free(links);
	if (r)
		return -1;
	cp_crash_point("compiled");
	if (ready && ready(arg, err)) {
		cp_compiled_free(&cc);
		return -1;
	}

	unsigned int n = nrules + BPFIPT_NCHAINS;
	__u64 (*seed)[2] = calloc(n, sizeof(*seed));
	__u32 *carry = calloc(n, sizeof(*carry));

	if (!seed || !carry)
		abort();
	for (unsigned int i = 0; i < t->nchains; i++) {
		const struct ipt_chain *c = t->chains[i];

		for (unsigned int j = 0; j < c->nrules; j++, idx++) {
			seed[idx][0] = c->rules[j]->pcnt;
			seed[idx][1] = c->rules[j]->bcnt;
			carry[idx] = c->rules[j]->cidx;
		}
	}
	for (unsigned int b = 0, i = 0; i < t->nchains && b < BPFIPT_NCHAINS; i++) {
		const struct ipt_chain *c = t->chains[i];

		if (!c->builtin)
			continue;
		seed[nrules + b][0] = c->pcnt;
		seed[nrules + b][1] = c->bcnt;
		carry[nrules + b] = c->cidx;
		b++;
	}
	struct dp_opts o = { .ingress = ingress_mode(), .carry = carry, .ncarry = n, .ct = &cts,
			     .tag = tag, .spare_keep = spare_keep() };

	r = dp_load(cc, seed, n, &o, err);
	free(seed);
	free(carry);
	cp_compiled_free(&cc);
	return r;
}

int cp_unload(struct ipt_err *err)
{
	return dp_remove(err);
}
