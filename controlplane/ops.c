// SPDX-License-Identifier: GPL-2.0
/*
 * Commands applied to the rule model, with libiptc's checks and errors and the
 * kernel's table checks (loops, hooks) that iptables-legacy reports at commit.
 */
#include "ops.h"
#include "ext.h"

#include <stdlib.h>
#include <string.h>

static int iptc_err(struct ipt_err *err, const char *msg)
{
	return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "%s", msg);
}

#define E_NOENT	"No chain/target/match by that name."
#define E_EXIST	"Chain already exists."
#define E_BADRULE "Bad rule (does a matching rule exist in that chain?)."

static bool is_target_word(const char *name)
{
	return !strcmp(name, "ACCEPT") || !strcmp(name, "DROP") || !strcmp(name, "QUEUE") ||
	       !strcmp(name, "RETURN");
}

/* iptables targets this project does not implement: say so rather than ENOENT */
/* Resolve -j NAME / -g NAME against the table, as do_command4 does before it
 * touches the chain: a chain, else a target we know, else an error. */
static int resolve_target(const struct ipt_table *t, const struct ipt_rule *r,
			  struct ipt_err *err)
{
	if (r->tkind != IPT_T_JUMP && r->tkind != IPT_T_GOTO)
		return 0;
	if (ipt_chain_find(t, r->chain))
		return 0;
	if (r->tkind == IPT_T_GOTO)
		return ipt_err_param(err, "goto '%s' is not a chain", r->chain);
	if (ipt_ext_find(r->chain, true) == NULL)
		return ipt_err_param(err, "Couldn't load target `%s':%s\n", r->chain,
				     ipt_ext_unsupported(r->chain, true) ?
				     " not supported by bpf-iptables" : "No such file or directory");
	return 0;
}

/* A rule the kernel's walk cannot get past: no address, interface, protocol
 * or fragment condition, no match, and a verdict (ACCEPT, DROP, RETURN). */
static bool unconditional_verdict(const struct ipt_rule *r)
{
	static const struct ipt_ip none;

	return r->tkind == IPT_T_VERDICT && !r->nmatches && !memcmp(&r->ip, &none, sizeof(none));
}

struct walk {
	const struct ipt_table *t;
	unsigned int **rule_hooks;	/* [chain][rule]: builtin chains that reach it */
	unsigned char *onstack;
	struct ipt_err *err;
};

/* The kernel's mark_source_chains: walk from a builtin chain, following jumps
 * and gotos, up to the first unconditional verdict of each chain (what lies
 * beyond is never reached, so a loop there is no loop); a chain met again on
 * the current path is a loop. */
static int walk(struct walk *w, unsigned int ci, unsigned int hook)
{
	const struct ipt_chain *c = w->t->chains[ci];

	if (w->onstack[ci])
		return iptc_err(w->err, "Too many levels of symbolic links.");
	w->onstack[ci] = 1;
	for (unsigned int i = 0; i < c->nrules; i++) {
		const struct ipt_rule *r = c->rules[i];

		if (w->rule_hooks[ci][i] & hook) {
			/* this stretch was walked for this hook already */
			break;
		}
		w->rule_hooks[ci][i] |= hook;
		if (r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO) {
			int to = ipt_chain_index(w->t, r->chain);

			if (to < 0)
				continue;
			if (w->t->chains[to]->builtin)
				return iptc_err(w->err, "Invalid argument: a rule may not jump to a "
						"built-in chain.");
			if (walk(w, to, hook))
				return -1;
		}
		if (unconditional_verdict(r))
			break;
	}
	w->onstack[ci] = 0;
	return 0;
}

static unsigned int ext_hooks(const struct ipt_match *m)
{
	if (!m->ext)
		return 0;
	if (m->ext->hooks_of)
		return m->ext->hooks_of(m->data);
	return m->ext->hooks;
}

