// SPDX-License-Identifier: GPL-2.0
/* The actions of the restore-file grammar: iptables-restore's semantics. */
#include "restore_internal.h"
#include "restoregram.h"
#define YYSTYPE RESTOREGRAM_STYPE
#define YYLTYPE RESTOREGRAM_LTYPE
#include "restorescan.h"
#include "cmd.h"
#include "ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int restoregram_parse(struct rs_state *rs);

void rs_words_push(struct rs_words *ws, char *w)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? ws->cap * 2 : 16;
		ws->w = realloc(ws->w, ws->cap * sizeof(*ws->w));
		if (!ws->w)
			abort();
	}
	ws->w[ws->n++] = w;
}

void rs_words_free(struct rs_words *ws)
{
	for (unsigned int i = 0; i < ws->n; i++)
		free(ws->w[i]);
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

void rs_error(struct rs_state *s, unsigned int line, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	s->err_line = line;
	s->err->code = code;
	s->err->style = IPT_ES_XT;
	va_start(ap, fmt);
	vsnprintf(s->err->msg, sizeof(s->err->msg), fmt, ap);
	va_end(ap);
}

/* "prog: line N failed" with the reason kept for a second line. */
static int line_failed(struct rs_state *s, unsigned int line, const struct ipt_err *why)
{
	if (s->failed)
		return -1;
	s->failed = true;
	s->err_line = line;
	s->err->code = IPT_EXIT_OTHER;
	s->err->style = IPT_ES_IPTC;
	snprintf(s->err->msg, sizeof(s->err->msg), "line %u failed%s%.900s", line,
		 why && why->msg[0] ? "\n" : "", why ? why->msg : "");
	return -1;
}

int rs_table(struct rs_state *s, const struct rs_val *v)
{
	if (s->in_table) {
		rs_error(s, v->line, IPT_EXIT_PARAM, "Bad argument `*%s'", v->str);
		s->err->style = IPT_ES_BARE;
		return -1;
	}
	s->in_table = true;
	s->table_line = v->line;
	s->skip_table = s->o->only_table && strcmp(s->o->only_table, v->str);
	if (s->skip_table)
		return 0;
	if (strcmp(v->str, "filter")) {
		rs_error(s, v->line, IPT_EXIT_PARAM,
			 "table `%s' (line %u) is not supported: bpf-iptables filters the "
			 "`filter' table only", v->str, v->line);
		return -1;
	}
	if (s->o->noflush)
		ipt_table_copy(s->result, &s->work);
	else
		ipt_table_copy_flushed(s->result, &s->work);
	return 0;
}

static int parse_counters(const char *s, __u64 *p, __u64 *b)
{
	unsigned long long pp, bb;
	char tail;

	if (sscanf(s, "[%llu:%llu]%c", &pp, &bb, &tail) != 2)
		return -1;
	*p = pp;
	*b = bb;
	return 0;
}

/* The next blank-separated word of a chain line; the state quotes odd chain
 * names ("bad name", ""), with \ escaping inside the quotes. */
static char *chain_word(char **p)
{
	char *s = *p, *out;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	out = s;
	if (*s == '"') {
		char *o = s;

		for (s++; *s && *s != '"'; s++) {
			if (*s == '\\' && s[1])
				s++;
			*o++ = *s;
		}
		if (*s)
			s++;
		*o = '\0';
	} else {
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
	*p = s;
	return out;
}

int rs_chain(struct rs_state *s, const struct rs_val *v)
{
	char *copy = strdup(v->str), *cur = copy;
	const char *name, *policy, *ctrs;
	int r = 0;

	if (!copy)
		abort();
	if (!s->in_table) {
		free(copy);
		return line_failed(s, v->line, NULL);
	}
	if (s->skip_table) {
		free(copy);
		return 0;
	}
	name = chain_word(&cur);
	policy = chain_word(&cur);
	ctrs = chain_word(&cur);
	if (!name) {
		rs_error(s, v->line, IPT_EXIT_PARAM, "%s: line %u chain name invalid", s->o->prog,
			 v->line);
		goto out_err;
	}
	if (strlen(name) > (s->o->state ? IPT_CHAIN_NAMESZ - 1 : IPT_CHAIN_MAXLEN)) {
		rs_error(s, v->line, IPT_EXIT_PARAM, "Invalid chain name `%s' (%u chars max)", name,
			 IPT_CHAIN_MAXLEN);
		goto out_err;
	}
	struct ipt_chain *c = ipt_chain_find(s->work, name);

	if (c && c->builtin) {
		enum ipt_verdict pv;

		if (!policy) {
			rs_error(s, v->line, IPT_EXIT_PARAM, "%s: line %u policy invalid",
				 s->o->prog, v->line);
			goto out_err;
		}
		if (!strcmp(policy, "-"))
			goto out;
		if (ipt_verdict_parse(policy, &pv) || pv == IPT_V_RETURN) {
			rs_error(s, v->line, IPT_EXIT_OTHER,
				 "Can't set policy `%s' on `%s' line %u: Bad policy name", policy,
				 name, v->line);
			s->err->style = IPT_ES_XT_ONLY;
			goto out_err;
		}
		c->policy = pv;
		/* the line sets the counters (zero without -c, as iptables-restore
		 * does): the running ones are not carried */
		c->pcnt = c->bcnt = 0;
		c->cidx = IPT_NO_CIDX;
		if (s->o->counters && ctrs && parse_counters(ctrs, &c->pcnt, &c->bcnt)) {
			rs_error(s, v->line, IPT_EXIT_PARAM, "invalid policy counters for chain '%s'",
				 name);
			goto out_err;
		}
		goto out;
	}
	if (policy && strcmp(policy, "-")) {
		rs_error(s, v->line, IPT_EXIT_OTHER,
			 "Can't set policy `%s' on `%s' line %u: Bad built-in chain name", policy,
			 name, v->line);
		s->err->style = IPT_ES_XT_ONLY;
		goto out_err;
	}
	if (c) {
		if (s->o->noflush) {
			ipt_chain_flush(c);
			goto out;
		}
		rs_error(s, v->line, IPT_EXIT_PARAM, "error creating chain '%s':File exists", name);
		goto out_err;
	}
	if (ipt_is_builtin_name(name) || !strcmp(name, "ACCEPT") || !strcmp(name, "DROP") ||
	    !strcmp(name, "RETURN") || !strcmp(name, "QUEUE")) {
		rs_error(s, v->line, IPT_EXIT_PARAM, "error creating chain '%s':File exists", name);
		goto out_err;
	}
	ipt_chain_new_user(s->work, name);
	goto out;
out_err:
	r = -1;
out:
	free(copy);
	return r;
}

int rs_commit(struct rs_state *s, unsigned int line)
{
	struct ipt_err verr;

	if (!s->in_table)
		return line_failed(s, line, NULL);
	s->in_table = false;
	if (s->skip_table)
		return 0;
	ipt_err_clear(&verr);
	if (ipt_table_validate(s->work, &verr)) {
		ipt_table_free(&s->work);
		return line_failed(s, line, &verr);
	}
	/* --test keeps the result too: the caller checks it against the data plane
	 * (cp_check) and stores nothing */
	if (s->result != s->orig)
		ipt_table_free(&s->result);
	s->result = s->work;
	s->work = NULL;
	return 0;
}

int rs_rule(struct rs_state *s, const char *counters, struct rs_words *ws, unsigned int line)
{
	struct ipt_cmd cmd;
	struct ipt_err err;
	__u64 p = 0, b = 0;

	if (!s->in_table)
		return line_failed(s, line, NULL);
	if (s->skip_table)
		return 0;
	if (counters && parse_counters(counters, &p, &b)) {
		rs_error(s, line, IPT_EXIT_PARAM, "Bad argument `%s'", counters);
		s->err->style = IPT_ES_BARE;
		return -1;
	}
	if (ipt_cmd_parse((int)ws->n, ws->w, true, &cmd, &err)) {
		rs_error(s, line, err.code, "%s", err.msg);
		s->err->style = err.style;
		ipt_cmd_free(&cmd);
		return -1;
	}
	if (cmd.other_family) {		/* a line for the other family's restore */
		ipt_cmd_free(&cmd);
		return 0;
	}
	if (counters && s->o->counters && !(cmd.options & OPT_COUNTERS))
		for (unsigned int i = 0; i < cmd.nrules; i++) {
			cmd.rules[i]->pcnt = p;
			cmd.rules[i]->bcnt = b;
		}
	if (!s->o->counters)
		for (unsigned int i = 0; i < cmd.nrules; i++)
			cmd.rules[i]->pcnt = cmd.rules[i]->bcnt = 0;
	int r = ipt_table_apply(s->work, &cmd, &err);

	if (r) {
		if (err.code == IPT_EXIT_OTHER)
			line_failed(s, line, &err);
		else {
			rs_error(s, line, err.code, "%s", err.msg);
			s->err->style = err.style;
		}
	}
	ipt_cmd_free(&cmd);
	return r;
}

int rs_eof(struct rs_state *s, unsigned int line)
{
	if (s->in_table) {
		if (s->failed)
			return -1;
		s->failed = true;
		s->err_line = line;
		s->err->code = IPT_EXIT_OTHER;
		s->err->style = IPT_ES_IPTC;
		snprintf(s->err->msg, sizeof(s->err->msg), "COMMIT expected at line %u", line);
		return -1;
	}
	return 0;
}

int ipt_restore(const char *text, size_t len, struct ipt_table **t,
		const struct ipt_restore_opts *o, struct ipt_err *err, unsigned int *err_line)
{
	struct rs_state s = { .o = o, .err = err };
	char *buf;
	int r;

	ipt_err_clear(err);
	*err_line = 0;
	/* iptables-restore reads lines: make sure the last one is terminated */
	buf = malloc(len + 2);
	if (!buf)
		abort();
	memcpy(buf, text, len);
	if (len == 0 || buf[len - 1] != '\n')
		buf[len++] = '\n';
	buf[len] = '\0';
	/* the caller's table stands for the result until a COMMIT replaces it (a
	 * copy of a large ruleset would take as long as its read) */
	s.orig = s.result = *t;
	if (restorescan_lex_init(&s.scanner))
		abort();
	YY_BUFFER_STATE b = restorescan__scan_bytes(buf, (int)len, s.scanner);

	restorescan_set_lineno(1, s.scanner);
	r = restoregram_parse(&s);
	restorescan__delete_buffer(b, s.scanner);
	restorescan_lex_destroy(s.scanner);
	free(buf);
	ipt_table_free(&s.work);
	if (r || s.failed) {
		if (!s.failed)
			rs_error(&s, 0, IPT_EXIT_PARAM, "syntax error");
		*err_line = s.err_line;
		if (s.result != s.orig)
			ipt_table_free(&s.result);
		return -1;
	}
	if (s.result != s.orig) {
		ipt_table_free(t);
		*t = s.result;
	}
	return 0;
}

int ipt_restore_state(const char *text, size_t len, struct ipt_table **t, struct ipt_err *err)
{
	struct ipt_restore_opts o = { .counters = true, .prog = "bpf-iptables", .state = true };
	bool quiet = ipt_warnings_quiet;
	unsigned int line;
	int r;

	ipt_warnings_quiet = true;
	ipt_cmd_state_names = true;
	r = ipt_restore(text, len, t, &o, err, &line);
	ipt_cmd_state_names = false;
	ipt_warnings_quiet = quiet;
	return r;
}
