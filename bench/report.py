#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py DIR: the tables (Markdown, on stdout), the targets of issue 7
with PASS/MISS, and the plots (DIR/*.png, gnuplot) from the CSV files bench/run.sh
wrote in DIR. Sections whose file is missing are left out. Ratios are taken
between numbers of the same run (the veth ones between points of the same size,
measured one after the other)."""
import csv
import os
import subprocess
import sys

D = sys.argv[1]
out = []
P = out.append


def load(name):
    path = os.path.join(D, name)
    if not os.path.exists(path):
        return None, []
    with open(path) as f:
        lines = f.read().splitlines()
    head = [l for l in lines if l.startswith("#")]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    return head, rows


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt(x, nd=0):
    if x is None:
        return "-"
    if nd == 0:
        return f"{x:,.0f}".replace(",", " ")
    return f"{x:.{nd}f}"


def table(header, rows):
    P("| " + " | ".join(header) + " |")
    P("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for r in rows:
        P("| " + " | ".join(str(c) for c in r) + " |")
    P("")


def provenance(head):
    for l in head:
        P("    " + l.lstrip("# "))
    P("")


targets = []     # (target, measured, ok)


def target(what, measured, ok):
    targets.append((what, measured, "PASS" if ok else ("MISS" if ok is not None else "n/a")))


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True, cwd=D)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report.py: gnuplot: {e}", file=sys.stderr)


def plot(png, title, xlabel, ylabel, series, logy=False):
    """series: [(label, [(x, y), ...])]; one data file per series"""
    cmds = []
    for i, (label, pts) in enumerate(series):
        pts = [(x, y) for x, y in pts if x is not None and y is not None and y > 0]
        if not pts:
            continue
        dat = f"{png[:-4]}.{i}.dat"
        with open(os.path.join(D, dat), "w") as f:
            for x, y in sorted(pts):
                f.write(f"{x} {y}\n")
        cmds.append(f"'{dat}' using 1:2 with linespoints title '{label}'")
    if not cmds:
        return
    gnuplot("\n".join([
        "set terminal pngcairo size 900,560 font ',10'" if has_cairo else
        "set terminal png size 900,560",
        "set termoption noenhanced", f"set output '{png}'", f"set title '{title}'", f"set xlabel '{xlabel}'",
        f"set ylabel '{ylabel}'", "set logscale x", "set grid", "set key outside right",
        "set logscale y" if logy else "set yrange [0:*]",
        "plot " + ", ".join(cmds), ""]))
    P(f"![{title}]({png})")
    P("")


_t = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True)
has_cairo = b"pngcairo" in _t.stdout + _t.stderr


def pk_ns(rows):
    """pktcost's ns per (ruleset, rules, packet, hook, ct)"""
    return {(r["ruleset"], int(r["rules"]), r["packet"], r["hook"], r["ct"]): num(r["ns"])
            for r in rows}


def pk_inst(rows):
    """pktcost's (install ms, map bytes) per (ruleset, rules, ct)"""
    return {(r["ruleset"], int(r["rules"]), r["ct"]): (num(r["install_ms"]), num(r["map_bytes"]))
            for r in rows}


def pk_tables(ns, inst, sfx="", fam=""):
    """a table per ruleset of one family's pktcost rows (sfx: its rulesets' suffix)"""
    for kind, what in (("mixed", "mixed rules (`-s /24 -p udp --dport`, sparse; one tuple group "
                                 "from 64 rules)"),
                       ("mixedhead", "the mixed rules behind `-i lo -j ACCEPT` and `-p tcp "
                                     "--dport 22 -j ACCEPT` (a large block among a few plain "
                                     "rules: its group searched from the slot prefix since ABI "
                                     "35)"),
                       ("mixedjump", "the mixed rules behind `-i lo -j ACCEPT`, `-p udp -j f2b` "
                                     "(f2b: 1 000 `-s` REJECTs, RETURN; every packet takes the "
                                     "jump) and `-p tcp --dport 22 -j ACCEPT` (the jump and its "
                                     "chain in the slot prefix since ABI 38)"),
                       ("mixeddocker", "the mixed rules behind `-i lo -j ACCEPT` and `-j DOCKER` "
                                       "(DOCKER: three `-d 10.1.0.1 ! -i lo -p tcp --dport P -j "
                                       "ACCEPT`, Docker's published ports, the packets' "
                                       "destination; in the slot prefix since ABI 40)"),
                       ("mixedufw", "the mixed rules behind ufw's chains (ufw 0.36's INPUT "
                                    "as `test/e2e/rulesets_diff.py --print ufw` has it: ~70 "
                                    "rules in fourteen chains, `-m addrtype`, `recent`, `limit`, "
                                    "LOG; policy ACCEPT here): more than the slot prefix takes, "
                                    "so every packet walks (ten to twenty steps)"),
                       ("dense", "dense rules (61 sources x 97 sports x 89 dports: the adversarial "
                                 "case for bit vectors; one tuple group from 64 rules)"),
                       ("pairs", "pairs (mixed with `-d` one of three hosts: source and "
                                 "destination both vary; one tuple group, in IPv6 too since "
                                 "ABI 26)"),
                       ("deny", "deny list (`-s CIDR -j DROP`, one group slot)"),
                       ("denyacc", "deny list, then `-s 10.9.0.1 -p udp --dport 9000 -j ACCEPT` "
                                   "(the source field has a set of its own too)"),
                       ("host", "a host's firewall, conntrack on (policy DROP; `--ctstate "
                                "RELATED,ESTABLISHED -j ACCEPT`, `-i lo`, `--ctstate INVALID "
                                "-j DROP`, a deny list of N entries, then ICMP echo, tcp 22, 80, "
                                "443, udp 53)")):
        sizes = sorted({k[1] for k in ns if k[0] == kind + sfx})
        if not sizes:
            continue
        P(f"### {fam}{what}")
        P("")
        cols = [(p, h, "off") for p in ("first", "last", "none", "none-worst") for h in ("xdp", "tc")]
        if kind == "mixed":
            cols += [(p, "xdp", "on") for p in ("first", "last", "none", "none-worst")]
        cols += [("spread", "xdp", "off")]
        names = {"spread": "spread"}
        if kind == "host":
            cols = [(p, h, "on") for p in ("first", "last", "none", "listed") for h in ("xdp", "tc")]
            cols += [("spread", "xdp", "on")]
            names = {"first": "established", "last": "new udp 53", "none": "new, closed port",
                     "listed": "listed source", "spread": "spread"}
        cols = [c for c in cols if any((kind + sfx, n) + c in ns for n in sizes)]
        hdr = ["rules" if kind != "host" else "list entries"] + \
              [f"{names.get(p, p)} {h}" + (" ct" if c == "on" and kind != "host" else "")
               for p, h, c in cols] + ["install ms", "map MiB"]
        rows = []
        for n in sizes:
            i = inst.get((kind + sfx, n, "off" if kind != "host" else "on"), (None, None))
            rows.append([fmt(n)] + [fmt(ns.get((kind + sfx, n) + c)) for c in cols] +
                        [fmt(i[0]), fmt(i[1] / 2**20 if i[1] else None, 1)])
        table(hdr, rows)


# ------------------------------------------------------------------ pktcost
head, pk = load("pktcost.csv")
if pk:
    P("## ns per packet (bpf_prog_test_run)")
    P("")
    provenance(head)
    ns = pk_ns(pk)
    inst = pk_inst(pk)
    floor_x, floor_t = ns.get(("floor", 0, "any", "xdp", "off")), ns.get(("floor", 0, "any", "tc", "off"))
    calls = ns.get(("floor", 10, "calls", "xdp", "off"))
    P(f"Floor (a program returning pass): XDP {fmt(floor_x)} ns, tc {fmt(floor_t)} ns." +
      (f" One making 10 calls to a function first: {fmt(calls)} ns, a call and its return "
       f"{(calls - floor_x) / 10:.1f} ns (the data plane's global functions, and each map "
       f"lookup the verifier does not inline, pay it)." if calls and floor_x else ""))
    P("")
    P("Packets: first and last match the first / last rule, none no rule (a source no rule "
      "names), none-worst no rule though its source and ports each match many; spread is the "
      "mean of 32 sources drawn at random from 11.0.0.0-191.255.255.255 (the deny lists' "
      "range), what a packet from anywhere costs, a listed one included.")
    P("")
    pk_tables(ns, inst)
    series = []
    for kind, pkt, label in (("mixed", "last", "mixed: last rule"),
                             ("mixed", "none-worst", "mixed: no match (worst)"),
                             ("mixed", "none", "mixed: no match"),
                             ("dense", "last", "dense: last rule"),
                             ("dense", "none-worst", "dense: no match (worst)"),
                             ("pairs", "none-worst", "pairs: no match (worst)"),
                             ("deny", "last", "deny list: last entry"),
                             ("deny", "none", "deny list: no match"),
                             ("deny", "spread", "deny list: sources at random"),
                             ("denyacc", "none", "deny list + a source rule: no match")):
        series.append((label + " (XDP)", [(k[1], v) for k, v in ns.items()
                                          if k[0] == kind and k[2] == pkt and k[3] == "xdp"
                                          and k[4] == "off"]))
    sizes = sorted({k[1] for k in ns if k[0] != "floor"})
    series.append(("floor: empty XDP program", [(n, floor_x) for n in sizes]))
    plot("pktcost.png", "ns per packet, bpf_prog_test_run", "rules", "ns/packet", series, logy=True)



def ns_targets(ns, sfx="", fam=""):
    """the ns/packet targets of one family's rows (sfx: its rulesets' suffix, "6")"""
    def worst(n):
        v = [ns.get(("mixed" + sfx, n, p, "xdp", "off")) for p in ("none", "none-worst")]
        v = [x for x in v if x is not None]
        return max(v) if v else None

    for n, lim in ((2048, 100), (100000, 200)):
        w = worst(n)
        target(f"{fam}ns/packet, no match (worst case), {fmt(n)} rules <= {lim} ns (mixed rules, XDP)",
               f"{fmt(w)} ns", w is not None and w <= lim if w is not None else None)
        d = ns.get(("dense" + sfx, n, "none-worst", "xdp", "off"))
        if d is not None:
            target(f"... same, dense rules (adversarial), {fmt(n)} rules <= {lim} ns", f"{fmt(d)} ns",
                   d <= lim)
        d = ns.get(("pairs" + sfx, n, "none-worst", "xdp", "off"))
        if d is not None:
            target(f"... same, pairs (source and destination vary), {fmt(n)} rules <= {lim} ns",
                   f"{fmt(d)} ns", d <= lim)
        v = [ns.get(("mixedhead" + sfx, n, p, "xdp", "off")) for p in ("none", "none-worst")]
        v = [x for x in v if x is not None]
        if v:
            target(f"... same, mixed behind two plain rules, {fmt(n)} rules <= {lim} ns",
                   f"{fmt(max(v))} ns", max(v) <= lim)
        v = [ns.get(("mixedjump" + sfx, n, p, "xdp", "off")) for p in ("none", "none-worst")]
        v = [x for x in v if x is not None]
        if v:
            target(f"... same, mixed beside a jump to a chain of 1 000 sources, {fmt(n)} rules "
                   f"<= {lim} ns", f"{fmt(max(v))} ns", max(v) <= lim)
        v = [ns.get(("mixeddocker" + sfx, n, p, "xdp", "off")) for p in ("none", "none-worst")]
        v = [x for x in v if x is not None]
        if v:
            target(f"... same, mixed beside a jump to Docker's published ports, {fmt(n)} rules "
                   f"<= {lim} ns", f"{fmt(max(v))} ns", max(v) <= lim)
    v = [ns.get(("deny" + sfx, 1000000, p, "xdp", "off")) for p in ("first", "last", "none")]
    v = [x for x in v if x is not None]
    target(f"{fam}ns/packet, 1M-entry deny list <= 150 ns (XDP, worst of hit/miss)",
           f"{fmt(max(v))} ns" if v else "-", max(v) <= 150 if v else None)


if pk:
    ns_targets(ns)

head, ng = load("pktcost_nogroup.csv")
if ng and pk:
    P("### What grouping buys: the deny list with grouping off (`--group-min 0`)")
    P("")
    rows = []
    for r in ng:
        if r["packet"] != "last" or r["hook"] != "xdp" or r["ruleset"] != "deny":
            continue
        n = int(r["rules"])
        on = ns.get(("deny", n, "last", "xdp", "off"))
        ion = inst.get(("deny", n, "off"), (None, None))
        rows.append([fmt(n), fmt(num(r["ns"])), fmt(on), fmt(num(r["install_ms"])), fmt(ion[0]),
                     fmt(num(r["map_bytes"]) / 2**20, 1),
                     fmt(ion[1] / 2**20 if ion[1] else None, 1)])
    table(["entries", "ns last, off", "ns last, on", "install ms, off", "install ms, on",
           "map MiB, off", "map MiB, on"], rows)

head, sl = load("pktcost_slots.csv")
if sl and pk:
    P("### The walk: mixed and dense rules as one slot each (`--tuple-min 0`)")
    P("")
    P("Both rulesets are runs of rules alike but for their addresses and ports, which the")
    P("compiler makes one tuple group (the tables above); with tuple groups off each rule is")
    P("a slot of the bit vectors and a packet walks them (XDP, ns per packet):")
    P("")
    sw = {(r["ruleset"], int(r["rules"]), r["packet"], r["hook"]): num(r["ns"]) for r in sl}
    rows = []
    for n in sorted({k[1] for k in sw if k[0] != "floor"}):
        row = [fmt(n)]
        for kind in ("mixed", "dense"):
            for p in ("last", "none-worst"):
                row += [fmt(sw.get((kind, n, p, "xdp"))), fmt(ns.get((kind, n, p, "xdp", "off")))]
        rows.append(row)
    table(["rules"] + [f"{k} {p} {m}" for k in ("mixed", "dense") for p in ("last", "none-worst")
                       for m in ("slots", "default")], rows)
    for n, lim in ((2048, 100), (100000, 200)):
        v = [sw.get(("mixed", n, p, "xdp")) for p in ("none", "none-worst")]
        v = [x for x in v if x is not None]
        if v:
            target(f"... same, mixed rules as slots (tuple groups off), {fmt(n)} rules <= {lim} ns",
                   f"{fmt(max(v))} ns", max(v) <= lim)

head, chn = load("pktcost_chains.csv")
if chn:
    P("### Many user chains (`--chain-sizes`)")
    P("")
    P("N chains of `-p udp --sport P -j DROP`, `-j ACCEPT`, INPUT jumping to chain i from")
    P("`-s 172.16.0.0+i/32 -p udp --dport 53` (kube-proxy's and Docker's shape): first and")
    P("last jump to chain 0 / N-1 and are dropped there, none-worst jumps to N-1 and is")
    P("accepted, none jumps nowhere. The pool is windowed where the loader picks it (a")
    P("vector owns only the chunks where it differs from its base), `flat` is")
    P("`BPF_IPTABLES_POOL=flat` on the same ruleset, in the same run; `kube`: INPUT's jump to")
    P("chain i names a port too (53, 80, 443, 8080 in turn: kube-proxy's services, a tuple")
    P("group whose rules each jump to their own chain) (XDP, ns per packet):")
    P("")
    cn = pk_ns(chn)
    ci = pk_inst(chn)
    rows = []
    for kind in ("chains", "chains-flat", "kube"):
        for n in sorted({k[1] for k in cn if k[0] == kind}):
            i = ci.get((kind, n, "off"), (None, None))
            rows.append([fmt(n), {"chains-flat": "flat", "kube": "kube"}.get(kind, "as loaded")] +
                        [fmt(cn.get((kind, n, p, "xdp", "off")))
                         for p in ("first", "last", "none", "none-worst")] +
                        [fmt(i[0]), fmt(i[1] / 2**20 if i[1] else None, 1)])
    table(["chains", "pool", "first", "last", "none", "none-worst", "install ms", "map MiB"], rows)
    provenance(head)

# the same targets for IPv6 rulesets (pktcost --family 6: each a.b.c.d/p as
# 2001:db8:aabb:ccdd::/(32 + p))
head6, pk6 = load("pktcost6.csv")
if pk6:
    ns6 = pk_ns(pk6)
    ns_targets(ns6, "6", "IPv6: ")
    P("## ns per packet, IPv6 (`pktcost --family 6`)")
    P("")
    provenance(head6)
    pk_tables(ns6, pk_inst(pk6), "6", "IPv6, ")

# ------------------------------------------------------------------ veth
head, ve = load("veth.csv")
if ve:
    P("## Throughput through veth (UDP flood, 64-byte frames, packets match only the last rule)")
    P("")
    provenance(head)
    fws = []
    for r in ve:
        if r["firewall"] not in fws:
            fws.append(r["firewall"])
    for chain in ("INPUT", "FORWARD", "OUTPUT"):
        rs = [r for r in ve if r["chain"] == chain]
        if not rs:
            continue
        sizes = sorted({int(r["rules"]) for r in rs})
        pps = {(r["firewall"], int(r["rules"])): num(r["pps"]) for r in rs}
        cpu = {(r["firewall"], int(r["rules"])): num(r["cpu_ns_per_pkt"]) for r in rs}
        lat = {(r["firewall"], int(r["rules"])): (r["ping_p50_us"], r["ping_p99_us"]) for r in rs}
        cf = [f for f in fws if any((f, n) in pps for n in sizes)]
        P(f"### {chain}" + (" (egress deny list: 10% /24, 1% /16, the rest /32)" if chain == "OUTPUT"
                            else " (mixed rules)"))
        P("")
        P("packets/s received (ratio to no firewall at the same size):")
        P("")
        rows = []
        for n in sizes:
            base = pps.get(("none", n))
            row = [fmt(n)]
            for f in cf:
                v = pps.get((f, n))
                row.append("-" if v is None else
                           f"{fmt(v)}" + ("" if f == "none" or not base else f" ({v / base:.2f})"))
            rows.append(row)
        table(["rules"] + cf, rows)
        P("CPU ns per packet received (all CPUs' busy time / packets) and ping p50/p99 in us:")
        P("")
        rows = []
        for n in sizes:
            rows.append([fmt(n)] + [("-" if (f, n) not in cpu else
                                     f"{fmt(cpu[(f, n)])}; {lat[(f, n)][0]}/{lat[(f, n)][1]}")
                                    for f in cf])
        table(["rules"] + cf, rows)
        plot(f"veth_{chain.lower()}.png", f"{chain}: UDP flood through veth", "rules",
             "packets/s received", [(f, [(n, pps.get((f, n))) for n in sizes]) for f in cf])
        # paired floods (run.sh): no firewall, then bpf-iptables, seconds apart
        pairs = {(r["firewall"], int(r["rules"])): (num(r.get("base_pps")), num(r.get("pair_pps")))
                 for r in rs}
        for n, lim in ((10000, 0.9), (100000, 0.85)):
            legacy = pps.get(("iptables-legacy", n))
            for f in ("bpf-iptables-xdp", "bpf-iptables-tc"):
                v, base = pps.get((f, n)), pps.get(("none", n))
                if v is None or not base:
                    continue
                b2, v2 = pairs.get((f, n), (None, None))
                floor = pps.get(("tc-floor", n))
                fl = (f"; tc-floor {floor / base:.2f}" if floor and f == "bpf-iptables-tc"
                      else "")
                if b2 and v2 and b2 > 0 and v2 > 0:
                    # each side's best of its floods at this size: the point's and
                    # the paired ones (as many each), the pairs' own ratio beside
                    bb, vb = max(base, b2), max(v, v2)
                    target(f"{chain} veth throughput, {fmt(n)} rules, {f} >= {lim} x no firewall",
                           f"{vb / bb:.2f} x ({fmt(vb)} / {fmt(bb)} pkt/s, the best of each "
                           f"side's floods; the pairs alone {v2 / b2:.2f}, the points "
                           f"{v / base:.2f}{fl})", vb / bb >= lim)
                else:
                    target(f"{chain} veth throughput, {fmt(n)} rules, {f} >= {lim} x no firewall",
                           f"{v / base:.2f} x ({fmt(v)} / {fmt(base)} pkt/s{fl})", v / base >= lim)
                if n == 10000 and legacy:
                    target(f"{chain} veth throughput, 10 000 rules, {f} >= 10 x iptables-legacy",
                           f"{v / legacy:.1f} x ({fmt(v)} / {fmt(legacy)} pkt/s)", v / legacy >= 10)

# ------------------------------------------------------------------ tcp
head, tc = load("tcp.csv")
if tc:
    P("## A TCP stream through FORWARD (iperf3, Gbit/s, the best run)")
    P("")
    provenance(head)
    P("bpf-iptables-auto is the default of a new data plane: tc ingress on veth. XDP on a")
    P("veth copies every skb its peer sends into a page of its own and gives up GSO.")
    P("")
    fws = ["none", "bpf-iptables-tc", "bpf-iptables-xdp", "bpf-iptables-auto"]
    g = {(r["firewall"], int(r["rules"])): num(r["gbits"]) for r in tc}
    rows = []
    for n in sorted({k[1] for k in g}):
        base = g.get(("none", n))
        rows.append([fmt(n)] + [
            fmt(g.get((f, n)), 2) + (f" ({g[(f, n)] / base:.2f})" if base and f != "none" and
                                     g.get((f, n)) is not None else "")
            for f in fws])
    table(["rules"] + fws, rows)
    plot("tcp.png", "TCP stream through FORWARD (veth)", "rules", "Gbit/s",
         [(f, [(n, g.get((f, n))) for n in sorted({k[1] for k in g})]) for f in fws])

# ------------------------------------------------------------------ drop
head, dr = load("drop.csv")
if dr:
    P("## Drop rate: a flood dropped by the first rule")
    P("")
    provenance(head)
    P("Senders: raw = AF_PACKET frames (rtr's veth receives skbs); xdp = the kernel's XDP")
    P("traffic generator (rtr's veth receives XDP frames, as from a NIC; its NAPI runs on the")
    P("other CPU); inject = the same generator inside rtr, the frames made as received on its")
    P("eth0 (its XDP program, else the stack), generator and receiver one loop on one CPU: what")
    P("one CPU can drop, without the veth and two CPUs' scheduling, which cap the xdp sender.")
    P("xdp-drop-floor: a program that only returns XDP_DROP; with the inject sender the")
    P("generator's own cost, with the xdp sender the most rtr's veth hands any XDP program.")
    P("Each row: the best of three floods (`--quick`: one), its sent rate, and that rate times")
    P("the share of the three floods' frames the row dropped.")
    P("")
    table(["where", "sender", "sent pkt/s", "dropped pkt/s"],
          [[r["where"], r.get("sender", "raw"), fmt(num(r["sent_pps"])), fmt(num(r["dropped_pps"]))]
           for r in dr])
    for sender in ("raw", "xdp", "inject"):
        d = {r["where"]: num(r["dropped_pps"]) for r in dr if r.get("sender", "raw") == sender}
        raw, floor = d.get("iptables-raw-prerouting"), d.get("xdp-drop-floor")
        # the sender's ceiling, where the floor program stands behind the veth
        ceil = f"; the floor program: {floor / raw:.2f} x" if floor and raw and sender == "xdp" else ""
        for f in ("bpf-iptables-xdp", "bpf-iptables-xdp-generic"):
            if d.get(f) is not None and raw:
                target(f"drop rate ({sender} sender), {f} >= 2 x iptables raw PREROUTING",
                       f"{d[f] / raw:.2f} x ({fmt(d[f])} / {fmt(raw)} pkt/s{ceil})", d[f] / raw >= 2)

# ------------------------------------------------------------------ update
head, up = load("update.csv")
if up:
    P("## Update cost (seconds, wall clock of the command)")
    P("")
    provenance(head)
    t = {}
    for r in up:
        t[(r["tool"], r["operation"], int(r["rules"]))] = num(r["seconds"])
    def side(op):	# the deny list's, the chains' and kube's rows have tables of their own
        return op.startswith("deny") or op.startswith("chains") or op.startswith("kube")
    sizes = sorted({k[2] for k in t if not side(k[1])})
    keys = []
    for k in t:
        if not side(k[1]) and (k[0], k[1]) not in keys:
            keys.append((k[0], k[1]))
    table(["tool", "operation"] + [f"{fmt(n)} rules" for n in sizes],
          [[a, b] + [fmt(t.get((a, b, n)), 3) for n in sizes] for a, b in keys])
    deny = [(k, v) for k, v in t.items() if k[1].startswith("deny")]
    if deny:
        n = deny[0][0][2]
        P(f"Deny list of {fmt(n)} entries:")
        P("")
        table(["tool", "operation", "seconds"], [[k[0], k[1], fmt(v, 3)] for k, v in deny])
    ch = [(k, v) for k, v in t.items() if k[1].startswith("chains")]
    if ch:
        P(f"{fmt(ch[0][0][2])} user chains of 2 rules, INPUT jumping to each (`rules.py "
          "chains`): restore, `-A` / `-D` of one rule in INPUT, `-L -n`:")
        P("")
        table(["tool", "operation", "seconds"], [[k[0], k[1], fmt(v, 3)] for k, v in ch])
    ku = [(k, v) for k, v in t.items() if k[1].startswith("kube")]
    if ku:
        P(f"{fmt(ku[0][0][2])} services as kube-proxy's filter rules (`rules.py kube`: "
          "`KUBE-SERVICES` a rule a service, each its own address, port and comment, "
          "jumping to a chain each): restore, one service `-A` / `-D`:")
        P("")
        table(["tool", "operation", "seconds"], [[k[0], k[1], fmt(v, 3)] for k, v in ku])
    plot("update.png", "restore of N rules", "rules", "seconds",
         [(f"{a} {b}", [(n, t.get((a, b, n))) for n in sizes]) for a, b in keys
          if b.startswith("restore")], logy=True)
    r10 = t.get(("bpf-iptables", "restore-again", 10000))
    r10f = t.get(("bpf-iptables", "restore-first", 10000))
    target("restore of 10k rules <= 0.2 s (over a running ruleset; first install)",
           f"{fmt(r10, 3)} s; {fmt(r10f, 3)} s", r10 <= 0.2 if r10 is not None else None)
    a10 = t.get(("bpf-iptables", "append", 10000))
    target("one -A into a chain of 10k rules <= 50 ms",
           f"{fmt(a10 * 1000 if a10 is not None else None)} ms",
           a10 <= 0.05 if a10 is not None else None)
    for tool, fam in (("bpf-iptables", ""), ("bpf-ip6tables", "IPv6: ")):
        dl = [v for k, v in t.items() if k[0] == tool and k[1] == "deny-restore"
              and k[2] >= 1000000]
        if dl or not fam:
            target(f"{fam}1M-entry deny list loaded <= 5 s", f"{fmt(dl[0], 2)} s" if dl else "-",
                   dl[0] <= 5 if dl and dl[0] is not None else None)

head, me = load("memory.csv")
if me:
    P("## Memory of the maps (memlock, both generations and the instance's own maps)")
    P("")
    provenance(head)
    m = {(r["what"], int(r["entries"])): num(r["bytes"]) for r in me}
    empty = m.get(("bpf-iptables-empty", 0))
    rows = []
    for (w, n), b in m.items():
        per = None
        if n and b is not None:
            per = (b - (empty or 0)) / n if w.startswith("bpf") else b / n
        rows.append([w, fmt(n), fmt(b), fmt(per, 1) if per is not None else "-"])
    table(["what", "entries", "bytes", "bytes per entry (bpf-iptables: above the empty instance)"],
          rows)
    # the larger of the list just restored and the list after an -A and a -D
    # (the generation a switch leaves is dropped for a ruleset this large)
    for tool, ips, fam in (("bpf-iptables", "ipset", ""), ("bpf-ip6tables", "ipset6", "IPv6: ")):
        bd = sorted(((n, b) for (w, n), b in m.items()
                     if w in (tool + "-deny", tool + "-deny-updated") and b is not None),
                    key=lambda e: e[1])[-1:]
        idd = [(n, b) for (w, n), b in m.items() if w == ips + "-deny"]
        if bd and idd and idd[0][1]:
            tot, marg = bd[0][1] / idd[0][1], (bd[0][1] - (empty or 0)) / idd[0][1]
            target(f"{fam}deny list of {fmt(bd[0][0])} entries: memory <= 2 x ipset's "
                   "(the rules' maps; with the instance's fixed maps; restored, and after "
                   "an -A and a -D: the larger)",
                   f"{marg:.2f} x; {tot:.2f} x", marg <= 2)

head, ve = load("verifier.csv")
if ve:
    P("## The verifier: instructions processed at a namespace's first install")
    P("")
    provenance(head)
    table(["program", "instructions processed", "instructions (xlated)"],
          [[r["program"], fmt(num(r["verified_insns"])), fmt(num(r["xlated_insns"]))]
           for r in ve])

# ------------------------------------------------------------------ targets
if targets:
    body = out[:]
    out.clear()
    P("## Targets of issue 7")
    P("")
    table(["target", "measured", ""], targets)
    out.extend(body)
print("\n".join(out))
