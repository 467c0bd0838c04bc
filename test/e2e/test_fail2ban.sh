#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end, fail2ban: Debian's fail2ban, with its stock iptables-multiport and
# iptables-allports actions (read from /etc/fail2ban/action.d, not retyped here)
# and the iptables command of those actions set to `bpf-iptables -w`, bans and
# unbans a client of the server on real TCP traffic.
#
# fail2ban-server runs in the server namespace with a config dir of its own
# (socket, pid file, log, in-memory database); its two jails read log files
# this test appends "Failed login from ADDR" lines to:
#   multiport: banaction iptables-multiport, ports 7777,7000
#   allports:  banaction iptables-allports
# The client namespace has two addresses, A (banned) and B (never banned, two
# failures stay under maxretry). The server listens on 7777 (in the port list)
# and 8888 (not in it). Checked: both clients connect before any ban; when
# fail2ban says A is banned, bpf-iptables -S shows the stock chain and rule, A
# is refused (the stock blocktype: REJECT, port unreachable) where the action
# covers and still connects elsewhere, B always connects; unbanip restores A;
# stopping fail2ban (with a ban in place) removes its chains and rules. fail2ban
# must log no failed command.
#
# --oracle runs the same scenario with iptables-legacy as the actions' command,
# which proves the harness against the kernel's own iptables.
# BPF_IPTABLES_INGRESS=tc selects tc ingress instead of XDP, as for the others.
# Usage: test_fail2ban.sh BUILD_DIR [--oracle]
BIN=$(cd "${1:?usage: test_fail2ban.sh BUILD_DIR [--oracle]}" && pwd)
IPT=bpf-iptables
[ "${2:-}" = --oracle ] && IPT=iptables-legacy

die() { echo "FAIL: $*" >&2; exit 1; }

for c in fail2ban-server fail2ban-client; do
	command -v $c >/dev/null || die "$c not found: install Debian's fail2ban (scripts/setup.sh)"
done
[ -f /etc/fail2ban/action.d/iptables-multiport.conf ] &&
	[ -f /etc/fail2ban/action.d/iptables-allports.conf ] ||
	die "fail2ban's stock iptables actions are not in /etc/fail2ban/action.d"
[ -x "$BIN/bpf-iptables" ] || die "$BIN/bpf-iptables not found: build first"
command -v iptables-legacy >/dev/null || die "iptables-legacy not found"
export PATH="$BIN:$PATH"
. "$(dirname "$0")/lib.sh"

A_IP=$CLI_IP B_IP=10.1.0.3
WORK=$(mktemp -d /tmp/bipt-f2b.XXXXXX)
CONF=$WORK/conf SOCK=$WORK/f2b.sock PIDF=$WORK/f2b.pid F2B_LOG=$WORK/fail2ban.log

f2b_kill() {	# stop our fail2ban-server, whatever state it is in
	local pid i
	pid=$(cat "$PIDF" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
}
cleanup() {
	f2b_kill
	topo_down
	rm -rf "$WORK"
}
trap cleanup EXIT
topo_up			# sets its own trap: ours again, which calls it
trap cleanup EXIT
ip -n "$CLI" addr add $B_IP/24 dev eth0

# ipt ARGS...: the actions' command, in the server namespace
ipt() { nsx "$SRV" "$IPT" "$@"; }
f2b() { nsx "$SRV" fail2ban-client -c "$CONF" -s "$SOCK" "$@"; }

# conn SRC PORT: what a client at SRC sees connecting to the server's PORT
conn() {
	ip netns exec "$CLI" python3 -c '
import errno, socket, sys
try:
    s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=1.5,
                                 source_address=(sys.argv[1], 0))
    print("ok" if s.recv(2) == b"hi" else "bad greeting")
except socket.timeout:
    print("timeout")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))' "$1" $SRV_IP "$2"
}

# until SECONDS CMD...: poll CMD every 0.2 s until it succeeds
until_ok() {
	local n=$(($1 * 5)); shift
	while ! "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.2
	done
}

banned() { f2b status "$1" | sed -n 's/.*Banned IP list:[[:space:]]*//p' | xargs; }
is_banned() { [ "$(banned "$1")" = "$2" ]; }
rules() { ipt -S; }
has_rule() { ipt -S | grep -qxF -- "$1"; }
lacks_rule() { ! has_rule "$1"; }
fail() {	# fail JAIL ADDR N: N failed logins of ADDR in the jail's log
	local i
	for i in $(seq "$3"); do echo "Failed login from $2" >> "$WORK/$1.log"; done
}
# fail2ban executed this command (logged at TRACEDEBUG, one command a line; the
# configuration lines it also logs keep the <iptables> tag)
ran() { grep -qF -- "$1" "$F2B_LOG"; }
rejects() {	# the REJECT rule of CHAIN counted N packets
	[ "$(ipt -L "$1" -v -x -n | awk '$3 == "REJECT" { print $1 }')" = "$2" ]
}

