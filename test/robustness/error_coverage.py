#!/usr/bin/env python3
"""Which error paths of the parsers and the command line the tests reach.

An error site is a line that reports an error: a call of ipt_err_param,
ipt_err_set, iptc_err, rs_error, line_failed or dp_fail in parser/,
parser/ext/, controlplane/ops.c, controlplane/state.c, controlplane/compile.c
and bpf-iptables/cli.c.  The tree is built with --coverage in its own build
directory (build-cov), the chosen tests run against that build, and gcov says
which sites ran.  Prints every site that never ran and the totals per file.

  test/robustness/error_coverage.py [--build build-cov]
                                    [--tests unit,bad_input,limits,isolation,compat]

Not a CTest (it builds the tree again and takes minutes); docs/reliability-hostile.md
gives the last figures.
"""

import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SITE = re.compile(r"\b(ipt_err_param|ipt_err_set|iptc_err|rs_error|line_failed|dp_fail)\s*\(")
FILES = (["parser/" + f for f in sorted(os.listdir(os.path.join(ROOT, "parser")))
          if f.endswith(".c")] +
         ["parser/ext/" + f for f in sorted(os.listdir(os.path.join(ROOT, "parser/ext")))
          if f.endswith(".c")] +
         ["controlplane/ops.c", "controlplane/state.c", "controlplane/compile.c",
          "bpf-iptables/cli.c"])


def run(argv, **kw):
    print("+", " ".join(argv), flush=True)
    return subprocess.run(argv, cwd=ROOT, **kw)


def sites(path):
    """Line numbers of error sites (not the helpers' own definitions)."""
    out = []
    with open(os.path.join(ROOT, path)) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if SITE.search(s) and not re.match(r"^(static\s+)?int\s+\w+\(", s) \
                    and not s.startswith(("#define", "*", "/*")):
                out.append(n)
    return out


def counts(build, path):
    """{line: count} from gcov for one source file (None: never compiled in)."""
    obj = os.path.join(build, "CMakeFiles", "bpfipt.dir", path + ".o")
    if not os.path.exists(obj):
        return None
    p = subprocess.run(["gcov", "-t", "-o", obj, os.path.join(ROOT, path)], cwd=ROOT,
                       capture_output=True, text=True)
    res, cur = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([^:]+):\s*(\d+):(.*)$", line)
        if not m:
            continue
        c, n = m.group(1).strip(), int(m.group(2))
        if n == 0:
            cur = m.group(3) if "Source:" in m.group(3) else cur
            continue
        if c == "-":
            continue
        res[n] = 0 if c in ("#####", "=====") else int(c.rstrip("*"))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-cov"))
    ap.add_argument("--tests", default="unit,bad_input")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    if not a.no_build:
        run(["cmake", "-S", ".", "-B", b, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
             "-DCMAKE_C_FLAGS=--coverage -O0", "-DCMAKE_EXE_LINKER_FLAGS=--coverage"],
            check=True, stdout=subprocess.DEVNULL)
        run(["cmake", "--build", b], check=True, stdout=subprocess.DEVNULL)
        for dp, _, fs in os.walk(b):
            for f in fs:
                if f.endswith(".gcda"):
                    os.unlink(os.path.join(dp, f))
    tests = a.tests.split(",")
    env = dict(os.environ, CK_FORK="yes",
               IPT_CONFORMANCE_DIR=os.path.join(ROOT, "..", "shared", "conformance"),
               CONFORMANCE_DIR=os.path.join(ROOT, "..", "shared", "conformance"))
    if "unit" in tests:
        for t in ("test_parser", "test_ext_misc", "test_ext_proto", "test_list", "test_compile"):
            run([os.path.join(b, t)], env=env, stdout=subprocess.DEVNULL)
    if "bad_input" in tests:
        run([sys.executable, "test/robustness/bad_input.py", "--bin", b], env=env,
            stdout=subprocess.DEVNULL)
    if "limits" in tests:
        run([sys.executable, "test/robustness/limits.py", "--bin", b], env=env,
            stdout=subprocess.DEVNULL)
    if "isolation" in tests:
        run(["bash", "test/robustness/test_isolation.sh", b], env=env, stdout=subprocess.DEVNULL)
    if "compat" in tests:
        e = dict(env, BPF_IPTABLES_DATAPLANE="off")
        for h in ("conformance", "differential", "dumps"):
            run([sys.executable, f"test/compat/{h}.py", "--bin", b], env=e,
                stdout=subprocess.DEVNULL)
    total = hit = 0
    rows = []
    for path in FILES:
        ss = sites(path)
        if not ss:
            continue
        c = counts(b, path)
        if c is None:
            continue
        h = [n for n in ss if c.get(n, 0) > 0]
        missed = [n for n in ss if c.get(n, 0) == 0]
        total += len(ss)
        hit += len(h)
        rows.append((path, len(h), len(ss)))
        src = open(os.path.join(ROOT, path)).read().splitlines()
        for n in missed:
            print(f"not reached: {path}:{n}: {src[n - 1].strip()[:110]}")
    print()
    for path, h, n in rows:
        print(f"{path:32} {h:4}/{n:<4}")
    print(f"error sites reached: {hit} of {total} ({100.0 * hit / max(total, 1):.0f}%) "
          f"with tests {a.tests}")


if __name__ == "__main__":
    main()
