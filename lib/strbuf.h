/* SPDX-License-Identifier: GPL-2.0 */
/* A growable string: every printer in the project writes into one of these. */
#ifndef BPFIPT_STRBUF_H
#define BPFIPT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct strbuf {
	char *buf;	/* always NUL-terminated once anything was added */
	size_t len, cap;
};

#define STRBUF_INIT { NULL, 0, 0 }

void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addc(struct strbuf *sb, char c);
void sb_addn(struct strbuf *sb, const char *s, size_t n);
/* Small formatters for what the printers write most: what "%llu" and
 * inet_ntop() give, without vfprintf. */
void sb_add_u64(struct strbuf *sb, unsigned long long v);
void sb_add_ipv4(struct strbuf *sb, const void *be_addr);	/* network order, 4 bytes */
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
const char *sb_str(const struct strbuf *sb);	/* "" when empty */
int sb_write(const struct strbuf *sb, FILE *f);

#endif
