#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end: rules typed into bpf-iptables in network namespaces filter real
# TCP, UDP and ICMP traffic in INPUT, OUTPUT and FORWARD (with -i and -o), the
# counters match the packets sent, user chains and policies work, and
# --unload leaves each namespace as it was (connectivity back, no programs,
# no qdiscs). Usage: test_filter.sh BUILD_DIR
BIN=$(cd "${1:?usage: test_filter.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
topo_up

counter() {	# counter NS CHAIN RULENUM: packets of that rule (exact)
	bpt "$1" -L "$2" -v -x -n --line-numbers | awk -v n="$3" '$1 == n { print $2 }'
}
policy_pkts() {	# policy_pkts NS CHAIN
	bpt "$1" -L "$2" -v -x -n | awk 'NR == 1 { print $5 }'
}

# ---- baseline: everything flows ----
tcp_listen "$SRV" 8080
tcp_listen "$SRV" 22
check "baseline ping cli->srv" ping_ok "$CLI" $SRV_IP
check "baseline tcp cli->srv:8080" tcp_ok "$CLI" $SRV_IP 8080

# ---- INPUT on the server ----
bpt "$SRV" -A INPUT -p tcp --dport 8080 -j DROP
bpt "$SRV" -A INPUT -p icmp --icmp-type echo-request -s $CLI_IP -j DROP
check_not "INPUT drops tcp 8080" tcp_ok "$CLI" $SRV_IP 8080
check "INPUT lets tcp 22 through" tcp_ok "$CLI" $SRV_IP 22
check_not "INPUT drops ping from cli" ping_ok "$CLI" $SRV_IP
check "router may still ping srv" ping_ok "$RTR" $RTR_IP2
check "ping from router (other source) passes" ping_ok "$RTR" $SRV_IP
check_eq "INPUT ping rule counted 1 packet" 1 "$(counter "$SRV" INPUT 2)"

# UDP: counters equal the datagrams that hit the rule
bpt "$SRV" -I INPUT -p udp --dport 5000 -j DROP
bpt "$SRV" -I INPUT -p udp --dport 5001 -j ACCEPT
check_eq "udp 5000 dropped" 0 "$(udp_count "$CLI" "$SRV" $SRV_IP 5000 50)"
check_eq "udp 5001 delivered" 50 "$(udp_count "$CLI" "$SRV" $SRV_IP 5001 50)"
check_eq "udp drop rule counted 50" 50 "$(counter "$SRV" INPUT 2)"
check_eq "udp accept rule counted 50" 50 "$(counter "$SRV" INPUT 1)"

# delete restores
bpt "$SRV" -D INPUT -p tcp --dport 8080 -j DROP
check "delete re-opens tcp 8080" tcp_ok "$CLI" $SRV_IP 8080

# ---- user chains and policy DROP ----
bpt "$SRV" -F
bpt "$SRV" -N allowed
bpt "$SRV" -A allowed -p tcp --dport 22 -j ACCEPT
bpt "$SRV" -A allowed -p icmp -j ACCEPT
bpt "$SRV" -A allowed -j RETURN
bpt "$SRV" -A INPUT -i lo -j ACCEPT
bpt "$SRV" -A INPUT -s 10.1.0.0/24 -j allowed
bpt "$SRV" -A INPUT -p tcp --sport 22 -j ACCEPT
bpt "$SRV" -P INPUT DROP
check "user chain accepts tcp 22" tcp_ok "$CLI" $SRV_IP 22
check_not "policy DROP stops tcp 8080" tcp_ok "$CLI" $SRV_IP 8080
check "user chain accepts icmp" ping_ok "$CLI" $SRV_IP
check_not "policy DROP stops ping from the router" ping_ok "$RTR" $SRV_IP
p=$(policy_pkts "$SRV" INPUT)
check "INPUT policy counted packets ($p)" test "${p:-0}" -ge 1
bpt "$SRV" -P INPUT ACCEPT
bpt "$SRV" -F
bpt "$SRV" -X

# ---- OUTPUT on the client ----
bpt "$CLI" -A OUTPUT -p tcp -d $SRV_IP --dport 8080 -j REJECT
bpt "$CLI" -A OUTPUT -p udp --dport 5002 -j DROP
check_not "OUTPUT drops tcp 8080 at the client" tcp_ok "$CLI" $SRV_IP 8080
check "OUTPUT passes tcp 22" tcp_ok "$CLI" $SRV_IP 22
check_eq "OUTPUT drops udp 5002" 0 "$(udp_count "$CLI" "$SRV" $SRV_IP 5002 20)"
check_eq "OUTPUT udp rule counted 20" 20 "$(counter "$CLI" OUTPUT 2)"
bpt "$CLI" -F OUTPUT
check "flush re-opens tcp 8080" tcp_ok "$CLI" $SRV_IP 8080

# ---- FORWARD on the router, with -i and -o ----
bpt "$RTR" -A FORWARD -i eth0 -o eth1 -p tcp --dport 8080 -j DROP
bpt "$RTR" -A FORWARD -o eth1 -p udp --dport 5003 -j DROP
check_not "FORWARD -i eth0 -o eth1 drops tcp 8080" tcp_ok "$CLI" $SRV_IP 8080
check "FORWARD passes tcp 22" tcp_ok "$CLI" $SRV_IP 22
check "FORWARD passes ping" ping_ok "$CLI" $SRV_IP
check_eq "FORWARD -o eth1 drops udp 5003" 0 "$(udp_count "$CLI" "$SRV" $SRV_IP 5003 30)"
check_eq "FORWARD udp rule counted 30" 30 "$(counter "$RTR" FORWARD 2)"
check "router's own traffic is not FORWARD" ping_ok "$RTR" $SRV_IP
bpt "$RTR" -I FORWARD -i eth1 -o eth0 -p icmp -j DROP
check_not "FORWARD -i eth1 -o eth0 drops the echo replies" ping_ok "$CLI" $SRV_IP
check "srv to router is INPUT, not FORWARD" ping_ok "$SRV" $RTR_IP2

# ---- the first match at every bit of a 64-rule word (bits 42-56 once went wrong) ----
bad=""
for k in 0 1 31 41 42 43 48 49 50 55 56 57 62 63 64 127; do
	{ echo "*filter"
	  for i in $(seq 1 $k); do echo "-A INPUT -p udp --dport $((1000 + i)) -j DROP"; done
	  echo "-A INPUT -p tcp --dport 22 -j ACCEPT"
	  echo "-A INPUT -p tcp -j DROP"
	  echo "COMMIT"; } | nsx "$SRV" "$BIN/bpf-iptables-restore"
	tcp_ok "$CLI" $SRV_IP 22 || bad="$bad $k"
done
check_eq "tcp 22 accepted by the rule after k fillers, for every k" "" "$bad"
bpt "$SRV" -F INPUT

# ---- coexistence with legacy iptables: a packet must pass both ----
bpt "$SRV" -A INPUT -p tcp --dport 22 -j ACCEPT
ip netns exec "$SRV" iptables-legacy -A INPUT -p tcp --dport 22 -j DROP
check_not "legacy iptables still drops what bpf-iptables accepts" tcp_ok "$CLI" $SRV_IP 22
ip netns exec "$SRV" iptables-legacy -F INPUT
check "and lets it through once its rule is gone" tcp_ok "$CLI" $SRV_IP 22
bpt "$SRV" -I INPUT -p tcp --dport 22 -j DROP
check_not "bpf-iptables drops what legacy iptables accepts" tcp_ok "$CLI" $SRV_IP 22
bpt "$SRV" -F INPUT

# ---- -Z zeroes the live counters, and they keep counting ----
bpt "$SRV" -A INPUT -p udp --dport 5004 -j ACCEPT
udp_count "$CLI" "$SRV" $SRV_IP 5004 10 >/dev/null
check_eq "counted before -Z" 10 "$(counter "$SRV" INPUT 1)"
bpt "$SRV" -Z INPUT
check_eq "zero after -Z" 0 "$(counter "$SRV" INPUT 1)"
udp_count "$CLI" "$SRV" $SRV_IP 5004 7 >/dev/null
bpt "$SRV" -A INPUT -p udp --dport 5005 -j ACCEPT
check_eq "counting again, across a later command" 7 "$(counter "$SRV" INPUT 1)"
bpt "$SRV" -F INPUT

# ---- unload leaves the namespaces as they were ----
for ns in "$CLI" "$RTR" "$SRV"; do
	nsx "$ns" "$BIN/bpf-iptables" --unload
	left=$(ip netns exec "$ns" tc qdisc show | grep -c clsact || true)
	check_eq "no clsact left in $ns" 0 "$left"
	progs=$(ip -n "$ns" link show | grep -c "xdp" || true)
	check_eq "no xdp left in $ns" 0 "$progs"
done
check "after unload tcp 8080 flows again" tcp_ok "$CLI" $SRV_IP 8080
check "after unload ping flows again" ping_ok "$CLI" $SRV_IP

finish
