// SPDX-License-Identifier: GPL-2.0
/*
 * tcfloor: a tc program that passes every packet. The veth floods' tc-floor
 * (bench/run.sh, bench/vethab.sh --tc-floor; tc_floor_load in bench/flood.sh)
 * attaches it where bpf-iptables attaches its tc programs on the router (clsact,
 * direct action), so a flood measures what tc's hooks cost a packet before any
 * firewall work: the ceiling of a tc firewall against no firewall.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

__attribute__((section("tc"), used)) int tcfloor(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
