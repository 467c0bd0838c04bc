#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Connection tracking, measured side by side in one run (issue 4):
#  1. TCP connections per second from a client to a server through a stateful
#     INPUT ruleset on the server (policy DROP, ESTABLISHED,RELATED ACCEPT, NEW
#     tcp dport 8080 ACCEPT, plus NOISE non-matching rules before it), for: no
#     firewall, iptables-legacy, bpf-iptables (XDP ingress), bpf-iptables (tc).
#  2. A UDP flood on an established flow through the same ruleset (packets/s
#     received by the server), same four configurations, plus bpf-iptables
#     with a stateless ruleset (tracking off) to show what tracking costs.
# Usage: bench/conntrack.sh BUILD_DIR [SECONDS] [NOISE]     (root)
# Prints a table with ratios to "no firewall" computed within this run.
set -uo pipefail
BIN=$(cd "${1:?usage: bench/conntrack.sh BUILD_DIR [SECONDS] [NOISE]}" && pwd)
SECS=${2:-5}
NOISE=${3:-100}
. "$(dirname "$0")/../test/e2e/lib.sh"
topo_up

# the server: accepts and closes (TCP 8080), counts datagrams (UDP 9000)
ip netns exec "$SRV" python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080)); s.listen(4096)
while True:
    c, _ = s.accept(); c.close()' &

# connections/s: two client processes (2 cores), each connect + close in a loop
conn_rate() {
	ip netns exec "$CLI" python3 - "$SRV_IP" "$SECS" <<'PY'
import os, socket, sys, time
dst, secs = sys.argv[1], float(sys.argv[2])
def run(w):
    n, end = 0, time.time() + secs
    while time.time() < end:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        s.settimeout(1)
        try:
            s.connect((dst, 8080)); n += 1
        except OSError:
            pass
        s.close()
    os.write(w, b"%d\n" % n)
r, w = os.pipe()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        run(w); os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
os.close(w)
tot = sum(int(x) for x in os.read(r, 4096).split())
print(int(tot / secs))
PY
}

# UDP flood on one established flow: the server answers the first datagram
# (so the flow is ESTABLISHED), then counts what arrives while the client floods
udp_rate() {
	local out
	out=$(mktemp)
	ip netns exec "$SRV" python3 - "$SECS" > "$out" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", 9000)); s.settimeout(3)
data, peer = s.recvfrom(2048); s.sendto(b"ok", peer)
n, end = 0, time.time() + float(sys.argv[1])
s.settimeout(0.2)
while time.time() < end:
    try:
        s.recv(2048); n += 1
    except socket.timeout:
        pass
print(int(n / float(sys.argv[1])))
PY
	local pid=$!
	sleep 0.3
	ip netns exec "$CLI" python3 - "$SRV_IP" "$SECS" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9001)); s.connect((sys.argv[1], 9000)); s.settimeout(2)
s.send(b"hello"); s.recv(16)
end, b = time.time() + float(sys.argv[2]) + 0.3, b"x" * 64
while time.time() < end:
    for _ in range(256):
        try:
            s.send(b)
        except OSError:
            pass
PY
	wait $pid
	cat "$out"
	rm -f "$out"
}

ruleset() {	# ruleset STATEFUL(0/1): iptables-restore text for the server
	echo "*filter"
	echo ":INPUT DROP [0:0]"
	echo ":FORWARD ACCEPT [0:0]"
	echo ":OUTPUT ACCEPT [0:0]"
	if [ "$1" = 1 ]; then
		echo "-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
	else
		echo "-A INPUT -p tcp ! --syn -j ACCEPT"
		echo "-A INPUT -p udp --sport 9001 --dport 9000 -j ACCEPT"
	fi
	for i in $(seq 1 "$NOISE"); do
		echo "-A INPUT -s 192.0.$((i / 250)).$((i % 250 + 1)) -p tcp --dport $((i + 10000)) -j ACCEPT"
	done
	if [ "$1" = 1 ]; then
		echo "-A INPUT -p tcp --dport 8080 -m conntrack --ctstate NEW -j ACCEPT"
		echo "-A INPUT -p udp --dport 9000 -m conntrack --ctstate NEW -j ACCEPT"
	else
		echo "-A INPUT -p tcp --dport 8080 -j ACCEPT"
	fi
	echo "COMMIT"
}

clear_all() {
	nsx "$SRV" "$BIN/bpf-iptables" --unload >/dev/null 2>&1
	ip netns exec "$SRV" iptables-legacy -F
	ip netns exec "$SRV" iptables-legacy -P INPUT ACCEPT
	rm -f "$STATE_ROOT/$SRV/rules"
}

declare -A CONN UDP
measure() {	# measure NAME
	CONN[$1]=$(conn_rate)
	UDP[$1]=$(udp_rate)
	printf '  %-28s %10s conn/s %10s pkt/s\n' "$1" "${CONN[$1]}" "${UDP[$1]}" >&2
}

echo "bench/conntrack.sh: ${SECS}s per point, $NOISE non-matching rules before the NEW rule" >&2
clear_all
measure "no firewall"
ruleset 1 | ip netns exec "$SRV" iptables-legacy-restore
measure "iptables-legacy (conntrack)"
clear_all
ruleset 1 | BPF_IPTABLES_INGRESS=xdp nsx "$SRV" "$BIN/bpf-iptables-restore"
measure "bpf-iptables xdp (conntrack)"
clear_all
ruleset 1 | BPF_IPTABLES_INGRESS=tc nsx "$SRV" "$BIN/bpf-iptables-restore"
measure "bpf-iptables tc (conntrack)"
clear_all
ruleset 0 | BPF_IPTABLES_INGRESS=xdp nsx "$SRV" "$BIN/bpf-iptables-restore"
measure "bpf-iptables xdp (stateless)"
clear_all

base_c=${CONN["no firewall"]} base_u=${UDP["no firewall"]}
printf '\n| configuration | TCP conn/s | vs none | UDP pkt/s (established) | vs none |\n'
printf '|---|---:|---:|---:|---:|\n'
for k in "no firewall" "iptables-legacy (conntrack)" "bpf-iptables xdp (conntrack)" \
	 "bpf-iptables tc (conntrack)" "bpf-iptables xdp (stateless)"; do
	awk -v k="$k" -v c="${CONN[$k]}" -v u="${UDP[$k]}" -v bc="$base_c" -v bu="$base_u" \
		'BEGIN { printf "| %s | %d | %.2f | %d | %.2f |\n", k, c, c / (bc + 1e-9), u, u / (bu + 1e-9) }'
done
printf '\nmachine: %s, %s CPUs, kernel %s; command: bench/conntrack.sh %s %s %s\n' \
	"$(uname -m)" "$(nproc)" "$(uname -r)" "$1" "$SECS" "$NOISE"
