#!/usr/bin/env bash
# The ingress hook a namespace gets, command after command (separate processes):
# by default (auto) XDP only where the driver runs it natively on received frames,
# so a veth is judged at tc ingress; BPF_IPTABLES_INGRESS=xdp puts XDP on the veth,
# later commands without the variable keep it, =auto takes it off again. At every
# step a flood of datagrams to a dropped port is judged exactly once (the rule's
# counter grows by the datagrams sent, none arrives) and an allowed port passes;
# -V names the hooks. A value that is no hook is refused, and changes nothing.
BIN=$(cd "${1:?usage: test_ingress.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
topo_up
unset BPF_IPTABLES_INGRESS

xdp_on() { ip -n "$RTR" link show eth0 | grep -q "prog/xdp"; }
drops() { bpt "$RTR" -L INPUT -v -x -n | awk '$NF == "dpt:9000" { print $1 }'; }
# step NAME: 20 datagrams to the dropped port, 20 to an allowed one
step() {
	local before after
	before=$(drops)
	check_eq "$1: port 9000 dropped" 0 "$(udp_count "$CLI" "$RTR" "$RTR_IP1" 9000 20)"
	after=$(drops)
	check_eq "$1: each datagram counted once" 20 "$((after - before))"
	check_eq "$1: port 9001 passes" 20 "$(udp_count "$CLI" "$RTR" "$RTR_IP1" 9001 20)"
}

# the first command, with the verifier's level-2 logs (BPF_IPTABLES_VERIFIER_LOG)
vlog=$STATE_ROOT/vlog
mkdir -p "$vlog"
BPF_IPTABLES_VERIFIER_LOG=$vlog bpt "$RTR" -A INPUT -p udp --dport 9000 -j DROP
check_eq "BPF_IPTABLES_VERIFIER_LOG: a log per program loaded" \
	"bpfipt_tc_in.log bpfipt_tc_out.log" "$(cd "$vlog" && echo *.log)"
split=$("$(dirname "$0")/../../bench/vlog.py" "$vlog/bpfipt_tc_in.log")
check "... bench/vlog.py splits it by function" \
	grep -Eq "^ +[0-9]+ +[0-9.]+%  bpfipt_fast_prefix$" <<<"$split"
check "... and finds the kernel's count" grep -Eq "^processed [0-9]+ insns" <<<"$split"
rm -rf "$vlog"
# the first command verifies its programs side by side, each in a BPF object of
# its own: both must use the instance's maps (the same ids), not copies (each
# object has its .rodata, constant tables, "bpfipt_b.rodata")
in_maps=$(prog_maps "$RTR" eth0 ingress | grep -E '^bpfipt_[a-z0-9_]+ ')
out_maps=$(prog_maps "$RTR" eth0 egress | grep -E '^bpfipt_[a-z0-9_]+ ')
check "tc ingress and egress programs use bpfipt_inst and bpfipt_conf" \
	test "$(printf '%s\n%s\n' "$in_maps" "$out_maps" | grep -cE '^bpfipt_(inst|conf) ')" = 4
check_eq "... the same maps: the egress program's are the ingress one's" "" \
	"$(comm -13 <(echo "$in_maps") <(echo "$out_maps"))"
check_not "default (auto): no XDP on a veth" xdp_on
# the hash of the interfaces XDP judges comes with the first XDP attached
xdp_slot=$(awk '$1 == "bpfipt_xdp_slot" { print $2 }' <<<"$in_maps")
xdpifs_made() { bpftool map lookup id "$xdp_slot" key 0 0 0 0 >/dev/null 2>&1; }
check "the instance has bpfipt_xdp_slot" test -n "$xdp_slot"
check_not "tc alone: no bpfipt_xdpifs made" xdpifs_made
check "default (auto): tc ingress on it" \
	grep -Eq "^  eth0 +ethernet: tc ingress\+egress; parts: [a-z, ]+$" <<<"$(bpt "$RTR" -V)"
check "-V names the automatic choice" grep -q "^hooks: ingress at the running data plane" \
	<<<"$(bpt "$RTR" -V)"
step "auto"

BPF_IPTABLES_INGRESS=xdp bpt "$RTR" -A INPUT -p udp --dport 7 -j DROP
check "BPF_IPTABLES_INGRESS=xdp: XDP on the veth" xdp_on
check "... and bpfipt_xdpifs made with it" xdpifs_made
check "-V: XDP native" \
	grep -Eq "^  eth0 +ethernet: tc ingress\+egress, XDP native; parts: [a-z, ]+$" \
	<<<"$(bpt "$RTR" -V)"
step "xdp"
bpt "$RTR" -D INPUT -p udp --dport 7 -j DROP
check "a command without the variable keeps XDP" xdp_on
step "xdp kept"

BPF_IPTABLES_INGRESS=auto bpt "$RTR" -A INPUT -p udp --dport 7 -j DROP
check_not "BPF_IPTABLES_INGRESS=auto: XDP off the veth" xdp_on
step "auto again"
bpt "$RTR" -D INPUT -p udp --dport 7 -j DROP
check_not "a command without the variable keeps auto" xdp_on
step "auto kept"
# a value that is no hook: refused (exit 2, naming it), nothing changes
out=$(BPF_IPTABLES_INGRESS=xpd bpt "$RTR" -A INPUT -p udp --dport 7 -j DROP 2>&1)
check_eq "BPF_IPTABLES_INGRESS=xpd: exit 2" 2 "$?"
check "... the message names it" grep -q "BPF_IPTABLES_INGRESS=xpd: not an ingress hook" <<<"$out"
out=$(printf '*filter\n-A INPUT -j DROP\nCOMMIT\n' |
	BPF_IPTABLES_INGRESS=xpd nsx "$RTR" "$BIN/bpf-iptables-restore" 2>&1)
check_eq "bpf-iptables-restore refuses it too" 2 "$?"
check_not "... the hook stays" xdp_on
step "after the refused commands"
check_eq "the ruleset is what the commands left" \
	"-P INPUT ACCEPT|-P FORWARD ACCEPT|-P OUTPUT ACCEPT|-A INPUT -p udp -m udp --dport 9000 -j DROP" \
	"$(bpt "$RTR" -S | paste -sd'|')"
finish
