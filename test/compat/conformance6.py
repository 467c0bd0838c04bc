#!/usr/bin/env python3
"""Conformance for IPv6: the upstream iptables extension cases (.t files) and
the IPv6 cases of ip6tables.t (next to this file), run through bpf-ip6tables
and through ip6tables-legacy live in a throw-away namespace.

The .t expectations are written for iptables (IPv4); for IPv6 the oracle is
ip6tables-legacy itself. For every case RULE and every chain of its header:

  1. -A CHAIN RULE on both: the exit status must be the same; the message
     (text after the first ': ') is compared as the other harnesses do.
     When the IUT refuses, its state (save -c and the state directory bytes)
     must be unchanged.
  2. When both accept: the rule lines of the two save outputs must be the same,
     then -L -n -v and -S must be the same.
  3. -D CHAIN RULE on both: same exit status; both tables empty again.

The cases of ip6tables.t carry their own expectation (RULE;SAVED;RESULT, as
the .t files): it is checked against the oracle too, so a wrong expectation
shows up as a failure of the case file rather than passing silently.

On the cases where iptables 1.8.9 (the oracle) and 1.8.13 (the .t files)
disagree, bpf-ip6tables follows 1.8.13 as bpf-iptables does: those are listed
in conformance.KNOWN_VERSION_DIFFERENCES and reported as known differences.

  conformance6.py --bin build            # bpf-ip6tables vs ip6tables-legacy
  conformance6.py --oracle               # ip6tables-legacy vs itself (harness check)
"""

import argparse
import os
import shlex
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import conformance  # noqa: E402

NAME = "conformance6"
OWN_CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ip6tables.t")


def rule_lines(text):
    return [ln for ln in (text or "").splitlines() if ln.startswith("-A ")]


def compare_case(report, oracle, iut, case, chain, known):
    """One case in one chain on both sides. Returns nothing; reports."""
    title = f"{case.where()} [{chain}] {case.rule}"
    try:
        argv = shlex.split(case.rule)
    except ValueError as e:
        report.fail(f"{title}: cannot split rule: {e}")
        return
    problems, details = [], ""
    before = iut.snapshot()
    o = oracle.ipt(["-A", chain] + argv)
    i = iut.ipt(["-A", chain] + argv)
    if o.rc != i.rc:
        problems.append(f"-A exit {i.rc}, ip6tables-legacy {o.rc}")
        details += f"oracle: {o.err.strip()}\niut:    {i.err.strip()}\n"
    if i.rc != 0 and not iut.snapshots_equal(before, iut.snapshot()):
        problems.append("refused but changed the state")
    own = case.file == os.path.basename(OWN_CASES)
    if own:
        # the case file's own expectation, checked against the oracle
        want = f"-A {chain} {case.saved}"
        got = rule_lines(oracle.save_rules())
        ok = {"OK": o.rc == 0 and want in got, "NOMATCH": o.rc == 0 and want not in got,
              "FAIL": o.rc != 0}[case.result]
        if not ok:
            problems.append(f"ip6tables.t says {case.result}, ip6tables-legacy does not")
            details += f"expected: {want}\n" + "".join(f"oracle:   {ln}\n" for ln in got)
    if o.rc == 0 and i.rc == 0:
        for what, args in (("save", None), ("-S", ["-S"]), ("-L -n -v", ["-L", "-n", "-v"])):
            if args is None:
                a, b = oracle.save_rules(), iut.save_rules()
            else:
                a, b = oracle.ipt(args).out, iut.ipt(args).out
            if a != b:
                problems.append(f"{what} differs")
                details += common.diff_text(a or "", b or "")
                break
        do = oracle.ipt(["-D", chain] + argv)
        di = iut.ipt(["-D", chain] + argv)
        if do.rc != di.rc:
            problems.append(f"-D exit {di.rc}, ip6tables-legacy {do.rc}")
            details += f"oracle: {do.err.strip()}\niut:    {di.err.strip()}\n"
        if rule_lines(iut.save_rules()) and di.rc == 0:
            problems.append("table not empty after -D")
    # start the next case from empty tables on both sides
    for be in (oracle, iut):
        if rule_lines(be.save_rules()):
            be.ipt(["-F"])
    key = (case.file, case.rule)
    if problems:
        if key in known:
            report.known_difference(f"[{known[key]}] {title}: {'; '.join(problems)}", details)
        else:
            report.fail(f"{title}: {'; '.join(problems)}", details)
        return
    om, im = common.message(o.err), common.message(i.err)
    if o.rc != 0 and om != im:
        report.msg_mismatch(title, f"oracle: {om}\niut:    {im}\n")
        return
    report.ok()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("files", nargs="*",
                    help="run only these .t file names (ip6tables.t: the IPv6 cases)")
    args = ap.parse_args()

    common.set_family(6)
    # the live ip6tables-legacy is the only reference here: without it (or the
    # .t files) this harness fails, it does not skip
    os.environ["CI"] = "true"
    tdir = common.require_conformance(NAME, "iptables-t")
    common.require_oracle(NAME, strict=True)
    if not args.oracle:
        common.require_iut(args.bin)
    files = args.files or conformance.SUPPORTED_FILES + [os.path.basename(OWN_CASES)]

    report = common.Report(NAME, args.strict_messages, args.verbose)
    known = dict(conformance.KNOWN_DIVERGENCES)
    if not args.oracle:
        known.update(conformance.KNOWN_VERSION_DIFFERENCES)
    start = time.time()
    ncases = 0
    for n, fname in enumerate(files):
        path = OWN_CASES if fname == os.path.basename(OWN_CASES) else str(tdir / fname)
        if not os.path.isfile(path):
            report.fail(f"{fname}: file not found ({path})")
            continue
        cases, _, errors = conformance.parse_t(path)
        for e in errors:
            report.fail(f"parse error: {e}")
        oracle = common.Oracle(tag=f"o6{n}", label="oracle")
        if args.oracle:
            iut = common.Oracle(tag=f"i6{n}", label="oracle-as-iut")
        else:
            iut = common.IUT(args.bin, netns=True, tag=f"i6{n}", keep_state=args.keep_state)
        try:
            for case in cases:
                for chain in case.chains:
                    ncases += 1
                    compare_case(report, oracle, iut, case, chain, known)
        finally:
            oracle.close()
            iut.close()
    report.info(f"backend: {'ip6tables-legacy (oracle mode)' if args.oracle else args.bin}")
    report.info(f"{len(files)} files, {ncases} case runs, {time.time() - start:.1f}s")
    return report.finish()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        common.netns_cleanup_all()
