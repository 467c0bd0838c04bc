#!/usr/bin/env python3
"""-j LOG against the kernel's LOG target, line by line.

Twin topologies (netlib.py: cli - rtr - srv) carry the same LOG rulesets:
twin A in iptables-legacy, whose LOG lines the kernel prints (read from
/dev/kmsg; net.netfilter.nf_log_all_netns=1 lets namespaces other than the
first log, restored afterwards), twin B in bpf-iptables, whose lines
`bpf-iptables --log-follow` prints in each namespace.  The same crafted
packets go through both -- TCP with every flag, TCP and IP options, UDP, ICMP
queries and errors (the quoted packet, MTU, gateway, parameter), AH, ESP,
GRE, fragments, truncated headers, loopback -- past LOG rules in INPUT (srv,
cli's lo), FORWARD (rtr) and OUTPUT (cli) with every --log-* option.  Lines
are paired by prefix and IP id; after replacing each twin's MAC addresses by
their role, the two lines must be identical, character for character.

Second part, no event lost silently: with no reader running, more events than
the ring buffer holds are produced; the reader started afterwards prints the
ones kept and reports exactly how many were lost: kept + lost = sent.

Third part, the ring comes with the first LOG rule: in a namespace of its own, a
ruleset without LOG leaves the instance without a ring buffer (its slot, map
bpfipt_log_slot, is empty); a reader started then waits, and prints the event of
the LOG rule added after it.

Usage (root, BPF, iptables-legacy; never skips):
  log_diff.py --bin build [--ingress xdp|tc] [-v]
"""

import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netlib as nl            # noqa: E402
import kernel_diff as kd       # noqa: E402

SRV_RULES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:logged - [0:0]
-A INPUT -d 10.2.0.130/32 -j ACCEPT
-A INPUT -i eth0 -p tcp -m length --length 0:39 -j LOG --log-prefix "in-short "
-A INPUT -i eth0 -p tcp -m tcp --dport 1000:1999 -j LOG --log-prefix "in-tcp " --log-tcp-sequence --log-tcp-options --log-ip-options
-A INPUT -i eth0 -p tcp -m tcp --dport 2000:2999 -j LOG --log-prefix "in-tcp2: " --log-level 6
-A INPUT -i eth0 -p tcp -m tcp --dport 2000:2999 -j LOG --log-prefix "in-tcp2-again: " --log-macdecode
-A INPUT -i eth0 -p tcp -m tcp --dport 3000 -j LOG --log-prefix "in-tcp3 "
-A INPUT -i eth0 -p tcp -m tcp --dport 3000 -j DROP
-A INPUT -i eth0 -p udp -j logged
-A INPUT -i eth0 -p icmp -j LOG --log-prefix "in-icmp " --log-ip-options
-A INPUT -i eth0 -p esp -j LOG --log-prefix "in-esp "
-A INPUT -i eth0 -p ah -j LOG --log-prefix "in-ah "
-A INPUT -i eth0 -p gre -j LOG --log-prefix "in-gre "
-A logged -j LOG --log-prefix "in-udp " --log-level debug
COMMIT
"""

RTR_RULES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -i eth0 -o eth1 -f -j LOG --log-prefix "fwd-frag " --log-ip-options
-A FORWARD -i eth0 -o eth1 -p udp -j LOG --log-prefix "fwd "
-A FORWARD -d 10.2.0.130/32 -i eth0 -o eth1 -p tcp -m tcp --dport 4000 -j LOG --log-prefix "fwd-tcp " --log-tcp-sequence
COMMIT
"""

