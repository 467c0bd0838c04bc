#!/usr/bin/env python3
"""Crashes (issue 6, promise 3): kill -9 of bpf-iptables-restore and of a single -A
at any moment leaves the old ruleset or the new one, never a mix, and nothing
behind.

Two rulesets, OLD and NEW, each a few thousand rules (so that a restore takes a
while), differ in nine probe rules: in INPUT, FORWARD and OUTPUT, at the head,
the middle and the tail, OLD accepts a probe port that NEW drops, or the other
way round per probe. After each killed command:
  - the data plane enforces OLD or NEW: the nine probe packets are all judged
    as one version judges them (a mix would judge some by each);
  - `bpf-iptables -S` and the saved state show the same version, the one
    enforced (never the old one saved and the new one running);
  - the next command works (the next trial's restore).
Trials:
  - at every named point of the control plane (BPF_IPTABLES_CRASH_AT, see
    controlplane/crashpoint.h): during the state-file write, after it, after
    compiling, at each map write, just before and just after the switch, after
    the carry, after the commit; after the grace period owed to the previous
    switch and after adding what the old generation counted meanwhile;
  - after a random delay spread uniformly over an uninterrupted restore's
    duration (--random trials);
  - the same for a single -A (--single trials), also one whose switch drops
    the generation it leaves (BPF_IPTABLES_SPARE_KEEP=1);
  - the first command of a namespace (no data plane yet) killed while
    writing its first generation or attaching to the interfaces;
  - the first rule that tracks connections, killed while the programs loaded
    again with conntrack replace the running ones interface by interface.
Leaks: the namespace's attachments, the programs they run and the maps those
reach (inner maps of the generations included) are counted before and after;
no snapshot.new or temporary file stays in the state directory; after --unload
every program and map id seen is gone from the kernel; nothing was pinned and
no bpf link holds one of our programs. (Global counts of `bpftool prog/map
show` are not compared: other work on the machine changes them.)

usage: crash.py --bin BUILD_DIR [--rules N] [--random N] [--single N] [--seed S]
"""

import argparse
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # generated files never go to the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relib  # noqa: E402
from relib import netlib, FW_IP1, DST_IP  # noqa: E402

CHAINS = {"INPUT": 9100, "FORWARD": 9200, "OUTPUT": 9300}
POS = ("head", "mid", "tail")
# probe (chain, position) -> accepted by OLD?  (NEW judges the other way)
OLD_ACCEPTS = {(c, p): (i + j) % 2 == 0 for i, c in enumerate(CHAINS) for j, p in enumerate(POS)}


def ruleset(version, n):
    """n filler rules per chain (never matching the probes, not groupable), the
    probe rules at head, middle and tail."""
    extra = n // 10 if version == "NEW" else 0
    out = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]"]
    for ci, (chain, base) in enumerate(CHAINS.items()):
        fill = [f"-A {chain} -s 198.18.{(i >> 8) & 255}.{i & 255}/32 -p tcp --dport "
                f"{1 + (i * 7 + ci) % 60000} -j DROP" for i in range(n + extra)]
        probes = {}
        for j, pos in enumerate(POS):
            acc = OLD_ACCEPTS[(chain, pos)] == (version == "OLD")
            probes[pos] = f"-A {chain} -p udp --dport {base + j} -j {'ACCEPT' if acc else 'DROP'}"
        half = len(fill) // 2
        out += [probes["head"]] + fill[:half] + [probes["mid"]] + fill[half:] + [probes["tail"]]
    out.append("COMMIT")
    return "\n".join(out) + "\n"


