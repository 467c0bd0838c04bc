#!/usr/bin/env python3
"""Resource limits and huge inputs (issue 6).

Every documented limit is exceeded once (and met once where that is cheap):
the command must fail with a clear error at load time, and the running
ruleset must stay the old one, whole: bpf-iptables-save -c text, the bytes of
the state directory and the data plane's generation (programs on lo,
bpfipt_inst) unchanged -- never half loaded.

  limit                              where                     exceeded by
  compiled tables <= 512 MiB         CP_MEM_LIMIT, compile.h   100 000 rules that cannot be grouped
  slots per chain <= 1 048 576       BPFIPT_MAX_WORDS * 64     1 048 576 rules + the policy
  nested -j calls <= 16              BPFIPT_MAX_DEPTH          17 (and 1 000) nested chains
  matches per rule <= 32             IPT_MAX_MATCHES, model.h  33 -m comment
  conntrack entries 1 .. 2^24        CT_MAX_LIMIT, ct_table.h  bpf-conntrack -T max=0 / 2^24 + 1

Huge inputs get a clear error or succeed; the peak RSS of each command is
measured (/usr/bin/time) and must stay below --max-rss-mb:
  a 1 000 000-line restore file (a deny list: it succeeds, and so does a -D
  in it), 64 KiB arguments (a comment and a LOG prefix are cut to 255 and 29
  characters as iptables-legacy cuts them; a list of 5 885 addresses is 5 885
  rules; a chain name, an option, one address are refused), a 64 KiB restore
  line, 100 000 words, 1 000 nested chains, a 1 000-chain loop.

  limits.py --bin build [--max-rss-mb 1536]

The last line is "limits: N passed, N failed"; the figures are printed above it.
"""

import argparse
import os
import re
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rlib  # noqa: E402

NAME = "limits"
T0 = time.monotonic()
BASE = """*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:keep - [0:0]
-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT
-A INPUT -j keep
-A keep -p udp -j DROP
COMMIT
"""


def table(lines):
    return "*filter\n" + "".join(lines) + "COMMIT\n"


def nested(n, loop=False):
    ls = [f":c{i} - [0:0]\n" for i in range(n)] + ["-A INPUT -j c0\n"]
    ls += [f"-A c{i} -j c{i + 1}\n" for i in range(n - 1)]
    ls.append("-A c%d -j %s\n" % (n - 1, "c0" if loop else "DROP"))
    return table(ls)


def deny_list(n):
    return table("-A INPUT -s %d.%d.%d.%d/32 -j DROP\n" % (11 + (i >> 16), (i >> 8) & 255,
                                                          i & 255, 1) for i in range(n))


def ungroupable(n):
    return table("-A INPUT -s 10.%d.%d.0/24 -p udp --dport %d -j %s\n" %
                 ((i >> 8) & 255, i & 255, i % 65536, "DROP" if i % 2 else "ACCEPT")
                 for i in range(n))


