#!/usr/bin/env bash
# `cmake --install` into a fresh prefix gives four self-contained commands in
# sbin (where iptables' are) that work from anywhere: a ruleset typed into the
# installed bpf-iptables is listed back by the installed -save and restored by
# the installed -restore; the installed bpf-conntrack keeps its settings beside
# them. The three others are links to bpf-iptables (one program).
set -euo pipefail
build=${1:?usage: test_install.sh BUILD_DIR}
prefix=$(mktemp -d)
state=$(mktemp -d)
trap 'rm -rf "$prefix" "$state"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
for tool in bpf-iptables bpf-iptables-save bpf-iptables-restore bpf-conntrack; do
	[ -x "$prefix/sbin/$tool" ] || { echo "FAIL: $prefix/sbin/$tool missing"; exit 1; }
done
for tool in bpf-iptables-save bpf-iptables-restore bpf-conntrack; do
	[ "$(readlink "$prefix/sbin/$tool")" = bpf-iptables ] ||
		{ echo "FAIL: $prefix/sbin/$tool is not a link to bpf-iptables"; exit 1; }
done

cd /
# the rule language only: no programs attached to this machine's interfaces
export BPF_IPTABLES_STATE_DIR=$state BPF_IPTABLES_DATAPLANE=off
env -i BPF_IPTABLES_STATE_DIR="$state" BPF_IPTABLES_DATAPLANE=off \
	"$prefix/sbin/bpf-iptables" -A INPUT -p tcp --dport 22 -j ACCEPT
env -i BPF_IPTABLES_STATE_DIR="$state" BPF_IPTABLES_DATAPLANE=off \
	"$prefix/sbin/bpf-iptables" -P INPUT DROP
saved=$("$prefix/sbin/bpf-iptables-save" | grep -v '^#')
expected='*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT'
if [ "$saved" != "$expected" ]; then
	echo "FAIL: installed save printed:"; echo "$saved"; exit 1
fi
"$prefix/sbin/bpf-iptables" -F
echo "$saved" | "$prefix/sbin/bpf-iptables-restore"
again=$("$prefix/sbin/bpf-iptables-save" | grep -v '^#')
[ "$again" = "$expected" ] || { echo "FAIL: restore did not round-trip"; exit 1; }
"$prefix/sbin/bpf-iptables" -V | grep -q '^bpf-iptables v' || { echo "FAIL: -V"; exit 1; }
"$prefix/sbin/bpf-conntrack" -T udp_timeout=60
"$prefix/sbin/bpf-conntrack" -T | grep -qx 'udp_timeout 60' || { echo "FAIL: bpf-conntrack -T"; exit 1; }
echo "1 passed, 0 failed"
