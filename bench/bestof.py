#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The best of several runs of bench/run.sh's pktcost section, cell by cell.

This VM has noisy phases (seconds to minutes where every program runs 1.5-2x
slower) that one run of the section, which takes each cell's best of 8 runs over
a few seconds, does not always avoid. Runs of the section a few minutes apart
(`bench/run.sh BUILD --only "pktcost report" --out DIRk`) are merged here: each
cell (ruleset, rules, packet, hook, ct) takes the lowest ns of the runs; the
install time and the map bytes are the first run's. The merged CSVs carry every
run's header lines and a line saying how they were merged.

Usage: bench/bestof.py OUT DIR1 DIR2 [DIR3 ...]; then bench/report.py OUT.
"""
import csv
import os
import sys

FILES = ("pktcost.csv", "pktcost6.csv", "pktcost_chains.csv", "pktcost_nogroup.csv",
         "pktcost_slots.csv")
KEY = ("ruleset", "rules", "packet", "hook", "ct")


def read(path):
    with open(path) as f:
        lines = f.read().splitlines()
    head = [l for l in lines if l.startswith("#")]
    body = [l for l in lines if not l.startswith("#")]
    return head, body[0].split(",") if body else [], list(csv.DictReader(body))


def merge(out, dirs, name):
    runs = [read(os.path.join(d, name)) for d in dirs if os.path.exists(os.path.join(d, name))]
    if not runs:
        return
    head, cols, rows = runs[0]
    best = {}
    for _, _, rs in runs:
        for r in rs:
            k = tuple(r[c] for c in KEY)
            ns = float(r["ns"])
            if k not in best or ns < best[k]:
                best[k] = ns
    with open(os.path.join(out, name), "w") as f:
        for h, _, _ in runs:
            f.write("\n".join(l for l in h if not l.startswith("# load average at end")) + "\n")
        f.write(f"# merged by bench/bestof.py: each cell's lowest ns of {len(runs)} runs "
                f"({', '.join(dirs)}); install_ms and map_bytes of the first\n")
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            r = dict(r)
            r["ns"] = f"{best[tuple(r[c] for c in KEY)]:.1f}"
            w.writerow(r)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    out, dirs = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    for name in FILES:
        merge(out, dirs, name)


if __name__ == "__main__":
    main()
