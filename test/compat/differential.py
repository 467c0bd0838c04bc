#!/usr/bin/env python3
"""Differential test: random iptables command lines, run on both the
iptables-legacy oracle (in a throw-away network namespace) and bpf-iptables
(with a private state directory, in its own namespace), compared after every
command.

A seeded generator produces a stateful session (user chains created earlier
are used later) over the features bpf-iptables supports, including ~20-30%
invalid command lines.  After each command we compare

  * the exit status (exact),
  * stdout (exact; matters for -L / -S / -v),
  * the first stderr line's text after its first ": " (message; a mismatch is
    a failure only with --strict-messages),
  * the full `-S` output of both,
  * and, when the IUT rejected the command, that its state directory is
    byte-for-byte unchanged.

Every --list-every commands (and at the end) the list formats are compared:
-L, -L -n, -L -n -v, -L -n -v -x --line-numbers, -L CHAIN, -S CHAIN, -S -v
and save -c (without '#' lines).

  differential.py --bin build/bpf-iptables          # oracle vs IUT
  differential.py --oracle                          # oracle vs oracle (must be 0 failures)
  differential.py --bin DIR --seed 7 --count 5000   # another / longer session

After any state difference both sides are resynchronised (the oracle's save
output restored into both; failing that the IUT's; failing that a fresh,
empty oracle/IUT pair) so one bug is reported once instead of cascading.
"""

import argparse
import os
import random
import shlex
import sys
import time
from collections import Counter

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "differential"
DEFAULT_SEED = 20240611
DEFAULT_COUNT = 1200

# --------------------------------------------------------------------------
# Known differences between the oracle (iptables-legacy 1.8.9) and the
# behaviour bpf-iptables follows (iptables 1.8.13, the conformance .t files).
# Each generated command carries tags naming the version-sensitive features it
# uses.  Handling per tag:
#   "rewrite":  the oracle runs an equivalent spelling that 1.8.9 parses
#               correctly; results must then be identical (no tolerance).
#   "tolerate": a mismatch on a command with this tag is listed as a known
#               version difference instead of a failure, and the IUT is
#               resynchronised from the oracle afterwards.
# --------------------------------------------------------------------------
KNOWN_VERSION_DIFFERENCES = {
    "glued": ("rewrite",
              "1.8.9 mis-parses a value glued to a core option or given "
              "with '=' for -p -s -d -i -o -j (-ptcp, -s1.2.3.4, "
              "--protocol=tcp, --jump=ACCEPT: rejected; -ieth0 even becomes "
              "the interface '-ieth0'); 1.8.13 parses them like the spaced "
              "form. The oracle is given the spaced form."),
    "negfull": ("tolerate",
                "'! --sport :' / '! --dport 0:65535' (tcp, udp): 1.8.9 "
                "silently drops the negated full range, 1.8.13 keeps it."),
    "revrange": ("tolerate",
                 "reversed ranges udp --sport/--dport 4:3 and --length 4:3: "
                 "accepted by 1.8.9, rejected by 1.8.13 (tcp 4:3 is "
                 "rejected by both)."),
    "icmp255": ("tolerate",
                "--icmp-type 255/CODE: 1.8.9 saves 'any', 1.8.13 saves it as "
                "written."),
    "ip6check": ("tolerate",
                 "ip6tables -C (--family 6 only): 1.8.9 compares the IP part "
                 "and the match/target names only, not their options (-A ... "
                 "--dport 1, then -C ... --dport 2 says the rule exists; -D "
                 "compares them); fixed after 1.8.9 (\"ip6tables: Fix checking "
                 "existence of rule\"). bpf-ip6tables compares everything."),
}

# Deliberate divergences of bpf-iptables from iptables: tag -> reason.
# Mismatches on commands carrying a listed tag are reported as known
# divergences, not failures.  Empty for now.  Tags the generator can emit for
# iptables quirks that an implementation might decide not to copy:
#   udpwrap  udp --sport/--dport 65536 or 99999: iptables-legacy 1.8.9
#            accepts them and stores the value modulo 65536 (--sport 0); the
#            upstream .t file keeps the "should fail" case commented out.
KNOWN_DIVERGENCES = {
    "udpwrap": "bpf-iptables rejects udp ports above 65535 as the tcp match does; "
               "iptables-legacy 1.8.9 stores them modulo 65536 (a silent misconfiguration)",
    "emptyname": "bpf-iptables refuses -E to an empty chain name (a chain nobody "
                 "can name again); iptables-legacy accepts it",
}

BUILTIN = ["INPUT", "FORWARD", "OUTPUT"]
USER_CHAIN_POOL = ["user1", "user2", "user3", "web_in", "LOG_DROP",
                   "chain-a", "c.1", "X", "input", "a" * 28]
BAD_CHAIN_NAMES = ["bad name", "ACCEPT", "DROP", "RETURN", "a" * 29,
                   "b" * 40, "-dash", "!bang", ""]
MISSING_CHAINS = ["NOPE", "nochain", "PREROUTING", "POSTROUTING"]

# /etc/services names (resolved per protocol: ssh is tcp-only, ntp udp-only)
SERVICES = {
    "tcp": ["ssh", "http", "https", "domain", "smtp", "telnet", "ftp", "www",
            "pop3", "imap2", "bgp", "openvpn"],
    "udp": ["domain", "ntp", "tftp", "snmp", "bootps", "isakmp", "https",
            "openvpn"],
}
ALL_SERVICES = sorted(set(SERVICES["tcp"]) | set(SERVICES["udp"]))
ICMP_NAMES = ["any", "echo-reply", "echo-request", "destination-unreachable",
              "network-unreachable", "host-unreachable",
              "protocol-unreachable", "port-unreachable",
              "fragmentation-needed", "source-route-failed",
              "network-unknown", "host-unknown", "network-prohibited",
              "host-prohibited", "TOS-network-unreachable",
              "TOS-host-unreachable", "communication-prohibited",
              "host-precedence-violation", "precedence-cutoff",
              "source-quench", "redirect", "network-redirect",
              "host-redirect", "TOS-network-redirect", "TOS-host-redirect",
              "router-advertisement", "router-solicitation",
              "time-exceeded", "ttl-zero-during-transit",
              "ttl-zero-during-reassembly", "parameter-problem",
              "ip-header-bad", "required-option-missing",
              "timestamp-request", "timestamp-reply", "address-mask-request",
              "address-mask-reply", "echo", "pong", "ping"]
CT_STATES = ["INVALID", "NEW", "ESTABLISHED", "RELATED", "UNTRACKED",
             "SNAT", "DNAT"]
STATE_STATES = ["INVALID", "NEW", "ESTABLISHED", "RELATED", "UNTRACKED"]
REJECT_WITH = ["icmp-net-unreachable", "icmp-host-unreachable",
               "icmp-port-unreachable", "icmp-proto-unreachable",
               "icmp-net-prohibited", "icmp-host-prohibited",
               "icmp-admin-prohibited", "net-unreach", "host-unreach",
               "port-unreach", "proto-unreach", "net-prohib", "host-prohib",
               "admin-prohib"]
LOG_LEVELS = ["0", "1", "2", "3", "4", "5", "6", "7", "emerg", "alert",
              "crit", "error", "warning", "notice", "info", "debug", "panic"]
TCP_FLAGS = ["FIN", "SYN", "RST", "PSH", "ACK", "URG"]
LIMIT_UNITS = ["sec", "second", "s", "min", "minute", "m", "hour", "h",
               "day", "d"]
COMMENTS = ["hello", "allow ssh", "x", "with \"quotes\"", "it's",
            "back\\slash", "tab\there", "Ünïcode", "semi;colon",
            "#hash", "a" * 255]
LOG_PREFIXES = ["test: ", "DROP ", "x", "[fw] ", "a b c", "quote\"d",
                "0123456789012345678901234567", "p" * 29, "q" * 40,
                "it's "]


