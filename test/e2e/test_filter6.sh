#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bpf-ip6tables on real IPv6 traffic, and neighbour discovery against
# ip6tables-legacy.
#
# 1. Filtering: cli (fd00:1::2) --veth-- srv (fd00:1::1), neighbours resolved by
#    NDP as on a real link. bpf-ip6tables rules in srv's INPUT/OUTPUT and cli's
#    OUTPUT decide ping -6, TCP and UDP; counters (-L -v -n -x) count them; -D,
#    -F and -P take effect at once; an IPv4 ruleset beside it is not disturbed.
# 2. Neighbour discovery: NDP is filtered exactly as ip6tables filters it (no
#    implicit pass, no implicit drop): twin pairs, one filtered by
#    ip6tables-legacy, one by bpf-ip6tables, get the same rulesets; with the
#    neighbour caches flushed, a ping -6 must succeed in both or fail in both.
#
# usage: test_filter6.sh BUILD_DIR [tc|xdp]   (root; ip6tables-legacy required)
#        ORACLE6=1 test_filter6.sh BUILD_DIR  checks the harness: ip6tables-legacy
#        in both twins of part 2 (part 1 is skipped)
BIN=$(cd "${1:?usage: $0 BUILD_DIR [tc|xdp]}" && pwd)
MODE=${2:-xdp}
export BPF_IPTABLES_INGRESS=$MODE
SFX=$$
STATE_ROOT=$(mktemp -d /tmp/bipt-e2e6-state.XXXXXX)
PASSED=0 FAILED=0
NSS=()

cleanup() {
	for ns in "${NSS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "$STATE_ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" != 0 ]; then
	echo "FAIL: end-to-end tests need root (network namespaces, BPF)" >&2
	exit 1
fi
for t in ip6tables-legacy-restore ping; do
	command -v $t >/dev/null || { echo "FAIL: $t not found (the reference is ip6tables-legacy)" >&2; exit 1; }
done
for b in bpf-ip6tables bpf-ip6tables-restore bpf-iptables; do
	[ -n "${ORACLE6:-}" ] || [ -x "$BIN/$b" ] || { echo "FAIL: $BIN/$b missing" >&2; exit 1; }
done

check() {
	local what=$1; shift
	if "$@"; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); echo "FAIL: $what"; fi
}
check_not() {
	local what=$1; shift
	if "$@"; then FAILED=$((FAILED + 1)); echo "FAIL: $what"; else PASSED=$((PASSED + 1)); fi
}
check_eq() {
	if [ "$2" = "$3" ]; then PASSED=$((PASSED + 1)); else
		FAILED=$((FAILED + 1)); echo "FAIL: $1: expected '$2', got '$3'"; fi
}

# pair TAG: namespaces cli-TAG and srv-TAG joined by a veth pair, IPv6 only
# on the link (fd00:1::2 and fd00:1::1), NDP as on a real link (no static
# neighbours), no DAD (addresses usable at once), no router solicitations.
pair() {
	local c=b6c-$1-$SFX s=b6s-$1-$SFX
	NSS+=("$c" "$s")
	ip netns add "$c" && ip netns add "$s" || return 1
	for ns in "$c" "$s"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.default.router_solicitations=0 net.ipv6.conf.default.accept_ra=0
		ip -n "$ns" link set lo up
	done
	ip link add e-$1-$SFX netns "$c" type veth peer name f-$1-$SFX netns "$s"
	ip -n "$c" link set e-$1-$SFX name eth0
	ip -n "$s" link set f-$1-$SFX name eth0
	ip -n "$c" -6 addr add fd00:1::2/64 dev eth0 nodad
	ip -n "$s" -6 addr add fd00:1::1/64 dev eth0 nodad
	ip -n "$c" addr add 10.9.0.2/24 dev eth0
	ip -n "$s" addr add 10.9.0.1/24 dev eth0
	ip -n "$c" link set eth0 up
	ip -n "$s" link set eth0 up
}

