#!/usr/bin/env python3
"""The differential test of kernel_diff.py for IPv6: bpf-ip6tables against
ip6tables-legacy on real packets in twin namespace topologies (netlib6.py).

    kernel_diff6.py --bin build [kernel_diff.py options]

is `kernel_diff.py --ipv6`. The rulesets use -s/-d with IPv6 prefixes (/0 to
/128, masks written as addresses, host bits, bare addresses, !), -p tcp, udp,
ipv6-icmp/icmpv6 (ip6tables' names) and numbers, ports, multiport, tcp flags,
--icmpv6-type, -m iprange with IPv6 ranges, -m length, -i/-o, user chains, and
runs of rules that differ only in -s or -d (deny lists). The packets are
TCP, UDP, ICMPv6 and other next headers, sometimes behind hop-by-hop,
destination-options or atomic-fragment extension headers (ip6tables' -p
matches the upper layer after them), sometimes two fragments (not to INPUT,
as kernel_diff.py: --input-fragments).
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_diff as kd  # noqa: E402
import netlib6 as nl6  # noqa: E402

ICMP6_SPECS = [  # (text, type, code or None), ip6tables' names and numbers
    ("echo-request", 128, None), ("echo-reply", 129, None), ("128", 128, None),
    ("129", 129, None), ("destination-unreachable", 1, None),
    ("port-unreachable", 1, 4), ("1/4", 1, 4), ("1/0", 1, 0), ("1", 1, None),
    ("no-route", 1, 0), ("communication-prohibited", 1, 1),
    ("address-unreachable", 1, 3), ("packet-too-big", 2, None),
    ("time-exceeded", 3, None), ("ttl-zero-during-transit", 3, 0), ("3/1", 3, 1),
    ("parameter-problem", 4, None), ("bad-header", 4, 0), ("4/2", 4, 2),
    ("router-solicitation", 133, None), ("neighbour-advertisement", 136, None),
    ("neighbour-solicitation", 135, None), ("redirect", 137, None),
    ("200", 200, None), ("200/7", 200, 7),
]


class Generator6(kd.Generator):
    nl = nl6
    W = 128
    ICMP, ICMP_NUM, ICMP_OPT, ICMP_SPECS = "icmpv6", 58, "--icmpv6-type", ICMP6_SPECS
    ICMP_TYPES = [1, 2, 3, 4, 128, 129, 144, 200]
    FRAG_OPT = False            # ip6tables has no -f
    LOOPBACK = "::1"
    RUN_PLENS = ([16, 32, 48, 56, 64, 64, 96, 120, 128, 128], [48, 64, 128, 128],
                 [16, 32, 64, 128])

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        r = self.r
        # ipv6-icmp is ip6tables' canonical name: use it now and then
        if r.random() < .3:
            self.ICMP = "ipv6-icmp"
        # lengths: payload length + 40
        self.l_anchor = [r.randrange(56, 220) for _ in range(3)] + \
            [r.randrange(220, 920) for _ in range(2)]

    def _random_addr(self):
        r = self.r
        k = r.randrange(6)
        if k == 0:
            return nl6.i2a(0xfd00 << 112 | r.randrange(1 << 112))
        if k == 1:
            return nl6.i2a(0x20010db8 << 96 | r.randrange(1 << 96))
        if k == 2:
            return nl6.i2a(nl6.a2i("fd00:1::") | r.randrange(1 << 64) if r.random() < .5
                           else nl6.a2i("fd00:2::") | r.randrange(1 << 64))
        if k == 3:
            return nl6.i2a(nl6.a2i(r.choice(nl6.all_topology_addrs())) ^ r.randrange(1 << 16))
        return nl6.i2a(r.randrange(1 << 128))

    def _plen(self):
        return self.r.choice([0, 8, 16, 32, 48, 56, 60, 64, 64, 64, 80, 96, 112, 120,
                              124, 126, 127, 128, 128, 128, self.r.randrange(129)])

    def _extras(self, pkt):
        r = self.r
        if r.random() < .12:
            pkt.ext = r.choice([[0], [60], [44], [0, 60], [0, 44], [60, 44], [0, 60, 44]])


class V6(kd.V4):
    name = "IPv6"
    legacy_restore = "ip6tables-legacy-restore"
    bpf_restore = "bpf-ip6tables-restore"

    @staticmethod
    def twins():
        return nl6.Twin("a", 1), nl6.Twin("b", 2)

    @staticmethod
    def generator(*args, **kw):
        return Generator6(*args, **kw)

    @staticmethod
    def udp_packet(dport):
        p = nl6.Packet(17, nl6.CLI_IP, nl6.SRV_IP, "cli", "srv", sport=5555, dport=dport)
        p.length = p.min_length()
        return p

    @staticmethod
    def send(sock, pkt):
        return nl6.send(sock, pkt)

    @staticmethod
    def collect(fw, timeout, quiet):
        return nl6.collect(fw.socks, fw.owner, fw.proto, timeout, quiet)


if __name__ == "__main__":
    if "--ipv6" not in sys.argv and "-6" not in sys.argv:
        sys.argv.insert(1, "--ipv6")
    sys.exit(kd.main())
