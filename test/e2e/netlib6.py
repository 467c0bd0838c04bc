"""IPv6 pieces of the end-to-end differential tests (kernel_diff6.py), on top
of netlib.py (namespaces, cleanup, entering a namespace, running commands).

* The client - router - server topology of netlib.Twin with IPv6 addresses:

    cli (fd00:1::2) --veth-- (fd00:1::1) rtr (fd00:2::1) --veth-- (fd00:2::2) srv

  plus extra addresses on the interfaces and on lo (routed by the router),
  static neighbours (no neighbour discovery: the rulesets under test may drop
  ICMPv6, and NDP is not what these tests compare), no DAD, no router
  advertisements, forwarding on the router only.
* IPv6 packet crafting for raw IPPROTO_RAW sockets (the kernel takes the whole
  IPv6 header from the caller): TCP, UDP, ICMPv6, other next headers; extension
  headers before the upper layer (hop-by-hop, destination options, an atomic
  fragment header); two-fragment datagrams.
* Verdicts are observed as for IPv4 (design.md, "Observing verdicts"): a raw
  socket (AF_INET6, SOCK_RAW, proto) in the receiving namespace gets a copy of
  the packets that passed INPUT there. An IPv6 raw socket returns the data from
  the upper-layer header on, so a packet is recognised by (protocol, source,
  nonce): the nonce is unique in a run and sits after the upper-layer header,
  behind 4 zero bytes (a quoted packet in an ICMPv6 error starts 0x6., so an
  error quoting a test packet is never taken for it).
"""

import ipaddress
import os
import select
import socket
import struct
import time

import netlib as nl

# ---------------------------------------------------------------------------
# Addresses
# ---------------------------------------------------------------------------

CLI_IP, RTR_IP1, RTR_IP2, SRV_IP = "fd00:1::2", "fd00:1::1", "fd00:2::1", "fd00:2::2"
CLI_ETH_EXTRA = ["fd00:1::77", "fd00:1::8000:1"]
CLI_LO_EXTRA = ["fd00:11::1", "2001:db8:1::1", "fd00:100:0:1::1", "2001:db8:1:ff::9"]
SRV_ETH_EXTRA = ["fd00:2::3", "fd00:2::130"]
SRV_LO_EXTRA = ["fd00:22::5", "2001:db8:2::9", "2001:4860::8888", "fd00:22:0:1::7"]

# Destinations that are not a unicast address of the receiver (netlib's
# subnet broadcasts and 224.0.0.1): none yet for IPv6.
SPECIAL_DST = {}

OTHER_PROTOS = (47, 132, 253)
ICMPV6 = 58
RECV_PROTOS = (ICMPV6, socket.IPPROTO_TCP, socket.IPPROTO_UDP) + OTHER_PROTOS


def a2i(s):
    return int(ipaddress.IPv6Address(s))


def i2a(i):
    return str(ipaddress.IPv6Address(i & ((1 << 128) - 1)))


def martian_src(i):
    """Sources the kernel drops on input whatever the firewall says: ::,
    ::1, multicast, and (from outside) v4-mapped."""
    return i in (0, 1) or i >> 120 == 0xff or i >> 32 == 0xffff


def local_addrs(role):
    if role == "cli":
        return [CLI_IP] + CLI_ETH_EXTRA + CLI_LO_EXTRA
    if role == "srv":
        return [SRV_IP] + SRV_ETH_EXTRA + SRV_LO_EXTRA
    return [RTR_IP1, RTR_IP2]


def all_topology_addrs():
    return local_addrs("cli") + local_addrs("rtr") + local_addrs("srv")


# ---------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------

