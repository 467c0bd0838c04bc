#!/usr/bin/env bash
# The programs' optional parts (BPFIPT_FEAT_*, dataplane/bpfipt.h): a namespace's
# first programs are loaded without the code its ruleset does not use
# (connection tracking, -m recent, the windowed pool and its summary rows, LOG,
# REJECT's replies, the search of a pool of several pages), and
# loaded again with it, in place on every interface, by the first ruleset that
# needs it. rtr filters what it forwards between cli and srv; `bpf-iptables -V`
# names each interface's parts, the traffic shows they work:
#   - a stateless first command in INPUT: no part on lo, eth0 or eth1; FORWARD
#     and OUTPUT, without rules, judged by their policies (counted), and INPUT's
#     rule by the slot prefix: no walk of the slots;
#   - a FORWARD policy of DROP: still no part, cli's pings dropped; a rule in
#     FORWARD: its walk (forward); one in OUTPUT: OUTPUT's (output), each
#     judged by the slot prefix; a rule of five fields, which the prefix does
#     not hold: the walk of the slots (walk), judging cli's datagrams;
#   - IPv6 passed untouched (no IPv6 ruleset) by programs without it; the
#     first bpf-ip6tables rule brings it (ipv6) and judges cli's IPv6 pings;
#   - replies let through by --ctstate: the parts
#     grow to conntrack everywhere, and cli's pings are answered (the replies
#     ESTABLISHED), srv's are not (NEW);
#   - -m recent: cli, once on the list, is dropped;
#   - REJECT: cli's connection refused at once (a TCP reset); LOG: the logged
#     datagram goes on;
#   - a restore of 5 000 rules no group takes into a flat pool of ten pages
#     (BPF_IPTABLES_POOL=flat): pages; then into a windowed pool
#     (BPF_IPTABLES_POOL=windows): windows; each time the probes at its end
#     judged as written; then 17 000 such rules, more slots than their array of
#     one size holds: the slots in the pool's pages, the probes again;
#   - parts never shrink: a flush keeps them.
# Under BPF_IPTABLES_INGRESS=xdp (as run by CTest) eth0 and eth1 judge at XDP,
# whose program is replaced too.
BIN=$(cd "${1:?usage: test_parts.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
topo_up
topo_up6
# the IPv6 neighbours found first (a fresh topology's first ping -6 can take
# longer than its second)
for _ in 1 2 3; do ping6_ok "$CLI" $SRV_IP6 && break; done

# parts DEV: what `bpf-iptables -V` says rtr's DEV runs
parts() { bpt "$RTR" -V | sed -n "s/^  $1 .*; parts: //p"; }
check_parts() {		# check_parts WHAT EXPECTED: on lo, eth0 and eth1
	local d
	for d in lo eth0 eth1; do check_eq "$1: $d's parts" "$2" "$(parts $d)"; done
}

# policy CHAIN: the packets CHAIN's policy counted
policy() {
	bpt "$RTR" -L "$1" -n -v -x | sed -n 's/^Chain .*(policy [A-Z]* \([0-9]*\) packets.*/\1/p'
}
check "a stateless first command" bpt "$RTR" -A INPUT -s 192.0.2.1 -j DROP
check_parts "stateless" "none"
check "cli reaches srv" ping_ok "$CLI" $SRV_IP
check "rtr reaches srv" ping_ok "$RTR" $SRV_IP
check "cli reaches srv over IPv6 (no IPv6 ruleset)" ping6_ok "$CLI" $SRV_IP6
check "FORWARD's policy counted (cli's ping and its reply)" test "$(policy FORWARD)" -ge 2
check "OUTPUT's policy counted (rtr's ping)" test "$(policy OUTPUT)" -ge 1
if [ "${BPF_IPTABLES_INGRESS:-}" = xdp ]; then
	check "XDP on eth0" sh -c "ip -n $RTR link show eth0 | grep -q 'prog/xdp'"
fi

# FORWARD's policy, still without its walk; then a rule in it (stateless: the
# replies are dropped), and one in OUTPUT
bpt "$RTR" -P FORWARD DROP
check_parts "a DROP policy" "none"
check_not "cli's pings dropped by FORWARD's policy" ping_ok "$CLI" $SRV_IP
bpt "$RTR" -A FORWARD -s $CLI_IP -j ACCEPT
check_parts "a rule in FORWARD" "forward"
check_not "srv's replies dropped without conntrack" ping_ok "$CLI" $SRV_IP
check "a rule in OUTPUT" bpt "$RTR" -A OUTPUT -p udp --dport 7 -d $SRV_IP -j DROP
check_parts "a rule in OUTPUT" "output, forward"
check_eq "rtr's datagram to port 7 dropped" 0 "$(udp_count "$RTR" "$SRV" $SRV_IP 7 1)"
check_eq "rtr's datagram to port 8 through" 1 "$(udp_count "$RTR" "$SRV" $SRV_IP 8 1)"
check_eq "cli's datagram to port 9 through (FORWARD's rule)" 1 \
	"$(udp_count "$CLI" "$SRV" $SRV_IP 9 1)"
# a rule of five fields, more than the slot prefix holds: the walk
check "a rule of five fields" \
	bpt "$RTR" -I FORWARD 1 -s $CLI_IP -d $SRV_IP -i eth0 -o eth1 -p udp --dport 9 -j DROP
check_parts "the walk" "output, forward, walk"
check_eq "cli's datagram to port 9 dropped" 0 "$(udp_count "$CLI" "$SRV" $SRV_IP 9 1)"
check_eq "cli's datagram to port 10 through" 1 "$(udp_count "$CLI" "$SRV" $SRV_IP 10 1)"
check "cli reaches srv over IPv6 still" ping6_ok "$CLI" $SRV_IP6
check "an IPv6 rule" \
	bpt6 "$RTR" -A FORWARD -s $CLI_IP6 -p ipv6-icmp --icmpv6-type echo-request -j DROP
check_parts "IPv6" "output, forward, ipv6, walk"
check_not "cli's IPv6 pings dropped" ping6_ok "$CLI" $SRV_IP6
check "srv's IPv6 pings answered" ping6_ok "$SRV" $CLI_IP6
check "conntrack's rule" bpt "$RTR" -A FORWARD -m conntrack --ctstate ESTABLISHED -j ACCEPT
check_parts "conntrack" "conntrack, output, forward, ipv6, walk"
check "cli's pings answered (ESTABLISHED replies)" ping_ok "$CLI" $SRV_IP
check_not "srv's pings dropped (NEW)" ping_ok "$SRV" $CLI_IP
if [ "${BPF_IPTABLES_INGRESS:-}" = xdp ]; then
	check "XDP on eth0 after the replace" sh -c "ip -n $RTR link show eth0 | grep -q 'prog/xdp'"
fi

check "recent's rules" bpt "$RTR" -I FORWARD 1 -m recent --name bad --rcheck -j DROP
bpt "$RTR" -I FORWARD 1 -p udp --dport 7777 -m recent --name bad --set -j DROP
check_parts "recent" "conntrack, recent, output, forward, ipv6, walk"
check "cli's pings still answered" ping_ok "$CLI" $SRV_IP
check_eq "the datagram that lists cli dropped" 0 "$(udp_count "$CLI" "$SRV" $SRV_IP 7777 1)"
check_not "cli on the list: dropped" ping_ok "$CLI" $SRV_IP
bpt "$RTR" -D FORWARD -m recent --name bad --rcheck -j DROP

# refused: a reset within the second, where a drop would time out
tcp_refused() {
	ip netns exec "$1" python3 -c '
import socket,sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)' "$2" "$3" 2>/dev/null
}
tcp_listen "$SRV" 9
check "srv's port 9 answers before REJECT" tcp_ok "$CLI" $SRV_IP 9
check "REJECT's rule" bpt "$RTR" -I FORWARD 1 -p tcp --dport 9 -j REJECT --reject-with tcp-reset
check_parts "reject" "conntrack, recent, reject, output, forward, ipv6, walk"
check "port 9 refused by a reset" tcp_refused "$CLI" $SRV_IP 9
check "LOG's rule" bpt "$RTR" -I FORWARD 1 -p udp --dport 5555 -j LOG --log-prefix "parts "
check_parts "log" "conntrack, recent, log, reject, output, forward, ipv6, walk"
check_eq "the logged datagram through" 1 "$(udp_count "$CLI" "$SRV" $SRV_IP 5555 1)"

