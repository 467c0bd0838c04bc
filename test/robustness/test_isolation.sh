#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Isolation and privilege (issue 6): two network namespaces A and B, each with
# its own ruleset in the default state directory (/run/bpf-iptables/netns-<cookie>,
# no BPF_IPTABLES_STATE_DIR), a veth between them for traffic.
#  - rules, counters, conntrack and programs of A are invisible to and
#    unchangeable from B (every command of B, --unload and bpf-conntrack -F too);
#  - state directories are 0700 and their files 0600, root's;
#  - a non-root user gets iptables' permission error (exit 3) from every command
#    and changes nothing, also with BPF_IPTABLES_* variables of its choosing and
#    inside a user namespace of its own;
#  - what an unprivileged user can write (a state directory in /tmp, a symbolic
#    link to one, files in it) is refused by root's commands, never loaded.
# "Nothing changed" = bpf-iptables-save -c text, the bytes of the state files,
# and the programs attached to lo with their generation (bpfipt_inst).
# Usage: test_isolation.sh BUILD_DIR
set -uo pipefail
BIN=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
SFX=$$
A=bipt-isoA-$SFX B=bipt-isoB-$SFX
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
TMPD=$(mktemp -d /tmp/bipt-iso.XXXXXX)
chmod 755 "$TMPD"	# nobody must reach its own files below
PASSED=0 FAILED=0
STATE_DIRS=()

cleanup() {
	for ns in "$A" "$B"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	# the state directories of our namespaces (their cookies are never reused)
	for d in "${STATE_DIRS[@]}"; do rm -rf "$d"; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" != 0 ]; then
	echo "FAIL: test_isolation needs root (namespaces, BPF)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
for t in setpriv bpftool unshare; do
	command -v $t >/dev/null || { echo "FAIL: $t missing"; echo "0 passed, 1 failed"; exit 1; }
done

check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); echo "FAIL: $what"; fi
}
check_eq() {
	if [ "$2" = "$3" ]; then PASSED=$((PASSED + 1)); else
		FAILED=$((FAILED + 1)); echo "FAIL: $1:"; diff <(echo "$2") <(echo "$3") | head -20; fi
}