CLI_RULES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -i lo -p udp -j LOG --log-prefix "lo-in "
-A OUTPUT -p udp -m udp --dport 5000:5999 -j LOG --log-prefix "out " --log-uid
COMMIT
"""

RULES = {"srv": SRV_RULES, "rtr": RTR_RULES, "cli": CLI_RULES}
PREFIXES = ("in-", "fwd", "lo-in ", "out ")


# ---------------------------------------------------------------------------
# Packets: raw bytes, each with a unique IP id
# ---------------------------------------------------------------------------

def ip_hdr(proto, src, dst, ipid, body_len, opts=b"", frag=0, tos=0, ttl=64):
    hl = 20 + len(opts)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | (hl // 4), tos, hl + body_len, ipid, frag,
                    ttl, proto, 0, socket.inet_aton(src), socket.inet_aton(dst)) + opts
    return h[:10] + struct.pack("!H", nl.csum(h)) + h[12:]


def tcp_seg(sport, dport, flags, seq=0x11223344, ack=0x55667788, opts=b"", res=0,
            payload=b"\0" * 8, window=8192, urg=0):
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4 | res, flags,
                       window, 0, urg) + opts + payload


def udp_dgram(sport, dport, payload=b"\0" * 12):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def icmp_msg(t, c, rest=b"\0\0\0\0", payload=b"\0" * 8):
    m = struct.pack("!BBH", t, c, 0) + rest + payload
    return m[:2] + struct.pack("!H", nl.csum(m)) + m[4:]


class Craft:
    def __init__(self):
        self.ipid = 40000

    def pkt(self, sender, proto, src, dst, body, **kw):
        self.ipid += 1
        ipid = kw.pop("ipid", self.ipid)
        return (sender, dst, ip_hdr(proto, src, dst, ipid, len(body), **kw) + body)


def packets():
    c = Craft()
    S, C = nl.SRV_IP, nl.CLI_IP
    out = []
    # INPUT, TCP: every flag, reserved bits, urgent pointer, options, sequence
    for flags in (0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0x29, 0xff, 0x00, 0xc2):
        out.append(c.pkt("cli", 6, C, S, tcp_seg(40001, 1022, flags, urg=flags & 0x20 and 7)))
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40002, 1500, 0x02, res=0x0e,
                                             opts=b"\x02\x04\x05\xb4\x01\x03\x03\x07")))
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40003, 1501, 0x10), opts=b"\x01\x01\x01\x00"))
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40004, 1502, 0x02), tos=0xb8))
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40005, 1503, 0x02), frag=0x4000, ttl=3))
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40006, 2500, 0x02)))      # two LOG rules
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40007, 3000, 0x02)))      # LOG then DROP
    out.append(c.pkt("cli", 6, C, S, tcp_seg(40008, 1504, 0x02)[:12]))  # truncated
    # UDP (through a user chain), a long one, IP options
    out.append(c.pkt("cli", 17, C, S, udp_dgram(5353, 53)))
    out.append(c.pkt("cli", 17, C, "10.2.0.3", udp_dgram(1, 65535, b"\0" * 1200)))
    out.append(c.pkt("cli", 17, C, S, udp_dgram(7, 7), opts=b"\x07\x07\x04\x00\x00\x00\x00\x00"))
    # ICMP: queries and errors quoting a packet (TCP quote cut at 8 bytes)
    out.append(c.pkt("cli", 1, C, S, icmp_msg(8, 0, struct.pack("!HH", 77, 3))))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(0, 0, struct.pack("!HH", 78, 4))))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(13, 0, payload=b"\0" * 12)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(17, 0, payload=b"")))       # incomplete
    quoted_udp = ip_hdr(17, S, C, 999, 8) + udp_dgram(53, 5353, b"")
    quoted_tcp = ip_hdr(6, S, C, 998, 20) + tcp_seg(1022, 40001, 0x12)[:8]
    out.append(c.pkt("cli", 1, C, S, icmp_msg(3, 3, payload=quoted_udp)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(3, 4, struct.pack("!HH", 0, 1400), quoted_tcp)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(11, 0, payload=quoted_udp)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(5, 1, socket.inet_aton("10.2.0.77"), quoted_udp)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(12, 0, b"\x14\0\0\0", quoted_udp)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(3, 1, payload=quoted_udp[:12])))  # short quote
    out.append(c.pkt("cli", 1, C, S, icmp_msg(42, 0)))
    out.append(c.pkt("cli", 1, C, S, icmp_msg(8, 0), opts=b"\x94\x04\x00\x00"))
    # other protocols
    out.append(c.pkt("cli", 50, C, S, struct.pack("!II", 0xdeadbeef, 1) + b"\0" * 8))
    out.append(c.pkt("cli", 51, C, S, struct.pack("!BBHII", 4, 4, 0, 0x1234, 9) + b"\0" * 8))
    out.append(c.pkt("cli", 51, C, S, b"\0\0\0"))                          # truncated AH
    out.append(c.pkt("cli", 47, C, S, b"\0" * 16))
    # fragments, forwarded (the kernel reassembles in front of INPUT, and
    # bpf-iptables does not: the documented difference of docs/dataplane.md)
    F = "10.2.0.130"
    out.append(c.pkt("cli", 17, C, F, udp_dgram(9, 9, b"\0" * 16), frag=0x2000, ipid=50001))
    out.append(c.pkt("cli", 17, C, F, b"\0" * 16, frag=3, ipid=50001))
    out.append(c.pkt("cli", 6, C, F, b"\0" * 24, frag=0x0005, ipid=50002,
                     opts=b"\x01\x01\x01\x00"))
    # FORWARD (cli -> srv through rtr): the TTL the hook sees is one less
    out.append(c.pkt("cli", 17, C, "10.2.0.130", udp_dgram(1234, 4321), ttl=9))
    out.append(c.pkt("cli", 6, C, "10.2.0.130", tcp_seg(1234, 4000, 0x02), frag=0x4000))
    # OUTPUT (--log-uid: the raw socket's owner) and lo's INPUT
    out.append(c.pkt("cli", 17, C, S, udp_dgram(1, 5001)))
    out.append(c.pkt("cli", 17, C, "10.1.1.1", udp_dgram(2, 5002)))
    return out


# ---------------------------------------------------------------------------

def kmsg_open():
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(fd, 0, os.SEEK_END)
    return fd


def kmsg_read(fd):
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:     # EPIPE: overwritten records; go on
            continue
        text = rec.decode(errors="replace").rstrip("\n")
        head, _, msg = text.partition(";")
        # continuation lines (" KEY=value") follow the message
        lines.append(msg.split("\n")[0])
    return lines


def ours(line):
    return line.startswith(PREFIXES)


IPID = re.compile(r" ID=(\d+) ")


# --log-uid with a socket of an unprivileged user: its IP id is the kernel's
# choice, so those lines are paired by their port instead
UID_PORT = 5500
UID_SENDER = f"""
import os, socket
os.setgroups([]); os.setgid(4242); os.setuid(4243)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("{nl.CLI_IP}", {UID_PORT + 1}))
s.sendto(b"x" * 10, ("{nl.SRV_IP}", {UID_PORT}))
"""


def key_of(line):
    m = IPID.search(line)
    if f" DPT={UID_PORT} " in line:
        return (line.split("IN=")[0], "uid")
    return (line.split("IN=")[0], m.group(1) if m else "?")


def normalise(line, twin):
    if f" DPT={UID_PORT} " in line:
        line = IPID.sub(" ID=? ", line, count=1)
    for (role, ifname) in nl.MACS:
        m = twin.mac(role, ifname)
        line = line.replace(m, f"<{role}.{ifname}>")
        # MAC= is one colon-separated run: destination then source
        line = line.replace(m + ":", f"<{role}.{ifname}>:")
    return line


class Readers:
    """bpf-iptables --log-follow in each namespace of twin B."""

    def __init__(self, fw, roles):
        self.procs = {}
        for role in roles:
            argv = fw.b.exec_argv(role, [os.path.join(fw.bindir, "bpf-iptables"),
                                         "--log-follow"])
            self.procs[role] = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, env=fw.env_b[role])
        nl.at_cleanup(self.kill)

    def kill(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()

    def stop(self):
        out = {}
        for role, p in self.procs.items():
            p.send_signal(signal.SIGTERM)
            o, e = p.communicate(timeout=10)
            out[role] = (p.returncode, o.decode(errors="replace").splitlines(),
                         e.decode(errors="replace"))
        return out


def restore(fw, twin, role, text, mode):
    p, txt = fw._popen(twin, role, text, mode)
    _, err = p.communicate(txt.encode(), timeout=60)
    return p.returncode, err.decode(errors="replace").strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ingress", default=os.environ.get("BPF_IPTABLES_INGRESS", "xdp"))
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    bindir = os.path.abspath(a.bin)
    problems = kd.preflight(bindir)
    if not os.path.exists("/proc/sys/net/netfilter/nf_log_all_netns"):
        os.system("modprobe nf_log_syslog >/dev/null 2>&1")
    if problems:
        for p in problems:
            print(f"log_diff: FAIL: {p}")
        return 1
    nl.install_cleanup()
    sysctl_path = "/proc/sys/net/netfilter/nf_log_all_netns"
    with open(sysctl_path) as f:
        old = f.read().strip()
    nl.at_cleanup(lambda: open(sysctl_path, "w").write(old))
    with open(sysctl_path, "w") as f:
        f.write("1")

    fw = kd.Firewalls(bindir, a.ingress, 0.5, 0.2)
    fw.build()
    for role, text in RULES.items():
        for twin in (fw.a, fw.b):
            rc, err = restore(fw, twin, role, text, a.ingress)
            if rc:
                print(f"log_diff: FAIL: loading the {role} ruleset into twin {twin.label}: "
                      f"rc={rc} {err}")
                return 1
    failures = 0
    checks = 0

    # -- part 1: the lines --------------------------------------------------
    readers = Readers(fw, RULES)
    time.sleep(0.5)
    kfd = kmsg_open()
    pkts = packets()
    for twin in (fw.a, fw.b):
        for sender, dst, wire in pkts:
            try:
                twin.send_sock[sender].sendto(wire, (dst, 0))
            except OSError as e:
                print(f"log_diff: FAIL: sending to {dst} in twin {twin.label}: {e}")
                failures += 1
        p = subprocess.run(twin.exec_argv("cli", [sys.executable, "-c", UID_SENDER]),
                           capture_output=True)
        if p.returncode:
            print(f"log_diff: FAIL: the unprivileged sender: {p.stderr.decode()}")
            failures += 1
    time.sleep(1.0)
    klines = [normalise(x, fw.a) for x in kmsg_read(kfd) if ours(x)]
    os.close(kfd)
    res = readers.stop()
    blines = []
    for role, (rc, lines, err) in res.items():
        if err.strip():
            print(f"log_diff: reader in {role} said: {err.strip()}")
        blines += [normalise(x, fw.b) for x in lines if ours(x)]
    ka = {}
    for x in klines:
        ka.setdefault(key_of(x), []).append(x)
    kb = {}
    for x in blines:
        kb.setdefault(key_of(x), []).append(x)
    for k in sorted(set(ka) | set(kb)):
        la, lb = ka.get(k, []), kb.get(k, [])
        checks += 1
        if la == lb:
            if a.verbose:
                for x in la:
                    print(f"  same: {x}")
            continue
        failures += 1
        print(f"log_diff: FAIL: LOG lines for prefix {k[0]!r} ip id {k[1]} differ")
        for x in la:
            print(f"    iptables-legacy: {x}")
        for x in lb:
            print(f"    bpf-iptables:    {x}")
    if not any("UID=4243 GID=4242 " in x for x in blines):
        failures += 1
        print("log_diff: FAIL: no --log-uid line for the unprivileged user's packet")
    if len(klines) < len(pkts):
        failures += 1
        print(f"log_diff: FAIL: only {len(klines)} kernel LOG lines for {len(pkts)} packets "
              f"(is /dev/kmsg readable, nf_log_syslog loaded?)")
    print(f"log_diff: {len(pkts)} packets, {len(klines)} kernel LOG lines, "
          f"{len(blines)} bpf-iptables lines, {checks} (prefix, packet) pairs compared "
          f"({a.ingress} ingress)")

    # -- part 2: nothing lost silently ----------------------------------------
    n = 6000
    body = udp_dgram(1, 5003)
    for i in range(n):
        wire = ip_hdr(17, nl.CLI_IP, nl.SRV_IP, (i % 60000) + 1, len(body)) + body
        fw.b.send_sock["cli"].sendto(wire, (nl.SRV_IP, 0))
    time.sleep(0.5)
    argv = fw.b.exec_argv("srv", [os.path.join(bindir, "bpf-iptables"), "--log-follow",
                                  "--timeout", "2"])
    p = subprocess.run(argv, capture_output=True, env=fw.env_b["srv"], timeout=30)
    kept = sum(1 for x in p.stdout.decode().splitlines() if x.startswith("in-udp "))
    m = re.search(r"(\d+) LOG events lost before this reader started", p.stderr.decode())
    lost = int(m.group(1)) if m else 0
    checks += 1
    if kept + lost != n or lost == 0 or kept == 0:
        failures += 1
        print(f"log_diff: FAIL: {n} events without a reader: {kept} printed + {lost} "
              f"reported lost != {n} (stderr: {p.stderr.decode().strip()!r})")
    else:
        print(f"log_diff: {n} events without a reader: {kept} kept in the ring, "
              f"{lost} reported lost, none unaccounted")
    # a second reader is refused while one runs
    r1 = subprocess.Popen(fw.b.exec_argv("srv", [os.path.join(bindir, "bpf-iptables"),
                                                 "--log-follow"]),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=fw.env_b["srv"])
    time.sleep(0.3)
    p2 = subprocess.run(argv, capture_output=True, env=fw.env_b["srv"], timeout=30)
    r1.terminate()
    r1.wait(timeout=10)
    checks += 1
    if p2.returncode == 0 or b"another reader" not in p2.stderr:
        failures += 1
        print(f"log_diff: FAIL: a second reader was not refused: rc={p2.returncode} "
              f"{p2.stderr.decode().strip()!r}")

    # -- part 3: the ring comes with the first LOG rule -------------------------
    checks += 1
    err = late_ring(bindir)
    if err:
        failures += 1
        print(f"log_diff: FAIL: {err}")
    else:
        print("log_diff: no ring before the first LOG rule; a reader waiting for it "
              "printed the rule's event")
    print(f"log_diff: {checks} checks, {failures} failed")
    return 1 if failures else 0


def log_slot_empty(ns):
    """Whether the instance's LOG ring slot (bpfipt_log_slot, entry 0) is empty."""
    out = nl.run(["ip", "netns", "exec", ns, "tc", "-j", "filter", "show", "dev", "lo",
                  "egress"]).stdout
    prog = next(f["options"]["prog"]["id"] for f in json.loads(out)
                if f.get("options", {}).get("prog"))
    info = json.loads(nl.run(["bpftool", "-j", "prog", "show", "id", str(prog)]).stdout)
    for m in info["map_ids"]:
        mi = json.loads(nl.run(["bpftool", "-j", "map", "show", "id", str(m)]).stdout)
        if mi["name"] == "bpfipt_log_slot":
            p = nl.run(["bpftool", "-j", "map", "lookup", "id", str(m), "key", "0", "0", "0",
                        "0"], check=False)
            return p.returncode != 0
    raise RuntimeError("no bpfipt_log_slot among the program's maps")


