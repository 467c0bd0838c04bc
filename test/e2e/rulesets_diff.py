#!/usr/bin/env python3
"""Real-world rulesets, enforced by bpf-iptables and by iptables-legacy.

Seven filter rulesets, each loaded into the firewall of two twin "star"
topologies (netlib.Star): a firewall namespace whose interfaces carry the
names the ruleset uses (ppp0, wlan0, eth1, bond0.208, gre-davo-1, docker0,
br-5a8d3c1e9f20, ...; each a veth, a VLAN or bridge name included), one
namespace behind every interface, addresses chosen so the rules' addresses
are there (the client 10.230.173.148, a route to 192.168.100.0/24, the BGP
peers of 10.31.70.8/29, ...).  Twin A is filtered by iptables-legacy, twin B
by bpf-iptables; --oracle puts iptables-legacy in both (checks the harness,
must pass).

The rulesets:
  ipt-save-filter, wireless, policy-drop
      the *filter section of $CONFORMANCE_DIR/dumps/*.txt (read at run time,
      default ../shared/conformance next to the repository; the *raw section
      of wireless.txt is left out: bpf-iptables has the filter table only)
  ufw     what ufw 0.36 loads for `default deny incoming, allow outgoing,
          reject routed, logging low` and a set of `ufw allow/deny/reject/
          limit/route` rules, in ufw's own spelling (its before/after/user
          rules files and ufw-init), written out here, -m addrtype
          (ufw-not-local, after.rules) and `ufw limit`'s -m recent pair
          included.
  docker  the filter table Docker 20.10-27 writes for docker0 and one
          user-defined bridge network with published ports, plus three
          DOCKER-USER rules an administrator adds.  Docker's nat table (DNAT
          of published ports, MASQUERADE) is not there: packets are sent to
          the container's address as they look after DNAT.  docker0 and the
          network's bridge are veths here (one container behind each).
  docker0 Docker's default install (docker0 and two published ports only):
          its FORWARD chain all in the slot prefix.
  docker-bridge  the same ruleset with docker0 and the network's bridge real
          bridges, containers on their ports (two on docker0), as Docker
          makes them; the kernel's br_netfilter (on here) shows the packets
          a bridge forwards between its ports to iptables' FORWARD (-i
          docker0 -o docker0).

Packets.  For every rule, in every way the base chains reach it (INPUT,
FORWARD, OUTPUT, through the jumps of user chains), the generator solves for
a packet that matches the rule and, for every match of the rule (-s, -d, -i,
-o, -p, ports, multiport, --tcp-flags, --icmp-type, -m mac, -m iprange,
state/ctstate), a packet that matches all but that one: the sender is the
namespace behind the input interface (or the firewall itself for OUTPUT and
lo), the receiver the firewall or the namespace behind the output interface,
addresses are the topology's (or spoofed sources - never the firewall's
own addresses nor a subnet's network or broadcast address, martians the
kernel drops before any filter when rp_filter is on), and the conntrack state
is made real: NEW is a first packet, ESTABLISHED the reply to an opening
packet of the other side (or the third packet of a handshake), RELATED an
ICMP error about a UDP datagram of the other side, INVALID an unsolicited
SYN-ACK / ICMP error about nothing.  TCP segments carry real sequence and
acknowledgement numbers.  An address with a MAC of its own (the second
wireless client of ipt-save-filter's -m mac rules) sits on a macvlan in its
namespace; a packet with another MAC than its source's is sent in a frame of
its own (AF_PACKET).  Besides, per ruleset: real TCP connections and UDP
request/reply exchanges between sockets (connect + echo: "echoed",
ECONNREFUSED, timeout, ...), and extra packets (a burst against -m limit,
multicast and broadcast for ufw).

Verdicts.  A packet is delivered when a raw socket of the receiver got it;
what came back is every ICMP error quoting it (type, code, source), the TCP
RST answering it and the echo reply to it that its sender's namespace got.  Each
packet's (delivered, what came back) must be the same in both twins.  The
kernels' own answers in the peers (RST, port unreachable) are removed there
(ct_diff's raw-table rule; our sockets are marked); the firewall's own
answers (a RST from its stack to an accepted SYN, an echo reply) go through
its OUTPUT chain in both twins like anything else.  A disagreement is
replayed once (fresh ports); only a repeated one counts.

-m limit.  A packet that a rule with -m limit and a deciding target
(ACCEPT, DROP, REJECT, RETURN, a jump) may judge is sent in a group of fewer
packets than the burst, right after the ruleset is loaded again in both
twins (a restore starts every bucket full, in iptables-legacy as in
bpf-iptables), so the limit never decides - except in the burst extras,
which send more than the burst at once on purpose.  LOG, NFLOG and TCPMSS
are non-terminal: the verdict must not change.

Coverage.  The per-rule packet counters of twin A (iptables-legacy-save -c)
say which rules the packets hit; the rules never hit are listed (chains no
rule jumps to; ufw's ICMP-error ACCEPTs, which the RELATED and INVALID rules
before them leave nothing to, and its not-local DROP, which needs a non-local
destination in INPUT; Docker's -i X -o X rules without a second port).

Known differences, found by this test and not fixed here (data and control
plane), counted apart and recognised precisely (see the comments at
reject_reply_dropped_by_output, bridged and run_mode):
  - bpf-iptables sends REJECT's reply without the OUTPUT chain, iptables
    filters it there (in ipt-save-filter the RST about an INVALID packet is
    INVALID itself and OUTPUT rejects it);
  - packets a bridge forwards between two of its ports are not filtered nor
    tracked by bpf-iptables (iptables sees them through br_netfilter).
(Bridge and bond ports are judged on their master device; XDP ingress used
to fail on a bridge's ports, found by this test and fixed in the loader.)
Also, with XDP ingress, the reply to a REJECT in OUTPUT enters the local
stack without INPUT judging it.  TCPMSS is accepted and counted but does not
clamp the MSS (verdicts are unaffected, so this test cannot see it).  The
rules that look at bridged packets (docker's -i docker0 -o docker0) are hit
in docker-bridge only.  Some other seeds (--seed 1, 3, 7, 8) meet three
more differences, reported, not marked (the default seed does not meet
them): over lo, SYN, the stack's RST, then a SYN-ACK is INVALID for Linux's
conntrack, not for bpf-iptables'; REJECT answers an ICMP message of an
unassigned type (1, 2, 6, 7, 9, 10, above 18), which Linux takes for an
error and never answers; REJECT answers a packet for the directed broadcast
address of another subnet of the firewall (from that broadcast address),
which Linux does not.

Both ingress modes of bpf-iptables (XDP, then tc) are run by default
(--ingress xdp or tc for one), conntrack tables flushed in between.

Usage (root; a missing iptables-legacy, BPF, root or conformance data is a
failure, never a skip):
  rulesets_diff.py --bin build
  rulesets_diff.py --bin build --only wireless --ingress tc -v
  rulesets_diff.py --bin build --oracle
  rulesets_diff.py --bin build --only ufw --dump     # every packet, both fates
  rulesets_diff.py --print ufw                      # the ruleset text
The last line is "N passed, N failed" (rulesets x ingress modes).
"""

import argparse
import errno
import os
import random
import selectors
import shlex
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netlib as nl  # noqa: E402
from ct_diff import (MARK, CPkt, Harness, icmp_msg, ip_hdr,  # noqa: E402
                     tcp_seg, udp_dgram)
from ct_diff import received_key as ct_key  # noqa: E402
from kernel_diff import Firewalls, load_problem, preflight  # noqa: E402

SYN, FIN, RST, PSH, ACK, URG = 0x02, 0x01, 0x04, 0x08, 0x10, 0x20
EPH_LO, EPH_HI = 40000, 61000      # ports no rule of these rulesets looks at
PROTO_NAMES = {"tcp": 6, "udp": 17, "icmp": 1, "gre": 47, "esp": 50, "ah": 51,
               "all": 0}
ICMP_NAMES = {
    "any": (None, None), "echo-reply": (0, None), "echo-request": (8, None),
    "destination-unreachable": (3, None), "network-unreachable": (3, 0),
    "host-unreachable": (3, 1), "protocol-unreachable": (3, 2),
    "port-unreachable": (3, 3), "fragmentation-needed": (3, 4),
    "source-quench": (4, None), "redirect": (5, None), "time-exceeded": (11, None),
    "parameter-problem": (12, None), "timestamp-request": (13, None),
    "timestamp-reply": (14, None),
}
FLAG_BITS = {"FIN": FIN, "SYN": SYN, "RST": RST, "PSH": PSH, "ACK": ACK, "URG": URG,
             "ALL": 0x3f, "NONE": 0}
NON_TERMINAL = ("LOG", "NFLOG", "TCPMSS", "")
VERDICTS = ("ACCEPT", "DROP", "REJECT", "RETURN")


# ---------------------------------------------------------------------------
# The rule model (only what these rulesets use; anything else is an error)
# ---------------------------------------------------------------------------

class Clause:
    """One match of a rule: kind, negated?, value."""

    def __init__(self, kind, neg, val, text):
        self.kind, self.neg, self.val, self.text = kind, neg, val, text

    def __repr__(self):
        return self.text


class Rule:
    def __init__(self, chain, num, clauses, target, tkind, text):
        self.chain, self.num = chain, num
        self.clauses, self.target, self.tkind = clauses, target, tkind
        self.text = text

    def has_limit(self):
        return any(c.kind == "limit" for c in self.clauses)

    def limit_burst(self):
        return min([c.val[1] for c in self.clauses if c.kind == "limit"] or [0])


def cidr(text):
    a, _, m = text.partition("/")
    if not m:
        plen = 32
    elif "." in m:
        plen = bin(nl.a2i(m)).count("1")
    else:
        plen = int(m)
    mask = (0xffffffff << (32 - plen)) & 0xffffffff if plen else 0
    return (nl.a2i(a) & mask, mask)


def port_range(text):
    lo, sep, hi = text.partition(":")
    if not sep:
        return (int(lo), int(lo))
    return (int(lo or 0), int(hi or 65535))


def flag_set(text):
    return sum(FLAG_BITS[f] for f in text.split(","))


def icmp_spec(text):
    if text in ICMP_NAMES:
        return ICMP_NAMES[text]
    t, _, c = text.partition("/")
    return (int(t), int(c) if c else None)