class Probes:
    def __init__(self, topo):
        self.topo = topo
        self.rx, self.socks = {}, []
        with netlib.netns(topo.ns["src"]):
            self.tx_src = self._sock(None)
        with netlib.netns(topo.ns["fw"]):
            self.tx_fw = self._sock(None)
            for j in range(3):
                self.rx[CHAINS["INPUT"] + j] = self._sock(CHAINS["INPUT"] + j)
        with netlib.netns(topo.ns["dst"]):
            for c in ("FORWARD", "OUTPUT"):
                for j in range(3):
                    self.rx[CHAINS[c] + j] = self._sock(CHAINS[c] + j)
        netlib.at_cleanup(self.close)
        self.nonce = 0

    def _sock(self, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if port:
            s.bind(("0.0.0.0", port))
        s.setblocking(False)
        self.socks.append(s)
        return s

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []

    def judge(self):
        """Which version judged each probe: {(chain, pos): 'OLD'|'NEW'}."""
        self.nonce += 1
        tag = b"P%08d" % self.nonce
        for s in self.rx.values():           # drain stragglers
            while True:
                try:
                    s.recv(64)
                except BlockingIOError:
                    break
        for chain, base in CHAINS.items():
            for j in range(3):
                tx, dst = ((self.tx_fw, DST_IP) if chain == "OUTPUT" else
                           (self.tx_src, FW_IP1 if chain == "INPUT" else DST_IP))
                tx.sendto(tag, (dst, base + j))
        got = set()
        deadline = time.monotonic() + 0.06
        while time.monotonic() < deadline:
            r, _, _ = select.select(list(self.rx.values()), [], [], 0.02)
            for s in r:
                port = [p for p, x in self.rx.items() if x is s][0]
                try:
                    while True:
                        if s.recv(64) == tag:
                            got.add(port)
                except BlockingIOError:
                    pass
        out = {}
        for chain, base in CHAINS.items():
            for j, pos in enumerate(POS):
                delivered = base + j in got
                out[(chain, pos)] = "OLD" if delivered == OLD_ACCEPTS[(chain, pos)] else "NEW"
        return out


def bpftool_json(args, ns=None):
    argv = ["bpftool", "-j"] + args
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    p = subprocess.run(argv, capture_output=True, text=True)
    try:
        return json.loads(p.stdout or "null")
    except json.JSONDecodeError:
        return None


def u32(v):
    """A key or value of a bpftool dump: an int, or raw bytes (no BTF)."""
    return v if isinstance(v, int) else int.from_bytes(bytes(int(x, 16) for x in v[:4]), "little")


def inventory(topo):
    """What the namespace holds: attachments, their programs, the maps reachable;
    the pool's pages (bpfipt_pages: key -> map id, key = generation * 2048 + page)."""
    net = bpftool_json(["net", "show"], topo.ns["fw"]) or []
    attach, progs = [], set()
    for entry in net:
        for kind in ("xdp", "tc"):
            for a in entry.get(kind, []):
                attach.append((kind, a.get("devname"), a.get("kind", a.get("mode")),
                               a.get("name")))
                if "id" in a:
                    progs.add(a["id"])
    maps, todo, pages = set(), [], {}
    for pid in progs:
        info = bpftool_json(["prog", "show", "id", str(pid)]) or {}
        todo += info.get("map_ids", [])
    while todo:
        m = todo.pop()
        if m in maps:
            continue
        maps.add(m)
        info = bpftool_json(["map", "show", "id", str(m)]) or {}
        if info.get("type") in ("array_of_maps", "hash_of_maps"):
            for e in bpftool_json(["map", "dump", "id", str(m)]) or []:
                v = e.get("value")
                if isinstance(v, (int, list)):
                    todo.append(u32(v))
                    if info.get("name") == "bpfipt_pages":
                        pages[u32(e.get("key"))] = u32(v)
    return {"attach": sorted(attach), "progs": progs, "maps": maps, "pages": pages}


def ct_table(topo):
    """The id of the namespace's connection table (bpfipt_ct, in its slot), or None."""
    for m in inventory(topo)["maps"]:
        if (bpftool_json(["map", "show", "id", str(m)]) or {}).get("name") == "bpfipt_ct":
            return m
    return None


def pins():
    p = subprocess.run(["find", "/sys/fs/bpf", "-name", "*bpfipt*"], capture_output=True,
                       text=True)
    return sorted(p.stdout.split())


class Trials:
    def __init__(self, topo, probes, files, rep):
        self.topo, self.probes, self.files, self.rep = topo, probes, files, rep
        self.show = {}
        self.cur = None
        self.stats = {}
        self.n = 0

    def learn(self, version):
        """Restore `version` without a kill; remember its -S."""
        self.topo.bpt("bpf-iptables-restore", self.files[version])
        self.show[version] = self.topo.bpt("bpf-iptables", "-S").stdout
        self.cur = version

    def run_killed(self, argv, at=None, delay=None, input_path=None, extra=None):
        env = dict(self.topo.env, **(extra or {}))
        if at:
            env["BPF_IPTABLES_CRASH_AT"] = at
        stdin = open(input_path) if input_path else subprocess.DEVNULL
        p = subprocess.Popen(self.topo.cmd("fw", argv), env=env, stdin=stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if delay is not None:
            time.sleep(delay)
            # ip netns exec execs the command: p.pid is bpf-iptables itself
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, err = p.communicate(timeout=120)
        if stdin is not subprocess.DEVNULL:
            stdin.close()
        return p.returncode, err.decode(errors="replace")

    def check_state(self, label, old, new):
        """After a killed command that went from `old` to `new`: one of them,
        enforced and saved alike."""
        self.n += 1
        verdicts = self.probes.judge()
        kinds = set(verdicts.values())
        s = self.topo.bpt("bpf-iptables", "-S", check=False)
        saved = [v for v in (old, new) if self.show.get(v) == s.stdout]
        with open(os.path.join(self.topo.state, "snapshot"), "rb") as f:
            state = f.read()
        pend = os.path.join(self.topo.state, "snapshot.new")
        running = kinds.pop() if len(kinds) == 1 else "MIX"
        ok = (s.returncode == 0 and running in (old, new) and saved == [running])
        self.rep.check(ok, f"{label}: data plane {running} ({verdicts if running == 'MIX' else ''})"
                       f", -S {saved or 'neither'} (exit {s.returncode}); state file "
                       f"{len(state)} bytes, snapshot.new {'present' if os.path.exists(pend) else 'absent'}")
        outcome = running if ok else "BAD"
        key = "old" if outcome == old else "new" if outcome == new else "bad"
        self.stats[key] = self.stats.get(key, 0) + 1
        self.cur = running if running in (old, new) else self.cur
        return running

    def before_switch_trial(self, label, argv, at):
        """A command killed at a point before its switch: the version in force
        stays, enforced and saved alike."""
        self.run_killed([os.path.join(self.topo.bin, argv[0])] + argv[1:], at=at)
        self.n += 1
        s = self.topo.bpt("bpf-iptables", "-S", check=False).stdout
        verdicts = set(self.probes.judge().values())
        self.rep.check(s == self.show[self.cur] and verdicts == {self.cur},
                       f"{label}: -S {'old' if s == self.show[self.cur] else 'changed'}, "
                       f"probes judged by {verdicts}")
        self.stats["old"] = self.stats.get("old", 0) + 1

    def restore_trial(self, label, at=None, delay=None):
        old = self.cur
        new = "NEW" if old == "OLD" else "OLD"
        self.run_killed([os.path.join(self.topo.bin, "bpf-iptables-restore"),
                         self.files[new]], at=at, delay=delay)
        return self.check_state(label, old, new)

    def single_trial(self, label, at=None, delay=None, extra=None):
        """-A of one more rule to the version in force, killed (extra: more
        environment for the killed command)."""
        old = self.cur
        rule = ["-A", "OUTPUT", "-p", "tcp", "--dport", "7", "-j", "DROP"]
        plus = old + "+"
        if plus not in self.show:
            self.topo.bpt("bpf-iptables", *rule)
            self.show[plus] = self.topo.bpt("bpf-iptables", "-S").stdout
            self.topo.bpt("bpf-iptables", "-D", *rule[1:])
        self.run_killed([os.path.join(self.topo.bin, "bpf-iptables")] + rule, at=at,
                        delay=delay, extra=extra)
        self.n += 1
        s = self.topo.bpt("bpf-iptables", "-S", check=False).stdout
        verdicts = set(self.probes.judge().values())
        which = "old" if s == self.show[old] else "new" if s == self.show[plus] else "bad"
        self.rep.check(which != "bad" and verdicts == {old},
                       f"{label}: -S is {which}, probes judged by {verdicts}")
        self.stats[which] = self.stats.get(which, 0) + 1
        if which == "new":
            self.topo.bpt("bpf-iptables", "-D", *rule[1:])


def points(topo, argv, extra=None):
    """The crash points a command passes, with their counts (a trace run)."""
    env = dict(topo.env, BPF_IPTABLES_CRASH_TRACE="1", **(extra or {}))
    p = subprocess.run(topo.cmd("fw", argv), env=env, capture_output=True, text=True)
    seen = {}
    for ln in p.stderr.splitlines():
        if ln.startswith("crash point "):
            _, _, name, n = ln.split()
            seen[name] = int(n)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rules", type=int, default=int(os.environ.get("REL_CRASH_RULES", 500)),
                    help="filler rules per chain")
    ap.add_argument("--random", type=int, default=int(os.environ.get("REL_CRASH_RANDOM", 80)))
    ap.add_argument("--single", type=int, default=int(os.environ.get("REL_CRASH_SINGLE", 20)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("REL_SEED", time.time())))
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    rep = relib.Report()
    topo = relib.Topo("crash", os.path.abspath(a.bin))
    files = {}
    work = netlib.tempdir("rel-crash-files-")
    for v in ("OLD", "NEW"):
        files[v] = os.path.join(work, v)
        with open(files[v], "w") as f:
            f.write(ruleset(v, a.rules))
    probes = Probes(topo)
    pins0 = pins()
    tr = Trials(topo, probes, files, rep)

    # the first command of the namespace, killed while writing its first
    # generation (before it attaches: the programs are still being verified)
    # or while attaching: nothing, or all
    tr.show["NONE"] = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
    for at in ("map-write:2", "attach:2", "attach:3", "switch"):
        tr.cur = "NONE"
        tr.run_killed([os.path.join(topo.bin, "bpf-iptables-restore"), files["OLD"]], at=at)
        verdicts = set(probes.judge().values())
        s = topo.bpt("bpf-iptables", "-S", check=False).stdout
        # no data plane judging = every probe delivered: OLD accepts some, NEW others
        none = len(verdicts) == 2
        rep.check(none and s == tr.show["NONE"],
                  f"first command killed at {at}: probes {verdicts}, -S {s!r}")
        topo.bpt("bpf-iptables", "--unload")
        for f in ("snapshot", "snapshot.new", "rules", "rules.new"):
            if os.path.exists(os.path.join(topo.state, f)):
                os.unlink(os.path.join(topo.state, f))

    t0 = time.monotonic()
    tr.learn("NEW")
    tr.learn("OLD")
    restore_s = time.monotonic() - t0
    t0 = time.monotonic()
    tr.learn("NEW")
    restore_s = min(restore_s, time.monotonic() - t0)
    # the first rule that tracks connections makes the table, which stays (before
    # inv0): killed once it is made, not yet in its slot (freed with the command),
    # then in its slot before the switch (kept, and used by the next command)
    ct_rule = ["-A", "OUTPUT", "-p", "tcp", "--dport", "7", "-m", "conntrack", "--ctstate",
               "NEW", "-j", "DROP"]
    rep.check(ct_table(topo) is None, "a ruleset without conntrack has a connection table")
    tr.before_switch_trial("first -A that tracks, killed at ct-table", ["bpf-iptables"] + ct_rule,
                           "ct-table")
    rep.check(ct_table(topo) is None, "killed at ct-table: the table is in its slot")
    tr.before_switch_trial("first -A that tracks, killed at switch", ["bpf-iptables"] + ct_rule,
                           "switch")
    table = ct_table(topo)
    rep.check(table is not None, "killed at switch: no table in the slot")
    # the namespace's programs were loaded without conntrack: the command loads
    # them again with it and replaces them interface by interface before its
    # switch (the one killed at switch did, but its switch never said so)
    for at in ("replace:2", "replace:3"):
        tr.before_switch_trial(f"first -A that tracks, killed replacing the programs at {at}",
                               ["bpf-iptables"] + ct_rule, at)
    topo.bpt("bpf-iptables", *ct_rule)
    parts = [ln.split("; parts: ")[-1] for ln in topo.bpt("bpf-iptables", "-V").stdout.splitlines()
             if "; parts: " in ln]
    # conntrack, the search of a pool of pages (the filler rules' ~3 000
    # vectors are more than a page, BPFIPT_PAGE_CHUNKS), OUTPUT's walk (the
    # rule's chain) and FORWARD's (the filler rules'), the walk of the slots
    # (more rules than the slot prefix holds)
    rep.check(parts and set(parts) == {"conntrack, pages, output, forward, walk"},
              f"the interfaces' parts: {parts}")
    topo.bpt("bpf-iptables", "-D", *ct_rule[1:])
    rep.check(ct_table(topo) == table, f"the next -A made another table: {table} -> "
              f"{ct_table(topo)}")
    inv0 = inventory(topo)
    seen_progs, seen_maps = set(inv0["progs"]), set(inv0["maps"])
    pts = points(topo, [os.path.join(topo.bin, "bpf-iptables-restore"), files["OLD"]])
    tr.cur = "OLD"
    rep.check({"map-write", "switch", "switched", "prepared", "exchanged", "committed"} <=
              set(pts),
              f"crash points reached by a restore: {pts}")
    print(f"ruleset: {3 * a.rules} + 9 rules; restore {restore_s * 1000:.0f} ms; crash points "
          f"{pts}", flush=True)

    # every named point, every occurrence (state-write: the first, the last)
    named = 0
    for name, count in sorted(pts.items()):
        for k in sorted({1, count}) if name == "state-write" else range(1, count + 1):
            tr.restore_trial(f"restore killed at {name}:{k}", at=f"{name}:{k}")
            named += 1
    # random moments over the whole duration of a restore
    t0 = time.monotonic()
    for i in range(a.random):
        d = rnd.uniform(0, restore_s * 1.1)
        tr.restore_trial(f"restore killed after {d * 1000:.0f} ms (trial {i})", delay=d)
    rand_s = time.monotonic() - t0
    # a single -A
    single_s = None
    t = time.monotonic()
    topo.bpt("bpf-iptables", "-A", "OUTPUT", "-p", "tcp", "--dport", "7", "-j", "DROP")
    single_s = time.monotonic() - t
    topo.bpt("bpf-iptables", "-D", "OUTPUT", "-p", "tcp", "--dport", "7", "-j", "DROP")
    n0 = tr.n
    for name in ("grace", "prepared", "switch", "switched", "carried", "exchanged",
                 "committed"):
        tr.single_trial(f"-A killed at {name}", at=name)
    for i in range(a.single):
        d = rnd.uniform(0, single_s * 1.1)
        tr.single_trial(f"-A killed after {d * 1000:.0f} ms (trial {i})", delay=d)
    # an -A whose switch drops the generation it leaves (a large ruleset's
    # default; BPF_IPTABLES_SPARE_KEEP=1 here): killed before the drop, between
    # the deletes and the fold, and at random
    drop = {"BPF_IPTABLES_SPARE_KEEP": "1"}
    rule = ["-A", "OUTPUT", "-p", "tcp", "--dport", "7", "-j", "DROP"]
    dpts = points(topo, [os.path.join(topo.bin, "bpf-iptables")] + rule, extra=drop)
    topo.bpt("bpf-iptables", "-D", *rule[1:])
    rep.check("dropped" in dpts, f"crash points of an -A that drops the spare: {dpts}")
    for name in ("carried", "dropped"):
        tr.single_trial(f"-A dropping the spare, killed at {name}", at=name, extra=drop)
    for i in range(a.single // 4):
        d = rnd.uniform(0, single_s * 1.1)
        tr.single_trial(f"-A dropping the spare, killed after {d * 1000:.0f} ms (trial {i})",
                        delay=d, extra=drop)
    singles = tr.n - n0

    # the next command works; nothing accumulated
    tr.learn("OLD")
    inv1 = inventory(topo)
    seen_progs |= inv1["progs"]
    seen_maps |= inv1["maps"]
    rep.check(inv1["attach"] == inv0["attach"],
              f"attachments changed: {inv0['attach']} -> {inv1['attach']}")
    rep.check(inv1["progs"] == inv0["progs"], f"programs {inv0['progs']} -> {inv1['progs']}")
    # the pools' pages go with the ruleset's size (NEW has a tenth more rules):
    # the other maps are counted, and with OLD in both generations, each holds
    # the same pages, pages 0 .. n - 1 (none left past a smaller pool)
    nonpage = [len(i["maps"] - set(i["pages"].values())) for i in (inv0, inv1)]
    rep.check(nonpage[0] == nonpage[1], f"maps reachable besides pages: {nonpage}")
    tr.learn("OLD")
    per_gen = {}
    for k in inventory(topo)["pages"]:
        per_gen.setdefault(k // 2048, []).append(k % 2048)
    held = sorted(per_gen.get(g, []) for g in (0, 1))
    rep.check(held[0] and held[0] == held[1] == list(range(len(held[0]))),
              f"the IPv4 generations' pages: {held}")
    left = sorted(set(os.listdir(topo.state)) - {"lock", "snapshot", "boot"})
    rep.check(not left, f"files left in the state directory: {left}")
    rep.check(pins() == pins0, f"pins: {pins0} -> {pins()}")
    links = [ln for ln in bpftool_json(["link", "show"]) or []
             if ln.get("prog_id") in seen_progs]
    rep.check(not links, f"bpf links to our programs: {links}")
    print(f"trials: {tr.n + 4} ({named} at named points, {a.random} at random moments over "
          f"{restore_s * 1000:.0f} ms ({rand_s:.1f} s), {singles} of a single -A, 4 first "
          f"commands); outcome old {tr.stats.get('old', 0)}, new {tr.stats.get('new', 0)}, "
          f"mixed {tr.stats.get('bad', 0)}; attachments {len(inv1['attach'])}, programs "
          f"{len(inv1['progs'])}, maps {len(inv0['maps'])} before and {len(inv1['maps'])} "
          f"after; seed {a.seed}", flush=True)

    # after --unload every program and map we ever saw is gone from the kernel
    topo.bpt("bpf-iptables", "--unload")
    deadline = time.monotonic() + 5
    while True:
        progs = {p["id"] for p in bpftool_json(["prog", "show"]) or []}
        maps = {m["id"] for m in bpftool_json(["map", "show"]) or []}
        alive_p, alive_m = seen_progs & progs, seen_maps & maps
        if not alive_p and not alive_m or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    rep.check(not alive_p and not alive_m,
              f"after --unload still alive: programs {sorted(alive_p)}, maps {sorted(alive_m)}")
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
