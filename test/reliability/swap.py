#!/usr/bin/env python3
"""Atomic updates under load (issue 6, promise 1).

A UDP flood runs through the firewall namespace while bpf-iptables-restore
replaces its ruleset, again and again, between two versions A and B. Every
packet carries its flow and a sequence number; the receivers count them.

    src --- fw --- dst      INPUT: src -> fw, FORWARD: src -> dst, OUTPUT: fw -> dst

Per chain four flows (UDP destination ports):
    x01  accepted by A and by B    every packet must arrive, none rejected
    x02  dropped by A and by B     no packet may arrive or be rejected
    x03  A accepts, B REJECTs      each packet arrives or is rejected, exactly one
    x04  A REJECTs, B accepts      of the two (a REJECT answers with an ICMP error
                                   quoting the packet: its flow and number)
A and B differ in rule order, policies, size (filler rules: B spans more
bit-vector words) and shape (B's FORWARD goes through a user chain), so a packet
that saw part of A and part of B (a field lookup of one, the slots of the other)
would be judged wrongly in the first two classes and by neither in the last two.

Then, with the flood stopped, A is restored once more and a known burst is sent:
every rule counter of A must be exactly what the burst makes it.

Losses that are not the firewall's (socket buffers, veth queues) are read from
the kernel's counters and reported; the sending rate is kept well below them.

usage: swap.py --bin BUILD_DIR [--ingress xdp|tc] [--swaps N] [--rate PPS] [--spare-keep B]
"""

import argparse
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True     # generated files never go to the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relib  # noqa: E402
from relib import netlib, SRC_IP, FW_IP1, DST_IP  # noqa: E402

MAGIC = b"RELS"
SPORT = 40000
CHAINS = {"INPUT": 5000, "FORWARD": 6000, "OUTPUT": 7000}
ACC, DRP, REJ = "ACCEPT", "DROP", "REJECT"
# class (port offset) -> (verdict in A, verdict in B)
CLASSES = {1: (ACC, ACC), 2: (DRP, DRP), 3: (ACC, REJ), 4: (REJ, ACC)}


def filler(chain, n):
    # distinct, never matching our flows (tcp), not groupable (ports differ)
    return [f"-A {chain} -s 192.0.2.{i % 250 + 1}/32 -p tcp --dport {1000 + i} -j DROP"
            for i in range(n)]


def version_a():
    r = ["*filter", ":INPUT DROP [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]",
         "-A INPUT -p icmp -j ACCEPT"]
    for chain, base in CHAINS.items():
        for k in (2, 1, 3, 4):
            r.append(f"-A {chain} -p udp --dport {base + k} -j {CLASSES[k][0]}")
    r += ["-A OUTPUT -p udp -j DROP", "COMMIT"]
    return "\n".join(r) + "\n"


def version_b():
    b = CHAINS
    r = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT DROP [0:0]",
         ":fwd - [0:0]", "-A INPUT -p icmp -j ACCEPT"]
    r += filler("INPUT", 80)
    r += [f"-A INPUT -p udp --dport {b['INPUT'] + k} -j {CLASSES[k][1]}" for k in (3, 1, 4)]
    r += ["-A INPUT -p udp -j DROP",
          f"-A FORWARD -d {DST_IP}/32 -j fwd", "-A FORWARD -j DROP"]
    r += [f"-A fwd -p udp --dport {b['FORWARD'] + k} -j {CLASSES[k][1]}" for k in (3, 2, 4, 1)]
    r += filler("OUTPUT", 80)
    r += [f"-A OUTPUT -p udp --dport {b['OUTPUT'] + k} -j {CLASSES[k][1]}" for k in (1, 4, 3)]
    r.append("COMMIT")
    return "\n".join(r) + "\n"


class Flow:
    def __init__(self, chain, k):
        self.chain, self.k = chain, k
        self.port = CHAINS[chain] + k
        self.sent = 0
        self.delivered = bytearray()
        self.rejected = bytearray()

    def mark(self, arr, seq):
        if seq >= len(arr):
            arr.extend(bytes(max(seq + 1 - len(arr), 65536)))
        if arr[seq] < 255:
            arr[seq] += 1


