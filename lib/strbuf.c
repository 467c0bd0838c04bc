// SPDX-License-Identifier: GPL-2.0
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

static void sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	char *p = realloc(sb->buf, cap);
	if (!p)
		abort();	/* out of memory: nothing sensible left to do */
	sb->buf = p;
	sb->cap = cap;
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;

	/* format once into the room there is; a second time only when it was short */
	sb_grow(sb, 63);
	va_copy(ap2, ap);
	int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		sb_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sb_adds(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);

	sb_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n + 1);
	sb->len += n;
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_addc(struct strbuf *sb, char c)
{
	sb_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sb_add_u64(struct strbuf *sb, unsigned long long v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	sb_addn(sb, p, (size_t)(tmp + sizeof(tmp) - p));
}

void sb_add_ipv4(struct strbuf *sb, const void *be_addr)
{
	const unsigned char *b = be_addr;

	for (int i = 0; i < 4; i++) {
		if (i)
			sb_addc(sb, '.');
		sb_add_u64(sb, b[i]);
	}
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

const char *sb_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

int sb_write(const struct strbuf *sb, FILE *f)
{
	if (sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		return -1;
	return 0;
}
