#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the verifier's work goes, from a level-2 log (root for the first step).

usage: bench/vlog.py LOG [--lines FUNC] [--top N]

Make the logs with a first command in a fresh namespace:
  mkdir /tmp/vlog; ip netns add v
  BPF_IPTABLES_VERIFIER_LOG=/tmp/vlog ip netns exec v build/bpf-iptables -A INPUT -j ACCEPT
  ip netns exec v build/bpf-iptables --unload; ip netns del v
  bench/vlog.py /tmp/vlog/bpfipt_tc_in.log

The verifier prints a line per instruction it processes ("N: (op) ..."); a
global function is checked on its own, after "Validating f() func#K...", and the
main program before the first one. Prints the instructions processed per
function, then the kernel's summary line. --lines FUNC ("main" for the main
program) counts FUNC's instructions by the source line of each (the "; code @
file:line" annotation before it): the lines the verifier comes back to most are
where its states multiply.
"""
import argparse
import collections
import re
import sys

INSN = re.compile(rb"^(\d+): \(")
VALIDATING = re.compile(rb"^Validating (\S+)\(\) func#")
SOURCE = re.compile(rb"^; .* @ (\S+)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--lines", metavar="FUNC")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    per_func = collections.Counter()
    per_line = collections.Counter()
    where = {}		# instruction index -> its source line (FUNC only)
    func, src, summary = "main", "?", None
    with open(a.log, "rb") as f:
        for line in f:
            m = INSN.match(line)
            if m:
                per_func[func] += 1
                if func == a.lines:
                    per_line[where.setdefault(m.group(1), src)] += 1
                continue
            m = SOURCE.match(line)
            if m:
                src = m.group(1).decode()
                continue
            m = VALIDATING.match(line)
            if m:
                func = m.group(1).decode()
            elif line.startswith(b"processed "):
                summary = line.decode().strip()
    total = sum(per_func.values())
    if not total:
        sys.exit(f"{a.log}: no instruction lines (a level-2 log is needed)")
    for name, n in per_func.most_common():
        print(f"{n:8d} {100 * n / total:5.1f}%  {name}")
    if summary:
        print(summary)
    if a.lines:
        print(f"\n{a.lines}, by source line:")
        for loc, n in per_line.most_common(a.top):
            print(f"{n:8d}  {loc}")


if __name__ == "__main__":
    main()
