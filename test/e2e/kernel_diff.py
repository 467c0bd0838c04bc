#!/usr/bin/env python3
"""Differential test of the data plane against the kernel's own iptables.

Two identical client - router - server topologies ("twins") are built in
network namespaces (netlib.py):

    cli (10.1.0.2) --veth-- (10.1.0.1) rtr (10.2.0.1) --veth-- (10.2.0.2) srv

Twin A is filtered by iptables-legacy (netfilter), twin B by bpf-iptables
(tc/XDP).  For every seeded random ruleset the same iptables-restore text is
loaded into both twins -- as INPUT on the server, FORWARD on the router or
OUTPUT on the client -- and the same crafted IPv4 packets (TCP, UDP, ICMP,
other protocols; sometimes IP options or two fragments) are sent through both
from raw IP_HDRINCL sockets.  A raw socket in the destination namespace sees
exactly the packets that passed INPUT there (design.md, "Observing
verdicts"), so each packet is either delivered or dropped in each twin; the
two must agree packet by packet.  Packets are told apart by IP id + a nonce in
the payload.  A disagreement is sent again once (with a longer wait) before it
counts, so a slow delivery cannot fail the run; a confirmed one prints the
ruleset, the packet and both verdicts, and the first few are minimised
(rules and matches removed while the disagreement stays) into a small
reproducer.

Rulesets: 1-30 rules in the base chain and a random policy, plus 0-3 user
chains (0-10 rules; with --long-chains probability 30-120, so that slots lie
beyond the first 64-bit words of the bit vectors) reached by -j and -g.
Matches: -s/-d (CIDR, dotted masks, host bits, !), -p tcp/udp/icmp/number/!,
--sport/--dport (single, open and closed ranges, !), multiport
--sports/--dports/--ports, --tcp-flags/--syn, --icmp-type, -m iprange, -m
length, -f, -i/-o with wildcards where iptables allows them (anywhere in user
chains, where the missing interface must never match); targets ACCEPT, DROP,
RETURN, none, user chains; now and then a run of rules that differ only in -s
or -d (compiled into one set lookup; -j/-g to a chain each: a verdict map).  Not generated (later issues):
conntrack/state, LOG/REJECT, limit, mark, mac, IPv6.

Packets: biased toward the ruleset's prefixes, ranges, ports, flags, ICMP
types and lengths; sent client -> server, server -> client, router -> server,
client -> router, and over lo, depending on the chain, also to subnet
broadcasts and 224.0.0.1 (special cases of the chain selector).

Known differences, off by default (options turn them on):
  --input-fragments  fragmented datagrams to INPUT: the kernel reassembles in
                     front of INPUT, so iptables judges the whole datagram,
                     while bpf-iptables judges each fragment at ingress (the
                     "no IP reassembly" limit of design.md); a non-first
                     fragment has no ports, so port rules differ.
  --truncated P      packets cut inside the TCP/UDP/ICMP header: iptables
                     drops ("hotdrop") such a packet as soon as a tcp/udp/icmp
                     match looks at it; bpf-iptables treats it as a packet
                     without ports and goes on.
--oracle puts iptables-legacy in both twins: it checks the harness itself
(no noise, no lost packet) and must always pass.

Usage (root; iptables-legacy and a BPF-capable kernel are required -- their
absence is a failure, never a skip):

  kernel_diff.py --bin build                       # CI: 200 rulesets x 50 packets
  kernel_diff.py --bin build --seed 7 --rulesets 5000
  kernel_diff.py --bin build --seed S --only 17 -v # replay one ruleset
  kernel_diff.py --bin build --ingress xdp         # judge ingress at XDP only

The last line is "N passed, N failed" (rulesets whose packets all agreed);
the exit status is 1 on any disagreement or when the test cannot run.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netlib as nl  # noqa: E402

DEFAULT_SEED = 20261101
BASE = {"INPUT": "srv", "FORWARD": "rtr", "OUTPUT": "cli"}
WHERE = {"INPUT": "INPUT on the server", "FORWARD": "FORWARD on the router",
         "OUTPUT": "OUTPUT on the client"}

# (sender, receiver, weight) per chain under test
FLOWS = {
    "INPUT": [("cli", "srv", 80), ("srv", "srv", 12), ("rtr", "srv", 8)],
    "FORWARD": [("cli", "srv", 58), ("srv", "cli", 32), ("cli", "rtr", 5),
                ("rtr", "srv", 5)],
    "OUTPUT": [("cli", "srv", 68), ("cli", "rtr", 12), ("cli", "cli", 20)],
}
IFACES = {  # names -i/-o may use (some never exist: they must never match)
    "INPUT": ["eth0", "lo", "eth+", "eth1", "e+", "+", "l+"],
    "FORWARD": ["eth0", "eth1", "eth+", "lo", "eth2", "+"],
    "OUTPUT": ["eth0", "lo", "eth+", "eth1", "+", "l+"],
}
PORT_POOL = [0, 1, 7, 20, 21, 22, 23, 25, 53, 67, 68, 80, 110, 123, 443, 1023,
             1024, 1025, 3306, 5000, 8080, 8443, 32767, 32768, 49152, 65534,
             65535]
ICMP_SPECS = [  # (text, type, code or None)
    ("echo-request", 8, None), ("echo-reply", 0, None), ("8", 8, None),
    ("0", 0, None), ("destination-unreachable", 3, None),
    ("port-unreachable", 3, 3), ("3/3", 3, 3), ("3/1", 3, 1), ("3", 3, None),
    ("host-unreachable", 3, 1), ("fragmentation-needed", 3, 4),
    ("time-exceeded", 11, None), ("11/0", 11, 0), ("11/1", 11, 1),
    ("parameter-problem", 12, None), ("timestamp-request", 13, None),
    ("redirect", 5, None), ("5/1", 5, 1), ("source-quench", 4, None),
    ("any", None, None), ("13/0", 13, 0), ("17", 17, None),
]
TCP_FLAG_BITS = {"FIN": 1, "SYN": 2, "RST": 4, "PSH": 8, "ACK": 16, "URG": 32}
COMMON_FLAGS = [0x02, 0x12, 0x10, 0x11, 0x04, 0x14, 0x18, 0x01, 0x00, 0x3f,
                0x29, 0x03, 0x06, 0x05, 0xc2]
OTHER = list(nl.OTHER_PROTOS)


# ---------------------------------------------------------------------------
# Rulesets
# ---------------------------------------------------------------------------

class Rule:
    """A rule: a list of clauses (each a token list) and a target token list."""

    def __init__(self, clauses, target):
        self.clauses, self.target = clauses, target

    def text(self, chain):
        toks = ["-A", chain] + [t for c in self.clauses for t in c] + self.target
        return " ".join(toks)

    def jumps_to(self):
        if len(self.target) == 2 and self.target[0] in ("-j", "-g") and \
                self.target[1].startswith("uc"):
            return self.target[1]
        return None


class Ruleset:
    def __init__(self, base, policy, chains):
        self.base = base              # INPUT / FORWARD / OUTPUT
        self.policy = policy
        self.chains = chains          # ordered dict name -> [Rule]; base first

    def text(self):
        out = ["*filter"]
        for c in ("INPUT", "FORWARD", "OUTPUT"):
            pol = self.policy if c == self.base else "ACCEPT"
            out.append(f":{c} {pol} [0:0]")
        for name in self.chains:
            if name != self.base:
                out.append(f":{name} - [0:0]")
        for name, rules in self.chains.items():
            for r in rules:
                out.append(r.text(name))
        out.append("COMMIT")
        return "\n".join(out) + "\n"

    def nrules(self):
        return sum(len(r) for r in self.chains.values())

    def copy(self):
        return Ruleset(self.base, self.policy,
                       {n: [Rule([list(c) for c in r.clauses], list(r.target))
                            for r in rules] for n, rules in self.chains.items()})


EMPTY = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n" \
        ":OUTPUT ACCEPT [0:0]\nCOMMIT\n"


class Generator:
    """A ruleset and packets biased toward its addresses, ports and flags.
    Everything comes from one Random seeded by (seed, ruleset index).
    kernel_diff6.Generator6 changes the family-specific parts."""

    nl = nl                     # addresses, topology, packets: netlib or netlib6
    W = 32                      # address bits
    ICMP, ICMP_NUM, ICMP_OPT, ICMP_SPECS = "icmp", 1, "--icmp-type", ICMP_SPECS
    ICMP_TYPES = [0, 3, 4, 5, 8, 11, 12, 13, 14, 17]
    FRAG_OPT = True             # -f exists
    LOOPBACK = "127.0.0.1"
    RUN_PLENS = ([8, 16, 20, 24, 24, 28, 30, 32, 32], [16, 24, 32, 32], [8, 12, 24, 32])

    def mask(self, plen):
        amax = (1 << self.W) - 1
        return (amax << (self.W - plen)) & amax if plen else 0

    def _plen(self):
        return self.r.choice([0, 8, 12, 16, 16, 20, 23, 24, 24, 24, 25, 28, 30, 31,
                              32, 32, 32, self.r.randrange(33)])

    def _mask_text(self, m):
        return self.nl.i2a(m)

    def _extras(self, pkt):
        """Family-specific packet decorations (IPv4 options)."""
        if self.r.random() < .05:
            pkt.options = True

    def __init__(self, rnd, base, input_fragments=False, long_chains=0.1, runs=0.03,
                 truncated=0.0, vmaps=False):
        self.r = rnd
        self.truncated = truncated
        self.runs = runs
        self.vmaps = vmaps
        self.base = base
        self.input_fragments = input_fragments
        self.long_chains = long_chains
        r = rnd
        self.flows = FLOWS[base]
        recv = sorted({f[1] for f in self.flows})
        self.d_anchor = [a for role in recv for a in self.nl.local_addrs(role)]
        self.s_anchor = r.sample(self.nl.all_topology_addrs(), 4) + \
            [self._random_addr() for _ in range(3)]
        self.p_anchor = r.sample(PORT_POOL, 5) + [r.randrange(65536) for _ in range(3)]
        self.l_anchor = [r.randrange(28, 200) for _ in range(3)] + \
            [r.randrange(200, 900) for _ in range(2)]
        # what the rules use, for the packets: (lo, hi) intervals
        self.s_iv, self.d_iv, self.port_iv, self.len_iv = [], [], [], []
        self.icmp_used, self.flag_used, self.proto_used = [], [], []

    # -- values ------------------------------------------------------------

    def _random_addr(self):
        r = self.r
        k = r.randrange(6)
        if k == 0:
            return self.nl.i2a(0x0a000000 | r.randrange(1 << 24))
        if k == 1:
            return self.nl.i2a(0xc0a80000 | r.randrange(1 << 16))
        if k == 2:
            return self.nl.i2a(0xac100000 | r.randrange(1 << 20))
        if k == 3:
            return self.nl.i2a(0x0a010000 | r.randrange(1 << 16) if r.random() < .5
                          else 0x0a020000 | r.randrange(1 << 16))
        return self.nl.i2a(r.randrange(1 << 32))

    def _cidr(self, anchors, ivs):
        r = self.r
        a = self.nl.a2i(r.choice(anchors) if r.random() < .85 else self._random_addr())
        plen = self._plen()
        m = self.mask(plen)
        amax = (1 << self.W) - 1
        net = a & m
        ivs.append((net, net | (~m & amax)))
        k = r.random()
        if k < .12 and plen:
            return f"{self.nl.i2a(net)}/{self._mask_text(m)}"   # mask as an address
        if k < .2 and plen < self.W:
            return f"{self.nl.i2a(a)}/{plen}"              # host bits set
        if plen == self.W and r.random() < .5:
            return self.nl.i2a(net)                        # bare address
        return f"{self.nl.i2a(net)}/{plen}"

    def _range_addr(self, anchors, ivs):
        r = self.r
        a = self.nl.a2i(r.choice(anchors))
        amax = (1 << self.W) - 1
        lo = max(0, a - r.choice([0, 0, 1, 2, 5, 100, 300, r.randrange(1 << 16)]))
        hi = min(amax, a + r.choice([0, 0, 1, 3, 10, 200, r.randrange(1 << 16)]))
        lo = min(lo, hi)
        ivs.append((lo, hi))
        return f"{self.nl.i2a(lo)}-{self.nl.i2a(hi)}"

    def _port(self):
        r = self.r
        return r.choice(self.p_anchor) if r.random() < .8 else r.randrange(65536)

    def _portspec(self, allow_open=True):
        r = self.r
        k = r.random()
        if k < .5:
            p = self._port()
            self.port_iv.append((p, p))
            return str(p)
        a, b = sorted((self._port(), self._port()))
        if a == b:
            b = min(65535, a + r.choice([1, 9, 100]))
            a = b - r.choice([1, 9, 100]) if b == 65535 else a
            a = max(0, a)
        if a == b:
            self.port_iv.append((a, a))
            return str(a)
        if allow_open and k < .6 and a > 0:
            self.port_iv.append((a, 65535))
            return f"{a}:"
        if allow_open and k < .7 and b < 65535:
            self.port_iv.append((0, b))
            return f":{b}"
        if (a, b) == (0, 65535):
            b = 65534
        self.port_iv.append((a, b))
        return f"{a}:{b}"

    def _multiport(self):
        r = self.r
        items, cost = [], 0
        for _ in range(r.randrange(1, 7)):
            if r.random() < .3:
                a, b = sorted((self._port(), self._port()))
                if a == b:
                    continue
                if cost + 2 > 15:
                    break
                items.append(f"{a}:{b}")
                self.port_iv.append((a, b))
                cost += 2
            else:
                p = self._port()
                if cost + 1 > 15:
                    break
                items.append(str(p))
                self.port_iv.append((p, p))
                cost += 1
        if not items:
            p = self._port()
            items, _ = [str(p)], self.port_iv.append((p, p))
        return ",".join(items)

    def _lenspec(self):
        r = self.r
        a = r.choice(self.l_anchor) if r.random() < .8 else r.randrange(20, 1500)
        k = r.random()
        if k < .35:
            self.len_iv.append((a, a))
            return str(a)
        b = a + r.choice([1, 4, 20, 100, 500, r.randrange(1, 1000)])
        if k < .45:
            self.len_iv.append((0, b))
            return f":{b}"
        if k < .55:
            self.len_iv.append((a, 65535))
            return f"{a}:"
        self.len_iv.append((a, b))
        return f"{a}:{b}"

    def _flags(self):
        r = self.r
        names = list(TCP_FLAG_BITS)
        k = r.random()
        if k < .1:
            mask = ["ALL"]
        elif k < .14:
            mask = ["NONE"]
        else:
            mask = r.sample(names, r.randrange(1, 5))
        mbits = 0x3f if mask == ["ALL"] else 0 if mask == ["NONE"] else \
            sum(TCP_FLAG_BITS[n] for n in mask)
        inmask = [n for n in names if TCP_FLAG_BITS[n] & mbits]
        if r.random() < .08 or not inmask:
            comp = r.choice([["NONE"], ["ALL"]]) if not inmask else ["NONE"]
        else:
            comp = r.sample(inmask, r.randrange(0, len(inmask) + 1)) or ["NONE"]
            if r.random() < .07:          # a bit outside the mask: never matches
                comp = r.sample(names, r.randrange(1, 3))
        cbits = 0x3f if comp == ["ALL"] else 0 if comp == ["NONE"] else \
            sum(TCP_FLAG_BITS[n] for n in comp)
        self.flag_used.append((mbits, cbits))
        return ",".join(mask), ",".join(comp)

    # -- rules -------------------------------------------------------------

    def _neg(self, p):
        return ["!"] if self.r.random() < p else []

    def rule(self, chain, callable_chains):
        r = self.r
        cl = []
        base_ctx = chain in BASE
        if r.random() < .35:
            cl.append(self._neg(.2) + ["-s", self._cidr(self.s_anchor, self.s_iv)])
        if r.random() < .3:
            cl.append(self._neg(.2) + ["-d", self._cidr(self.d_anchor, self.d_iv)])
        ifs = IFACES[self.base]
        if (not base_ctx or chain in ("INPUT", "FORWARD")) and \
                r.random() < (.2 if base_ctx else .12):
            cl.append(self._neg(.25) + ["-i", r.choice(ifs if base_ctx else
                                                        IFACES["FORWARD"] + ["lo"])])
        if (not base_ctx or chain in ("OUTPUT", "FORWARD")) and \
                r.random() < (.2 if base_ctx else .12):
            cl.append(self._neg(.25) + ["-o", r.choice(ifs if base_ctx else
                                                        IFACES["FORWARD"] + ["lo"])])
        proto = None
        k = r.random()
        if k < .62:
            proto = r.choices(["tcp", "udp", self.ICMP], [45, 35, 20])[0]
            cl.append(["-p", proto])
            self.proto_used.append(proto)
        elif k < .69:
            cl.append(["!", "-p", r.choice(["tcp", "udp", self.ICMP])])
        elif k < .72:
            p = r.choice(OTHER)
            cl.append(self._neg(.3) + ["-p", str(p)])
            self.proto_used.append(p)
        if self.FRAG_OPT and r.random() < .04:
            cl.append(self._neg(.5) + ["-f"])
        if proto in ("tcp", "udp"):
            if r.random() < .3:
                cl.append(self._neg(.2) + ["--sport", self._portspec()])
            if r.random() < .45:
                cl.append(self._neg(.2) + ["--dport", self._portspec()])
            if proto == "tcp":
                k = r.random()
                if k < .2:
                    m, c = self._flags()
                    cl.append(self._neg(.15) + ["--tcp-flags", m, c])
                elif k < .3:
                    self.flag_used.append((0x17, 0x02))
                    cl.append(self._neg(.3) + ["--syn"])
            if r.random() < .15:
                opt = r.choice(["--dports", "--dports", "--sports", "--ports"])
                cl.append(["-m", "multiport"] + self._neg(.2) + [opt, self._multiport()])
        elif proto == self.ICMP and r.random() < .65:
            spec = r.choice(self.ICMP_SPECS)
            self.icmp_used.append(spec)
            cl.append(self._neg(.2) + [self.ICMP_OPT, spec[0]])
        if r.random() < .1:
            m = ["-m", "iprange"]
            if r.random() < .6:
                m += self._neg(.25) + ["--src-range", self._range_addr(self.s_anchor, self.s_iv)]
            if len(m) == 2 or r.random() < .4:
                m += self._neg(.25) + ["--dst-range", self._range_addr(self.d_anchor, self.d_iv)]
            cl.append(m)
        if r.random() < .12:
            cl.append(["-m", "length"] + self._neg(.25) + ["--length", self._lenspec()])
        # target
        opts = [("ACCEPT", 40), ("DROP", 40), ("RETURN", 7), ("", 3)]
        if callable_chains:
            opts.append(("call", 14))
        t = r.choices([o[0] for o in opts], [o[1] for o in opts])[0]
        if t == "call":
            target = [r.choice(["-j", "-j", "-g"]), r.choice(callable_chains)]
        elif t:
            target = ["-j", t]
        else:
            target = []
        return Rule(cl, target)

    def run(self, chain, callable_chains, n):
        """n rules that differ only in -s (or only in -d): the compiler turns
        such runs (deny lists) into one set lookup.  Prefixes overlap and
        nest; now and then a member breaks the run (negated, host bits).
        Without a target or with -j/-g to user chains (now and then a chain
        per rule: a verdict map), the compiler groups them only while the
        prefixes are disjoint."""
        r = self.r
        which = r.choice(["-s", "-d"])
        # --vmaps: half the runs are sources next to one anchor, each its own
        # host (now and then a pair: the run is cut there), so that long
        # disjoint runs form and the packets reach their rules
        hosts = self.vmaps and r.random() < .5
        if hosts:
            which = "-s"
        tmpl = self.rule(chain, callable_chains)
        tmpl.clauses = [c for c in tmpl.clauses if c[-2:-1] != [which]]
        if tmpl.target == ["-j", "RETURN"] and r.random() < .5:
            tmpl.target = ["-j", r.choice(["ACCEPT", "DROP"])]
        # -j/-g to a chain of its own each (a verdict map), where the
        # compiler groups the run only while its prefixes are disjoint
        vary = False
        if len(callable_chains) > 1:
            if len(tmpl.target) == 2 and tmpl.target[1] in callable_chains:
                vary = r.random() < .6
            elif r.random() < (.8 if self.vmaps else .3):
                tmpl.target = [r.choice(["-j", "-j", "-g"]), callable_chains[0]]
                vary = True
        anchors, ivs = (self.s_anchor, self.s_iv) if which == "-s" else (self.d_anchor, self.d_iv)
        out = []
        base = self.nl.a2i(r.choice(anchors))
        for j in range(n):
            k = r.random()
            if hosts:
                a, plen = base ^ j, self.W if k < .95 else self.W - 1
            elif k < .5:        # around one address: nested prefixes
                a, plen = base, r.choice(self.RUN_PLENS[0])
            elif k < .8:
                a, plen = self.nl.a2i(r.choice(anchors)), r.choice(self.RUN_PLENS[1])
            else:
                a, plen = r.randrange(1 << self.W), r.choice(self.RUN_PLENS[2])
            m = self.mask(plen)
            net = a & m
            ivs.append((net, net | (~m & ((1 << self.W) - 1))))
            clause = [which, f"{self.nl.i2a(net)}/{plen}"]
            if r.random() < .04:
                clause = ["!"] + clause
            elif r.random() < .03 and plen < self.W:
                clause = [which, f"{self.nl.i2a(a | 1)}/{plen}"]
            tgt = [tmpl.target[0], r.choice(callable_chains)] if vary else list(tmpl.target)
            out.append(Rule([clause] + [list(c) for c in tmpl.clauses], tgt))
        return out

    def trun(self, chain, callable_chains, n):
        """n rules alike but for the values of a -s or -d prefix of one length,
        or of both, and of exact ports (-p tcp/udp --dport [--sport]): the
        compiler makes them one tuple group (bpf-iptables runs with
        BPF_IPTABLES_TUPLE_MIN=2). Tuples repeat now and then; a member of
        another prefix length or with a port range breaks the run."""
        r = self.r
        whichs = r.choice([["-s"], ["-d"], ["-s", "-d"]])
        proto = r.choice(["tcp", "udp"])
        self.proto_used.append(proto)
        plens = {w: r.choice([self.W // 2, self.W - 8, self.W]) for w in whichs}
        sport = r.random() < .4
        tgt = r.choice([["-j", "ACCEPT"], ["-j", "DROP"], ["-j", "RETURN"]] +
                       ([["-g", r.choice(callable_chains)]] if callable_chains else []))
        # --vmaps: most runs -j/-g to a chain each (a verdict map; a -j run
        # ends before a tuple it repeats), some without a target
        each = None
        if self.vmaps and callable_chains and r.random() < .8:
            each = r.choice(["-j", "-j", "-g"])
        elif self.vmaps and r.random() < .3:
            tgt = []

        def target():
            return [each, r.choice(callable_chains)] if each else list(tgt)
        out, made = [], []
        for _ in range(n):
            if made and r.random() < .1:
                out.append(Rule([list(c) for c in r.choice(made)], target()))
                continue
            cl = [["-p", proto]]
            for which in whichs:
                anchors, ivs = ((self.s_anchor, self.s_iv) if which == "-s"
                                else (self.d_anchor, self.d_iv))
                plen = plens[which]
                p = plen if r.random() > .05 else max(8, plen - 4)
                m = self.mask(p)
                net = self.nl.a2i(r.choice(anchors)) & m
                ivs.append((net, net | (~m & ((1 << self.W) - 1))))
                cl.append([which, f"{self.nl.i2a(net)}/{p}"])
            for opt in (["--sport"] if sport else []) + ["--dport"]:
                v = self._port()
                self.port_iv.append((v, v))
                cl.append([opt, str(v) if r.random() > .05 else f"{v}:{min(v + 9, 65535)}"])
            made.append(cl)
            out.append(Rule([list(c) for c in cl], target()))
        return out

    def chain_rules(self, chain, callable_chains, n):
        r = self.r
        rules = []
        while len(rules) < n:
            if n - len(rules) >= 2 and r.random() < self.runs / 2:
                rules += self.trun(chain, callable_chains,
                                   r.randint(2, min(n - len(rules), 40)))
            elif n - len(rules) >= 2 and r.random() < self.runs:
                rules += self.run(chain, callable_chains,
                                  r.randint(2, min(n - len(rules), 40)))
            else:
                rules.append(self.rule(chain, callable_chains))
        return rules

    def ruleset(self):
        r = self.r
        nuser = r.choices([0, 1, 2, 3], [45, 25, 18, 12])[0] if not self.vmaps else \
            r.randint(3, 6)
        users = [f"uc{i}" for i in range(nuser)]
        chains = {self.base: []}
        for u in users:
            chains[u] = []
        chains[self.base] = self.chain_rules(self.base, users, r.randint(1, 30))
        for i, u in enumerate(users):
            # now and then a long one, so that slots lie beyond the first
            # 64-bit word of the vectors (slot numbers 64, 128, ...)
            n = r.randint(0, 10) if r.random() > self.long_chains else r.randint(30, 120)
            chains[u] = self.chain_rules(u, users[i + 1:], n)
        return Ruleset(self.base, r.choice(["ACCEPT", "DROP"]), chains)

    # -- packets -----------------------------------------------------------

    def _near(self, ivs, lo_lim, hi_lim):
        lo, hi = self.r.choice(ivs)
        v = self.r.choice([lo, hi, lo - 1, hi + 1, lo + 1, hi - 1,
                           self.r.randint(lo, hi)])
        return min(max(v, lo_lim), hi_lim)

    def _src(self, loopback):
        r = self.r
        for _ in range(50):
            k = r.random()
            if k < .5 and self.s_iv:
                a = self._near(self.s_iv, 0, (1 << self.W) - 1)
            elif k < .85:
                a = self.nl.a2i(r.choice(self.s_anchor))
            else:
                a = self.nl.a2i(self._random_addr())
            if loopback or not self.nl.martian_src(a):
                return self.nl.i2a(a)
        return self.nl.CLI_IP

    def _dst(self, sender, receiver):
        r = self.r
        cands = self.nl.local_addrs(receiver)
        if sender == receiver and r.random() < .1:
            return self.LOOPBACK
        special = self.nl.SPECIAL_DST.get((sender, receiver))
        if special and r.random() < .25:
            return r.choice(special)
        if self.d_iv and r.random() < .5:
            # prefer a local address on the edge of a rule's interval
            lo, hi = r.choice(self.d_iv)
            inside = [a for a in cands if lo <= self.nl.a2i(a) <= hi]
            outside = [a for a in cands if not lo <= self.nl.a2i(a) <= hi]
            pick = inside if (r.random() < .5 and inside) or not outside else outside
            return r.choice(pick)
        return r.choice(cands)

    def packet(self):
        r = self.r
        snd, rcv = r.choices([(f[0], f[1]) for f in self.flows],
                             [f[2] for f in self.flows])[0]
        loop = snd == rcv
        protos = {"tcp": 6, "udp": 17, self.ICMP: self.ICMP_NUM}
        if self.proto_used and r.random() < .5:
            p = r.choice(self.proto_used)
            proto = protos.get(p, p)
        else:
            proto = r.choices([6, 17, self.ICMP_NUM, r.choice(OTHER)], [40, 30, 22, 8])[0]
        pkt = self.nl.Packet(proto, self._src(loop), self._dst(snd, rcv), snd, rcv)
        if proto in (6, 17):
            for attr in ("sport", "dport"):
                k = r.random()
                if k < .6 and self.port_iv:
                    v = self._near(self.port_iv, 0, 65535)
                elif k < .85:
                    v = r.choice(self.p_anchor)
                else:
                    v = r.randrange(65536)
                setattr(pkt, attr, v)
        if proto == 6:
            k = r.random()
            if k < .5 and self.flag_used:
                m, c = r.choice(self.flag_used)
                pkt.flags = (c & m) | (r.randrange(256) & ~m & 0xff)
                if r.random() < .3:
                    pkt.flags ^= 1 << r.randrange(6)
            elif k < .8:
                pkt.flags = r.choice(COMMON_FLAGS)
            else:
                pkt.flags = r.randrange(256)
        if proto == self.ICMP_NUM:
            k = r.random()
            if k < .6 and self.icmp_used:
                _, t, c = r.choice(self.icmp_used)
                pkt.itype = t if t is not None else r.randrange(20)
                pkt.icode = c if c is not None else r.choice([0, 0, 1, 3, 4])
                if r.random() < .25:
                    pkt.icode = r.randrange(16)
            else:
                pkt.itype = r.choice(self.ICMP_TYPES + [r.randrange(256)])
                pkt.icode = r.choice([0, 0, 0, 1, 3, r.randrange(256)])
        if proto in self.nl.L4_HDR and r.random() < self.truncated:
            pkt.trunc = r.randrange(self.nl.L4_HDR[proto])
            pkt.length = pkt.hdr_len() + pkt.trunc
            return pkt
        self._extras(pkt)
        can_frag = self.base != "INPUT" or self.input_fragments
        if can_frag and r.random() < .06:
            pkt.frag = True
        k = r.random()
        if k < .45 and self.len_iv:
            length = self._near(self.len_iv, 0, 1400)
        elif k < .8:
            length = r.randrange(0, 200)
        else:
            length = r.randrange(0, 1400)
        pkt.length = max(length, pkt.min_length())
        if pkt.frag:
            pkt.length = max(pkt.length, pkt.min_length() + 24)
        return pkt


# ---------------------------------------------------------------------------
# The two firewalls
# ---------------------------------------------------------------------------

class V4:
    """What the differential test needs to know of a family (kernel_diff6.py
    has IPv6's)."""
    name = "IPv4"
    legacy_restore = "iptables-legacy-restore"
    bpf_restore = "bpf-iptables-restore"

    @staticmethod
    def twins():
        return nl.Twin("a", 1), nl.Twin("b", 2)

    @staticmethod
    def generator(*args, **kw):
        return Generator(*args, **kw)

    @staticmethod
    def udp_packet(dport):
        p = nl.Packet(17, nl.CLI_IP, nl.SRV_IP, "cli", "srv", sport=5555, dport=dport)
        p.length = p.min_length()
        return p

    @staticmethod
    def send(sock, pkt):
        return nl.send(sock, pkt)

    @staticmethod
    def collect(fw, timeout, quiet):
        return nl.collect(fw.socks, fw.owner, timeout, quiet)


class Firewalls:
    """Loads rulesets into both twins and sends packets through both."""

    def __init__(self, bindir, ingress, timeout, quiet, oracle=False, twins=None, fam=V4):
        self.fam = fam
        self.bindir = bindir
        self.oracle = oracle      # iptables-legacy in twin B too: harness check
        self.ingress = ingress
        self.timeout, self.quiet = timeout, quiet
        # twins: two topologies labelled "a" and "b" with the same roles
        # (netlib Twin by default, or Star)
        self.a, self.b = twins or fam.twins()
        self.loaded = {"a": {}, "b": {}}   # role -> text loaded (None: unknown)
        self.next_id = 1
        self.next_nonce = 1

    def build(self):
        self.a.build()
        self.b.build()
        # iptables-legacy serialises on /run/xtables.lock and fails at once
        # (exit 4) when someone holds it; our namespaces are private and
        # loaded in parallel, so each gets a lock file of its own
        lockdir = nl.tempdir("bipt-kd-lock-")
        self.env_a = {}
        for t in (self.a, self.b):
            for role in t.roles:
                self.env_a[(t.label, role)] = dict(
                    os.environ, XTABLES_LOCKFILE=os.path.join(lockdir, f"{t.label}-{role}"))
        self.env_b = {}
        for role in self.b.roles:
            e = dict(os.environ)
            e.pop("BPF_IPTABLES_DATAPLANE", None)     # never "off" here
            e.pop("BPF_IPTABLES_INGRESS", None)
            e["BPF_IPTABLES_STATE_DIR"] = nl.tempdir(f"bipt-kd-state-{role}-")
            e["BPF_IPTABLES_TUPLE_MIN"] = "2"     # tuple groups from short runs
            self.env_b[role] = e
        self.owner, self.proto = {}, {}
        for t in (self.a, self.b):
            for role, socks in t.recv_socks.items():
                for sk in socks:
                    self.owner[sk.fileno()] = (t.label, role)
            self.proto.update(getattr(t, "sock_proto", {}))
        self.socks = self.a.all_recv_socks() + self.b.all_recv_socks()

    # -- loading -----------------------------------------------------------

    def _popen(self, twin, role, text, mode):
        if twin is self.a or self.oracle:
            argv, env = [self.fam.legacy_restore], self.env_a[(twin.label, role)]
        else:
            argv = [os.path.join(self.bindir, self.fam.bpf_restore)]
            env = self.env_b[role]
            env = dict(env, BPF_IPTABLES_INGRESS=mode)
        p = subprocess.Popen(twin.exec_argv(role, argv), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        return p, text

    def load(self, role, text, mode):
        """Load `text` into `role` of both twins (empty rulesets elsewhere),
        bpf-iptables judging ingress by `mode` (tc, xdp, xdp-generic).
        Returns (rc_a, err_a, rc_b, err_b)."""
        res = {}
        procs = []
        for t in (self.a, self.b):
            for other, cur in list(self.loaded[t.label].items()):
                if other != role and cur != EMPTY:
                    procs.append((t, other, *self._popen(t, other, EMPTY, mode)))
            procs.append((t, role, *self._popen(t, role, text, mode)))
        for t, r, p, txt in procs:
            try:
                out, err = p.communicate(txt.encode(), timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                err = b"TIMEOUT\n" + err
            res[(t.label, r)] = (p.returncode, err.decode(errors="replace").strip())
            if p.returncode == 0:
                self.loaded[t.label][r] = txt
            else:
                self.loaded[t.label][r] = None     # unknown: reset next time
        ra, rb = list(res[("a", role)]), list(res[("b", role)])
        for (label, r), (rc, err) in res.items():
            if r != role and rc:                   # an empty ruleset failed to load
                tgt = ra if label == "a" else rb
                tgt[0] = tgt[0] or -1
                tgt[1] += f" [resetting {r} to an empty ruleset failed: rc={rc} {err}]"
        return ra[0], ra[1], rb[0], rb[1]

    def reset_all(self, mode):
        for t in (self.a, self.b):
            for role in t.roles:
                self.loaded[t.label][role] = "?"
        return self.load("srv", EMPTY, mode)

    # -- packets -----------------------------------------------------------

    def stamp(self, pkt):
        pkt.ipid = self.next_id
        self.next_id = self.next_id % 65535 + 1
        pkt.nonce = self.next_nonce
        self.next_nonce = (self.next_nonce + 1) & 0xffffffff or 1

    def exchange(self, pkts, timeout=None, quiet=None):
        """Send every packet through both twins; return [(delivered_a,
        delivered_b, send_err_a, send_err_b)] in order."""
        for p in pkts:
            self.stamp(p)
        nl.drain(self.socks)
        errs = []
        for p in pkts:
            ea = self.fam.send(self.a.send_sock[p.sender], p)
            eb = self.fam.send(self.b.send_sock[p.sender], p)
            errs.append((ea, eb))
        got = self.fam.collect(self, self.timeout if timeout is None else timeout,
                               self.quiet if quiet is None else quiet)
        out = []
        for p, (ea, eb) in zip(pkts, errs):
            k = p.key()
            out.append((k in got.get(("a", p.receiver), ()),
                        k in got.get(("b", p.receiver), ()), ea, eb))
        return out


def verdict(d, err):
    s = "delivered" if d else "DROPPED"
    if err:
        s += f" (sendto: {nl.errname(err)})"
    return s


# ---------------------------------------------------------------------------
# Checks before the random part: the harness must be able to see verdicts
# ---------------------------------------------------------------------------

def preflight(bindir, fam=V4, oracle=False):
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (network namespaces, iptables, BPF)")
    for tool in ("ip", fam.legacy_restore):
        if shutil.which(tool) is None:
            problems.append(f"'{tool}' not found in PATH (the reference is "
                            f"iptables-legacy)")
    for b in (() if oracle else (fam.bpf_restore,)):
        if not os.access(os.path.join(bindir, b), os.X_OK):
            problems.append(f"{os.path.join(bindir, b)} not found or not executable")
    return problems


def self_test(fw, log):
    """Empty rulesets deliver everything in both twins; one DROP rule drops
    exactly its packets in both.  Anything else means this harness cannot tell
    a verdict (no BPF, no iptables-legacy, broken topology): fail."""
    rnd = random.Random(1)
    problems = []
    mode0 = "xdp" if fw.ingress == "mixed" else fw.ingress
    fw.reset_all(mode0)
    for role in nl.ROLES:
        rc_a, err_a, rc_b, err_b = fw.load(role, EMPTY, mode0)
        if rc_a:
            problems.append(f"iptables-legacy-restore failed in {role}: {err_a}")
        if rc_b:
            problems.append(f"bpf-iptables-restore failed in {role}: {err_b}")
    if problems:
        return problems
    pkts = []
    for base in ("INPUT", "FORWARD", "OUTPUT"):
        g = fw.fam.generator(random.Random(rnd.random()), base)
        pkts += [g.packet() for _ in range(20)]
    res = fw.exchange(pkts, timeout=0.3, quiet=0.1)
    for p, (da, db, ea, eb) in zip(pkts, res):
        if not (da and db):
            problems.append(f"with empty rulesets a packet was not delivered "
                            f"(iptables-legacy twin: {verdict(da, ea)}, "
                            f"bpf-iptables twin: {verdict(db, eb)}): {p.describe()}")
    if problems:
        return problems
    text = EMPTY.replace("COMMIT", "-A INPUT -p udp --dport 9 -j DROP\nCOMMIT")
    for mode in (("tc", "xdp") if fw.ingress == "mixed" else (fw.ingress,)):
        rc_a, err_a, rc_b, err_b = fw.load("srv", text, mode)
        if rc_a or rc_b:
            return [f"loading a one-rule ruleset failed: iptables-legacy-restore "
                    f"rc={rc_a} {err_a}; bpf-iptables-restore ({mode}) rc={rc_b} {err_b}"]
        pkts = []
        for port in (9, 10, 9, 10):
            pkts.append(fw.fam.udp_packet(port))
        res = fw.exchange(pkts, timeout=0.3, quiet=0.1)
        for p, (da, db, ea, eb) in zip(pkts, res):
            want = p.dport != 9
            if da != want:
                problems.append(f"iptables-legacy does not filter: {p.describe()}: "
                                f"{verdict(da, ea)}")
            if db != want:
                problems.append(f"bpf-iptables ({mode} ingress) does not filter (is BPF "
                                f"available?): {p.describe()}: {verdict(db, eb)}")
        if problems:
            return problems
    fw.load("srv", EMPTY, mode)
    log("self-test passed: empty rulesets deliver, a DROP rule drops, in both twins")
    return []


# ---------------------------------------------------------------------------
# Minimising a disagreement
# ---------------------------------------------------------------------------

def disagrees(fw, rs, pkt, mode):
    """Load rs, send pkt: True when the twins disagree (twice in a row),
    False when they agree or a restore fails."""
    rc_a, _, rc_b, _ = fw.load(BASE[rs.base], rs.text(), mode)
    if rc_a or rc_b:
        return False
    for wait in (0.05, 0.15):
        (da, db, _, _), = fw.exchange([pkt], timeout=wait, quiet=0.03)
        if da == db:
            return False
    return True


def filler(n):
    """A rule that never matches (protocol 254 is never sent) and, different
    from its neighbours, is never merged with them."""
    return Rule([["-p", "254"], ["-m", "length", "--length", str(60000 + n)]], [])


def minimise(fw, rs, pkt, mode, budget):
    """Shrink a disagreeing ruleset within `budget` seconds, keeping the
    disagreement: drop runs of rules (halves, quarters, ... single rules);
    where a rule cannot go because the others would move (the disagreement
    depends on rule positions) put a filler in its place; then drop single
    matches and unused chains."""
    end = time.monotonic() + budget
    cur = rs.copy()
    nfill = [0]

    def keep(t):
        return time.monotonic() < end and disagrees(fw, t, pkt, mode)

    def drop_rules():
        nonlocal cur
        for name in list(cur.chains):
            size = max(1, len(cur.chains[name]) // 2)
            while size >= 1:
                i = 0
                while i < len(cur.chains[name]):
                    t = cur.copy()
                    del t.chains[name][i:i + size]
                    if keep(t):
                        cur = t
                    else:
                        i += size
                size //= 2

    def fill_rules():
        nonlocal cur
        for name in list(cur.chains):
            for i in range(len(cur.chains[name])):
                if is_filler(cur.chains[name][i]):
                    continue
                t = cur.copy()
                t.chains[name][i] = filler(nfill[0])
                if keep(t):
                    cur = t
                    nfill[0] += 1

    def drop_matches():
        nonlocal cur
        for name in list(cur.chains):
            for i in range(len(cur.chains[name])):
                j = 0
                while not is_filler(cur.chains[name][i]) and \
                        j < len(cur.chains[name][i].clauses):
                    t = cur.copy()
                    del t.chains[name][i].clauses[j]
                    if keep(t):
                        cur = t
                    else:
                        j += 1

    def drop_chains():
        nonlocal cur
        used = {r.jumps_to() for rules in cur.chains.values() for r in rules}
        for name in list(cur.chains):
            if name != cur.base and name not in used:
                t = cur.copy()
                del t.chains[name]
                if keep(t):
                    cur = t

    while time.monotonic() < end:
        before = cur.text()
        drop_rules()
        fill_rules()
        drop_matches()
        drop_chains()
        if cur.text() == before:
            break
    return cur, time.monotonic() < end


def is_filler(rule):
    return rule.clauses[:1] == [["-p", "254"]] and not rule.target


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def load_problem(head, text, rc_a, err_a, rc_b, err_b, twin_b="bpf-iptables-restore"):
    """The failure report when a twin refused the ruleset, else None."""
    if not (rc_a or rc_b):
        return None
    who = ("GENERATOR BUG: iptables-legacy-restore rejected the ruleset"
           if rc_a else "bpf-iptables-restore rejected a ruleset "
           "iptables-legacy-restore accepts")
    return (f"FAIL {head}: {who}\n  iptables-legacy-restore: rc={rc_a} {err_a}\n"
            f"  {twin_b}: rc={rc_b} {err_b}\n  ruleset:\n{indent(text)}")

def indent(text, pre="    "):
    return "".join(pre + ln + "\n" for ln in text.rstrip("\n").split("\n"))


def main():
    ap = argparse.ArgumentParser(
        description="Differential test: bpf-iptables vs iptables-legacy on real "
                    "packets in twin namespace topologies.")
    ap.add_argument("--bin", metavar="DIR",
                    default=os.environ.get("BPF_IPTABLES_BIN", "build"),
                    help="directory holding bpf-iptables-restore (default: "
                         "$BPF_IPTABLES_BIN or ./build)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--rulesets", type=int, default=200)
    ap.add_argument("--packets", type=int, default=50, help="per ruleset")
    ap.add_argument("--only", type=int, metavar="N", action="append",
                    help="run ruleset N of the seed only (repeatable)")
    ap.add_argument("--chain", choices=list(BASE), action="append",
                    help="only rulesets for this chain (repeatable)")
    ap.add_argument("--ingress", choices=["mixed", "tc", "xdp", "xdp-generic"],
                    default="mixed",
                    help="how bpf-iptables judges ingress: mixed (default) picks tc "
                         "or xdp per ruleset")
    ap.add_argument("--input-fragments", action="store_true",
                    help="also send fragmented datagrams to INPUT (known "
                         "difference: the kernel reassembles before INPUT)")
    ap.add_argument("--truncated", type=float, default=0.0, metavar="P",
                    help="probability that a TCP/UDP/ICMP packet is cut inside its "
                         "L4 header (default 0: known difference, iptables "
                         "hot-drops such a packet when a tcp/udp/icmp match looks "
                         "at it)")
    ap.add_argument("--timeout", type=float, default=0.03,
                    help="seconds to wait for deliveries after a batch (default 0.03; "
                         "the wait goes on while packets still arrive)")
    ap.add_argument("--quiet", type=float, default=0.02,
                    help="a batch is over after this many seconds without a "
                         "delivery (default 0.02)")
    ap.add_argument("--minimise", type=int, default=2, metavar="N",
                    help="minimise the first N failing rulesets (default 2)")
    ap.add_argument("--minimise-time", type=float, default=60, metavar="S",
                    help="seconds spent minimising one ruleset at most (default 60)")
    ap.add_argument("--long-chains", type=float, default=0.1, metavar="P",
                    help="probability that a user chain gets 30-120 rules instead "
                         "of 0-10 (default 0.1)")
    ap.add_argument("--runs", type=float, default=0.03, metavar="P",
                    help="probability that a rule begins a run of rules that differ "
                         "only in -s or -d (default 0.03; half as often a tuple run)")
    ap.add_argument("--vmaps", action="store_true",
                    help="3-6 user chains, and most runs jump (or go) to a chain each "
                         "(a verdict map; with --runs 0.3, a few per ruleset)")
    ap.add_argument("--pad", type=int, default=0, metavar="N",
                    help="N more rules at the end of the base chain, unlike each other "
                         "(-s 198.18.x.y -p udp --dport 7, verdicts alternating): 4 200 "
                         "make the bit vectors two chunks long, and with "
                         "BPF_IPTABLES_POOL=windows the pool windowed (default 0)")
    ap.add_argument("--oracle", action="store_true",
                    help="check the harness itself: iptables-legacy in both twins "
                         "(must give 0 failures)")
    ap.add_argument("--max-shown", type=int, default=5,
                    help="disagreeing packets printed per ruleset (default 5)")
    ap.add_argument("-6", "--ipv6", action="store_true",
                    help="IPv6: bpf-ip6tables against ip6tables-legacy (kernel_diff6.py)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    fam = V4
    if args.ipv6:
        import kernel_diff6
        fam = kernel_diff6.V6

    def log(msg):
        print(msg, flush=True)

    bindir = os.path.abspath(args.bin)
    problems = preflight(bindir, fam, args.oracle)
    if problems:
        for p in problems:
            print(f"kernel_diff: FAILED: cannot run: {p}")
        print("0 passed, 1 failed")
        return 1

    t0 = time.monotonic()
    nl.install_cleanup()
    fw = Firewalls(bindir, args.ingress, args.timeout, args.quiet, args.oracle, fam=fam)
    try:
        fw.build()
    except (nl.CmdError, OSError) as e:
        print(f"kernel_diff: FAILED: cannot build the twin topologies: {e}")
        print("0 passed, 1 failed")
        return 1
    problems = self_test(fw, log)
    if problems:
        for p in problems:
            print(f"kernel_diff: FAILED: self-test: {p}")
        print("0 passed, 1 failed")
        return 1

    indices = args.only if args.only else range(args.rulesets)
    passed = failed = 0
    npkts = ndeliv = ndrop = unconfirmed = 0
    per_chain = {c: 0 for c in BASE}
    minimised = 0
    reproducers = []
    for idx in indices:
        rnd = random.Random(f"{args.seed}/{idx}")
        base = rnd.choice(args.chain or list(BASE))
        mode = args.ingress if args.ingress != "mixed" else rnd.choice(["tc", "xdp"])
        gen = fam.generator(rnd, base, args.input_fragments, args.long_chains,
                            runs=args.runs, truncated=args.truncated, vmaps=args.vmaps)
        rs = gen.ruleset()
        for i in range(args.pad):
            src = f"2001:db8:ff:{i:x}::1/128" if args.ipv6 else f"198.18.{i // 256}.{i % 256}/32"
            rs.chains[rs.base].append(Rule([["-s", src], ["-p", "udp"], ["-m", "udp", "--dport", "7"]],
                                           ["-j", "DROP" if i % 2 else "ACCEPT"]))
        pkts = [gen.packet() for _ in range(args.packets)]
        per_chain[base] += 1
        text = rs.text()
        head = (f"ruleset {idx} (seed {args.seed}, {WHERE[base]}, {rs.nrules()} rules, "
                f"policy {rs.policy}, bpf-iptables ingress {mode})")
        problem = load_problem(head, text, *fw.load(BASE[base], text, mode))
        if problem:
            failed += 1
            log(problem)
            continue
        res = fw.exchange(pkts)
        bad = [i for i, (da, db, _, _) in enumerate(res) if da != db]
        if bad:
            # send the disagreeing packets once more, waiting longer: only a
            # repeated disagreement counts
            again = fw.exchange([pkts[i] for i in bad], timeout=0.5, quiet=0.2)
            confirmed = [(i, r2) for i, r2 in zip(bad, again) if r2[0] != r2[1]]
            unconfirmed += len(bad) - len(confirmed)
            if len(confirmed) < len(bad):
                log(f"note: {head}: {len(bad) - len(confirmed)} disagreement(s) "
                    f"not repeated on a second send (slow delivery?)")
            bad = confirmed
        for da, db, _, _ in res:
            npkts += 1
            ndeliv += da
            ndrop += not da
        if not bad:
            passed += 1
            if args.verbose:
                log(f"ok   {head}")
            continue
        failed += 1
        log(f"FAIL {head}: {len(bad)} of {len(pkts)} packets disagree")
        log(f"  ruleset (loaded into {BASE[base]} of both twins):\n{indent(text)}")
        for n, (i, (da, db, ea, eb)) in enumerate(bad):
            if n >= args.max_shown:
                log(f"  ... and {len(bad) - n} more")
                break
            log(f"  packet {i}: {pkts[i].describe()}\n"
                f"    iptables-legacy: {verdict(da, ea)}, bpf-iptables: {verdict(db, eb)}")
        if minimised < args.minimise:
            minimised += 1
            i = bad[0][0]
            small, done = minimise(fw, rs, pkts[i], mode, args.minimise_time)
            fw.load(BASE[base], small.text(), mode)
            (da, db, ea, eb), = fw.exchange([pkts[i]], timeout=0.3, quiet=0.1)
            what = "minimal" if done else "reduced (time budget spent)"
            nfill = sum(is_filler(r) for rules in small.chains.values() for r in rules)
            fill = (f"; {nfill} are fillers that never match, kept because "
                    f"rule positions matter") if nfill else ""
            rep = (f"  {what} reproducer of ruleset {idx} ({WHERE[base]}, "
                   f"bpf-iptables ingress {mode}, {small.nrules()} rules{fill}):\n"
                   f"{indent(small.text(), '    ')}"
                   f"    packet: {pkts[i].describe()}\n"
                   f"    iptables-legacy: {verdict(da, ea)}, bpf-iptables: {verdict(db, eb)}")
            log(rep)
            reproducers.append(rep)

    elapsed = time.monotonic() - t0
    print()
    print("===== kernel_diff summary =====")
    print(f"{fam.name}; seed {args.seed}; rulesets: {sum(per_chain.values())} "
          f"(INPUT {per_chain['INPUT']}, FORWARD {per_chain['FORWARD']}, "
          f"OUTPUT {per_chain['OUTPUT']}); packets compared: {npkts} per twin "
          f"(iptables-legacy delivered {ndeliv}, dropped {ndrop}); ingress {args.ingress}; "
          f"{elapsed:.1f} s")
    if unconfirmed:
        print(f"disagreements not repeated on a second send (not counted): {unconfirmed}")
    for rep in reproducers:
        print(rep)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
