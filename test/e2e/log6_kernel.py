#!/usr/bin/env python3
"""IPv6 LOG lines: controlplane/logfmt.c against the kernel's LOG target.

Two namespaces joined by a veth pair (va 2001:db8::1 -- vb 2001:db8::2,
nodad, static neighbours).  In the receiving one, ip6tables-legacy has one
rule, `-A INPUT -i vb -j LOG --log-prefix "t6 " <options>`; crafted IPv6 frames
(TCP with options, UDP, ICMPv6 queries and errors quoting packets, hop-by-hop,
destination options, routing, fragment, AH and ESP headers, no next header,
cut-short transport headers, traffic class and flow label) are sent from the
other end through an AF_PACKET socket, with every --log-* option that changes
the line.  The kernel's line (read from /dev/kmsg; net.netfilter.
nf_log_all_netns=1 for the time of the test) must be the line logfmt.c prints
for the same frame (the lf_line helper), character for character.

The data plane's capture of the bytes is checked by dataplane.test_ct6 (the
event holds the packet's bytes); this test checks the text.

Usage (root, ip6tables-legacy; never skips):  log6_kernel.py --bin build [-v]
"""

import argparse
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netlib as nl            # noqa: E402

SRC = socket.inet_pton(socket.AF_INET6, "2001:db8::1")
DST = socket.inet_pton(socket.AF_INET6, "2001:db8::2")
MAC_A = bytes.fromhex("020000000a01")
MAC_B = bytes.fromhex("020000000b02")

TCPSEQ, TCPOPT, IPOPT, UID, MACDECODE = 1, 2, 4, 8, 0x20


def ip6(nh, payload, tc=0, flow=0, hlim=64, plen=None, src=SRC, dst=DST):
    w = (6 << 28) | (tc << 20) | flow
    n = len(payload) if plen is None else plen
    return struct.pack("!IHBB", w, n, nh, hlim) + src + dst + payload


def tcp(sport, dport, flags, seq=1000, ack=0, opts=b"", data=b""):
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags, 512, 0,
                       0) + opts + data


def udp(sport, dport, data=b""):
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def icmp6(t, code, rest4=b"\0\0\0\0", data=b""):
    return struct.pack("!BBH", t, code, 0) + rest4 + data