nsx() { local ns=$1; shift; BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$ns" ip netns exec "$ns" "$@"; }
b6() { local ns=$1; shift; nsx "$ns" "$BIN/bpf-ip6tables" "$@"; }
b4() { local ns=$1; shift; nsx "$ns" "$BIN/bpf-iptables" "$@"; }
ping6_ok() { ip netns exec "$1" ping -6 -c1 -W1 -q "$2" >/dev/null 2>&1; }
ping4_ok() { ip netns exec "$1" ping -4 -c1 -W1 -q "$2" >/dev/null 2>&1; }
tcp_listen6() {
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", int(sys.argv[1]))); s.listen(64)
while True:
    c,_=s.accept(); c.sendall(b"hi"); c.close()' "$2" &
	sleep 0.3
}
tcp6_ok() {
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
sys.exit(0 if s.recv(2)==b"hi" else 1)' "$2" "$3" 2>/dev/null
}
# udp6_count FROM TO DST PORT N: datagrams that arrived
udp6_count() {
	local out pid
	out=$(mktemp)
	ip netns exec "$2" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("::", int(sys.argv[1])))
s.settimeout(1.0); n=0
try:
    while True: s.recv(2048); n+=1
except socket.timeout: pass
print(n)' "$4" >"$out" &
	pid=$!
	sleep 0.3
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])): s.sendto(b"x"*32, (sys.argv[1], int(sys.argv[2])))' "$3" "$4" "$5"
	wait $pid
	cat "$out"
	rm -f "$out"
}
# pkts NS CHAIN N: packet counter of rule N of CHAIN (bpf-ip6tables -L -v -x)
pkts() { b6 "$1" -L "$2" -n -v -x --line-numbers | awk -v n="$3" '$1 == n { print $2 }'; }

# ---------------------------------------------------------------- filtering --
filtering() {
pair f || { echo "FAIL: cannot build the topology"; exit 1; }
C=b6c-f-$SFX S=b6s-f-$SFX
tcp_listen6 "$S" 2222
ip netns exec "$C" ping -6 -c1 -W3 -q fd00:1::1 >/dev/null 2>&1	# links up
check "no rules: ping -6 passes" ping6_ok "$C" fd00:1::1
check "no rules: TCP over IPv6 passes" tcp6_ok "$C" fd00:1::1 2222

check "bpf-ip6tables -A INPUT tcp dport 2222 DROP" b6 "$S" -A INPUT -s fd00:1::/64 -p tcp --dport 2222 -j DROP
check_not "TCP to a dropped port fails" tcp6_ok "$C" fd00:1::1 2222
check "ping -6 still passes (ICMPv6 not matched)" ping6_ok "$C" fd00:1::1
n=$(pkts "$S" INPUT 1)
check "the DROP rule counted the SYNs (got '$n')" test "${n:-0}" -ge 1
check "-D removes it" b6 "$S" -D INPUT -s fd00:1::/64 -p tcp --dport 2222 -j DROP
check "TCP passes again after -D" tcp6_ok "$C" fd00:1::1 2222

check "-A INPUT icmpv6 echo-request DROP" b6 "$S" -A INPUT -p ipv6-icmp --icmpv6-type echo-request -j DROP
check_not "ping -6 dropped by --icmpv6-type echo-request" ping6_ok "$C" fd00:1::1
check "TCP still passes (NDP and TCP not matched)" tcp6_ok "$C" fd00:1::1 2222
check "-F" b6 "$S" -F

check "-A OUTPUT (cli) udp DROP to port 5353" b6 "$C" -A OUTPUT -d fd00:1::1/128 -p udp --dport 5353 -j DROP
check_eq "UDP to the dropped port never arrives" 0 "$(udp6_count "$C" "$S" fd00:1::1 5353 5)"
check_eq "UDP to another port arrives" 5 "$(udp6_count "$C" "$S" fd00:1::1 5354 5)"
n=$(pkts "$C" OUTPUT 1)
check_eq "the OUTPUT rule counted 5 datagrams" 5 "${n:-none}"

# IPv4 beside IPv6: each family's ruleset only judges its own packets
check "bpf-iptables -P INPUT DROP (IPv4) in srv" b4 "$S" -P INPUT DROP
check_not "IPv4 ping dropped by the IPv4 policy" ping4_ok "$C" 10.9.0.1
check "IPv6 ping unaffected by the IPv4 policy" ping6_ok "$C" fd00:1::1
check "bpf-ip6tables -P INPUT DROP" b6 "$S" -P INPUT DROP
check_not "IPv6 ping dropped by the IPv6 policy" ping6_ok "$C" fd00:1::1
check "bpf-iptables -P INPUT ACCEPT (IPv4)" b4 "$S" -P INPUT ACCEPT
check "IPv4 ping passes again" ping4_ok "$C" 10.9.0.1
check_not "IPv6 still dropped" ping6_ok "$C" fd00:1::1
check "bpf-ip6tables -P INPUT ACCEPT" b6 "$S" -P INPUT ACCEPT
check "IPv6 ping passes again" ping6_ok "$C" fd00:1::1
out=$(b6 "$S" -S)
check_eq "bpf-ip6tables -S after the changes" \
	"$(printf -- '-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT')" "$out"
}
[ -n "${ORACLE6:-}" ] || filtering