# ---- preflight: bpf-iptables loads its data plane here, or the test fails ----
if [ "$IPT" = bpf-iptables ]; then
	bpt "$SRV" -N f2b-preflight && bpt "$SRV" -X f2b-preflight ||
		die "bpf-iptables cannot load its eBPF data plane in $SRV (BPF support?)"
fi

# ---- fail2ban's config dir: the stock actions, our filter and jails ----
mkdir -p "$CONF/filter.d"
ln -s /etc/fail2ban/fail2ban.conf "$CONF/fail2ban.conf"
ln -s /etc/fail2ban/action.d "$CONF/action.d"
cat > "$CONF/fail2ban.local" <<EOF
[Definition]
loglevel = TRACEDEBUG
logtarget = $F2B_LOG
socket = $SOCK
pidfile = $PIDF
dbfile = :memory:
EOF
cat > "$CONF/filter.d/bipt-login.conf" <<'EOF'
[Definition]
failregex = ^Failed login from <HOST>$
datepattern = {NONE}
EOF
cat > "$CONF/jail.local" <<EOF
[DEFAULT]
filter = bipt-login
backend = polling
maxretry = 3
findtime = 600
bantime = 600
protocol = tcp
action = %(banaction)s[port="%(port)s", protocol="%(protocol)s", iptables="$IPT <lockingopt>"]

[multiport]
enabled = true
logpath = $WORK/multiport.log
banaction = iptables-multiport
port = 7777,7000

[allports]
enabled = true
logpath = $WORK/allports.log
banaction = iptables-allports
port = all
EOF
: > "$WORK/multiport.log"
: > "$WORK/allports.log"

POLICIES="-P INPUT ACCEPT
-P FORWARD ACCEPT
-P OUTPUT ACCEPT"
START=$(date +%s)

tcp_listen "$SRV" 7777
tcp_listen "$SRV" 8888
for who in "A $A_IP" "B $B_IP"; do
	set -- $who
	for port in 7777 8888; do
		check_eq "before fail2ban: $1 connects to $port" ok "$(conn "$2" $port)"
	done
done

nsx "$SRV" fail2ban-server -c "$CONF" -s "$SOCK" -p "$PIDF" -x -b >"$WORK/server.out" 2>&1 ||
	{ cat "$WORK/server.out" "$F2B_LOG" 2>/dev/null; die "fail2ban-server did not start"; }
until_ok 20 f2b ping >/dev/null 2>&1 ||
	{ cat "$WORK/server.out" "$F2B_LOG" 2>/dev/null; die "fail2ban-server does not answer"; }
until_ok 10 eval 'f2b status multiport && f2b status allports' >/dev/null 2>&1 ||
	{ f2b status; die "fail2ban did not start both jails"; }
echo "$(fail2ban-server -V) serving jails multiport, allports with $IPT -w"
check_eq "no ban yet: the actions start on demand, nothing in the ruleset" \
	"$POLICIES" "$(rules)"

# ---- iptables-multiport ----
fail multiport $B_IP 2
fail multiport $A_IP 3
check "multiport: fail2ban bans A" until_ok 20 is_banned multiport $A_IP
MP_RULE="-A f2b-multiport -s $A_IP/32 -j REJECT --reject-with icmp-port-unreachable"
check "multiport: the ban rule is in the ruleset" until_ok 10 has_rule "$MP_RULE"
check_eq "multiport: B (2 failures) is not banned" "$A_IP" "$(banned multiport)"
check_eq "multiport: -S shows the stock chain, jump and ban" "$POLICIES
-N f2b-multiport
-A INPUT -p tcp -m multiport --dports 7777,7000 -j f2b-multiport
$MP_RULE
-A f2b-multiport -j RETURN" "$(rules)"
check "multiport: fail2ban ran the stock ban through $IPT -w" \
	ran "$IPT -w -I f2b-multiport 1 -s $A_IP -j REJECT --reject-with icmp-port-unreachable"
check_eq "multiport: A is refused on 7777" ECONNREFUSED "$(conn $A_IP 7777)"
check "multiport: the ban counted A's SYN" rejects f2b-multiport 1
check_eq "multiport: A connects to 8888 (not in the ports)" ok "$(conn $A_IP 8888)"
check_eq "multiport: B connects to 7777" ok "$(conn $B_IP 7777)"
check_eq "multiport: B connects to 8888" ok "$(conn $B_IP 8888)"

