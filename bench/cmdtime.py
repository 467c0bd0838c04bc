#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Time one-rule changes to a large chain, builds side by side (root).

usage: bench/cmdtime.py RULES BUILD [BUILD...] [--runs N] [--rounds R]

RULES is a restore file (python3 bench/rules.py mixed INPUT 10000 iptables). Each
BUILD gets a namespace of its own with RULES restored; then, round after round,
every build runs each command N times in its namespace, so old and new are
measured in the same minute. A command is timed as a user would time it:
`ip netns exec NS BUILD/bpf-iptables ...`, wall clock and the CPU (user + sys)
of the whole process tree. Prints the best of N per round: wall/cpu ms.
The namespaces and their state directories are removed at the end.
"""
import argparse
import os
import subprocess
import sys
import time

RULE = "-s 192.0.2.1/32 -p tcp --dport 22 -j DROP".split()
SO_NETNS_COOKIE = 71


def commands(rules):
    return [("-A", ["bpf-iptables", "-A", "INPUT"] + RULE),
            ("-D", ["bpf-iptables", "-D", "INPUT"] + RULE),
            ("-I 1", ["bpf-iptables", "-I", "INPUT", "1"] + RULE),
            ("-D 1", ["bpf-iptables", "-D", "INPUT", "1"]),
            ("restore", ["bpf-iptables-restore", rules])]


def run(ns, build, cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(["ip", "netns", "exec", ns, os.path.join(build, cmd[0])] + cmd[1:],
                         stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    if status:
        sys.exit("%s in %s: exit status %d" % (" ".join(cmd), ns, status))
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3


def cookie(ns):
    out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                          "import socket, struct; s = socket.socket(); print(struct.unpack("
                          "'Q', s.getsockopt(socket.SOL_SOCKET, %d, 8))[0])" % SO_NETNS_COOKIE],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rules")
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    nss = []
    try:
        for i, b in enumerate(a.builds):
            ns = "cmdtime%d-%d" % (os.getpid(), i)
            subprocess.run(["ip", "netns", "add", ns], check=True)
            nss.append((ns, cookie(ns)))
            run(ns, b, ["bpf-iptables-restore", a.rules])
        for r in range(a.rounds):
            for (ns, _), b in zip(nss, a.builds):
                best = {}
                for _ in range(a.runs):
                    for name, cmd in commands(a.rules):
                        w, c = run(ns, b, cmd)
                        bw, bc = best.get(name, (w, c))
                        best[name] = (min(w, bw), min(c, bc))
                print("round %d %-30s " % (r + 1, b) +
                      "  ".join("%s %.1f/%.1f" % (n, w, c) for n, (w, c) in best.items()),
                      flush=True)
    finally:
        for ns, ck in nss:
            subprocess.run(["ip", "netns", "exec", ns, os.path.join(a.builds[0], "bpf-iptables"),
                            "--unload"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "netns", "del", ns])
            subprocess.run(["rm", "-rf", "/run/bpf-iptables/netns-" + ck])


if __name__ == "__main__":
    main()
