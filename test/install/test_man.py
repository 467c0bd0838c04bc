#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The man pages as `cmake --install` installs them.

- each page renders with every groff warning on (man --warnings=w) and says
  nothing on stderr; no rendered line is wider than the 80 columns asked for;
- every long option of the parsers (parser/cmd.c, parser/ext/*.c, the -save and
  -restore tables in bpf-iptables/cli.c, bpf-iptables/ct_cli.c) and of each
  command's -h is in its page;
- every option a page lists is accepted by its command (not "unknown option");
- bpf-conntrack(8)'s SETTINGS are the names and defaults `bpf-conntrack -T` prints.

usage: test_man.py BUILD_DIR SOURCE_DIR
"""
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

build, src = sys.argv[1], sys.argv[2]
failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
        print("FAIL:", what)


def run(argv, env=None, stdin=""):
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env)


prefix = tempfile.mkdtemp()
state = tempfile.mkdtemp()
atexit.register(shutil.rmtree, prefix, True)
atexit.register(shutil.rmtree, state, True)
subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
               capture_output=True)
mandir = os.path.join(prefix, "share/man/man8")
sbin = os.path.join(prefix, "sbin")
pages = ["bpf-iptables", "bpf-iptables-save", "bpf-iptables-restore", "bpf-conntrack"]
env = dict(os.environ, BPF_IPTABLES_STATE_DIR=state, BPF_IPTABLES_DATAPLANE="off",
           LC_ALL="C.UTF-8")


def roff(page):
    with open(os.path.join(mandir, page + ".8")) as f:
        return f.read()


def long_opts(text):
    """Every --option written in a text (roff's \\- is a plain -)."""
    text = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", text).replace("\\-", "-")
    return set(re.findall(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)", text))


# ---- rendering: man with every groff warning ("w"; "all" leaves out some) ----
for p in pages:
    r = run(["man", "--warnings=w", "-l", os.path.join(mandir, p + ".8")],
            env=dict(env, MANWIDTH="80", MANROFFSEQ="", MAN_KEEP_FORMATTING=""))
    check(r.returncode == 0 and r.stderr == "",
          f"{p}.8 renders with messages (exit {r.returncode}): {r.stderr.strip()}")
    wide = [l for l in r.stdout.splitlines() if len(l) > 80]
    check(not wide, f"{p}.8 has lines wider than 80 columns: {wide[:3]}")
    check(len(r.stdout.splitlines()) > 30, f"{p}.8 renders to almost nothing")

# ---- the parsers' options are documented ----
def source(path):
    with open(os.path.join(src, path)) as f:
        return f.read()


def c_function(text, name):
    start = text.index(f"\nint {name}(")
    end = text.find("\nint ", start + 1)
    return text[start:end if end > 0 else len(text)]


cmd_opts = set(re.findall(r'^\t\{ "([a-z0-9-]+)",\s+\S+, ARG_', source("parser/cmd.c"), re.M))
ext_opts = set()
for f in sorted(os.listdir(os.path.join(src, "parser/ext"))):
    if f.endswith(".c"):
        for m in re.findall(r'^\t\{ (?:\.name = "([a-z0-9-]+)", \.has_arg|"([a-z0-9-]+)", '
                            r'(?:true|false),)', source("parser/ext/" + f), re.M):
            ext_opts.add(m[0] or m[1])
cli = source("bpf-iptables/cli.c")
getopt_re = r'\{ "([a-z0-9-]+)", (?:no|required|optional)_argument'
save_opts = set(re.findall(getopt_re, c_function(cli, "ipt_cli_save")))
restore_opts = set(re.findall(getopt_re, c_function(cli, "ipt_cli_restore")))
ct_opts = set(re.findall(getopt_re, source("bpf-iptables/ct_cli.c")))
check(len(cmd_opts) > 30 and len(ext_opts) > 40 and len(save_opts) > 4 and
      len(restore_opts) > 8 and len(ct_opts) > 15, "could not read the option tables")


def help_opts(cmd):
    r = run([os.path.join(sbin, cmd), "-h"], env=env)
    return long_opts(r.stdout)


# "help", "version": the -h/-V of each command
expected = {
    "bpf-iptables": cmd_opts | ext_opts | help_opts("bpf-iptables"),
    "bpf-iptables-save": save_opts | help_opts("bpf-iptables-save"),
    "bpf-iptables-restore": restore_opts | help_opts("bpf-iptables-restore"),
    "bpf-conntrack": ct_opts | help_opts("bpf-conntrack"),
}
check({"log-follow", "unload", "syslog", "count", "timeout"} <= expected["bpf-iptables"],
      "bpf-iptables -h does not list its own options")
# save accepts -d (--dump) and restore -b as iptables' do, and ignores them
undocumented = {"bpf-iptables-save": {"dump"}}
for p in pages:
    missing = expected[p] - long_opts(roff(p)) - undocumented.get(p, set())
    check(not missing, f"{p}.8 does not document --{', --'.join(sorted(missing))}")


# ---- every option a page lists is accepted ----
def listed(text):
    """{section or subsection: [option, ...]} of the .TP/.TQ tag lines."""
    out, where, tag = {}, "", False
    for line in text.splitlines():
        if line.startswith((".SH", ".SS")):
            where = line.split(None, 1)[1].strip('"')
        elif line in (".TP", ".TQ"):
            tag = True
            continue
        elif tag:
            out.setdefault(where, []).extend(sorted(long_opts(line)))
        tag = False
    return out


def refused(argv, opt, stdin=""):
    r = run(argv, env=env, stdin=stdin)
    text = r.stderr + r.stdout
    return any(m in text for m in (f'unknown option "--{opt}"', f"unknown option `--{opt}'",
                                   f"unrecognized option '--{opt}'"))


ipt = os.path.join(sbin, "bpf-iptables")
ext_context = {"tcp": ["-p", "tcp", "-m", "tcp"], "udp": ["-p", "udp", "-m", "udp"],
               "icmp": ["-p", "icmp", "-m", "icmp"], "multiport": ["-p", "tcp", "-m", "multiport"]}
sections = listed(roff("bpf-iptables"))
checked = 0
for where, opts in sections.items():
    for o in opts:
        if where == "OPTIONS NOT IN IPTABLES":
            # --unload would remove this host's data plane; --watch runs forever
            if o in ("log-follow", "syslog", "count", "timeout"):
                args = ["--log-follow"] + (["--" + o, "x"] if o != "log-follow" else [])
                check(not refused([ipt] + args, o), f"bpf-iptables {' '.join(args)}: refused")
            continue
        if where in ("COMMANDS", "PARAMETERS", "OTHER OPTIONS"):
            argv = [ipt, "-A", "INPUT", "--" + o]
        elif where.isupper():	# a target
            argv = [ipt, "-A", "INPUT", "-j", where, "--" + o]
        else:
            argv = [ipt, "-A", "INPUT"] + ext_context.get(where, ["-m", where]) + ["--" + o]
        check(not refused(argv, o), f"bpf-iptables.8 lists --{o} ({where}), refused")
        checked += 1
check(checked > 60, f"only {checked} options found in bpf-iptables.8")
for p, argv in (("bpf-iptables-save", []), ("bpf-iptables-restore", ["-t"]),
                ("bpf-conntrack", [])):
    for o in sorted({o for opts in listed(roff(p)).values() for o in opts}):
        check(not refused([os.path.join(sbin, p)] + argv + ["--" + o], o,
                          stdin="*filter\nCOMMIT\n"),
              f"{p}.8 lists --{o}, refused")

# ---- bpf-conntrack(8)'s settings are the command's ----
page = roff("bpf-conntrack")
block = page[page.index(".SS SETTINGS"):page.index(".SH ENVIRONMENT")]
documented = [l.split()[:2] for l in block.splitlines() if re.match(r"^[a-z0-9_]+ +\d", l)]
r = run([os.path.join(sbin, "bpf-conntrack"), "-T"], env=env)
actual = [l.split() for l in r.stdout.splitlines()]
check(sorted(documented) == sorted(actual),
      f"bpf-conntrack.8 SETTINGS {documented} != bpf-conntrack -T {actual}")

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
