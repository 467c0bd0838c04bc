#!/usr/bin/env bash
# The main job: three network namespaces (client - router - server), a firewall
# typed as iptables commands into the server, real traffic from the client, and
# the counters that show what the eBPF data plane did. Leaves nothing behind.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(pwd)/build
. test/e2e/lib.sh
topo_up
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
run() { echo "\$ bpf-iptables $*"; bpt "$SRV" "$@"; }

say "a firewall on the server ($SRV_IP), typed as iptables commands"
run -P INPUT DROP
run -A INPUT -i lo -j ACCEPT
run -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
run -N services
run -A services -p tcp --dport 22 -j ACCEPT
run -A services -p udp --dport 53 -j ACCEPT
run -A INPUT -s 10.1.0.0/24 -j services
run -A INPUT -p icmp --icmp-type echo-request -j ACCEPT
run -A INPUT -m limit --limit 10/s --limit-burst 3 -j LOG --log-prefix "dropped: "

# the LOG reader of the server's namespace, in the background
LOGOUT=$(mktemp)
nsx "$SRV" "$BIN/bpf-iptables" --log-follow --timeout 30 >"$LOGOUT" 2>&1 &
LOGPID=$!
trap 'kill $LOGPID 2>/dev/null; rm -f "$LOGOUT"; topo_down' EXIT

tcp_listen "$SRV" 22
tcp_listen "$SRV" 8080
say "traffic from the client ($CLI_IP)"
tcp_ok "$CLI" $SRV_IP 22 && echo "tcp 22:   connected" || echo "tcp 22:   blocked"
tcp_ok "$CLI" $SRV_IP 8080 && echo "tcp 8080: connected" || echo "tcp 8080: blocked"
echo "udp 53:   $(udp_count "$CLI" "$SRV" $SRV_IP 53 100)/100 datagrams delivered"
echo "udp 5000: $(udp_count "$CLI" "$SRV" $SRV_IP 5000 100)/100 datagrams delivered"
ping_ok "$CLI" $SRV_IP && echo "ping:     answered" || echo "ping:     no answer"
tcp_listen "$CLI" 8000
say "traffic from the server: its replies come back as ESTABLISHED"
tcp_ok "$SRV" $CLI_IP 8000 && echo "tcp to client:8000: connected" || echo "tcp to client:8000: blocked"
ping_ok "$SRV" $CLI_IP && echo "ping client:        answered" || echo "ping client:        no answer"

say "what LOG said about the dropped packets (bpf-iptables --log-follow, 3 then 10/s)"
sleep 0.3
kill $LOGPID 2>/dev/null; wait $LOGPID 2>/dev/null
cut -c1-150 "$LOGOUT" | head -5
say "what the data plane counted"
run -L -n -v --line-numbers
say "the connections it tracks"
echo "\$ bpf-conntrack -L"
nsx "$SRV" "$BIN/bpf-conntrack" -L
say "the same ruleset as iptables-save prints it"
nsx "$SRV" "$BIN/bpf-iptables-save" -c
say "a bad rule is refused and changes nothing"
run -A INPUT -p tcp --dport 99999 -j ACCEPT || true
say "the programs attached to the server's interfaces"
ip netns exec "$SRV" tc filter show dev eth0 ingress | head -3
nsx "$SRV" "$BIN/bpf-iptables" --unload && echo "--unload: programs, maps and qdiscs removed"
