#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Connection tracking, measured side by side in one run (issue 4):
#  1. TCP connections per second from a client to a server through a stateful
#     INPUT ruleset on the server (policy DROP, ESTABLISHED,RELATED ACCEPT, NEW
#     tcp dport 8080 ACCEPT, plus NOISE non-matching rules before it), for: no
#     firewall, iptables-legacy, bpf-iptables (XDP ingress), bpf-iptables (tc).
#  2. A UDP flood (iperf3, 64-byte datagrams) on an established flow through the
#     same ruleset (datagrams/s received by the server), same configurations,
#     plus bpf-iptables with a stateless ruleset (tracking off) to show what
#     tracking costs, and the floor of any eBPF filter here: a program that only
#     returns "pass", at tc ingress and at XDP.
#  3. What tracking itself costs in the kernel: the UDP flood through a one-rule
#     ruleset that does not (-p tcp --dport 1 -j DROP) and one that does
#     (--ctstate INVALID -j DROP) track, at tc and XDP, twice each: the
#     programs' ns per packet (kernel.bpf_stats_enabled).
# Usage: bench/conntrack.sh BUILD_DIR [SECONDS] [NOISE]     (root)
# Prints a table with ratios to "no firewall" computed within this run.
set -uo pipefail
BIN=$(cd "${1:?usage: bench/conntrack.sh BUILD_DIR [SECONDS] [NOISE]}" && pwd)
SECS=${2:-5}
NOISE=${3:-100}
. "$(dirname "$0")/../test/e2e/lib.sh"
topo_up

# the floor: a program that passes everything (built here, in the state dir)
FLOOR=$STATE_ROOT/floor.bpf.o
printf '%s\n' '#include <linux/bpf.h>' \
	'__attribute__((section("tc"), used)) int pass(struct __sk_buff *s) { return 0; }' \
	'__attribute__((section("xdp"), used)) int xpass(struct xdp_md *x) { return 2; }' \
	'char _l[] __attribute__((section("license"), used)) = "GPL";' |
	clang -O2 -target bpf -idirafter "/usr/include/$(gcc -print-multiarch)" -x c - -c -o "$FLOOR"

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

# UDP flood on one established flow: iperf3 (64-byte datagrams, no rate limit;
# its UDP stream starts with a datagram the server answers, so the flow is
# ESTABLISHED): datagrams/s that reached the server
udp_rate() {
	ip netns exec "$SRV" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	ip netns exec "$CLI" iperf3 -c "$SRV_IP" -p 5201 -u -b 0 -l 64 -t "$SECS" -J 2>/dev/null |
		python3 -c '
import json, sys
try:
    s = json.load(sys.stdin)["end"]["sum"]
    print(int((s["packets"] - s["lost_packets"]) / s["seconds"]))
except Exception:
    print(0)'
	wait $pid 2>/dev/null
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
		echo "-A INPUT -p udp --dport 5201 -j ACCEPT"
	fi
	for i in $(seq 1 "$NOISE"); do
		echo "-A INPUT -s 192.0.$((i / 250)).$((i % 250 + 1)) -p tcp --dport $((i + 10000)) -j ACCEPT"
	done
	if [ "$1" = 1 ]; then
		echo "-A INPUT -p tcp -m multiport --dports 8080,5201 -m conntrack --ctstate NEW -j ACCEPT"
		echo "-A INPUT -p udp --dport 5201 -m conntrack --ctstate NEW -j ACCEPT"
	else
		echo "-A INPUT -p tcp -m multiport --dports 8080,5201 -j ACCEPT"
	fi
	echo "COMMIT"
}

clear_all() {
	nsx "$SRV" "$BIN/bpf-iptables" --unload >/dev/null 2>&1
	ip netns exec "$SRV" iptables-legacy -F
	ip netns exec "$SRV" iptables-legacy -P INPUT ACCEPT
	rm -f "$STATE_ROOT/$SRV/rules"
}

# ns per run of the server's ingress programs (kernel.bpf_stats_enabled):
# what the eBPF filter itself costs a packet, whatever the noise of the rates
prog_ns() {
	ip netns exec "$SRV" bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
n = t = 0
for p in json.load(sys.stdin):
    if p.get("name") in ("bpfipt_xdp", "bpfipt_tc_in", "pass", "xpass"):
        n += p.get("run_cnt", 0); t += p.get("run_time_ns", 0)
print(int(t / n) if n else "-")'
}

declare -A CONN UDP NS
measure() {	# measure NAME
	sysctl -qw kernel.bpf_stats_enabled=1
	CONN[$1]=$(conn_rate)
	UDP[$1]=$(udp_rate)
	NS[$1]=$(prog_ns)
	sysctl -qw kernel.bpf_stats_enabled=0
	printf '  %-32s %8s conn/s %8s pkt/s %6s ns/packet in eBPF\n' "$1" "${CONN[$1]}" \
		"${UDP[$1]}" "${NS[$1]}" >&2
}

echo "bench/conntrack.sh: ${SECS}s per point, $NOISE non-matching rules before the NEW rule" >&2
clear_all
measure "no firewall"
ip netns exec "$SRV" tc qdisc add dev eth0 clsact
ip netns exec "$SRV" tc filter add dev eth0 ingress bpf da obj "$FLOOR" sec tc
measure "floor: tc program passing all"
ip netns exec "$SRV" tc qdisc del dev eth0 clsact
ip netns exec "$SRV" ip link set dev eth0 xdp obj "$FLOOR" sec xdp
measure "floor: XDP program passing all"
ip netns exec "$SRV" ip link set dev eth0 xdp off
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
printf '\n| configuration | TCP conn/s | vs none | UDP pkt/s (established) | vs none | ns/packet in eBPF |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for k in "no firewall" "floor: tc program passing all" "floor: XDP program passing all" \
	 "iptables-legacy (conntrack)" "bpf-iptables xdp (conntrack)" \
	 "bpf-iptables tc (conntrack)" "bpf-iptables xdp (stateless)"; do
	awk -v k="$k" -v c="${CONN[$k]}" -v u="${UDP[$k]}" -v bc="$base_c" -v bu="$base_u" \
		-v ns="${NS[$k]}" 'BEGIN { printf "| %s | %d | %.2f | %d | %.2f | %s |\n", k, c,
			c / (bc + 1e-9), u, u / (bu + 1e-9), ns }'
done
printf '\nmachine: %s, %s CPUs, kernel %s; command: bench/conntrack.sh %s %s %s\n' \
	"$(uname -m)" "$(nproc)" "$(uname -r)" "$1" "$SECS" "$NOISE"

printf '\n| one-rule ruleset | ingress | UDP pkt/s | ns/packet in eBPF |\n|---|---|---:|---:|\n'
for rule in "-p tcp --dport 1 -j DROP" "-m conntrack --ctstate INVALID -j DROP"; do
	for m in tc tc xdp xdp; do
		BPF_IPTABLES_INGRESS=$m nsx "$SRV" "$BIN/bpf-iptables" -A INPUT $rule
		sysctl -qw kernel.bpf_stats_enabled=1
		r=$(udp_rate)
		printf '| `%s` | %s | %s | %s |\n' "$rule" "$m" "$r" "$(prog_ns)"
		sysctl -qw kernel.bpf_stats_enabled=0
		clear_all
	done
done
