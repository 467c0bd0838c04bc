#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Time one-rule changes to a large chain, builds side by side (root).

usage: bench/cmdtime.py RULES BUILD [BUILD...] [--runs N] [--rounds R] [--mean]
                        [--pairs P]

RULES is a restore file (python3 bench/rules.py mixed INPUT 10000 iptables). Each
BUILD gets a namespace of its own with RULES restored; then, round after round,
every build runs each command N times in its namespace, so old and new are
measured in the same minute. A command is timed as a user would time it:
`ip netns exec NS BUILD/bpf-iptables ...`, wall clock and the CPU (user + sys)
of the whole process tree. Prints the best of N per round: wall/cpu ms; with
--mean, the mean (what a script of such commands pays a command). --pairs P
gives each namespace P veth pairs besides lo (2P + 1 links, each attached and
checked by every command, as on a host of containers). A BUILD named
`legacy` is iptables-legacy and iptables-legacy-restore, timed the same way.
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


def binary(build, name):
    if build == "legacy":
        return name.replace("bpf-iptables", "iptables-legacy")
    return os.path.join(build, name)


def run(ns, build, cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(["ip", "netns", "exec", ns, binary(build, cmd[0])] + cmd[1:],
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
    ap.add_argument("--mean", action="store_true", help="the mean of the runs, not the best")
    ap.add_argument("--pairs", type=int, default=0, help="veth pairs in each namespace")
    a = ap.parse_args()
    nss = []
    try:
        for i, b in enumerate(a.builds):
            ns = "cmdtime%d-%d" % (os.getpid(), i)
            subprocess.run(["ip", "netns", "add", ns], check=True)
            nss.append((ns, cookie(ns)))
            links = "".join("link add va%d type veth peer name vb%d\n" % (k, k)
                            for k in range(a.pairs))
            subprocess.run(["ip", "-n", ns, "-batch", "-"], input=links + "link set lo up\n",
                           text=True, check=True)
            run(ns, b, ["bpf-iptables-restore", a.rules])
        for r in range(a.rounds):
            for (ns, _), b in zip(nss, a.builds):
                best, tot = {}, {}
                for _ in range(a.runs):
                    for name, cmd in commands(a.rules):
                        w, c = run(ns, b, cmd)
                        bw, bc = best.get(name, (w, c))
                        best[name] = (min(w, bw), min(c, bc))
                        tw, tc = tot.get(name, (0, 0))
                        tot[name] = (tw + w, tc + c)
                shown = {n: (w / a.runs, c / a.runs) for n, (w, c) in tot.items()} \
                    if a.mean else best
                print("round %d %-30s " % (r + 1, b) +
                      "  ".join("%s %.1f/%.1f" % (n, w, c) for n, (w, c) in shown.items()),
                      flush=True)
    finally:
        for (ns, ck), b in zip(nss, a.builds):
            if b != "legacy":
                subprocess.run(["ip", "netns", "exec", ns, os.path.join(b, "bpf-iptables"),
                                "--unload"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "netns", "del", ns])
            subprocess.run(["rm", "-rf", "/run/bpf-iptables/netns-" + ck])


if __name__ == "__main__":
    main()
