#!/usr/bin/env python3
"""Concurrency (issue 6, promise 2): the writer lock.

1. With -w: 16 processes (--procs) issue 100 (--cmds) commands each, all at
   once, into the same chain: -A (kept), -A then -D of it three commands later,
   -I (at the head). Every command must succeed and the end result must be one
   that running the same commands one after the other gives:
   - the set of rules is exactly the expected one (no lost, no duplicated rule);
   - the order is that of a serial run: inserted rules first, most recent
     first, then the base rule, then appended rules in the order they were
     added, and one serial order explains all of it together with each
     process's own order (the graph of "came before" has no cycle);
   - `bpf-iptables -S`, `bpf-iptables-save` and the saved state agree;
   - the data plane enforces exactly that: one packet to every port ever used
     counts 1 on each rule still there and the rest on the policy.
2. Without -w, while the lock is held: every writing command fails at once
   with iptables' message and exit 4 (RESOURCE_PROBLEM), and changes nothing
   (saved state, -S, counters); -w 1 gives up after a second with iptables'
   "Stopped waiting" message; readers (-S, save) still answer.
3. Without -w, under real contention (16 processes appending at once): each
   command either succeeded or failed with that message, and the rules present
   are exactly those of the commands that succeeded.

usage: concurrency.py --bin BUILD_DIR [--procs N] [--cmds N]
"""

import argparse
import fcntl
import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # generated files never go to the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relib  # noqa: E402
from relib import netlib, SRC_IP, FW_IP1  # noqa: E402

BUSY = ("Another app is currently holding the xtables lock. "
        "Perhaps you want to use the -w option?")
BUSY_W1 = "Another app is currently holding the xtables lock. Stopped waiting after 1s."
BASE = "-A INPUT -p icmp -j ACCEPT"
RULE_RE = re.compile(r"-A INPUT -s 10\.1\.0\.2/32 -p udp -m udp --dport (\d+) -j DROP$")

# a worker: one shell in fw running its command lines, printing "rc<TAB>stderr"
WORKER = r'''while IFS= read -r line; do
  err=$("$BPT" $line 2>&1 >/dev/null); rc=$?
  printf '%s\t%s\n' "$rc" "$(printf '%s' "$err" | tr '\n' '|')"
done < "$1"'''


def spec(port):
    return f"INPUT -s {SRC_IP}/32 -p udp --dport {port} -j DROP"


def plan(p, ncmds, base_port):
    """Worker p's commands: [(op, port, argv string)]."""
    cmds = []
    for i in range(ncmds):
        port = base_port + p * ncmds + i
        k = i % 4
        if k == 3:
            op, port = "D", base_port + p * ncmds + i - 3
        else:
            op = "I" if k == 2 else "A"
        flag = {"A": "-A", "I": "-I", "D": "-D"}[op]
        cmds.append((op, port, f"-w {flag} {spec(port)}"))
    return cmds


def run_workers(topo, plans, extra_env=None):
    """Start one shell per plan at once; returns [[(rc, err)]] per worker."""
    procs, files = [], []
    env = dict(topo.env, BPT=os.path.join(topo.bin, "bpf-iptables"), **(extra_env or {}))
    for p, cmds in enumerate(plans):
        path = os.path.join(topo.state, f"worker{p}.cmds")
        with open(path, "w") as f:
            f.write("".join(c[2] + "\n" for c in cmds))
        files.append(path)
    for path in files:
        procs.append(subprocess.Popen(topo.cmd("fw", ["bash", "-c", WORKER, "w", path]),
                                      stdout=subprocess.PIPE, text=True, env=env))
    out = []
    for pr in procs:
        so, _ = pr.communicate(timeout=1200)
        res = []
        for ln in so.splitlines():
            rc, _, err = ln.partition("\t")
            res.append((int(rc), err.rstrip("|")))
        out.append(res)
    return out


def ports_in(text):
    return [int(m.group(1)) for ln in text.splitlines() for m in [RULE_RE.match(ln)] if m]


