#!/usr/bin/env python3
"""IPv6 restore/save round trips: bpf-ip6tables-restore, -save, -S and -L
against ip6tables-legacy-restore and friends, live in throw-away namespaces.

For each IPv6 ruleset below (and each valid or invalid restore input of
RESTORE_CASES, restored over BASE_RULES) both sides get the same input, then
compared (failures): the exit status of restore, stdout, save and save -c
(without '#' lines), -S, -S -v, and the listings -L -n -v, -L -n
--line-numbers, -L -n -v -x, -L (names: both sides in their own namespace,
where the same /etc/hosts answers); a refused input must leave the IUT's
state unchanged. Error messages are compared like the other harnesses do.

  roundtrip6.py --bin build
  roundtrip6.py --oracle      # ip6tables-legacy against itself (harness check)
"""

import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "roundtrip6"

# A dual-stack server's IPv6 filter table, as ip6tables-legacy-save prints it.
SERVER = """*filter
:INPUT DROP [10:1000]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [20:2000]
:icmp6-in - [0:0]
:log-drop - [0:0]
:ssh-in - [0:0]
[100:8000] -A INPUT -i lo -j ACCEPT
[5:400] -A INPUT -m conntrack --ctstate INVALID -j DROP
-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A INPUT -p ipv6-icmp -j icmp6-in
-A INPUT -s 2001:db8:10::/48 -p tcp -m tcp --dport 22 -j ssh-in
-A INPUT -d ff02::fb/128 -p udp -m udp --dport 5353 -j ACCEPT
-A INPUT -s fe80::/10 -d fe80::/10 -p udp -m udp --sport 547 --dport 546 -j ACCEPT
-A INPUT -p tcp -m multiport --dports 80,443 -j ACCEPT
-A INPUT -p tcp -j REJECT --reject-with tcp-reset
-A INPUT -p udp -j REJECT --reject-with icmp6-port-unreachable
-A INPUT -j log-drop
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 1 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 2 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 3/0 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 4 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 128 -m limit --limit 10/sec -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 133 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 134 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 135 -j ACCEPT
-A icmp6-in -p ipv6-icmp -m icmp6 --icmpv6-type 136 -j ACCEPT
-A icmp6-in -j DROP
-A log-drop -m limit --limit 5/min -j LOG --log-prefix "v6 drop: " --log-level 6
-A log-drop -j DROP
-A ssh-in -m recent --set --name ssh6 --mask ffff:ffff:ffff:ffff:: --rsource
-A ssh-in -m recent --update --seconds 60 --hitcount 4 --name ssh6 --mask ffff:ffff:ffff:ffff:: --rsource -j DROP
-A ssh-in -j ACCEPT
COMMIT
"""

