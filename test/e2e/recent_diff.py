#!/usr/bin/env python3
"""-m recent, bpf-iptables against iptables-legacy's xt_recent.

Two twin pairs of namespaces (client -- server, one veth each): twin A's
server is filtered by iptables-legacy, twin B's by bpf-iptables (XDP or tc
ingress, --ingress).  Every scenario loads the same INPUT rules into both
servers and sends the same UDP datagrams to both, each one to A and at once
to B, from spoofed sources of the client's subnet (a raw socket, so a
hundred sources and any TTL are possible); a raw socket on each server sees
exactly the datagrams INPUT let through.  The datagrams delivered must be the
same, datagram for datagram.

Scenarios: the ssh brute-force recipe (--update --seconds --hitcount), ufw's
`ufw limit` pair (conntrack NEW + --set / --update --hitcount 6), --rttl,
port knocking with ! --rcheck, --seconds and --remove, --rdest with the list
creator's --mask, a list of more than 100 addresses losing its least
recently seen ones, --reap, and a list surviving a ruleset reload while a
rule names it and emptied once none does.

  recent_diff.py --bin BUILD_DIR [--ingress xdp|tc]
"""

import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netlib as nl  # noqa: E402

SRV_IPS = ["10.77.0.1", "10.77.0.2", "10.77.1.1"]
CLI_IP = "10.77.100.1"


def src(n):
    """The n-th spoofed source of the client's subnet."""
    return f"10.77.{2 + n // 200}.{1 + n % 200}"


A, B, C = src(0), src(1), src(2)