int ipt_table_validate(const struct ipt_table *t, struct ipt_err *err)
{
	struct walk w = { .t = t, .err = err };
	int r = 0;

	w.rule_hooks = calloc(t->nchains, sizeof(*w.rule_hooks));
	w.onstack = calloc(t->nchains, 1);
	if (!w.rule_hooks || !w.onstack)
		abort();
	for (unsigned int i = 0; i < t->nchains; i++) {
		w.rule_hooks[i] = calloc(t->chains[i]->nrules + 1, sizeof(**w.rule_hooks));
		if (!w.rule_hooks[i])
			abort();
	}
	for (unsigned int i = 0; i < t->nchains && !r; i++) {
		const struct ipt_chain *c = t->chains[i];

		if (!c->builtin)
			continue;
		unsigned int hook = !strcmp(c->name, "INPUT") ? IPT_HOOK_INPUT :
				    !strcmp(c->name, "FORWARD") ? IPT_HOOK_FORWARD :
				    IPT_HOOK_OUTPUT;
		r = walk(&w, i, hook);
	}
	/* extensions limited to some hooks (-m mac: not in OUTPUT), checked as the
	 * kernel does: on the rules the walk reached, for the hooks that reach them */
	for (unsigned int i = 0; i < t->nchains && !r; i++) {
		const struct ipt_chain *c = t->chains[i];

		for (unsigned int j = 0; j < c->nrules && !r; j++) {
			const struct ipt_rule *ru = c->rules[j];

			for (unsigned int k = 0; k <= ru->nmatches && !r; k++) {
				const struct ipt_match *m = k < ru->nmatches ? &ru->matches[k] :
							    &ru->target;
				unsigned int allowed = ext_hooks(m);

				if (allowed && (w.rule_hooks[i][j] & ~allowed))
					r = iptc_err(err, "Invalid argument: this match or target "
						     "cannot be used from this chain.");
			}
		}
	}
	for (unsigned int i = 0; i < t->nchains; i++)
		free(w.rule_hooks[i]);
	free(w.rule_hooks);
	free(w.onstack);
	return r;
}

bool ipt_cmd_keeps_valid(const struct ipt_cmd *cmd)
{
	if (cmd->command != CMD_APPEND && cmd->command != CMD_INSERT)
		return false;
	for (unsigned int i = 0; i < cmd->nrules; i++) {
		const struct ipt_rule *r = cmd->rules[i];

		if (r->tkind == IPT_T_JUMP || r->tkind == IPT_T_GOTO || ext_hooks(&r->target))
			return false;
		for (unsigned int k = 0; k < r->nmatches; k++)
			if (ext_hooks(&r->matches[k]))
				return false;
	}
	return true;
}

int ipt_cmd_resolve(const struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	for (unsigned int i = 0; i < cmd->nrules; i++)
		if (resolve_target(t, cmd->rules[i], err))
			return -1;
	return 0;
}

/* The rules of -A, -I and -R move from cmd into the chain (a copy of each rule
 * and its freeing were 8% of a 1M-line restore). */
static struct ipt_rule *take(struct ipt_cmd *cmd, unsigned int i)
{
	struct ipt_rule *r = cmd->rules[i];

	cmd->rules[i] = NULL;
	return r;
}

