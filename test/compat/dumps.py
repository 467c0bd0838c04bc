#!/usr/bin/env python3
"""Restore/save round trip of real-world rulesets.

For each $CONFORMANCE_DIR/dumps/*.txt the '*filter' ... 'COMMIT' section is
restored into the oracle (iptables-legacy-restore in a throw-away network
namespace) and into bpf-iptables (bpf-iptables-restore, fresh state dir).
Compared (failures):
  * the exit status of restore,
  * the output of save and of save -c (without '#' lines),
  * the output of -S and -L -n -v.
Reported as info only: differences between the input section and the
oracle's save output (iptables normalises some rules).

Then the IUT must refuse restore input that contains a table other than
filter: exit status non-zero and the state (save output and state dir bytes)
unchanged.

  dumps.py --bin build/bpf-iptables
  dumps.py --oracle          # oracle vs oracle, validates the harness
"""

import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "dumps"

NAT_SECTION = """*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A POSTROUTING -o eth0 -j MASQUERADE
COMMIT
"""

SMALL_FILTER = """*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:natcheck - [0:0]
-A INPUT -s 192.0.2.1/32 -j natcheck
-A natcheck -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT
"""


# Restore inputs compared between oracle and IUT: (label, input, extra args).
# The base ruleset BASE_RULES is restored first each time.
BASE_RULES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:base - [0:0]
-A INPUT -s 192.0.2.0/24 -j base
-A base -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT
"""
RESTORE_CASES = [
    ("empty input", "", []),
    ("comments and blank lines only", "# nothing\n\n", []),
    ("empty filter section (flushes rules and user chains, keeps policies)",
     "*filter\nCOMMIT\n", []),
    ("policies without counters", "*filter\n:INPUT DROP\n:OUTPUT DROP\n"
     "COMMIT\n", []),
    ("--noflush appends", "*filter\n-A INPUT -s 1.1.1.1 -j DROP\nCOMMIT\n",
     ["--noflush"]),
    ("-n appends", "*filter\n:new1 - [0:0]\n-A new1 -j RETURN\nCOMMIT\n",
     ["-n"]),
    ("--counters keeps counters", "*filter\n:INPUT ACCEPT [3:300]\n"
     ":u1 - [0:0]\n[5:100] -A INPUT -j u1\nCOMMIT\n", ["--counters"]),
    ("counters ignored without -c", "*filter\n:INPUT ACCEPT [3:300]\n"
     "[5:100] -A INPUT -j DROP\nCOMMIT\n", []),
    ("unknown option in a rule", "*filter\n-A INPUT -s 1.1.1.1 -j DROP\n"
     "-A INPUT --foo\nCOMMIT\n", []),
    ("missing COMMIT", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j DROP\n",
     []),
    ("COMMIT without table", "COMMIT\n", []),
    ("bad policy", "*filter\n:INPUT BOGUS [0:0]\nCOMMIT\n", []),
    ("garbage line", "*filter\nfoo\nCOMMIT\n", []),
    ("jump to undefined chain", "*filter\n:u2 - [0:0]\n-A u2 -j nochain\n"
     "COMMIT\n", []),
    ("append to undefined chain", "*filter\n-A nochain -j ACCEPT\n"
     "COMMIT\n", []),
    ("policy on a user chain", "*filter\n:u3 DROP [0:0]\nCOMMIT\n", []),
    ("rule error after valid rules", "*filter\n:u4 - [0:0]\n"
     "-A u4 -p tcp --dport 80 -j ACCEPT\n-A u4 -p tcp --dport 99999\n"
     "COMMIT\n", []),
    ("quoted strings", "*filter\n-A INPUT -m comment --comment \"a b\" "
     "-j LOG --log-prefix \"say \\\"hi\\\" \"\nCOMMIT\n", []),
    ("unknown table", "*bogus\nCOMMIT\n", []),
]


def filter_section(text):
    """The '*filter' ... 'COMMIT' lines (inclusive) of a save file."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if not inside and line.strip() == "*filter":
            inside = True
        if inside:
            out.append(line)
            if line.strip() == "COMMIT":
                break
    if not out or out[-1].strip() != "COMMIT":
        return None
    return "".join(out)


