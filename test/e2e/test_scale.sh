#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 100 000 rules in one chain load and filter correctly: a deny list restored
# into the server's INPUT, with the client's own address as the LAST of them,
# blocks the client and nobody else; removing that one rule lets it through;
# an ordinary rule after the list still works. The list's counters (shared by
# the CPUs: a large group) count the client's echoes and keep them across a
# command that moves every rule id. Prints the restore times.
# Usage: test_scale.sh BUILD_DIR [RULES]
BIN=$(cd "${1:?usage: test_scale.sh BUILD_DIR [RULES]}" && pwd)
N=${2:-100000}
. "$(dirname "$0")/lib.sh"
topo_up

rules=$(mktemp)
trap 'rm -f "$rules"; topo_down' EXIT
python3 - "$N" > "$rules" <<'PY'
import random, sys
n = int(sys.argv[1])
r = random.Random(3)
print("*filter")
seen = set()
while len(seen) < n - 1:
    a = r.randrange(0x0b000000, 0xdf000000)      # 11.0.0.0 .. 223.0.0.0
    if a not in seen:
        seen.add(a)
        plen = 24 if r.random() < 0.1 else 32
        a &= (0xffffffff << (32 - plen)) & 0xffffffff
        print(f"-A INPUT -s {a>>24}.{(a>>16)&255}.{(a>>8)&255}.{a&255}/{plen} -j DROP")
print("-A INPUT -s 10.1.0.2/32 -j DROP")               # the client, last of the list
print("-A INPUT -p tcp --dport 9999 -j DROP")
print("COMMIT")
PY

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
start=$(date +%s%N)
nsx "$SRV" "$BIN/bpf-iptables-restore" < "$rules"
echo "restore of $N+1 rules: $(ms "$start") ms"
check_eq "rules loaded" $((N + 1)) "$(bpt "$SRV" -S INPUT | grep -c '^-A')"

tcp_listen "$SRV" 8080
tcp_listen "$SRV" 9999
check_not "the client (last rule of the list) is blocked" ping_ok "$CLI" $SRV_IP
ping_ok "$CLI" $SRV_IP
# the client rule's packets, from save -c
client_pkts() { nsx "$SRV" "$BIN/bpf-iptables-save" -c | sed -n 's|^\[\([0-9]*\):[0-9]*\] -A INPUT -s 10.1.0.2/32 -j DROP$|\1|p'; }
check_eq "the list member counted the client's 2 echoes" 2 "$(client_pkts)"
bpt "$SRV" -I INPUT 1 -p tcp --dport 9998 -j DROP
ping_ok "$CLI" $SRV_IP
check_eq "its counter carried over an -I (every id moved), plus one" 3 "$(client_pkts)"
check_eq "the list's other members counted nothing" 0 \
	"$(nsx "$SRV" "$BIN/bpf-iptables-save" -c | grep -v 10.1.0.2/32 | grep -- '-j DROP' | grep -vc '^\[0:0\]')"
bpt "$SRV" -D INPUT 1
check "the router (not in the list) passes" ping_ok "$RTR" $SRV_IP
check_not "rule after the list drops tcp 9999" tcp_ok "$RTR" $SRV_IP 9999
check "tcp 8080 from the router passes" tcp_ok "$RTR" $SRV_IP 8080

start=$(date +%s%N)
bpt "$SRV" -D INPUT -s 10.1.0.2/32 -j DROP
echo "delete of one rule from $((N + 1)): $(ms "$start") ms"
check "after -D the client passes" ping_ok "$CLI" $SRV_IP
check "and reaches tcp 8080" tcp_ok "$CLI" $SRV_IP 8080
finish