static int rule_cmd(struct ipt_table *t, struct ipt_cmd *cmd, struct ipt_err *err)
{
	if (ipt_cmd_resolve(t, cmd, err))
		return -1;

	struct ipt_chain *c = ipt_chain_find(t, cmd->chain);

	/* libiptc's delete/check by rule spec looks for the rule before it
	 * complains about the chain */
	if (!c && (cmd->command == CMD_DELETE || cmd->command == CMD_CHECK) && cmd->nrules)
		return iptc_err(err, E_BADRULE);
	if (!c)
		return iptc_err(err, E_NOENT);
	if (cmd->deferred.code) {
		*err = cmd->deferred;
		return -1;
	}
	switch (cmd->command) {
	case CMD_APPEND:
		for (unsigned int i = 0; i < cmd->nrules; i++)
			ipt_chain_insert_rule(c, c->nrules, take(cmd, i));
		return 0;
	case CMD_INSERT:
		/* every rule goes in at the same position, so a list comes out reversed,
		 * as with iptables (the chain only grows: the first test is the one) */
		if (cmd->nrules && cmd->rulenum > c->nrules + 1)
			return iptc_err(err, "Index of insertion too big.");
		for (unsigned int i = 0; i < cmd->nrules; i++)
			ipt_chain_insert_rule(c, cmd->rulenum - 1, take(cmd, i));
		return 0;
	case CMD_REPLACE:
		if (cmd->rulenum > c->nrules)
			return iptc_err(err, "Index of replacement too big.");
		ipt_chain_replace_rule(c, cmd->rulenum - 1, take(cmd, 0));
		return 0;
	case CMD_DELETE:
	case CMD_CHECK:
		for (unsigned int i = 0; i < cmd->nrules; i++) {
			unsigned int j;

			for (j = 0; j < c->nrules; j++)
				if (ipt_rule_equal(c->rules[j], cmd->rules[i]))
					break;
			if (j == c->nrules) {
				/* libiptc's wording depends on the target: a missing rule
				 * with an extension or chain target is "No chain..." */
				enum ipt_target_kind k = cmd->rules[i]->tkind;

				return iptc_err(err, k == IPT_T_EXT || k == IPT_T_JUMP ||
						k == IPT_T_GOTO ? E_NOENT : E_BADRULE);
			}
			if (cmd->command == CMD_DELETE)
				ipt_chain_delete_rule(c, j);
		}
		return 0;
	default:
		return iptc_err(err, "Invalid argument.");
	}
}

static int flush_or_zero(struct ipt_table *t, const struct ipt_cmd *cmd, bool zero,
			 struct ipt_err *err)
{
	struct ipt_chain *only = NULL;

	if (cmd->chain && !(only = ipt_chain_find(t, cmd->chain)))
		return iptc_err(err, E_NOENT);
	for (unsigned int i = 0; i < t->nchains; i++) {
		struct ipt_chain *c = t->chains[i];

		if (only && c != only)
			continue;
		if (!zero) {
			ipt_chain_flush(c);
			continue;
		}
		c->pcnt = c->bcnt = 0;
		c->cidx = IPT_NO_CIDX;
		for (unsigned int j = 0; j < c->nrules; j++) {
			c->rules[j]->pcnt = c->rules[j]->bcnt = 0;
			c->rules[j]->cidx = IPT_NO_CIDX;
		}
	}
	return 0;
}

static int zero_num(struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	struct ipt_chain *c = cmd->chain ? ipt_chain_find(t, cmd->chain) : NULL;

	if (!c)
		return iptc_err(err, E_NOENT);
	if (cmd->rulenum > c->nrules)
		return iptc_err(err, "Index of counter too big.");
	c->rules[cmd->rulenum - 1]->pcnt = c->rules[cmd->rulenum - 1]->bcnt = 0;
	c->rules[cmd->rulenum - 1]->cidx = IPT_NO_CIDX;
	return 0;
}

static int delete_chain(struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	if (cmd->chain) {
		struct ipt_chain *c = ipt_chain_find(t, cmd->chain);

		if (!c)
			return iptc_err(err, E_NOENT);
		if (c->builtin)
			return iptc_err(err, "Invalid argument: built-in chains cannot be "
					"deleted.");
		if (ipt_chain_refs(t, c))
			return iptc_err(err, "Too many links.");
		if (c->nrules)
			return iptc_err(err, "Directory not empty.");
		ipt_chain_remove(t, c);
		return 0;
	}
	/* -X alone: every empty, unreferenced user chain. Like iptables, which tries
	 * every chain (in name order) and reports the errno of the LAST one that
	 * failed; any failure fails the whole command (the table is a copy). */
	const char *why = NULL;
	/* the references counted once: a chain removed here is empty, so it
	 * takes none from the others */
	unsigned int *refs = ipt_table_refs(t), n = t->nchains, k = 0;
	struct ipt_chain **gone = calloc(n ? n : 1, sizeof(*gone));

	if (!gone)
		abort();

	for (unsigned int i = 0; i < n; i++) {
		struct ipt_chain *c = t->chains[i];

		if (c->builtin)
			continue;
		if (refs[i])
			why = "Too many links.";
		else if (c->nrules)
			why = "Directory not empty.";
		else
			gone[k++] = c;
	}
	for (unsigned int i = 0; i < k; i++)
		ipt_chain_remove(t, gone[i]);
	free(gone);
	free(refs);
	return why ? iptc_err(err, why) : 0;
}

