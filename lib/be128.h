/* SPDX-License-Identifier: GPL-2.0 */
/* An IPv6 address (16 bytes, network order) as a host-order 128-bit integer:
 * two 64-bit loads swapped, not sixteen 128-bit shifts (the compiler and the
 * interval sets read every prefix of a deny list this way). */
#ifndef BPFIPT_BE128_H
#define BPFIPT_BE128_H

#include <endian.h>
#include <string.h>
#include <linux/types.h>

static inline unsigned __int128 ipt_be128(const void *p)
{
	__u64 hi, lo;

	memcpy(&hi, p, 8);
	memcpy(&lo, (const char *)p + 8, 8);
	return (unsigned __int128)be64toh(hi) << 64 | be64toh(lo);
}

/* The other way: a into 16 bytes at p, network order. */
static inline void ipt_be128_put(void *p, unsigned __int128 a)
{
	__u64 hi = htobe64((__u64)(a >> 64)), lo = htobe64((__u64)a);

	memcpy(p, &hi, 8);
	memcpy((char *)p + 8, &lo, 8);
}

#endif