def ns_sysctls(forward):
    """Settings of the current (entered) namespace, before its interfaces
    exist so that they inherit 'default'."""
    for scope in ("all", "default"):
        nl.sysctl(f"net.ipv6.conf.{scope}.accept_dad", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.dad_transmits", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.accept_ra", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.autoconf", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.router_solicitations", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.accept_redirects", 0)
        nl.sysctl(f"net.ipv6.conf.{scope}.forwarding", 1 if forward else 0)
    # the kernel's own replies (echo replies, errors) are noise here
    nl.sysctl("net.ipv6.icmp.echo_ignore_all", 1)
    nl.sysctl("net.ipv6.icmp.ratelimit", 1000)
    nl.sysctl("net.ipv6.ip6frag_time", 3)


def ns_sockets(recv_protos):
    """In the current namespace: a raw socket to send whole IPv6 packets and
    one non-blocking raw socket per protocol to receive with."""
    sk = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    socks = []
    for proto in recv_protos:
        r = socket.socket(socket.AF_INET6, socket.SOCK_RAW, proto)
        r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        r.setblocking(False)
        socks.append(r)
    return sk, socks


class Twin(nl.Twin):
    """netlib.Twin with IPv6 addresses (same namespaces, MACs, interfaces)."""

    def __init__(self, label, index):
        super().__init__(label, index)
        pid = os.getpid()
        self.ns = {r: f"bipt-kd6{pid}-{label}-{r}" for r in nl.ROLES}
        self.sock_proto = {}      # fileno -> protocol of a receiving socket

    def build(self):
        ns = self.ns
        for r in nl.ROLES:
            nl.netns_add(ns[r])
        for r in nl.ROLES:
            with nl.netns(ns[r]):
                ns_sysctls(forward=r == "rtr")
        c, rt, s = ns["cli"], ns["rtr"], ns["srv"]
        cmds = [
            ["ip", "-n", c, "link", "add", "eth0", "address", self.mac("cli", "eth0"),
             "type", "veth", "peer", "name", "eth0", "netns", rt,
             "address", self.mac("rtr", "eth0")],
            ["ip", "-n", rt, "link", "add", "eth1", "address", self.mac("rtr", "eth1"),
             "type", "veth", "peer", "name", "eth0", "netns", s,
             "address", self.mac("srv", "eth0")],
        ]
        addrs = [(c, CLI_IP, 64, "eth0"), (rt, RTR_IP1, 64, "eth0"),
                 (rt, RTR_IP2, 64, "eth1"), (s, SRV_IP, 64, "eth0")]
        addrs += [(c, a, 64, "eth0") for a in CLI_ETH_EXTRA]
        addrs += [(s, a, 64, "eth0") for a in SRV_ETH_EXTRA]
        addrs += [(c, a, 128, "lo") for a in CLI_LO_EXTRA]
        addrs += [(s, a, 128, "lo") for a in SRV_LO_EXTRA]
        for n, a, plen, dev in addrs:
            cmds.append(["ip", "-n", n, "-6", "addr", "add", f"{a}/{plen}", "dev", dev,
                         "nodad"])
        for n, dev in ((c, "lo"), (c, "eth0"), (rt, "lo"), (rt, "eth0"),
                       (rt, "eth1"), (s, "lo"), (s, "eth0")):
            cmds.append(["ip", "-n", n, "link", "set", dev, "up"])
        cmds += [
            ["ip", "-n", c, "-6", "route", "add", "default", "via", RTR_IP1],
            ["ip", "-n", s, "-6", "route", "add", "default", "via", RTR_IP2],
        ]
        for a in CLI_LO_EXTRA:
            cmds.append(["ip", "-n", rt, "-6", "route", "add", f"{a}/128", "via", CLI_IP])
        for a in SRV_LO_EXTRA:
            cmds.append(["ip", "-n", rt, "-6", "route", "add", f"{a}/128", "via", SRV_IP])
        for ip in [CLI_IP] + CLI_ETH_EXTRA:
            cmds.append(["ip", "-n", rt, "-6", "neigh", "replace", ip, "lladdr",
                         self.mac("cli", "eth0"), "dev", "eth0", "nud", "permanent"])
        for ip in [SRV_IP] + SRV_ETH_EXTRA:
            cmds.append(["ip", "-n", rt, "-6", "neigh", "replace", ip, "lladdr",
                         self.mac("srv", "eth0"), "dev", "eth1", "nud", "permanent"])
        cmds.append(["ip", "-n", c, "-6", "neigh", "replace", RTR_IP1, "lladdr",
                     self.mac("rtr", "eth0"), "dev", "eth0", "nud", "permanent"])
        cmds.append(["ip", "-n", s, "-6", "neigh", "replace", RTR_IP2, "lladdr",
                     self.mac("rtr", "eth1"), "dev", "eth0", "nud", "permanent"])
        for cmd in cmds:
            nl.run(cmd)
        for r in nl.ROLES:
            with nl.netns(ns[r]):
                self.send_sock[r], self.recv_socks[r] = ns_sockets(RECV_PROTOS)
                for sk, proto in zip(self.recv_socks[r], RECV_PROTOS):
                    self.sock_role[sk.fileno()] = r
                    self.sock_proto[sk.fileno()] = proto
        nl.at_cleanup(self.close_sockets)


# ---------------------------------------------------------------------------
# Packets
# ---------------------------------------------------------------------------

L4_HDR = {socket.IPPROTO_TCP: 20, socket.IPPROTO_UDP: 8, ICMPV6: 8}
PAYLOAD_MIN = 8
EXT_NAMES = {0: "hop-by-hop", 60: "destination options", 44: "fragment (atomic)"}


def _opts_hdr(nxt):
    """A hop-by-hop or destination options header: 8 bytes, one PadN."""
    return struct.pack("!BBBB4s", nxt, 0, 1, 4, b"\0" * 4)


class Packet:
    """One IPv6 test packet (or a two-fragment datagram). proto is the upper
    layer; ext the extension headers in front of it (numbers: 0, 60, 44)."""

    __slots__ = ("proto", "src", "dst", "sport", "dport", "flags", "itype",
                 "icode", "length", "frag", "ext", "nonce", "sender", "receiver",
                 "ipid", "trunc")

    def __init__(self, proto, src, dst, sender, receiver, sport=0, dport=0,
                 flags=0, itype=0, icode=0, length=0, frag=False, ext=()):
        self.proto, self.src, self.dst = proto, src, dst
        self.sender, self.receiver = sender, receiver
        self.sport, self.dport, self.flags = sport, dport, flags
        self.itype, self.icode = itype, icode
        self.length, self.frag, self.ext = length, frag, list(ext)
        self.nonce = self.ipid = 0
        self.trunc = None

    def hdr_len(self):
        return 40 + 8 * len(self.ext)

    def min_length(self):
        return self.hdr_len() + L4_HDR.get(self.proto, 0) + PAYLOAD_MIN

    def key(self):
        return (self.proto, a2i(self.src), self.nonce)

    def describe(self):
        p = {ICMPV6: "icmpv6", 6: "tcp", 17: "udp"}.get(self.proto, f"proto {self.proto}")
        s = f"{p} [{self.src}]"
        if self.proto in (6, 17):
            s += f":{self.sport}"
        s += f" -> [{self.dst}]"
        if self.proto in (6, 17):
            s += f":{self.dport}"
        if self.proto == 6:
            names = [n for i, n in enumerate(nl.TCP_FLAG_NAMES) if self.flags >> i & 1]
            s += f" flags {','.join(names) or 'none'} (0x{self.flags:02x})"
        if self.proto == ICMPV6:
            s += f" type {self.itype} code {self.icode}"
        s += f", length {self.length} (payload length + 40)"
        if self.ext:
            s += ", extension headers " + ", ".join(EXT_NAMES[e] for e in self.ext)
        if self.frag:
            s += ", sent as 2 fragments (offset 0 + M, then a non-first one)"
        s += f"; sent from {self.sender}, delivered to {self.receiver} [nonce {self.nonce}]"
        return s

    def _l4(self, plen):
        payload = b"\0\0\0\0" + struct.pack("!I", self.nonce) + b"\0" * (plen - PAYLOAD_MIN)
        src, dst = socket.inet_pton(socket.AF_INET6, self.src), \
            socket.inet_pton(socket.AF_INET6, self.dst)

        def pseudo(n):
            return src + dst + struct.pack("!I3xB", n, self.proto)

        if self.proto == socket.IPPROTO_TCP:
            hdr = struct.pack("!HHIIBBHHH", self.sport, self.dport, 0x01020304 ^ self.nonce,
                              0, 5 << 4, self.flags & 0xff, 8192, 0, 0)
            c = nl.csum(pseudo(len(hdr) + len(payload)) + hdr + payload)
            return hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload
        if self.proto == socket.IPPROTO_UDP:
            ulen = 8 + len(payload)
            hdr = struct.pack("!HHHH", self.sport, self.dport, ulen, 0)
            c = nl.csum(pseudo(ulen) + hdr + payload) or 0xffff
            return hdr[:6] + struct.pack("!H", c) + payload
        if self.proto == ICMPV6:
            hdr = struct.pack("!BBHHH", self.itype, self.icode, 0, self.nonce & 0xffff, 1)
            c = nl.csum(pseudo(len(hdr) + len(payload)) + hdr + payload)
            return hdr[:2] + struct.pack("!H", c) + hdr[4:] + payload
        return payload

    def _ip6(self, nxt, body):
        return struct.pack("!IHBB16s16s", 6 << 28, len(body), nxt, 64,
                           socket.inet_pton(socket.AF_INET6, self.src),
                           socket.inet_pton(socket.AF_INET6, self.dst)) + body

    def _chain(self, ext, last, body):
        """ext headers (numbers) in front of body, whose header is `last`:
        (first next header, bytes)."""
        out, nxt = b"", last
        for e in reversed(ext):
            if e == 44:
                h = struct.pack("!BBHI", nxt, 0, 0, 0x1000 + self.nonce)
            else:
                h = _opts_hdr(nxt)
            out, nxt = h + out, e
        return nxt, out + body

    def wire(self):
        l4len = L4_HDR.get(self.proto, 0)
        plen = max(self.length, self.min_length()) - self.hdr_len() - l4len
        l4 = self._l4(plen)
        if not self.frag:
            nxt, body = self._chain(self.ext, self.proto, l4)
            return [self._ip6(nxt, body)]
        # unfragmentable part: hop-by-hop only; then the fragment header
        front = [e for e in self.ext if e == 0]
        rest = [e for e in self.ext if e not in (0, 44)]
        _, frag_part = self._chain(rest, self.proto, l4)
        first_nxt = rest[0] if rest else self.proto
        cut = (8 * len(rest) + l4len + 8 + 7) // 8 * 8
        if cut >= len(frag_part):
            frag_part += b"\0" * (cut + 8 - len(frag_part))
        ident = 0x2000 + self.nonce
        pkts = []
        for off, chunk, more in ((0, frag_part[:cut], 1), (cut, frag_part[cut:], 0)):
            fh = struct.pack("!BBHI", first_nxt, 0, off | more, ident)
            nxt, body = self._chain(front, 44, fh + chunk)
            pkts.append(self._ip6(nxt, body))
        return pkts


def send(sock, pkt):
    err = None
    for b in pkt.wire():
        try:
            sock.sendto(b, (pkt.dst, 0))
        except OSError as e:
            err = err or e.errno
    return err


def received_key(proto, data, src):
    """(proto, source, nonce) of what a raw socket of `proto` received."""
    off = L4_HDR.get(proto, 0)
    if proto == socket.IPPROTO_TCP and len(data) >= 13:
        off = (data[12] >> 4) * 4
    if len(data) < off + PAYLOAD_MIN or data[off:off + 4] != b"\0\0\0\0":
        return None
    return (proto, a2i(src), struct.unpack("!I", data[off + 4:off + 8])[0])


def collect(socks, sock_owner, sock_proto, timeout, quiet):
    """netlib.collect for IPv6 raw sockets: {owner: set(keys)}."""
    got = {}
    start = time.monotonic()
    last = start
    while True:
        now = time.monotonic()
        wait = max(start + timeout - now, last + quiet - now)
        if wait <= 0:
            break
        r, _, _ = select.select(socks, [], [], wait)
        for sk in r:
            while True:
                try:
                    data, addr = sk.recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                k = received_key(sock_proto[sk.fileno()], data, addr[0].split("%")[0])
                if k is not None:
                    got.setdefault(sock_owner[sk.fileno()], set()).add(k)
                    last = time.monotonic()
    return got