class Cmd:
    """One generated command: argv for the IUT and for the oracle (they
    differ only for 'rewrite' tags), plus the tags it carries."""

    __slots__ = ("iut", "orc", "tags", "kind", "rule")

    def __init__(self, iut, orc, tags, kind, rule=None):
        self.iut, self.orc, self.tags, self.kind = iut, orc, tags, kind
        # (chain, iut spec tokens, oracle spec tokens) for -A/-I commands
        self.rule = rule

    def show(self, which="iut"):
        return shlex.join(["iptables"] + (self.iut if which == "iut"
                                          else self.orc))


class State:
    """Parsed `iptables -S` output of the oracle."""

    def __init__(self, text=""):
        self.user = []
        self.rules = {c: [] for c in BUILTIN}
        self.policy = {}
        for line in text.splitlines():
            parts = line.split(" ", 2)
            if len(parts) < 2:
                continue
            if parts[0] == "-N":
                self.user.append(parts[1])
                self.rules.setdefault(parts[1], [])
            elif parts[0] == "-P":
                self.policy[parts[1]] = parts[2] if len(parts) > 2 else ""
            elif parts[0] == "-A":
                self.rules.setdefault(parts[1], []).append(
                    parts[2] if len(parts) > 2 else "")

    def chains(self):
        return BUILTIN + self.user

    def total_rules(self):
        return sum(len(v) for v in self.rules.values())


class Spec:
    """A rule specification under construction: a list of parts, each part a
    pair (iut tokens, oracle tokens)."""

    def __init__(self):
        self.parts = []
        self.tags = set()

    def add(self, toks, orc=None, kind="other"):
        self.parts.append([list(toks), list(orc if orc is not None else toks),
                           kind])

    def tokens(self):
        iut, orc = [], []
        for a, b, _k in self.parts:
            iut += a
            orc += b
        return iut, orc


