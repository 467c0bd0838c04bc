#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bpf-conntrack end to end.
#
#   settings  with BPF_IPTABLES_DATAPLANE=off and a state dir of its own: -T
#             prints the defaults, stores name=value (conntrack.conf), refuses an
#             unknown name or a bad value with exit 2 naming the token and
#             changing nothing (not even the good tokens beside it), reports a
#             corrupt file; without a data plane -L/-C/-F/-D/--sweep see an empty
#             table; every bad parameter exits 2 naming its token;
#   twins     the same traffic (ping, a TCP connection, a UDP exchange, an
#             unanswered UDP flow, an unknown protocol) from a namespace whose
#             table is the kernel's (iptables-legacy, nf_conntrack_acct=1) and
#             from one under bpf-iptables: `conntrack ARGS` and `bpf-conntrack
#             ARGS` print the same thing for -L with every filter, -C, -D and -F
#             (the same lines, counters, flags and messages; timeouts within 2 s;
#             ICMP identifiers and program names aside), and exit alike;
#   running   -T given before the instance exists sizes its table; -T on a running
#             instance writes the timeouts into bpfipt_ct_conf at once and says
#             that max waits for the next instance; an expired entry written into
#             the table is neither listed nor counted, and --sweep deletes it.
#
# Usage: test_ct_cli.sh BUILD_DIR
BIN=$(cd "${1:?usage: test_ct_cli.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
need_root
CT=$BIN/bpf-conntrack
VER="bpf-conntrack v0.1.0"
TRY="Try \`bpf-conntrack -h' or 'bpf-conntrack --help' for more information."
K=bct-k-$SFX KS=bct-ks-$SFX E=bct-e-$SFX ES=bct-es-$SFX

cleanup() {
	for ns in "$K" "$KS" "$E" "$ES"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf "$STATE_ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run CMD...: $OUT, $ERR and $RC of the command
run() {
	OUT=$("$@" 2>"$STATE_ROOT/stderr")
	RC=$?
	ERR=$(cat "$STATE_ROOT/stderr")
}

# ---------------------------------------------------------------- settings
OFF=$STATE_ROOT/off
mkdir -p "$OFF"
off() { BPF_IPTABLES_STATE_DIR=$OFF BPF_IPTABLES_DATAPLANE=off "$CT" "$@"; }

DEFAULTS='max 65536
tcp_timeout_unacknowledged 300
tcp_timeout_syn_sent 120
tcp_timeout_syn_recv 60
tcp_timeout_established 432000
tcp_timeout_fin_wait 120
tcp_timeout_close_wait 60
tcp_timeout_last_ack 30
tcp_timeout_time_wait 120
tcp_timeout_close 10
tcp_timeout_syn_sent2 120
udp_timeout 30
udp_timeout_stream 120
icmp_timeout 30
generic_timeout 600
gre_timeout 30
gre_timeout_stream 180
icmpv6_timeout 30'

run off -T
check_eq "-T prints the defaults" "$DEFAULTS" "$OUT"
check_eq "-T: exit 0" 0 "$RC"
check_not "-T alone writes no file" test -e "$OFF/conntrack.conf"

run off -T udp_timeout=5 max=1000
check_eq "-T udp_timeout=5 max=1000: exit 0" 0 "$RC"
check_eq "-T name=value prints nothing" "" "$OUT$ERR"
run off -T
check_eq "-T shows what was stored" \
	"$(echo "$DEFAULTS" | sed 's/^udp_timeout 30$/udp_timeout 5/; s/^max 65536$/max 1000/')" "$OUT"
check "conntrack.conf holds udp_timeout 5" grep -qx 'udp_timeout 5' "$OFF/conntrack.conf"
check "conntrack.conf is 0600" test "$(stat -c %a "$OFF/conntrack.conf")" = 600
cp "$OFF/conntrack.conf" "$STATE_ROOT/conf.before"

# bad_setting ARGS TOKEN: exit 2, the message names TOKEN, nothing changed
bad_setting() {
	local args=$1 tok=$2
	run off $args
	check_eq "-T $args: exit 2" 2 "$RC"
	check "-T $args: the message names $tok" grep -qF -- "$tok" <<<"$ERR"
	check "-T $args: conntrack.conf unchanged" cmp -s "$OFF/conntrack.conf" "$STATE_ROOT/conf.before"
}
bad_setting "-T bogus=1" "\`bogus'"
bad_setting "-T udp_timeout=abc" "\`abc'"
bad_setting "-T udp_timeout=7 bogus=1" "\`bogus'"
bad_setting "-T max=2000 udp_timeout=abc" "\`abc'"
bad_setting "-T udp_timeout=0" "\`0'"
bad_setting "-T udp_timeout=4294967296" "\`4294967296'"
bad_setting "-T max=0" "\`0'"
bad_setting "-T max=16777217" "\`16777217'"
bad_setting "-T udp_timeout" "\`udp_timeout'"
bad_setting "-T udp_timeout=5 -p tcp" "\`-p'"
run off -T bogus=1
check_eq "-T bogus=1: conntrack's message form" \
	"$VER: unknown setting \`bogus' (bpf-conntrack -T lists them)
$TRY" "$ERR"

echo "garbage here" >>"$OFF/conntrack.conf"
run off -T
check_eq "a corrupt conntrack.conf: exit 1" 1 "$RC"
check "a corrupt conntrack.conf: named with its line" \
	grep -qF "$OFF/conntrack.conf line 20: bad setting" <<<"$ERR"
cp "$STATE_ROOT/conf.before" "$OFF/conntrack.conf"

# no data plane: an empty table
run off -L
check_eq "-L without a data plane" "|0|$VER: 0 flow entries have been shown." "$OUT|$RC|$ERR"
run off -L -p tcp --dport 22
check_eq "-L -p tcp --dport 22 without a data plane" "|0|$VER: 0 flow entries have been shown." \
	"$OUT|$RC|$ERR"
run off -C
check_eq "-C without a data plane" "0|0|" "$OUT|$RC|$ERR"
run off -F
check_eq "-F without a data plane" "|0|$VER: connection tracking table has been emptied." \
	"$OUT|$RC|$ERR"
run off -D -p udp
check_eq "-D without a data plane: conntrack's exit 1 for nothing deleted" \
	"|1|$VER: 0 flow entries have been deleted." "$OUT|$RC|$ERR"
run off --sweep
check_eq "--sweep without a data plane" "|0|$VER: 0 expired entries have been deleted." \
	"$OUT|$RC|$ERR"

# bad parameters: exit 2, "bpf-conntrack v0.1.0: ... TOKEN ...", then the Try line
bad_param() {
	local tok=$1; shift
	run off "$@"
	check_eq "$*: exit 2" 2 "$RC"
	check "$*: names $tok" grep -qF -- "\`$tok'" <<<"$(head -1 <<<"$ERR")"
	check "$*: conntrack's form" test "$(head -c ${#VER} <<<"$ERR")" = "$VER"
	check_eq "$*: the Try line" "$TRY" "$(tail -1 <<<"$ERR")"
}
bad_param -p -C -p tcp
bad_param -s -F -s 10.0.0.1
bad_param --src -T --src 10.0.0.1
bad_param 1.2.3.x -L -s 1.2.3.x
bad_param 10.0.0.0/33 -D -d 10.0.0.0/33
bad_param bogus -L -p bogus
bad_param 300 -L -p 300
bad_param BOGUS -L -p tcp --state BOGUS
bad_param --state -L --state ESTABLISHED
bad_param --state -L -p udp --state ESTABLISHED
bad_param --dport -L -p icmp --dport 1
bad_param --sport -D --sport 1
bad_param 65536 -L -p tcp --dport 65536
bad_param abc -L -p tcp --reply-port-src abc
bad_param --sport -L -p tcp --sport
bad_param -X -L -X
bad_param --bogus -L --bogus
bad_param -C -L -C
bad_param expect -L expect
bad_param extra --sweep extra
bad_param ::1/129 -L -s ::1/129
bad_param fe80::zz -L -d fe80::zz
bad_param ::1 -L -f ipv4 -s ::1
bad_param 10.0.0.1 -L -s ::1 -d 10.0.0.1
bad_param ipv6 -D -s 10.0.0.1 -f ipv6
bad_param inet6 -L -f inet6
bad_param -f -C -f ipv6

run off -V
check_eq "-V" "$VER" "$OUT"
run off -h
check "-h prints the usage" grep -q '^Usage: bpf-conntrack' <<<"$OUT"
check "-h: max waits for the next instance" grep -q 'max when the data plane is' <<<"$OUT"
ln -s "$CT" "$STATE_ROOT/conntrack"
check_eq "any name with 'conntrack' in it is bpf-conntrack" "$VER" "$("$STATE_ROOT/conntrack" -V)"

# ------------------------------------------------------------------- twins
# K: the kernel's table; E: bpf-iptables'. Each talks to a server of its own.
for pair in "$K $KS" "$E $ES"; do
	set -- $pair
	ip netns add "$1"
	ip netns add "$2"
	ip link add c-$SFX netns "$1" type veth peer name s-$SFX netns "$2"
	ip -n "$1" addr add 10.1.0.2/24 dev c-$SFX
	ip -n "$2" addr add 10.1.0.3/24 dev s-$SFX
	for ns in "$1" "$2"; do ip -n "$ns" link set lo up; done
	ip -n "$1" link set c-$SFX up
	ip -n "$2" link set s-$SFX up
	# a request, an answer, and the connection stays open (idle, ESTABLISHED:
	# a teardown's packet count depends on timing)
	ip netns exec "$2" python3 -c '
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 22)); s.listen(8); keep=[]
while True:
    c,_=s.accept(); c.recv(10); c.sendall(b"x"*100); keep.append(c)' &
	ip netns exec "$2" python3 -c '
