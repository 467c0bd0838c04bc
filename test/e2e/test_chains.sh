#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Many user chains filter real traffic (kube-proxy's and Docker's shape): N chains,
# INPUT jumping to chain i from "-p udp --dport 20000+i" (one slot: a tuple group
# whose rules each jump to a chain of their own, a verdict map), chain i dropping
# the client (odd i) or an address nobody has (even i) when it sends to port
# 20000+i (a vector per port), then accepting. So many chains make the loader
# window the bit vectors' pool (BPFIPT_C_WINDOWS: a generation of 9 000 chains
# takes 23 MB, 53 MB with BPF_IPTABLES_POOL=flat; the first restore makes the
# spare generation's maps too, 46 MB in all). Datagrams to ports whose
# chains lie in the first, a middle and the last chunks of the vectors arrive or
# not as the chains say, the rules that judged them count them, and so after a
# rule is appended to INPUT and deleted again (the pool rebuilt, the counters
# carried), also through a flat pool and back (BPF_IPTABLES_POOL=flat for one
# command). Prints the restore and -A times.
# Usage: test_chains.sh BUILD_DIR [CHAINS]
BIN=$(cd "${1:?usage: test_chains.sh BUILD_DIR [CHAINS]}" && pwd)
N=${2:-9000}
. "$(dirname "$0")/lib.sh"
topo_up

rules=$(mktemp)
trap 'rm -f "$rules"; topo_down' EXIT
python3 - "$N" "$CLI_IP" > "$rules" <<'PY'
import sys
n, cli = int(sys.argv[1]), sys.argv[2]
print("*filter")
for i in range(n):
    print(f":SVC-{i:05d} - [0:0]")
for i in range(n):
    print(f"-A INPUT -p udp -m udp --dport {20000 + i} -j SVC-{i:05d}")
for i in range(n):
    print(f"-A SVC-{i:05d} -s {cli if i % 2 else '10.9.9.9'}/32 -p udp --dport {20000 + i}"
          " -j DROP")
    print(f"-A SVC-{i:05d} -j ACCEPT")
print("COMMIT")
PY

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
start=$(date +%s%N)
nsx "$SRV" "$BIN/bpf-iptables-restore" < "$rules"
echo "restore of $N chains: $(ms "$start") ms"
check_eq "chains loaded" "$N" "$(bpt "$SRV" -S | grep -c '^-N SVC-')"
bytes=$(nsx "$SRV" "$BIN/pktcost" --running)
echo "maps: $bytes bytes"
check "the maps of $N chains are windowed (two generations under 48 MiB)" \
	test "$bytes" -lt $((48 << 20))

# save -c's packet count of a rule (its text after the counters)
pkts() { nsx "$SRV" "$BIN/bpf-iptables-save" -c | sed -n "s|^\[\([0-9]*\):[0-9]*\] $1\$|\1|p"; }

# chain i: 3 datagrams to its port; they arrive when i is even
send_chain() {
	local i=$1 want=3
	[ $((i % 2)) = 1 ] && want=0
	check_eq "port $((20000 + i)) (chain $i)" $want \
		"$(udp_count "$CLI" "$SRV" $SRV_IP $((20000 + i)) 3)"
}
judged() {	# judged I PACKETS: the jump and the judging rule of chain I counted them
	local i=$1 c
	c=$(printf 'SVC-%05d' "$i")
	check_eq "jump to $c counted" "$2" "$(pkts "-A INPUT -p udp -m udp --dport $((20000 + i)) -j $c")"
	if [ $((i % 2)) = 1 ]; then
		check_eq "$c dropped the client" "$2" \
			"$(pkts "-A $c -s $CLI_IP/32 -p udp -m udp --dport $((20000 + i)) -j DROP")"
	else
		check_eq "$c accepted" "$2" "$(pkts "-A $c -j ACCEPT")"
	fi
}

last=$((N - 1))
picks="0 1 $((N / 2 + 1)) $((last - 1)) $last"
for i in $picks; do send_chain "$i"; done
for i in $picks; do judged "$i" 3; done
check_eq "no other chain counted" 0 \
	"$(nsx "$SRV" "$BIN/bpf-iptables-save" -c | grep -- '-A SVC-' | grep -vc '^\[0:0\]' |
	   awk -v k="$(echo $picks | wc -w)" '{ print $1 - k }')"

start=$(date +%s%N)
bpt "$SRV" -A INPUT -s 192.0.2.1/32 -j DROP
echo "-A into $N chains: $(ms "$start") ms"
bpt "$SRV" -D INPUT -s 192.0.2.1/32 -j DROP
for i in $picks; do send_chain "$i"; done
for i in $picks; do judged "$i" 6; done

# one command with the pool flat, the next windowed again: the counters go
# across both changes of layout
BPF_IPTABLES_POOL=flat bpt "$SRV" -A INPUT -s 192.0.2.1/32 -j DROP
bytes=$(nsx "$SRV" "$BIN/pktcost" --running)
echo "maps with BPF_IPTABLES_POOL=flat: $bytes bytes"
check "BPF_IPTABLES_POOL=flat: the maps are whole (over 40 MiB)" test "$bytes" -gt $((40 << 20))
for i in $picks; do judged "$i" 6; done
bpt "$SRV" -D INPUT -s 192.0.2.1/32 -j DROP
check "windowed again" test "$(nsx "$SRV" "$BIN/pktcost" --running)" -lt $((40 << 20))
for i in $picks; do send_chain "$i"; done
for i in $picks; do judged "$i" 9; done
finish
