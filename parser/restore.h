/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iptables-restore files: "*filter", ":CHAIN POLICY [p:b]", rule lines (each an
 * iptables command line without the program name), "COMMIT", comments.
 * A table is applied at its COMMIT, whole or not at all.
 */
#ifndef BPFIPT_RESTORE_H
#define BPFIPT_RESTORE_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"
#include "errors.h"

struct ipt_restore_opts {
	bool noflush;		/* -n: keep what is there, add to it */
	bool counters;		/* -c: take [p:b] from the file */
	bool test;		/* -t: parse and check only */
	const char *only_table;	/* -T NAME */
	const char *prog;	/* program name for messages */
	bool state;		/* reading the saved state: chain names up to 31 (-E) */
};

/* Apply the file text to *t (replaced by the result on success). err->argi is
 * unused; err_line gets the line an error belongs to (0 when none). Messages are
 * complete (iptables-restore's wording). Returns 0 or -1. */
int ipt_restore(const char *text, size_t len, struct ipt_table **t,
		const struct ipt_restore_opts *o, struct ipt_err *err, unsigned int *err_line);

/* Load a state file written by ipt_save_table(counters=true). */
int ipt_restore_state(const char *text, size_t len, struct ipt_table **t, struct ipt_err *err);

#endif
