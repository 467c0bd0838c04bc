/* SPDX-License-Identifier: GPL-2.0 */
/* The Internet checksum (RFC 1071) of n bytes, for the packets the tools and
 * tests craft in userspace. */
#ifndef BPFIPT_CSUM_H
#define BPFIPT_CSUM_H

#include <stddef.h>
#include <linux/types.h>

static inline __u16 ipt_csum(const void *p, size_t n)
{
	const __u16 *w = p;
	__u32 s = 0;

	for (; n > 1; n -= 2)
		s += *w++;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

#endif