def serial_order_exists(plans, final):
    """Is there one serial order of all commands that respects each worker's own
    order and explains the final list? Inserted rules are in reverse order of
    execution, appended ones in order (deletions do not reorder)."""
    node = {}
    for p, cmds in enumerate(plans):
        for i, (op, port, _) in enumerate(cmds):
            node[(op, port)] = (p, i)
    edges = {n: set() for n in node.values()}
    for cmds_p, cmds in enumerate(plans):
        for i in range(len(cmds) - 1):
            edges[(cmds_p, i)].add((cmds_p, i + 1))
    ins = [node[("I", x)] for x in final if ("I", x) in node]
    app = [node[("A", x)] for x in final if ("A", x) in node]
    for a, b in zip(ins, ins[1:]):
        edges[b].add(a)         # b was inserted before a (a is above it)
    for a, b in zip(app, app[1:]):
        edges[a].add(b)
    # Kahn
    indeg = {n: 0 for n in edges}
    for n in edges:
        for m in edges[n]:
            indeg[m] += 1
    todo = [n for n, d in indeg.items() if d == 0]
    seen = 0
    while todo:
        n = todo.pop()
        seen += 1
        for m in edges[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                todo.append(m)
    return seen == len(edges)


def counters(topo):
    out = topo.bpt("bpf-iptables-save", "-c").stdout
    rules, pol = {}, {}
    for ln in out.splitlines():
        if ln.startswith(":INPUT"):
            pol["INPUT"] = int(ln.split()[2].strip("[]").split(":")[0])
        elif ln.startswith("["):
            ctr, rest = ln.split(" ", 1)
            m = RULE_RE.match(rest)
            if m:
                rules[int(m.group(1))] = int(ctr.strip("[]").split(":")[0])
    return rules, pol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--procs", type=int, default=int(os.environ.get("REL_PROCS", 16)))
    ap.add_argument("--cmds", type=int, default=int(os.environ.get("REL_CMDS", 100)))
    a = ap.parse_args()
    rep = relib.Report()
    topo = relib.Topo("conc", os.path.abspath(a.bin))
    topo.bpt("bpf-iptables-restore", input="*filter\n:INPUT ACCEPT [0:0]\n"
             f"{BASE}\nCOMMIT\n")

    # ---- 1. -w: everything serialised ----
    base_port = 20000
    plans = [plan(p, a.cmds, base_port) for p in range(a.procs)]
    t0 = time.monotonic()
    res = run_workers(topo, plans)
    dt = time.monotonic() - t0
    ncmd = sum(len(r) for r in res)
    fails = [(p, i, r) for p, rr in enumerate(res) for i, r in enumerate(rr) if r[0] != 0]
    rep.check(ncmd == a.procs * a.cmds and not fails,
              f"-w: {ncmd} commands ran, failures: {fails[:5]}")
    expect = sorted(port for cmds in plans for op, port, _ in cmds
                    if op in ("A", "I") and ("D", port) not in
                    {(o, q) for o, q, _ in cmds})
    s_out = topo.bpt("bpf-iptables", "-S", "INPUT").stdout
    final = ports_in(s_out)
    dups = len(final) - len(set(final))
    lost = sorted(set(expect) - set(final))
    extra = sorted(set(final) - set(expect))
    print(f"-w: {a.procs} processes x {a.cmds} commands in {dt:.1f} s "
          f"({1000 * dt / max(ncmd, 1):.1f} ms each); {len(final)} rules, expected "
          f"{len(expect)}; lost {len(lost)}, duplicated {dups}, unexpected {len(extra)}",
          flush=True)
    rep.check(not lost and not dups and not extra,
              f"-w: lost {lost[:10]}, duplicated {dups}, unexpected {extra[:10]}")
    lines = s_out.splitlines()
    base_at = lines.index(BASE) if BASE in lines else -1
    kinds = {port: op for cmds in plans for op, port, _ in cmds if op != "D"}
    before = [kinds.get(x) for x in ports_in("\n".join(lines[:base_at]))]
    after = [kinds.get(x) for x in ports_in("\n".join(lines[base_at:]))]
    rep.check(base_at >= 0 and set(before) <= {"I"} and set(after) <= {"A"},
              "-w: inserted rules above the base rule, appended ones below")
    rep.check(serial_order_exists(plans, final),
              "-w: no serial order of the commands explains the final order")
    save = topo.bpt("bpf-iptables-save").stdout
    # the saved state alone (a binary snapshot): printed with the data plane off
    state = topo.bpt("bpf-iptables-save", "-c", env={"BPF_IPTABLES_DATAPLANE": "off"}).stdout
    rep.check(ports_in(save) == final, "-w: bpf-iptables-save differs from -S")
    rep.check(ports_in(re.sub(r"^\[\d+:\d+\] ", "", state, flags=re.M)) == final,
              "-w: the saved state differs from -S")
    rep.check(not os.path.exists(os.path.join(topo.state, "snapshot.new")),
              "-w: snapshot.new left behind")

    # the data plane: one packet to every port used
    used = sorted({port for cmds in plans for _, port, _ in cmds} |
                  {base_port + p * a.cmds + i for p in range(a.procs)
                   for i in range(a.cmds)})
    with netlib.netns(topo.ns["src"]):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for port in used:
        s.sendto(b"x" * 16, (FW_IP1, port))
        if port % 64 == 0:
            time.sleep(0.002)
    s.close()
    time.sleep(0.5)
    rules, pol = counters(topo)
    wrong = [(p, rules.get(p)) for p in final if rules.get(p) != 1]
    rep.check(not wrong, f"data plane: rule counters not 1: {wrong[:10]}")
    rep.check(pol.get("INPUT") == len(used) - len(final),
              f"data plane: INPUT policy counted {pol.get('INPUT')}, expected "
              f"{len(used) - len(final)}")
    print(f"data plane: {len(used)} packets, {len(final) - len(wrong)} rules counted 1, "
          f"policy {pol.get('INPUT')}", flush=True)

    # ---- 2. without -w, the lock held: refused at once, nothing changes ----
    lock = open(os.path.join(topo.state, "lock"), "a+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    st0 = open(os.path.join(topo.state, "snapshot"), "rb").read()
    s0 = topo.bpt("bpf-iptables", "-S", "-v").stdout
    attempts = [["-A", "INPUT", "-p", "tcp", "--dport", "1", "-j", "ACCEPT"],
                ["-I", "INPUT", "-p", "tcp", "--dport", "2", "-j", "ACCEPT"],
                ["-D"] + spec(final[0]).split(), ["-D", "INPUT", "1"],
                ["-R", "INPUT", "1", "-j", "ACCEPT"], ["-F"], ["-F", "INPUT"], ["-Z"],
                ["-N", "newchain"], ["-X"], ["-P", "INPUT", "DROP"],
                ["-E", "INPUT", "x"]]
    for argv in attempts:
        t = time.monotonic()
        p = topo.bpt("bpf-iptables", *argv, check=False)
        took = time.monotonic() - t
        rep.check(p.returncode == 4 and p.stderr == BUSY + "\n" and took < 1.0,
                  f"locked, {' '.join(argv)}: exit {p.returncode} after {took:.2f} s, "
                  f"stderr {p.stderr!r}")
    p = topo.bpt("bpf-iptables-restore", input="*filter\n-A INPUT -j ACCEPT\nCOMMIT\n",
                 check=False)
    rep.check(p.returncode == 4 and p.stderr == BUSY + "\n",
              f"locked, restore: exit {p.returncode}, stderr {p.stderr!r}")
    t = time.monotonic()
    p = topo.bpt("bpf-iptables", "-w", "1", "-A", "INPUT", "-j", "ACCEPT", check=False)
    took = time.monotonic() - t
    rep.check(p.returncode == 4 and p.stderr == BUSY_W1 + "\n" and 1.0 <= took < 3.0,
              f"locked, -w 1: exit {p.returncode} after {took:.2f} s, stderr {p.stderr!r}")
    rep.check(topo.bpt("bpf-iptables", "-S", "-v").stdout == s0,
              "locked: -S -v (rules and counters) changed")
    rep.check(open(os.path.join(topo.state, "snapshot"), "rb").read() == st0,
              "locked: the saved state changed")
    rep.check(topo.bpt("bpf-iptables-save", check=False).returncode == 0,
              "locked: bpf-iptables-save must still read")
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    p = topo.bpt("bpf-iptables", "-A", "INPUT", "-p", "tcp", "--dport", "1", "-j", "ACCEPT",
                 check=False)
    rep.check(p.returncode == 0, f"unlocked: -A works again: {p.stderr!r}")
    topo.bpt("bpf-iptables", "-D", "INPUT", "-p", "tcp", "--dport", "1", "-j", "ACCEPT")

    # ---- 3. without -w, real contention ----
    base3 = 40000
    n3 = max(a.cmds // 5, 4)
    plans3 = [[("A", base3 + p * n3 + i, f"-A {spec(base3 + p * n3 + i)}")
               for i in range(n3)] for p in range(a.procs)]
    res3 = run_workers(topo, plans3)
    ok, busy, other = set(), 0, []
    for p, rr in enumerate(res3):
        for (op, port, _), (rc, err) in zip(plans3[p], rr):
            if rc == 0:
                ok.add(port)
            elif rc == 4 and err == BUSY:
                busy += 1
            else:
                other.append((port, rc, err))
    got = {x for x in ports_in(topo.bpt("bpf-iptables", "-S", "INPUT").stdout)
           if x >= base3}
    print(f"no -w: {a.procs} x {n3} appends at once: {len(ok)} succeeded, {busy} refused "
          f"(lock busy), {len(other)} other; rules present {len(got)}", flush=True)
    rep.check(not other, f"no -w: unexpected results {other[:5]}")
    rep.check(got == ok, f"no -w: rules present differ from the successful commands: "
              f"missing {sorted(ok - got)[:5]}, extra {sorted(got - ok)[:5]}")
    rep.check(busy > 0, "no -w: no command met the lock (no contention happened)")
    topo.bpt("bpf-iptables", "--unload")
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
