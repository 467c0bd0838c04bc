#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end, -j REJECT: the data plane answers a rejected packet as the kernel's
# REJECT target does, so the sender sees the same error. For every
# --reject-with (the default icmp-port-unreachable, the icmp-*-unreachable and
# -prohibited ones, tcp-reset) and TCP connect / UDP send+recv, the error the
# application gets (errno, or a timeout; also the ICMP error's type and code,
# from a socket that reports them all) is compared with iptables-legacy's, the
# same rule being in:
#   INPUT on the server (the client connects to it),
#   FORWARD on the router (the client connects through it),
#   OUTPUT on the server (the server connects to the client).
# Known difference (docs/dataplane.md): a UDP datagram rejected in OUTPUT makes
# iptables' sendto() fail with EPERM at once; here the send succeeds and the
# ICMP error arrives like a remote REJECT's, so the application gets the errno
# iptables-legacy gives for the same rule in INPUT. Also: counters count the
# rejected packets, ping gets "port unreachable", and a rejected packet never
# reaches the server (a listener behind REJECT is not connected to).
# IPv6: the same comparison with bpf-ip6tables and ip6tables-legacy for every
# icmp6 --reject-with and tcp-reset (ICMPv6 destination unreachable codes,
# nf_send_reset6), and ping -6 answered by port unreachable.
# Usage: test_reject.sh BUILD_DIR
BIN=$(cd "${1:?usage: test_reject.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/lib.sh"
topo_up
topo_up6

# probe NS tcp|udp|tcperr|udperr DST PORT: what the application sees; *err: a
# socket with IP_RECVERR, whose every ICMP error is reported at once, with its
# type and code (a default socket waits out its 1.5 s on the soft ones: UDP's
# host and net unreachable, TCP's over IPv6 until the SYN is sent again, a
# second later). The comparisons use *err, a few checks below the default
# socket. One prober per namespace
# (a python process started once, fed through FIFOs: starting python in a
# namespace costs ~0.25 s, and the test asks over 200 times)
PROBE_DIR=$(mktemp -d)
PROBE_PIDS=()
trap 'kill "${PROBE_PIDS[@]}" 2>/dev/null; rm -rf "$PROBE_DIR"; topo_down' EXIT
PROBER='
import errno, socket, struct, sys
rq, rp = open(sys.argv[1]), open(sys.argv[2], "w")
for line in rq:
    proto, dst, port = line.split()
    port = int(port)
    six = ":" in dst
    tcp = proto.startswith("tcp")
    s = socket.socket(socket.AF_INET6 if six else socket.AF_INET,
                      socket.SOCK_STREAM if tcp else socket.SOCK_DGRAM)
    s.settimeout(1.5)
    if proto.endswith("err"):
        # every ICMP error reported at once (linux/in.h IP_RECVERR 11,
        # linux/in6.h IPV6_RECVERR 25: not in the socket module of Python)
        if six:
            s.setsockopt(socket.IPPROTO_IPV6, 25, 1)
        else:
            s.setsockopt(socket.IPPROTO_IP, 11, 1)
    try:
        s.connect((dst, port))
        if tcp:
            r = "connected"
        else:
            s.send(b"x")
            s.recv(16)
            r = "reply"
    except socket.timeout:
        r = "timeout"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
        # the ICMP error itself (struct sock_extended_err): type and code
        if proto.endswith("err"):
            s.setblocking(False)	# (with a timeout, Python would wait it out)
            try:
                _, anc, _, _ = s.recvmsg(16, 512, socket.MSG_ERRQUEUE)
            except OSError:		# none: a local error (EPERM)
                anc = []
            for _, _, d in anc:
                _, origin, typ, code = struct.unpack_from("IBBB", d)
                r += " icmp%s %d/%d" % ("6" if origin == 3 else "", typ, code)
    s.close()
    rp.write(r + "\n")
    rp.flush()'
declare -A PROBE_FD
for ns in "$CLI" "$SRV"; do
	mkfifo "$PROBE_DIR/$ns.rq" "$PROBE_DIR/$ns.rp"
	ip netns exec "$ns" python3 -c "$PROBER" "$PROBE_DIR/$ns.rq" "$PROBE_DIR/$ns.rp" &
	PROBE_PIDS+=($!)
	exec {wfd}>"$PROBE_DIR/$ns.rq" {rfd}<"$PROBE_DIR/$ns.rp"
	PROBE_FD[$ns]="$wfd $rfd"
done
probe() {
	local w r line
	read -r w r <<< "${PROBE_FD[$1]}"
	echo "$2 $3 $4" >&"$w"
	read -r line <&"$r"
	echo "$line"
}

# outcome FW NS CHAIN RULE PROBE_NS PROTO DST PORT: the rule alone in CHAIN of NS
# (iptables-legacy or bpf-iptables; ip6tables-legacy or bpf-ip6tables for an
# IPv6 DST), the probe's result
outcome() {
	local fw=$1 ns=$2 chain=$3 rule=$4 r legacy=iptables-legacy ours=bpt
	shift 4
	case $3 in *:*) legacy=ip6tables-legacy ours=bpt6 ;; esac
	if [ "$fw" = legacy ]; then
		ip netns exec "$ns" $legacy -A "$chain" $rule
	else
		$ours "$ns" -A "$chain" $rule
	fi
	r=$(probe "$@")
	if [ "$fw" = legacy ]; then ip netns exec "$ns" $legacy -F; else $ours "$ns" -F; fi
	echo "$r"
}

