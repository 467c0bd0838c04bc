#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a command's wall clock goes: its crash points, stamped (root).

usage: bench/timeline.py [--runs N] [--ns NS] -- COMMAND [ARGS...]

Runs COMMAND (a bpf-iptables binary and its arguments; in namespace NS through
`ip netns exec` when given) with BPF_IPTABLES_CRASH_TRACE=time, which prints
each crash point the command passes with the CLOCK_MONOTONIC time it passed it
(controlplane/crashpoint.h), and prints the points in milliseconds since the
command was started, then its exit. The same clock on both sides: the stamps
are exact, whatever reads the pipe and when. Repeating a command that changes
the ruleset (-A) grows it; pair it with its -D.
"""
import argparse
import os
import subprocess
import sys
import time


def run(argv, ns):
    env = dict(os.environ, BPF_IPTABLES_CRASH_TRACE="time")
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    out = []
    for ln in p.stderr.splitlines():
        w = ln.split()
        if len(w) == 6 and w[:2] == ["crash", "point"] and w[4] == "at":
            out.append("%7.2f %s %s" % ((float(w[5]) - t0) * 1e3, w[2], w[3]))
        else:
            out.append("        " + ln)
    out.append("%7.2f exit %d" % ((t1 - t0) * 1e3, p.returncode))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--ns")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("usage: bench/timeline.py [--runs N] [--ns NS] -- COMMAND [ARGS...]")
    for i in range(a.runs):
        if a.runs > 1:
            print("run %d" % (i + 1))
        print("\n".join(run(cmd, a.ns)))


if __name__ == "__main__":
    main()