# (title, rules, steps); a step is ("send", src, dst, dport, ttl, count),
# ("sleep", seconds) or ("load", rules)
SCENARIOS = [
    ("ssh brute force: --update --seconds 2 --hitcount 4", [
        "-A INPUT -p udp --dport 22 -m recent --update --seconds 2 --hitcount 4 --name SSH -j DROP",
        "-A INPUT -p udp --dport 22 -m recent --set --name SSH",
    ], [("send", A, SRV_IPS[0], 22, 64, 7), ("send", B, SRV_IPS[0], 22, 64, 2),
        ("sleep", 2.3), ("send", A, SRV_IPS[0], 22, 64, 3), ("send", B, SRV_IPS[0], 22, 64, 3)]),
    ("ufw limit: conntrack NEW, --set, --update --seconds 30 --hitcount 6", [
        "-A INPUT -p udp --dport 2222 -m conntrack --ctstate NEW -m recent --set",
        "-A INPUT -p udp --dport 2222 -m conntrack --ctstate NEW -m recent --update "
        "--seconds 30 --hitcount 6 -j DROP",
    ], [("send", A, SRV_IPS[0], 2222, 64, 9), ("send", B, SRV_IPS[0], 2222, 64, 4)]),
    ("--rttl: the TTL of the --set must match", [
        "-A INPUT -p udp --dport 23 -m recent --rcheck --rttl --name T -j DROP",
        "-A INPUT -p udp --dport 24 -m recent --set --name T",
    ], [("send", A, SRV_IPS[0], 24, 64, 1), ("send", A, SRV_IPS[0], 23, 64, 2),
        ("send", A, SRV_IPS[0], 23, 50, 2), ("send", B, SRV_IPS[0], 23, 64, 1),
        ("send", A, SRV_IPS[0], 24, 50, 1), ("send", A, SRV_IPS[0], 23, 64, 1),
        ("send", A, SRV_IPS[0], 23, 50, 1)]),
    ("port knocking: ! --rcheck --seconds 1, --remove", [
        "-A INPUT -p udp --dport 7000 -m recent --set --name K",
        "-A INPUT -p udp --dport 7001 -m recent --remove --name K",
        "-A INPUT -p udp --dport 8000 -m recent ! --rcheck --seconds 1 --name K -j DROP",
    ], [("send", A, SRV_IPS[0], 8000, 64, 1), ("send", A, SRV_IPS[0], 7000, 64, 1),
        ("send", A, SRV_IPS[0], 8000, 64, 2), ("send", B, SRV_IPS[0], 8000, 64, 1),
        ("sleep", 1.4), ("send", A, SRV_IPS[0], 8000, 64, 1),
        ("send", A, SRV_IPS[0], 7000, 64, 1), ("send", A, SRV_IPS[0], 8000, 64, 1),
        ("send", A, SRV_IPS[0], 7001, 64, 1), ("send", A, SRV_IPS[0], 8000, 64, 1)]),
    ("--rdest with the creator's --mask 255.255.255.0", [
        "-A INPUT -p udp --dport 9000 -m recent --set --rdest --mask 255.255.255.0 --name D",
        "-A INPUT -p udp --dport 9001 -m recent --rcheck --rdest --name D -j DROP",
    ], [("send", A, SRV_IPS[0], 9001, 64, 1), ("send", A, SRV_IPS[0], 9000, 64, 1),
        ("send", B, SRV_IPS[1], 9001, 64, 1), ("send", C, SRV_IPS[2], 9001, 64, 1),
        ("send", C, SRV_IPS[0], 9001, 64, 1)]),
    ("110 addresses in a list of 100: the least recently seen go", [
        "-A INPUT -p udp --dport 9100 -m recent --set --name E",
        "-A INPUT -p udp --dport 9101 -m recent --rcheck --name E -j DROP",
        "-A INPUT -p udp --dport 9102 -m recent --update --name E",
    ], [("send", src(n), SRV_IPS[0], 9100, 64, 1) for n in range(50)] +
       [("send", src(3), SRV_IPS[0], 9102, 64, 1)] +
       [("send", src(n), SRV_IPS[0], 9100, 64, 1) for n in range(50, 110)] +
       [("send", src(n), SRV_IPS[0], 9101, 64, 1) for n in list(range(16)) + [107, 108, 109]]),
    ("--reap", [
        "-A INPUT -p udp --dport 9200 -m recent --set --name R",
        "-A INPUT -p udp --dport 9201 -m recent --update --seconds 1 --reap --name R -j DROP",
        "-A INPUT -p udp --dport 9202 -m recent --rcheck --name R -j DROP",
    ], [("send", A, SRV_IPS[0], 9200, 64, 1), ("send", B, SRV_IPS[0], 9200, 64, 1),
        ("send", C, SRV_IPS[0], 9200, 64, 1), ("sleep", 1.3),
        ("send", C, SRV_IPS[0], 9201, 64, 1), ("send", A, SRV_IPS[0], 9202, 64, 1),
        ("send", B, SRV_IPS[0], 9202, 64, 1), ("send", C, SRV_IPS[0], 9202, 64, 1)]),
    ("a list outlives a reload while a rule names it", [
        "-A INPUT -p udp --dport 9300 -m recent --set --name P",
        "-A INPUT -p udp --dport 9301 -m recent --rcheck --name P -j DROP",
    ], [("send", A, SRV_IPS[0], 9300, 64, 1), ("send", A, SRV_IPS[0], 9301, 64, 1),
        ("load", ["-A INPUT -p tcp --dport 1 -j DROP",
                  "-A INPUT -p udp --dport 9301 -m recent --rcheck --name P -j DROP"]),
        ("send", A, SRV_IPS[0], 9301, 64, 1),
        ("load", ["-A INPUT -p tcp --dport 1 -j DROP"]),
        ("load", ["-A INPUT -p udp --dport 9301 -m recent --rcheck --name P -j DROP"]),
        ("send", A, SRV_IPS[0], 9301, 64, 1)]),
]


def udp(srcip, dstip, dport, ttl, seq):
    payload = struct.pack("!4sI", b"RCNT", seq)
    sport = 20000 + seq % 40000
    ulen = 8 + len(payload)
    s, d = socket.inet_aton(srcip), socket.inet_aton(dstip)
    c = nl.csum(s + d + struct.pack("!BBH", 0, 17, ulen) +
                struct.pack("!HHHH", sport, dport, ulen, 0) + payload) or 0xffff
    l4 = struct.pack("!HHHH", sport, dport, ulen, c) + payload
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), seq & 0xffff, 0, ttl, 17, 0, s, d)
    h = h[:10] + struct.pack("!H", nl.csum(h)) + h[12:]
    return h + l4


