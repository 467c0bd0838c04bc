#!/usr/bin/env bash
# The chain selector's route memo follows every change of the routing state.
#
# At ingress a packet to a local destination is judged by INPUT, a routed one by
# FORWARD (with the output interface); the answer comes from the FIB, and for
# IPv4 a per-CPU memo keeps it for as long as the namespace's route generation
# stays (dataplane/bpfipt.bpf.c, select_ingress()). rtr counts echo requests to srv's
# address 10.2.0.2 in INPUT and in FORWARD while that address moves: routed to
# srv; local to rtr (an address on lo, then a local route behind a policy rule);
# routed again; with forwarding off on rtr's eth0 (INPUT only: the kernel drops
# them) and on again; routed out of another device, which a FORWARD rule with -o
# tells apart. After every change each echo must be counted by the chain
# the kernel took it through, and answered by whoever has the address (or by nobody: a local route
# without an address). IPv6 last: forwarding on and off, all's and the devices'
# settings. Every step also reads iptables-legacy's (ip6tables-legacy's) counters
# on rtr: the chain the kernel took, for what bpf-iptables passed. The data
# plane's statistics must show memo answers, so the changes are tested against
# a memo in use. XDP and tc ingress (BPF_IPTABLES_INGRESS).
BIN=$(cd "${1:?usage: test_route_memo.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
topo_up
MODE=${BPF_IPTABLES_INGRESS:-xdp}
# the family under test: X the echoes' destination, F the commands' and ping's
# suffix (6: bpt6, ping6_ok), P the checks' prefix
X=$SRV_IP F= P= LEGACY=iptables-legacy

bpt "$RTR" -A INPUT -p icmp --icmp-type echo-request -d $X -j ACCEPT
bpt "$RTR" -A FORWARD -p icmp --icmp-type echo-request -d $X -j ACCEPT
legacy_rules() {	# counters only, no target
	local c
	for c in INPUT FORWARD; do nsx "$RTR" "$LEGACY" -A $c "$@" -d $X; done
}
legacy_rules -p icmp --icmp-type echo-request

pkts() { "bpt$F" "$RTR" -vxnL "$1" | awk 'NR == 3 { print $1 }'; }

# the index of BPFIPT_ST_ROUTE_MEMO in enum bpfipt_stat
ST=$(awk '/^enum bpfipt_stat \{/ { on = 1; next } on && /^\};/ { exit }
	  on && /BPFIPT_ST_/ { if ($1 ~ /^BPFIPT_ST_ROUTE_MEMO,/) { print n; exit } n++ }' \
	"$HERE/../../dataplane/bpfipt.h")
# memo answers so far: the statistic summed over the CPUs, from the stats map of
# the program on rtr's eth0
memo_hits() {
	local id
	if [ "$MODE" = tc ]; then
		id=$(ip netns exec "$RTR" tc filter show dev eth0 ingress |
			sed -n 's/.* id \([0-9]*\).*/\1/p' | head -1)
	else
		id=$(ip -n "$RTR" -d link show eth0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' |
			head -1)
	fi
	python3 - "$id" "$ST" <<'EOF'
import json, subprocess, sys
prog, st = sys.argv[1], int(sys.argv[2])
bt = lambda *a: json.loads(subprocess.check_output(["bpftool", "-j", *a]))
for m in bt("prog", "show", "id", prog)["map_ids"]:
    if bt("map", "show", "id", str(m)).get("name") == "bpfipt_stats":
        v = bt("map", "lookup", "id", str(m), "key", *[str(b) for b in st.to_bytes(4, "little")])
        print(sum(int.from_bytes(bytes(int(x, 16) for x in c["value"]), "little")
                  for c in v["values"]))
        sys.exit(0)
sys.exit("no bpfipt_stats map")
EOF
}

# echo N: N echoes cli -> X, one at a time; prints how many were answered
echo_n() {
	local i ok=0
	for i in $(seq "$1"); do "ping${F}_ok" "$CLI" $X && ok=$((ok + 1)); done
	echo $ok
}

# the kernel's own count (LEGACY: iptables-legacy, ip6tables-legacy): packets of
# rule 1 of a chain of rtr's legacy tables, which see what bpf-iptables passed
lpkts() { nsx "$RTR" "$LEGACY" -vxnL "$1" | awk 'NR == 3 { print $1 }'; }

# step WHAT N ANSWERED DIN DFWD [LIN LFWD]: N echoes, ANSWERED of them answered;
# INPUT and FORWARD count DIN and DFWD more, and the kernel's chains LIN and LFWD
# (default DIN and DFWD: where the kernel took the echoes; they differ where the
# kernel drops a packet before either chain, which bpf-iptables judges by INPUT,
# and where a bpf-iptables rule before the counted one takes the echoes)
step() {
	local what=$1 n=$2 want=$3 din=$4 dfwd=$5 lin=${6:-$4} lfwd=${7:-$5} in0 fw0 lin0 lfw0 got
	in0=$(pkts INPUT) fw0=$(pkts FORWARD)
	lin0=$(lpkts INPUT) lfw0=$(lpkts FORWARD)
	got=$(echo_n "$n")
	check_eq "$P$what: echoes answered" "$want" "$got"
	check_eq "$P$what: INPUT counted" "$din" $(($(pkts INPUT) - in0))
	check_eq "$P$what: FORWARD counted" "$dfwd" $(($(pkts FORWARD) - fw0))
	check_eq "$P$what: the kernel's INPUT" "$lin" $(($(lpkts INPUT) - lin0))
	check_eq "$P$what: the kernel's FORWARD" "$lfwd" $(($(lpkts FORWARD) - lfw0))
}

h0=$(memo_hits)
step "routed to srv" 3 3 0 3
h1=$(memo_hits)
check "the memo answered routed echoes ($h0 -> $h1)" [ "$h1" -gt "$h0" ]
ip -n "$RTR" addr add $X/32 dev lo
h0=$(memo_hits)
step "an address of rtr" 4 4 4 0
h1=$(memo_hits)
check "the memo answered echoes to rtr's address ($h0 -> $h1)" [ "$h1" -gt "$h0" ]
ip -n "$RTR" addr del $X/32 dev lo
step "the address removed: routed again" 3 3 0 3

ip netns exec "$RTR" sysctl -qw net.ipv4.conf.eth0.forwarding=0
step "forwarding off on eth0: INPUT, dropped by the kernel" 2 0 2 0 0 0
ip netns exec "$RTR" sysctl -qw net.ipv4.conf.eth0.forwarding=1
step "forwarding on again" 3 3 0 3

# the output interface: a route to X out of another device (one end of a veth
# pair inside rtr: the echoes go nowhere), and a rule with -o alt0 before
# FORWARD's (so the chain's first counter) takes them. (Before the policy
# rule below: the kernel keeps saying it has custom rules once it had one.)
ip -n "$RTR" link add alt0 type veth peer name alt1
ip -n "$RTR" link set alt0 up
ip -n "$RTR" link set alt1 up
bpt "$RTR" -I FORWARD -o alt0 -d $X -j DROP
step "-o alt0 first, routed to srv: not taken" 3 3 0 0 0 3
ip -n "$RTR" route add $X/32 dev alt0
step "routed out of alt0: -o alt0 drops them" 3 0 0 3 0 0
# a burst: most echoes find the memo's answer, which must carry the device
h0=$(memo_hits) d0=$(pkts FORWARD)
ip netns exec "$CLI" ping -n -q -c 20 -i 0.01 -W 1 $X >/dev/null 2>&1
check_eq "a burst routed out of alt0: -o alt0 drops every echo" 20 $(($(pkts FORWARD) - d0))
h1=$(memo_hits)
check "the memo answered echoes routed out of alt0 ($h0 -> $h1)" [ "$h1" -gt $((h0 + 10)) ]
ip -n "$RTR" route del $X/32 dev alt0
step "the route removed: routed to srv again" 3 3 0 0 0 3
bpt "$RTR" -D FORWARD 1

# a policy rule: its selectors go beyond the memo's key, which then stays unused.
# (rtr delivers the echoes but cannot answer from an address no device has)
ip -n "$RTR" route add local $X/32 dev lo table 100
ip -n "$RTR" rule add to $X/32 lookup 100 pref 100
step "local through a policy rule" 3 0 3 0
ip -n "$RTR" rule del pref 100
step "the rule removed: routed again" 3 3 0 3
ip -n "$RTR" route del local $X/32 dev lo table 100

# a route change alone (no address, no rule): a host route to srv through lo's
# blackhole is not local; back to the table's route
ip -n "$RTR" addr add $X/32 dev lo
step "an address of rtr again" 2 2 2 0
ip -n "$RTR" addr del $X/32 dev lo
ip -n "$RTR" route add blackhole $X/32
step "a blackhole route: neither chain, the kernel drops them" 2 0 0 0
ip -n "$RTR" route del blackhole $X/32
step "the blackhole removed: routed again" 3 3 0 3

# IPv6 has no memo: the FIB answers each packet, unless the kernel forwards no
# IPv6 packet that came in on eth0 (net.ipv6.conf.all.forwarding off, eth0's
# force_forwarding off): then the echoes are INPUT's without a lookup
# (fwd6_off()). eth0's own forwarding setting is not the kernel's test (ip6tables
# counts no FORWARD with it on and "all" off, and counts FORWARD with it off and
# "all" on).
topo_up6
X=$SRV_IP6 F=6 P="IPv6, " LEGACY=ip6tables-legacy
bpt6 "$RTR" -A INPUT -p ipv6-icmp --icmpv6-type echo-request -d $X -j ACCEPT
bpt6 "$RTR" -A FORWARD -p ipv6-icmp --icmpv6-type echo-request -d $X -j ACCEPT
legacy_rules -p ipv6-icmp --icmpv6-type echo-request
sysctl6() { ip netns exec "$RTR" sysctl -qw "net.ipv6.conf.$1=$2"; }
ping6_ok "$CLI" $X || ping6_ok "$CLI" $X	# neighbours resolved
step "routed to srv" 3 3 0 3
sysctl6 all.forwarding 0
step "forwarding off: INPUT, dropped by the kernel" 2 0 2 0 0 0
sysctl6 eth0.forwarding 1
step "eth0's own forwarding on, all's off: still INPUT" 2 0 2 0 0 0
if ip netns exec "$RTR" sysctl -q net.ipv6.conf.eth0.force_forwarding >/dev/null 2>&1; then
	# (and eth1's, for the replies)
	sysctl6 eth0.force_forwarding 1
	sysctl6 eth1.force_forwarding 1
	step "eth0's force_forwarding on: routed" 3 3 0 3
	sysctl6 eth0.force_forwarding 0
	sysctl6 eth1.force_forwarding 0
fi
ip -n "$RTR" addr add $X/128 dev lo nodad
step "forwarding off, an address of rtr" 2 2 2 0
ip -n "$RTR" addr del $X/128 dev lo
sysctl6 all.forwarding 1
step "forwarding on again: routed" 3 3 0 3
# eth0's own forwarding off under all's (a router's uplink taking router
# advertisements): the kernel forwards, the helper refuses eth0; asked as from lo
sysctl6 eth0.forwarding 0
step "eth0's own forwarding off, all's on: routed" 3 3 0 3
ip -n "$RTR" addr add $X/128 dev lo nodad
step "eth0's own forwarding off, an address of rtr" 2 2 2 0
ip -n "$RTR" addr del $X/128 dev lo
sysctl6 eth0.forwarding 1

finish
