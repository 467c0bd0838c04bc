#!/usr/bin/env bash
# The systemd units as `cmake --install` writes them into a fresh prefix:
# `systemd-analyze verify` finds nothing to say about them (their commands exist
# at the paths they name, their man pages are installed, every key is known), and
# the helper they run restores and saves the rules file as the units promise.
# Needs systemd-analyze (package systemd), not systemd running: nothing is
# started, enabled or loaded into the kernel here.
set -euo pipefail
build=${1:?usage: test_systemd.sh BUILD_DIR}
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT

if ! command -v systemd-analyze >/dev/null; then
	echo "FAIL: systemd-analyze is missing (package systemd; scripts/setup.sh installs it)"
	exit 1
fi
cmake --install "$build" --prefix "$prefix" >/dev/null
units=$prefix/lib/systemd/system
helper=$prefix/libexec/bpf-iptables/rules-file
fails=0 passed=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { passed=$((passed + 1)); }

# verify: any output is a finding (unknown keys are only warnings, exit 0).
# Documentation=man:... is checked with man, which looks in the prefix only.
cd "$work"
if out=$(MANPATH=$prefix/share/man systemd-analyze verify \
	"$units/bpf-iptables.service" "$units/bpf-iptables-save.service" \
	"$units/bpf-iptables-log.service" 2>&1) && [ -z "$out" ]; then
	ok
else
	fail "systemd-analyze verify:"; echo "$out"
fi

# the units run the installed commands, with the file at boot
unit_line() { sed -n "s/^$2=//p" "$units/$1"; }
check_line() {
	local got
	got=$(unit_line "$1" "$2")
	[ "$got" = "$3" ] && ok || fail "$1 $2: '$got', want '$3'"
}
check_line bpf-iptables.service ExecStartPre "$helper restore /etc/bpf-iptables/rules.v4"
check_line bpf-iptables.service ExecStart "$prefix/sbin/bpf-iptables --watch"
check_line bpf-iptables.service ExecReload "$helper restore /etc/bpf-iptables/rules.v4"
check_line bpf-iptables.service Type simple
check_line bpf-iptables.service DefaultDependencies no
check_line bpf-iptables.service Before "network-pre.target shutdown.target"
check_line bpf-iptables.service Wants network-pre.target
check_line bpf-iptables-save.service Type oneshot
check_line bpf-iptables-save.service ExecStart "$helper save /etc/bpf-iptables/rules.v4"
check_line bpf-iptables-log.service ExecStart "$prefix/sbin/bpf-iptables --log-follow --syslog"
check_line bpf-iptables-log.service After bpf-iptables.service
# stop leaves the rules: nothing runs at stop
[ -z "$(grep -h '^ExecStop' "$units"/*.service)" ] && ok || fail "a unit has ExecStop"

# the helper, on a file of our own and a state of its own (rule language only)
export BPF_IPTABLES_STATE_DIR=$work/state BPF_IPTABLES_DATAPLANE=off
ipt=$prefix/sbin/bpf-iptables
rules=$work/etc/bpf-iptables/rules.v4
rulesets() { "$prefix/sbin/bpf-iptables-save" | grep -v '^#'; }

# no file: nothing restored, not an error
out=$("$helper" restore "$rules") && [ -z "$(rulesets | grep '^-A')" ] && ok ||
	fail "restore without a file: $out"

# save: creates the directory 0700, the file 0600, with the running ruleset
"$ipt" -A INPUT -p tcp --dport 22 -j ACCEPT
"$ipt" -P INPUT DROP
"$helper" save "$rules" >/dev/null
[ "$(stat -c %a "$work/etc/bpf-iptables")" = 700 ] && ok ||
	fail "directory mode $(stat -c %a "$work/etc/bpf-iptables")"
[ "$(stat -c %a "$rules")" = 600 ] && ok || fail "file mode $(stat -c %a "$rules")"
[ "$(grep -v '^#' "$rules")" = "$(rulesets)" ] && ok || fail "saved file differs"

# restore: the file comes back over whatever runs
"$ipt" -F
"$ipt" -P INPUT ACCEPT
"$helper" restore "$rules"
[ "$(rulesets)" = "$(grep -v '^#' "$rules")" ] && ok || fail "restore did not restore"

# a save that fails leaves the previous file whole, and no temporary file
before=$(cat "$rules")
if BPF_IPTABLES_STATE_DIR=$rules/not-a-dir "$helper" save "$rules" 2>/dev/null; then
	fail "save with an unreadable state succeeded"
fi
[ "$(cat "$rules")" = "$before" ] && ok || fail "a failed save changed the file"
[ "$(ls -A "$work/etc/bpf-iptables")" = rules.v4 ] && ok ||
	fail "left behind: $(ls -A "$work/etc/bpf-iptables")"

# a broken file is an error, and changes nothing
printf '*filter\n-A INPUT --bogus\nCOMMIT\n' >"$work/broken.v4"
"$ipt" -F
if "$helper" restore "$work/broken.v4" 2>/dev/null; then
	fail "restore of a broken file succeeded"
else
	ok
fi
[ -z "$(rulesets | grep '^-A')" ] && ok || fail "a broken file changed the rules"

echo "$passed passed, $fails failed"
[ "$fails" -eq 0 ]
