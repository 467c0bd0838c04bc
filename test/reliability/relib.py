"""Shared by the reliability tests (swap.py, concurrency.py, crash.py).

Python 3 standard library only; namespaces and their cleanup come from
test/e2e/netlib.py (unique names with the pid, removed on every exit).

    src (10.1.0.2) --veth-- (10.1.0.1) fw (10.2.0.1) --veth-- (10.2.0.2) dst

fw runs bpf-iptables (INPUT for 10.1.0.1, FORWARD src -> dst, OUTPUT fw -> dst),
with its state in a temporary directory of the test's own.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import netlib  # noqa: E402  (path set just above)

SRC_IP, FW_IP1, FW_IP2, DST_IP = "10.1.0.2", "10.1.0.1", "10.2.0.1", "10.2.0.2"


def need_root():
    if os.geteuid() != 0:
        print("FAIL: the reliability tests need root (network namespaces, BPF)",
              file=sys.stderr)
        sys.exit(1)


class Topo:
    """The three namespaces; bpf-iptables commands run in fw."""

    def __init__(self, label, bindir):
        need_root()
        netlib.install_cleanup()
        self.bin = bindir
        pid = os.getpid()
        self.ns = {r: f"rel-{label}-{r}-{pid}" for r in ("src", "fw", "dst")}
        self.state = netlib.tempdir(f"rel-{label}-state-")
        self.env = dict(os.environ, BPF_IPTABLES_STATE_DIR=self.state)
        for name in self.ns.values():
            netlib.netns_add(name)
            netlib.run(["ip", "-n", name, "link", "set", "lo", "up"])
        s, f, d = self.ns["src"], self.ns["fw"], self.ns["dst"]
        netlib.run(["ip", "link", "add", f"rs{pid}", "netns", s, "type", "veth",
                    "peer", "name", f"rf{pid}", "netns", f])
        netlib.run(["ip", "link", "add", f"rg{pid}", "netns", f, "type", "veth",
                    "peer", "name", f"rd{pid}", "netns", d])
        for ns, old, new, addr in ((s, f"rs{pid}", "eth0", SRC_IP),
                                   (f, f"rf{pid}", "eth0", FW_IP1),
                                   (f, f"rg{pid}", "eth1", FW_IP2),
                                   (d, f"rd{pid}", "eth0", DST_IP)):
            netlib.run(["ip", "-n", ns, "link", "set", old, "name", new])
            netlib.run(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", new])
            netlib.run(["ip", "-n", ns, "link", "set", new, "up"])
        netlib.run(["ip", "-n", s, "route", "add", "default", "via", FW_IP1])
        netlib.run(["ip", "-n", d, "route", "add", "default", "via", FW_IP2])
        netlib.run(["ip", "netns", "exec", f, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
        # static neighbours: no ARP needed while a ruleset is half-way anything
        mac = {}
        for ns, dev in ((s, "eth0"), (f, "eth0"), (f, "eth1"), (d, "eth0")):
            out = netlib.run(["ip", "-n", ns, "-j", "link", "show", "dev", dev]).stdout
            mac[(ns, dev)] = json.loads(out)[0]["address"]
        for ns, dev, ip, peer in ((s, "eth0", FW_IP1, (f, "eth0")),
                                  (f, "eth0", SRC_IP, (s, "eth0")),
                                  (f, "eth1", DST_IP, (d, "eth0")),
                                  (d, "eth0", FW_IP2, (f, "eth1"))):
            netlib.run(["ip", "-n", ns, "neigh", "replace", ip, "lladdr", mac[peer],
                        "dev", dev, "nud", "permanent"])

    def cmd(self, role, argv, **kw):
        return ["ip", "netns", "exec", self.ns[role]] + list(argv)

    def bpt(self, prog, *args, input=None, env=None, check=True, timeout=120):
        """Run bin/PROG ARGS in fw; returns the CompletedProcess (text)."""
        e = dict(self.env, **(env or {}))
        p = subprocess.run(self.cmd("fw", [os.path.join(self.bin, prog)] + list(args)),
                           input=input, capture_output=True, text=True, env=e,
                           timeout=timeout, check=False)
        if check and p.returncode != 0:
            raise netlib.CmdError(f"{prog} {' '.join(args)}: exit {p.returncode}: "
                                  f"{p.stderr.strip()}")
        return p


def snmp(ns, group, field):
    """A counter of /proc/net/snmp in namespace ns (e.g. Udp RcvbufErrors)."""
    with netlib.netns(ns):
        with open("/proc/net/snmp") as f:
            lines = [ln.split() for ln in f if ln.startswith(group + ":")]
    return int(lines[1][lines[0].index(field)])


class Report:
    """Named checks; prints FAIL lines and a summary, exit code."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {what}", flush=True)
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1
