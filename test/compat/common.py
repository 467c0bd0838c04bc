"""Shared helpers for the bpf-iptables black-box compatibility harnesses.

Python 3 standard library only.  Provides:

* the CI skip/fail policy (exit 77 = skipped, or exit 1 under CI=true),
* throw-away network namespaces for the iptables-legacy oracle, always
  deleted again (try/finally, atexit and signal handlers),
* "backends": the oracle (iptables-legacy in a namespace) and the
  implementation under test (bpf-iptables with its own state directory),
  behind one interface (ipt / save / restore / snapshot),
* message extraction (text after the first ": " of the first stderr line),
* a Report that prints failures, message mismatches, known differences and
  the closing line "N passed, N failed".
"""

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFORMANCE_DIR = REPO_ROOT.parent / "shared" / "conformance"

NETNS_PREFIX = "bipt-t-"
CMD_TIMEOUT = 60  # seconds for one invocation of a tool under test

ORACLE_BINS = {
    "iptables": "iptables-legacy",
    "save": "iptables-legacy-save",
    "restore": "iptables-legacy-restore",
}
IUT_BINS = {
    "iptables": "bpf-iptables",
    "save": "bpf-iptables-save",
    "restore": "bpf-iptables-restore",
}
STATE_ENV = "BPF_IPTABLES_STATE_DIR"


def set_family(family):
    """Switch the oracle and the IUT to IPv6 (6: ip6tables-legacy* against
    bpf-ip6tables*) or back to IPv4 (4).  Call before any backend is made."""
    ip = "ip6tables" if family == 6 else "iptables"
    ORACLE_BINS.update({"iptables": f"{ip}-legacy", "save": f"{ip}-legacy-save",
                        "restore": f"{ip}-legacy-restore"})
    IUT_BINS.update({"iptables": f"bpf-{ip}", "save": f"bpf-{ip}-save",
                     "restore": f"bpf-{ip}-restore"})

EXIT_SKIP = 77


# --------------------------------------------------------------------------
# Skip / fail policy
# --------------------------------------------------------------------------

def in_ci():
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail(name, reason, strict=False):
    """The harness cannot run here.  Under CI=true (or strict: the IPv6
    harnesses, whose only reference is the live oracle) that is a failure
    (exit 1), otherwise it is a clearly reported skip (exit 77)."""
    if in_ci() or strict:
        print(f"{name}: FAILED: cannot run: {reason} (CI=true, so this is a "
              f"failure, not a skip)", file=sys.stderr)
        print("0 passed, 1 failed")
        sys.exit(1)
    print(f"{name}: SKIPPED: {reason}")
    sys.exit(EXIT_SKIP)


def conformance_dir():
    env = os.environ.get("CONFORMANCE_DIR")
    return Path(env) if env else DEFAULT_CONFORMANCE_DIR


def require_conformance(name, sub):
    """Return $CONFORMANCE_DIR/sub, or skip/fail if it is absent."""
    base = conformance_dir()
    path = base / sub
    if not path.is_dir():
        skip_or_fail(name, f"conformance data not found: {path} (set "
                           f"CONFORMANCE_DIR to a directory holding "
                           f"iptables-t/ and dumps/)")
    return path


def require_oracle(name, strict=False):
    """Check that iptables-legacy (ip6tables-legacy after set_family(6)) can be
    run in a network namespace; strict: its absence is a failure."""
    oracle = ORACLE_BINS["iptables"]
    if os.geteuid() != 0:
        skip_or_fail(name, f"the {oracle} oracle needs root "
                           "(network namespaces, iptables)", strict)
    for tool in ["ip"] + list(ORACLE_BINS.values()):
        if shutil.which(tool) is None:
            skip_or_fail(name, f"'{tool}' not found in PATH (the oracle needs "
                               f"iproute2 and {oracle})", strict)
    # Probe: can we actually create a namespace and list rules in it?
    try:
        ns = netns_create("probe")
    except Exception as e:  # noqa: BLE001
        skip_or_fail(name, f"cannot create a network namespace: {e}", strict)
    try:
        r = run([ "ip", "netns", "exec", ns, oracle, "-S"])
        if r.rc != 0:
            skip_or_fail(name, f"{oracle} does not work in a network "
                               f"namespace: rc={r.rc} {r.err.strip()}", strict)
    finally:
        netns_delete(ns)