def parse_rule(chain, num, line):
    """A rule as iptables-save (or ufw's rules files) writes it."""
    toks = shlex.split(line)
    assert toks[0] == "-A" and toks[1] == chain
    i, cl, target, tkind = 2, [], "", ""
    neg = False

    def take(n):
        nonlocal i
        vals = toks[i + 1:i + 1 + n]
        text = " ".join((["!"] if neg else []) + toks[i:i + 1 + n])
        i += 1 + n
        return vals, text

    while i < len(toks):
        t = toks[i]
        if t == "!":
            neg = True
            i += 1
            continue
        if t in ("-j", "-g"):
            target, tkind = toks[i + 1], t
            break                          # the rest are the target's options
        if t == "-m":
            i += 2
            continue
        kinds = {"-s": "src", "-d": "dst", "-i": "iif", "-o": "oif", "-p": "proto",
                 "--sport": "sport", "--dport": "dport", "--sports": "sports",
                 "--dports": "dports", "--ports": "ports", "--icmp-type": "icmp",
                 "--state": "state", "--ctstate": "state", "--mac-source": "mac",
                 "--src-range": "srange", "--dst-range": "drange",
                 "--comment": "comment", "--limit": "limit"}
        if t in ("--src-type", "--dst-type"):
            (v,), text = take(1)
            cl.append(Clause("stype" if t == "--src-type" else "dtype", neg,
                             frozenset(x.upper() for x in v.split(",")), text))
        elif t in ("--set", "--rcheck", "--update", "--remove", "--reap", "--rttl",
                   "--rsource", "--rdest", "--seconds", "--hitcount", "--name", "--mask"):
            # -m recent: stateful, both firewalls judge it; the model lets it match
            n = 0 if t in ("--set", "--rcheck", "--update", "--remove", "--reap", "--rttl",
                           "--rsource", "--rdest") else 1
            _, text = take(n)
            cl.append(Clause("recent", neg, None, text))
        elif t == "--tcp-flags":
            (m, c), text = take(2)
            cl.append(Clause("flags", neg, (flag_set(m), flag_set(c)), text))
        elif t == "--syn":
            _, text = take(0)
            cl.append(Clause("flags", neg, (SYN | RST | ACK | FIN, SYN), text))
        elif t == "--limit-burst":
            (b,), _ = take(1)
            lim = [c for c in cl if c.kind == "limit"]
            lim[-1].val = (lim[-1].val[0], int(b))
        elif t in kinds:
            (v,), text = take(1)
            k = kinds[t]
            val = {"src": cidr, "dst": cidr, "sport": port_range, "dport": port_range,
                   "proto": lambda x: PROTO_NAMES.get(x, None) if not x.isdigit() else int(x),
                   "icmp": icmp_spec,
                   "state": lambda x: frozenset(x.split(",")),
                   "mac": str.lower,
                   "srange": lambda x: tuple(nl.a2i(a) for a in x.split("-")),
                   "drange": lambda x: tuple(nl.a2i(a) for a in x.split("-")),
                   "limit": lambda x: (x, 5),
                   "comment": str, "iif": str, "oif": str,
                   }.get(k, lambda x: [port_range(p) for p in x.split(",")])(v)
            if val is None:
                raise ValueError(f"unknown protocol in: {line}")
            cl.append(Clause(k, neg, val, text))
        else:
            raise ValueError(f"rulesets_diff does not model {t!r} in: {line}")
        neg = False
    return Rule(chain, num, cl, target, tkind, line)


class Ruleset:
    def __init__(self, text):
        self.text = text
        self.policy, self.chains = {}, {}
        for ln in text.splitlines():
            ln = ln.strip()
            if ln.startswith(":"):
                name, pol = ln[1:].split()[:2]
                self.chains[name] = []
                if pol != "-":
                    self.policy[name] = pol
            elif ln.startswith("-A "):
                chain = ln.split()[1]
                self.chains[chain].append(parse_rule(chain, len(self.chains[chain]) + 1, ln))

    def rules(self):
        return [r for rules in self.chains.values() for r in rules]

    def user(self, name):
        return name in self.chains and name not in self.policy

    def contexts(self, per_chain=4):
        """chain -> [(base, [jump rules from the base chain to it])]: the ways
        the base chains reach each chain (at most per_chain, one per base
        chain first)."""
        found = {b: [(b, [])] for b in ("INPUT", "FORWARD", "OUTPUT")}
        todo = [(b, b, []) for b in ("INPUT", "FORWARD", "OUTPUT")]
        while todo:
            base, chain, path = todo.pop(0)
            for r in self.chains[chain]:
                if self.user(r.target) and len(path) < 8:
                    p = path + [r]
                    lst = found.setdefault(r.target, [])
                    if len(lst) < 16:
                        lst.append((base, p))
                        todo.append((base, r.target, p))
        out = {}
        for chain, lst in found.items():
            pick, seen = [], set()
            for base, p in lst:                  # one per base chain first
                if base not in seen:
                    pick.append((base, p))
                    seen.add(base)
            for base, p in lst:
                if len(pick) >= per_chain:
                    break
                if (base, p) not in pick:
                    pick.append((base, p))
            out[chain] = pick[:per_chain]
        return out

    def ports_used(self):
        out = set()
        for r in self.rules():
            for c in r.clauses:
                if c.kind in ("sport", "dport"):
                    out.add(c.val)
                elif c.kind in ("sports", "dports", "ports"):
                    out.update(c.val)
        return out


# ---------------------------------------------------------------------------
# What a packet looks like to the rules, and the matches
# ---------------------------------------------------------------------------

class View:
    """A packet as the rules see it (addresses as integers)."""
    FIELDS = ("chain", "iif", "oif", "src", "dst", "proto", "sport", "dport", "flags",
              "itype", "icode", "state", "mac", "shape", "sender", "receiver",
              "natmac", "back")
    # natmac: the MAC the sender's own stack would use (the packet is sent in
    # a frame of its own when mac differs); back: who owns src (gets replies)

    def __init__(self, **kw):
        for f in self.FIELDS:
            setattr(self, f, kw.get(f))

    def copy(self, **kw):
        v = View(**{f: getattr(self, f) for f in self.FIELDS})
        for k, x in kw.items():
            setattr(v, k, x)
        return v


def if_match(pattern, name):
    if pattern.endswith("+"):
        return name.startswith(pattern[:-1]) if pattern != "+" else True
    return name == pattern


def in_ranges(v, ranges):
    return any(lo <= v <= hi for lo, hi in ranges)


def holds(c, v):
    """Does clause c (with its negation) match view v?"""
    k, x = c.kind, c.val
    if k in ("comment", "limit", "recent"):
        return True
    if k == "src":
        m = (v.src & x[1]) == x[0]
    elif k == "dst":
        m = (v.dst & x[1]) == x[0]
    elif k == "iif":
        m = if_match(x, v.iif or "")
    elif k == "oif":
        m = if_match(x, v.oif or "")
    elif k == "proto":
        m = x == 0 or v.proto == x
    elif k in ("sport", "dport"):
        m = v.proto in (6, 17) and x[0] <= getattr(v, k) <= x[1]
    elif k == "sports":
        m = v.proto in (6, 17) and in_ranges(v.sport, x)
    elif k == "dports":
        m = v.proto in (6, 17) and in_ranges(v.dport, x)
    elif k == "ports":
        m = v.proto in (6, 17) and (in_ranges(v.sport, x) or in_ranges(v.dport, x))
    elif k == "flags":
        m = v.proto == 6 and (v.flags & x[0]) == x[1]
    elif k == "icmp":
        t, code = x
        m = v.proto == 1 and (t is None or (v.itype == t and (code is None or
                                                              v.icode == code)))
    elif k == "state":
        m = v.state in x
    elif k == "mac":
        m = v.mac is not None and v.mac == x
    elif k in ("stype", "dtype"):
        m = addr_type(v.src if k == "stype" else v.dst) in x
    elif k == "srange":
        m = x[0] <= v.src <= x[1]
    elif k == "drange":
        m = x[0] <= v.dst <= x[1]
    else:
        raise ValueError(k)
    return m != c.neg


# -m addrtype: the firewall's local addresses and subnet broadcasts (set per
# site by the Generator), as the kernel's local routing table has them
FW_TYPES = {}


def addr_type(a):
    if a >> 24 == 0 or a == 0xffffffff:
        return "BROADCAST"
    if a >> 28 == 14:
        return "MULTICAST"
    if a >> 24 == 127:
        return "BROADCAST" if a == 0x7fffffff else "LOCAL"
    return FW_TYPES.get(a, "UNICAST")


def trace(rs, v, verdict=False):
    """Walk v's chain as netfilter would (every -m limit matching): the rules
    it matches, in order, up to the verdict (and the verdict: a target or
    the policy)."""
    hits = []
    stack = []
    chain, i = v.chain, 0
    for _ in range(10000):
        rules = rs.chains[chain]
        if i >= len(rules):
            if not stack:
                break
            chain, i = stack.pop()
            continue
        r = rules[i]
        i += 1
        if not all(holds(c, v) for c in r.clauses):
            continue
        hits.append(r)
        if r.target in NON_TERMINAL:
            continue
        if r.target == "RETURN":
            if not stack:
                break
            chain, i = stack.pop()
        elif rs.user(r.target):
            if r.tkind == "-j":
                stack.append((chain, i))
            chain, i = r.target, 0
        else:
            return (hits, r.target) if verdict else hits
    return (hits, rs.policy[v.chain]) if verdict else hits


def limit_gate(rs, views):
    """The smallest burst of a deciding -m limit rule any of the views
    reaches, or 0."""
    burst = 0
    for v in views:
        for r in trace(rs, v):
            if r.has_limit() and r.target not in NON_TERMINAL:
                b = r.limit_burst()
                burst = b if not burst else min(burst, b)
    return burst


# ---------------------------------------------------------------------------
# The conntrack state a lone packet gets (nf_conntrack, tcp_loose=1; the
# generator only uses it to aim at state rules, the kernels decide)
# ---------------------------------------------------------------------------

TCP_VALID = {SYN, SYN | URG, SYN | ACK, RST, RST | ACK, RST | ACK | PSH, FIN | ACK,
             FIN | ACK | URG, ACK, ACK | URG, FIN | ACK | PSH, FIN | ACK | PSH | URG,
             ACK | PSH, ACK | PSH | URG}


def lone_state(proto, flags, itype):
    if proto == 6:
        f = flags & 0x3f
        if f not in TCP_VALID or f & RST or (f & SYN and f & ACK) or f & FIN:
            return "INVALID"
        return "NEW"
    if proto == 1:
        return "NEW" if itype in (8, 13, 15, 17) else "INVALID"
    return "NEW"


# ---------------------------------------------------------------------------
# The rulesets and their sites (topologies)
# ---------------------------------------------------------------------------

def conformance_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    return os.environ.get("CONFORMANCE_DIR") or \
        os.path.join(repo, "..", "shared", "conformance")


def filter_section(text):
    """The '*filter' ... 'COMMIT' section of an iptables-save file."""
    out, inside = [], False
    for ln in text.splitlines():
        if ln.strip() == "*filter":
            inside = True
        if inside:
            out.append(ln)
            if ln.strip() == "COMMIT":
                break
    if not out or out[-1].strip() != "COMMIT":
        raise ValueError("no complete *filter section")
    return "\n".join(out) + "\n"


def read_dump(name):
    with open(os.path.join(conformance_dir(), "dumps", name)) as f:
        return filter_section(f.read())


# ufw 0.36: `ufw default deny incoming; ufw default allow outgoing; ufw
# default reject routed; ufw logging low` and the user rules below, as
# ufw-init restores them (ufw's spelling, its "### tuple ###" comments).
UFW_BCAST = ["10.10.0.255", "192.168.50.255", "255.255.255.255"]


