/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the restore-file grammar (restoregram.y), scanner and driver. */
#ifndef BPFIPT_RESTORE_INTERNAL_H
#define BPFIPT_RESTORE_INTERNAL_H

#include "restore.h"

struct rs_words {
	char **w;
	unsigned int n, cap;
};

struct rs_val {
	char *str;		/* WORD, TABLE, CHAINLINE, COUNTERS text (owned) */
	struct rs_words words;	/* a rule line */
	unsigned int line;
};

struct rs_state {
	void *scanner;
	const struct ipt_restore_opts *o;
	struct ipt_table *orig;		/* what was there before the file: the caller's */
	struct ipt_table *work;		/* the table being built, NULL outside *filter */
	struct ipt_table *result;	/* the last committed state (orig: none yet) */
	bool in_table, skip_table;
	unsigned int table_line;
	struct ipt_err *err;
	unsigned int err_line;
	bool failed;
};

void rs_words_push(struct rs_words *ws, char *w);
void rs_words_free(struct rs_words *ws);
int rs_table(struct rs_state *s, const struct rs_val *v);
int rs_chain(struct rs_state *s, const struct rs_val *v);
int rs_commit(struct rs_state *s, unsigned int line);
int rs_rule(struct rs_state *s, const char *counters, struct rs_words *ws, unsigned int line);
int rs_eof(struct rs_state *s, unsigned int line);
void rs_error(struct rs_state *s, unsigned int line, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