def require_iut(bindir):
    """The IUT binaries must exist; a missing build is a real failure."""
    if bindir is None:
        print("error: --bin DIR is required (directory holding bpf-iptables, "
              "bpf-iptables-save, bpf-iptables-restore), or use --oracle",
              file=sys.stderr)
        sys.exit(2)
    missing = [b for b in IUT_BINS.values()
               if not os.access(os.path.join(bindir, b), os.X_OK)]
    if missing:
        print(f"FAILED: IUT binaries not found or not executable in {bindir}: "
              f"{', '.join(missing)}", file=sys.stderr)
        print("0 passed, 1 failed")
        sys.exit(1)


# --------------------------------------------------------------------------
# Network namespaces (always cleaned up)
# --------------------------------------------------------------------------

_NETNS = []
_HANDLERS_INSTALLED = False


def _install_cleanup():
    global _HANDLERS_INSTALLED
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(netns_cleanup_all)

    def handler(signum, _frame):
        netns_cleanup_all()
        signal.signal(signum, signal.SIG_DFL)
        print(f"\ninterrupted by signal {signum}; namespaces removed",
              file=sys.stderr)
        sys.exit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):
            pass


def netns_create(tag):
    """Create a uniquely named namespace bipt-t-<pid>-<tag>[-n]."""
    _install_cleanup()
    base = f"{NETNS_PREFIX}{os.getpid()}-{tag}"
    existing = set(netns_list())
    name = base
    n = 0
    while name in existing or name in _NETNS:
        n += 1
        name = f"{base}-{n}"
    _NETNS.append(name)  # register first: cleanup even if 'add' half-worked
    r = run(["ip", "netns", "add", name])
    if r.rc != 0:
        _NETNS.remove(name)
        raise RuntimeError(f"ip netns add {name} failed: {r.err.strip()}")
    return name


