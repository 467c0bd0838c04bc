#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end, -m limit: the token bucket of the data plane against
# iptables-legacy's xt_limit on the same traffic. The server's INPUT is
#   -A INPUT -p udp --dport 6000 -m limit --limit RATE --limit-burst B -j ACCEPT
#   -A INPUT -p udp --dport 6000 -j DROP
# and the client sends a burst of 60 datagrams at once, then 40 at 50/s (0.8 s);
# the datagrams delivered must agree with iptables-legacy's within 10 % (+2):
# timing differs a little between two runs, the algorithm must not.
# Usage: test_limit.sh BUILD_DIR
BIN=$(cd "${1:?usage: test_limit.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
topo_up

# delivered FW RATE BURST: how many of the 100 datagrams reached the server
delivered() {
	local fw=$1 rate=$2 burst=$3 out pid
	local r1="-p udp --dport 6000 -m limit --limit $rate --limit-burst $burst -j ACCEPT"
	local r2="-p udp --dport 6000 -j DROP"
	if [ "$fw" = legacy ]; then
		ip netns exec "$SRV" iptables-legacy -A INPUT $r1
		ip netns exec "$SRV" iptables-legacy -A INPUT $r2
	else
		bpt "$SRV" -A INPUT $r1
		bpt "$SRV" -A INPUT $r2
	fi
	out=$(mktemp)
	ip netns exec "$SRV" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 6000))
s.settimeout(1.0); n = 0
try:
    while True:
        s.recv(64); n += 1
except socket.timeout:
    pass
print(n)' > "$out" &
	pid=$!
	sleep 0.3
	ip netns exec "$CLI" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(60):
    s.sendto(b"x", (sys.argv[1], 6000))
for _ in range(40):
    time.sleep(0.02); s.sendto(b"x", (sys.argv[1], 6000))' $SRV_IP
	wait $pid
	cat "$out"
	rm -f "$out"
	if [ "$fw" = legacy ]; then ip netns exec "$SRV" iptables-legacy -F; else bpt "$SRV" -F; fi
}

close_to() {	# close_to A B: |A - B| <= 10 % of A + 2
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= a / 10 + 2) }'
}

for spec in "10/second 5" "20/second 10" "100/second 20" "3/second 1" "600/minute 30"; do
	set -- $spec
	a=$(delivered legacy "$1" "$2")
	b=$(delivered bpf "$1" "$2")
	echo "limit $1 burst $2: iptables-legacy $a, bpf-iptables $b"
	check "limit $1 burst $2: bpf-iptables delivered $b, iptables-legacy $a" close_to "$a" "$b"
	check "limit $1 burst $2: the limit bites ($b of 100)" test "$b" -lt 100
done
finish