class Generator:
    icmp_proto = "icmp"          # what -p names for ICMP (IPv6: ipv6-icmp)
    reject_with = REJECT_WITH

    def __init__(self, rng):
        self.r = rng
        self.history = []  # rule specs (iut, orc, tags) that were accepted
        self.last_flush = 0

    # ---------------- small helpers ----------------
    def p(self, prob):
        return self.r.random() < prob

    def pick(self, seq):
        return self.r.choice(seq)

    def neg(self, prob=0.15):
        return ["!"] if self.p(prob) else []

    # ---------------- values ----------------
    def ip(self):
        r = self.r
        c = r.random()
        if c < 0.25:
            return f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(0, 255)}"
        if c < 0.45:
            return f"192.168.{r.randint(0, 255)}.{r.randint(0, 255)}"
        if c < 0.6:
            return f"{self.pick(['192.0.2', '198.51.100', '203.0.113'])}.{r.randint(0, 255)}"
        if c < 0.7:
            return self.pick(["0.0.0.0", "255.255.255.255", "127.0.0.1",
                              "1.2.3.4", "224.0.0.1", "169.254.1.1"])
        return ".".join(str(r.randint(0, 255)) for _ in range(4))

    def mask_dotted(self):
        if self.p(0.8):
            n = self.r.randint(0, 32)
            v = (0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF if n else 0
        else:
            v = self.r.getrandbits(32)  # non-contiguous masks are legal
        return ".".join(str((v >> s) & 0xFF) for s in (24, 16, 8, 0))

    def addr(self, allow_list=True):
        """Returns (value, invalid_intent)."""
        c = self.r.random()
        if c < 0.04:
            return self.pick(["1.2.3.256", "1.2.3.4/33", "1.2.3.4/-1",
                              "1.2..3", "1.2.3.4/", "::1", "300.1.1.1",
                              "1.2.3.4/255.255.255.256", "no.such.host.invalid",
                              "1.2.3.4,", ",1.2.3.4", "1.2.3.4/24/8"]), True
        if c < 0.07:
            return self.pick(["localhost", "10.1", "0/0", "127.1", "10/8",
                              "1.2.3", "0"]), False
        if c < 0.35:
            return self.ip(), False
        if c < 0.75:
            return f"{self.ip()}/{self.r.randint(0, 32)}", False
        if c < 0.85:
            return f"{self.ip()}/{self.mask_dotted()}", False
        if allow_list:
            n = self.r.randint(2, 3)
            return ",".join(self.pick([self.ip(), f"{self.ip()}/{self.r.randint(8, 32)}"])
                            for _ in range(n)), False
        return self.ip(), False

    def port(self, proto="tcp"):
        c = self.r.random()
        if c < 0.15:
            if proto in SERVICES and self.p(0.96):
                return self.pick(SERVICES[proto])
            if proto not in SERVICES and self.p(0.7):
                return str(self.r.randint(1, 1024))
            return self.pick(ALL_SERVICES)
        if c < 0.3:
            return str(self.pick([0, 1, 22, 53, 80, 443, 1023, 1024, 8080,
                                  65535]))
        return str(self.r.randint(0, 65535))

    def portnum(self, s):
        import socket
        if s.isdigit():
            return int(s)
        try:
            return socket.getservbyname(s)
        except OSError:
            return None

    def port_spec(self, tags, negated, proto):
        """A --sport/--dport value."""
        c = self.r.random()
        if c < 0.05:
            v = self.pick(["65536", "-1", "nosuchservice", "1:2:3", "a:b",
                           "99999", "1-2", "", " 80"])
            if proto == "udp" and v in ("65536", "99999"):
                tags.add("udpwrap")
            return v
        if c < 0.55:
            return self.port(proto)
        if c < 0.7:
            a, b = sorted([self.r.randint(0, 65535), self.r.randint(0, 65535)])
            if self.p(0.08):
                a, b = b + 1, a  # reversed
                if proto == "udp":
                    tags.add("revrange")
            val = f"{a}:{b}"
        elif c < 0.78:
            val = f"{self.port(proto)}:"
        elif c < 0.86:
            val = f":{self.port(proto)}"
        elif c < 0.9:
            val = ":"
        elif c < 0.95:
            val = self.pick(["0:65535", "0:", ":65535", "1:65535", "0:0",
                             "65535:65535", "5:5"])
        else:
            val = f"{self.port(proto)}:{self.pick(['', '65535', 'https'])}"
        if ":" in val:
            lo, hi = val.split(":", 1)
            lo_n = self.portnum(lo) if lo else 0
            hi_n = self.portnum(hi) if hi else 65535
            if negated and lo_n == 0 and hi_n == 65535:
                tags.add("negfull")
            # a range reversed through a service name ("44192:https")
            if (proto == "udp" and lo_n is not None and hi_n is not None
                    and lo_n > hi_n):
                tags.add("revrange")
        return val

    # ---------------- core option spelling ----------------
    CORE_LONG = {"-s": ["--source", "--src"], "-d": ["--destination", "--dst"],
                 "-p": ["--protocol", "--proto"],
                 "-i": ["--in-interface"], "-o": ["--out-interface"],
                 "-j": ["--jump"], "-g": ["--goto"], "-m": ["--match"],
                 "-f": ["--fragment"]}
    GLUE_BROKEN_IN_189 = {"-s", "-d", "-p", "-i", "-o", "-j"}

    def core(self, spec, opt, value=None, negate=False):
        """Emit a core option, randomly in short/long/glued/= spelling."""
        pre = ["!"] if negate else []
        if value is None:
            name = opt if self.p(0.8) else self.pick(self.CORE_LONG[opt])
            spec.add(pre + [name], kind=opt)
            return
        c = self.r.random()
        if c < 0.85:
            spec.add(pre + [opt, value], kind=opt)
        elif c < 0.93:
            spec.add(pre + [self.pick(self.CORE_LONG[opt]), value], kind=opt)
        elif c < 0.965 and value:
            long = self.CORE_LONG[opt][0]
            if opt in self.GLUE_BROKEN_IN_189:
                spec.add(pre + [f"{long}={value}"], pre + [long, value],
                         kind=opt)
                spec.tags.add("glued")
            else:
                spec.add(pre + [f"{long}={value}"], kind=opt)
        elif value and not value.startswith("-"):
            if opt in self.GLUE_BROKEN_IN_189:
                spec.add(pre + [f"{opt}{value}"], pre + [opt, value],
                         kind=opt)
                spec.tags.add("glued")
            else:
                spec.add(pre + [f"{opt}{value}"], kind=opt)
        else:
            spec.add(pre + [opt, value], kind=opt)

    # ---------------- matches ----------------
    def m_tcpudp(self, spec, proto, explicit):
        toks = ["-m", proto] if explicit else []
        opts = []
        if self.p(0.5):
            neg = self.p(0.15)
            name = self.pick(["--sport", "--sport", "--source-port"])
            opts.append((["!"] if neg else []) + [name, self.port_spec(
                spec.tags, neg, proto)])
        if self.p(0.6):
            neg = self.p(0.15)
            name = self.pick(["--dport", "--dport", "--destination-port"])
            opts.append((["!"] if neg else []) + [name, self.port_spec(
                spec.tags, neg, proto)])
        if proto == "tcp":
            c = self.r.random()
            if c < 0.15:
                opts.append(self.neg(0.2) + ["--syn"])
            elif c < 0.35:
                mask = self.flaglist()
                comp = self.flaglist(allow_none=True)
                opts.append(self.neg(0.15) + ["--tcp-flags", mask, comp])
            elif c < 0.38:
                opts.append(self.neg(0.2) + ["--tcp-option",
                                             str(self.r.randint(0, 255))])
            elif c < 0.40:
                opts.append(["--tcp-flags", self.pick(["FOO", "SYN,FOO", ""]),
                             "SYN"])
        if not explicit and not opts:
            opts.append(["--dport", self.port(proto)])
        self.r.shuffle(opts)
        for o in opts:
            toks += o
        spec.add(toks, kind="protomatch")

    def flaglist(self, allow_none=False):
        c = self.r.random()
        if c < 0.1:
            return "ALL"
        if allow_none and c < 0.2:
            return "NONE"
        n = self.r.randint(1, 4)
        return ",".join(self.r.sample(TCP_FLAGS, n))

    def m_icmp(self, spec, explicit):
        toks = ["-m", "icmp"] if explicit else []
        c = self.r.random()
        if c < 0.45:
            v = self.pick(ICMP_NAMES)
        elif c < 0.65:
            v = str(self.pick([0, 3, 5, 8, 11, 12, 13, 255,
                               self.r.randint(0, 255)]))
        elif c < 0.88:
            t = self.pick([3, 5, 11, 12, self.r.randint(0, 254)])
            v = f"{t}/{self.r.randint(0, 15)}"
        elif c < 0.92:
            v = f"255/{self.r.randint(0, 255)}"
            spec.tags.add("icmp255")
        else:
            v = self.pick(["foo", "256", "3/256", "-1", "3/", "/3",
                           "echo-request/0", ""])
        toks += self.neg(0.15) + ["--icmp-type", v]
        spec.add(toks, kind="protomatch")

    def m_multiport(self, spec, proto):
        opt = self.pick(["--sports", "--dports", "--ports", "--dports",
                         "--source-ports", "--destination-ports"])
        n = self.r.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 10, 12, 14, 15, 15]
                          if self.p(0.95) else [16, 20])
        entries, slots = [], 0
        while slots < n:
            if self.p(0.25) and slots + 2 <= max(n, 2):
                a, b = sorted([self.r.randint(0, 65535),
                               self.r.randint(0, 65535)])
                if self.p(0.05):
                    a, b = b + 1, a
                entries.append(f"{a}:{b}")
                slots += 2
            else:
                entries.append(self.port(proto))
                slots += 1
        if self.p(0.04):
            entries.append(self.pick(["65536", "nosuchservice", "-1"]))
        spec.add(["-m", "multiport"] + self.neg(0.15) + [opt, ",".join(entries)],
                 kind="match")

    def m_conntrack(self, spec):
        if self.p(0.05):
            v = self.pick(["wrong", "", "NEW,wrong", "new", "NEW,,ESTABLISHED"])
        else:
            v = ",".join(self.r.sample(CT_STATES, self.r.randint(1, 3)))
        spec.add(["-m", "conntrack"] + self.neg(0.15) + ["--ctstate", v],
                 kind="match")

    def m_state(self, spec):
        if self.p(0.06):
            v = self.pick(["wrong", "SNAT", "", "new"])
        else:
            v = ",".join(self.r.sample(STATE_STATES, self.r.randint(1, 3)))
        spec.add(["-m", "state"] + self.neg(0.15) + ["--state", v],
                 kind="match")

    def m_iprange(self, spec):
        toks = ["-m", "iprange"]
        for opt in self.r.sample(["--src-range", "--dst-range"],
                                 self.r.randint(1, 2)):
            if self.p(0.06):
                v = self.pick(["1.2.3.4-", "-1.2.3.4", "1.2.3.4-1.2.3.999",
                               "1.2.3.4/24-1.2.3.5", "x-y"])
            elif self.p(0.08):
                v = self.ip()
            else:
                a, b = self.ip(), self.ip()
                if self.p(0.9):
                    a, b = sorted([a, b], key=lambda s: tuple(
                        int(x) for x in s.split(".")))
                v = f"{a}-{b}"
            toks += self.neg(0.15) + [opt, v]
        spec.add(toks, kind="match")

    def m_comment(self, spec):
        if self.p(0.04):
            v = self.pick(["a" * 256, ""])
        else:
            v = self.pick(COMMENTS)
        spec.add(["-m", "comment", "--comment", v], kind="match")

    def m_limit(self, spec):
        toks = ["-m", "limit"]
        if self.p(0.85):
            c = self.r.random()
            if c < 0.05:
                v = self.pick(["0/sec", "abc", "1/fortnight", "-1/sec",
                               "1/", "/sec", "10000000/sec"])
            elif c < 0.15:
                v = str(self.r.randint(1, 100))
            else:
                v = f"{self.pick([1, 2, 3, 5, 7, 10, 25, 60, 61, 100, 1000, 3600, 86400, self.r.randint(1, 10000)])}/{self.pick(LIMIT_UNITS)}"
            toks += ["--limit", v]
        if self.p(0.4):
            toks += ["--limit-burst", str(self.pick(
                [1, 5, 10, 100, 10000, self.r.randint(1, 1000)])
                if self.p(0.95) else self.pick([0, -1, 10001, "x"]))]
        spec.add(toks, kind="match")

    def m_mark(self, spec):
        c = self.r.random()
        val = self.pick(["0", "1", "0x10", "0xff", "255", "0xfeedcafe",
                         "4294967295", str(self.r.getrandbits(32)),
                         hex(self.r.getrandbits(16))])
        if c < 0.05:
            v = self.pick(["4294967296", "-1", "x", "0x", "1/", "/1",
                           "0x1/0x1/0x1"])
        elif c < 0.5:
            v = f"{val}/{self.pick(['0xff', '0xffffffff', '0x0', '255', hex(self.r.getrandbits(32))])}"
        else:
            v = val
        spec.add(["-m", "mark"] + self.neg(0.15) + ["--mark", v], kind="match")

    def m_length(self, spec):
        c = self.r.random()
        if c < 0.05:
            v = self.pick(["65536", "-1", "0:65536", "x", "1:2:3"])
        elif c < 0.4:
            v = str(self.r.randint(0, 65535))
        elif c < 0.8:
            a, b = sorted([self.r.randint(0, 2000), self.r.randint(0, 65535)])
            if self.p(0.08):
                a, b = b + 1, a
                spec.tags.add("revrange")
            v = f"{a}:{b}"
        else:
            v = self.pick([":", ":100", "100:", "0:65535", "40:40"])
        spec.add(["-m", "length"] + self.neg(0.15) + ["--length", v],
                 kind="match")

    def m_mac(self, spec):
        if self.p(0.06):
            v = self.pick(["00:11:22:33:44", "00:11:22:33:44:55:66",
                           "zz:11:22:33:44:55", "0011.2233.4455", ""])
        else:
            v = ":".join(f"{self.r.randint(0, 255):02{self.pick(['x', 'X'])}}"
                         for _ in range(6))
        spec.add(["-m", "mac"] + self.neg(0.15) + ["--mac-source", v],
                 kind="match")

    # ---------------- targets ----------------
    def target(self, spec, st, chain, proto):
        c = self.r.random()
        if c < 0.08:
            return
        if c < 0.40:
            self.core(spec, "-j", self.pick(["ACCEPT", "DROP"]))
        elif c < 0.47:
            self.core(spec, "-j", "RETURN")
        elif c < 0.60:
            if st.user and self.p(0.95):
                tgt = self.pick(st.user)
            else:
                tgt = self.pick(["NOSUCHTARGET", "nochain", "accept"])
            self.core(spec, self.pick(["-j", "-j", "-g"]), tgt)
        elif c < 0.78:
            self.core(spec, "-j", "REJECT")
            if self.p(0.6):
                if proto == "tcp" and self.p(0.3) or self.p(0.02):
                    w = "tcp-reset"
                elif self.p(0.04):
                    w = self.pick(["foo", "echo-reply", ""])
                else:
                    w = self.pick(self.reject_with)
                spec.parts[-1][0] += ["--reject-with", w]
                spec.parts[-1][1] += ["--reject-with", w]
        elif c < 0.96:
            self.core(spec, "-j", "LOG")
            extra = []
            if self.p(0.5):
                extra += ["--log-prefix", self.pick(LOG_PREFIXES + [""])
                          if self.p(0.05) else self.pick(LOG_PREFIXES)]
            if self.p(0.4):
                extra += ["--log-level", self.pick(LOG_LEVELS)
                          if self.p(0.95) else self.pick(["8", "warn", "bad"])]
            for flag in ["--log-tcp-sequence", "--log-tcp-options",
                         "--log-ip-options", "--log-uid", "--log-macdecode"]:
                if self.p(0.12):
                    extra.append(flag)
            spec.parts[-1][0] += extra
            spec.parts[-1][1] += extra
        else:
            if self.p(0.5):
                self.core(spec, "-g", self.pick(["ACCEPT", "DROP", "RETURN"]))
            else:
                self.core(spec, "-j", self.pick(["accept", "LOG",
                                                 "REJECT", "NOSUCH"]))
                if self.p(0.5):
                    spec.parts[-1][0] += ["--reject-with", "tcp-reset"]
                    spec.parts[-1][1] += ["--reject-with", "tcp-reset"]

    # ---------------- a whole rule ----------------
    def rule(self, st, chain, allow_invalid=True):
        spec = Spec()
        r = self.r
        basics = []
        if self.p(0.3):
            a, _ = self.addr()
            basics.append(("-s", a, self.p(0.15) and "," not in a))
        if self.p(0.25):
            a, _ = self.addr()
            basics.append(("-d", a, self.p(0.15) and "," not in a))
        in_ok = chain != "OUTPUT"
        out_ok = chain != "INPUT"
        if self.p(0.25 if in_ok else 0.03):
            basics.append(("-i", self.iface(), self.p(0.15)))
        if self.p(0.25 if out_ok else 0.03):
            basics.append(("-o", self.iface(), self.p(0.15)))
        if self.p(0.05):
            basics.append(("-f", None, self.p(0.3)))

        # protocol and protocol matches
        c = r.random()
        proto = None
        if c < 0.30:
            proto = "tcp"
        elif c < 0.45:
            proto = "udp"
        elif c < 0.53:
            proto = self.icmp_proto
        elif c < 0.68:
            proto = self.pick(["all", "sctp", "udplite", "esp", "ah", "gre",
                               "0", "6", "17", "1", "47", "255", "TCP", "Udp"])
        elif c < 0.685:
            proto = self.pick(["foo", "256", "-1", ""])
        proto_neg = proto is not None and self.p(0.06)
        matches = []  # functions that add parts
        pname = {"6": "tcp", "17": "udp", "1": "icmp", "TCP": "tcp",
                 "Udp": "udp"}.get(proto, proto)
        implicit = False
        pm = 0.2 if proto_neg else 0.65  # '! -p tcp -m tcp': kernel EINVAL
        if pname in ("tcp", "udp") and self.p(pm):
            implicit = self.p(0.4)
            matches.append(lambda: self.m_tcpudp(spec, pname, not implicit))
        elif pname == self.icmp_proto and self.p(pm):
            implicit = self.p(0.4)
            matches.append(lambda: self.m_icmp(spec, not implicit))
        if pname in ("tcp", "udp", "sctp", "udplite") and self.p(pm / 2):
            matches.append(lambda: self.m_multiport(spec, pname))
        if proto is not None:
            basics.append(("-p", proto, proto_neg))
        mac_ok = chain in ("INPUT", "FORWARD")
        extras = [(0.12, self.m_conntrack), (0.07, self.m_state),
                  (0.07, self.m_iprange), (0.12, self.m_comment),
                  (0.10, self.m_limit), (0.08, self.m_mark),
                  (0.08, self.m_length), (0.06 if mac_ok else 0.015,
                                         self.m_mac)]
        for prob, fn in extras:
            if self.p(prob):
                matches.append(lambda fn=fn: fn(spec))
        r.shuffle(basics)
        late = []
        if basics and self.p(0.15):
            # core options may also follow the matches and the target
            k = r.randint(0, len(basics))
            basics, late = basics[:k], basics[k:]
        if implicit:
            # -p must come before the implicit protocol options
            basics = [b for b in basics + late if b[0] == "-p"] + \
                [b for b in basics if b[0] != "-p"]
            late = [b for b in late if b[0] != "-p"]
        for opt, val, ng in basics:
            self.core(spec, opt, val, ng)
        r.shuffle(matches)
        for fn in matches:
            fn()
        self.target(spec, st, chain, None if proto_neg else pname)
        for opt, val, ng in late:
            self.core(spec, opt, val, ng)
        if allow_invalid and self.p(0.06):
            self.mutate(spec)
        return spec

    def iface(self):
        c = self.r.random()
        if c < 0.6:
            return self.pick(["eth0", "eth1", "lo", "wlan0", "eth0.100",
                              "br-lan", "veth1", "wg0", "ppp0", "bond0.208"])
        if c < 0.8:
            return self.pick(["eth+", "ppp+", "+", "veth+", "gre-davo-+"])
        if c < 0.9:
            return self.pick(["abcdefghijklmno", "0123456789abcde"])
        return self.pick(["abcdefghijklmnop", "x" * 20, "", "eth 0",
                          "eth0+x", "a/b"])

    def mutate(self, spec):
        """Turn the rule into (most likely) an invalid one."""
        r = self.r
        c = r.random()
        parts = spec.parts
        if c < 0.12:
            spec.add([self.pick(["--foo", "--bogus-option", "-y", "--dport"])])
        elif c < 0.24:
            spec.add([self.pick(["-s", "-d", "-p", "-j", "-m", "-i", "-o",
                                 "-g", "--comment"])])
        elif c < 0.36:
            # drop a '-m NAME' so its options are unknown
            cand = [p for p in parts if "-m" in p[0] and len(p[0]) > 2]
            if cand:
                p = self.pick(cand)
                i = p[0].index("-m")
                del p[0][i:i + 2]
                i = p[1].index("-m")
                del p[1][i:i + 2]
            else:
                spec.add(["--ctstate", "NEW"])
        elif c < 0.46:
            # wrong order: move '-m NAME' after its options
            cand = [p for p in parts if p[0][:1] == ["-m"] and len(p[0]) > 2]
            if cand:
                p = self.pick(cand)
                p[0] = p[0][2:] + p[0][:2]
                p[1] = p[1][2:] + p[1][:2]
            else:
                spec.parts.insert(0, [["--dport", "22"], ["--dport", "22"],
                                      "x"])
                spec.add(["-p", "tcp"])
        elif c < 0.58:
            # duplicate a part
            if parts:
                p = self.pick(parts)
                spec.parts.append([list(p[0]), list(p[1]), p[2]])
            else:
                spec.add(["-s", "1.2.3.4", "-s", "5.6.7.8"])
        elif c < 0.66:
            if self.p(0.3):
                spec.parts.insert(0, [["!", "!"], ["!", "!"], "x"])
            else:
                spec.add(["!"] + self.pick(
                    [["-j", "ACCEPT"], ["-m", "comment", "--comment", "x"],
                     ["-g", "user1"]]))
        elif c < 0.74:
            spec.add(["-m", self.pick(["nosuchmatch", "TCP", "Comment"])])
        elif c < 0.82:
            spec.add(self.pick([["--reject-with", "icmp-net-unreachable"],
                                ["--log-prefix", "x"], ["--log-level", "1"],
                                ["--limit", "1/sec"], ["--mark", "1"],
                                ["--mac-source", "00:11:22:33:44:55"],
                                ["--src-range", "1.1.1.1-1.1.1.2"],
                                ["--icmp-type", "8"], ["--dports", "1,2"],
                                ["--syn"]]))
        elif c < 0.9:
            spec.add(["-j", "ACCEPT", "-j", "DROP"])
        else:
            spec.add(["-p", "tcp", "-m", "multiport"] if self.p(0.5)
                     else ["-m", "multiport", "--dports", "1,2"])
        spec.tags.add("mutated")

    # ---------------- commands ----------------
    def cmdopt(self, short, longs):
        return short if self.p(0.8) else self.pick(longs)

    def some_chain(self, st, existing_prob=0.97, builtin_bias=0.5):
        if self.p(existing_prob):
            if st.user and not self.p(builtin_bias):
                return self.pick(st.user)
            return self.pick(BUILTIN)
        return self.pick(MISSING_CHAINS)

    def chain_with_rules(self, st):
        full = [c for c in st.chains() if st.rules.get(c)]
        if full and self.p(0.9):
            return self.pick(full)
        return self.some_chain(st)

    def command(self, st, n):
        r = self.r
        c = r.random()
        tags = set()
        if st.total_rules() > 45 or (n - self.last_flush > 150):
            self.last_flush = n
            return [Cmd(["-F"], ["-F"], set(), "flush-all"),
                    Cmd(["-X"], ["-X"], set(), "delete-all")]

        def mk(iut, orc=None, kind="?", t=None, rule=None):
            orc = list(iut if orc is None else orc)
            iut = list(iut)
            if self.p(0.04):
                tbl = self.pick([["-t", "filter"], ["--table", "filter"],
                                 ["--table=filter"], ["-tfilter"],
                                 ["-t", "nosuchtable"]])
                if self.p(0.5):
                    iut, orc = tbl + iut, tbl + orc
                else:
                    iut, orc = iut + tbl, orc + tbl
            if kind not in ("list", "list-rules", "misc") and self.p(0.03):
                # -v makes -A/-I/-D/-R/-C print the rule, -F/-X/-Z print
                # "Flushing chain `X'" etc.
                if self.p(0.5):
                    iut, orc = ["-v"] + iut, ["-v"] + orc
                else:
                    iut, orc = iut + ["-v"], orc + ["-v"]
            return [Cmd(iut, orc, set(t if t is not None else tags), kind,
                        rule)]

        if c < 0.30:   # append
            chain = self.some_chain(st)
            spec = self.rule(st, chain)
            iut, orc = spec.tokens()
            opt = self.cmdopt("-A", ["--append"])
            return mk([opt, chain] + iut, [opt, chain] + orc, "append",
                      spec.tags, (chain, iut, orc))
        if c < 0.40:   # insert
            chain = self.some_chain(st)
            spec = self.rule(st, chain)
            iut, orc = spec.tokens()
            n_rules = len(st.rules.get(chain, []))
            num = []
            if self.p(0.6):
                num = [str(self.pick([1, 1, n_rules + 1, n_rules + 2,
                                      r.randint(1, n_rules + 1)]))]
                if self.p(0.04):
                    num = [self.pick(["0", "-1", "abc"])]
            opt = self.cmdopt("-I", ["--insert"])
            return mk([opt, chain] + num + iut, [opt, chain] + num + orc,
                      "insert", spec.tags, (chain, iut, orc))
        if c < 0.50:   # delete
            opt = self.cmdopt("-D", ["--delete"])
            chain = self.chain_with_rules(st)
            rules = st.rules.get(chain, [])
            if self.p(0.4):
                n_rules = len(rules)
                num = self.pick([1, n_rules, n_rules + 1,
                                 r.randint(1, max(1, n_rules))])
                if self.p(0.05):
                    num = self.pick(["0", "-1", "x"])
                return mk([opt, chain, str(num)], kind="delete-num")
            if rules and self.p(0.65):
                text = self.pick(rules)
                try:
                    toks = shlex.split(text)
                except ValueError:
                    toks = text.split()
                return mk([opt, chain] + toks, kind="delete-saved")
            if self.history and self.p(0.4):
                hchain, iut, orc, htags = self.pick(self.history)
                return mk([opt, hchain] + iut, [opt, hchain] + orc,
                          "delete-hist", htags)
            spec = self.rule(st, chain)
            iut, orc = spec.tokens()
            return mk([opt, chain] + iut, [opt, chain] + orc, "delete-spec",
                      spec.tags)
        if c < 0.55:   # replace
            chain = self.chain_with_rules(st)
            spec = self.rule(st, chain)
            iut, orc = spec.tokens()
            n_rules = len(st.rules.get(chain, []))
            num = str(self.pick([1, n_rules, r.randint(1, max(1, n_rules)),
                                 r.randint(1, max(1, n_rules)),
                                 n_rules + 1]))
            if self.p(0.04):
                num = self.pick(["0", "abc"])
            opt = self.cmdopt("-R", ["--replace"])
            return mk([opt, chain, num] + iut, [opt, chain, num] + orc,
                      "replace", spec.tags)
        if c < 0.60:   # check
            opt = self.cmdopt("-C", ["--check"])
            chain = self.chain_with_rules(st)
            rules = st.rules.get(chain, [])
            if rules and self.p(0.6):
                text = self.pick(rules)
                try:
                    toks = shlex.split(text)
                except ValueError:
                    toks = text.split()
                return mk([opt, chain] + toks, kind="check-saved")
            spec = self.rule(st, chain)
            iut, orc = spec.tokens()
            return mk([opt, chain] + iut, [opt, chain] + orc, "check",
                      spec.tags)
        if c < 0.67:   # new chain
            opt = self.cmdopt("-N", ["--new-chain", "--new"])
            fresh = [u for u in USER_CHAIN_POOL if u not in st.user]
            if fresh and self.p(0.75):
                name = self.pick(fresh)
            elif self.p(0.3):
                name = self.pick(USER_CHAIN_POOL)
            else:
                name = self.pick(BAD_CHAIN_NAMES + BUILTIN)
            return mk([opt, name], kind="new-chain")
        if c < 0.71:   # delete chain
            opt = self.cmdopt("-X", ["--delete-chain"])
            x = r.random()
            if x < 0.7 and st.user:
                # prefer empty, unreferenced chains
                empty = [u for u in st.user if not st.rules.get(u)]
                name = self.pick(empty) if empty and self.p(0.7) \
                    else self.pick(st.user)
                return mk([opt, name], kind="delete-chain")
            if x < 0.85:
                return mk([opt, self.pick(BUILTIN + MISSING_CHAINS)],
                          kind="delete-chain")
            return mk([opt], kind="delete-chain-all")
        if c < 0.74:   # rename
            opt = self.cmdopt("-E", ["--rename-chain"])
            old = self.pick(st.user) if st.user and self.p(0.8) \
                else self.pick(BUILTIN + MISSING_CHAINS)
            fresh = [u for u in USER_CHAIN_POOL if u not in st.user]
            new = self.pick(fresh) if fresh and self.p(0.8) else \
                self.pick(USER_CHAIN_POOL + BAD_CHAIN_NAMES + BUILTIN)
            if self.p(0.03):
                return mk([opt, old], kind="rename")
            return mk([opt, old, new], kind="rename",
                      t={"emptyname"} if new == "" else set())
        if c < 0.77:   # policy
            opt = self.cmdopt("-P", ["--policy"])
            chain = self.pick(BUILTIN) if self.p(0.85) else \
                self.pick((st.user or ["NOPE"]) + MISSING_CHAINS)
            pol = self.pick(["ACCEPT", "DROP"]) if self.p(0.85) else \
                self.pick(["RETURN", "accept", "REJECT", "QUEUE", "foo"])
            return mk([opt, chain, pol], kind="policy")
        if c < 0.80:   # flush
            opt = self.cmdopt("-F", ["--flush"])
            if self.p(0.3):
                return mk([opt], kind="flush-all")
            return mk([opt, self.some_chain(st)] +
                      (["1"] if self.p(0.05) else []), kind="flush")
        if c < 0.82:   # zero
            opt = self.cmdopt("-Z", ["--zero"])
            args = [opt]
            if self.p(0.6):
                ch = self.some_chain(st)
                args.append(ch)
                if self.p(0.3):
                    args.append(str(r.randint(1, len(st.rules.get(ch, [])) + 1)))
            if self.p(0.15):
                args = ["-L", "-n"] + args
            return mk(args, kind="zero")
        if c < 0.90:   # list
            return mk(self.list_cmd(st), kind="list")
        if c < 0.97:   # list-rules
            opt = self.cmdopt("-S", ["--list-rules"])
            args = [opt]
            if self.p(0.6):
                ch = self.some_chain(st, 0.9)
                args.append(ch)
                if self.p(0.2):
                    args.append(str(r.randint(0, len(st.rules.get(ch, [])) + 1)))
            if self.p(0.2):
                args.append(self.pick(["-v", "--verbose"]))
            if self.p(0.04):
                args.append(self.pick(["-n", "-x", "--line-numbers"]))
            return mk(args, kind="list-rules")
        # miscellaneous invalid command lines
        return mk(self.pick([
            [], ["-n"], ["-v"], ["-A"], ["-I"], ["-D"], ["-N"], ["-E", "x"],
            ["-P", "INPUT"], ["-A", "INPUT", "-D", "INPUT"], ["-F", "-X"],
            ["-L", "-S"], ["-Q"], ["--bogus"], ["-A", "INPUT", "extra"],
            ["-L", "INPUT", "FORWARD"], ["-D", "INPUT", "1", "2"],
            ["-I", "INPUT", "abc", "-j", "ACCEPT"], ["-F", "INPUT", "1"],
            ["-N", "a", "b"], ["-X", "a", "b"], ["-P", "INPUT", "DROP", "x"],
            ["-S", "-n"], ["-S", "--line-numbers"], ["-A", "INPUT", "-n"],
            ["-A", "INPUT", "--line-numbers"], ["-C", "INPUT"],
            ["-R", "INPUT"], ["-R", "INPUT", "1"], ["-Z", "-S"],
            ["-L", "-x", "INPUT"], ["-A", "INPUT", "-j"],
            ["-A", "INPUT", "-p", "tcp", "--dport"], ["-t"],
            ["-A", "INPUT", "-c", "1", "2"], ["-I", "INPUT", "-1"],
            ["--append"], ["-A", "INPUT", "!"],
            ["-A", "INPUT", "-s", "1.2.3.4", "!"],
        ]), kind="misc")

    def list_cmd(self, st):
        r = self.r
        opt = self.cmdopt("-L", ["--list"])
        flags = []
        for f, prob in (("-n", 0.7), ("-v", 0.35), ("-x", 0.15),
                        ("--line-numbers", 0.25)):
            if self.p(prob):
                flags.append(f)
        args = [opt]
        if self.p(0.4):
            ch = self.some_chain(st, 0.92)
            args.append(ch)
            if self.p(0.1):
                args.append(str(r.randint(1, len(st.rules.get(ch, [])) + 1)))
        if self.p(0.15) and "-n" in flags:
            # combined short flags, e.g. -nvL
            letters = "".join(f[1] for f in flags if len(f) == 2)
            flags = [f for f in flags if len(f) != 2]
            return [f"-{letters}L"] + args[1:] + flags
        r.shuffle(flags)
        return args + flags if self.p(0.6) else flags + args


