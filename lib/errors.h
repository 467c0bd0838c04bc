/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Errors in iptables' own words and exit codes.
 *
 * iptables reports three ways, and scripts grep for them:
 *  IPT_ES_XT:    "iptables v1.8.9 (legacy): MSG" + "Try `iptables -h' ..." (bad parameter)
 *  IPT_ES_BARE:  "MSG" + "Try `iptables -h' ..."            (e.g. Bad argument `x')
 *  IPT_ES_IPTC:  "iptables: MSG"                              (the ruleset refused it)
 */
#ifndef BPFIPT_ERRORS_H
#define BPFIPT_ERRORS_H

#include <stdarg.h>
#include <stdbool.h>

enum ipt_exit {
	IPT_EXIT_OK = 0,
	IPT_EXIT_OTHER = 1,
	IPT_EXIT_PARAM = 2,
	IPT_EXIT_VERSION = 3,
	IPT_EXIT_RESOURCE = 4,
};

enum ipt_err_style {
	IPT_ES_XT,
	IPT_ES_BARE,
	IPT_ES_IPTC,
	IPT_ES_PLAIN,		/* "MSG" alone (the xtables lock messages) */
	IPT_ES_XT_ONLY,		/* "iptables v1.8.9 (legacy): MSG", no "Try" line */
	IPT_ES_MAX,
};

struct ipt_err {
	int code;		/* enum ipt_exit; 0 = no error */
	enum ipt_err_style style;
	int argi;		/* index of the offending word, -1 when none */
	char msg[1024];
};

/* Record the first error only (later ones are consequences); always returns -1. */
int ipt_err_set(struct ipt_err *e, int code, enum ipt_err_style style, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Shorthand for the common case: a bad parameter, exit 2. */
int ipt_err_param(struct ipt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ipt_err_clear(struct ipt_err *e);

/* Warnings iptables prints and goes on (stderr); silenced while the saved state
 * is re-read, since they were shown when the rule was entered. */
extern bool ipt_warnings_quiet;
void ipt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define BPFIPT_VERSION "0.1.0"

#endif
