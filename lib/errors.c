// SPDX-License-Identifier: GPL-2.0
#include "errors.h"

#include <stdio.h>
#include <string.h>

static int err_vset(struct ipt_err *e, int code, enum ipt_err_style style,
		    const char *fmt, va_list ap)
{
	if (e->code)
		return -1;
	e->code = code;
	e->style = style;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return -1;
}

int ipt_err_set(struct ipt_err *e, int code, enum ipt_err_style style, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, code, style, fmt, ap);
	va_end(ap);
	return -1;
}

int ipt_err_param(struct ipt_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, IPT_EXIT_PARAM, IPT_ES_XT, fmt, ap);
	va_end(ap);
	return -1;
}

void ipt_err_clear(struct ipt_err *e)
{
	memset(e, 0, sizeof(*e));
	e->argi = -1;
}

bool ipt_warnings_quiet;

void ipt_warn(const char *fmt, ...)
{
	va_list ap;

	if (ipt_warnings_quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
