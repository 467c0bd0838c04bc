// SPDX-License-Identifier: GPL-2.0
#include "errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int err_vset(struct ipt_err *e, int code, enum ipt_err_style style,
		    const char *fmt, va_list ap)
{
	if (e->code)
		return -1;
	e->code = code;
	e->style = style;

	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (n >= (int)sizeof(e->msg)) {
		/* a huge argument quoted in the message: keep its end too, which
		 * says what is wrong ("... too long (must be under 29 chars)") */
		char *full = malloc((size_t)n + 1);
		size_t keep = (sizeof(e->msg) - 5) / 2;

		if (full) {
			vsnprintf(full, (size_t)n + 1, fmt, again);
			snprintf(e->msg + keep, sizeof(e->msg) - keep, "[...]%s",
				 full + n - (sizeof(e->msg) - 1 - keep - 5));
			free(full);
		}
	}
	va_end(again);
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
	/* msg is a C string: an empty one is enough. Clearing all 1 KiB of it cost
	 * ~4% of a restore, which clears two of these per rule. */
	e->code = 0;
	e->style = 0;
	e->argi = -1;
	e->msg[0] = '\0';
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