class Twin:
    def __init__(self, tag, fw, bindir, ingress, state):
        self.fw, self.bindir, self.ingress, self.state = fw, bindir, ingress, state
        sfx = f"{tag}-{os.getpid()}"
        self.cli, self.srv = nl.netns_add(f"rcd-c{sfx}"), nl.netns_add(f"rcd-s{sfx}")
        nl.run(["ip", "link", "add", "c0", "netns", self.cli, "type", "veth", "peer",
                "name", "s0", "netns", self.srv])
        nl.run(["ip", "-n", self.cli, "addr", "add", f"{CLI_IP}/16", "dev", "c0"])
        for ip in SRV_IPS:
            nl.run(["ip", "-n", self.srv, "addr", "add", f"{ip}/16", "dev", "s0"])
        for ns, dev in ((self.cli, "c0"), (self.srv, "s0")):
            nl.run(["ip", "-n", ns, "link", "set", dev, "up"])
            nl.run(["ip", "-n", ns, "link", "set", "lo", "up"])
        with nl.netns(self.srv):
            for k in ("all", "default", "s0"):
                nl.sysctl(f"net.ipv4.conf.{k}.rp_filter", 0)
            self.rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
            self.rx.setblocking(False)
        with nl.netns(self.cli):
            self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        nl.at_cleanup(self.rx.close)
        nl.at_cleanup(self.tx.close)

    def load(self, rules):
        text = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" + \
            "\n".join(rules) + "\nCOMMIT\n"
        if self.fw == "legacy":
            argv = ["ip", "netns", "exec", self.srv, "iptables-legacy-restore"]
            env = None
        else:
            argv = ["ip", "netns", "exec", self.srv, os.path.join(self.bindir,
                                                                 "bpf-iptables-restore")]
            env = dict(os.environ, BPF_IPTABLES_STATE_DIR=self.state,
                       BPF_IPTABLES_INGRESS=self.ingress)
        p = subprocess.run(argv, input=text.encode(), capture_output=True, env=env, check=False)
        if p.returncode:
            raise RuntimeError(f"{self.fw}: restore failed: {p.stderr.decode().strip()}")

    def got(self):
        out = set()
        while True:
            r, _, _ = select.select([self.rx], [], [], 0.15)
            if not r:
                return out
            data = self.rx.recv(2048)
            hl = (data[0] & 15) * 4
            if len(data) >= hl + 16 and data[hl + 8:hl + 12] == b"RCNT":
                out.add(struct.unpack("!I", data[hl + 12:hl + 16])[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, metavar="DIR")
    ap.add_argument("--ingress", choices=["xdp", "tc"], default="xdp")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("FAIL: recent_diff needs root (namespaces, BPF, iptables-legacy)", file=sys.stderr)
        return 1
    state = nl.tempdir("rcd-state.")
    twins = [Twin("a", "legacy", args.bin, args.ingress, state),
             Twin("b", "bpf", args.bin, args.ingress, state)]
    failed = passed = 0
    seq = 0
    for title, rules, steps in SCENARIOS:
        for t in twins:
            t.load(rules)
        sent = []
        for st in steps:
            if st[0] == "sleep":
                time.sleep(st[1])
            elif st[0] == "load":
                for t in twins:
                    t.load(st[1])
            else:
                _, s, d, port, ttl, count = st
                for _ in range(count):
                    seq += 1
                    pkt = udp(s, d, port, ttl, seq)
                    for t in twins:
                        t.tx.sendto(pkt, (d, 0))
                    sent.append((seq, f"{s} -> {d}:{port} ttl {ttl}"))
                    time.sleep(0.004)
        got = [t.got() for t in twins]
        fates = [("".join("D" if n in g else "-" for n, _ in sent)) for g in got]
        if fates[0] == fates[1] and 0 < len(got[0]) < len(sent):
            passed += 1
            print(f"ok  {title}: {len(sent)} datagrams, {len(got[0])} delivered by both "
                  f"({fates[0] if len(sent) <= 40 else 'same ' + str(len(sent))})")
        else:
            failed += 1
            print(f"FAIL {title}: iptables-legacy delivered {len(got[0])}, bpf-iptables "
                  f"{len(got[1])} of {len(sent)}")
            for (n, what), fa, fb in zip(sent, fates[0], fates[1]):
                if fa != fb:
                    print(f"     #{n} {what}: iptables-legacy {'delivered' if fa == 'D' else 'dropped'}"
                          f", bpf-iptables {'delivered' if fb == 'D' else 'dropped'}")
    print(f"{passed} passed, {failed} failed ({args.ingress} ingress)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
