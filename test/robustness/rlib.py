"""Helpers shared by the robustness tests (test/robustness/*.py).

Python 3 standard library only.  Builds on test/compat/common.py (the
iptables-legacy oracle in a throw-away namespace, message extraction, state
snapshots) and adds:

* DpIUT: bpf-iptables in a namespace of its own WITH its data plane (the
  compatibility harnesses run with BPF_IPTABLES_DATAPLANE=off);
* dp_fingerprint(): what identifies the running ruleset of a namespace: the
  programs attached to lo and the generation in use (bpfipt_inst.cur, which
  every successful load flips), read with bpftool;
* a Report that prints one line per failure and the closing line
  "N passed, N failed".
"""

import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compat"))
import common  # noqa: E402,F401  (re-exported)


def fail_setup(name, why):
    """A robustness test that cannot run fails loudly (never skips)."""
    print(f"{name}: FAILED: cannot run: {why}", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)


def require_root_tools(name, tools=("ip", "bpftool", "iptables-legacy")):
    if os.geteuid() != 0:
        fail_setup(name, "needs root (namespaces, BPF)")
    for t in tools:
        if shutil.which(t) is None:
            fail_setup(name, f"'{t}' not found in PATH")


def sh(argv, input=None, timeout=120):
    p = subprocess.run(argv, input=input, capture_output=True, timeout=timeout, check=False)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def bpftool_json(ns, args):
    rc, out, err = sh(["ip", "netns", "exec", ns, "bpftool", "-j"] + args)
    if rc:
        raise RuntimeError(f"bpftool {' '.join(args)}: {err.strip()}")
    return json.loads(out)


def lo_prog_ids(ns):
    """The ids of the programs bpf-iptables attached to lo (tc ingress, egress)."""
    ids = []
    for d in ("ingress", "egress"):
        rc, out, _ = sh(["ip", "netns", "exec", ns, "tc", "filter", "show", "dev", "lo", d])
        for tok in out.split():
            if tok.startswith("bpfipt_") and ":[" in tok:
                ids.append(int(tok.split(":[")[1].rstrip("]")))
    return tuple(ids)


def inst_map_id(ns, prog_id):
    info = bpftool_json(ns, ["prog", "show", "id", str(prog_id)])
    for mid in info.get("map_ids", []):
        m = bpftool_json(ns, ["map", "show", "id", str(mid)])
        if m.get("name") == "bpfipt_inst":
            return mid
    raise RuntimeError(f"program {prog_id} uses no bpfipt_inst map")


def map_value(ns, map_id):
    v = bpftool_json(ns, ["map", "lookup", "id", str(map_id), "key", "0", "0", "0", "0"])
    return tuple(int(b, 16) if isinstance(b, str) else b for b in v["value"])


def dp_fingerprint(ns, cache={}):
    """(program ids on lo, bpfipt_inst bytes): changes on every switch of the
    running ruleset, and when the programs are replaced or removed."""
    ids = lo_prog_ids(ns)
    if not ids:
        return ("no data plane",)
    mid = cache.get(ids[0])
    if mid is None:
        mid = cache[ids[0]] = inst_map_id(ns, ids[0])
    return (ids, map_value(ns, mid))


class DpIUT(common.IUT):
    """bpf-iptables in its own namespace, state in a private directory, with
    its data plane loaded (attached to lo)."""

    def __init__(self, bindir, tag="iut", label="bpf-iptables"):
        super().__init__(bindir, netns=True, tag=tag, label=label)
        del self.env["BPF_IPTABLES_DATAPLANE"]
        sh(["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"])

    def fingerprint(self):
        return dp_fingerprint(self.ns)

    def snapshot(self):
        return (self.save_rules(["-c"]), self.files_snapshot(), self.fingerprint())

    @staticmethod
    def snapshots_equal(a, b):
        return a[0] == b[0] and common.files_unchanged(a[1], b[1]) and a[2] == b[2]

    def run(self, prog, args, input=None):
        argv = ["ip", "netns", "exec", self.ns, os.path.join(self.bindir, prog)] + list(args)
        return common.run(argv, input=common._enc(input), env=self.env)


class Report:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""), flush=True)
        return ok

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
