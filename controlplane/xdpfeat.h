/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a device's driver can do with XDP, as the kernel reports it (Linux >= 6.3:
 * the "netdev" generic netlink family, attribute xdp-features). The loader's
 * automatic ingress choice (DP_INGRESS_AUTO, controlplane/loader.h) attaches XDP
 * natively only where the driver runs it (NETDEV_XDP_ACT_BASIC), so that a
 * command on a host without such devices never loads an XDP program it cannot use.
 */
#ifndef BPFIPT_XDPFEAT_H
#define BPFIPT_XDPFEAT_H

#include <linux/types.h>

#define CP_XDP_ACT_BASIC	1	/* NETDEV_XDP_ACT_BASIC: native XDP */

/* The xdp-features bitmask of ifindex in *f: 0, or -errno when the kernel
 * cannot say (-EOPNOTSUPP: no netdev family, a kernel before 6.3). */
int cp_xdp_features(int ifindex, __u64 *f);

#endif