# --------------------------------------------------------------------------
# The session
# --------------------------------------------------------------------------

def is_list_without_numeric(argv):
    """True for an -L command that would do reverse DNS / service lookups."""
    import re
    lst = any(a in ("-L", "--list") or re.fullmatch(r"-[a-zA-Z]*L[a-zA-Z]*", a)
              for a in argv)
    num = any(a in ("-n", "--numeric") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*",
                                                       a) for a in argv)
    return lst and not num


def show_result(label, res, stdout=True):
    s = f"{label}: exit {res.rc}\n"
    if res.out and stdout:
        s += f"{label} stdout:\n" + common.indent(res.out, "  | ")
    if res.err:
        s += f"{label} stderr:\n" + common.indent(res.err, "  | ")
    return s



ICMP6_NAMES = ["destination-unreachable", "no-route", "communication-prohibited",
               "beyond-scope", "address-unreachable", "port-unreachable",
               "failed-policy", "reject-route", "packet-too-big", "time-exceeded",
               "ttl-exceeded", "ttl-zero-during-transit",
               "ttl-zero-during-reassembly", "parameter-problem", "bad-header",
               "unknown-header-type", "unknown-option", "echo-request", "ping",
               "echo-reply", "pong", "router-solicitation", "router-advertisement",
               "neighbour-solicitation", "neighbor-solicitation",
               "neighbour-advertisement", "neighbor-advertisement", "redirect",
               "echo", "n", "any"]
