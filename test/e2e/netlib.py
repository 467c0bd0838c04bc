"""Helpers for the end-to-end differential tests (kernel_diff.py, ct_diff.py,
rulesets_diff.py).

Python 3 standard library only.  Provides

* throw-away network namespaces with unique names (the pid is in the name),
  always deleted again: atexit plus SIGINT/SIGTERM/SIGHUP/SIGQUIT handlers;
* entering a namespace from this very process (setns(2) through os.setns or
  ctypes), so that raw sockets are created once per namespace and reused: a
  socket stays in the namespace it was created in;
* the client - router - server topology of lib.sh, built in one "twin":

    cli (10.1.0.2) --veth-- (10.1.0.1) rtr (10.2.0.1) --veth-- (10.2.0.2) srv

  with extra local addresses on both ends (so that -s/-d rules and the
  packets have something to choose from), static neighbours (no ARP), and
  rp_filter=0, accept_local=1, accept_redirects=0 everywhere;
* a "star" topology (Star, Link): one firewall namespace whose interfaces
  carry the names a real ruleset uses (ppp0, wlan0, bond0.208, docker0, ...),
  each a veth to a namespace of its own;
* IPv4 packet crafting (TCP, UDP, ICMP, any other protocol; IP options;
  two-fragment datagrams; L4 headers cut short) for IP_HDRINCL raw sockets,
  and the parser that
  recognises a crafted packet when a receiving raw socket gets it back.

How verdicts are observed (design.md, "Observing verdicts"): a raw socket
(AF_INET, SOCK_RAW, proto) in the receiving namespace gets a copy of exactly
the packets that passed INPUT there, so "delivered" means "the raw socket of
the destination namespace got it".
"""

import atexit
import ctypes
import ctypes.util
import errno
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

CLONE_NEWNET = 0x40000000
NETNS_RUN_DIR = "/run/netns"

# ---------------------------------------------------------------------------
# Namespaces: creation, entering, cleanup
# ---------------------------------------------------------------------------

_NETNS = []          # names we created and still have to delete
_TMPDIRS = []        # temporary directories to remove
_CLOSERS = []        # callables run before the namespaces go (close sockets)
_HANDLERS = False
_libc = None


def _setns(fd):
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)
        return
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6",
                            use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


_HOME_FD = None


def _home_fd():
    global _HOME_FD
    if _HOME_FD is None:
        _HOME_FD = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    return _HOME_FD