import socket
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 53))
while True:
    d,a=s.recvfrom(100); s.sendto(d*2, a)' &
done
sleep 0.5
ct_e() { nsx "$E" "$CT" "$@"; }

run ct_e -L
check_eq "no instance yet: -L shows nothing" "|0|$VER: 0 flow entries have been shown." "$OUT|$RC|$ERR"
# the table size and a timeout for the instance to come (the kernel twin: sysctl)
check "-T max=4096 icmp_timeout=20 before the instance" ct_e -T max=4096 icmp_timeout=20
ip netns exec "$K" sysctl -qw net.netfilter.nf_conntrack_icmp_timeout=20
ip netns exec "$K" sysctl -qw net.netfilter.nf_conntrack_acct=1
# the instance's map ids, from the program attached to lo; the table's from its
# slot (empty until a ruleset tracks connections)
map_id() { prog_maps "$E" lo egress | awk -v n="$1" '$1 == n { print $2 }'; }
table_id() {
	bpftool -j map lookup id "${1:-$CT_SLOT}" key 0 0 0 0 2>/dev/null | python3 -c '
import json, sys
print(int.from_bytes(bytes(int(b, 16) for b in json.load(sys.stdin)["value"]), "little"))'
}
# a ruleset that tracks nothing makes no table (10 MB of a namespace's kernel memory)
bpt "$E" -A INPUT -p tcp --dport 9 -j ACCEPT
CT_SLOT=$(map_id bpfipt_ct_slot)
check "the instance has bpfipt_ct_slot" test -n "$CT_SLOT"
check_eq "a stateless ruleset makes no connection table" "" "$(table_id)"
run ct_e -L
check_eq "no table: -L shows nothing" "|0|$VER: 0 flow entries have been shown." "$OUT|$RC|$ERR"
run ct_e -F
check_eq "no table: -F empties nothing" "0|$VER: connection tracking table has been emptied." \
	"$RC|$ERR"