# the kernel limits the ICMP errors it sends to one host (1/s after a burst of
# 6); the data plane does not (documented): compare without the limit
for ns in "$SRV" "$RTR"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.icmp_ratelimit=0
	ip netns exec "$ns" sysctl -qw net.ipv6.icmp.ratelimit=0
done
tcp_listen "$SRV" 7777
tcp_listen "$CLI" 7777
tcp_listen6 "$SRV" 7777
tcp_listen6 "$CLI" 7777
WITH=("" icmp-net-unreachable icmp-host-unreachable icmp-proto-unreachable
      icmp-net-prohibited icmp-host-prohibited icmp-admin-prohibited tcp-reset)
for w in "${WITH[@]}"; do
	opt=${w:+--reject-with $w}
	for proto in tcp udp; do
		[ "$w" = tcp-reset ] && [ $proto = udp ] && continue
		rule="-p $proto --dport 7777 -j REJECT $opt"
		pp=${proto}err
		in_legacy=$(outcome legacy "$SRV" INPUT "$rule" "$CLI" $pp $SRV_IP 7777)
		for where in "INPUT $SRV $CLI $SRV_IP" "FORWARD $RTR $CLI $SRV_IP" \
			     "OUTPUT $SRV $SRV $CLI_IP"; do
			set -- $where
			want=$(outcome legacy "$2" "$1" "$rule" "$3" $pp "$4" 7777)
			got=$(outcome bpf "$2" "$1" "$rule" "$3" $pp "$4" 7777)
			if [ "$1" = OUTPUT ] && [ $proto = udp ]; then
				check_eq "iptables-legacy: OUTPUT udp ${w:-default}: sendto EPERM" EPERM "${want%% *}"
				want=$in_legacy
			fi
			check_eq "$1 $proto ${w:-default}: the sender sees what iptables gives" \
				"$want" "$got"
		done
	done
done
# IPv6: the icmp6 types and tcp-reset, in the same three places
WITH6=("" icmp6-no-route icmp6-adm-prohibited icmp6-addr-unreachable icmp6-port-unreachable
       icmp6-policy-fail icmp6-reject-route tcp-reset)
for w in "${WITH6[@]}"; do
	opt=${w:+--reject-with $w}
	for proto in tcp udp; do
		[ "$w" = tcp-reset ] && [ $proto = udp ] && continue
		rule="-p $proto --dport 7777 -j REJECT $opt"
		pp=${proto}err
		in_legacy=$(outcome legacy "$SRV" INPUT "$rule" "$CLI" $pp $SRV_IP6 7777)
		for where in "INPUT $SRV $CLI $SRV_IP6" "FORWARD $RTR $CLI $SRV_IP6" \
			     "OUTPUT $SRV $SRV $CLI_IP6"; do
			set -- $where
			want=$(outcome legacy "$2" "$1" "$rule" "$3" $pp "$4" 7777)
			got=$(outcome bpf "$2" "$1" "$rule" "$3" $pp "$4" 7777)
			if [ "$1" = OUTPUT ] && [ $proto = udp ]; then
				check_eq "ip6tables-legacy: OUTPUT udp ${w:-default}: sendto EPERM" EPERM "${want%% *}"
				want=$in_legacy
			fi
			check_eq "IPv6 $1 $proto ${w:-default}: the sender sees what ip6tables gives" \
				"$want" "$got"
		done
	done