REJECT_WITH6 = ["icmp6-no-route", "no-route", "icmp6-adm-prohibited",
                "adm-prohibited", "icmp6-addr-unreachable", "addr-unreach",
                "icmp6-port-unreachable", "port-unreach", "icmp6-policy-fail",
                "policy-fail", "icmp6-reject-route", "reject-route", "p", "i",
                "icmp-port-unreachable"]


class Generator6(Generator):
    """The same sessions for bpf-ip6tables against ip6tables-legacy: IPv6
    addresses, masks in both forms, -p ipv6-icmp with -m icmp6, REJECT's icmp6
    types, IPv6 ranges. (-f stays in: both refuse it.)"""

    icmp_proto = "ipv6-icmp"
    reject_with = REJECT_WITH6

    def command(self, st, n):
        cmds = super().command(st, n)
        for c in cmds:
            if any(w in ("-C", "--check") for w in c.orc):
                c.tags.add("ip6check")
        return cmds

    def ip(self):
        r = self.r
        c = r.random()
        if c < 0.3:
            return f"2001:db8:{r.randint(0, 0xffff):x}::{r.randint(0, 0xffff):x}"
        if c < 0.45:
            return f"fe80::{r.randint(0, 0xffff):x}:{r.randint(0, 0xffff):x}"
        if c < 0.55:
            return self.pick(["::", "::1", "ff02::1", "ff02::1:ff00:1", "2001:db8::",
                              "::ffff:10.1.2.3", "64:ff9b::192.0.2.1", "fd00::1"])
        if c < 0.65:
            return f"::ffff:{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(0, 255)}"
        return ":".join(f"{r.randint(0, 0xffff):x}" for _ in range(8))

    def mask_dotted(self):
        import ipaddress
        if self.p(0.8):
            n = self.r.randint(0, 128)
            v = ((1 << 128) - 1) ^ ((1 << (128 - n)) - 1)
        else:
            v = self.r.getrandbits(128)  # non-contiguous masks are legal
        return str(ipaddress.IPv6Address(v))

    def addr(self, allow_list=True):
        c = self.r.random()
        if c < 0.04:
            return self.pick(["2001:db8::1/129", "1.2.3.4", "::1/", "2001:db8:::1",
                              "gggg::1", "no.such.host.invalid", "::1,", ",::1",
                              "::1/64/8", "::1/-1", "1.2.3.4/24",
                              "::1/ffff::ffff::"]), True
        if c < 0.07:
            return self.pick(["localhost", "ip6-localhost", "::/0", "::1/0x40",
                              "no.such.host.invalid/0", " ::1", "::1/+64"]), False
        if c < 0.35:
            return self.ip(), False
        if c < 0.75:
            return f"{self.ip()}/{self.r.randint(0, 128)}", False
        if c < 0.85:
            return f"{self.ip()}/{self.mask_dotted()}", False
        if allow_list:
            n = self.r.randint(2, 3)
            return ",".join(self.pick([self.ip(), f"{self.ip()}/{self.r.randint(8, 128)}"])
                            for _ in range(n)), False
        return self.ip(), False

    def m_icmp(self, spec, explicit):
        toks = ["-m", self.pick(["icmp6", "icmp6", "icmpv6", "ipv6-icmp"])] if explicit else []
        c = self.r.random()
        if c < 0.45:
            v = self.pick(ICMP6_NAMES)
        elif c < 0.65:
            v = str(self.pick([1, 2, 3, 4, 128, 129, 133, 134, 135, 136, 255,
                               self.r.randint(0, 255)]))
        elif c < 0.9:
            t = self.pick([1, 3, 4, self.r.randint(0, 255)])
            v = f"{t}/{self.r.randint(0, 15)}"
            if self.p(0.2):
                v += f":{self.r.randint(0, 255)}"
        else:
            v = self.pick(["foo", "256", "3/256", "-1", "3/", "/3", "1:2",
                           "echo-request/0", ""])
        toks += self.neg(0.15) + ["--icmpv6-type", v]
        spec.add(toks, kind="protomatch")

    def m_iprange(self, spec):
        import ipaddress
        toks = ["-m", "iprange"]
        for opt in self.r.sample(["--src-range", "--dst-range"],
                                 self.r.randint(1, 2)):
            if self.p(0.06):
                v = self.pick(["::1-", "-::1", "::1-::g", "1.2.3.4-1.2.3.5",
                               "::1/64-::2", "x-y"])
            elif self.p(0.08):
                v = self.ip()
            else:
                a, b = self.ip(), self.ip()
                if self.p(0.9):
                    a, b = sorted([a, b], key=lambda s: int(ipaddress.IPv6Address(s)))
                v = f"{a}-{b}"
            toks += self.neg(0.15) + [opt, v]
        spec.add(toks, kind="match")