bpt "$E" -D INPUT -p tcp --dport 9 -j ACCEPT
for rule in "OUTPUT -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT" \
	    "INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"; do
	ip netns exec "$K" iptables-legacy -A $rule
	bpt "$E" -A $rule
done

CT_MAP=$(table_id)
CONF_MAP=$(map_id bpfipt_ct_conf)
check "the first ruleset that tracks makes bpfipt_ct; bpfipt_ct_conf" \
	test -n "$CT_MAP" -a -n "$CONF_MAP"
check_eq "the table is bpfipt_ct" bpfipt_ct "$(bpftool -j map show id "$CT_MAP" | jq -r .name)"
check_eq "its keys are IPv4's 16 bytes" 16 "$(bpftool -j map show id "$CT_MAP" | jq .bytes_key)"
CT6_SLOT=$(map_id bpfipt_ct6_slot)
check "the instance has bpfipt_ct6_slot" test -n "$CT6_SLOT"
check_eq "an IPv4 ruleset makes no IPv6 table" "" "$(table_id "$CT6_SLOT")"
check_eq "-T max=4096 sized the new instance's table" 4096 \
	"$(bpftool -j map show id "$CT_MAP" | jq .max_entries)"
# timeout_ns[BPFIPT_CTT_ICMP] (enum bpfipt_ct_timeout: 10 TCP states, udp, udp_stream, icmp)
conf_ns() { bpftool -j map lookup id "$CONF_MAP" key 0 0 0 0 | jq ".formatted.value.timeout_ns[$1]"; }
check_eq "-T icmp_timeout=20 is the new instance's" 20000000000 "$(conf_ns 12)"

