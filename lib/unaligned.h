/* SPDX-License-Identifier: GPL-2.0 */
/* 16- and 32-bit fields of a packet at any offset, as they are (network order):
 * a packet after a 14-byte Ethernet header has its IPv4 addresses 2 bytes off
 * a 4-byte boundary, where a cast pointer's access is undefined (UBSan). */
#ifndef BPFIPT_UNALIGNED_H
#define BPFIPT_UNALIGNED_H

#include <string.h>
#include <linux/types.h>

static inline __u16 ipt_ld16(const void *p)
{
	__u16 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline __u32 ipt_ld32(const void *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ipt_st16(void *p, __u16 v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void ipt_st32(void *p, __u32 v)
{
	memcpy(p, &v, sizeof(v));
}

#endif