f2b set multiport unbanip $A_IP >/dev/null
check "multiport: unbanip removes the ban rule" until_ok 10 lacks_rule "$MP_RULE"
check_eq "multiport: no one banned" "" "$(banned multiport)"
check_eq "multiport: after unban, A connects to 7777" ok "$(conn $A_IP 7777)"
check_eq "multiport: after unban, B connects to 7777" ok "$(conn $B_IP 7777)"

# ---- iptables-allports ----
fail allports $A_IP 3
check "allports: fail2ban bans A" until_ok 20 is_banned allports $A_IP
AP_RULE="-A f2b-allports -s $A_IP/32 -j REJECT --reject-with icmp-port-unreachable"
check "allports: the ban rule is in the ruleset" until_ok 10 has_rule "$AP_RULE"
check_eq "allports: -S shows both jails' chains" "$POLICIES
-N f2b-allports
-N f2b-multiport
-A INPUT -p tcp -j f2b-allports
-A INPUT -p tcp -m multiport --dports 7777,7000 -j f2b-multiport
$AP_RULE
-A f2b-allports -j RETURN
-A f2b-multiport -j RETURN" "$(rules)"
check_eq "allports: A is refused on 7777" ECONNREFUSED "$(conn $A_IP 7777)"
check_eq "allports: A is refused on 8888" ECONNREFUSED "$(conn $A_IP 8888)"
check "allports: the ban counted A's two SYNs" rejects f2b-allports 2
check_eq "allports: B connects to 7777" ok "$(conn $B_IP 7777)"
check_eq "allports: B connects to 8888" ok "$(conn $B_IP 8888)"

f2b set allports unbanip $A_IP >/dev/null
check "allports: unbanip removes the ban rule" until_ok 10 lacks_rule "$AP_RULE"
check_eq "allports: after unban, A connects to 7777" ok "$(conn $A_IP 7777)"
check_eq "allports: after unban, A connects to 8888" ok "$(conn $A_IP 8888)"

# ---- a manual ban, then fail2ban stops with it in place ----
f2b set allports banip $A_IP >/dev/null
check "banip: A banned again" until_ok 10 has_rule "$AP_RULE"
check_eq "banip: A is refused on 8888" ECONNREFUSED "$(conn $A_IP 8888)"
if [ "$IPT" = bpf-iptables ]; then
	check_eq "the kernel's iptables tables stay empty (bpf-iptables filters)" \
		"$POLICIES" "$(ip netns exec "$SRV" iptables-legacy -S)"
	check "no nftables ruleset either" eval \
		'nft=$(ip netns exec "$SRV" nft list ruleset) && [ -z "$nft" ]'
	# XDP, or with BPF_IPTABLES_INGRESS=tc none; the tc program is there in both
	check_eq "XDP program on eth0 iff XDP ingress" \
		"$([ "${BPF_IPTABLES_INGRESS:-xdp}" = tc ] && echo 0 || echo 1)" \
		"$(ip -n "$SRV" link show eth0 | grep -c ' xdp')"
	check "tc ingress program on eth0" eval \
		'ip netns exec "$SRV" tc filter show dev eth0 ingress | grep -q bpfipt_tc_in'
fi
pid=$(cat "$PIDF")
f2b stop >/dev/null
check "fail2ban-server exits on stop" until_ok 10 eval '! kill -0 $pid 2>/dev/null'
check_eq "stop: fail2ban's chains and jumps are gone" "$POLICIES" "$(rules)"
check_eq "stop: A connects to 7777" ok "$(conn $A_IP 7777)"
check_eq "stop: A connects to 8888" ok "$(conn $A_IP 8888)"
check_eq "stop: B connects to 7777" ok "$(conn $B_IP 7777)"
for jail in multiport allports; do
	check "$jail: fail2ban ran actionstop through $IPT -w" ran "$IPT -w -X f2b-$jail"
done
errors=$(grep -c ' ERROR ' "$F2B_LOG")
check_eq "fail2ban logged no failed command" 0 "$errors"
[ "$errors" = 0 ] || grep -A3 ' ERROR ' "$F2B_LOG" | head -40

[ "$IPT" = bpf-iptables ] && IPT="$IPT, ingress ${BPF_IPTABLES_INGRESS:-xdp}"
echo "fail2ban with $IPT: $(($(date +%s) - START)) s"
finish