def ufw_text():
    chains = ["ufw-before-logging-input", "ufw-before-logging-output",
              "ufw-before-logging-forward", "ufw-before-input", "ufw-before-output",
              "ufw-before-forward", "ufw-after-input", "ufw-after-output",
              "ufw-after-forward", "ufw-after-logging-input", "ufw-after-logging-output",
              "ufw-after-logging-forward", "ufw-reject-input", "ufw-reject-output",
              "ufw-reject-forward", "ufw-track-input", "ufw-track-output",
              "ufw-track-forward", "ufw-logging-deny", "ufw-logging-allow",
              "ufw-skip-to-policy-input", "ufw-skip-to-policy-output",
              "ufw-skip-to-policy-forward", "ufw-not-local", "ufw-user-input",
              "ufw-user-output", "ufw-user-forward", "ufw-user-logging-input",
              "ufw-user-logging-output", "ufw-user-logging-forward", "ufw-user-limit",
              "ufw-user-limit-accept"]
    lim = "-m limit --limit 3/min --limit-burst 10"
    out = ["# what ufw 0.36 loads (see rulesets_diff.py)", "*filter",
           ":INPUT DROP [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]"]
    out += [f":{c} - [0:0]" for c in chains]
    for hook in ("input", "output", "forward"):
        for part in ("before-logging", "before", "after", "after-logging", "reject",
                     "track"):
            out.append(f"-A {hook.upper()} -j ufw-{part}-{hook}")
    # before.rules
    out += [
        "-A ufw-before-input -i lo -j ACCEPT",
        "-A ufw-before-output -o lo -j ACCEPT",
        "-A ufw-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A ufw-before-output -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A ufw-before-forward -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A ufw-before-input -m conntrack --ctstate INVALID -j ufw-logging-deny",
        "-A ufw-before-input -m conntrack --ctstate INVALID -j DROP",
    ]
    for t in ("destination-unreachable", "time-exceeded", "parameter-problem",
              "echo-request"):
        out.append(f"-A ufw-before-input -p icmp --icmp-type {t} -j ACCEPT")
    for t in ("destination-unreachable", "time-exceeded", "parameter-problem",
              "echo-request"):
        out.append(f"-A ufw-before-forward -p icmp --icmp-type {t} -j ACCEPT")
    out.append("-A ufw-before-input -p udp --sport 67 --dport 68 -j ACCEPT")
    out.append("-A ufw-before-input -j ufw-not-local")
    out += [f"-A ufw-not-local -m addrtype --dst-type {t} -j RETURN"
            for t in ("LOCAL", "MULTICAST", "BROADCAST")]
    out += [f"-A ufw-not-local {lim} -j ufw-logging-deny",
            "-A ufw-not-local -j DROP",
            "-A ufw-before-input -p udp -d 224.0.0.251 --dport 5353 -j ACCEPT",
            "-A ufw-before-input -p udp -d 239.255.255.250 --dport 1900 -j ACCEPT"]
    # ufw-init hooks the user chains in after before.rules
    out += ["-A ufw-before-input -j ufw-user-input",
            "-A ufw-before-output -j ufw-user-output",
            "-A ufw-before-forward -j ufw-user-forward"]
    # after.rules
    for p, port in (("udp", 137), ("udp", 138), ("tcp", 139), ("tcp", 445),
                    ("udp", 67), ("udp", 68)):
        out.append(f"-A ufw-after-input -p {p} --dport {port} -j ufw-skip-to-policy-input")
    out.append("-A ufw-after-input -m addrtype --dst-type BROADCAST "
               "-j ufw-skip-to-policy-input")
    # ufw-init: reject routed, track outgoing, skip-to-policy
    out += ["-A ufw-reject-forward -j REJECT",
            "-A ufw-track-output -p tcp -m conntrack --ctstate NEW -j ACCEPT",
            "-A ufw-track-output -p udp -m conntrack --ctstate NEW -j ACCEPT",
            "-A ufw-skip-to-policy-input -j DROP",
            "-A ufw-skip-to-policy-output -j ACCEPT",
            "-A ufw-skip-to-policy-forward -j REJECT"]
    # user.rules
    user = [
        ("deny from 10.20.9.0/24 (inserted first)",
         ["-A ufw-user-input -s 10.20.9.0/24 -j DROP"]),
        ("allow 22/tcp", ["-A ufw-user-input -p tcp --dport 22 -j ACCEPT"]),
        ("limit 2222/tcp",
         ["-A ufw-user-input -p tcp --dport 2222 -m conntrack --ctstate NEW -m recent --set",
          "-A ufw-user-input -p tcp --dport 2222 -m conntrack --ctstate NEW -m recent "
          "--update --seconds 30 --hitcount 6 -j ufw-user-limit",
          "-A ufw-user-input -p tcp --dport 2222 -j ufw-user-limit-accept"]),
        ("allow 80,443/tcp",
         ["-A ufw-user-input -p tcp -m multiport --dports 80,443 -j ACCEPT"]),
        ("allow proto tcp from 10.20.0.0/16 to any port 5432",
         ["-A ufw-user-input -p tcp --dport 5432 -s 10.20.0.0/16 -j ACCEPT"]),
        ("reject 23/tcp",
         ["-A ufw-user-input -p tcp --dport 23 -j REJECT --reject-with tcp-reset"]),
        ("reject 514/udp", ["-A ufw-user-input -p udp --dport 514 -j REJECT"]),
        ("allow in on eth1 to any port 53",
         ["-A ufw-user-input -i eth1 -p tcp --dport 53 -j ACCEPT",
          "-A ufw-user-input -i eth1 -p udp --dport 53 -j ACCEPT"]),
        ("allow log 8080/tcp",
         ["-A ufw-user-logging-input -p tcp --dport 8080 -m conntrack --ctstate NEW "
          f"{lim} -j LOG --log-prefix \"[UFW ALLOW] \"",
          "-A ufw-user-logging-input -p tcp --dport 8080 -j RETURN",
          "-A ufw-user-input -p tcp --dport 8080 -j ufw-user-logging-input",
          "-A ufw-user-input -p tcp --dport 8080 -j ACCEPT"]),
        ("deny out 25/tcp", ["-A ufw-user-output -p tcp --dport 25 -j DROP"]),
        ("route allow in on eth1 out on eth0",
         ["-A ufw-user-forward -i eth1 -o eth0 -j ACCEPT"]),
        ("route allow proto tcp from any to 192.168.50.10 port 80",
         ["-A ufw-user-forward -p tcp -d 192.168.50.10 --dport 80 -j ACCEPT"]),
    ]
    out.append("### RULES ###")
    for tup, lines in user:
        out.append(f"### tuple ### {tup}")
        out += lines
    out.append("### END RULES ###")
    out += ["-A ufw-user-limit -m limit --limit 3/minute -j LOG --log-prefix "
            "\"[UFW LIMIT BLOCK] \"",
            "-A ufw-user-limit -j REJECT",
            "-A ufw-user-limit-accept -j ACCEPT",
            # logging low
            f"-A ufw-after-logging-input {lim} -j LOG --log-prefix \"[UFW BLOCK] \"",
            f"-A ufw-after-logging-forward {lim} -j LOG --log-prefix \"[UFW BLOCK] \"",
            f"-A ufw-logging-deny -m conntrack --ctstate INVALID {lim} -j RETURN",
            f"-A ufw-logging-deny {lim} -j LOG --log-prefix \"[UFW BLOCK] \"",
            f"-A ufw-logging-allow {lim} -j LOG --log-prefix \"[UFW ALLOW] \"",
            "COMMIT"]
    return "\n".join(out) + "\n"


DOCKER_BR = "br-5a8d3c1e9f20"


def docker_text(network=True):
    """Docker's filter table for docker0 and (network) one user-defined bridge
    network with the DOCKER-USER rules an administrator adds; without it,
    Docker's default install (docker0 and its two published ports, DOCKER-USER
    as Docker leaves it), whose fourteen FORWARD rules (the user and isolation
    chains, the published ports: -d, ! -i, -o, -p --dport) are all in the slot
    prefix (dataplane.md), which that ruleset checks on real packets."""
    br = DOCKER_BR
    net = [f"-A FORWARD -o {br} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
           f"-A FORWARD -o {br} -j DOCKER",
           f"-A FORWARD -i {br} ! -o {br} -j ACCEPT",
           f"-A FORWARD -i {br} -o {br} -j ACCEPT"]
    lines = [
        "# Docker 20.10-27 (docker0" + (" + one user-defined bridge network" if network
                                        else " only") + "), filter table",
        "*filter", ":INPUT ACCEPT [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]",
        ":DOCKER - [0:0]", ":DOCKER-ISOLATION-STAGE-1 - [0:0]",
        ":DOCKER-ISOLATION-STAGE-2 - [0:0]", ":DOCKER-USER - [0:0]",
        "-A FORWARD -j DOCKER-USER", "-A FORWARD -j DOCKER-ISOLATION-STAGE-1",
        *(net if network else []),
        "-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A FORWARD -o docker0 -j DOCKER",
        "-A FORWARD -i docker0 ! -o docker0 -j ACCEPT",
        "-A FORWARD -i docker0 -o docker0 -j ACCEPT",
        "-A DOCKER -d 172.17.0.2/32 ! -i docker0 -o docker0 -p tcp -m tcp --dport 80 -j ACCEPT",
        "-A DOCKER -d 172.17.0.3/32 ! -i docker0 -o docker0 -p udp -m udp --dport 53 -j ACCEPT",
        *([f"-A DOCKER -d 172.18.0.2/32 ! -i {br} -o {br} -p tcp -m tcp --dport 5432 -j ACCEPT",
           f"-A DOCKER-ISOLATION-STAGE-1 -i {br} ! -o {br} -j DOCKER-ISOLATION-STAGE-2"]
          if network else []),
        "-A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2",
        "-A DOCKER-ISOLATION-STAGE-1 -j RETURN",
        *([f"-A DOCKER-ISOLATION-STAGE-2 -o {br} -j DROP"] if network else []),
        "-A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP",
        "-A DOCKER-ISOLATION-STAGE-2 -j RETURN",
        *(["-A DOCKER-USER -i eth0 -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN",
           "-A DOCKER-USER -s 198.51.100.0/24 -i eth0 -j DROP",
           "-A DOCKER-USER -i eth0 -p tcp -m tcp --dport 5432 -m iprange ! --src-range "
           "10.99.0.2-10.99.0.9 -j DROP"] if network else []),
        "-A DOCKER-USER -j RETURN", "COMMIT"]
    return "\n".join(lines) + "\n"


class Conv:
    """A real exchange between sockets: TCP connect + echo, or a UDP
    request/reply. cport: the client's port (0: any)."""

    def __init__(self, proto, cli, cli_addr, srv, srv_addr, port, cport=0):
        self.proto, self.cli, self.cli_addr = proto, cli, cli_addr
        self.srv, self.srv_addr, self.port, self.cport = srv, srv_addr, port, cport

    def describe(self):
        c = f"{self.cli_addr}:{self.cport}" if self.cport else self.cli_addr
        return f"{self.proto} {c} ({self.cli}) -> {self.srv_addr}:{self.port} ({self.srv})"


class Site:
    """A ruleset, the topology it is enforced in, and what else is sent."""

    def __init__(self, name, text, links, convs=(), extra_dst=(), joins=(),
                 bursts=()):
        self.name, self.text_fn, self.links = name, text, links
        self.convs, self.extra_dst, self.joins = list(convs), list(extra_dst), list(joins)
        self.bursts = list(bursts)     # (title, count, View kwargs)
        self.by_if = {}                # interface -> the links behind it
        for lk in links:
            self.by_if.setdefault(lk.ifname, []).append(lk)
        self.by_role = {lk.role: lk for lk in links}

    def ifnames(self):
        return list(self.by_if)

    def fw_addrs(self):
        return [lk.fw_ip() for lk in self.links]