# ---------------------------------------------------- neighbour discovery ----
pair a || exit 1
pair b || exit 1
CA=b6c-a-$SFX SA=b6s-a-$SFX CB=b6c-b-$SFX SB=b6s-b-$SFX
LOCKDIR=$(mktemp -d -p "$STATE_ROOT")
# links up and carrier seen before the first comparison
for ns in "$CA" "$CB"; do ip netns exec "$ns" ping -6 -c1 -W3 -q fd00:1::1 >/dev/null 2>&1; done

# ndp NAME RULES (save-format lines of srv's filter table, \n-separated)
ndp() {
	local name=$1 text ra rb ga gb
	text=$(printf '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n%b\nCOMMIT\n' "$2")
	echo "$text" | XTABLES_LOCKFILE=$LOCKDIR/a ip netns exec "$SA" ip6tables-legacy-restore
	ra=$?
	if [ -n "${ORACLE6:-}" ]; then
		echo "$text" | XTABLES_LOCKFILE=$LOCKDIR/b ip netns exec "$SB" ip6tables-legacy-restore
	else
		echo "$text" | nsx "$SB" "$BIN/bpf-ip6tables-restore"
	fi
	rb=$?
	if [ $ra != 0 ] || [ $rb != 0 ]; then
		FAILED=$((FAILED + 1)); echo "FAIL: ndp $name: restore: ip6tables-legacy $ra, bpf $rb"; return
	fi
	for ns in "$CA" "$SA" "$CB" "$SB"; do ip -n "$ns" -6 neigh flush dev eth0; done
	ping6_ok "$CA" fd00:1::1 && ga=pass || ga=fail
	ping6_ok "$CB" fd00:1::1 && gb=pass || gb=fail
	check_eq "ndp $name: ping -6 (ip6tables-legacy: $ga)" "$ga" "$gb"
	# the expected outcome too, so that a broken harness cannot pass
	check_eq "ndp $name: ip6tables-legacy outcome" "$3" "$ga"
}

ndp "no rules" "" pass
ndp "INPUT policy DROP" ":INPUT DROP [0:0]" fail
ndp "policy DROP, ICMPv6 accepted" ":INPUT DROP [0:0]\n-A INPUT -p ipv6-icmp -j ACCEPT" pass
ndp "policy DROP, state ESTABLISHED,RELATED + echo-request" \
	":INPUT DROP [0:0]\n-A INPUT -m state --state RELATED,ESTABLISHED -j ACCEPT\n-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT" fail
ndp "policy DROP, UNTRACKED accepted" \
	":INPUT DROP [0:0]\n-A INPUT -m conntrack --ctstate UNTRACKED -j ACCEPT\n-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT" pass
ndp "policy DROP, NS + echo-request" \
	":INPUT DROP [0:0]\n-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 135 -j ACCEPT\n-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT" pass
ndp "INVALID dropped" "-A INPUT -m conntrack --ctstate INVALID -j DROP" pass
ndp "OUTPUT policy DROP" ":OUTPUT DROP [0:0]" fail
ndp "OUTPUT DROP of neighbour advertisements" \
	"-A OUTPUT -p ipv6-icmp -m icmp6 --icmpv6-type neighbour-advertisement -j DROP" fail
ndp "policy DROP, ICMPv6 up to 100 bytes (NS, NA) + echo-request" \
	":INPUT DROP [0:0]\n-A INPUT -p ipv6-icmp -m length --length 0:100 -j ACCEPT\n-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT" pass

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
