#!/usr/bin/env python3
"""Conformance runner: the upstream iptables extension test cases (.t files)
against bpf-iptables.

For every case RULE;SAVED;RESULT[;VARIANT[;ALT]] in a filter-table section and
every chain of its ':CHAIN,...' header:

  1. IUT -A CHAIN RULE                       (RULE split like a shell: shlex)
     OK/NOMATCH: must exit 0.
     FAIL:       must exit non-zero and leave the state unchanged
                 (bpf-iptables-save output and the bytes of every file in
                 the state directory).
  2. bpf-iptables-save must contain the line '-A CHAIN SAVED' (OK) or must
     not (NOMATCH).
  3. IUT -D CHAIN RULE must exit 0, and the table must be empty again.

Expected results use the LEGACY variant semantics of the upstream runner.

  conformance.py --bin build/bpf-iptables     # the IUT
  conformance.py --oracle                     # validate against iptables-legacy

In --oracle mode the cases on which iptables-legacy 1.8.9 and the 1.8.13 .t
files disagree are reported as known version differences, not failures.
"""

import argparse
import os
import shlex
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "conformance"

# The extensions bpf-iptables supports: only these files are run.
SUPPORTED_FILES = [
    "libipt_standard.t", "libxt_standard.t", "libxt_tcp.t", "libxt_udp.t",
    "libipt_icmp.t", "libxt_multiport.t", "libxt_conntrack.t",
    "libipt_conntrack.t", "libxt_state.t", "libxt_iprange.t",
    "libipt_iprange.t", "libxt_comment.t", "libxt_limit.t", "libxt_mark.t",
    "libxt_length.t", "libxt_mac.t", "libipt_LOG.t", "libipt_REJECT.t",
    "libxt_addrtype.t", "libxt_recent.t",
]

# Cases on which bpf-iptables DELIBERATELY diverges from the .t files.
# Key: (file name, RULE exactly as in the .t file).  Value: the reason.
# Every entry must be justified in a comment (and ideally in the docs);
# a failure of a listed case is reported as a known divergence, not a
# failure.  Empty: the IUT is meant to pass every supported case.
KNOWN_DIVERGENCES = {
}

# iptables-legacy 1.8.9 (the oracle on this machine) vs the 1.8.13 .t files.
# Only used with --oracle.  The IUT must follow the .t files (1.8.13).
# Categories (README of the conformance data):
#   glued     1.8.9 mis-parses glued option values (-ptcp) and --opt=value for
#             the core options -p -s -d -i -o -j; 1.8.13 accepts them
#   revrange  1.8.13 rejects reversed ranges that 1.8.9 accepts
#             (udp --sport/--dport 4:3, --length 4:3, --ctexpire 4:3,
#             --ct*port 4:3; tcp 4:3 is rejected by both)
#   ctproto0  1.8.13 rejects --ctproto 0; 1.8.9 accepts it
#   negfull   1.8.9 silently drops a negated full port range
#             (! --sport :, ! --dport 0:65535); 1.8.13 keeps it
#   icmp255   1.8.13 saves --icmp-type 255/255 as written; 1.8.9 saves "any"
KNOWN_VERSION_DIFFERENCES = {
    ("libipt_standard.t", "--protocol=tcp --source=1.2.3.4 "
     "--destination=5.6.7.8/32 --in-interface=eth0 --out-interface=eth1 "
     "--jump=ACCEPT"): "glued",
    ("libipt_standard.t", "-ptcp -s1.2.3.4 -d5.6.7.8/32 -ieth0 -oeth1 "
     "-jACCEPT"): "glued",
    ("libxt_tcp.t", "-p tcp -m tcp ! --sport :"): "negfull",
    ("libxt_tcp.t", "-p tcp -m tcp ! --dport :"): "negfull",
    ("libxt_udp.t", "-p udp -m udp ! --sport :"): "negfull",
    ("libxt_udp.t", "-p udp -m udp ! --dport :"): "negfull",
    ("libipt_icmp.t", "-p icmp -m icmp --icmp-type 255/255"): "icmp255",
    ("libxt_udp.t", "-p udp -m udp --sport 4:3"): "revrange",
    ("libxt_udp.t", "-p udp -m udp --dport 4:3"): "revrange",
    ("libxt_length.t", "-m length --length 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctexpire 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctorigsrcport 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctreplsrcport 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctorigdstport 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctrepldstport 4:3"): "revrange",
    ("libxt_conntrack.t", "-m conntrack --ctproto 0"): "ctproto0",
    ("libxt_conntrack.t", "-m conntrack ! --ctproto 0"): "ctproto0",
}