L = nl.Link
SITES = [
    Site("ipt-save-filter", lambda: read_dump("ipt-save-filter.txt"), [
        L("ppp0", "inet", "10.230.173.1/24",
          ["10.230.173.148/24", "10.230.173.151/24", "10.230.173.150/24"],
          lo=["198.51.100.7", "203.0.113.9"], routes=["0.0.0.0/0"]),
        L("wlan0", "wlan", "192.168.200.1/24",
          ["192.168.200.4/24", "192.168.200.9/24", "192.168.200.20/24"],
          mac="00:00:f1:05:a0:e0", macs={"192.168.200.9": "00:00:f1:05:99:85"}),
        L("eth1", "lan1", "192.168.100.1/24",
          ["192.168.100.50/24", "192.168.100.77/24", "192.168.100.2/24"]),
        L("eth2", "lan2", "192.168.0.1/24", ["192.168.0.10/24", "192.168.0.20/24"]),
    ], convs=[
        Conv("tcp", "inet", "10.230.173.148", "fw", "10.230.173.1", 22),
        Conv("tcp", "inet", "10.230.173.150", "fw", "10.230.173.1", 22),
        Conv("udp", "inet", "10.230.173.148", "fw", "10.230.173.1", 53),
        Conv("tcp", "lan1", "192.168.100.50", "inet", "198.51.100.7", 80),
        Conv("udp", "lan1", "192.168.100.50", "inet", "198.51.100.7", 53),
        Conv("udp", "lan1", "192.168.100.50", "inet", "198.51.100.7", 53, cport=137),
        Conv("tcp", "inet", "10.230.173.148", "lan1", "192.168.100.77", 4180),
        Conv("udp", "inet", "203.0.113.9", "lan1", "192.168.100.77", 4166),
        Conv("tcp", "inet", "10.230.173.148", "lan1", "192.168.100.50", 80),
        Conv("tcp", "lan1", "192.168.100.50", "fw", "192.168.100.1", 22),
        Conv("tcp", "fw", "10.230.173.1", "inet", "10.230.173.148", 443),
        Conv("tcp", "fw", "192.168.200.1", "wlan", "192.168.200.4", 22),
        Conv("tcp", "fw", "192.168.200.1", "wlan", "192.168.200.20", 22),
        Conv("tcp", "wlan", "192.168.200.4", "fw", "192.168.200.1", 22),
        Conv("tcp", "wlan", "192.168.200.20", "fw", "192.168.200.1", 22),
        Conv("tcp", "wlan", "192.168.200.9", "fw", "192.168.200.1", 22),
        Conv("udp", "wlan", "192.168.200.9", "inet", "198.51.100.7", 53),
        Conv("tcp", "wlan", "192.168.200.4", "inet", "198.51.100.7", 80),
        Conv("tcp", "lan2", "192.168.0.10", "inet", "198.51.100.7", 80),
        Conv("tcp", "fw", "127.0.0.1", "fw", "127.0.0.1", 22),
    ], bursts=[
        ("8 echo requests from ppp0 at once (-m limit 1/sec, burst 5)", 8,
         dict(chain="INPUT", iif="ppp0", sender="inet", receiver="fw",
              src="10.230.173.148", dst="10.230.173.1", proto=1, itype=8, icode=0)),
    ]),
    Site("wireless", lambda: read_dump("wireless.txt"), [
        L("bond0.208", "b208", "10.31.70.9/29", ["10.31.70.10/29", "10.31.70.11/29"],
          lo=["203.0.113.50", "168.209.255.75", "168.209.255.106", "10.78.129.130",
              "154.73.34.12", "198.51.100.25"], routes=["0.0.0.0/0"]),
        L("bond0.686", "b686", "10.44.224.9/29", ["10.44.224.10/29"],
          lo=["10.35.167.46", "10.35.167.45"]),
        L("bond0.10", "b10", "10.31.63.81/30", ["10.31.63.82/30"], lo=["10.31.64.5"]),
        L("bond0.11", "b11", "10.50.11.1/24", ["10.50.11.2/24"]),
        L("bond0.12", "b12", "10.50.12.1/24", ["10.50.12.2/24"]),
        L("gre-wbcore", "grew", "10.60.1.1/30", ["10.60.1.2/30"]),
        L("gre-davo-1", "gred", "10.60.2.1/30", ["10.60.2.2/30"]),
        L("ppp0", "vpn", "192.168.255.1/24", ["192.168.255.10/24"], lo=["10.70.0.5"]),
    ], convs=[
        Conv("tcp", "b208", "10.31.70.10", "fw", "10.31.70.9", 22),
        Conv("tcp", "b208", "10.31.70.10", "fw", "10.31.70.9", 8080),
        Conv("tcp", "b208", "10.31.70.10", "fw", "10.31.70.9", 179),
        Conv("tcp", "b208", "203.0.113.50", "fw", "10.31.70.9", 179),
        Conv("udp", "b208", "10.31.70.10", "fw", "10.31.70.9", 500),
        Conv("udp", "b208", "10.31.70.10", "fw", "10.31.70.9", 53),
        Conv("tcp", "b686", "10.44.224.10", "fw", "10.44.224.9", 179),
        Conv("tcp", "b208", "203.0.113.50", "b11", "10.50.11.2", 3390),
        Conv("tcp", "b208", "203.0.113.50", "b11", "10.50.11.2", 22),
        Conv("tcp", "b11", "10.50.11.2", "b208", "203.0.113.50", 443),
        Conv("tcp", "b11", "10.50.11.2", "b208", "203.0.113.50", 8080),
        Conv("tcp", "b11", "10.50.11.2", "b208", "154.73.34.12", 25),
        Conv("tcp", "b12", "10.50.12.2", "b208", "203.0.113.50", 80),
        Conv("tcp", "b208", "203.0.113.50", "b12", "10.50.12.2", 3306),
        Conv("tcp", "b208", "203.0.113.50", "b12", "10.50.12.2", 3307),
        Conv("tcp", "vpn", "192.168.255.10", "b208", "203.0.113.50", 80),
        Conv("tcp", "vpn", "10.70.0.5", "b208", "203.0.113.50", 80),
        Conv("tcp", "vpn", "192.168.255.10", "b11", "10.50.11.2", 3390),
        Conv("udp", "b10", "10.31.63.82", "b208", "203.0.113.50", 53),
        Conv("tcp", "b208", "203.0.113.50", "b10", "10.31.64.5", 80),
        Conv("tcp", "fw", "10.31.70.9", "b208", "203.0.113.50", 80),
        Conv("tcp", "gred", "10.60.2.2", "fw", "10.60.2.1", 9999),
    ]),
    Site("policy-drop", lambda: read_dump("policy-drop.txt"), [
        L("eth0", "lan", "10.1.0.1/24", ["10.1.0.2/24"]),
        L("eth1", "wan", "10.2.0.1/24", ["10.2.0.2/24"], lo=["198.51.100.1"],
          routes=["0.0.0.0/0"]),
    ], convs=[
        Conv("tcp", "lan", "10.1.0.2", "fw", "10.1.0.1", 22),
        Conv("tcp", "fw", "10.2.0.1", "wan", "198.51.100.1", 80),
        Conv("udp", "fw", "10.2.0.1", "wan", "198.51.100.1", 53),
        Conv("tcp", "lan", "10.1.0.2", "wan", "198.51.100.1", 80),
        Conv("tcp", "fw", "127.0.0.1", "fw", "127.0.0.1", 22),
    ]),
    Site("ufw", ufw_text, [
        L("eth0", "wan", "10.10.0.1/24", ["10.10.0.2/24"],
          lo=["203.0.113.50", "10.20.9.9", "10.20.1.1"], routes=["0.0.0.0/0"]),
        L("eth1", "lan", "192.168.50.1/24", ["192.168.50.10/24", "192.168.50.11/24"]),
    ], convs=[
        Conv("tcp", "wan", "10.10.0.2", "fw", "10.10.0.1", 22),
        Conv("tcp", "wan", "10.10.0.2", "fw", "10.10.0.1", 2222),
        Conv("tcp", "wan", "10.10.0.2", "fw", "10.10.0.1", 443),
        Conv("tcp", "wan", "10.20.1.1", "fw", "10.10.0.1", 5432),
        Conv("tcp", "wan", "10.10.0.2", "fw", "10.10.0.1", 5432),
        Conv("tcp", "wan", "10.20.9.9", "fw", "10.10.0.1", 22),
        Conv("tcp", "wan", "10.10.0.2", "fw", "10.10.0.1", 23),
        Conv("udp", "wan", "10.10.0.2", "fw", "10.10.0.1", 514),
        Conv("udp", "wan", "10.10.0.2", "fw", "10.10.0.1", 53),
        Conv("udp", "lan", "192.168.50.10", "fw", "192.168.50.1", 53),
        Conv("tcp", "lan", "192.168.50.10", "fw", "192.168.50.1", 8080),
        Conv("tcp", "fw", "10.10.0.1", "wan", "203.0.113.50", 25),
        Conv("tcp", "fw", "10.10.0.1", "wan", "203.0.113.50", 80),
        Conv("udp", "fw", "10.10.0.1", "wan", "203.0.113.50", 123),
        Conv("tcp", "lan", "192.168.50.10", "wan", "203.0.113.50", 80),
        Conv("tcp", "wan", "203.0.113.50", "lan", "192.168.50.10", 80),
        Conv("tcp", "wan", "203.0.113.50", "lan", "192.168.50.10", 22),
        Conv("udp", "wan", "203.0.113.50", "lan", "192.168.50.10", 53),
        Conv("tcp", "fw", "127.0.0.1", "fw", "127.0.0.1", 631),
    ], extra_dst=["224.0.0.251", "239.255.255.250", "224.0.0.1"] + UFW_BCAST,
        joins=["224.0.0.251", "239.255.255.250"]),
    Site("docker", docker_text, [
        L("eth0", "wan", "10.99.0.1/24", ["10.99.0.2/24", "10.99.0.5/24"],
          lo=["203.0.113.50", "198.51.100.20"], routes=["0.0.0.0/0"]),
        L("docker0", "ctr", "172.17.0.1/16", ["172.17.0.2/16", "172.17.0.3/16"]),
        L(DOCKER_BR, "net1", "172.18.0.1/16", ["172.18.0.2/16"]),
    ], convs=[
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 22),
        Conv("udp", "wan", "203.0.113.50", "ctr", "172.17.0.3", 53),
        Conv("tcp", "wan", "198.51.100.20", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "10.99.0.2", "net1", "172.18.0.2", 5432),
        Conv("tcp", "wan", "203.0.113.50", "net1", "172.18.0.2", 5432),
        Conv("tcp", "ctr", "172.17.0.2", "wan", "203.0.113.50", 443),
        Conv("udp", "ctr", "172.17.0.3", "wan", "203.0.113.50", 53),
        Conv("tcp", "ctr", "172.17.0.2", "net1", "172.18.0.2", 5432),
        Conv("tcp", "net1", "172.18.0.2", "ctr", "172.17.0.2", 80),
        Conv("tcp", "net1", "172.18.0.2", "wan", "198.51.100.20", 443),
        Conv("tcp", "fw", "172.17.0.1", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "10.99.0.2", "fw", "10.99.0.1", 22),
    ]),
    Site("docker0", lambda: docker_text(False), [
        L("eth0", "wan", "10.99.0.1/24", ["10.99.0.2/24"], lo=["203.0.113.50"],
          routes=["0.0.0.0/0"]),
        L("docker0", "ctr", "172.17.0.1/16", ["172.17.0.2/16", "172.17.0.3/16"]),
    ], convs=[
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 22),
        Conv("udp", "wan", "203.0.113.50", "ctr", "172.17.0.3", 53),
        Conv("udp", "wan", "10.99.0.2", "ctr", "172.17.0.3", 54),
        Conv("tcp", "ctr", "172.17.0.2", "wan", "203.0.113.50", 443),
        Conv("tcp", "fw", "172.17.0.1", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "10.99.0.2", "fw", "10.99.0.1", 22),
    ]),
    # the same, with docker0 and the network's bridge real bridges (as Docker
    # makes them), a container on each port
    Site("docker-bridge", docker_text, [
        L("eth0", "wan", "10.99.0.1/24", ["10.99.0.2/24", "10.99.0.5/24"],
          lo=["203.0.113.50", "198.51.100.20"], routes=["0.0.0.0/0"]),
        L("docker0", "ctr", "172.17.0.1/16", ["172.17.0.2/16"], bridge=True),
        L("docker0", "ctr2", "172.17.0.1/16", ["172.17.0.3/16"], bridge=True),
        L(DOCKER_BR, "net1", "172.18.0.1/16", ["172.18.0.2/16"], bridge=True),
    ], convs=[
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "203.0.113.50", "ctr", "172.17.0.2", 22),
        Conv("udp", "wan", "203.0.113.50", "ctr2", "172.17.0.3", 53),
        Conv("tcp", "wan", "198.51.100.20", "ctr", "172.17.0.2", 80),
        Conv("tcp", "wan", "10.99.0.2", "net1", "172.18.0.2", 5432),
        Conv("tcp", "ctr", "172.17.0.2", "wan", "203.0.113.50", 443),
        Conv("tcp", "ctr2", "172.17.0.3", "net1", "172.18.0.2", 5432),
        Conv("tcp", "ctr", "172.17.0.2", "ctr2", "172.17.0.3", 80),
        Conv("tcp", "fw", "172.17.0.1", "ctr2", "172.17.0.3", 80),
        Conv("tcp", "ctr", "172.17.0.2", "fw", "172.17.0.1", 22),
    ]),
]