# N rules no group takes (targets alternate), never matching, then the probes
filler() {
	echo "*filter"
	echo ":INPUT ACCEPT [0:0]"
	echo ":FORWARD DROP [0:0]"
	echo ":OUTPUT ACCEPT [0:0]"
	local t=(DROP ACCEPT) i
	for ((i = 0; i < $1; i++)); do
		echo "-A FORWARD -s 198.$((18 + i / 62500)).$((i / 250 % 250)).$((i % 250 + 1)) -p udp --dport $((1000 + i)) -j ${t[i % 2]}"
	done
	echo "-A FORWARD -p udp --dport 9001 -j DROP"
	echo "-A FORWARD -m conntrack --ctstate ESTABLISHED -j ACCEPT"
	echo "-A FORWARD -s $CLI_IP -j ACCEPT"
	echo "COMMIT"
}
rules=$(mktemp)
filler 5000 > "$rules"
# past the rules: each probe's datagrams dropped, the others through
probes() {
	check "cli's pings answered past the rules ($1)" ping_ok "$CLI" $SRV_IP
	check_not "srv's pings dropped by the policy ($1)" ping_ok "$SRV" $CLI_IP
	check_eq "the probe's datagrams dropped ($1)" 0 \
		"$(udp_count "$CLI" "$SRV" $SRV_IP 9001 3)"
	check_eq "other datagrams through ($1)" 3 "$(udp_count "$CLI" "$SRV" $SRV_IP 9002 3)"
}
# a flat pool of ten pages: the search of pages
check "a flat restore" \
	env BPF_IPTABLES_POOL=flat BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$RTR" \
	ip netns exec "$RTR" "$BIN/bpf-iptables-restore" "$rules"
check_parts "pages" \
	"conntrack, recent, log, reject, pages, output, forward, ipv6, walk"
probes flat
check "a windowed restore" \
	env BPF_IPTABLES_POOL=windows BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$RTR" \
	ip netns exec "$RTR" "$BIN/bpf-iptables-restore" "$rules"
check_parts "windows" \
	"conntrack, recent, windows, log, reject, pages, output, forward, ipv6, walk"
probes windowed
# 17 000 rules: more slots than bpfipt_slotsfx holds (BPFIPT_SLOTS_FIXED), in
# the pool's pages
filler 17000 > "$rules"
check "a restore of 17 000 rules" \
	env BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$RTR" \
	ip netns exec "$RTR" "$BIN/bpf-iptables-restore" "$rules"
rm -f "$rules"
check_parts "slots in pages" \
	"conntrack, recent, windows, log, reject, pages, slots in pages, output, forward, ipv6, walk"
probes "17 000 rules"

check "flush" bpt "$RTR" -F
check_parts "after a flush" \
	"conntrack, recent, windows, log, reject, pages, slots in pages, output, forward, ipv6, walk"
check "--unload" bpt "$RTR" --unload
finish