def compare(report, title, a, b, la="oracle", lb="iut"):
    if a.rc != b.rc or a.out != b.out:
        a_out, b_out = a.out, b.out
        report.fail(f"{title}: output differs",
                    f"exit {la} {a.rc}, {lb} {b.rc}\n"
                    + common.diff_text(a_out, b_out, la, lb)
                    + (f"{lb} stderr: {b.err.strip()}\n" if b.err else ""))
        return False
    if a.msg != b.msg:
        report.msg_mismatch(title, f"{la}: {a.msg}\n{lb}: {b.msg}\n")
        return True
    report.ok()
    return True


class Stripped:
    """A save Result with the '#' lines removed."""

    def __init__(self, r):
        self.rc, self.err = r.rc, r.err
        self.out = common.strip_comments(r.out)
        self.msg = r.msg


def new_iut(args, tag):
    if args.oracle:
        return common.Oracle(tag=tag, label="oracle2")
    # only numeric listings here: no name lookups, no namespace needed
    return common.IUT(args.bin, netns=False, tag=tag,
                      keep_state=args.keep_state)


def restore_cases(report, args):
    """Valid and invalid restore inputs, oracle vs IUT."""
    oracle = common.Oracle(tag="rc-o")
    iut = new_iut(args, "rc-i")
    try:
        for label, data, extra in RESTORE_CASES:
            title = f"restore case '{label}'"
            b1, b2 = oracle.restore(BASE_RULES), iut.restore(BASE_RULES)
            if b1.rc != 0 or b2.rc != 0:
                report.fail(f"{title}: base ruleset not restored "
                            f"(oracle {b1.rc}, iut {b2.rc})", b2.err)
                continue
            before = iut.snapshot()
            ro, ri = oracle.restore(data, extra), iut.restore(data, extra)
            so = common.strip_comments(oracle.save(["-c"]).out)
            si = common.strip_comments(iut.save(["-c"]).out)
            problems = []
            if ro.rc != ri.rc:
                problems.append(f"exit status oracle {ro.rc} != iut {ri.rc}")
            if ro.out != ri.out:
                problems.append("stdout differs")
            if so != si:
                problems.append("save -c differs afterwards")
            if ri.rc != 0 and not iut.snapshots_equal(before, iut.snapshot()):
                problems.append("IUT failed but changed its state")
            shown = f"input {data!r}, args {extra}"
            if problems:
                report.fail(f"{title}: " + "; ".join(problems),
                            f"{shown}\noracle: exit {ro.rc}: {ro.err.strip()}"
                            f"\niut: exit {ri.rc}: {ri.err.strip()}\n"
                            + common.diff_text(so, si))
            elif ro.msg != ri.msg:
                report.msg_mismatch(title, f"{shown}\noracle: {ro.msg}\n"
                                           f"iut:    {ri.msg}\n")
            else:
                report.ok()
    finally:
        oracle.close()
        iut.close()


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    args = ap.parse_args()

    ddir = common.require_conformance(NAME, "dumps")
    common.require_oracle(NAME)
    if not args.oracle:
        common.require_iut(args.bin)

    report = common.Report(NAME, args.strict_messages, args.verbose)
    start = time.time()
    files = sorted(p for p in ddir.iterdir() if p.suffix == ".txt")
    if not files:
        common.skip_or_fail(NAME, f"no *.txt files in {ddir}")
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        section = filter_section(text)
        if section is None:
            report.info(f"{path.name}: no *filter section, skipped")
            continue
        oracle = common.Oracle(tag=f"d{i}o")
        iut = new_iut(args, f"d{i}i")
        try:
            ro = oracle.restore(section)
            ri = iut.restore(section)
            t = f"{path.name}: restore"
            if ro.rc != 0:
                report.info(f"{path.name}: the oracle rejects the section "
                            f"(exit {ro.rc}: {ro.err.strip()})")
            ok = compare(report, t, ro, ri)
            for sargs in ([], ["-c"]):
                compare(report, f"{path.name}: save {' '.join(sargs)}".rstrip(),
                        Stripped(oracle.save(sargs)),
                        Stripped(iut.save(sargs)))
            for largs in (["-S"], ["-L", "-n", "-v"], ["-L", "-n", "-v", "-x",
                                                       "--line-numbers"]):
                compare(report, f"{path.name}: iptables {' '.join(largs)}",
                        oracle.ipt(largs), iut.ipt(largs))
            # Input vs the oracle's normalised output: information only.
            saved = common.strip_comments(oracle.save().out)
            if saved != common.strip_comments(section):
                diff = common.diff_text(common.strip_comments(section), saved,
                                        "input", "oracle save")
                report.info(f"{path.name}: the oracle's save output differs "
                            f"from the input (normalisation):\n"
                            + common.indent(diff, "    ").rstrip("\n"))
            else:
                report.info(f"{path.name}: oracle save == input section")
            if not ok:
                continue
            # Idempotence: restoring the saved output again changes nothing.
            again = iut.save().out
            r2 = iut.restore(again)
            after = iut.save().out
            if r2.rc != 0 or common.strip_comments(after) != \
                    common.strip_comments(again):
                report.fail(f"{path.name}: restore of its own save output is "
                            f"not idempotent",
                            f"exit {r2.rc} {r2.err.strip()}\n" +
                            common.diff_text(common.strip_comments(again),
                                             common.strip_comments(after),
                                             "save", "save after restore"))
            else:
                report.ok()
        finally:
            oracle.close()
            iut.close()

    restore_cases(report, args)

    # Tables other than filter must be refused atomically by the IUT.
    if args.oracle:
        report.info("non-filter table checks skipped in --oracle mode "
                    "(iptables-legacy supports nat)")
    else:
        cases = [
            ("*nat only", NAT_SECTION),
            ("*nat before *filter", NAT_SECTION + SMALL_FILTER),
            ("*filter before *nat", SMALL_FILTER + NAT_SECTION),
        ]
        for j, (label, data) in enumerate(cases):
            iut = new_iut(args, f"n{j}")
            try:
                base = filter_section(
                    (ddir / "ipt-save-filter.txt").read_text()) \
                    if (ddir / "ipt-save-filter.txt").is_file() else \
                    SMALL_FILTER.replace("natcheck", "basechain")
                r0 = iut.restore(base)
                if r0.rc != 0:
                    report.fail(f"non-filter table ({label}): could not "
                                f"set up the base ruleset (exit {r0.rc})",
                                r0.err)
                    continue
                before = iut.snapshot()
                r = iut.restore(data)
                after = iut.snapshot()
                problems = []
                if r.rc == 0:
                    problems.append("restore exited 0")
                if before[0] != after[0]:
                    problems.append("save output changed")
                if not common.files_unchanged(before[1], after[1]):
                    problems.append("state dir changed: " +
                                    common.describe_files_diff(before[1],
                                                               after[1]))
                if problems:
                    report.fail(f"restore with a non-filter table ({label}): "
                                + "; ".join(problems),
                                f"stderr: {r.err.strip()}\n" + (
                                    common.diff_text(before[0] or "",
                                                     after[0] or "",
                                                     "before", "after")
                                    if before[0] != after[0] else ""))
                else:
                    report.ok()
                    report.info(f"non-filter table ({label}): refused with "
                                f"exit {r.rc}: {r.err.strip()[:160]}")
            finally:
                iut.close()

    report.info(f"{len(files)} dump files in {time.time() - start:.1f}s")
    return report.finish()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        common.netns_cleanup_all()