class Traffic:
    """Senders (src, fw) and receivers (UDP in fw and dst, raw ICMP in src and fw)."""

    def __init__(self, topo):
        self.flows = {f.port: f for f in (Flow(c, k) for c in CHAINS for k in CLASSES)}
        self.socks = []
        with netlib.netns(topo.ns["src"]):
            self.tx_src = self._udp(("0.0.0.0", SPORT))
            self.icmp_src = self._raw()
        with netlib.netns(topo.ns["fw"]):
            self.tx_fw = self._udp(("0.0.0.0", SPORT))
            self.icmp_fw = self._raw()
            self.rx = [self._udp(("0.0.0.0", CHAINS["INPUT"] + k)) for k in CLASSES]
        with netlib.netns(topo.ns["dst"]):
            self.rx += [self._udp(("0.0.0.0", CHAINS[c] + k)) for c in ("FORWARD", "OUTPUT")
                        for k in CLASSES]
        netlib.at_cleanup(self.close)
        self.stop_rx = threading.Event()
        self.rx_thread = threading.Thread(target=self._receive, daemon=True)
        self.rx_thread.start()

    def _udp(self, addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, 33, 1 << 24)     # SO_RCVBUFFORCE
        s.bind(addr)
        s.setblocking(False)
        self.socks.append(s)
        return s

    def _raw(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.setsockopt(socket.SOL_SOCKET, 33, 1 << 24)
        s.setblocking(False)
        self.socks.append(s)
        return s

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []

    def _receive(self):
        udp = set(self.rx)
        icmp = (self.icmp_src, self.icmp_fw)
        poll = select.poll()
        for s in list(udp) + list(icmp):
            poll.register(s, select.POLLIN)
        fds = {s.fileno(): s for s in list(udp) + list(icmp)}
        while not self.stop_rx.is_set():
            for fd, _ in poll.poll(50):
                s = fds[fd]
                while True:
                    try:
                        data = s.recv(2048)
                    except BlockingIOError:
                        break
                    if s in udp:
                        self._udp_in(data)
                    else:
                        self._icmp_in(data)

    def _udp_in(self, data):
        if len(data) >= 10 and data[:4] == MAGIC:
            port, seq = struct.unpack_from("!HI", data, 4)
            f = self.flows.get(port)
            if f:
                f.mark(f.delivered, seq)

    def _icmp_in(self, data):
        ihl = (data[0] & 15) * 4
        if len(data) < ihl + 8 + 20 or data[ihl] != 3:      # destination unreachable
            return
        q = data[ihl + 8:]
        qihl = (q[0] & 15) * 4
        if q[9] != socket.IPPROTO_UDP or len(q) < qihl + 8 + 10:
            return
        dport = struct.unpack_from("!H", q, qihl + 2)[0]
        pl = q[qihl + 8:]
        if pl[:4] != MAGIC:
            return
        port, seq = struct.unpack_from("!HI", pl, 4)
        f = self.flows.get(port)
        if f and port == dport:
            f.mark(f.rejected, seq)

    def _send_one(self, f):
        data = MAGIC + struct.pack("!HI", f.port, f.sent) + bytes(22)
        if f.chain == "OUTPUT":
            self.tx_fw.sendto(data, (DST_IP, f.port))
        else:
            self.tx_src.sendto(data, (FW_IP1 if f.chain == "INPUT" else DST_IP, f.port))
        f.sent += 1

    def flood(self, rate, stop):
        """Send round-robin over the flows at about `rate` packets/s until stop is set."""
        flows = list(self.flows.values())
        t0 = time.monotonic()
        n = 0
        while not stop.is_set():
            due = int((time.monotonic() - t0) * rate)
            while n < due:
                try:
                    self._send_one(flows[n % len(flows)])
                except BlockingIOError:
                    break
                n += 1
            time.sleep(0.001)

    def burst(self, per_flow):
        for _ in range(per_flow):
            for f in self.flows.values():
                self._send_one(f)
            time.sleep(0.0005)

    def settle(self):
        time.sleep(1.0)

    def snapshot(self):
        return {p: (f.sent, bytes(f.delivered), bytes(f.rejected))
                for p, f in self.flows.items()}


def judge(flow, first, sent, delivered, rejected, only=None):
    """Misjudged packets of flow among sequence numbers [first, sent): a list of
    (seq, why). only: 'A' when A alone was in force."""
    va, vb = CLASSES[flow.k]
    bad = []
    for seq in range(first, sent):
        d = delivered[seq] if seq < len(delivered) else 0
        r = rejected[seq] if seq < len(rejected) else 0
        allowed = {(1, 0) if v == ACC else (0, 1) if v == REJ else (0, 0)
                   for v in ((va,) if only == "A" else (va, vb))}
        if (d, r) not in allowed:
            bad.append((seq, f"delivered {d}x, rejected {r}x"))
    return bad


def iface_drops(topo):
    """rx/tx drops of the four veth ends (not the firewall's: XDP_DROP and tc drops
    are not counted there)."""
    tot = 0
    for role, devs in (("src", ("eth0",)), ("fw", ("eth0", "eth1")), ("dst", ("eth0",))):
        for dev in devs:
            out = netlib.run(["ip", "-n", topo.ns[role], "-s", "-j", "link", "show", "dev",
                              dev]).stdout
            st = json.loads(out)[0]["stats64"]
            tot += st["rx"]["dropped"] + st["tx"]["dropped"]
    return tot


def kernel_losses(topo):
    """Packets the kernel lost outside the firewall: UDP/raw receive buffers."""
    n = 0
    for role in ("src", "fw", "dst"):
        n += relib.snmp(topo.ns[role], "Udp", "RcvbufErrors")
        n += relib.snmp(topo.ns[role], "Udp", "InErrors")
        with netlib.netns(topo.ns[role]):
            with open("/proc/net/raw") as f:
                n += sum(int(ln.split()[-1]) for ln in list(f)[1:])
    return n


def save_counters(topo):
    """{(chain, rule text): packets} and {chain: policy packets} from save -c."""
    out = topo.bpt("bpf-iptables-save", "-c").stdout
    rules, pol = {}, {}
    for ln in out.splitlines():
        if ln.startswith(":"):
            name, _, ctr = ln[1:].split()[:3]
            pol[name] = int(ctr.strip("[]").split(":")[0])
        elif ln.startswith("["):
            ctr, rest = ln.split(" ", 1)
            rules[rest] = int(ctr.strip("[]").split(":")[0])
    return rules, pol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ingress", default="xdp", choices=("xdp", "tc"))
    ap.add_argument("--swaps", type=int, default=int(os.environ.get("REL_SWAPS", 500)))
    ap.add_argument("--rate", type=int, default=int(os.environ.get("REL_RATE", 8000)),
                    help="packets per second, all flows together")
    ap.add_argument("--burst", type=int, default=50, help="final burst, packets per flow")
    ap.add_argument("--spare-keep", type=int, default=None,
                    help="BPF_IPTABLES_SPARE_KEEP (1: every switch drops the generation it "
                         "leaves, as a large ruleset's do)")
    a = ap.parse_args()
    bindir = os.path.abspath(a.bin)
    rep = relib.Report()
    topo = relib.Topo(f"swap{a.ingress}", bindir)
    env = {"BPF_IPTABLES_INGRESS": a.ingress}
    if a.spare_keep is not None:
        env["BPF_IPTABLES_SPARE_KEEP"] = str(a.spare_keep)
    files = {}
    for v, text in (("A", version_a()), ("B", version_b())):
        files[v] = os.path.join(topo.state, f"{v}.rules")
        with open(files[v], "w") as f:
            f.write(text)
    topo.bpt("bpf-iptables-restore", files["A"], env=env)
    link = netlib.run(topo.cmd("fw", ["ip", "link", "show", "dev", "eth0"])).stdout.decode()
    rep.check(("xdp" in link) == (a.ingress == "xdp"),
              f"ingress mode {a.ingress}: eth0 of fw shows {link!r}")

    tr = Traffic(topo)
    loss0, drops0 = kernel_losses(topo), iface_drops(topo)
    stop = threading.Event()
    sender = threading.Thread(target=tr.flood, args=(a.rate, stop), daemon=True)
    # the swapper: one shell inside fw, restore B, A, B, A, ... (ends on A when even)
    script = ('i=0; while [ "$i" -lt "$N" ]; do f=$B; [ $((i % 2)) = 1 ] && f=$A; '
              '"$R" "$f" || { echo "restore $i failed" >&2; exit 1; }; i=$((i+1)); done; '
              'echo "$i"')
    senv = dict(topo.env, N=str(a.swaps), A=files["A"], B=files["B"],
                R=os.path.join(bindir, "bpf-iptables-restore"), **env)
    sender.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    sw = subprocess.run(topo.cmd("fw", ["sh", "-c", script]), capture_output=True, text=True,
                        env=senv, timeout=1800)
    dt = time.monotonic() - t0
    time.sleep(0.5)
    stop.set()
    sender.join()
    tr.settle()
    swaps = int(sw.stdout.strip() or 0) if sw.returncode == 0 else 0
    rep.check(sw.returncode == 0 and swaps == a.swaps,
              f"swapper: exit {sw.returncode}, {sw.stdout.strip()} {sw.stderr.strip()}")
    snap = tr.snapshot()
    loss = kernel_losses(topo) - loss0
    drops = iface_drops(topo) - drops0

    total_sent = total_del = total_rej = total_bad = 0
    print(f"ingress {a.ingress}: {swaps} swaps in {dt:.1f} s "
          f"({1000 * dt / max(swaps, 1):.1f} ms each)", flush=True)
    for port, f in sorted(tr.flows.items()):
        sent, d, r = snap[port]
        bad = judge(f, 0, sent, d, r)
        nd, nr = sum(1 for x in d if x), sum(1 for x in r if x)
        total_sent += sent
        total_del += sum(d)
        total_rej += sum(r)
        total_bad += len(bad)
        va, vb = CLASSES[f.k]
        print(f"  {f.chain:7} dport {port} (A {va:6} B {vb:6}): sent {sent:7}, "
              f"delivered {nd:7}, rejected {nr:7}, misjudged {len(bad)}", flush=True)
        rep.check(not bad, f"{f.chain} dport {port}: {len(bad)} misjudged packets, first: "
                  f"{bad[:5]}")
    print(f"  total: sent {total_sent}, delivered {total_del}, rejected {total_rej}, "
          f"misjudged {total_bad}; kernel losses outside the firewall: socket buffers "
          f"{loss}, interface drops {drops}", flush=True)
    if total_bad and (loss or drops):
        print("  (the kernel lost packets outside the firewall: lower --rate)", flush=True)
    rep.check(total_sent > a.swaps, f"the flood ran: {total_sent} packets")

    # the counters of the version in force add up: A again, then a known burst
    topo.bpt("bpf-iptables-restore", files["A"], env=env)
    first = {p: f.sent for p, f in tr.flows.items()}
    tr.burst(a.burst)
    tr.settle()
    snap = tr.snapshot()
    for port, f in sorted(tr.flows.items()):
        sent, d, r = snap[port]
        bad = judge(f, first[port], sent, d, r, only="A")
        rep.check(not bad, f"burst under A, dport {port}: {bad[:5]}")
    rules, pol = save_counters(topo)
    k = a.burst
    for chain, base in CHAINS.items():
        for c in (1, 2, 3, 4):
            text = f"-A {chain} -p udp -m udp --dport {base + c} -j {CLASSES[c][0]}"
            got = rules.get(text)
            if got is None:     # REJECT is saved with its default --reject-with
                got = rules.get(text + " --reject-with icmp-port-unreachable")
            rep.check(got == k, f"counter of '{text}': {got}, expected {k}")
    # INPUT's icmp rule counts the replies of OUTPUT's REJECT (they come back in);
    # at XDP they are not judged by INPUT (reported: docs/reliability.md, limits)
    icmp = rules.get("-A INPUT -p icmp -j ACCEPT")
    if a.ingress == "tc":
        rep.check(icmp == k, f"INPUT icmp counter {icmp}, expected {k}")
    else:
        rep.check(icmp in (0, k), f"INPUT icmp counter {icmp}, expected 0 (or {k})")
    rep.check(rules.get("-A OUTPUT -p udp -j DROP") == 0 and pol == {
        "INPUT": 0, "FORWARD": 0, "OUTPUT": 0}, f"other counters: OUTPUT udp DROP "
              f"{rules.get('-A OUTPUT -p udp -j DROP')}, policies {pol}")
    topo.bpt("bpf-iptables", "--unload")
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