done
check_eq "IPv6 INPUT tcp default: ECONNREFUSED" ECONNREFUSED \
	"$(outcome bpf "$SRV" INPUT "-p tcp --dport 7777 -j REJECT" "$CLI" tcp $SRV_IP6 7777)"
check_eq "IPv6 INPUT udp adm-prohibited: EACCES" EACCES \
	"$(outcome bpf "$SRV" INPUT "-p udp --dport 7777 -j REJECT --reject-with adm-prohibited" \
	   "$CLI" udp $SRV_IP6 7777)"
bpt6 "$SRV" -A INPUT -p ipv6-icmp --icmpv6-type echo-request -j REJECT
check_eq "ping -6 answered by port unreachable" 1 \
	"$(ip netns exec "$CLI" ping -6 -c1 -W1 $SRV_IP6 2>&1 | grep -c 'Port unreachable')"
check_eq "IPv6 icmp REJECT counted 1" 1 \
	"$(bpt6 "$SRV" -L INPUT -v -x -n | awk '$3 == "REJECT" { print $1 }')"
bpt6 "$SRV" -F
check "after -F, tcp 7777 over IPv6 connects to the listener" tcp_ok "$CLI" $SRV_IP6 7777

# the errors are the real ones (not timeouts everywhere)
check_eq "INPUT udp default, a default socket: ECONNREFUSED" ECONNREFUSED \
	"$(outcome bpf "$SRV" INPUT "-p udp --dport 7777 -j REJECT" "$CLI" udp $SRV_IP 7777)"
check_eq "INPUT udp net-unreachable, a default socket: what iptables gives (a soft error)" \
	"$(outcome legacy "$SRV" INPUT "-p udp --dport 7777 -j REJECT --reject-with icmp-net-unreachable" \
	   "$CLI" udp $SRV_IP 7777)" \
	"$(outcome bpf "$SRV" INPUT "-p udp --dport 7777 -j REJECT --reject-with icmp-net-unreachable" \
	   "$CLI" udp $SRV_IP 7777)"
check_eq "INPUT udp host-unreachable: ICMP 3/1 with IP_RECVERR" "EHOSTUNREACH icmp 3/1" \
	"$(outcome bpf "$SRV" INPUT "-p udp --dport 7777 -j REJECT --reject-with icmp-host-unreachable" \
	   "$CLI" udperr $SRV_IP 7777)"
check_eq "INPUT tcp default: ECONNREFUSED" ECONNREFUSED \
	"$(outcome bpf "$SRV" INPUT "-p tcp --dport 7777 -j REJECT" "$CLI" tcp $SRV_IP 7777)"
check_eq "INPUT tcp tcp-reset: ECONNREFUSED" ECONNREFUSED \
	"$(outcome bpf "$SRV" INPUT "-p tcp --dport 7777 -j REJECT --reject-with tcp-reset" \
	   "$CLI" tcp $SRV_IP 7777)"
check_eq "INPUT tcp host-prohibited: EHOSTUNREACH" EHOSTUNREACH \
	"$(outcome bpf "$SRV" INPUT "-p tcp --dport 7777 -j REJECT --reject-with icmp-host-prohibited" \
	   "$CLI" tcp $SRV_IP 7777)"

# counters and ping
bpt "$SRV" -A INPUT -p icmp -j REJECT
bpt "$SRV" -A INPUT -p tcp --dport 7777 -j REJECT --reject-with tcp-reset
check_eq "ping answered by port unreachable" 1 \
	"$(ip netns exec "$CLI" ping -c1 -W1 $SRV_IP 2>&1 | grep -c 'Destination Port Unreachable')"
check_eq "tcp 7777 refused" ECONNREFUSED "$(probe "$CLI" tcp $SRV_IP 7777)"
check_eq "icmp REJECT counted 1" 1 \
	"$(bpt "$SRV" -L INPUT -v -x -n | awk '$3 == "REJECT" && $4 == "1" { print $1 }')"
check_eq "tcp REJECT counted the one SYN (the RST ended the connect)" 1 \
	"$(bpt "$SRV" -L INPUT -v -x -n | awk '$3 == "REJECT" && $4 == "6" { print $1 }')"
bpt "$SRV" -F
check "after -F, tcp 7777 connects to the listener" tcp_ok "$CLI" $SRV_IP 7777
finish