class Session:
    def __init__(self, args):
        self.args = args
        self.report = common.Report(NAME, args.strict_messages, args.verbose)
        self.generation = 0
        self.oracle = self.iut = None
        self.fresh_pair()
        self.stats = Counter()
        self.known_tags = Counter()
        self.errmsgs = Counter()
        self.lf_count = 0
        self.resyncs = 0

    def fresh_pair(self):
        """(Re)create the oracle and the IUT: two empty, equal instances."""
        if self.oracle:
            self.oracle.close()
        if self.iut:
            self.iut.close()
        g = self.generation
        self.generation += 1
        self.oracle = common.Oracle(tag=f"diff{g}-o", label="oracle")
        if self.args.oracle:
            self.iut = common.Oracle(tag=f"diff{g}-o2", label="oracle2")
        else:
            self.iut = common.IUT(self.args.bin,
                                  netns=not self.args.no_iut_netns,
                                  tag=f"diff{g}-i",
                                  keep_state=self.args.keep_state)

    def close(self):
        self.oracle.close()
        self.iut.close()

    def tolerated(self, tags):
        out = []
        for t in sorted(tags):
            if t in KNOWN_DIVERGENCES:
                out.append(t)
            elif (t in KNOWN_VERSION_DIFFERENCES
                  and KNOWN_VERSION_DIFFERENCES[t][0] == "tolerate"):
                out.append(t)
        return out

    def resync(self):
        """Make the IUT's ruleset equal to the oracle's again.

        1. restore the oracle's save output into BOTH (restoring it into the
           oracle too normalises kernel state that 1.8.9's save prints
           lossily, e.g. --icmp-type 255/133 saved as 'any');
        2. if the IUT cannot take it (e.g. a reversed --length range that
           1.8.9 accepted), restore the IUT's save output into both;
        3. otherwise start again from a fresh, empty pair (e.g. when a saved
           interface name contains a space, which no restore can read)."""
        self.resyncs += 1
        notes = []
        for source in (self.oracle, self.iut):
            data = source.save(["-c"]).out
            r_o = self.oracle.restore(data, ["--counters"])
            r_i = self.iut.restore(data, ["--counters"])
            if r_o.rc == 0 and r_i.rc == 0 and self.same_state():
                return True
            notes.append(f"from {source.label}: oracle exit {r_o.rc}, iut "
                         f"exit {r_i.rc} ({common.message(r_i.err)[:120]})")
        self.report.info("resync by restore failed (" + "; ".join(notes) +
                         "); continuing with a fresh, empty oracle/IUT pair")
        self.fresh_pair()
        return False

    def same_state(self):
        return all(self.oracle.ipt(c).out == self.iut.ipt(c).out
                   for c in (["-S"], ["-L", "-n", "-v", "-x"]))

    def run_one(self, n, cmd):
        if self.args.no_iut_netns and is_list_without_numeric(cmd.orc):
            # Outside a namespace a name lookup could send DNS queries to the
            # machine's resolver: never do that, list numerically instead.
            cmd.orc = cmd.orc + ["-n"]
            cmd.iut = cmd.iut + ["-n"]
        orc_argv = cmd.orc
        iut_argv = cmd.orc if self.args.oracle else cmd.iut
        before_files = self.iut.files_snapshot()
        ro = self.oracle.ipt(orc_argv)
        ri = self.iut.ipt(iut_argv)
        after_files = self.iut.files_snapshot() if ri.rc != 0 else None
        so = self.oracle.ipt(["-S"])
        si = self.iut.ipt(["-S"])
        self.stats[f"{cmd.kind}:{'ok' if ro.rc == 0 else 'err'}"] += 1
        if ro.rc != 0:
            self.errmsgs[(ro.rc, ro.msg)] += 1
        if self.args.trace:
            print(f"#{n} [{ro.rc}] {cmd.show('orc')}"
                  + (f"  => {ro.msg}" if ro.msg else ""), flush=True)
        self.stats["oracle_ok" if ro.rc == 0 else "oracle_err"] += 1

        problems = []
        if ro.rc != ri.rc:
            problems.append(f"exit status oracle {ro.rc} != iut {ri.rc}")
        if ro.out != ri.out:
            problems.append("stdout differs")
        state_differs = so.out != si.out or so.rc != si.rc
        if state_differs:
            problems.append("-S output differs afterwards")
        files_changed = False
        if ri.rc != 0:
            if not common.files_unchanged(before_files, after_files):
                files_changed = True
                problems.append("IUT rejected the command but its state "
                                "changed: " + common.describe_files_diff(
                                    before_files, after_files))
        msg_differs = ro.msg != ri.msg

        if self.args.oracle or cmd.iut == cmd.orc:
            shown = cmd.show("iut")
        else:
            shown = f"{cmd.show('iut')}   [oracle ran: {cmd.show('orc')}]"
        title = f"#{n} {shown}"
        if problems:
            details = f"command: {shown}\n" + "\n".join(
                f"problem: {p}" for p in problems) + "\n"
            # long stdout (listings): show a diff instead of both copies
            long_out = ro.out != ri.out and ro.out.count("\n") + \
                ri.out.count("\n") > 12
            details += show_result("oracle", ro, not long_out) + \
                show_result("iut", ri, not long_out)
            if long_out:
                details += "stdout diff (oracle -> iut):\n" + \
                    common.diff_text(ro.out, ri.out)
            if state_differs:
                details += "-S diff (oracle -> iut):\n" + common.diff_text(
                    so.out, si.out)
            tol = self.tolerated(cmd.tags)
            if tol:
                self.known_tags.update(tol)
                self.report.known_difference(
                    f"[{','.join(tol)}] {title}: {'; '.join(problems)}",
                    details)
            else:
                self.report.fail(f"{title}: {'; '.join(problems)}", details)
            if state_differs or files_changed:
                self.resync()
        elif msg_differs:
            self.report.msg_mismatch(
                f"{title}", f"oracle: {ro.msg}\niut:    {ri.msg}\n")
        else:
            self.report.ok()
        return ro

    def list_formats(self, st, label):
        chains = st.chains()
        self.lf_count += 1
        ch = chains[self.lf_count % len(chains)]
        checks = [["-L"], ["-L", "-n"], ["-L", "-n", "-v"],
                  ["-L", "-n", "-v", "-x", "--line-numbers"],
                  ["-L", ch], ["-L", ch, "-n", "-v"], ["-S", ch], ["-S", "-v"],
                  ["-S"]]
        if self.args.no_iut_netns:
            checks = [c for c in checks if not is_list_without_numeric(c)]
        for argv in checks:
            ro = self.oracle.ipt(argv)
            ri = self.iut.ipt(argv)
            title = f"list-format ({label}): iptables {shlex.join(argv)}"
            if ro.rc != ri.rc or ro.out != ri.out:
                d = common.diff_text(ro.out, ri.out)
                self.report.fail(title + ": output differs",
                                 f"exit oracle {ro.rc}, iut {ri.rc}\n"
                                 f"{d}{show_result('iut', ri) if ri.err else ''}")
            elif ro.msg != ri.msg:
                self.report.msg_mismatch(title, f"oracle: {ro.msg}\n"
                                                f"iut:    {ri.msg}\n")
            else:
                self.report.ok()
        ro = self.oracle.save(["-c"])
        ri = self.iut.save(["-c"])
        a, b = common.strip_comments(ro.out), common.strip_comments(ri.out)
        title = f"list-format ({label}): save -c"
        if ro.rc != ri.rc or a != b:
            self.report.fail(title + ": output differs",
                             f"exit oracle {ro.rc}, iut {ri.rc}\n" +
                             common.diff_text(a, b))
        else:
            self.report.ok()

    def run(self):
        args = self.args
        gen = (Generator6 if args.family == 6 else Generator)(random.Random(args.seed))
        start = time.time()
        # Starting states must agree.
        st = State(self.oracle.ipt(["-S"]).out)
        self.list_formats(st, "initial")
        n = 0
        while n < args.count:
            if args.max_failures and self.report.failed >= args.max_failures:
                self.report.info(f"stopped after {n} of {args.count} "
                                 f"commands: --max-failures "
                                 f"{args.max_failures} reached")
                break
            cmds = gen.command(st, n)
            for cmd in cmds:
                n += 1
                ro = self.run_one(n, cmd)
                if ro.rc == 0 and self.tolerated(cmd.tags) and \
                        not self.args.oracle:
                    # the oracle may hold state its save prints lossily
                    self.resync()
                if ro.rc == 0 and cmd.rule:
                    # remember accepted rule specs for later -D by spec
                    if len(gen.history) > 60:
                        gen.history.pop(0)
                    gen.history.append(cmd.rule + (set(cmd.tags),))
                st = State(self.oracle.ipt(["-S"]).out)
                if args.list_every and n % args.list_every == 0:
                    self.list_formats(st, f"after #{n}")
        self.list_formats(st, "final")
        elapsed = time.time() - start
        ok = self.stats["oracle_ok"]
        err = self.stats["oracle_err"]
        self.report.info(f"seed {args.seed}, {n} commands in {elapsed:.1f}s; "
                         f"oracle accepted {ok}, rejected {err} "
                         f"({100.0 * err / max(1, ok + err):.0f}% invalid)")
        kinds = Counter()
        for k, v in self.stats.items():
            if ":" in k:
                kinds[k] = v
        self.report.info("commands by kind (ok/err in the oracle): " + ", ".join(
            f"{k}={v}" for k, v in sorted(kinds.items())))
        if args.stats:
            for (rc, msg), v in self.errmsgs.most_common():
                self.report.info(f"oracle error x{v}: exit {rc}: {msg}")
        if self.resyncs:
            self.report.info(f"IUT resynchronised from the oracle "
                             f"{self.resyncs} times")
        if self.known_tags:
            self.report.info("known differences by tag: " + ", ".join(
                f"{k}={v}" for k, v in sorted(self.known_tags.items())))
        lines = ["known version differences handled (1.8.9 oracle vs 1.8.13 "
                 "behaviour):"]
        for tag, (how, why) in KNOWN_VERSION_DIFFERENCES.items():
            lines.append(f"  {tag} [{how}]: {why}")
        if KNOWN_DIVERGENCES:
            lines.append("deliberate IUT divergences:")
            for tag, why in KNOWN_DIVERGENCES.items():
                lines.append(f"  {tag}: {why}")
        return self.report.finish(lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT,
                    help="number of generated commands (default %(default)s)")
    ap.add_argument("--list-every", type=int, default=60, metavar="N",
                    help="compare the list formats every N commands "
                         "(default %(default)s; 0: only at the end)")
    ap.add_argument("--no-iut-netns", action="store_true",
                    help="run the IUT directly instead of in its own network "
                         "namespace (then every -L is given -n, so that no "
                         "name lookup can leave the machine)")
    ap.add_argument("--max-failures", type=int, default=100, metavar="N",
                    help="stop the session after N failures (default "
                         "%(default)s; 0: never)")
    ap.add_argument("--trace", action="store_true",
                    help="print every command with the oracle's exit status")
    ap.add_argument("--stats", action="store_true",
                    help="list the oracle's error messages with counts")
    ap.add_argument("--dump-commands", action="store_true",
                    help="only print the generated commands (no oracle "
                         "needed; uses an empty starting state each time)")
    ap.add_argument("--family", type=int, choices=(4, 6), default=4,
                    help="6: bpf-ip6tables against ip6tables-legacy, with "
                         "IPv6 rules (default %(default)s)")
    args = ap.parse_args()
    if args.family == 6:
        common.set_family(6)

    if args.dump_commands:
        gen = (Generator6 if args.family == 6 else Generator)(random.Random(args.seed))
        st = State("-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
                   "-N user1\n-A user1 -j ACCEPT\n")
        for i in range(args.count):
            for c in gen.command(st, i):
                print(c.show("iut") + ("" if c.iut == c.orc else
                                       f"    [oracle: {c.show('orc')}]") +
                      (f"    tags={sorted(c.tags)}" if c.tags else ""))
        return 0

    # IPv6: the live ip6tables-legacy is the only reference, its absence fails
    common.require_oracle(NAME, strict=args.family == 6)
    if not args.oracle:
        common.require_iut(args.bin)
    session = Session(args)
    try:
        return session.run()
    finally:
        session.close()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        common.netns_cleanup_all()
