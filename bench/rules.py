#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The rulesets of the veth and update benchmarks (bench/run.sh), one ruleset in
the syntax of each firewall, so every firewall holds the same rules.

  rules.py KIND CHAIN N FORMAT [--family 6]

KIND   mixed: N rules "-s 172.x.y.0/24 -p udp --dport P -j DROP" (source
               i % 1021, port 1024 + i % 509: adjacent rules differ in two
               fields, no two alike), then the flood's rule
               "-s 10.1.0.2 -p udp --dport 9000 -j ACCEPT" (INPUT, FORWARD)
       deny:  an egress deny list, N rules "-d CIDR -j DROP", CIDRs random in
               11.0.0.0-191.255.255.255 (never the benchmark's 10/8): 10% /24,
               1% /16, the rest /32; then "-d 10.2.0.2 -p udp --dport 9000 -j
               ACCEPT" (OUTPUT)
       chains: N user chains SVC-00000 ... of two rules each ("-s ADDR -j
               DROP", "-j ACCEPT"), CHAIN jumping to each from one rule
               "-d 10.x.y.1 -p tcp --dport 80 -j SVC-i" (kube-proxy's and
               Docker's shape: many chains, few rules a chain); iptables
               format only
       kube:  N services as kube-proxy's filter rules: CHAIN jumping to
               KUBE-SERVICES, one rule a service there ("-d 10.96.x.y/32 -p
               tcp -m comment --comment ... -m tcp --dport P -j
               KUBE-SVC-i", an address, port and comment each), each
               KUBE-SVC-i "-s ADDR -j DROP", "-j ACCEPT"; iptables format
               only
CHAIN  INPUT, FORWARD or OUTPUT
FORMAT iptables  an iptables-restore file (iptables-legacy, iptables-nft,
                 bpf-iptables)
       nft       nft -f: one nftables rule per rule
       nftset    nft -f: the N rules as one set (interval, concatenated for
                 mixed), one rule looking it up, then the flood's rule
       ipset     ipset restore: the set (hash:net,port for mixed, hash:net for
                 deny); the iptables rules that use it: see --ipset-rules
       ipset-rules  an iptables-restore file: "-m set --match-set" + the flood's
--family 6  the same ruleset in IPv6: every IPv4 prefix a.b.c.d/p becomes
            2001:db8:aabb:ccdd::/(32 + p), as bench/pktcost --family 6 maps its
            own (an ip6tables-restore file, ipset family inet6, nft ip6)
"""
import random
import re
import sys

SET = "bench"


def mixed(n):
    for i in range(n):
        s = i % 1021
        yield f"172.{16 + s // 256}.{s % 256}.0/24", 1024 + i % 509


def deny(n):
    r = random.Random(7)
    for _ in range(n):
        a = r.randrange(0x0B000000, 0xC0000000)
        x = r.randrange(100)
        plen = 16 if x == 0 else 24 if x < 11 else 32
        a &= (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
        yield f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/{plen}", None


def chains(chain, n, w):
    w("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
    for i in range(n):
        w(f":SVC-{i:05d} - [0:0]\n")
    for i in range(n):
        w(f"-A {chain} -d 10.{i // 250}.{i % 250}.1/32 -p tcp -m tcp --dport 80 -j SVC-{i:05d}\n")
    for i in range(n):
        w(f"-A SVC-{i:05d} -s 10.200.{i // 250}.{i % 250}/32 -j DROP\n-A SVC-{i:05d} -j ACCEPT\n")
    w("COMMIT\n")


def kube(chain, n, w):
    """kube-proxy's filter rules for n services, each its own address, port and
    comment: CHAIN jumping to KUBE-SERVICES, which jumps to KUBE-SVC-i"""
    w("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
    w(":KUBE-SERVICES - [0:0]\n")
    for i in range(n):
        w(f":KUBE-SVC-{i:05d} - [0:0]\n")
    w(f'-A {chain} -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n')
    for i in range(n):
        port = (80, 443, 8080, 53)[i % 4]
        w(f"-A KUBE-SERVICES -d 10.96.{i // 250}.{i % 250 + 1}/32 -p tcp -m comment "
          f'--comment "ns{i % 50}/svc{i}:p{port} cluster IP" -m tcp --dport {port} '
          f"-j KUBE-SVC-{i:05d}\n")
    for i in range(n):
        w(f"-A KUBE-SVC-{i:05d} -s 10.244.{i // 250}.{i % 250}/32 -j DROP\n"
          f"-A KUBE-SVC-{i:05d} -j ACCEPT\n")
    w("COMMIT\n")


def flood_rule(kind):
    if kind == "mixed":
        return ("-s 10.1.0.2/32 -p udp --dport 9000 -j ACCEPT",
                "ip saddr 10.1.0.2 udp dport 9000 accept")
    return ("-d 10.2.0.2/32 -p udp --dport 9000 -j ACCEPT",
            "ip daddr 10.2.0.2 udp dport 9000 accept")


V4 = re.compile(r"\b(\d+)\.(\d+)\.(\d+)\.(\d+)(?:/(\d+))?\b")
V6_WORDS = [("family inet ", "family inet6 "), ("table ip ", "table ip6 "),
            ("ipv4_addr", "ipv6_addr"), ("ip saddr", "ip6 saddr"), ("ip daddr", "ip6 daddr")]


def to_v6(line):
    """line with its IPv4 prefixes as 2001:db8:aabb:ccdd::/(32 + p)"""
    def pfx(m):
        a, b, c, d = (int(m.group(i)) for i in range(1, 5))
        plen = int(m.group(5)) if m.group(5) else 32
        return f"2001:db8:{a << 8 | b:x}:{c << 8 | d:x}::/{32 + plen}"
    for old, new in V6_WORDS:
        line = line.replace(old, new)
    return V4.sub(pfx, line)


class V6Out:
    def __init__(self, out):
        self.out = out

    def write(self, text):
        self.out.write(to_v6(text))


def main():
    args = sys.argv[1:]
    family = 4
    if "--family" in args:
        i = args.index("--family")
        family = int(args[i + 1])
        del args[i:i + 2]
    kind, chain, n, fmt = args[0], args[1], int(args[2]), args[3]
    if kind in ("chains", "kube"):
        if fmt != "iptables" or family != 4 or n > 250 * 250:
            sys.exit(f"rules.py: {kind}: iptables format, IPv4, at most 62500 chains")
        (chains if kind == "chains" else kube)(chain, n, sys.stdout.write)
        return
    gen = mixed(n) if kind == "mixed" else deny(n)
    addr = "-s" if kind == "mixed" else "-d"
    nfaddr = "saddr" if kind == "mixed" else "daddr"
    ipt_flood, nft_flood = flood_rule(kind)
    out = V6Out(sys.stdout) if family == 6 else sys.stdout
    w = out.write
    if fmt == "iptables":
        w("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
        for net, port in gen:
            if port is None:
                w(f"-A {chain} {addr} {net} -j DROP\n")
            else:
                w(f"-A {chain} {addr} {net} -p udp --dport {port} -j DROP\n")
        w(f"-A {chain} {ipt_flood}\nCOMMIT\n")
    elif fmt in ("nft", "nftset"):
        hook = chain.lower()
        w(f"table ip {SET} {{\n")
        if fmt == "nftset":
            if kind == "mixed":
                w(f"  set s {{ type ipv4_addr . inet_service; flags interval;\n")
            else:
                w(f"  set s {{ type ipv4_addr; flags interval; auto-merge;\n")
            first = True
            for net, port in gen:
                w("    elements = { " if first else ", ")
                w(net if port is None else f"{net} . {port}")
                first = False
            w(" }\n" if not first else "")
            w("  }\n")
        w(f"  chain {hook} {{ type filter hook {hook} priority 0; policy accept;\n")
        if fmt == "nftset":
            if kind == "mixed":
                w("    ip saddr . udp dport @s drop\n")
            else:
                w("    ip daddr @s drop\n")
        else:
            for net, port in gen:
                if port is None:
                    w(f"    ip {nfaddr} {net} drop\n")
                else:
                    w(f"    ip {nfaddr} {net} udp dport {port} drop\n")
        w(f"    {nft_flood}\n  }}\n}}\n")
    elif fmt == "ipset":
        typ = "hash:net,port" if kind == "mixed" else "hash:net"
        # room above the list: the update section appends one more entry
        w(f"create {SET} {typ} family inet hashsize 65536 maxelem {max(n + n // 4, 65536)}\n")
        for net, port in gen:
            w(f"add {SET} {net}\n" if port is None else f"add {SET} {net},udp:{port}\n")
    elif fmt == "ipset-rules":
        w("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
        if kind == "mixed":
            w(f"-A {chain} -p udp -m set --match-set {SET} src,dst -j DROP\n")
        else:
            w(f"-A {chain} -m set --match-set {SET} dst -j DROP\n")
        w(f"-A {chain} {ipt_flood}\nCOMMIT\n")
    else:
        sys.exit(f"rules.py: unknown format {fmt}")


if __name__ == "__main__":
    main()