for ns in "$K" "$E"; do
	ip netns exec "$ns" ping -c2 -i0.2 -q 10.1.0.3 >/dev/null
	ip netns exec "$ns" python3 -c '
import socket, time
s=socket.socket(); s.bind(("10.1.0.2", 40000)); s.connect(("10.1.0.3", 22)); s.sendall(b"q"*10)
n=0
while n < 100: n+=len(s.recv(100))
print("ok", flush=True); time.sleep(600)' >"$STATE_ROOT/tcp.$ns" &
	for i in $(seq 50); do [ -s "$STATE_ROOT/tcp.$ns" ] && break; sleep 0.1; done
	ip netns exec "$ns" python3 -c '
import socket
u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("10.1.0.2", 40001)); u.settimeout(1)
u.sendto(b"q"*20, ("10.1.0.3", 53)); u.recv(100)
v=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.bind(("10.1.0.2", 40002))
v.sendto(b"q"*20, ("10.1.0.3", 5353))
r=socket.socket(socket.AF_INET, socket.SOCK_RAW, 200); r.sendto(b"abcd", ("10.1.0.3", 0))'
done
sleep 0.5

cat >"$STATE_ROOT/same.py" <<'EOF'
# same.py KERNEL OURS: the same lines (ICMP ids aside, any order), timeouts within 2 s
import re, sys
def lines(path):
    out = []
    for l in open(path).read().splitlines():
        l = re.sub(r"id=\d+", "id=I", l)
        m = re.match(r"^(\S+ +\d+ )(\d+)( .*)$", l)
        out.append((m.group(1) + "T" + m.group(3), int(m.group(2))) if m else (l, 0))
    return sorted(out)
k, o = lines(sys.argv[1]), lines(sys.argv[2])
if [a for a, _ in k] != [a for a, _ in o] or any(abs(a - b) > 2 for (_, a), (_, b) in zip(k, o)):
    sys.exit("kernel:\n%s\nbpf-conntrack:\n%s" % (open(sys.argv[1]).read(), open(sys.argv[2]).read()))