def late_ring(bindir):
    """Part 3; an error message, or None."""
    ns = nl.netns_add(f"logring{os.getpid()}")
    env = dict(os.environ, BPF_IPTABLES_STATE_DIR=nl.tempdir("log-ring-"))
    bpt = [os.path.join(bindir, "bpf-iptables")]
    ex = ["ip", "netns", "exec", ns]
    nl.run(ex + ["ip", "link", "set", "lo", "up"])
    nl.run(ex + bpt + ["-A", "INPUT", "-p", "udp", "--dport", "9", "-j", "DROP"], env=env)
    if not log_slot_empty(ns):
        return "a ruleset without LOG made the LOG ring"
    reader = subprocess.Popen(ex + bpt + ["--log-follow", "--count", "1", "--timeout", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    nl.at_cleanup(reader.kill)
    time.sleep(0.3)
    nl.run(ex + bpt + ["-I", "INPUT", "-p", "udp", "-j", "LOG", "--log-prefix", "late-ring "],
           env=env)
    if log_slot_empty(ns):
        return "the first LOG rule made no LOG ring"
    nl.run(ex + [sys.executable, "-c", "import socket; socket.socket(socket.AF_INET, "
                 "socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9))"])
    out, errs = reader.communicate(timeout=20)
    lines = [x for x in out.decode(errors="replace").splitlines() if x.startswith("late-ring ")]
    nl.run(ex + bpt + ["--unload"], env=env, check=False)
    nl.netns_delete(ns)
    if reader.returncode != 0 or len(lines) != 1:
        return (f"the reader started before the LOG ring: rc={reader.returncode}, "
                f"{len(lines)} late-ring lines, stderr {errs.decode(errors='replace').strip()!r}")
    return None


if __name__ == "__main__":
    sys.exit(main())