# Every address form and the extensions with IPv6 payloads.
ADDRESSES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -s ::1/128 -d ::1/128 -j ACCEPT
-A INPUT ! -s 2001:db8::/32 -d 2001:db8:0:1::/64 -j DROP
-A INPUT -s 2001::/ffff:0:ffff:: -j DROP
-A INPUT -s ::ffff:10.0.0.0/104 -j DROP
-A INPUT -s fe80::1/128 -i eth0 -j ACCEPT
-A INPUT ! -p ipv6-icmp -j ACCEPT
-A INPUT -p ipv6-frag -j DROP
-A INPUT -p ipv6-route -j DROP
-A INPUT -p 253 -j DROP
-A FORWARD -m iprange --src-range 2001:db8::1-2001:db8::ff ! --dst-range 2001:db8:1::-2001:db8:1::ffff -j ACCEPT
-A FORWARD -m conntrack --ctorigsrc 2001:db8::1 ! --ctorigdst 2001:db8::/64 --ctreplsrc ::/0 --ctrepldst ::1/16 -j ACCEPT
-A FORWARD -j REJECT --reject-with icmp6-adm-prohibited
-A OUTPUT -p ipv6-icmp -m icmp6 ! --icmpv6-type 1/3 -j ACCEPT
-A OUTPUT -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1220
-A OUTPUT -j REJECT --reject-with icmp6-no-route
-A OUTPUT -j REJECT --reject-with icmp6-addr-unreachable
-A OUTPUT -j REJECT --reject-with icmp6-policy-fail
-A OUTPUT -j REJECT --reject-with icmp6-reject-route
-A OUTPUT -j NFLOG --nflog-prefix v6 --nflog-group 3
COMMIT
"""

RULESETS = [("server", SERVER), ("addresses", ADDRESSES)]

BASE_RULES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:base - [0:0]
-A INPUT -s 2001:db8::/32 -j base
-A base -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT
"""
RESTORE_CASES = [
    ("empty filter section", "*filter\nCOMMIT\n", []),
    ("--noflush appends", "*filter\n-A INPUT -s 2001:db8::5 -j DROP\nCOMMIT\n", ["--noflush"]),
    ("-n appends a chain", "*filter\n:new6 - [0:0]\n-A new6 -d ::1 -j RETURN\nCOMMIT\n", ["-n"]),
    ("--counters keeps counters", "*filter\n:INPUT ACCEPT [3:300]\n:u1 - [0:0]\n"
     "[5:100] -A INPUT -s fe80::/10 -j u1\nCOMMIT\n", ["--counters"]),
    ("-c sets counters", "*filter\n-A INPUT -s ::2 -c 7 700 -j ACCEPT\nCOMMIT\n", ["-c"]),
    ("counters ignored without -c", "*filter\n:INPUT ACCEPT [3:300]\n"
     "[5:100] -A INPUT -j DROP\nCOMMIT\n", []),
    ("--test changes nothing", "*filter\n-A INPUT -s 2001:db8::9 -j DROP\nCOMMIT\n", ["--test"]),
    ("--test with an error", "*filter\n-A INPUT -s 2001:db8::9/200 -j DROP\nCOMMIT\n",
     ["--test"]),
    ("missing COMMIT", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s ::1 -j DROP\n", []),
    ("COMMIT without table", "COMMIT\n", []),
    ("IPv4 address", "*filter\n-A INPUT -s 192.0.2.1 -j DROP\nCOMMIT\n", []),
    ("bad mask", "*filter\n-A INPUT -d ::1/129 -j DROP\nCOMMIT\n", []),
    ("-f", "*filter\n-A INPUT -f -j DROP\nCOMMIT\n", []),
    ("-m icmp", "*filter\n-A INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT\nCOMMIT\n", []),
    ("IPv4 reject type", "*filter\n-A INPUT -j REJECT --reject-with icmp-net-prohibited\n"
     "COMMIT\n", []),
    ("-t in a rule", "*filter\n-A INPUT -t filter -j ACCEPT\nCOMMIT\n", []),
    ("rule error after valid rules", "*filter\n:u4 - [0:0]\n"
     "-A u4 -p ipv6-icmp --icmpv6-type ping -j ACCEPT\n-A u4 -p ipv6-icmp --icmpv6-type bogus\n"
     "COMMIT\n", []),
    ("unknown table", "*bogus\nCOMMIT\n", []),
    ("-4 lines are for iptables-restore: ignored",
     "*filter\n-4 -A INPUT -j DROP\n-A INPUT -s ::1 -4 -j DROP\n-A INPUT -6 -s ::2 -j ACCEPT\n"
     "COMMIT\n", []),
]

LISTINGS = [["-S"], ["-S", "-v"], ["-L", "-n", "-v"], ["-L", "-n", "--line-numbers"],
            ["-L", "-n", "-v", "-x"], ["-L"], ["-L", "INPUT", "-n", "-v"]]


def compare_state(report, title, oracle, iut):
    """save, save -c and the listings on both sides."""
    for args in ([], ["-c"]):
        a, b = oracle.save(args), iut.save(args)
        sa, sb = common.strip_comments(a.out), common.strip_comments(b.out)
        if a.rc != b.rc or sa != sb:
            report.fail(f"{title}: save {' '.join(args)} differs",
                        f"exit oracle {a.rc}, iut {b.rc}\n" + common.diff_text(sa, sb)
                        + (f"iut stderr: {b.err.strip()}\n" if b.err else ""))
        else:
            report.ok()
    for args in LISTINGS:
        a, b = oracle.ipt(args), iut.ipt(args)
        if a.rc != b.rc or a.out != b.out:
            report.fail(f"{title}: {' '.join(args)} differs",
                        f"exit oracle {a.rc}, iut {b.rc}\n" + common.diff_text(a.out, b.out))
        else:
            report.ok()


def new_pair(args, tag):
    oracle = common.Oracle(tag=f"{tag}o")
    if args.oracle:
        iut = common.Oracle(tag=f"{tag}i", label="oracle2")
    else:
        iut = common.IUT(args.bin, netns=True, tag=f"{tag}i", keep_state=args.keep_state)
    return oracle, iut


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    args = ap.parse_args()

    common.set_family(6)
    # the live ip6tables-legacy is the only reference: without it this fails
    os.environ["CI"] = "true"
    common.require_oracle(NAME, strict=True)
    if not args.oracle:
        common.require_iut(args.bin)
    report = common.Report(NAME, args.strict_messages, args.verbose)
    start = time.time()

    for label, text in RULESETS:
        oracle, iut = new_pair(args, f"r{label[:3]}")
        try:
            for extra in ([], ["--counters"]):
                ro, ri = oracle.restore(text, extra), iut.restore(text, extra)
                title = f"ruleset '{label}' restore {' '.join(extra)}".rstrip()
                if ro.rc != ri.rc or ro.rc != 0:
                    report.fail(f"{title}: exit oracle {ro.rc}, iut {ri.rc}",
                                f"oracle: {ro.err.strip()}\niut: {ri.err.strip()}\n")
                    continue
                report.ok()
                compare_state(report, title, oracle, iut)
                # save -> restore -> save is the identity on the IUT
                saved = common.strip_comments(iut.save(["-c"]).out)
                again = iut.restore(saved, ["--counters"])
                back = common.strip_comments(iut.save(["-c"]).out)
                if again.rc != 0 or back != saved:
                    report.fail(f"{title}: save -c | restore -c | save -c is not the identity",
                                common.diff_text(saved, back, "first", "second"))
                else:
                    report.ok()
        finally:
            oracle.close()
            iut.close()

    oracle, iut = new_pair(args, "rc")
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
            problems = []
            if ro.rc != ri.rc:
                problems.append(f"exit status oracle {ro.rc} != iut {ri.rc}")
            if ro.out != ri.out:
                problems.append("stdout differs")
            so = common.strip_comments(oracle.save(["-c"]).out)
            si = common.strip_comments(iut.save(["-c"]).out)
            if so != si:
                problems.append("save -c differs afterwards")
            if ri.rc != 0 and not iut.snapshots_equal(before, iut.snapshot()):
                problems.append("IUT failed but changed its state")
            shown = f"input {data!r}, args {extra}"
            if problems:
                report.fail(f"{title}: " + "; ".join(problems),
                            f"{shown}\noracle: exit {ro.rc}: {ro.err.strip()}"
                            f"\niut: exit {ri.rc}: {ri.err.strip()}\n" + common.diff_text(so, si))
            elif common.message(ro.err) != common.message(ri.err):
                report.msg_mismatch(title, f"{shown}\noracle: {common.message(ro.err)}\n"
                                           f"iut:    {common.message(ri.err)}\n")
            else:
                report.ok()
    finally:
        oracle.close()
        iut.close()

    report.info(f"backend: {'ip6tables-legacy (oracle mode)' if args.oracle else args.bin}")
    report.info(f"{time.time() - start:.1f}s")
    return report.finish()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        common.netns_cleanup_all()