RESULTS = ("OK", "FAIL", "NOMATCH")


class Case:
    __slots__ = ("file", "lineno", "table", "chains", "rule", "saved",
                 "result")

    def __init__(self, file, lineno, table, chains, rule, saved, result):
        self.file, self.lineno, self.table = file, lineno, table
        self.chains, self.rule, self.saved = chains, rule, saved
        self.result = result

    def where(self):
        return f"{self.file}:{self.lineno}"


def variant_result(res, variant, alt):
    """Expected result for the LEGACY backend (upstream variant_res())."""
    if variant == "LEGACY":
        return res
    if alt is not None and alt in RESULTS:
        return alt
    return {"OK": "FAIL", "FAIL": "OK", "NOMATCH": "OK"}[res]


def parse_t(path):
    """Parse one .t file.  Returns (cases, skipped_count, errors)."""
    cases, skipped, errors = [], 0, []
    table, chains = "filter", []
    fname = os.path.basename(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith(":"):
                chains = [c.strip() for c in line[1:].split(",") if c.strip()]
                continue
            if line.startswith("*"):
                table = line[1:].strip()
                continue
            if line[0] in "@%":
                skipped += 1          # external shell commands upstream
                continue
            item = line.split(";")
            if len(item) < 3:
                errors.append(f"{fname}:{lineno}: malformed case: {line!r}")
                continue
            if not chains:
                errors.append(f"{fname}:{lineno}: case without chain header")
                continue
            rule = item[0]
            saved = rule if item[1] == "=" else item[1]
            res = item[2].strip()
            if len(item) > 3 and item[3].strip():
                alt = item[4].strip() if len(item) > 4 else None
                res = variant_result(res, item[3].strip(), alt)
            if res not in RESULTS:
                errors.append(f"{fname}:{lineno}: unknown result {res!r}")
                continue
            if table != "filter":
                skipped += 1
                continue
            cases.append(Case(fname, lineno, table, list(chains), rule,
                              saved, res))
    return cases, skipped, errors


def rule_lines(save_text):
    return [ln for ln in (save_text or "").splitlines() if ln.startswith("-A ")]


def run_case(be, case, chain):
    """Run one case in one chain.  Returns (ok, reason, details)."""
    try:
        argv = shlex.split(case.rule)
    except ValueError as e:
        return False, f"cannot split rule: {e}", ""
    shown = f"-A {chain} {case.rule}"

    before = be.snapshot() if case.result == "FAIL" else None
    r = be.ipt(["-A", chain] + argv)

    if case.result == "FAIL":
        if r.rc == 0:
            be.ipt(["-F"])  # clean up the rule that should not be there
            return False, "should fail but exited 0", f"command: {shown}\n"
        if r.rc < 0:
            return False, f"crashed/timed out (rc={r.rc})", r.err
        after = be.snapshot()
        if not be.snapshots_equal(before, after):
            detail = ""
            if before[0] != after[0]:
                detail += "save output changed:\n" + common.diff_text(
                    before[0] or "", after[0] or "", "before", "after")
            if not common.files_unchanged(before[1], after[1]):
                detail += "state dir: " + common.describe_files_diff(
                    before[1], after[1]) + "\n"
            be.ipt(["-F"])
            return False, "failed (rc=%d) but changed the state" % r.rc, detail
        return True, "", ""

    if r.rc != 0:
        return (False, f"cannot load: exit {r.rc}",
                f"command: {shown}\nstderr: {r.err.strip()}\n")

    saved = be.save()
    want = f"-A {chain} {case.saved}"
    lines = rule_lines(saved.out)
    problems, details = [], ""
    if saved.rc != 0:
        problems.append(f"save failed (rc={saved.rc})")
        details += f"save stderr: {saved.err.strip()}\n"
    elif case.result == "OK" and want not in lines:
        problems.append("saved rule not found")
        details += f"expected: {want}\n" + "".join(
            f"got:      {ln}\n" for ln in lines) + (
            "got:      (no rules)\n" if not lines else "")
    elif case.result == "NOMATCH" and want in lines:
        problems.append("should not match, but save shows it")
        details += f"unexpected: {want}\n"

    d = be.ipt(["-D", chain] + argv)
    if d.rc != 0:
        problems.append(f"-D failed (rc={d.rc})")
        details += f"command: -D {chain} {case.rule}\nstderr: {d.err.strip()}\n"
    after = be.save()
    left = rule_lines(after.out)
    if after.rc != 0 or left:
        if d.rc == 0:
            problems.append("table not empty after -D")
        details += "".join(f"left:     {ln}\n" for ln in left)
        be.ipt(["-F"])
    if problems:
        return False, "; ".join(problems), details
    return True, "", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("files", nargs="*",
                    help="run only these .t file names (default: all "
                         "supported ones)")
    args = ap.parse_args()

    tdir = common.require_conformance(NAME, "iptables-t")
    if args.oracle:
        common.require_oracle(NAME)
    else:
        common.require_iut(args.bin)

    files = args.files or SUPPORTED_FILES
    for f in files:
        if f not in SUPPORTED_FILES:
            print(f"error: {f} is not a supported extension file",
                  file=sys.stderr)
            return 2

    report = common.Report(NAME, args.strict_messages, args.verbose)
    known_table = dict(KNOWN_DIVERGENCES)
    if args.oracle:
        known_table.update(KNOWN_VERSION_DIFFERENCES)
    seen_known = set()
    start = time.time()
    total_skipped = 0
    missing = []
    for fname in files:
        path = tdir / fname
        if not path.is_file():
            missing.append(fname)
            continue
        cases, skipped, errors = parse_t(str(path))
        total_skipped += skipped
        for e in errors:
            report.fail(f"parse error: {e}")
        if args.oracle:
            be = common.Oracle(tag=f"c{files.index(fname)}",
                               label="oracle")
        else:
            be = common.IUT(args.bin, tag=f"c{files.index(fname)}",
                            keep_state=args.keep_state)
        try:
            for case in cases:
                for chain in case.chains:
                    ok, reason, details = run_case(be, case, chain)
                    title = f"{case.where()} [{chain}] {case.rule} " \
                            f"(expect {case.result}): {reason}"
                    key = (case.file, case.rule)
                    if ok:
                        report.ok()
                        if key in known_table:
                            seen_known.add(key)
                            report.info(f"listed known difference passed: "
                                        f"{case.where()} {case.rule}")
                    elif key in known_table:
                        seen_known.add(key)
                        report.known_difference(
                            f"[{known_table[key]}] {title}", details)
                    else:
                        report.fail(title, details)
        finally:
            be.close()

    if missing:
        for m in missing:
            report.fail(f"{m}: file not found in {tdir}")
    report.info(f"backend: {'iptables-legacy (oracle mode)' if args.oracle else args.bin}")
    report.info(f"{len(files)} files, {total_skipped} lines skipped "
                f"(other tables, @/% commands), {time.time() - start:.1f}s")
    stale = [k for k in known_table if k not in seen_known and k[0] in files]
    for k in stale:
        report.info(f"listed difference not exercised: {k[0]}: {k[1]}")
    return report.finish()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        common.netns_cleanup_all()
