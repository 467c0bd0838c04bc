# SPDX-License-Identifier: GPL-2.0
# Shared by the end-to-end tests: a client - router - server topology of network
# namespaces joined by veth pairs, traffic helpers, and a cleanup that runs on
# every exit (also on failure or interrupt) and leaves nothing behind.
#
#   cli (10.1.0.2) --veth-- (10.1.0.1) rtr (10.2.0.1) --veth-- (10.2.0.2) srv
#
# Source it, then call topo_up. BIN must point at the build directory.

set -uo pipefail
: "${BIN:?BIN must be the build directory}"
SFX=$$
CLI=bipt-cli-$SFX RTR=bipt-rtr-$SFX SRV=bipt-srv-$SFX
CLI_IP=10.1.0.2 RTR_IP1=10.1.0.1 RTR_IP2=10.2.0.1 SRV_IP=10.2.0.2
PASSED=0 FAILED=0
# each namespace's saved ruleset in a directory of our own, removed at the end
STATE_ROOT=$(mktemp -d /tmp/bipt-e2e-state.XXXXXX)

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "FAIL: end-to-end tests need root (network namespaces, BPF)" >&2
		exit 1
	fi
}

topo_down() {
	for ns in "$CLI" "$RTR" "$SRV"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "$STATE_ROOT"
}

topo_up() {
	need_root
	trap topo_down EXIT
	trap 'exit 130' INT TERM
	for ns in "$CLI" "$RTR" "$SRV"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add c0-$SFX netns "$CLI" type veth peer name r0-$SFX netns "$RTR"
	ip link add r1-$SFX netns "$RTR" type veth peer name s0-$SFX netns "$SRV"
	ip -n "$CLI" link set c0-$SFX name eth0
	ip -n "$RTR" link set r0-$SFX name eth0
	ip -n "$RTR" link set r1-$SFX name eth1
	ip -n "$SRV" link set s0-$SFX name eth0
	ip -n "$CLI" addr add $CLI_IP/24 dev eth0
	ip -n "$RTR" addr add $RTR_IP1/24 dev eth0
	ip -n "$RTR" addr add $RTR_IP2/24 dev eth1
	ip -n "$SRV" addr add $SRV_IP/24 dev eth0
	for l in "$CLI eth0" "$RTR eth0" "$RTR eth1" "$SRV eth0"; do
		set -- $l
		ip -n "$1" link set "$2" up
	done
	ip -n "$CLI" route add default via $RTR_IP1
	ip -n "$SRV" route add default via $RTR_IP2
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
}

# topo_up6 (after topo_up): the same topology in IPv6 too, addresses without
# duplicate address detection
#   cli (2001:db8:1::2) -- (2001:db8:1::1) rtr (2001:db8:2::1) -- (2001:db8:2::2) srv
CLI_IP6=2001:db8:1::2 RTR_IP61=2001:db8:1::1 RTR_IP62=2001:db8:2::1 SRV_IP6=2001:db8:2::2
topo_up6() {
	ip -n "$CLI" addr add $CLI_IP6/64 dev eth0 nodad
	ip -n "$RTR" addr add $RTR_IP61/64 dev eth0 nodad
	ip -n "$RTR" addr add $RTR_IP62/64 dev eth1 nodad
	ip -n "$SRV" addr add $SRV_IP6/64 dev eth0 nodad
	ip -n "$CLI" -6 route add default via $RTR_IP61
	ip -n "$SRV" -6 route add default via $RTR_IP62
	ip netns exec "$RTR" sysctl -qw net.ipv6.conf.all.forwarding=1
}

# nsx NS CMD...: a command of ours in a namespace, with that namespace's state dir
nsx() {
	local ns=$1; shift
	BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$ns" ip netns exec "$ns" "$@"
}
# bpt NS ARGS...: bpf-iptables in a namespace
bpt() { local ns=$1; shift; nsx "$ns" "$BIN/bpf-iptables" "$@"; }
# bpt6 NS ARGS...: bpf-ip6tables in a namespace
bpt6() { local ns=$1; shift; nsx "$ns" "$BIN/bpf-ip6tables" "$@"; }

# prog_maps NS DEV ingress|egress: "name id" of every map the tc program on DEV
# uses (bpftool), sorted
prog_maps() {
	local prog m
	prog=$(ip netns exec "$1" tc -j filter show dev "$2" "$3" |
	       jq '[.[] | .options.prog.id // empty][0]')
	for m in $(bpftool -j prog show id "$prog" | jq '.map_ids[]'); do
		bpftool -j map show id "$m" | jq -r '"\(.name) \(.id)"'
	done | sort
}

# ping_ok FROM_NS DST: one echo, 1 s
ping_ok() { ip netns exec "$1" ping -c1 -W1 -q "$2" >/dev/null 2>&1; }
ping6_ok() { ip netns exec "$1" ping -6 -c1 -W1 -q "$2" >/dev/null 2>&1; }

# tcp_listen NS PORT: a server accepting connections in the background
tcp_listen() {
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(64)
while True:
    c,_=s.accept(); c.sendall(b"hi"); c.close()' "$2" &
	sleep 0.3
}

# tcp_ok FROM_NS DST PORT: connect and read the greeting within 1 s
# tcp_listen6 NS PORT: the same on IPv6 (::, IPv6 only)
tcp_listen6() {
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind(("::", int(sys.argv[1]))); s.listen(64)
while True:
    c,_=s.accept(); c.sendall(b"hi"); c.close()' "$2" &
	sleep 0.3
}
tcp_ok() {
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
sys.exit(0 if s.recv(2)==b"hi" else 1)' "$2" "$3" 2>/dev/null
}

# udp_count FROM_NS TO_NS DST PORT N: send N datagrams, print how many arrived
udp_count() {
	local out
	out=$(mktemp)
	ip netns exec "$2" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(1.0); n=0
try:
    while True: s.recv(2048); n+=1
except socket.timeout: pass
print(n)' "$4" > "$out" &
	local pid=$!
	sleep 0.3
	ip netns exec "$1" python3 -c '
import socket,sys
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])): s.sendto(b"x"*32, (sys.argv[1], int(sys.argv[2])))' "$3" "$4" "$5"
	wait $pid
	cat "$out"
	rm -f "$out"
}

check() {	# check DESCRIPTION COMMAND...: the command must succeed
	local what=$1; shift
	if "$@"; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); echo "FAIL: $what"; fi
}

check_not() {	# the command must fail
	local what=$1; shift
	if "$@"; then FAILED=$((FAILED + 1)); echo "FAIL: $what"; else PASSED=$((PASSED + 1)); fi
}

check_eq() {	# check_eq DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then PASSED=$((PASSED + 1)); else
		FAILED=$((FAILED + 1)); echo "FAIL: $1: expected '$2', got '$3'"; fi
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}