class Timed:
    def __init__(self, iut):
        self.iut = iut

    def run(self, prog, args, stdin=None):
        """(Result, seconds, peak RSS in MiB) of one command in the namespace."""
        argv = ["/usr/bin/time", "-f", "@@RSS %M", "ip", "netns", "exec", self.iut.ns,
                os.path.join(self.iut.bindir, prog)] + list(args)
        t0 = time.monotonic()
        r = rlib.common.run(argv, input=rlib.common._enc(stdin), env=self.iut.env, timeout=600)
        dt = time.monotonic() - t0
        err, _, rss = r.err.rpartition("@@RSS ")	# (no regex: 600 KB lines)
        m = re.match(r"\d+", rss)
        r.err = err
        r.err = r.err.replace("Command exited with non-zero status %d\n" % r.rc, "")
        return r, dt, (int(m.group(0)) / 1024 if m else -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--max-rss-mb", type=float, default=1536)
    a = ap.parse_args()
    rlib.require_root_tools(NAME, ("ip", "bpftool"))
    if not os.access("/usr/bin/time", os.X_OK):
        rlib.fail_setup(NAME, "/usr/bin/time (package time) is needed to measure peak RSS")
    rep = rlib.Report(NAME)
    iut = rlib.DpIUT(a.bin, tag="rb-limits")
    tm = Timed(iut)
    figures = []

    def base():
        r = iut.restore(BASE)
        if r.rc:
            rlib.fail_setup(NAME, f"base ruleset: {r.err.strip()}")

    def refused(what, prog, args, stdin, rc, piece, setup=BASE):
        r = iut.restore(setup)
        if r.rc:
            rlib.fail_setup(NAME, f"{what}: setup: {r.err.strip()}")
        before = iut.snapshot()
        r, dt, rss = tm.run(prog, args, stdin)
        after = iut.snapshot()
        figures.append(f"{what}: exit {r.rc} in {dt:.1f} s, peak RSS {rss:.0f} MiB: "
                       f"{r.err.strip()[:150]} [{time.monotonic() - T0:.0f}]")
        rep.check(r.rc == rc and piece in r.err,
                  f"{what}: exit {r.rc} (want {rc}), message {r.err.strip()[:200]!r} "
                  f"(want {piece!r})")
        rep.check(iut.snapshots_equal(before, after),
                  f"{what}: the running ruleset or the state changed (half loaded?)",
                  f"generation {before[2]} -> {after[2]}")
        rep.check(rss < a.max_rss_mb, f"{what}: peak RSS {rss:.0f} MiB >= {a.max_rss_mb}")
        # the next command works
        r2 = iut.ipt(["-A", "INPUT", "-s", "192.0.2.1", "-j", "DROP"])
        rep.check(r2.rc == 0, f"{what}: the next command fails: {r2.err.strip()}")

    def accepted(what, prog, args, stdin, check=None, setup=True):
        if setup:
            base()
        r, dt, rss = tm.run(prog, args, stdin)
        figures.append(f"{what}: exit {r.rc} in {dt:.1f} s, peak RSS {rss:.0f} MiB "
                       f"[{time.monotonic() - T0:.0f}]")
        rep.check(r.rc == 0, f"{what}: exit {r.rc}: {r.err.strip()[:200]}")
        rep.check(rss < a.max_rss_mb, f"{what}: peak RSS {rss:.0f} MiB >= {a.max_rss_mb}")
        if check:
            rep.check(check(), f"{what}: not what was loaded")

    try:
        base()
        # ---- the limits ----
        refused("compiled tables > 512 MiB (100 000 ungroupable rules)", "bpf-iptables-restore",
                [], ungroupable(100000), 1, "ruleset too large for the data plane")
        refused("slots per chain > 1 048 576", "bpf-iptables-restore", [],
                table(["-A INPUT -p udp\n"] * 1048576), 1,
                "needs 1048577 slots, the data plane allows 1048576")
        refused("17 nested -j", "bpf-iptables-restore", [], nested(17), 1,
                "chains nested too deeply: INPUT reaches 17 nested -j calls")
        accepted("16 nested -j", "bpf-iptables-restore", [], nested(16))
        # --test compiles too: a file the data plane refuses fails the test run
        refused("restore --test of 17 nested -j", "bpf-iptables-restore", ["--test"],
                nested(17), 1, "chains nested too deeply: INPUT reaches 17 nested -j calls")
        accepted("restore --test of 16 nested -j", "bpf-iptables-restore", ["--test"],
                 nested(16))
        refused("-A of the 17th nesting level", "bpf-iptables", ["-I", "c15", "-j", "keep"],
                None, 1, "nested too deeply", setup=nested(16).replace(
                    "COMMIT", ":keep - [0:0]\n-A keep -j ACCEPT\nCOMMIT"))
        refused("33 matches in a rule", "bpf-iptables",
                ["-A", "INPUT"] + ["-m", "comment", "--comment", "x"] * 33, None, 2,
                "too many matches in one rule (at most 32)")
        accepted("32 matches in a rule", "bpf-iptables",
                 ["-A", "INPUT"] + ["-m", "comment", "--comment", "x"] * 32, None)
        refused("conntrack max=0", "bpf-conntrack", ["-T", "max=0"], None, 2, "max")
        refused("conntrack max=2^24+1", "bpf-conntrack", ["-T", "max=%d" % ((1 << 24) + 1)],
                None, 2, "max")
        # ---- huge inputs ----
        big = "x" * 65536
        # as iptables-legacy: a comment is cut to 255 characters, a LOG prefix to 29
        accepted("64 KiB comment", "bpf-iptables", ["-A", "INPUT", "-m", "comment", "--comment",
                                                     big], None,
                 lambda: ("--comment " + "x" * 255 + "\n") in iut.ipt(["-S", "INPUT"]).out)
        refused("64 KiB chain name", "bpf-iptables", ["-N", big], None, 2,
                "too long (must be under 29 chars)")
        refused("64 KiB option name", "bpf-iptables", ["-A", "INPUT", "--" + big], None, 2,
                "unknown option")
        refused("64 KiB address", "bpf-iptables", ["-A", "INPUT", "-s", big], None, 2,
                "Hostname too long")
        accepted("64 KiB log prefix", "bpf-iptables", ["-A", "INPUT", "-j", "LOG", "--log-prefix",
                                                        big], None,
                 lambda: ("--log-prefix " + "x" * 29 + "\n") in iut.ipt(["-S", "INPUT"]).out)
        hosts = ",".join("10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255)
                         for i in range(6000))[:65536].rsplit(",", 1)[0]
        n = hosts.count(",") + 1
        accepted(f"64 KiB address list ({n} addresses)", "bpf-iptables",
                 ["-A", "INPUT", "-s", hosts, "-j", "DROP"], None,
                 lambda: iut.ipt(["-S", "INPUT"]).out.count("-j DROP") == n)
        accepted("64 KiB restore line", "bpf-iptables-restore", [],
                 table(["-A INPUT -m comment --comment " + big + " -j DROP\n"]))
        refused("100 000 words", "bpf-iptables", ["-A", "INPUT"] + ["-p", "tcp"] * 50000, None, 2,
                "multiple -p flags not allowed")
        refused("1 000 nested chains", "bpf-iptables-restore", [], nested(1000), 1,
                "INPUT reaches 1000 nested -j calls, the data plane allows 16")
        refused("a 1 000-chain loop", "bpf-iptables-restore", [], nested(1000, loop=True), 1,
                "line")
        # last: every command after it works on a million rules
        accepted("1 000 000-line restore (deny list)", "bpf-iptables-restore", [],
                 deny_list(1000000))
        r, dt, rss = tm.run("bpf-iptables", ["-D", "INPUT", "-s", "11.0.0.1", "-j", "DROP"])
        figures.append(f"-D of one rule of the 1 000 000: exit {r.rc} in {dt:.1f} s, peak RSS "
                       f"{rss:.0f} MiB")
        rep.check(r.rc == 0, f"-D in 1 000 000 rules: {r.err.strip()}")
        rep.check(rss < a.max_rss_mb, f"-D in 1 000 000 rules: peak RSS {rss:.0f} MiB")
    finally:
        iut.close()
    for f in figures:
        print(f)
    rep.finish()


if __name__ == "__main__":
    main()