class netns:
    """Context manager: run the body inside namespace NAME (this thread)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        home = _home_fd()
        fd = os.open(os.path.join(NETNS_RUN_DIR, self.name),
                     os.O_RDONLY | os.O_CLOEXEC)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        self.home = home
        return self

    def __exit__(self, *exc):
        _setns(self.home)
        return False


def cleanup_all():
    """Close registered sockets, delete every namespace and temp dir we made."""
    for fn in list(_CLOSERS):
        try:
            fn()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    _CLOSERS.clear()
    try:
        if _HOME_FD is not None:
            _setns(_HOME_FD)
    except OSError:
        pass
    for name in list(reversed(_NETNS)):
        netns_delete(name)
    for d in list(_TMPDIRS):
        shutil.rmtree(d, ignore_errors=True)
        _TMPDIRS.remove(d)


def install_cleanup():
    global _HANDLERS
    if _HANDLERS:
        return
    _HANDLERS = True
    _home_fd()
    atexit.register(cleanup_all)

    def handler(signum, _frame):
        # ignore further signals while cleaning up
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            try:
                signal.signal(s, signal.SIG_IGN)
            except (ValueError, OSError):
                pass
        cleanup_all()
        print(f"\ninterrupted by signal {signum}; namespaces removed",
              file=sys.stderr, flush=True)
        os._exit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, handler)


def at_cleanup(fn):
    _CLOSERS.append(fn)


def tempdir(prefix):
    install_cleanup()
    d = tempfile.mkdtemp(prefix=prefix)
    _TMPDIRS.append(d)
    return d


def netns_add(name):
    install_cleanup()
    _NETNS.append(name)      # registered first: deleted even if 'add' half-worked
    run(["ip", "netns", "add", name])
    return name


def netns_delete(name):
    """Delete a namespace we made before the end of the run."""
    subprocess.run(["ip", "netns", "delete", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    if name in _NETNS:
        _NETNS.remove(name)


class CmdError(RuntimeError):
    pass


def run(argv, input=None, env=None, check=True, timeout=60):
    p = subprocess.run(argv, input=input, capture_output=True, env=env,
                       timeout=timeout, check=False)
    if check and p.returncode != 0:
        raise CmdError(f"{' '.join(argv)}: exit {p.returncode}: "
                       f"{p.stderr.decode(errors='replace').strip()}")
    return p


def sysctl(name, value):
    """Write a sysctl of the current (entered) namespace."""
    path = "/proc/sys/" + name.replace(".", "/")
    with open(path, "w") as f:
        f.write(str(value))


# ---------------------------------------------------------------------------
# Addresses
# ---------------------------------------------------------------------------

def a2i(s):
    return struct.unpack("!I", socket.inet_aton(s))[0]


def i2a(i):
    return socket.inet_ntoa(struct.pack("!I", i & 0xffffffff))


def martian_src(i):
    """Sources the kernel drops on input whatever the firewall says."""
    top = i >> 24
    return top == 0 or top == 127 or top >= 224


# ---------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------

CLI_IP, RTR_IP1, RTR_IP2, SRV_IP = "10.1.0.2", "10.1.0.1", "10.2.0.1", "10.2.0.2"

# Extra local addresses, reachable through the router: on the interface
# (secondary addresses of the /24) and on lo (host routes in the router).
CLI_ETH_EXTRA = ["10.1.0.77"]
CLI_LO_EXTRA = ["10.1.1.1", "10.100.0.1", "192.168.1.10", "172.16.9.9",
                "100.64.3.3"]
SRV_ETH_EXTRA = ["10.2.0.3", "10.2.0.130"]
SRV_LO_EXTRA = ["10.2.5.5", "10.3.0.1", "192.168.200.1", "172.20.0.1",
                "8.8.4.4", "203.0.113.9"]

ROLES = ("cli", "rtr", "srv")
MC_IF = {"cli": CLI_IP, "rtr": RTR_IP2, "srv": SRV_IP}

# Destinations that are not a unicast address of the receiver, per (sender,
# receiver): subnet broadcasts and the all-hosts group, delivered locally
# (INPUT) by the receiver.
SPECIAL_DST = {
    ("rtr", "srv"): ["10.2.0.255", "224.0.0.1"],
    ("cli", "rtr"): ["10.1.0.255", "10.2.0.255", "224.0.0.1"],
}

MACS = {  # (role, ifname) -> MAC; twin letter goes into the 5th byte
    ("cli", "eth0"): "02:00:00:%02x:01:02",
    ("rtr", "eth0"): "02:00:00:%02x:01:01",
    ("rtr", "eth1"): "02:00:00:%02x:02:01",
    ("srv", "eth0"): "02:00:00:%02x:02:02",
}

# Raw receive sockets per namespace: every protocol the packets use.
OTHER_PROTOS = (47, 132, 253)
RECV_PROTOS = (socket.IPPROTO_ICMP, socket.IPPROTO_TCP, socket.IPPROTO_UDP) + OTHER_PROTOS


def local_addrs(role):
    """Addresses local to a role, reachable from the other namespaces."""
    if role == "cli":
        return [CLI_IP] + CLI_ETH_EXTRA + CLI_LO_EXTRA
    if role == "srv":
        return [SRV_IP] + SRV_ETH_EXTRA + SRV_LO_EXTRA
    return [RTR_IP1, RTR_IP2]


def all_topology_addrs():
    return local_addrs("cli") + local_addrs("rtr") + local_addrs("srv")


def ns_sysctls(forward, echo_replies=False):
    """The settings every test namespace gets (the current, entered one),
    before its interfaces exist so that they inherit 'default'."""
    for scope in ("all", "default"):
        sysctl(f"net.ipv4.conf.{scope}.rp_filter", 0)
        sysctl(f"net.ipv4.conf.{scope}.accept_local", 1)
        sysctl(f"net.ipv4.conf.{scope}.accept_redirects", 0)
        sysctl(f"net.ipv4.conf.{scope}.send_redirects", 0)
    sysctl("net.ipv4.ip_forward", 1 if forward else 0)
    # the kernel's replies (RST, port unreachable, echo reply) are
    # noise for the differential tests: keep them few
    sysctl("net.ipv4.icmp_ratelimit", 1000)
    sysctl("net.ipv4.icmp_echo_ignore_all", 0 if echo_replies else 1)
    # a first fragment whose second one was dropped must not wait
    # long for a later datagram that reuses its IP id
    sysctl("net.ipv4.ipfrag_time", 3)


def ns_sockets(mc_addr, recv_protos):
    """In the current (entered) namespace, once its interfaces exist: the
    per-interface sysctls again, then a raw IP_HDRINCL socket to send from
    and one non-blocking raw socket per protocol to receive with."""
    for dev in os.listdir("/proc/sys/net/ipv4/conf"):
        # by path: interface names may contain dots (bond0.208)
        for name in ("rp_filter", "accept_redirects"):
            with open(f"/proc/sys/net/ipv4/conf/{dev}/{name}", "w") as f:
                f.write("0")
    sk = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    # broadcast and multicast destinations (the chain selector
    # special-cases them): allowed, out of the interface that
    # faces the receiver, no copy looped back to the sender
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    sk.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(mc_addr))
    sk.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    socks = []
    for proto in recv_protos:
        r = socket.socket(socket.AF_INET, socket.SOCK_RAW, proto)
        r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        r.setblocking(False)
        socks.append(r)
    return sk, socks


class Twin:
    """One client - router - server topology.  label: 'a', 'b', ..."""

    roles = ROLES

    def __init__(self, label, index):
        self.label = label
        pid = os.getpid()
        self.ns = {r: f"bipt-kd{pid}-{label}-{r}" for r in ROLES}
        self.idx = index
        self.send_sock = {}
        self.recv_socks = {}      # role -> list of sockets
        self.sock_role = {}       # fileno -> role

    def mac(self, role, ifname):
        return MACS[(role, ifname)] % (0x10 + self.idx)

    def build(self):
        ns = self.ns
        for r in ROLES:
            netns_add(ns[r])
        # sysctls first, so that new interfaces inherit 'default'
        for r in ROLES:
            with netns(ns[r]):
                ns_sysctls(forward=r == "rtr")
        c, rt, s = ns["cli"], ns["rtr"], ns["srv"]
        cmds = [
            ["ip", "-n", c, "link", "add", "eth0", "address", self.mac("cli", "eth0"),
             "type", "veth", "peer", "name", "eth0", "netns", rt,
             "address", self.mac("rtr", "eth0")],
            ["ip", "-n", rt, "link", "add", "eth1", "address", self.mac("rtr", "eth1"),
             "type", "veth", "peer", "name", "eth0", "netns", s,
             "address", self.mac("srv", "eth0")],
            ["ip", "-n", c, "addr", "add", f"{CLI_IP}/24", "dev", "eth0"],
            ["ip", "-n", rt, "addr", "add", f"{RTR_IP1}/24", "dev", "eth0"],
            ["ip", "-n", rt, "addr", "add", f"{RTR_IP2}/24", "dev", "eth1"],
            ["ip", "-n", s, "addr", "add", f"{SRV_IP}/24", "dev", "eth0"],
        ]
        for a in CLI_ETH_EXTRA:
            cmds.append(["ip", "-n", c, "addr", "add", f"{a}/24", "dev", "eth0"])
        for a in SRV_ETH_EXTRA:
            cmds.append(["ip", "-n", s, "addr", "add", f"{a}/24", "dev", "eth0"])
        for a in CLI_LO_EXTRA:
            cmds.append(["ip", "-n", c, "addr", "add", f"{a}/32", "dev", "lo"])
        for a in SRV_LO_EXTRA:
            cmds.append(["ip", "-n", s, "addr", "add", f"{a}/32", "dev", "lo"])
        for n, dev in ((c, "lo"), (c, "eth0"), (rt, "lo"), (rt, "eth0"),
                       (rt, "eth1"), (s, "lo"), (s, "eth0")):
            cmds.append(["ip", "-n", n, "link", "set", dev, "up"])
        cmds += [
            ["ip", "-n", c, "route", "add", "default", "via", RTR_IP1],
            ["ip", "-n", s, "route", "add", "default", "via", RTR_IP2],
        ]
        for a in CLI_LO_EXTRA:
            cmds.append(["ip", "-n", rt, "route", "add", f"{a}/32", "via", CLI_IP])
        for a in SRV_LO_EXTRA:
            cmds.append(["ip", "-n", rt, "route", "add", f"{a}/32", "via", SRV_IP])
        # static neighbours: no ARP, no queueing of the first packets
        for ip in [CLI_IP] + CLI_ETH_EXTRA:
            cmds.append(["ip", "-n", rt, "neigh", "replace", ip, "lladdr",
                         self.mac("cli", "eth0"), "dev", "eth0", "nud", "permanent"])
        for ip in [SRV_IP] + SRV_ETH_EXTRA:
            cmds.append(["ip", "-n", rt, "neigh", "replace", ip, "lladdr",
                         self.mac("srv", "eth0"), "dev", "eth1", "nud", "permanent"])
        cmds.append(["ip", "-n", c, "neigh", "replace", RTR_IP1, "lladdr",
                     self.mac("rtr", "eth0"), "dev", "eth0", "nud", "permanent"])
        cmds.append(["ip", "-n", s, "neigh", "replace", RTR_IP2, "lladdr",
                     self.mac("rtr", "eth1"), "dev", "eth0", "nud", "permanent"])
        for cmd in cmds:
            run(cmd)
        for r in ROLES:
            with netns(ns[r]):
                self.send_sock[r], self.recv_socks[r] = ns_sockets(MC_IF[r], RECV_PROTOS)
                for sk in self.recv_socks[r]:
                    self.sock_role[sk.fileno()] = r
        at_cleanup(self.close_sockets)

    def close_sockets(self):
        for sk in self.send_sock.values():
            sk.close()
        for socks in self.recv_socks.values():
            for sk in socks:
                sk.close()
        self.send_sock, self.recv_socks = {}, {}

    def all_recv_socks(self):
        return [sk for socks in self.recv_socks.values() for sk in socks]

    def exec_argv(self, role, argv):
        return ["ip", "netns", "exec", self.ns[role]] + list(argv)


class Link:
    """One interface of the firewall of a Star and the namespace behind it.

    ifname  the interface's name in the firewall ("ppp0", "bond0.208", ...)
    role    the name of the namespace behind it (its end is called eth0)
    fw_addr the firewall's address on it, "a.b.c.d/len"
    addrs   the peer's addresses on its eth0 ("a.b.c.d/len"), the first one
            primary (the peer's default route goes to fw_addr)
    lo      further peer addresses (on its lo), routed to it by the firewall
    routes  prefixes the firewall routes to the peer besides ("0.0.0.0/0")
    mac     the peer's MAC (for -m mac); fw_mac the firewall's on this link
    macs    {address: MAC}: addresses of the peer that sit on a macvlan of
            their own with that MAC (a second host on the same segment, as
            -m mac rules expect), with source routing so that packets from
            them leave with it
    bridge  True: ifname is a bridge of the firewall (docker0) and the veth
            to the peer one of its ports; links with the same ifname share
            the bridge (fw_addr of the first one), each peer on a port
    """

    def __init__(self, ifname, role, fw_addr, addrs, lo=(), routes=(), mac=None,
                 macs=None, bridge=False):
        self.ifname, self.role, self.fw_addr = ifname, role, fw_addr
        self.addrs, self.lo, self.routes = list(addrs), list(lo), list(routes)
        self.mac = mac
        self.macs = dict(macs or {})
        self.bridge = bridge
        self.fw_mac = None

    def mac_of(self, ip):
        return self.macs.get(ip, self.mac)

    def fw_ip(self):
        return self.fw_addr.split("/")[0]

    def peer_ips(self):
        return [a.split("/")[0] for a in self.addrs] + list(self.lo)


class Star:
    """A firewall namespace ("fw") with named interfaces, each a veth to a
    namespace of its own: the shape of a real router whose rules name
    ppp0, wlan0, bond0.208, docker0, ...  Same interface as Twin (ns,
    roles, send_sock, recv_socks, sock_role, exec_argv), plus an AF_PACKET
    socket per peer to send frames with any source MAC, and destroy().
    Static neighbours everywhere (no ARP); the firewall forwards."""

    def __init__(self, tag, label, links, recv_protos=RECV_PROTOS):
        self.label, self.links = label, list(links)
        self.roles = ("fw",) + tuple(lk.role for lk in self.links)
        pid = os.getpid()
        self.ns = {r: f"bipt-{tag}{pid}-{label}-{r}" for r in self.roles}
        self.recv_protos = recv_protos
        self.send_sock, self.recv_socks, self.sock_role = {}, {}, {}
        self.l2_sock = {}
        self.link_of = {lk.role: lk for lk in self.links}
        first = {}
        for i, lk in enumerate(self.links):
            lk.mac = lk.mac or f"02:00:00:00:{i + 1:02x}:02"
            lk.fw_mac = f"02:00:00:00:{i + 1:02x}:01"
            if lk.bridge:                  # the peers see the bridge's MAC
                lk.fw_mac = first.setdefault(lk.ifname, lk).fw_mac

    def build(self):
        for r in self.roles:
            netns_add(self.ns[r])
            with netns(self.ns[r]):
                ns_sysctls(forward=r == "fw", echo_replies=r == "fw")
                if r == "fw":
                    # the firewall answers every packet (REJECT, its stack's
                    # errors): no ICMP rate limit, as bpf-iptables' REJECT
                    sysctl("net.ipv4.icmp_ratelimit", 0)
                    sysctl("net.ipv4.icmp_ratemask", 0)
        fw = self.ns["fw"]
        cmds = []
        bridges = set()
        for n, lk in enumerate(self.links):
            p = self.ns[lk.role]
            if not lk.bridge:
                cmds += [["ip", "-n", fw, "link", "add", lk.ifname, "address", lk.fw_mac,
                          "type", "veth", "peer", "name", "eth0", "netns", p,
                          "address", lk.mac],
                         ["ip", "-n", fw, "addr", "add", lk.fw_addr, "dev", lk.ifname],
                         ["ip", "-n", fw, "link", "set", lk.ifname, "up"]]
            else:
                if lk.ifname not in bridges:
                    bridges.add(lk.ifname)
                    cmds += [["ip", "-n", fw, "link", "add", lk.ifname, "address",
                              lk.fw_mac, "type", "bridge", "stp_state", "0"],
                             ["ip", "-n", fw, "addr", "add", lk.fw_addr, "dev", lk.ifname],
                             ["ip", "-n", fw, "link", "set", lk.ifname, "up"]]
                port = f"port{n}"
                cmds += [["ip", "-n", fw, "link", "add", port, "type", "veth", "peer",
                          "name", "eth0", "netns", p, "address", lk.mac],
                         ["ip", "-n", fw, "link", "set", port, "master", lk.ifname],
                         ["ip", "-n", fw, "link", "set", port, "up"]]
            cmds += [["ip", "-n", p, "link", "set", "lo", "up"],
                     ["ip", "-n", p, "link", "set", "eth0", "up"]]
            for a in lk.addrs:
                if a.split("/")[0] not in lk.macs:
                    cmds.append(["ip", "-n", p, "addr", "add", a, "dev", "eth0"])
            for n, (a, mac) in enumerate(sorted(lk.macs.items())):
                mv, table = f"mv{n}", str(100 + n)
                cmds += [["ip", "-n", p, "link", "add", mv, "link", "eth0", "address", mac,
                          "type", "macvlan", "mode", "bridge"],
                         ["ip", "-n", p, "link", "set", mv, "up"],
                         ["ip", "-n", p, "addr", "add", f"{a}/32", "dev", mv],
                         ["ip", "-n", p, "rule", "add", "from", a, "table", table],
                         ["ip", "-n", p, "route", "add", lk.fw_ip(), "dev", mv,
                          "table", table],
                         ["ip", "-n", p, "route", "add", "default", "via", lk.fw_ip(),
                          "dev", mv, "table", table],
                         ["ip", "-n", p, "neigh", "replace", lk.fw_ip(), "lladdr",
                          lk.fw_mac, "dev", mv, "nud", "permanent"]]
            for a in lk.lo:
                cmds.append(["ip", "-n", p, "addr", "add", f"{a}/32", "dev", "lo"])
            primary = lk.addrs[0].split("/")[0]
            cmds.append(["ip", "-n", p, "route", "add", "default", "via", lk.fw_ip()])
            for a in lk.lo:
                cmds.append(["ip", "-n", fw, "route", "add", f"{a}/32", "via", primary])
            for net in lk.routes:
                cmds.append(["ip", "-n", fw, "route", "add", net, "via", primary])
            for a in lk.addrs:
                ip = a.split("/")[0]
                cmds.append(["ip", "-n", fw, "neigh", "replace", ip, "lladdr",
                             lk.mac_of(ip), "dev", lk.ifname, "nud", "permanent"])
            cmds.append(["ip", "-n", p, "neigh", "replace", lk.fw_ip(), "lladdr",
                         lk.fw_mac, "dev", "eth0", "nud", "permanent"])
        cmds.append(["ip", "-n", fw, "link", "set", "lo", "up"])
        for cmd in cmds:
            run(cmd)
        for r in self.roles:
            with netns(self.ns[r]):
                mc = self.links[0].fw_ip() if r == "fw" else \
                    self.link_of[r].addrs[0].split("/")[0]
                self.send_sock[r], self.recv_socks[r] = ns_sockets(mc, self.recv_protos)
                for sk in self.recv_socks[r]:
                    self.sock_role[sk.fileno()] = r
                if r != "fw":
                    l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
                    l2.bind(("eth0", 0))
                    self.l2_sock[r] = l2
        at_cleanup(self.close_sockets)

    def send_frame(self, role, src_mac, ip_bytes):
        """Send an IPv4 packet from peer `role` to the firewall in a frame
        whose source MAC is src_mac."""
        lk = self.link_of[role]
        hdr = bytes.fromhex(lk.fw_mac.replace(":", "")) + \
            bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00"
        self.l2_sock[role].send(hdr + ip_bytes)

    def close_sockets(self):
        for sk in list(self.send_sock.values()) + list(self.l2_sock.values()):
            sk.close()
        for socks in self.recv_socks.values():
            for sk in socks:
                sk.close()
        self.send_sock, self.recv_socks, self.l2_sock = {}, {}, {}

    def destroy(self):
        self.close_sockets()
        for r in self.roles:
            netns_delete(self.ns[r])

    def all_recv_socks(self):
        return [sk for socks in self.recv_socks.values() for sk in socks]

    def exec_argv(self, role, argv):
        return ["ip", "netns", "exec", self.ns[role]] + list(argv)


# ---------------------------------------------------------------------------
# Packets
# ---------------------------------------------------------------------------

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


L4_HDR = {socket.IPPROTO_TCP: 20, socket.IPPROTO_UDP: 8, socket.IPPROTO_ICMP: 8}
PAYLOAD_MIN = 8   # 4 zero bytes (an ICMP error quoting "IPv0" is ignored) + nonce

TCP_FLAG_NAMES = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"]


class Packet:
    """One test packet (or a two-fragment datagram)."""

    __slots__ = ("proto", "src", "dst", "sport", "dport", "flags", "itype",
                 "icode", "length", "frag", "options", "ipid", "nonce",
                 "sender", "receiver", "trunc")

    def __init__(self, proto, src, dst, sender, receiver, sport=0, dport=0,
                 flags=0, itype=0, icode=0, length=0, frag=False, options=False):
        self.proto, self.src, self.dst = proto, src, dst
        self.sender, self.receiver = sender, receiver
        self.sport, self.dport, self.flags = sport, dport, flags
        self.itype, self.icode = itype, icode
        self.length, self.frag, self.options = length, frag, options
        self.ipid = self.nonce = 0
        self.trunc = None   # or the number of L4 header bytes sent (no payload)

    def hdr_len(self):
        return 24 if self.options else 20

    def min_length(self):
        return self.hdr_len() + L4_HDR.get(self.proto, 0) + PAYLOAD_MIN

    def key(self):
        nonce = None if self.trunc is not None else self.nonce
        return (self.proto, a2i(self.src), a2i(self.dst), self.ipid, nonce)

    def describe(self):
        p = {1: "icmp", 6: "tcp", 17: "udp"}.get(self.proto, f"proto {self.proto}")
        s = f"{p} {self.src}"
        if self.proto in (6, 17):
            s += f":{self.sport}"
        s += f" -> {self.dst}"
        if self.proto in (6, 17):
            s += f":{self.dport}"
        if self.proto == 6:
            names = [n for i, n in enumerate(TCP_FLAG_NAMES) if self.flags >> i & 1]
            s += f" flags {','.join(names) or 'none'} (0x{self.flags:02x})"
        if self.proto == 1:
            s += f" type {self.itype} code {self.icode}"
        if self.trunc is not None:
            s += f", TRUNCATED: only {self.trunc} of its {L4_HDR[self.proto]} header bytes"
            s += f", IP total length {self.hdr_len() + self.trunc}"
        else:
            s += f", IP total length {self.length}"
        if self.options:
            s += ", IP options (4 bytes NOP/EOL)"
        if self.frag:
            s += ", sent as 2 fragments (offset 0 + MF, then a non-first one)"
        s += f"; sent from {self.sender}, delivered to {self.receiver}"
        s += f" [ip id {self.ipid}]"
        return s

    def wire(self):
        """The bytes to send: one or two IP packets."""
        hl = self.hdr_len()
        l4len = L4_HDR.get(self.proto, 0)
        plen = max(self.length, self.min_length()) - hl - l4len
        payload = b"\0\0\0\0" + struct.pack("!I", self.nonce) + b"\0" * (plen - PAYLOAD_MIN)
        src, dst = socket.inet_aton(self.src), socket.inet_aton(self.dst)
        if self.proto == socket.IPPROTO_TCP:
            hdr = struct.pack("!HHIIBBHHH", self.sport, self.dport, 0x01020304 ^ self.nonce,
                              0, 5 << 4, self.flags & 0xff, 8192, 0, 0)
            pseudo = src + dst + struct.pack("!BBH", 0, 6, len(hdr) + len(payload))
            c = csum(pseudo + hdr + payload)
            l4 = hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload
        elif self.proto == socket.IPPROTO_UDP:
            ulen = 8 + len(payload)
            hdr = struct.pack("!HHHH", self.sport, self.dport, ulen, 0)
            pseudo = src + dst + struct.pack("!BBH", 0, 17, ulen)
            c = csum(pseudo + hdr + payload) or 0xffff
            l4 = hdr[:6] + struct.pack("!H", c) + payload
        elif self.proto == socket.IPPROTO_ICMP:
            hdr = struct.pack("!BBHHH", self.itype, self.icode, 0, self.nonce & 0xffff, 1)
            c = csum(hdr + payload)
            l4 = hdr[:2] + struct.pack("!H", c) + hdr[4:] + payload
        else:
            l4 = payload
        if self.trunc is not None:
            return [self._ip(l4[:self.trunc], 0, False)]
        if not self.frag:
            return [self._ip(l4, 0, False)]
        # first fragment: the whole L4 header and at least 8 payload bytes
        cut = (l4len + 8 + 7) // 8 * 8
        if cut >= len(l4):
            l4 += b"\0" * (cut + 8 - len(l4))
        return [self._ip(l4[:cut], 0, True), self._ip(l4[cut:], cut // 8, False)]

    def _ip(self, body, frag_off8, more):
        hl = self.hdr_len()
        opts = b"\x01\x01\x01\x00" if self.options else b""
        fo = frag_off8 | (0x2000 if more else 0)
        h = struct.pack("!BBHHHBBH4s4s", 0x40 | (hl // 4), 0, hl + len(body), self.ipid,
                        fo, 64, self.proto, 0, socket.inet_aton(self.src),
                        socket.inet_aton(self.dst)) + opts
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        return h + body


def received_key(data):
    """(proto, src, dst, ip id, nonce) of a packet a raw socket received, or None."""
    if len(data) < 20 or data[0] >> 4 != 4:
        return None
    hl = (data[0] & 15) * 4
    proto = data[9]
    ipid = struct.unpack("!H", data[4:6])[0]
    src, dst = struct.unpack("!II", data[12:20])
    l4 = L4_HDR.get(proto, 0)
    if len(data) < hl + l4:
        return (proto, src, dst, ipid, None)       # a truncated test packet
    if proto == socket.IPPROTO_TCP:
        l4 = (data[hl + 12] >> 4) * 4
    off = hl + l4
    if len(data) < off + PAYLOAD_MIN or data[off:off + 4] != b"\0\0\0\0":
        return None
    nonce = struct.unpack("!I", data[off + 4:off + 8])[0]
    return (proto, src, dst, ipid, nonce)


def drain(socks):
    for sk in socks:
        while True:
            try:
                sk.recv(65535)
            except (BlockingIOError, InterruptedError):
                break


def collect(socks, sock_owner, timeout, quiet, key=received_key):
    """Read every socket until nothing arrived for `quiet` seconds (and at
    least `timeout` seconds passed).  Returns {owner: set(keys)}; key(data)
    gives a packet's key, a list of keys, or None (not ours)."""
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
                    data = sk.recv(65535)
                except (BlockingIOError, InterruptedError):
                    break
                k = key(data)
                if k is not None:
                    got.setdefault(sock_owner[sk.fileno()], set()).update(
                        k if isinstance(k, list) else [k])
                    last = time.monotonic()
    return got


def send(sock, pkt):
    """Send a crafted packet.  Returns None or the errno of the first failure
    (iptables' OUTPUT DROP makes sendto() fail with EPERM)."""
    err = None
    for b in pkt.wire():
        try:
            sock.sendto(b, (pkt.dst, 0))
        except OSError as e:
            err = err or e.errno
    return err


def errname(e):
    return errno.errorcode.get(e, str(e)) if e else "ok"