def ext(nh, body):
    """hop-by-hop / destination options / routing: body padded to 8n - 2 bytes"""
    n = (len(body) + 2 + 7) // 8 * 8
    body = body + b"\0" * (n - 2 - len(body))
    return struct.pack("!BB", nh, n // 8 - 1) + body


def padn(n):
    return bytes([1, n - 2]) + b"\0" * (n - 2)


def frag(nh, off, mf, ident):
    return struct.pack("!BBHI", nh, 0, (off << 3) | mf, ident)


def ah(nh, spi):
    return struct.pack("!BBHII", nh, 4, 0, spi, 7) + b"\0" * 12   # 24 bytes: (4 + 2) * 4


def cases():
    mss = bytes([2, 4, 5, 0xb4, 1, 1, 4, 2])
    syn = tcp(40000, 22, 0x02, seq=123456789, opts=mss)
    udpq = ip6(17, udp(5353, 53, b"abcd"))
    tcpq = ip6(6, tcp(40001, 443, 0x18, data=b"x" * 10))
    out = [
        ("tcp syn with options", 0, ip6(6, syn)),
        ("tcp syn, tcp-sequence and tcp-options", TCPSEQ | TCPOPT, ip6(6, syn)),
        ("tcp syn, every option", TCPSEQ | TCPOPT | IPOPT | UID | MACDECODE, ip6(6, syn)),
        ("tcp flags, traffic class, flow label, hop limit", 0,
         ip6(6, tcp(1, 2, 0xff, ack=5), tc=0xb8, flow=0xabcde, hlim=7)),
        ("udp", 0, ip6(17, udp(5000, 53, b"hello"))),
        ("udplite", 0, ip6(136, udp(5000, 53, b"hello"))),
        ("echo request", 0, ip6(58, icmp6(128, 0, struct.pack("!HH", 0x1234, 7), b"ping"))),
        ("echo reply", 0, ip6(58, icmp6(129, 0, struct.pack("!HH", 9, 8)))),
        ("neighbour solicitation", 0, ip6(58, icmp6(135, 0, b"\0" * 4, DST), hlim=255)),
        ("mld report", 0, ip6(58, icmp6(131, 0, b"\0" * 4, b"\xff\x02" + b"\0" * 14), hlim=1)),
        ("port unreachable quoting udp", 0, ip6(58, icmp6(1, 4, data=udpq))),
        ("port unreachable quoting udp, ip options", IPOPT, ip6(58, icmp6(1, 4, data=udpq))),
        ("packet too big quoting tcp", 0,
         ip6(58, icmp6(2, 0, struct.pack("!I", 1280), tcpq))),
        ("time exceeded quoting tcp, tcp-sequence", TCPSEQ, ip6(58, icmp6(3, 1, data=tcpq))),
        ("parameter problem", 0, ip6(58, icmp6(4, 1, struct.pack("!I", 0x28), udpq))),
        ("error quoting a cut packet", 0, ip6(58, icmp6(1, 3, data=udpq[:44]))),
        ("icmpv6 header cut short", 0, ip6(58, b"\x80\0\0")),
        ("hop-by-hop then udp", 0, ip6(0, ext(17, padn(6)) + udp(1, 2))),
        ("hop-by-hop then udp, ip options", IPOPT, ip6(0, ext(17, padn(6)) + udp(1, 2))),
        ("destination options then tcp", IPOPT,
         ip6(60, ext(6, padn(6)) + tcp(3, 4, 0x10))),
        ("routing header then udp", IPOPT,
         ip6(43, ext(17, bytes([4, 0]) + b"\0" * 4) + udp(7, 8))),
        ("first fragment", 0, ip6(44, frag(17, 0, 1, 0x01020304) + udp(9, 10, b"z" * 16))),
        ("first fragment, ip options", IPOPT,
         ip6(44, frag(17, 0, 1, 0x01020304) + udp(9, 10, b"z" * 16))),
        ("second fragment", 0, ip6(44, frag(17, 3, 0, 0x01020304) + b"y" * 16)),
        ("second fragment of tcp, ip options", IPOPT, ip6(44, frag(6, 3, 1, 5) + b"y" * 16)),
        ("fragment then destination options", IPOPT,
         ip6(44, frag(60, 3, 0, 6) + ext(17, padn(6)) + b"y" * 8)),
        ("ah then udp", 0, ip6(51, ah(17, 0xdeadbeef) + udp(11, 12))),
        ("ah then udp, ip options", IPOPT, ip6(51, ah(17, 0xdeadbeef) + udp(11, 12))),
        ("esp", 0, ip6(50, struct.pack("!II", 0x1234, 1) + b"\0" * 16)),
        ("esp, ip options", IPOPT, ip6(50, struct.pack("!II", 0x1234, 1) + b"\0" * 16)),
        ("no next header", 0, ip6(59, b"")),
        ("gre", 0, ip6(47, b"\0" * 8)),
        ("tcp header cut short", 0, ip6(6, tcp(1, 2, 0x02)[:10])),
        ("udp header cut short", 0, ip6(17, b"\0\1\0")),
        ("tcp options cut short, tcp-options", TCPOPT,
         ip6(6, tcp(1, 2, 0x02, opts=mss)[:24])),
    ]
    return out


def kmsg_lines(fd):
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:
            continue
        text = rec.decode(errors="replace").rstrip("\n")
        msg = text.partition(";")[2].split("\n")[0]
        if msg.startswith("t6 "):
            lines.append(msg)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    lf = os.path.join(os.path.abspath(a.bin), "lf_line")
    for tool in ("ip6tables-legacy",):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            print(f"log6_kernel: FAIL: {tool} not found (this test never skips)")
            return 1
    if not os.access(lf, os.X_OK):
        print(f"log6_kernel: FAIL: {lf} not built")
        return 1
    if not os.path.exists("/proc/sys/net/netfilter/nf_log_all_netns"):
        os.system("modprobe nf_log_syslog >/dev/null 2>&1")
    nl.install_cleanup()
    path = "/proc/sys/net/netfilter/nf_log_all_netns"
    with open(path) as f:
        old = f.read().strip()
    nl.at_cleanup(lambda: open(path, "w").write(old))
    with open(path, "w") as f:
        f.write("1")

    tag = os.getpid()
    na, nb = nl.netns_add(f"l6a{tag}"), nl.netns_add(f"l6b{tag}")
    nl.run(["ip", "link", "add", "va", "netns", na, "address", MAC_A.hex(":"), "type", "veth",
            "peer", "name", "vb", "netns", nb, "address", MAC_B.hex(":")])
    for ns, dev, me, peer, mac in ((na, "va", "2001:db8::1", "2001:db8::2", MAC_B),
                                   (nb, "vb", "2001:db8::2", "2001:db8::1", MAC_A)):
        nl.run(["ip", "-n", ns, "addr", "add", me + "/64", "dev", dev, "nodad"])
        nl.run(["ip", "-n", ns, "link", "set", dev, "up"])
        nl.run(["ip", "-n", ns, "link", "set", "lo", "up"])
        nl.run(["ip", "-n", ns, "neigh", "replace", peer, "lladdr", mac.hex(":"), "dev", dev,
                "nud", "permanent"])
    with nl.netns(na):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind(("va", 0))
    nl.at_cleanup(sock.close)
    helper = subprocess.Popen([lf], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    nl.at_cleanup(helper.kill)
    kfd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(kfd, 0, os.SEEK_END)

    eth = MAC_B + MAC_A + b"\x86\xdd"
    fails = 0
    last_flags = None
    for what, flags, pkt in cases():
        if flags != last_flags:
            opts = []
            if flags & TCPSEQ:
                opts.append("--log-tcp-sequence")
            if flags & TCPOPT:
                opts.append("--log-tcp-options")
            if flags & IPOPT:
                opts.append("--log-ip-options")
            if flags & UID:
                opts.append("--log-uid")
            if flags & MACDECODE:
                opts.append("--log-macdecode")
            nl.run(["ip", "netns", "exec", nb, "ip6tables-legacy", "-F", "INPUT"])
            nl.run(["ip", "netns", "exec", nb, "ip6tables-legacy", "-A", "INPUT", "-i", "vb",
                    "-j", "LOG", "--log-prefix", "t6 "] + opts)
            last_flags = flags
        kmsg_lines(kfd)     # drop anything before
        sock.send(eth + pkt)
        klines = []
        for _ in range(50):
            time.sleep(0.02)
            klines += kmsg_lines(kfd)
            if klines:
                break
        helper.stdin.write(f"0 vb - {flags} 0 {eth.hex()} {pkt.hex()}\n")
        helper.stdin.flush()
        ours = helper.stdout.readline().rstrip("\n")
        if len(klines) != 1:
            fails += 1
            print(f"FAIL {what}: the kernel logged {len(klines)} lines {klines}; ours: {ours!r}")
            continue
        if klines[0] != ours:
            fails += 1
            print(f"FAIL {what}:\n  kernel: {klines[0]!r}\n  ours:   {ours!r}")
        elif a.verbose:
            print(f"ok   {what}: {ours}")
    os.close(kfd)
    n = len(cases())
    print(f"log6_kernel: {n - fails}/{n} IPv6 LOG lines identical to the kernel's")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