static int rename_chain(struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	struct ipt_chain *c = ipt_chain_find(t, cmd->chain);

	if (!c || c->builtin)
		return iptc_err(err, E_NOENT);
	if (ipt_chain_find(t, cmd->newname) || is_target_word(cmd->newname))
		return iptc_err(err, "File exists.");
	if (!cmd->newname[0])
		return iptc_err(err, "Invalid argument: a chain name cannot be empty.");
	if (strlen(cmd->newname) >= IPT_CHAIN_NAMESZ)
		return iptc_err(err, "Invalid argument: chain name too long.");
	ipt_chain_rename(t, c, cmd->newname);
	return 0;
}

static int set_policy(struct ipt_table *t, const struct ipt_cmd *cmd, struct ipt_err *err)
{
	struct ipt_chain *c = ipt_chain_find(t, cmd->chain);
	enum ipt_verdict v;

	if (!c || !c->builtin)
		return iptc_err(err, "Bad built-in chain name.");
	if (ipt_verdict_parse(cmd->policy, &v) || v == IPT_V_RETURN)
		return iptc_err(err, "Bad policy name.");
	c->policy = v;
	if (cmd->options & OPT_COUNTERS) {
		c->pcnt = cmd->policy_pcnt;
		c->bcnt = cmd->policy_bcnt;
		c->cidx = IPT_NO_CIDX;
	}
	return 0;
}

int ipt_table_apply(struct ipt_table *t, struct ipt_cmd *cmd, struct ipt_err *err)
{
	int r;

	switch (cmd->command) {
	case CMD_APPEND:
	case CMD_INSERT:
	case CMD_REPLACE:
	case CMD_DELETE:
	case CMD_CHECK:
		r = rule_cmd(t, cmd, err);
		break;
	case CMD_DELETE_NUM: {
		struct ipt_chain *c = ipt_chain_find(t, cmd->chain);

		if (!c)
			return iptc_err(err, E_NOENT);
		if (cmd->rulenum > c->nrules)
			return iptc_err(err, "Index of deletion too big.");
		ipt_chain_delete_rule(c, cmd->rulenum - 1);
		r = 0;
		break;
	}
	case CMD_FLUSH:
		r = flush_or_zero(t, cmd, false, err);
		break;
	case CMD_ZERO:
	case CMD_ZERO | CMD_LIST:
	case CMD_ZERO | CMD_LIST_RULES:
		r = flush_or_zero(t, cmd, true, err);
		break;
	case CMD_ZERO_NUM:
	case CMD_ZERO_NUM | CMD_LIST:
	case CMD_ZERO_NUM | CMD_LIST_RULES:
		r = zero_num(t, cmd, err);
		break;
	case CMD_NEW_CHAIN:
		if (ipt_chain_find(t, cmd->chain) || is_target_word(cmd->chain))
			return iptc_err(err, E_EXIST);
		ipt_chain_new_user(t, cmd->chain);
		r = 0;
		break;
	case CMD_DELETE_CHAIN:
		r = delete_chain(t, cmd, err);
		break;
	case CMD_RENAME_CHAIN:
		r = rename_chain(t, cmd, err);
		break;
	case CMD_SET_POLICY:
		r = set_policy(t, cmd, err);
		break;
	default:
		return 0;	/* listing commands change nothing */
	}
	return r;
}

bool ipt_cmd_modifies(const struct ipt_cmd *cmd)
{
	return !(cmd->command & (CMD_LIST | CMD_LIST_RULES | CMD_CHECK)) ||
	       (cmd->command & (CMD_ZERO | CMD_ZERO_NUM));
}