def netns_delete(name):
    if name in _NETNS:
        _NETNS.remove(name)
    subprocess.run(["ip", "netns", "delete", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


def netns_cleanup_all():
    for name in list(reversed(_NETNS)):
        netns_delete(name)


def netns_list():
    try:
        out = subprocess.run(["ip", "netns", "list"], capture_output=True,
                             text=True, check=False).stdout
    except OSError:
        return []
    return [line.split()[0] for line in out.splitlines() if line.strip()]


# --------------------------------------------------------------------------
# Running commands
# --------------------------------------------------------------------------

class Result:
    __slots__ = ("rc", "out", "err", "argv")

    def __init__(self, rc, out, err, argv=None):
        self.rc, self.out, self.err, self.argv = rc, out, err, argv

    @property
    def msg(self):
        return message(self.err)

    def __repr__(self):
        return f"Result(rc={self.rc}, out={self.out!r}, err={self.err!r})"


def run(argv, input=None, env=None, timeout=CMD_TIMEOUT):
    try:
        p = subprocess.run(argv, input=input, capture_output=True, env=env,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        return Result(-1000, _dec(e.stdout or b""),
                      f"TIMEOUT after {timeout}s: {argv}\n", argv)
    except OSError as e:
        return Result(-1001, "", f"cannot execute {argv[0]}: {e}\n", argv)
    return Result(p.returncode, _dec(p.stdout), _dec(p.stderr), argv)


def _dec(b):
    if isinstance(b, str):
        return b
    return b.decode("utf-8", errors="surrogateescape")


def _enc(s):
    if s is None or isinstance(s, bytes):
        return s
    return s.encode("utf-8", errors="surrogateescape")


def message(stderr):
    """The comparable part of an error message: the first stderr line, minus
    everything up to and including its first ': ' (the program name/version
    prefix, e.g. 'iptables v1.8.9 (legacy): ' or 'iptables: ')."""
    if not stderr:
        return ""
    first = stderr.split("\n", 1)[0]
    if ": " in first:
        first = first.split(": ", 1)[1]
    # A program name inside the text (e.g. "iptables-restore: unable to
    # initialize table 'bogus'") may carry the IUT's own name.
    return re.sub(r"\bbpf-(ip6?tables(?:-save|-restore)?)\b", r"\1", first)


def strip_comments(save_output):
    """Drop '# Generated by ...' / '# Completed on ...' lines."""
    return "".join(line for line in save_output.splitlines(keepends=True)
                   if not line.startswith("#"))


# --------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------

class Backend:
    """One firewall instance: the oracle or the IUT."""

    label = "?"

    def _argv(self, tool, args):
        raise NotImplementedError

    def _env(self):
        return None

    def ipt(self, args, input=None):
        return run(self._argv("iptables", list(args)), input=_enc(input),
                   env=self._env())

    def save(self, args=()):
        return run(self._argv("save", list(args)), env=self._env())

    def restore(self, data, args=()):
        return run(self._argv("restore", list(args)), input=_enc(data),
                   env=self._env())

    def save_rules(self, args=()):
        """save output without '#' lines (or None when save itself failed)."""
        r = self.save(args)
        if r.rc != 0:
            return None
        return strip_comments(r.out)

    def files_snapshot(self):
        """Bytes of the persistent state (IUT: every file in its state dir)."""
        return None

    def snapshot(self):
        """Everything observable about the persistent state."""
        return (self.save_rules(["-c"]), self.files_snapshot())

    @staticmethod
    def snapshots_equal(a, b):
        return a[0] == b[0] and files_unchanged(a[1], b[1])

    def close(self):
        pass

    def describe(self):
        return self.label


class Oracle(Backend):
    """iptables-legacy inside a private, throw-away network namespace."""

    def __init__(self, tag="oracle", label="oracle"):
        self.label = label
        self.ns = netns_create(tag)
        # iptables-legacy serialises on the machine-wide /run/xtables.lock
        # and fails at once (exit 4) when someone else holds it.  Our
        # namespace is private, so a private lock file is safe and keeps the
        # oracle independent of other iptables users on the machine.
        self.lockdir = tempfile.mkdtemp(prefix="bipt-lock-")
        env = dict(os.environ)
        env["XTABLES_LOCKFILE"] = os.path.join(self.lockdir, "xtables.lock")
        self.env = env
        # In a fresh namespace the filter table does not exist until the
        # first iptables command touches it (iptables-save prints nothing
        # before that).  Instantiate it now so that every snapshot is taken
        # of the same, initialised table.
        r = self.ipt(["-S"])
        if r.rc != 0:
            raise RuntimeError(f"iptables-legacy -S failed in {self.ns}: "
                               f"{r.err.strip()}")

    def _argv(self, tool, args):
        return ["ip", "netns", "exec", self.ns, ORACLE_BINS[tool]] + args

    def _env(self):
        return self.env

    def files_snapshot(self):
        # The oracle keeps its state in the kernel: use save -c instead.
        r = self.save(["-c"])
        return strip_comments(r.out) if r.rc == 0 else ("ERR", r.rc, r.err)

    def close(self):
        netns_delete(self.ns)
        shutil.rmtree(self.lockdir, ignore_errors=True)

    def describe(self):
        return f"{self.label} ({ORACLE_BINS['iptables']} in netns {self.ns})"


class IUT(Backend):
    """bpf-iptables with an isolated state directory.  With netns=True it runs
    inside its own throw-away network namespace (root only), so that -L name
    lookups behave exactly like the oracle's and nothing can leave the box."""

    def __init__(self, bindir, netns=False, tag="iut", label="iut",
                 keep_state=False):
        self.label = label
        self.bindir = os.path.abspath(bindir)
        self.statedir = tempfile.mkdtemp(prefix="bipt-state-")
        self.keep_state = keep_state
        self.ns = netns_create(tag) if netns else None
        env = dict(os.environ)
        env[STATE_ENV] = self.statedir
        # these harnesses test the rule language: never attach programs to this
        # machine's interfaces
        env["BPF_IPTABLES_DATAPLANE"] = "off"
        self.env = env

    def _argv(self, tool, args):
        argv = [os.path.join(self.bindir, IUT_BINS[tool])] + args
        if self.ns:
            argv = ["ip", "netns", "exec", self.ns] + argv
        return argv

    def _env(self):
        return self.env

    def files_snapshot(self):
        snap = {}
        for root, dirs, files in os.walk(self.statedir):
            dirs.sort()
            rel = os.path.relpath(root, self.statedir)
            snap[("dir", rel)] = None
            for f in sorted(files):
                p = os.path.join(root, f)
                key = os.path.normpath(os.path.join(rel, f))
                try:
                    if os.path.islink(p):
                        snap[("link", key)] = os.readlink(p)
                    else:
                        with open(p, "rb") as fh:
                            snap[("file", key)] = fh.read()
                except OSError as e:
                    snap[("error", key)] = str(e)
        return snap

    def close(self):
        if self.ns:
            netns_delete(self.ns)
            self.ns = None
        if not self.keep_state:
            shutil.rmtree(self.statedir, ignore_errors=True)

    def describe(self):
        where = f", netns {self.ns}" if self.ns else ""
        return (f"{self.label} ({self.bindir}/{IUT_BINS['iptables']}, "
                f"state {self.statedir}{where})")


def files_unchanged(before, after):
    """Compare two files_snapshot() values.  A file that did not exist before
    and is EMPTY afterwards (a lock file taken before the command was
    rejected) carries no state and is not counted as a change."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return before == after
    for k in set(before) | set(after):
        if k in before and k in after:
            if before[k] != after[k]:
                return False
        elif k in after and k[0] == "file" and after[k] == b"":
            continue
        else:
            return False
    return True


def describe_files_diff(before, after):
    """Human-readable summary of how two files_snapshot() values differ."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return "state (save -c) differs"
    parts = []
    for k in sorted(set(before) | set(after), key=str):
        if k not in before:
            parts.append(f"created {k[1]}")
        elif k not in after:
            parts.append(f"removed {k[1]}")
        elif before[k] != after[k]:
            parts.append(f"modified {k[1]}")
    return ", ".join(parts) or "no difference"


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def indent(text, prefix="      "):
    text = text if text.endswith("\n") or not text else text + "\n"
    return "".join(prefix + line for line in text.splitlines(keepends=True))


class Report:
    def __init__(self, name, strict_messages=False, verbose=False):
        self.name = name
        self.strict_messages = strict_messages
        self.verbose = verbose
        self.passed = 0
        self.failed = 0
        self.failures = []       # (title, details)
        self.msg_mismatches = []  # (title, details)
        self.known = []          # (title, details)
        self.infos = []

    def ok(self):
        self.passed += 1

    def fail(self, title, details=""):
        self.failed += 1
        self.failures.append((title, details))
        print(f"FAIL: {title}", flush=True)
        if details and self.verbose:
            print(indent(details), end="", flush=True)

    def msg_mismatch(self, title, details=""):
        """A case whose only problem is the message text.  Counted as passed
        unless --strict-messages."""
        self.msg_mismatches.append((title, details))
        if self.strict_messages:
            self.failed += 1
            print(f"FAIL (message): {title}", flush=True)
        else:
            self.passed += 1
            if self.verbose:
                print(f"MESSAGE: {title}", flush=True)
        if details and self.verbose:
            print(indent(details), end="", flush=True)

    def known_difference(self, title, details=""):
        self.known.append((title, details))
        if self.verbose:
            print(f"KNOWN: {title}", flush=True)
            if details:
                print(indent(details), end="", flush=True)

    def info(self, text):
        self.infos.append(text)

    def finish(self, extra_lines=()):
        """Print the summary (closing line 'N passed, N failed') and return
        the exit code."""
        print()
        print(f"===== {self.name} summary =====")
        for line in self.infos:
            print(f"info: {line}")
        if self.known:
            print(f"known differences (not counted as failures): "
                  f"{len(self.known)}")
            for title, details in self.known:
                print(f"  KNOWN: {title}")
                if details and self.verbose:
                    print(indent(details, "      "), end="")
        if self.msg_mismatches:
            what = ("counted as failures (--strict-messages)"
                    if self.strict_messages else
                    "not counted as failures; use --strict-messages")
            print(f"message mismatches ({what}): {len(self.msg_mismatches)}")
            for title, details in self.msg_mismatches:
                print(f"  MESSAGE: {title}")
                if details:
                    print(indent(details, "      "), end="")
        else:
            print("message mismatches: 0")
        if self.failures:
            print(f"failures: {len(self.failures)}")
            for title, details in self.failures:
                print(f"  FAIL: {title}")
                if details:
                    print(indent(details, "      "), end="")
        for line in extra_lines:
            print(line)
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def add_common_args(parser):
    parser.add_argument("--bin", metavar="DIR",
                        default=os.environ.get("BPF_IPTABLES_BIN"),
                        help="directory holding bpf-iptables, "
                             "bpf-iptables-save and bpf-iptables-restore "
                             "(default: $BPF_IPTABLES_BIN)")
    parser.add_argument("--oracle", action="store_true",
                        help="validate the harness: run iptables-legacy in "
                             "place of the IUT")
    parser.add_argument("--strict-messages", action="store_true",
                        help="count error-message text mismatches as "
                             "failures")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print details of every finding as it happens")
    parser.add_argument("--keep-state", action="store_true",
                        help="do not delete the IUT state directories")


def diff_text(a, b, name_a="oracle", name_b="iut", max_lines=40):
    """Unified diff of two texts, cut after max_lines lines."""
    import difflib
    lines = list(difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True),
        fromfile=name_a, tofile=name_b, n=1))
    lines = [ln if ln.endswith("\n") else ln + "\n" for ln in lines]
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more "
                                     f"diff lines)\n"]
    return "".join(lines)
