#!/usr/bin/env bash
# bpf-iptables --watch: interfaces created later are filtered within a second.
#
# The server's ruleset drops UDP port 5000 everywhere and port 6000 on eth9, a
# link that does not exist yet. With the watcher running, a new veth pair
# (cli eth9 10.9.0.1 <-> srv eth9 10.9.0.2) is created while the client sends a
# datagram to ports 5000, 6000 and 7000 (not filtered) every 5 ms, each carrying
# its send time (CLOCK_MONOTONIC is the same in every namespace). Checks: the
# programs are attached within 1 s of the link's creation; no datagram to 5000
# or 6000 sent more than 1 s after the creation arrives, while port 7000 keeps
# arriving (the link works); the rule's counters saw the drops. Then a link
# renamed to eth9 gets the -i rule; a deleted link costs nothing; an address
# added under traffic is INPUT at once (the chain selector asks the FIB per
# packet, or its memo of the current route generation). -V lists the
# attachments. The watcher logs what it did and exits 0 on SIGTERM.
BIN=$(cd "${1:?usage: test_watch.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
topo_up
WLOG=$(mktemp)
trap 'kill $WPID 2>/dev/null; rm -f "$WLOG"; topo_down' EXIT
MODE=${BPF_IPTABLES_INGRESS:-xdp}

bpt "$SRV" -A INPUT -p udp --dport 5000 -j DROP
bpt "$SRV" -A INPUT -i eth9 -p udp --dport 6000 -j DROP
# (ip netns exec execs the command: $! is the watcher itself)
BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$SRV" ip netns exec "$SRV" "$BIN/bpf-iptables" --watch -v \
	2>"$WLOG" &
WPID=$!
sleep 0.5
check "the watcher runs" kill -0 $WPID

# attached? XDP on the link, or our tc filter at its ingress
attached() {
	if [ "$MODE" = tc ]; then
		ip netns exec "$SRV" tc filter show dev "$1" ingress 2>/dev/null | grep -q bpfipt
	else
		ip -n "$SRV" link show "$1" 2>/dev/null | grep -q "xdp"
	fi
}

# receiver: which datagrams arrived, with their send times
RECV=$(mktemp)
ip netns exec "$SRV" python3 -c '
import select, socket, sys, time
socks = []
for p in (5000, 6000, 7000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", p)); socks.append(s)
end = time.monotonic() + 4.5
out = open(sys.argv[1], "w")
while time.monotonic() < end:
    r, _, _ = select.select(socks, [], [], 0.2)
    for s in r:
        d = s.recv(100)
        out.write("%d %s\n" % (s.getsockname()[1], d.decode()))
out.close()' "$RECV" &
RPID=$!
# sender: every 5 ms to the three ports on the new link's address (errors until it exists)
ip netns exec "$CLI" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + 4
while time.monotonic() < end:
    for p in (5000, 6000, 7000):
        try: s.sendto(b"%.6f" % time.monotonic(), ("10.9.0.2", p))
        except OSError: pass
    time.sleep(0.005)' &
SPID=$!
sleep 0.5
T0=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
ip link add w0-$SFX netns "$CLI" type veth peer name w1-$SFX netns "$SRV"
ip -n "$CLI" link set w0-$SFX name eth9
ip -n "$SRV" link set w1-$SFX name eth9
ip -n "$CLI" addr add 10.9.0.1/24 dev eth9
ip -n "$SRV" addr add 10.9.0.2/24 dev eth9
ip -n "$CLI" link set eth9 up
ip -n "$SRV" link set eth9 up
until attached eth9; do
	python3 -c "import sys,time; sys.exit(time.monotonic() - $T0 < 3)" && break
	sleep 0.01
done
T1=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
DELAY=$(python3 -c "print('%.0f' % (($T1 - $T0) * 1000))")
echo "programs attached to the new link ${DELAY} ms after its creation ($MODE)"
check "attached to eth9 within 1 s (${DELAY} ms)" test "$DELAY" -lt 1000
wait $SPID
wait $RPID
late() {	# datagrams to port $1 sent more than 1 s after the link appeared
	awk -v p="$1" -v t="$T0" '$1 == p && $2 > t + 1.0' "$RECV" | wc -l
}
early() {	# ... sent after it appeared
	awk -v p="$1" -v t="$T0" '$1 == p && $2 > t' "$RECV" | wc -l
}
echo "port 7000 (allowed): $(early 7000) arrived, $(late 7000) of them sent after T0 + 1 s"
echo "port 5000/6000 (dropped): $(late 5000)/$(late 6000) arrived sent after T0 + 1 s"
check "the new link carries traffic (port 7000)" test "$(late 7000)" -gt 50
check_eq "port 5000 dropped on the new link after 1 s" 0 "$(late 5000)"
check_eq "port 6000 (-i eth9) dropped on the new link after 1 s" 0 "$(late 6000)"
rm -f "$RECV"
# the counters saw the drops
c5=$(bpt "$SRV" -L INPUT -v -x -n | awk '$NF == "dpt:5000" && $3 == "DROP" { print $1 }')
c6=$(bpt "$SRV" -L INPUT -v -x -n | awk '$NF == "dpt:6000" && $3 == "DROP" { print $1 }')
check "the port 5000 rule counted drops ($c5)" test "${c5:-0}" -gt 50
check "the -i eth9 rule counted drops ($c6)" test "${c6:-0}" -gt 50

# a link renamed to eth9 later: the -i rule follows the name
ip -n "$SRV" link del eth9
ip link add x0-$SFX netns "$CLI" type veth peer name x1-$SFX netns "$SRV"
ip -n "$CLI" link set x0-$SFX name eth9
ip -n "$CLI" addr add 10.9.0.1/24 dev eth9
ip -n "$SRV" addr add 10.9.0.2/24 dev x1-$SFX
ip -n "$CLI" link set eth9 up
ip -n "$SRV" link set x1-$SFX up
sleep 1
check "port 6000 passes on a link named otherwise" \
	test "$(udp_count "$CLI" "$SRV" 10.9.0.2 6000 20)" = 20
ip -n "$SRV" link set x1-$SFX down
ip -n "$SRV" link set x1-$SFX name eth9
ip -n "$SRV" link set eth9 up
sleep 1
check_eq "port 6000 dropped once the link is renamed eth9" 0 \
	"$(udp_count "$CLI" "$SRV" 10.9.0.2 6000 20)"
check "port 7000 still passes on it" test "$(udp_count "$CLI" "$SRV" 10.9.0.2 7000 20)" = 20

# -V tells what is attached where
V=$(bpt "$SRV" -V)
check "-V: version line first" test "$(echo "$V" | head -1)" = "bpf-iptables v0.1.0 (bpf)"
check "-V: kernel features probed" grep -q "ring buffer (LOG): yes" <<<"$V"
check "-V: may_goto as the kernel has it (Linux >= 6.9)" grep -q "may_goto (Linux 6.9; .*): $(
	IFS=. read -r ma mi _ <<<"$(uname -r)"; [ "$ma" -gt 6 ] || { [ "$ma" -eq 6 ] && [ "$mi" -ge 9 ]; } &&
	echo yes || echo no)" <<<"$V"
check "-V: data plane running" grep -q "this namespace: data plane running" <<<"$V"
if [ "$MODE" = tc ]; then
	check "-V: eth9 at tc" grep -Eq "^  eth9 +ethernet: tc ingress\+egress; parts: [a-z, ]+$" <<<"$V"
else
	check "-V: eth9 at tc and XDP native" \
		grep -Eq "^  eth9 +ethernet: tc ingress\+egress, XDP native; parts: [a-z, ]+$" <<<"$V"
fi

# an address added under traffic: INPUT from the next packet
ip -n "$SRV" addr add 10.2.0.200/24 dev eth0
check_eq "port 5000 to a new address: dropped" 0 "$(udp_count "$CLI" "$SRV" 10.2.0.200 5000 20)"
check "port 7000 to the new address: delivered" \
	test "$(udp_count "$CLI" "$SRV" 10.2.0.200 7000 20)" = 20
ip -n "$SRV" addr del 10.2.0.200/24 dev eth0

# -m addrtype reads a copy of the local routing table: the watcher keeps it
# current (without it, an address added after the ruleset would stay UNICAST
# and the datagrams to it would pass)
bpt "$SRV" -I INPUT -p udp --dport 7000 -m addrtype --dst-type LOCAL -d 10.2.0.0/24 -j DROP
check_eq "addrtype LOCAL: port 7000 to the server's address dropped" 0 \
	"$(udp_count "$CLI" "$SRV" $SRV_IP 7000 10)"
ip -n "$SRV" addr add 10.2.0.201/32 dev eth0
sleep 1.2
check_eq "addrtype LOCAL: an address added later is local too" 0 \
	"$(udp_count "$CLI" "$SRV" 10.2.0.201 7000 10)"
check "the watcher updated the address types" grep -q "local addresses changed" "$WLOG"
ip -n "$SRV" addr del 10.2.0.201/32 dev eth0
bpt "$SRV" -D INPUT 1

check "the watcher is still running" kill -0 $WPID
kill -TERM $WPID
wait $WPID
check_eq "the watcher exits 0 on SIGTERM" 0 $?
check "the watcher said what it did" grep -q "link eth9: ruleset re-applied" "$WLOG"
check_not "the watcher reported no error" grep -q "cannot" "$WLOG"
sed 's/^/  watcher: /' "$WLOG"
finish