EOF
# twin ARGS...: conntrack and bpf-conntrack agree (stdout, stderr, exit code)
twin() {
	ip netns exec "$K" conntrack "$@" >"$STATE_ROOT/k.out" 2>"$STATE_ROOT/k.err"
	local krc=$?
	ct_e "$@" >"$STATE_ROOT/e.out" 2>"$STATE_ROOT/e.err"
	local erc=$?
	check_eq "$*: exit code as conntrack's" "$krc" "$erc"
	check "$*: the lines conntrack shows" \
		python3 "$STATE_ROOT/same.py" "$STATE_ROOT/k.out" "$STATE_ROOT/e.out"
	check_eq "$*: the message conntrack prints" \
		"$(sed 's/^conntrack v1\.4\.7 (conntrack-tools)/'"$VER"'/' "$STATE_ROOT/k.err")" \
		"$(cat "$STATE_ROOT/e.err")"
}
twin -L
check_eq "-L: five connections" 5 "$(wc -l <"$STATE_ROOT/e.out")"
twin -L -f ipv4
twin -L -f ipv6
twin -L -f ipv6 -s ::1
twin -L -s 2001:db8::/32
twin -D -f ipv6
twin -C
for args in "-p tcp" "-p udp" "-p icmp" "-p 200" "-p 17 --dport 53" \
	    "-p udp --orig-port-src 40002" "-p udp --reply-port-src 5353" \
	    "-p udp --reply-port-dst 40001" "-p tcp --sport 40000 --dport 22" \
	    "-s 10.1.0.2" "-d 10.1.0.3" "-s 10.1.0.0/16" "-d 10.1.0.2" "-r 10.1.0.3" \
	    "-q 10.1.0.3" "-q 10.1.0.2 -r 10.1.0.3 -p udp" "-p tcp --state TIME_WAIT" \
	    "-p tcp --state ESTABLISHED" "-p tcp --state SYN_SENT" "-s 10.9.9.9"; do
	twin -L $args
done
twin -D -p udp --dport 5353
twin -D -p udp --dport 5353
twin -C

# ----------------------------------------------------------------- running
run ct_e -T icmp_timeout=7
check_eq "-T icmp_timeout=7 on a running instance: exit 0" 0 "$RC"
check_eq "-T icmp_timeout=7 is in bpfipt_ct_conf at once" 7000000000 "$(conf_ns 12)"
check_eq "-T: the other timeouts are the stored ones" 30000000000 "$(conf_ns 10)"
run ct_e -T max=2048
check_eq "-T max=2048 on a running instance: exit 0" 0 "$RC"
check "-T max=2048: the running table keeps 4096 until the next instance" \
	grep -qF "the running IPv4 table keeps its 4096 entries" <<<"$ERR"
check_eq "-T max=2048: stored" "max 2048" "$(ct_e -T | head -1)"

# an expired entry (udp 10.1.0.2:1000 -> 10.1.0.3:2000, deadline 1 s ago)
hex() { python3 -c 'import sys; print(" ".join("%02x" % b for b in bytes.fromhex(sys.argv[1])))' "$1"; }
# key (IPv4: the head of struct bpfipt_ct_key): addr 10.1.0.2 10.1.0.3, ports
# 1000 2000, proto 17, type 0, family 4, pad
key=$(hex "0a010002 0a010003 03e8 07d0 11 00 04 00")
val=$(python3 -c '
import struct, time
now = time.monotonic_ns()
v = struct.pack("<QQQQQQBBBBI", now - 10**9, now - 5 * 10**9, 1, 0, 28, 0, 0, 0, 8, 0, 0)
print(" ".join("%02x" % b for b in v))')
check "an expired entry written into bpfipt_ct" \
	bpftool map update id "$CT_MAP" key hex $key value hex $val
in_map() { bpftool map lookup id "$CT_MAP" key hex $key >/dev/null 2>&1; }
check "the expired entry is in the map" in_map
run ct_e -C
check_eq "-C leaves the expired entry out" 4 "$OUT"
run ct_e -L -p udp --sport 1000
check_eq "-L leaves the expired entry out" "|$VER: 0 flow entries have been shown." "$OUT|$ERR"
run ct_e --sweep
check_eq "--sweep deletes it" "0|$VER: 1 expired entries have been deleted." "$RC|$ERR"
check_not "--sweep: gone from the map" in_map
run ct_e --sweep
check_eq "--sweep again: nothing" "$VER: 0 expired entries have been deleted." "$ERR"

twin -F
twin -L
twin -C
finish
