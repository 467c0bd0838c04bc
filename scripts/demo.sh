#!/usr/bin/env bash
# The main job: a ruleset typed as iptables commands into a fresh network
# namespace, listed back the way iptables lists it, saved and restored.
set -euo pipefail
cd "$(dirname "$0")/.."
B=build
NS=bipt-demo-$$
cleanup() { ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$NS"
run() { echo "# $*"; ip netns exec "$NS" "$B/$@"; }

run bpf-iptables -P INPUT DROP
run bpf-iptables -A INPUT -i lo -j ACCEPT
run bpf-iptables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
run bpf-iptables -N ssh-in
run bpf-iptables -A INPUT -p tcp --dport 22 -j ssh-in
run bpf-iptables -A ssh-in -s 10.0.0.0/8,192.168.0.0/16 -j ACCEPT
run bpf-iptables -A ssh-in -m limit --limit 3/min -j LOG --log-prefix "ssh denied: "
run bpf-iptables -A INPUT -p icmp --icmp-type echo-request -j ACCEPT
run bpf-iptables -A INPUT -j REJECT
run bpf-iptables -L -n -v --line-numbers
run bpf-iptables-save
echo "# a bad rule is refused and changes nothing:"
ip netns exec "$NS" "$B/bpf-iptables" -A INPUT -p tcp --dport 99999 -j ACCEPT || true
run bpf-iptables -S INPUT