ipt() { local ns=$1; shift; ip netns exec "$ns" "$BIN/bpf-iptables" "$@"; }
cookie() {
	ip netns exec "$1" python3 -c 'import socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print(struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])'
}
# what identifies the running ruleset of a namespace: programs on lo + bpfipt_inst
dp_id() {
	local ns=$1 ids mid
	ids=$(ip netns exec "$ns" tc filter show dev lo ingress | grep -o 'bpfipt_[a-z0-9_]*:\[[0-9]*\]')
	ids+=$(ip netns exec "$ns" tc filter show dev lo egress | grep -o 'bpfipt_[a-z0-9_]*:\[[0-9]*\]')
	[ -n "$ids" ] || { echo none; return; }
	local pid=${ids#*:[}; pid=${pid%%]*}
	for mid in $(bpftool prog show id "$pid" | sed -n 's/.*map_ids \([0-9,]*\).*/\1/p' | tr , ' '); do
		# (not `| grep -q`: bpftool's SIGPIPE would fail the pipeline)
		if [[ $(bpftool map show id "$mid") == *"name bpfipt_inst "* ]]; then
			echo "$ids $(bpftool map lookup id "$mid" key 0 0 0 0 | tr -d '\n ')"
			return
		fi
	done
	echo "$ids ?"
}
snapshot() {	# everything observable about a namespace's ruleset
	local ns=$1 d
	d=/run/bpf-iptables/netns-$(cookie "$ns")
	ip netns exec "$ns" "$BIN/bpf-iptables-save" -c | grep -v '^#'
	sha256sum "$d"/snapshot "$d"/conntrack.conf 2>/dev/null
	dp_id "$ns"
}

# ---- two namespaces, a veth between them ----
for ns in "$A" "$B"; do
	ip netns add "$ns"
	ip -n "$ns" link set lo up
done
ip link add ia-$SFX netns "$A" type veth peer name ib-$SFX netns "$B"
ip -n "$A" link set ia-$SFX name eth0
ip -n "$B" link set ib-$SFX name eth0
ip -n "$A" addr add 10.9.0.1/24 dev eth0
ip -n "$B" addr add 10.9.0.2/24 dev eth0
ip -n "$A" link set eth0 up
ip -n "$B" link set eth0 up
for ns in "$A" "$B"; do STATE_DIRS+=("/run/bpf-iptables/netns-$(cookie "$ns")"); done

# ---- rules, counters, conntrack, programs: A's are A's alone ----
ipt "$A" -A INPUT -p icmp --icmp-type echo-request -m conntrack --ctstate NEW -j ACCEPT
ipt "$A" -A INPUT -s 192.0.2.7 -j DROP
ipt "$A" -N only_in_a
ipt "$B" -A INPUT -p icmp --icmp-type echo-request -j ACCEPT
ipt "$B" -A OUTPUT -d 203.0.113.9 -j DROP
check "ping B -> A" ip netns exec "$B" ping -c3 -i0.2 -W1 -q 10.9.0.1 >/dev/null
check "A counted the echo requests" \
	bash -c "ip netns exec $A $BIN/bpf-iptables -L INPUT -v -x -n | awk 'NR==3 {exit !(\$1 >= 1)}'"
check_eq "B's INPUT rule saw no echo request" 0 \
	"$(ipt "$B" -L INPUT -v -x -n | awk 'NR==3 {print $1}')"
check "A tracks the ping" bash -c "ip netns exec $A $BIN/bpf-conntrack -L 2>/dev/null | grep -q 10.9.0.2"
check "B does not see A's connection" \
	bash -c "! ip netns exec $B $BIN/bpf-conntrack -L 2>/dev/null | grep -q 'dst=10.9.0.1 .*type=8'"
check "B does not see A's rules" bash -c "! ip netns exec $B $BIN/bpf-iptables -S | grep -q '192.0.2.7\|only_in_a'"
check "A does not see B's rules" bash -c "! ip netns exec $A $BIN/bpf-iptables -S | grep -q 203.0.113.9"
check "the programs differ" test "$(dp_id "$A" | cut -d' ' -f1)" != "$(dp_id "$B" | cut -d' ' -f1)"

before=$(snapshot "$A")
# every command of B, on names and numbers A uses
ipt "$B" -D INPUT -s 192.0.2.7 -j DROP 2>/dev/null
ipt "$B" -X only_in_a 2>/dev/null
ipt "$B" -Z
ipt "$B" -F
ipt "$B" -P INPUT DROP
ipt "$B" -P INPUT ACCEPT
printf '*filter\n:INPUT DROP [0:0]\n-A INPUT -j DROP\nCOMMIT\n' | ip netns exec "$B" "$BIN/bpf-iptables-restore"
ip netns exec "$B" "$BIN/bpf-conntrack" -F >/dev/null 2>&1
ip netns exec "$B" "$BIN/bpf-conntrack" -T max=1024 udp_timeout=1 >/dev/null 2>&1
ipt "$B" --unload
after=$(snapshot "$A")
check_eq "A unchanged by everything B did" "$before" "$after"
check "A still tracks the ping" bash -c "ip netns exec $A $BIN/bpf-conntrack -L 2>/dev/null | grep -q 10.9.0.2"
check "B's unload left B without programs" test "$(dp_id "$B")" = none

# ---- permissions of the state ----
dA=/run/bpf-iptables/netns-$(cookie "$A")
check_eq "/run/bpf-iptables mode" "700 root" "$(stat -c '%a %U' /run/bpf-iptables)"
check_eq "state directory mode" "700 root" "$(stat -c '%a %U' "$dA")"
for f in "$dA"/*; do
	check_eq "$(basename "$f") mode" "600 root" "$(stat -c '%a %U' "$f")"
done

# ---- the writer lock held by another process: iptables-legacy's messages ----
before=$(snapshot "$A")
flock "$dA/lock" sleep 6 & holder=$!
touch "$TMPD/legacy.lock"; flock "$TMPD/legacy.lock" sleep 6 & lholder=$!
sleep 0.5
out=$(ipt "$A" -A INPUT -j DROP 2>&1); rc=$?
check_eq "lock held, -A without -w: exit" 4 "$rc"
check_eq "lock held, -A without -w: message" "Another app is currently holding the xtables lock. \
Perhaps you want to use the -w option?" "$out"
for w in "-w 1"; do
	out=$(ipt "$A" $w -A INPUT -j DROP 2>&1); rc=$?
	XTABLES_LOCKFILE=$TMPD/legacy.lock ip netns exec "$A" iptables-legacy $w -A INPUT \
		-j DROP >"$TMPD/legacy.out" 2>&1; lrc=$?
	lout=$(grep -v "^Can't lock" "$TMPD/legacy.out")
	check_eq "lock held, -A ${w:-without -w}: exit as iptables-legacy" "$lrc" "$rc"
	check_eq "lock held, -A ${w:-without -w}: message as iptables-legacy" "$lout" "$out"
done
wait $holder $lholder
check_eq "A unchanged while the lock was held" "$before" "$(snapshot "$A")"

# ---- a non-root user: iptables' permission error, nothing changed ----
before=$(snapshot "$A")
want="can't initialize iptables table \`filter': Permission denied (you must be root)"
for cmd in "-A INPUT -j DROP" "-F" "-L" "-S" "--unload"; do
	out=$(ip netns exec "$A" "${NOBODY[@]}" "$BIN/bpf-iptables" $cmd 2>&1); rc=$?
	check_eq "nobody: bpf-iptables $cmd: exit" 3 "$rc"
	check "nobody: bpf-iptables $cmd: message ($out)" grep -qF "$want" <<<"$out"
done
out=$(echo '*filter
-A INPUT -j DROP
COMMIT' | ip netns exec "$A" "${NOBODY[@]}" "$BIN/bpf-iptables-restore" 2>&1); rc=$?
check_eq "nobody: restore: exit" 3 "$rc"
out=$(ip netns exec "$A" "${NOBODY[@]}" "$BIN/bpf-iptables-save" 2>&1); rc=$?
check_eq "nobody: save: exit" 3 "$rc"
out=$(ip netns exec "$A" "${NOBODY[@]}" "$BIN/bpf-conntrack" -F 2>&1); rc=$?
check "nobody: bpf-conntrack -F fails ($rc: $out)" test "$rc" != 0
# iptables-legacy for comparison (its own lock file, so that the table is what fails)
touch "$TMPD/xt.lock" && chown 65534 "$TMPD/xt.lock"
out=$(XTABLES_LOCKFILE=$TMPD/xt.lock ip netns exec "$A" "${NOBODY[@]}" iptables-legacy -A INPUT -j DROP 2>&1); rc=$?
check_eq "iptables-legacy as nobody: exit" 3 "$rc"
check "iptables-legacy as nobody: same message" grep -qF "$want" <<<"$out"
# with variables of its choosing: its own state directory, the data plane off or on
mkdir "$TMPD/mine" && chown 65534:65534 "$TMPD/mine"
ip netns exec "$A" "${NOBODY[@]}" env BPF_IPTABLES_STATE_DIR="$TMPD/mine" \
	"$BIN/bpf-iptables" -A INPUT -j ACCEPT >/dev/null 2>&1; rc=$?
check "nobody, own state dir, data plane on: refused ($rc)" test "$rc" != 0
ip netns exec "$A" "${NOBODY[@]}" env BPF_IPTABLES_STATE_DIR="$TMPD/mine" \
	BPF_IPTABLES_DATAPLANE=off BPF_IPTABLES_INGRESS=tc BPF_IPTABLES_DEBUG=1 \
	"$BIN/bpf-iptables" -P INPUT DROP >/dev/null 2>&1
ip netns exec "$A" "${NOBODY[@]}" env BPF_IPTABLES_STATE_DIR="$dA" "$BIN/bpf-iptables" -F \
	>/dev/null 2>&1; rc=$?
check "nobody pointing at A's state dir: refused ($rc)" test "$rc" != 0
# a user namespace of its own, where it is "root"
if ip netns exec "$A" "${NOBODY[@]}" unshare -r true 2>/dev/null; then
	out=$(ip netns exec "$A" "${NOBODY[@]}" unshare -r "$BIN/bpf-iptables" -A INPUT -j DROP 2>&1)
	rc=$?
	check "nobody as root of a user namespace: refused ($rc: $out)" test "$rc" != 0
	out=$(ip netns exec "$A" "${NOBODY[@]}" unshare -rn "$BIN/bpf-iptables" -A INPUT -j DROP 2>&1)
	rc=$?
	check "nobody in a user+net namespace: refused ($rc: $out)" test "$rc" != 0
else
	echo "note: unprivileged user namespaces are disabled here; that case is moot"
fi
check "nobody cannot write /run/bpf-iptables" \
	bash -c "! ${NOBODY[*]} ln -s $TMPD /run/bpf-iptables/evil 2>/dev/null"
check_eq "A unchanged by everything nobody did" "$before" "$(snapshot "$A")"

# ---- what an unprivileged user writes is never loaded by root ----
# a state directory in /tmp, prepared by nobody with rules of its own
evil=$TMPD/evil
mkdir "$evil" && printf '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n' >"$evil/rules"
chown -R 65534:65534 "$evil"
out=$(ip netns exec "$A" env BPF_IPTABLES_STATE_DIR="$evil" "$BIN/bpf-iptables" -S 2>&1); rc=$?
check "root refuses nobody's state dir ($rc: $out)" \
	bash -c "[ $rc = 1 ] && grep -q 'not safe: owned by another user' <<<'$out'"
# a symbolic link to it, and a root-owned directory that others can write
ln -s "$evil" "$TMPD/link"
out=$(ip netns exec "$A" env BPF_IPTABLES_STATE_DIR="$TMPD/link" "$BIN/bpf-iptables" -F 2>&1); rc=$?
check "root refuses a symbolic link ($rc: $out)" grep -q 'not safe' <<<"$out"
mkdir -m 777 "$TMPD/open" && chmod 777 "$TMPD/open"
out=$(ip netns exec "$A" env BPF_IPTABLES_STATE_DIR="$TMPD/open" "$BIN/bpf-iptables" -F 2>&1); rc=$?
check "root refuses a world-writable dir ($rc: $out)" grep -q 'writable by others' <<<"$out"
mkdir -p "$TMPD/userdir/sub" && chown 65534 "$TMPD/userdir"
out=$(ip netns exec "$A" env BPF_IPTABLES_STATE_DIR="$TMPD/userdir/sub" "$BIN/bpf-iptables" -F 2>&1)
check "root refuses a dir below nobody's ($out)" grep -q 'can be changed by another user' <<<"$out"
check_eq "A unchanged by all of it" "$before" "$(snapshot "$A")"
# nobody's files in /tmp with the names of ours do not matter: nothing is read from /tmp
check "the sources read nothing from /tmp" \
	bash -c "! grep -rn '\"/tmp' $(dirname "$0")/../../{parser,controlplane,dataplane,conntrack,bpf-iptables,lib}"

echo "isolation: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