# ---------------------------------------------------------------------------
# Packets for every rule: solve for a view, then make it real
# ---------------------------------------------------------------------------

FLAG_POOL = [SYN, SYN | ACK, ACK, PSH | ACK, FIN | ACK, RST, RST | ACK, FIN, SYN | FIN, 0,
             SYN | URG, FIN | PSH | URG]
ICMP_POOL = [(8, 0), (0, 0), (3, 3), (3, 1), (11, 0), (12, 0), (4, 0), (5, 1), (13, 0),
             (1, 0), (17, 0)]
ERR_TYPES = (3, 4, 5, 11, 12)
PROTO_DEP = ("sport", "dport", "sports", "dports", "ports", "flags", "icmp")
STATES = ("NEW", "ESTABLISHED", "RELATED", "INVALID")


def usable_src(a):
    top = a >> 24
    return not (top == 0 or top == 127 or top >= 224)


class Generator:
    """Views (packets as the rules see them) that match each rule, and that
    miss it by exactly one of its matches, in every context that reaches it."""

    def __init__(self, site, rs, seed):
        self.site, self.rs, self.seed = site, rs, seed
        fw = [nl.a2i(a) for a in site.fw_addrs()]
        self.fw_addrs = fw
        self.peer_addrs = {lk.role: [nl.a2i(a) for a in lk.peer_ips()] for lk in site.links}
        topo = fw + [a for v in self.peer_addrs.values() for a in v]
        spoof = set()
        for r in rs.rules():
            for c in r.clauses:
                if c.kind in ("src", "dst"):
                    net, mask = c.val
                    bc = net | (~mask & 0xffffffff)
                    spoof.update([net if mask == 0xffffffff else net + 1, net - 1, bc + 1,
                                  net + (bc - net) // 2])
                elif c.kind in ("srange", "drange"):
                    spoof.update([c.val[0], c.val[1], c.val[0] - 1, c.val[1] + 1])
        self.spoof = sorted(a & 0xffffffff for a in spoof | set(topo)
                            if usable_src(a & 0xffffffff))
        self.extra_dst = [nl.a2i(a) for a in site.extra_dst]
        self.lo = nl.a2i("127.0.0.1")
        # nor a subnet's network or broadcast address (martians when
        # rp_filter is on; not what this test is about)
        edges = set()
        for lk in site.links:
            net, mask = cidr(lk.fw_addr)
            edges |= {net, net | (~mask & 0xffffffff)}
        self.peer_srcs = [a for a in self.spoof if self.owner(a) != "fw" and a not in edges]
        FW_TYPES.clear()
        for lk in site.links:
            net, mask = cidr(lk.fw_addr)
            FW_TYPES[nl.a2i(lk.fw_ip())] = "LOCAL"
            FW_TYPES[net | (~mask & 0xffffffff)] = "BROADCAST"
        self.unsolved = []

    # -- hints: values on both sides of each match ------------------------

    def hints(self, clauses):
        """Per field, values on both sides of each match that looks at it."""
        h = {k: [] for k in ("src", "dst", "iif", "oif", "proto", "sport", "dport",
                             "flags", "icmp", "state", "mac")}
        names = self.site.ifnames() + ["lo"]
        addrs = self.spoof + self.extra_dst + [self.lo]
        for c in clauses:
            k, x = c.kind, c.val
            if k in ("src", "dst"):
                net, mask = x
                ins = [a for a in addrs if a & mask == net]
                outs = [a for a in addrs if a & mask != net]
                h[k] += ins[:8] + outs[:4] + [net | 1, (net - 1) & 0xffffffff]
            elif k in ("srange", "drange"):
                f = "src" if k == "srange" else "dst"
                h[f] += [a for a in addrs if x[0] - 1 <= a <= x[1] + 1] + \
                    [x[0], x[1], x[0] - 1, x[1] + 1]
            elif k in ("iif", "oif"):
                yes = [n for n in names if if_match(x, n)]
                no = [n for n in names if not if_match(x, n)]
                h[k] += yes + yes + no[:2]
            elif k == "proto":
                h["proto"] += [x or 6, 6, 17, 1]
            elif k in ("sport", "dport", "sports", "dports", "ports"):
                rng = [x] if k in ("sport", "dport") else x
                f = {"sports": "sport", "dports": "dport"}.get(k, k)
                for lo, hi in rng:
                    vals = [lo, hi, lo - 1, hi + 1, (lo + hi) // 2]
                    for g in (("sport", "dport") if f == "ports" else (f,)):
                        h[g] += vals
            elif k == "flags":
                m, cmp = x
                h["flags"] += [cmp, cmp] + [cmp ^ b for b in (1, 2, 4, 8, 16, 32) if m & b]
            elif k == "icmp":
                t, code = x
                if t is not None:
                    h["icmp"] += [(t, code or 0), (t, code or 0), (t, (code or 0) + 1),
                                  (t + 1, 0)]
            elif k == "state":
                h["state"] += sorted(x) + list(STATES)
            elif k == "mac":
                h["mac"].append(x)
            elif k in ("stype", "dtype"):
                f = "src" if k == "stype" else "dst"
                h[f] += [a for a in addrs if addr_type(a) in x][:8] + \
                    [a for a in addrs if addr_type(a) not in x][:4]
        for f in ("sport", "dport"):
            h[f] = [p for p in h[f] if 0 <= p <= 65535]
        return h

    def owner(self, a):
        if a in self.fw_addrs or a == self.lo:
            return "fw"
        for role, addrs in self.peer_addrs.items():
            if a in addrs:
                return role
        return None

    def draw(self, r, base, h):
        site = self.site

        def pick(hint, pool, p=.75):
            hint = [x for x in hint if x in pool] if pool is not None else hint
            if hint and r.random() < p:
                return r.choice(hint)
            return r.choice(pool)

        links = site.ifnames()
        v = View(chain=base, iif="", oif="")
        if base in ("INPUT", "FORWARD"):
            v.iif = pick(h["iif"], links + (["lo"] if base == "INPUT" else []))
        v.sender = "fw" if v.iif in ("", "lo") else r.choice(site.by_if[v.iif]).role
        if base == "INPUT":
            v.receiver = "fw"
        else:
            # the receiver: by a destination the matches name, or by -o
            dh = [a for a in h["dst"] if self.owner(a) not in (None, v.sender)]
            if base == "FORWARD":
                # out of the interface it came in by only between two ports
                # of a bridge (br_netfilter shows bridged packets to FORWARD)
                dh = [a for a in dh if self.owner(a) != "fw" and
                      (site.by_role[self.owner(a)].ifname != v.iif or
                       site.by_role[self.owner(a)].bridge)]
            if dh and r.random() < .5:
                o = self.owner(r.choice(dh))
                v.oif = "lo" if o == "fw" else site.by_role[o].ifname
            else:
                outs = [x for x in links if x != v.iif or len(site.by_if[x]) > 1] + \
                    (["lo"] if base == "OUTPUT" else [])
                v.oif = pick(h["oif"], outs)
            if v.oif == "lo":
                v.receiver = "fw"
            else:
                v.receiver = r.choice([lk.role for lk in site.by_if[v.oif]
                                       if lk.role != v.sender])
        local = v.iif == "lo" or v.oif == "lo"
        if v.sender == "fw":
            srcs = self.fw_addrs + ([self.lo] if local else [])
        else:
            # any source but the firewall's own addresses (the kernel drops
            # those on input unless accept_local=1, before any filter)
            srcs = self.peer_srcs
        if v.receiver == "fw":
            dsts = self.fw_addrs + ([self.lo] if local else self.extra_dst)
        else:
            dsts = self.peer_addrs[v.receiver]
        v.src = pick(h["src"], srcs)
        v.dst = pick(h["dst"], dsts)
        v.proto = pick(h["proto"], [6, 6, 17, 17, 1, 47, 50])
        multicast = v.dst >> 28 == 14 or v.dst in self.extra_dst
        v.sport = r.choice(h["sport"]) if h["sport"] and r.random() < .75 else -1
        v.dport = r.choice(h["dport"]) if h["dport"] and r.random() < .75 else -1
        v.flags = pick(h["flags"], FLAG_POOL)
        v.itype, v.icode = pick(h["icmp"], ICMP_POOL)
        v.mac = v.natmac = None
        if v.sender != "fw":
            lk = site.by_role[v.sender]
            v.mac = v.natmac = lk.mac_of(nl.i2a(v.src))
            if h["mac"]:                       # -m mac: any MAC of the segment
                v.mac = pick(h["mac"], [lk.mac] + list(lk.macs.values()), .5)
        v.back = self.owner(v.src)
        want = pick(h["state"], ["NEW"] * 12 + ["ESTABLISHED", "RELATED", "INVALID"])
        if v.back is None and want in ("ESTABLISHED", "RELATED"):
            want = "NEW"                       # nobody could open the connection
        v.shape = "lone"
        if want == "ESTABLISHED" and not multicast:
            v.shape = "est"
            if v.proto == 6 and not (v.flags & ACK and not v.flags & RST):
                v.flags = r.choice([SYN | ACK, ACK, PSH | ACK, FIN | ACK])
            elif v.proto == 1 and v.itype not in (0, 8, 13, 14):
                v.itype, v.icode = r.choice([(0, 0), (8, 0)])
        elif want == "RELATED" and not multicast:
            v.shape = "rel"
            v.proto = 1
            if v.itype not in ERR_TYPES:
                v.itype, v.icode = r.choice([(3, 3), (3, 1), (11, 0), (3, 13)])
        elif want == "INVALID" and v.proto not in (6, 1):
            v.proto = r.choice([6, 1])
        if v.proto == 1 and v.shape == "est" and v.itype in (13, 14):
            v.icode = 0
        v.state = {"est": "ESTABLISHED", "rel": "RELATED"}.get(v.shape) or \
            lone_state(v.proto, v.flags, v.itype)
        if v.proto not in (6, 17):
            v.sport = v.dport = -1
        return v

    def solve(self, key, base, constraints, reach=None, tries=1000):
        """A view that satisfies the constraints; with reach, preferably one
        that earlier rules let through to that rule (as the simulation of
        the chains says)."""
        r = random.Random(f"{self.seed}/{key}")
        h = self.hints([c for c, _ in constraints])
        first = None
        for i in range(tries):
            v = self.draw(r, base, h)
            if all(holds(c, v) == want for c, want in constraints):
                if reach is None or reach in trace(self.rs, v):
                    return v
                first = first or v
                if i > tries // 2:
                    break
        return first

    def cases(self):
        """[(title, rule, View)] for every rule, context and match."""
        out = []
        ctx = self.rs.contexts()
        for chain, rules in self.rs.chains.items():
            for base, path in ctx.get(chain, []):
                pre = [(c, True) for jr in path for c in jr.clauses]
                via = "".join(f"{jr.chain}#{jr.num}>" for jr in path)
                for rule in rules:
                    own = [c for c in rule.clauses
                           if c.kind not in ("comment", "limit", "recent")]
                    todo = [("match", [(c, True) for c in own])]
                    for c in own:
                        # without its protocol, a rule's ports, flags and
                        # ICMP type cannot match: leave them out then
                        todo.append((f"not [{c.text}]",
                                     [(d, d is not c) for d in own
                                      if not (c.kind == "proto" and d.kind in PROTO_DEP)]))
                    for what, cons in todo:
                        title = f"{base}: {via}{chain}#{rule.num} {what}"
                        v = self.solve(title, base, pre + cons,
                                       rule if what == "match" else None)
                        if v is None:
                            self.unsolved.append(title)
                        else:
                            out.append((title, rule, v))
            if chain in self.rs.policy:
                # packets of every kind, whatever rule (or the policy) takes them
                for i in range(8):
                    title = f"{chain}: any packet #{i + 1}"
                    out.append((title, None, self.solve(title, chain, [])))
        return out


class Alloc:
    """Ports, ICMP ids, sequence numbers and nonces, unique in a run."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.p = EPH_LO
        self.icmp_id = 0
        self.nonce = 0

    def port(self):
        self.p = self.p + 1 if self.p + 1 < EPH_HI else EPH_LO
        return self.p

    def ident(self):
        self.icmp_id = self.icmp_id % 65535 + 1
        return self.icmp_id

    def data(self, n=8):
        self.nonce += 1
        return b"\0\0\0\0" + struct.pack("!I", self.nonce) + b"\0" * (n - 8)


def fnames(f):
    return "".join(n for b, n in ((SYN, "S"), (FIN, "F"), (RST, "R"), (PSH, "P"),
                                  (ACK, "A"), (URG, "U")) if f & b) or "none"


def realize(v, alloc):
    """The packets of a view: [opening packets..., the packet itself]."""
    src, dst = nl.i2a(v.src), nl.i2a(v.dst)
    sp = v.sport if v.sport >= 0 else alloc.port()
    dp = v.dport if v.dport >= 0 else alloc.port()
    S, R = v.sender, v.receiver
    B = v.back or S             # where packets to src go
    out = []

    def pkt(fwd, proto, l4, what):
        a, b = (src, dst) if fwd else (dst, src)
        p = CPkt(S if fwd else R, R if fwd else B, a, b, proto, l4, f"{a} -> {b} {what}")
        p.l2mac = None
        out.append(p)
        return p

    def tcp(fwd, seq, ack, flags, data=b""):
        a, b = (src, dst) if fwd else (dst, src)
        ps, pd = (sp, dp) if fwd else (dp, sp)
        return pkt(fwd, 6, tcp_seg(a, b, ps, pd, seq, ack, flags, data),
                   f"tcp {ps}->{pd} [{fnames(flags)}] seq={seq} ack={ack}")

    def udp(fwd, ps=None, pd=None):
        a, b = (src, dst) if fwd else (dst, src)
        ps = ps if ps is not None else (sp if fwd else dp)
        pd = pd if pd is not None else (dp if fwd else sp)
        return pkt(fwd, 17, udp_dgram(a, b, ps, pd, alloc.data()), f"udp {ps}->{pd}")

    def icmp(fwd, t, c, rest, data, what):
        return pkt(fwd, 1, icmp_msg(t, c, rest, data), f"icmp {t}/{c} {what}")

    r = alloc.r
    if v.proto == 6:
        s, q = r.getrandbits(32), r.getrandbits(32)
        f = v.flags
        data = alloc.data() if f & PSH else b""
        if v.shape == "lone":
            tcp(True, s, q if f & ACK else 0, f, data)
        elif f & SYN:                           # the SYN-ACK answering the other side
            tcp(False, q, 0, SYN)
            tcp(True, s, q + 1, f, data)
        else:                                   # the third packet of a handshake
            tcp(True, s, 0, SYN)
            tcp(False, q, s + 1, SYN | ACK)
            tcp(True, s + 1, q + 1, f, data)
    elif v.proto == 17:
        if v.shape == "est":
            udp(False)
        udp(True)
    elif v.proto == 1:
        ident = alloc.ident()
        rest = struct.pack("!HH", ident, 1)
        if v.shape == "rel" or (v.shape == "lone" and v.itype in ERR_TYPES):
            # an error about a datagram the other side sent (sent first for
            # RELATED, never sent for a lone error)
            qs, qd = alloc.port(), alloc.port()
            q = udp_dgram(dst, src, qs, qd, alloc.data())
            if v.shape == "rel":
                udp(False, qs, qd)
            quote = ip_hdr(dst, src, 17, len(q), 0x4242) + q[:8]
            icmp(True, v.itype, v.icode, b"\0\0\0\0", quote,
                 f"quoting udp {dst}:{qs} -> {src}:{qd}")
        elif v.shape == "est" and v.itype in (0, 14):
            icmp(False, v.itype + 8 if v.itype == 0 else 13, 0, rest, alloc.data(12),
                 "request")
            icmp(True, v.itype, 0, rest, alloc.data(12), "reply")
        elif v.shape == "est":                  # a second request after a reply
            icmp(True, v.itype, 0, rest, alloc.data(12), "request 1")
            icmp(False, 0 if v.itype == 8 else 14, 0, rest, alloc.data(12), "reply 1")
            icmp(True, v.itype, 0, struct.pack("!HH", ident, 2), alloc.data(12),
                 "request 2")
        else:
            icmp(True, v.itype, v.icode, rest, alloc.data(), f"id={ident}")
    else:
        if v.shape == "est":
            pkt(False, v.proto, alloc.data(), f"proto {v.proto}")
        pkt(True, v.proto, alloc.data(), f"proto {v.proto}")
    if v.mac != v.natmac:
        out[-1].l2mac = v.mac
    return out


def view_desc(v):
    where = {"INPUT": f"in {v.iif}", "FORWARD": f"in {v.iif} out {v.oif}",
             "OUTPUT": f"out {v.oif}"}[v.chain]
    s = f"{v.chain} {where}, {v.sender} -> {v.receiver}, state {v.state}"
    return s


# ---------------------------------------------------------------------------
# What arrives: our packets, and what came back for them
# ---------------------------------------------------------------------------

def classify(data):
    """Keys of a received packet: ("pkt", key) for one of ours (ct_diff's key:
    protocol, addresses, IP id, first 8 bytes of L4), plus ("icmp", ...) for
    an ICMP error (with the key of the packet it quotes), ("rst", ...) for a
    TCP RST, ("echo", ...) for an echo reply; each with the packet's own key,
    so that replies we crafted ourselves can be told apart."""
    k = ct_key(data)
    if k is None:
        return None
    keys = [("pkt", k)]
    hl = (data[0] & 15) * 4
    src = nl.i2a(struct.unpack("!I", data[12:16])[0])
    dst = nl.i2a(struct.unpack("!I", data[16:20])[0])
    l4 = data[hl:]
    if data[9] == 1 and len(l4) >= 8:
        t, c = l4[0], l4[1]
        if t in ERR_TYPES:
            inner = ct_key(l4[8:])
            if inner:
                keys.append(("icmp", inner, t, c, src, k))
        elif t == 0:
            ident, seq = struct.unpack("!HH", l4[4:8])
            keys.append(("echo", (src, dst, ident, seq), k))
    elif data[9] == 6 and len(l4) >= 20 and l4[13] & RST:
        sp, dp, seq, ack = struct.unpack("!HHII", l4[:12])
        keys.append(("rst", (src, dst, sp, dp, seq, ack if l4[13] & ACK else 0), k))
    return keys


def expected_rst(p):
    """The RST that answers TCP segment p (nf_send_reset / tcp_v4_send_reset)."""
    sp, dp, seq, ack = struct.unpack("!HHII", p.l4[:12])
    flags = p.l4[13]
    if flags & RST:
        return None
    if flags & ACK:
        return (p.dst, p.src, dp, sp, ack, 0)
    n = len(p.l4) - (p.l4[12] >> 4) * 4 + bool(flags & SYN) + bool(flags & FIN)
    return (p.dst, p.src, dp, sp, 0, (seq + n) & 0xffffffff)


def expected_echo(p):
    if p.proto == 1 and p.l4[0] == 8:
        ident, seq = struct.unpack("!HH", p.l4[4:8])
        return (p.dst, p.src, ident, seq)
    return None


class Fate:
    """What became of a packet in one twin."""

    def __init__(self, delivered, back, err):
        self.delivered, self.back, self.err = delivered, back, err

    def same(self, o):
        return self.delivered == o.delivered and self.back == o.back

    def __str__(self):
        s = "delivered" if self.delivered else "DROPPED"
        if self.err:
            s += f" (sendto: {nl.errname(self.err)})"
        if self.back:
            s += "; back: " + ", ".join(sorted(
                f"icmp {b[1]}/{b[2]} from {b[3]}" if b[0] == "icmp" else b[0]
                for b in self.back))
        return s


# ---------------------------------------------------------------------------
# The twins of one site
# ---------------------------------------------------------------------------

class Bench:
    """Both twins of a site, loading, sending, conversations, counters."""

    def __init__(self, site, bindir, oracle, args):
        self.site, self.args, self.oracle = site, args, oracle
        protos = nl.RECV_PROTOS + (50,)        # and ESP
        self.a = nl.Star("rs", "a", site.links, protos)
        self.b = nl.Star("rs", "b", site.links, protos)
        self.fw = Firewalls(bindir, "xdp", args.timeout, args.quiet, oracle,
                            twins=(self.a, self.b))
        self.bindir = bindir
        self.next_id = 1
        self.text = None
        self.mode = None

    def build(self):
        self.fw.build()
        peers = [lk.role for lk in self.site.links]
        Harness(self.fw, 0, 0).setup(roles=peers)
        for t in (self.a, self.b):
            for g in self.site.joins:           # the firewall's multicast groups
                for lk in {lk.ifname: lk for lk in self.site.links}.values():
                    t.recv_socks["fw"][0].setsockopt(
                        socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                        socket.inet_aton(g) + socket.inet_aton(lk.fw_ip()))

    def destroy(self):
        self.a.destroy()
        self.b.destroy()

    def load(self, text, mode):
        self.text, self.mode = text, mode
        return self.fw.load("fw", text, mode)

    def reload(self):
        rc_a, err_a, rc_b, err_b = self.fw.load("fw", self.text, self.mode)
        if rc_a or rc_b:
            raise nl.CmdError(f"reloading failed: {err_a} / {err_b}")

    def flush_conntrack(self):
        for t in (self.a, self.b):
            if t is self.a or self.oracle:
                nl.run(t.exec_argv("fw", ["conntrack", "-F"]), check=False)
            else:
                nl.run(t.exec_argv("fw", [os.path.join(self.bindir, "bpf-conntrack"),
                                          "-F"]), env=self.fw.env_b["fw"])

    def counters(self):
        """(chain, rule number) -> packets, in twin A."""
        p = nl.run(self.a.exec_argv("fw", ["iptables-legacy-save", "-c"]),
                   env=self.fw.env_a[("a", "fw")])
        out, num = {}, {}
        for ln in p.stdout.decode().splitlines():
            if ln.startswith("[") and " -A " in ln:
                cnt, rest = ln.split("] ", 1)
                chain = rest.split()[1]
                num[chain] = num.get(chain, 0) + 1
                out[(chain, num[chain])] = int(cnt[1:].split(":")[0])
        return out

    # -- packets -----------------------------------------------------------

    def _send(self, t, p):
        # a raw IP_HDRINCL socket routes without the header's source, so an
        # address that sits on a macvlan of its own (Link.macs) is sent in a
        # frame with its MAC, as its own stack would send it
        lk = self.site.by_role.get(p.sender)
        mac = p.l2mac or (lk.mac_of(p.src) if lk else None)
        try:
            if lk and mac != lk.mac:
                t.send_frame(p.sender, mac, p.wire())
            else:
                t.send_sock[p.sender].sendto(p.wire(), (p.dst, 0))
        except OSError as e:
            return e.errno
        return None

    def exchange(self, seqs, timeout=None, quiet=None):
        """Send packet sequences through both twins, step k of every sequence
        together.  Returns per sequence [(Fate A, Fate B) per packet]."""
        timeout = self.args.timeout if timeout is None else timeout
        quiet = self.args.quiet if quiet is None else quiet
        res = [[] for _ in seqs]
        for step in range(max((len(s) for s in seqs), default=0)):
            batch = [(i, s[step]) for i, s in enumerate(seqs) if step < len(s)]
            nl.drain(self.fw.socks)
            errs = []
            for _, p in batch:
                p.ipid = self.next_id
                self.next_id = self.next_id % 65535 + 1
                errs.append((self._send(self.a, p), self._send(self.b, p)))
            got = nl.collect(self.fw.socks, self.fw.owner, timeout, quiet, key=classify)
            # per twin: our packets that arrived (and where); per twin and
            # namespace: what came back (what the sender of a packet sees)
            ours = {p.key() for _, p in batch}
            seen = {}
            empty = {"pkt": set(), "icmp": {}, "rst": set(), "echo": set()}
            for (label, role), keys in got.items():
                d = seen.setdefault(label, {"pkt": set()})
                r = seen.setdefault((label, role), {"icmp": {}, "rst": set(), "echo": set()})
                for k in keys:
                    if k[0] == "pkt":
                        d["pkt"].add((role, k[1]))
                    elif k[-1] in ours:
                        continue                 # one of our own packets
                    elif k[0] == "icmp":
                        r["icmp"].setdefault(k[1], set()).add(("icmp", k[2], k[3], k[4]))
                    else:
                        r[k[0]].add(k[1])
            for (i, p), (ea, eb) in zip(batch, errs):
                fates = []
                for label, err in (("a", ea), ("b", eb)):
                    d = seen.get(label, empty)
                    s = seen.get((label, p.sender), empty)
                    back = set(s["icmp"].get(p.key(), ()))
                    rst = expected_rst(p) if p.proto == 6 else None
                    if rst in s["rst"]:
                        back.add(("rst",))
                    echo = expected_echo(p)
                    if echo in s["echo"]:
                        back.add(("echo-reply",))
                    fates.append(Fate((p.receiver, p.key()) in d["pkt"],
                                      frozenset(back), err))
                res[i].append(tuple(fates))
        return res

    # -- real sockets ------------------------------------------------------

    def converse(self, convs, timeout=1.2):
        """Run the conversations in both twins at once. [(outcome A, B)]."""
        sel = selectors.DefaultSelector()
        servers, socks = {}, []
        state = {}                         # client socket -> [twin, index, msg]
        outcome = {}

        def mk(t, role, proto):
            with nl.netns(t.ns[role]):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp"
                                  else socket.SOCK_DGRAM)
            if role != "fw":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, MARK)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setblocking(False)
            socks.append(s)
            return s

        try:
            for t in (self.a, self.b):
                for i, c in enumerate(convs):
                    key = (t.label, c.srv, c.srv_addr, c.port, c.proto)
                    if key not in servers:
                        s = mk(t, c.srv, c.proto)
                        s.bind((c.srv_addr, c.port))
                        if c.proto == "tcp":
                            s.listen(64)
                        servers[key] = s
                        sel.register(s, selectors.EVENT_READ, ("server", c.proto))
                    s = mk(t, c.cli, c.proto)
                    s.bind((c.cli_addr, c.cport))
                    msg = f"hello {t.label} {i}".encode()
                    state[s] = [t.label, i, msg]
                    if c.proto == "tcp":
                        s.connect_ex((c.srv_addr, c.port))
                        sel.register(s, selectors.EVENT_WRITE, ("client", "tcp"))
                    else:
                        s.connect((c.srv_addr, c.port))
                        s.send(msg)
                        sel.register(s, selectors.EVENT_READ, ("client", "udp"))
            end = time.monotonic() + timeout

            def settled():
                return len(outcome) == len(state) and \
                    "connected, no echo" not in outcome.values()

            while not settled() and time.monotonic() < end:
                for key, ev in sel.select(max(0.0, end - time.monotonic())):
                    s, (what, proto) = key.fileobj, key.data
                    try:
                        if what == "server" and proto == "tcp":
                            conn, _ = s.accept()
                            conn.setblocking(False)
                            socks.append(conn)
                            sel.register(conn, selectors.EVENT_READ, ("echo", "tcp"))
                        elif what == "server":
                            data, peer = s.recvfrom(2048)
                            s.sendto(data, peer)
                        elif what == "echo":
                            data = s.recv(2048)
                            if data:
                                s.send(data)
                            else:
                                sel.unregister(s)
                        elif ev & selectors.EVENT_WRITE:
                            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                            if err:
                                raise OSError(err, os.strerror(err))
                            s.send(state[s][2])
                            sel.modify(s, selectors.EVENT_READ, ("client", proto))
                            outcome[s] = "connected, no echo"
                        else:
                            data = s.recv(2048)
                            outcome[s] = "echoed" if data == state[s][2] else \
                                f"got {data!r}"
                            sel.unregister(s)
                    except OSError as e:
                        if what == "client":
                            outcome[s] = errno.errorcode.get(e.errno, str(e.errno))
                            sel.unregister(s)
                        elif what == "echo":
                            sel.unregister(s)
            res = {}
            for s, (label, i, _) in state.items():
                res[(label, i)] = outcome.get(s, "timeout")
            return [(res[("a", i)], res[("b", i)]) for i in range(len(convs))]
        finally:
            sel.close()
            for s in socks:
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                 struct.pack("ii", 1, 0))
                except OSError:
                    pass
                s.close()


# ---------------------------------------------------------------------------
# One ruleset in one ingress mode
# ---------------------------------------------------------------------------

def reverse_view(v, site):
    """The packet that goes the other way (an opening packet)."""
    w = v.copy(src=v.dst, dst=v.src, sport=v.dport, dport=v.sport, sender=v.receiver,
               receiver=v.back or v.sender, state="NEW", shape="lone", mac=None, flags=SYN,
               itype=8, icode=0)
    w.iif = "lo" if w.sender == "fw" and w.receiver == "fw" else \
        ("" if w.sender == "fw" else site.by_role[w.sender].ifname)
    w.oif = "lo" if w.sender == "fw" and w.receiver == "fw" else \
        ("" if w.receiver == "fw" else site.by_role[w.receiver].ifname)
    w.chain = "INPUT" if w.receiver == "fw" and w.sender != "fw" else \
        ("OUTPUT" if w.sender == "fw" else "FORWARD")
    if v.shape == "rel":
        w.proto = 17
    return w


# KNOWN DIFFERENCE (a data plane bug, reported; dataplane/ is not ours to
# change here).  iptables sends REJECT's reply (TCP RST, ICMP error) through
# the OUTPUT chain of the firewall, like any locally generated packet;
# bpf-iptables sends it from the data plane without looking at OUTPUT.  So
# when OUTPUT drops the reply, iptables' sender sees nothing and
# bpf-iptables' gets the reply.  (For a REJECT in OUTPUT the reply goes to
# the firewall itself: with tc ingress INPUT then judges it - and drops it
# in ipt-save-filter, hiding the difference -, with XDP it is not judged.)  In ipt-save-filter that is every REJECT of
# an INVALID packet (the RST about it is INVALID too: OUTPUT -> block ->
# reject_log -> REJECT, i.e. dropped).  Minimal reproducer: `:OUTPUT DROP`,
# `-A INPUT -p tcp --dport 7777 -j REJECT --reject-with tcp-reset`, connect to
# 7777: iptables-legacy times out, bpf-iptables gives ECONNREFUSED.
# Recognised only when all of this holds: both twins dropped the packet,
# twin B saw reject replies that twin A did not (and nothing else differs),
# and for some conntrack state of the packet the ruleset's verdict is REJECT
# and the reply, as iptables would see it in OUTPUT (RELATED to the packet,
# INVALID if the packet was), is dropped or rejected there.
def view_of_packet(p, site, state):
    """A crafted packet as the rules see it."""
    lk = site.by_role.get(p.sender)
    v = View(sender=p.sender, receiver=p.receiver, src=nl.a2i(p.src), dst=nl.a2i(p.dst),
             proto=p.proto, sport=-1, dport=-1, flags=0, itype=None, icode=None,
             state=state, shape="lone",
             mac=(p.l2mac or lk.mac_of(p.src)) if lk else None)
    if p.proto in (6, 17):
        v.sport, v.dport = struct.unpack("!HH", p.l4[:4])
    if p.proto == 6:
        v.flags = p.l4[13]
    if p.proto == 1:
        v.itype, v.icode = p.l4[0], p.l4[1]
    fw_in = p.sender != "fw"
    v.iif = site.by_role[p.sender].ifname if fw_in else ("lo" if p.receiver == "fw" else "")
    v.oif = "" if p.receiver == "fw" and fw_in else \
        ("lo" if p.receiver == "fw" else site.by_role[p.receiver].ifname)
    v.chain = "INPUT" if p.receiver == "fw" and fw_in else \
        ("OUTPUT" if not fw_in else "FORWARD")
    return v


def step_state(v, k, n, fates_a):
    """The conntrack state iptables most likely gave packet k of n of a view's
    sequence: the view's for the last one if everything before it got
    through in twin A, else that of a packet on its own; NEW for an opening
    packet."""
    if k == n - 1 and all(fa.delivered for fa, _ in fates_a[:k]):
        return v.state
    return "NEW" if k == 0 else "INVALID" if v.proto == 6 else "NEW"


def reject_reply_dropped_by_output(rs, site, p, state, fa, fb):
    if fa.delivered or fb.delivered or fa.back - fb.back:
        return False
    extra = fb.back - fa.back
    if not extra or any(b[0] not in ("rst", "icmp") for b in extra):
        return False
    # the state iptables gave the packet is not known for sure (the
    # firewall's own stack may have answered an earlier packet of the
    # sequence): the likely one first, then any other
    for st in [state] + [x for x in STATES if x != state]:
        v = view_of_packet(p, site, st)
        if trace(rs, chain_views(v)[-1], verdict=True)[1] != "REJECT":
            continue
        to = p.sender                   # the replies this test looks at
        oif = "lo" if to == "fw" else site.by_role[to].ifname
        rst = any(b[0] == "rst" for b in extra)
        reply = View(chain="OUTPUT", iif="", oif=oif, src=v.dst, dst=v.src,
                     proto=6 if rst else 1, sport=v.dport, dport=v.sport,
                     flags=RST | ACK, itype=3, icode=3, mac=None, sender="fw",
                     receiver=to, shape="lone",
                     state="INVALID" if st == "INVALID" else "RELATED")
        if trace(rs, reply, verdict=True)[1] in ("DROP", "REJECT"):
            return True
    return False


# KNOWN DIFFERENCE (a limit of the design, reported): with br_netfilter
# (bridge-nf-call-iptables=1, the kernel's default once the module is in, and
# what Docker relies on) iptables filters and tracks the IPv4 packets a
# bridge forwards between its ports in FORWARD (-i docker0 -o docker0);
# bpf-iptables judges packets at the IP layer only, so it neither filters
# nor tracks them.  Minimal reproducer: two namespaces on ports of a bridge
# docker0, `-A FORWARD -i docker0 -o docker0 -p udp --dport 9 -j DROP`:
# iptables-legacy drops c1 -> c2 udp 9, bpf-iptables (tc) delivers it.
# Recognised when a case has a packet between two ports of one bridge.
def bridged(site, seq):
    return any(p.sender != "fw" and p.receiver != "fw" and
               site.by_role[p.sender].bridge and
               site.by_role[p.sender].ifname == site.by_role[p.receiver].ifname
               for p in seq)


def chain_views(v):
    """A fw -> fw packet goes through OUTPUT (out lo), then INPUT (in lo)."""
    if v.sender == "fw" and v.receiver == "fw":
        return [v.copy(chain="OUTPUT", iif="", oif="lo"),
                v.copy(chain="INPUT", iif="lo", oif="")]
    return [v]


class Outcome:
    def __init__(self):
        self.packets = self.agreed = self.disagreed = self.confirmed = 0
        self.delivered = 0
        self.convs = self.conv_agreed = self.conv_confirmed = 0
        self.known = 0
        self.known_text = []
        self.refused = None
        self.kinds = set()
        self.failures = []
        self.notes = []


def run_mode(bench, site, rs, text, cases, mode, args, hits, log):
    out = Outcome()
    alloc = Alloc(f"{args.seed}/{site.name}/{mode}")
    head = f"{site.name} (bpf-iptables ingress {mode})"
    rc_a, err_a, rc_b, err_b = bench.load(text, mode)
    problem = load_problem(head, text, rc_a, err_a, rc_b, err_b,
                           "iptables-legacy-restore (oracle)" if args.oracle
                           else "bpf-iptables-restore")
    if problem:
        out.failures.append(problem)
        return out
    bench.flush_conntrack()

    def harvest():
        for k, n in bench.counters().items():
            hits[k] = hits.get(k, 0) + n

    # which cases a deciding -m limit may judge: groups under its burst
    plain, gated = [], {}
    for title, rule, v in cases:
        views = chain_views(v)
        if v.shape != "lone":
            views += chain_views(reverse_view(v, site))
        b = limit_gate(rs, views)
        if b:
            gated.setdefault(max(1, b - 1), []).append((title, v))
        else:
            plain.append((title, v))
    groups = [plain] if plain else []
    reload_before = [False] if plain else []
    for size, lst in sorted(gated.items()):
        for i in range(0, len(lst), size):
            groups.append(lst[i:i + size])
            reload_before.append(True)
    bursts = []
    for title, n, kw in site.bursts:
        v = View(**kw)
        v.src, v.dst = nl.a2i(v.src), nl.a2i(v.dst)
        v.sport = v.dport = -1
        v.flags, v.shape, v.mac = 0, "lone", None
        v.state = lone_state(v.proto, 0, v.itype)
        bursts.append([(f"burst: {title} ({k + 1} of {n})", v) for k in range(n)])

    def run_group(group, reload):
        if reload:
            harvest()
            bench.reload()
        seqs = [realize(v, alloc) for _, v in group]
        return seqs, bench.exchange(seqs)

    bad = []
    for group, reload in list(zip(groups, reload_before)) + [(b, True) for b in bursts]:
        seqs, res = run_group(group, reload)
        for (title, v), seq, r in zip(group, seqs, res):
            for p, (fa, fb) in zip(seq, r):
                out.packets += 1
                out.delivered += fa.delivered
                if fa.same(fb):
                    out.agreed += 1
                else:
                    out.disagreed += 1
            if args.dump:
                log(f"  {title}: {view_desc(v)}\n" + "".join(
                    f"    {'  ' if fa.same(fb) else '!!'} {p.sender}->{p.receiver} "
                    f"{p.desc}{' [src MAC ' + p.l2mac + ']' if p.l2mac else ''}\n"
                    f"         A: {fa}   B: {fb}\n" for p, (fa, fb) in zip(seq, r)))
            if any(not fa.same(fb) for fa, fb in r):
                bad.append((title, v, seq, r, reload, group in bursts))
    convs = site.convs
    conv_res = bench.converse(convs) if convs else []
    harvest()

    # replay what disagreed (fresh ports), a burst whole after a reload
    for title, v, seq, r, reload, is_burst in bad:
        if is_burst:
            continue
        seqs2, res2 = run_group([(title, v)], reload)
        r2 = res2[0]
        diff = [i for i, (fa, fb) in enumerate(r2) if not fa.same(fb)]
        if diff and all(reject_reply_dropped_by_output(
                rs, site, seqs2[0][i], step_state(v, i, len(r2), r2), *r2[i]) for i in diff):
            out.known += 1
            out.kinds.add("reject")
            for i in diff:
                out.known_text.append(
                    f"known difference: {head}: {title}: {seqs2[0][i].desc}: "
                    f"iptables-legacy {r2[i][0]}, bpf-iptables {r2[i][1]} (REJECT's "
                    f"reply dropped by iptables' OUTPUT)")
        elif diff and bridged(site, seqs2[0]):
            out.known += 1
            out.known_text.append(
                f"known difference: {head}: {title}: a bridged packet (br_netfilter): "
                + "; ".join(f"{seqs2[0][i].desc}: iptables-legacy {r2[i][0]}, "
                            f"bpf-iptables {r2[i][1]}" for i in diff))
            out.kinds.add("bridge")
        elif diff:
            out.confirmed += 1
            out.failures.append(failure_text(head, title, v, seq, r, seqs2[0], res2[0]))
        else:
            out.notes.append(f"note: {head}: {title}: disagreed once, agreed when "
                             f"sent again")
    for group in bursts:
        if any(b[0] == group[0][0] for b in bad):
            seqs2, res2 = run_group(group, True)
            diff = [(t, s, rr) for (t, _), s, rr in zip(group, seqs2, res2)
                    if any(not fa.same(fb) for fa, fb in rr)]
            if diff:
                out.confirmed += len(diff)
                for t, s, rr in diff:
                    out.failures.append(failure_text(head, t, group[0][1], s, rr, s, rr))
    for c, (oa, ob) in zip(convs, conv_res):
        out.convs += 1
        if args.dump:
            log(f"  connection {c.describe()}: A {oa}, B {ob}")
        if oa == ob:
            out.conv_agreed += 1
            continue
        (oa2, ob2), = bench.converse([c])
        if oa2 != ob2:
            out.conv_confirmed += 1
            out.failures.append(
                f"FAIL {head}: connection {c.describe()}\n"
                f"    iptables-legacy: {oa}, {'oracle' if args.oracle else 'bpf-iptables'}: "
                f"{ob} (again: {oa2} / {ob2})")
        else:
            out.notes.append(f"note: {head}: connection {c.describe()} disagreed once "
                             f"({oa} / {ob}), agreed when run again")
    return out


def failure_text(head, title, v, seq, r, seq2, r2):
    lines = [f"FAIL {head}: {title}", f"    {view_desc(v)}"]
    for name, s, rr in (("first", seq, r), ("again", seq2, r2)):
        lines.append(f"    {name}:")
        for p, (fa, fb) in zip(s, rr):
            mark = "  " if fa.same(fb) else "!!"
            mac = f" [src MAC {p.l2mac}]" if p.l2mac else ""
            lines.append(f"      {mark} {p.sender}->{p.receiver} {p.desc}{mac}\n"
                         f"           iptables-legacy: {fa}\n"
                         f"           twin B:          {fb}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Real-world rulesets: bpf-iptables vs iptables-legacy on packets "
                    "that exercise every rule, in twin topologies named after them.")
    ap.add_argument("--bin", metavar="DIR",
                    default=os.environ.get("BPF_IPTABLES_BIN", "build"))
    ap.add_argument("--only", action="append", choices=[s.name for s in SITES],
                    help="run only this ruleset (repeatable)")
    ap.add_argument("--ingress", choices=["both", "xdp", "tc"], default="both",
                    help="bpf-iptables' ingress hook (default both: XDP, then tc)")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--timeout", type=float, default=0.05,
                    help="seconds to wait after each step (longer while packets arrive)")
    ap.add_argument("--quiet", type=float, default=0.03)
    ap.add_argument("--oracle", action="store_true",
                    help="iptables-legacy in both twins (checks the harness; must pass)")
    ap.add_argument("--dump", action="store_true", help="print every packet and both fates")
    ap.add_argument("--print", metavar="RULESET", choices=[s.name for s in SITES],
                    help="print the ruleset's text and exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    def log(msg):
        print(msg, flush=True)

    if args.print:
        sys.stdout.write(next(s for s in SITES if s.name == args.print).text_fn())
        return 0
    bindir = os.path.abspath(args.bin)
    problems = preflight(bindir)
    if args.oracle:
        problems = [p for p in problems if "bpf-iptables" not in p]
    dumps = os.path.join(conformance_dir(), "dumps")
    for n in ("ipt-save-filter.txt", "wireless.txt", "policy-drop.txt"):
        if not os.path.isfile(os.path.join(dumps, n)):
            problems.append(f"conformance data missing: {os.path.join(dumps, n)} "
                            f"(set CONFORMANCE_DIR)")
    for tool in ("conntrack", "iptables-legacy-save"):
        if not any(os.access(os.path.join(d, tool), os.X_OK)
                   for d in os.environ.get("PATH", "").split(":") + ["/usr/sbin"]):
            problems.append(f"'{tool}' not found")
    if problems:
        for p in problems:
            log(f"rulesets_diff: FAILED: cannot run: {p}")
        log("0 passed, 1 failed")
        return 1

    t0 = time.monotonic()
    nl.install_cleanup()
    modes = ["xdp", "tc"] if args.ingress == "both" else [args.ingress]
    passed = failed = 0
    summary = []
    kinds = set()
    for site in SITES:
        if args.only and site.name not in args.only:
            continue
        ts = time.monotonic()
        text = site.text_fn()
        rs = Ruleset(text)
        for lo, hi in rs.ports_used():
            if lo < EPH_HI and hi >= EPH_LO:
                raise SystemExit(f"{site.name}: a rule looks at ports {lo}:{hi}, "
                                 f"which this test uses as ephemeral ports")
        gen = Generator(site, rs, args.seed)
        cases = gen.cases()
        bench = Bench(site, bindir, args.oracle, args)
        hits = {}
        try:
            bench.build()
            outs = [run_mode(bench, site, rs, text, cases, m, args, hits, log)
                    for m in modes]
        except (nl.CmdError, OSError) as e:
            log(f"FAIL {site.name}: {e}")
            failed += len(modes)
            continue
        finally:
            bench.destroy()
        for m, o in zip(modes, outs):
            kinds |= o.kinds
            for n in o.notes + (o.known_text if args.verbose else []):
                log(n)
            for f in o.failures:
                log(f)
            ok = not o.failures
            passed += ok
            failed += not ok
            if o.refused:
                summary.append(f"{site.name:16s} {m:4s} not run: known difference, "
                               f"bpf-iptables-restore fails: {o.refused}")
                continue
            summary.append(
                f"{site.name:16s} {m:4s} packets {o.packets:4d}: agreed {o.agreed:4d}, "
                f"disagreed {o.disagreed:3d} (confirmed {o.confirmed}, known difference "
                f"{o.known:2d}); connections "
                f"{o.convs:2d}: agreed {o.conv_agreed:2d} (confirmed differences "
                f"{o.conv_confirmed}); iptables-legacy delivered {o.delivered}"
                f"{'' if ok else '  FAILED'}")
        nrules = len(rs.rules())
        unhit = [r for r in rs.rules() if not hits.get((r.chain, r.num))]
        summary.append(f"{'':16s} rules hit in twin A: {nrules - len(unhit)} of {nrules}; "
                       f"cases {len(cases)}, matches not producible here "
                       f"{len(gen.unsolved)}; {time.monotonic() - ts:.1f} s")
        for r in unhit:
            summary.append(f"{'':16s}   never hit: {r.text}")
        if args.verbose:
            for u in gen.unsolved:
                summary.append(f"{'':16s}   not producible: {u}")
    legend = {"reject": "REJECT's reply, dropped by iptables' OUTPUT chain, is sent by "
                        "bpf-iptables",
              "bridge": "packets bridged between two ports of a bridge are not filtered "
                        "nor tracked by bpf-iptables (iptables sees them through "
                        "br_netfilter)"}
    for k in sorted(kinds):
        summary.append(f"known difference: {legend[k]} (rulesets_diff.py says why; -v "
                       f"lists the packets)")
    log("")
    log(f"===== rulesets_diff summary (twin B: "
        f"{'iptables-legacy, oracle' if args.oracle else 'bpf-iptables'}; "
        f"{time.monotonic() - t0:.1f} s) =====")
    for ln in summary:
        log(ln)
    log(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
