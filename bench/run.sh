#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark suite of issue 7, in one command:
#   bench/run.sh BUILD_DIR [--quick] [--out DIR] [--only "SECTION..."] [--secs S]
# Sections (all by default, in this order):
#   pktcost  ns/packet with bpf_prog_test_run (bench/pktcost.c): 10 .. 1M rules,
#            first/last/no rule, conntrack on/off, XDP and tc, the empty-program
#            floor, a 1M-entry deny list, grouping on and off, mixed and dense
#            rules with tuple groups off (the walk over one slot per rule)
#   veth     UDP flood through veth pairs (bench/flood.c), packets matching only
#            the last rule: packets/s, CPU ns per packet, ping p50/p99, for no
#            firewall, iptables-legacy, iptables-nft, nftables (rules, set),
#            ipset, tc-floor (a tc program that passes every packet, where
#            bpf-iptables attaches: tc's own cost), bpf-iptables tc and XDP;
#            INPUT, FORWARD, OUTPUT (deny list)
#   tcp      a TCP stream (iperf3) from cli to srv through rtr's FORWARD: Gbit/s
#            with no firewall and bpf-iptables at tc, at XDP and by default
#            (auto: tc on veth), 10 and 10k rules; what the ingress hook costs
#            a veth (XDP on it copies every skb and gives up GSO)
#   drop     a flood dropped by the first rule: XDP, tc, nftables netdev
#            ingress, iptables raw PREROUTING, iptables INPUT; sent as AF_PACKET
#            frames (raw) and by the kernel's XDP traffic generator (xdp), or
#            made by the generator as received on rtr's eth0 (inject)
#   update   restore of N rules; -A/-I/-D of one rule into a chain of N; a
#            1M-entry deny list; map memory per rule and per entry; the
#            instructions the verifier processed at the first install
#   report   bench/report.py: summary.md (tables, targets PASS/MISS), PNG plots
# --quick: small counts and 0.5 s floods (about a minute; the bench.smoke test).
# BENCH_VETH_SIZES="10000" and BENCH_VETH_FWS="iptables-legacy bpf-iptables-tc"
# restrict the veth section to those sizes and firewalls (no firewall is always
# measured beside them): a focused re-run of a few points.
# Results: DIR (default BUILD_DIR/bench-results): one CSV per section, each
# starting with the machine, kernel, load and command; summary.md; *.png.
# Topology (test/e2e/lib.sh): cli 10.1.0.2 -- 10.1.0.1 rtr 10.2.0.1 -- 10.2.0.2 srv;
# the firewall under test is always on rtr: INPUT (cli -> rtr), FORWARD (cli ->
# srv through rtr), OUTPUT (rtr -> srv).
set -uo pipefail
usage() { echo "usage: bench/run.sh BUILD_DIR [--quick] [--out DIR] [--only SECTIONS] [--secs S]" >&2
	  exit 2; }
[ $# -ge 1 ] || usage
BIN=$(cd "$1" && pwd) || usage
shift
HERE=$(cd "$(dirname "$0")" && pwd)
QUICK=0 OUT=$BIN/bench-results ONLY="pktcost veth tcp drop update report" SECS=""
CMDLINE="bench/run.sh $*"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--out) OUT=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--secs) SECS=$2; shift ;;
	*) usage ;;
	esac
	shift
done
for t in pktcost flood bpf-iptables; do
	[ -x "$BIN/$t" ] || { echo "bench/run.sh: $BIN/$t missing: build first" >&2; exit 1; }
done
for t in iptables-legacy iptables-nft nft ipset ping gnuplot python3 taskset iperf3; do
	command -v "$t" >/dev/null || { echo "bench/run.sh: $t missing (scripts/setup.sh)" >&2; exit 1; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ $QUICK = 1 ]; then
	SIZES="100" BIG=1000 SECS=${SECS:-0.5} SLOW_SECS=0.5 PINGS=50 REPS=1 UPD_SIZES="100"
	CHAINS=100
	TCP_SIZES="10" TCP_SECS=1
	PK_ARGS=(--repeat 1000 --runs 2 --sizes 10,1000 --deny-sizes 10,1000 --dense-max 10
		 --head-sizes 1000)
	HEAD_SIZES=1000
	NOGROUP_SIZES=100
	SLOT_SIZES=10,1000
	CHAIN_SIZES=10,9000 CHAIN_FLAT=9000
else
	SIZES="10 100 1000 10000 100000" BIG=1000000 SECS=${SECS:-3} SLOW_SECS=2 PINGS=1000 REPS=2
	TCP_SIZES="10 10000" TCP_SECS=3
	UPD_SIZES="1000 10000 100000" CHAINS=10000
	PK_ARGS=(--repeat 50000 --sizes 10,100,1000,2048,10000,100000,1000000
		 --deny-sizes 10,100,1000,10000,100000,1000000 --dense-max 100000
		 --head-sizes 2048,100000)
	HEAD_SIZES=2048,100000
	NOGROUP_SIZES=100,1000,10000,30000
	SLOT_SIZES=10,100,1000,2048,10000,100000
	CHAIN_SIZES=10,100,1000,10000,20000 CHAIN_FLAT=10000
fi

. "$HERE/../test/e2e/lib.sh"
topo_up
WORK=$STATE_ROOT/work
mkdir -p "$WORK"

FAILS=0
log() { echo "bench: $*" >&2; [[ "$*" != *FAILED* ]] || FAILS=$((FAILS + 1)); }
header() {	# header FILE: the provenance lines every result file starts with
	{
		echo "# machine: $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo |
			sed 's/.*: //'), $(($(grep MemTotal /proc/meminfo | awk '{print $2}') / 1024)) MiB"
		echo "# kernel: $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "# command: $CMDLINE   (section $(basename "$1" .csv), $(date -u +%FT%TZ))"
		echo "# bpf-iptables: $(cd "$HERE/.." && git rev-parse --short HEAD 2>/dev/null)"
		# the walk's loops: may_goto where the kernel has it (Linux 6.9), else
		# iterators, a call an iteration (docs/performance.md)
		echo "# may_goto: $("$BIN/bpf-iptables" -V 2>/dev/null | sed -n 's/^  may_goto ([^)]*): //p' |
			cut -d' ' -f1)${BPF_IPTABLES_MAY_GOTO:+ (BPF_IPTABLES_MAY_GOTO=$BPF_IPTABLES_MAY_GOTO)}"
	} > "$1"
}
footer() { echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$1"; }
now() { date +%s%N; }
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", (b - a) / 1e9 }'; }
rules() { python3 "$HERE/rules.py" "$@"; }

# ---------------------------------------------------------------- firewalls
fw_clear() {	# remove every firewall from rtr
	local ns=${1:-$RTR}
	nsx "$ns" "$BIN/bpf-iptables" --unload >/dev/null 2>&1
	rm -rf "${STATE_ROOT:?}/$ns"
	for t in filter raw; do
		ip netns exec "$ns" iptables-legacy -t $t -F 2>/dev/null
	done
	for c in INPUT FORWARD OUTPUT; do ip netns exec "$ns" iptables-legacy -P $c ACCEPT; done
	ip netns exec "$ns" nft flush ruleset 2>/dev/null
	ip netns exec "$ns" ipset destroy 2>/dev/null
	tc_floor_clear "$ns"
	return 0
}

# fw_load NS FW KIND CHAIN N: put the ruleset in place; prints the seconds it took
fw_load() {
	local ns=$1 fw=$2 kind=$3 chain=$4 n=$5 f=$WORK/rules t r=0
	case $fw in
	none) echo 0; return 0 ;;
	iptables-legacy|iptables-nft|bpf-iptables-*) rules "$kind" "$chain" "$n" iptables > "$f" ;;
	nft) rules "$kind" "$chain" "$n" nft > "$f" ;;
	nft-set) rules "$kind" "$chain" "$n" nftset > "$f" ;;
	ipset) rules "$kind" "$chain" "$n" ipset > "$f"
	       rules "$kind" "$chain" "$n" ipset-rules > "$f.ipt" ;;
	esac
	t=$(now)
	case $fw in
	iptables-legacy) ip netns exec "$ns" iptables-legacy-restore < "$f" || r=1 ;;
	iptables-nft) ip netns exec "$ns" iptables-nft-restore < "$f" || r=1 ;;
	nft|nft-set) ip netns exec "$ns" nft -f "$f" || r=1 ;;
	ipset) { ip netns exec "$ns" ipset -exist restore < "$f" &&
		 ip netns exec "$ns" iptables-legacy-restore < "$f.ipt"; } || r=1 ;;
	bpf-iptables-tc) BPF_IPTABLES_INGRESS=tc nsx "$ns" "$BIN/bpf-iptables-restore" < "$f" || r=1 ;;
	bpf-iptables-xdp) BPF_IPTABLES_INGRESS=xdp nsx "$ns" "$BIN/bpf-iptables-restore" < "$f" || r=1 ;;
	tc-floor) tc_floor_load "$ns" || r=1 ;;
	esac
	secs_since "$t"
	[ $r = 0 ] || echo "bench: loading $fw $kind $chain $n FAILED" >&2
	return $r
}

# ---------------------------------------------------------------- pktcost
if [[ " $ONLY " == *" pktcost "* ]]; then
	log "pktcost: ns/packet with bpf_prog_test_run (${PK_ARGS[*]})"
	header "$OUT/pktcost.csv"
	"$BIN/pktcost" "${PK_ARGS[@]}" >> "$OUT/pktcost.csv" || log "pktcost FAILED"
	# the mixed rules beside a jump that every packet takes, to fail2ban's chain
	# of 1 000 sources (REJECT, then RETURN): rows mixedjump
	f2b=$(for i in $(seq 0 999); do
		echo "-A f2b -s 198.18.$((i / 250)).$((i % 250 + 1)) -j REJECT"; done)
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" --deny-sizes "" --host-sizes "" \
		--no-ct --head-sizes "$HEAD_SIZES" \
		--head $':f2b - [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -p udp -j f2b\n-A INPUT -p tcp --dport 22 -j ACCEPT\n' \
		--tail "$f2b"$'\n-A f2b -j RETURN\n' |
		sed -n 's/^mixedhead,/mixedjump,/p' >> "$OUT/pktcost.csv" || log "pktcost (jump) FAILED"
	# the mixed rules beside a jump to a chain of Docker's published ports (-d,
	# ! -i, -p tcp --dport; INPUT's: no -o), the packets' destination, so that
	# every packet tests ! -i: rows mixeddocker
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" --deny-sizes "" --host-sizes "" \
		--no-ct --head-sizes "$HEAD_SIZES" \
		--head "$(printf '%s\n' ':DOCKER - [0:0]' '-A INPUT -i lo -j ACCEPT' '-A INPUT -j DOCKER'
			for p in 80 5432 8080; do
				echo "-A DOCKER -d 10.1.0.1/32 ! -i lo -p tcp -m tcp --dport $p -j ACCEPT"
			done)"$'\n' |
		sed -n 's/^mixedhead,/mixeddocker,/p' >> "$OUT/pktcost.csv" || log "pktcost (docker) FAILED"
	# the mixed rules behind ufw's chains (test/e2e/rulesets_diff.py's ufw 0.36
	# ruleset: ~70 rules, -m addrtype, recent, limit, LOG; INPUT's policy
	# ACCEPT here): rows mixedufw
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" --deny-sizes "" --host-sizes "" \
		--no-ct --head-sizes "$HEAD_SIZES" \
		--head "$(python3 "$HERE/../test/e2e/rulesets_diff.py" --print ufw |
			grep -v '^\*\|^:INPUT \|^:FORWARD \|^:OUTPUT \|^COMMIT\|^#')"$'\n' |
		sed -n 's/^mixedhead,/mixedufw,/p' >> "$OUT/pktcost.csv" || log "pktcost (ufw) FAILED"
	footer "$OUT/pktcost.csv"
	# grouping off: a deny list as one slot per rule (the LBVS alone)
	header "$OUT/pktcost_nogroup.csv"
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" --no-ct --group-min 0 \
		--deny-sizes "$NOGROUP_SIZES" >> "$OUT/pktcost_nogroup.csv" || log "pktcost (no group) FAILED"
	footer "$OUT/pktcost_nogroup.csv"
	# IPv6 rows: the same rulesets and packets in IPv6 (bpf-ip6tables, issue 9)
	# mixed and dense as one slot per rule (tuple groups off): the walk itself
	header "$OUT/pktcost_slots.csv"
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "$SLOT_SIZES" --deny-sizes "" --no-ct \
		--dense-max 100000 --tuple-min 0 >> "$OUT/pktcost_slots.csv" ||
		log "pktcost (slots) FAILED"
	footer "$OUT/pktcost_slots.csv"
	header "$OUT/pktcost6.csv"
	"$BIN/pktcost" "${PK_ARGS[@]}" --family 6 >> "$OUT/pktcost6.csv" || log "pktcost (IPv6) FAILED"
	footer "$OUT/pktcost6.csv"
	# many user chains, each jumped to from its own rule: the pool as the loader
	# picks it (windowed from a few thousand chains), and flat beside it
	# (BPF_IPTABLES_POOL=flat), rows chains-flat; and the jumps with a port each
	# (kube-proxy's services: a tuple group), rows kube
	header "$OUT/pktcost_chains.csv"
	"$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" --deny-sizes "" --host-sizes "" \
		--no-ct --chain-sizes "$CHAIN_SIZES" --kube-sizes "$CHAIN_SIZES" \
		>> "$OUT/pktcost_chains.csv" || log "pktcost (chains) FAILED"
	BPF_IPTABLES_POOL=flat "$BIN/pktcost" "${PK_ARGS[0]}" "${PK_ARGS[1]}" --sizes "" \
		--deny-sizes "" --host-sizes "" --no-ct --chain-sizes "$CHAIN_FLAT" |
		sed -n 's/^chains,/chains-flat,/p' >> "$OUT/pktcost_chains.csv" ||
		log "pktcost (chains, flat) FAILED"
	footer "$OUT/pktcost_chains.csv"
fi

# ---------------------------------------------------------------- veth
. "$HERE/flood.sh"

# ping_run CHAIN: p50 and p99 round trip in us over PINGS echoes 1 ms apart
ping_run() {
	local from dst
	case $1 in
	INPUT) from=$CLI dst=$RTR_IP1 ;;
	FORWARD) from=$CLI dst=$SRV_IP ;;
	OUTPUT) from=$RTR dst=$SRV_IP ;;
	esac
	ip netns exec "$from" ping -n -c "$PINGS" -i 0.001 -W 1 "$dst" 2>/dev/null |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | sort -n | awk '
		{ v[NR] = $1 * 1000 }
		END { if (NR) printf "%d %d\n", v[int(NR * 0.5 + 0.5)], v[int(NR * 0.99 + 0.5)]
		      else print "- -" }'
}

veth_point() {	# veth_point CHAIN FW KIND N
	local chain=$1 fw=$2 kind=$3 n=$4 secs=$SECS load pps cpu p50 p99 a b
	case $fw in
	iptables-legacy|iptables-nft|nft) [ "$n" -ge 100000 ] && secs=$SLOW_SECS ;;
	esac
	fw_clear
	if ! load=$(fw_load "$RTR" "$fw" "$kind" "$chain" "$n"); then
		FAILS=$((FAILS + 1))
		echo "$chain,$fw,$n,0,0,-,-,-,$secs,-,-" >> "$OUT/veth.csv"
		fw_clear
		return
	fi
	pps=-1
	for _ in $(seq "$REPS"); do	# the best of REPS floods: the least disturbed
		read -r a b < <(flood_run "$chain" "$secs")
		[ "$a" -gt "$pps" ] && pps=$a cpu=$b
	done
	read -r p50 p99 < <(ping_run "$chain")
	# bpf-iptables at the targets' sizes: REPS pairs of floods, one without a
	# firewall (base_pps), then one with the ruleset loaded again (pair_pps),
	# seconds apart: the machine's speed moves by up to 30% for minutes, and the
	# targets' "x no firewall" compare these pairs (the best of each side)
	pair=- base=-
	case $fw,$n in
	bpf-iptables-*,10000|bpf-iptables-*,100000)
		base=-1 pair=-1
		for _ in $(seq "$REPS"); do
			fw_clear
			read -r a _ < <(flood_run "$chain" "$secs")
			[ "$a" -gt "$base" ] && base=$a
			fw_load "$RTR" "$fw" "$kind" "$chain" "$n" > /dev/null || break
			read -r a _ < <(flood_run "$chain" "$secs")
			[ "$a" -gt "$pair" ] && pair=$a
		done ;;
	esac
	echo "$chain,$fw,$n,$pps,$cpu,$p50,$p99,$load,$secs x $REPS,$base,$pair" >> "$OUT/veth.csv"
	log "  $chain $fw $n rules: $pps pkt/s, $cpu CPU ns/pkt, ping p50 $p50 p99 $p99 us, load ${load}s" \
	    "$([ "$base" = - ] || echo "; paired floods: no firewall $base, $fw $pair pkt/s")"
	fw_clear
}

if [[ " $ONLY " == *" veth "* ]]; then
	log "veth: UDP flood ${SECS}s per point, sizes $SIZES (+$BIG for sets)"
	header "$OUT/veth.csv"
	echo "chain,firewall,rules,pps,cpu_ns_per_pkt,ping_p50_us,ping_p99_us,load_s,secs,base_pps,pair_pps" >> "$OUT/veth.csv"
	for chain in INPUT FORWARD OUTPUT; do
		kind=mixed
		[ $chain = OUTPUT ] && kind=deny
		fws="iptables-legacy iptables-nft nft nft-set ipset tc-floor bpf-iptables-tc bpf-iptables-xdp"
		# egress is always tc: one bpf-iptables configuration
		[ $chain = OUTPUT ] && fws="iptables-legacy iptables-nft nft nft-set ipset tc-floor bpf-iptables-tc"
		big=$BIG
		[ $QUICK = 1 ] && [ $chain != OUTPUT ] && big=
		if [ -n "${BENCH_VETH_FWS:-}" ]; then	# a focused re-run: these firewalls only
			fws=$(for fw in $fws; do [[ " $BENCH_VETH_FWS " == *" $fw "* ]] && echo "$fw"; done)
		fi
		[ -n "${BENCH_VETH_SIZES:-}" ] && big=
		for n in ${BENCH_VETH_SIZES:-$SIZES} $big; do
			veth_point $chain none $kind "$n"	# the baseline of this size, same minute
			for fw in $fws; do
				if [ "$n" = "$BIG" ]; then	# set-capable only
					case $fw in nft-set|ipset) ;; bpf-iptables-*) [ $kind = deny ] || continue ;;
					*) continue ;; esac
				fi
				veth_point $chain "$fw" $kind "$n"
			done
		done
	done
	footer "$OUT/veth.csv"
fi

# ---------------------------------------------------------------- tcp
# iperf3 from cli to srv (through rtr's FORWARD), the best of REPS runs of TCP_SECS;
# the ruleset is the mixed one with the last rule accepting the stream's port
tcp_run() {
	ip netns exec "$SRV" iperf3 -s -1 -D >/dev/null 2>&1
	sleep 0.3
	ip netns exec "$CLI" iperf3 -c "$SRV_IP" -t "$TCP_SECS" -J 2>/dev/null | python3 -c '
import json, sys
try: print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))
except Exception: print(0)'
}
if [[ " $ONLY " == *" tcp "* ]]; then
	log "tcp: iperf3 through FORWARD (${TCP_SECS}s, best of $REPS), sizes $TCP_SIZES"
	header "$OUT/tcp.csv"
	echo "firewall,rules,gbits" >> "$OUT/tcp.csv"
	for n in $TCP_SIZES; do
		for fw in none bpf-iptables-tc bpf-iptables-xdp bpf-iptables-auto; do
			fw_clear
			if [ $fw != none ]; then
				rules mixed FORWARD "$n" iptables |
					sed 's/-p udp --dport 9000/-p tcp --dport 5201/' > "$WORK/rules"
				ing=${fw#bpf-iptables-}
				[ "$ing" = auto ] && ing=	# the default of a new data plane
				BPF_IPTABLES_INGRESS=$ing nsx "$RTR" "$BIN/bpf-iptables-restore" \
					< "$WORK/rules" || log "loading $fw $n FAILED"
			fi
			best=0
			for _ in $(seq "$REPS"); do
				g=$(tcp_run)
				best=$(awk -v a="$g" -v b="$best" 'BEGIN { print (a > b ? a : b) }')
			done
			echo "$fw,$n,$best" >> "$OUT/tcp.csv"
			log "  $fw $n rules: $best Gbit/s"
		done
	done
	fw_clear
	footer "$OUT/tcp.csv"
fi

# ---------------------------------------------------------------- drop
# Three senders; raw and xdp from cli's CPU 0 into rtr's eth0:
#   raw  ready frames on an AF_PACKET socket: the veth hands rtr an skb, which an XDP
#        program sees only after veth copies it into an XDP buffer
#   xdp  the kernel's XDP traffic generator (flood xdp): the frames reach rtr's NAPI
#        as XDP frames, as a NIC's would, and only the stack builds an skb. rtr's
#        NAPI runs threaded on CPU 1 (GRO on, so the veth has NAPI without an XDP
#        program): the sender does not share its CPU with the receiver, and the
#        receiver's drop path is what limits the rate (the rest overflows the ring).
#   inject the same generator in rtr, on CPU 1, making the frames as received on rtr's
#        eth0: each frame runs eth0's XDP program (bpf-iptables-xdp) or, for the
#        others, goes to the stack as an skb. Generator and receiver are one loop on
#        one CPU: the rate is what a CPU's receive path can drop, without the veth
#        and the scheduling of two CPUs (which cap the xdp sender's row).
# xdp-drop-floor: a program that only returns XDP_DROP. With the inject sender, the
# generator's own cost; with the xdp sender, attached to rtr's eth0 (flood hold),
# the veth's and the other CPU's: the most any XDP program can drop there (the
# veth counts the frames, ethtool's rx_queue_*_xdp_drops).
napi_cpu1() {	# rtr's eth0: NAPI in a thread, on CPU 1
	ip netns exec "$RTR" ethtool -K eth0 gro on >/dev/null 2>&1
	ip netns exec "$RTR" sh -c 'echo 1 > /sys/class/net/eth0/threaded' 2>/dev/null
	# NAPI threads are kernel threads (of no namespace): every threaded eth0 of
	# the machine's namespaces goes to CPU 1, the bench's cli/srv included
	local p
	for p in $(pgrep "^napi/eth0-"); do taskset -pc 1 "$p" >/dev/null 2>&1; done
	return 0
}
veth_xdp_drops() {	# the frames rtr's eth0 dropped at XDP (every queue)
	ip netns exec "$RTR" ethtool -S eth0 | awk '/rx_queue_[0-9]+_xdp_drops:/ { n += $2 }
		END { print n + 0 }'
}
if [[ " $ONLY " == *" drop "* ]]; then
	log "drop: a flood dropped by the first rule (senders: raw, xdp, inject)"
	header "$OUT/drop.csv"
	echo "where,sender,sent_pps,dropped_pps" >> "$OUT/drop.csv"
	mac=$(ip -n "$RTR" -br link show eth0 | awk '{ print $3 }')
	DROP_RUNS=$((QUICK ? 1 : 3))
	for sender in raw xdp inject; do
	for where in xdp-drop-floor none iptables-input iptables-raw-prerouting \
		     nft-netdev-ingress bpf-iptables-tc bpf-iptables-xdp bpf-iptables-xdp-generic; do
		[ "$sender" != raw ] && [ "$where" = bpf-iptables-xdp-generic ] && continue
		[ "$sender" = raw ] && [ "$where" = xdp-drop-floor ] && continue
		fw_clear
		rule="-p udp --dport 9999 -j DROP" hold=
		case $where in
		xdp-drop-floor) if [ "$sender" = xdp ]; then
			# attached until the floods are over (DROP_RUNS x SECS + 3 s at most);
			# "attached" once it is
			coproc HOLD { exec ip netns exec "$RTR" "$BIN/flood" hold eth0 \
				$((DROP_RUNS * ${SECS%.*} + 3)); }
			hold=$HOLD_PID
			read -r -t 5 _ <&"${HOLD[0]}" ||
				{ log "  $where: no drop program on rtr's eth0"; exit 1; }
			d0=$(veth_xdp_drops)
		fi ;;
		iptables-input) ip netns exec "$RTR" iptables-legacy -A INPUT $rule ;;
		iptables-raw-prerouting) ip netns exec "$RTR" iptables-legacy -t raw -A PREROUTING $rule ;;
		nft-netdev-ingress) printf '%s\n' 'table netdev bench {' \
			'chain in { type filter hook ingress device eth0 priority 0;' \
			'udp dport 9999 counter drop' '}' '}' | ip netns exec "$RTR" nft -f - ;;
		bpf-iptables-tc) BPF_IPTABLES_INGRESS=tc nsx "$RTR" "$BIN/bpf-iptables" -A INPUT $rule ;;
		bpf-iptables-xdp) BPF_IPTABLES_INGRESS=xdp nsx "$RTR" "$BIN/bpf-iptables" -A INPUT $rule ;;
		bpf-iptables-xdp-generic) BPF_IPTABLES_INGRESS=xdp-generic nsx "$RTR" \
			"$BIN/bpf-iptables" -A INPUT $rule ;;
		esac
		[ "$sender" = xdp ] && napi_cpu1
		# the best of DROP_RUNS runs (this machine's neighbours come and go,
		# and a sender's rate with them; --quick: 1); every frame of them is
		# counted against the rule's counter, so a row's dropped rate is the
		# best run's sent rate times the share of all its frames dropped
		: > "$WORK/send"
		if [ "$sender" = inject ]; then
			prog=
			[ "$where" = bpf-iptables-xdp ] && prog=$(ip -n "$RTR" -d link show eth0 |
				sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -1)
			[ "$where" = bpf-iptables-xdp ] && [ -z "$prog" ] &&
				{ log "  $where: no XDP program on rtr's eth0"; exit 1; }
			[ "$where" = xdp-drop-floor ] && prog=drop
			for i in $(seq $DROP_RUNS); do
				ip netns exec "$RTR" taskset -c 1 "$BIN/flood" inject eth0 "$mac" \
					"$CLI_IP" "$RTR_IP1" 9999 "$SECS" $prog >> "$WORK/send"
			done
		else
			for i in $(seq $DROP_RUNS); do
				ip netns exec "$CLI" taskset -c 0 "$BIN/flood" "$sender" eth0 "$mac" \
					"$CLI_IP" "$RTR_IP1" 9999 "$SECS" >> "$WORK/send"
			done
		fi
		awk '{ n += $2; r = $2 / $5; if (r > b) { b = r } }
		     END { printf "sent %d err 0 %.6f\n", n, n / b }' "$WORK/send" > "$WORK/send1"
		mv "$WORK/send1" "$WORK/send"
		read -r _ sent _ _ t < "$WORK/send"
		case $where in
		iptables-input) d=$(ip netns exec "$RTR" iptables-legacy -vxnL INPUT | awk 'NR == 3 { print $1 }') ;;
		iptables-raw-prerouting)
			d=$(ip netns exec "$RTR" iptables-legacy -t raw -vxnL PREROUTING | awk 'NR == 3 { print $1 }') ;;
		nft-netdev-ingress) d=$(ip netns exec "$RTR" nft list ruleset | sed -n 's/.*counter packets \([0-9]*\).*/\1/p') ;;
		bpf-iptables-*) d=$(nsx "$RTR" "$BIN/bpf-iptables" -vxnL INPUT | awk 'NR == 3 { print $1 }') ;;
		xdp-drop-floor) if [ -n "$hold" ]; then
			d=$(($(veth_xdp_drops) - d0))
			kill "$hold" 2>/dev/null; wait "$hold" 2>/dev/null
		else
			d=$sent
		fi ;;
		*) d=0 ;;
		esac
		awk -v w="$where" -v x="$sender" -v s="$sent" -v d="${d:-0}" -v t="$t" \
			'BEGIN { printf "%s,%s,%.0f,%.0f\n", w, x, s / t, d / t }' >> "$OUT/drop.csv"
		log "  $(tail -1 "$OUT/drop.csv")"
	done
	done
	fw_clear
	ip netns exec "$RTR" sh -c 'echo 0 > /sys/class/net/eth0/threaded' 2>/dev/null
	footer "$OUT/drop.csv"
fi

# ---------------------------------------------------------------- update
# one timed command: tool,operation,rules,seconds. The clock runs inside the
# namespace, around the command alone: `ip netns exec` (a mount namespace and a
# remount of /sys, ~5 ms here) is not the tool's cost, and every tool is timed
# the same way.
TIMED='s=$EPOCHREALTIME; "$@" >/dev/null 2>"$W/err" || exit 1; e=$EPOCHREALTIME
       awk -v a="$s" -v b="$e" "BEGIN { printf \"%.4f\", b - a }"'
upd() {	# upd TOOL OP N CMD...  (CMD: nsx NS ... or x ...)
	local r t
	case $4 in
	nsx) t=$(W=$WORK BPF_IPTABLES_STATE_DIR="$STATE_ROOT/$5" \
			ip netns exec "$5" bash -c "$TIMED" _ "${@:6}"); r=$? ;;
	x) t=$(W=$WORK ip netns exec "$U" bash -c "$TIMED" _ "${@:5}"); r=$? ;;
	*) echo "upd: $4: nsx or x" >&2; exit 2 ;;
	esac
	[ $r = 0 ] || log "$1 $2 $3 FAILED: $(head -c 300 "$WORK/err")"
	echo "$1,$2,$3,$([ $r = 0 ] && echo "$t" || echo -)" >> "$OUT/update.csv"
}
mem() {	# mem WHAT ENTRIES BYTES
	echo "$1,$2,$3" >> "$OUT/memory.csv"
}

if [[ " $ONLY " == *" update "* ]]; then
	log "update: restore and one-rule changes, sizes $UPD_SIZES; deny list of $BIG"
	header "$OUT/update.csv"
	echo "tool,operation,rules,seconds" >> "$OUT/update.csv"
	header "$OUT/memory.csv"
	echo "what,entries,bytes" >> "$OUT/memory.csv"
	header "$OUT/verifier.csv"
	echo "program,verified_insns,xlated_insns" >> "$OUT/verifier.csv"
	U=$SRV	# no traffic there now
	x() { ip netns exec "$U" "$@"; }
	one="-s 192.0.2.1/32 -p tcp --dport 22 -j DROP"
	for n in $UPD_SIZES; do
		f=$WORK/upd
		fw_clear "$U"
		# an empty instance, for the bytes per rule
		nsx "$U" "$BIN/bpf-iptables" -F >/dev/null
		[ "$n" = "${UPD_SIZES%% *}" ] && mem bpf-iptables-empty 0 "$(nsx "$U" "$BIN/pktcost" --running)"
		fw_clear "$U"
		rules mixed INPUT "$n" iptables > "$f"
		upd bpf-iptables restore-first "$n" nsx "$U" "$BIN/bpf-iptables-restore" "$f"
		# what the verifier processed for the programs that first install loaded
		[ "$n" = "${UPD_SIZES%% *}" ] && nsx "$U" "$BIN/pktcost" --verified >> "$OUT/verifier.csv"
		mem bpf-iptables-mixed "$n" "$(nsx "$U" "$BIN/pktcost" --running)"
		upd bpf-iptables restore-again "$n" nsx "$U" "$BIN/bpf-iptables-restore" "$f"
		upd bpf-iptables append "$n" nsx "$U" "$BIN/bpf-iptables" -A INPUT $one
		upd bpf-iptables insert "$n" nsx "$U" "$BIN/bpf-iptables" -I INPUT 1 $one
		upd bpf-iptables delete "$n" nsx "$U" "$BIN/bpf-iptables" -D INPUT $one
		# after updates: the generation each switch leaves, kept or dropped
		mem bpf-iptables-mixed-updated "$n" "$(nsx "$U" "$BIN/pktcost" --running)"
		fw_clear "$U"
		for ipt in iptables-legacy iptables-nft; do
			upd $ipt restore "$n" x $ipt-restore "$f"
			upd $ipt append "$n" x $ipt -A INPUT $one
			upd $ipt insert "$n" x $ipt -I INPUT 1 $one
			upd $ipt delete "$n" x $ipt -D INPUT $one
			fw_clear "$U"
		done
		rules mixed INPUT "$n" nft > "$f.nft"
		upd nft restore "$n" x nft -f "$f.nft"
		upd nft append "$n" x nft add rule ip bench input ip saddr 192.0.2.1 tcp dport 22 drop
		upd nft insert "$n" x nft insert rule ip bench input ip saddr 192.0.2.1 tcp dport 22 drop
		h=$(x nft -a list chain ip bench input | awk '/192.0.2.1/ { print $NF; exit }')
		upd nft delete "$n" x nft delete rule ip bench input handle "${h:-0}"
		fw_clear "$U"
		rules mixed INPUT "$n" nftset > "$f.nft"
		upd nft-set restore "$n" x nft -f "$f.nft"
		upd nft-set append "$n" x nft add element ip bench s "{ 192.0.2.1 . 22 }"
		upd nft-set delete "$n" x nft delete element ip bench s "{ 192.0.2.1 . 22 }"
		fw_clear "$U"
		rules mixed INPUT "$n" ipset > "$f.ipset"
		upd ipset restore "$n" x ipset restore -f "$f.ipset"
		upd ipset append "$n" x ipset add bench 192.0.2.1,tcp:22
		upd ipset delete "$n" x ipset del bench 192.0.2.1,tcp:22
		fw_clear "$U"
	done
	# the deny list of BIG entries
	f=$WORK/deny
	rules deny OUTPUT "$BIG" iptables > "$f"
	upd bpf-iptables deny-restore "$BIG" nsx "$U" "$BIN/bpf-iptables-restore" "$f"
	mem bpf-iptables-deny "$BIG" "$(nsx "$U" "$BIN/pktcost" --running)"
	upd bpf-iptables deny-append "$BIG" nsx "$U" "$BIN/bpf-iptables" -A OUTPUT -d 192.0.2.1 -j DROP
	upd bpf-iptables deny-delete "$BIG" nsx "$U" "$BIN/bpf-iptables" -D OUTPUT -d 192.0.2.1 -j DROP
	mem bpf-iptables-deny-updated "$BIG" "$(nsx "$U" "$BIN/pktcost" --running)"
	fw_clear "$U"
	rules deny OUTPUT "$BIG" ipset > "$f.ipset"
	upd ipset deny-restore "$BIG" x ipset -exist restore -f "$f.ipset"
	mem ipset-deny "$BIG" "$(x ipset list -t bench | awk -F': ' '/Size in memory/ { print $2 }')"
	upd ipset deny-append "$BIG" x ipset add bench 192.0.2.1
	upd ipset deny-delete "$BIG" x ipset del bench 192.0.2.1
	fw_clear "$U"
	# the same list in IPv6 (rules.py --family 6: a.b.c.d/p as 2001:db8:aabb:ccdd::/(32 + p))
	rules deny OUTPUT "$BIG" iptables --family 6 > "$f.v6"
	upd bpf-ip6tables deny-restore "$BIG" nsx "$U" "$BIN/bpf-ip6tables-restore" "$f.v6"
	mem bpf-ip6tables-deny "$BIG" "$(nsx "$U" "$BIN/pktcost" --running)"
	upd bpf-ip6tables deny-append "$BIG" nsx "$U" "$BIN/bpf-ip6tables" -A OUTPUT -d 2001:db8:c000:201::/64 -j DROP
	upd bpf-ip6tables deny-delete "$BIG" nsx "$U" "$BIN/bpf-ip6tables" -D OUTPUT -d 2001:db8:c000:201::/64 -j DROP
	mem bpf-ip6tables-deny-updated "$BIG" "$(nsx "$U" "$BIN/pktcost" --running)"
	fw_clear "$U"
	rules deny OUTPUT "$BIG" ipset --family 6 > "$f.v6.ipset"
	upd ipset6 deny-restore "$BIG" x ipset -exist restore -f "$f.v6.ipset"
	mem ipset6-deny "$BIG" "$(x ipset list -t bench | awk -F': ' '/Size in memory/ { print $2 }')"
	fw_clear "$U"
	rules deny OUTPUT "$BIG" nftset > "$f.nft"
	upd nft-set deny-restore "$BIG" x nft -f "$f.nft"
	upd nft-set deny-append "$BIG" x nft add element ip bench s "{ 192.0.2.1 }"
	upd nft-set deny-delete "$BIG" x nft delete element ip bench s "{ 192.0.2.1 }"
	fw_clear "$U"
	if [ "$BIG" -le 100000 ]; then
		upd iptables-legacy deny-restore "$BIG" x iptables-legacy-restore "$f"
		fw_clear "$U"
	fi
	# many user chains, a jump to each (kube-proxy's shape): a restore, one
	# rule in and out, and a listing of every chain (its reference counts)
	f=$WORK/chains
	rules chains INPUT "$CHAINS" iptables > "$f"
	upd bpf-iptables chains-restore "$CHAINS" nsx "$U" "$BIN/bpf-iptables-restore" "$f"
	upd bpf-iptables chains-append "$CHAINS" nsx "$U" "$BIN/bpf-iptables" -A INPUT $one
	upd bpf-iptables chains-delete "$CHAINS" nsx "$U" "$BIN/bpf-iptables" -D INPUT $one
	upd bpf-iptables chains-list "$CHAINS" nsx "$U" "$BIN/bpf-iptables" -L -n
	fw_clear "$U"
	upd iptables-legacy chains-restore "$CHAINS" x iptables-legacy-restore "$f"
	upd iptables-legacy chains-append "$CHAINS" x iptables-legacy -A INPUT $one
	upd iptables-legacy chains-delete "$CHAINS" x iptables-legacy -D INPUT $one
	upd iptables-legacy chains-list "$CHAINS" x iptables-legacy -L -n
	fw_clear "$U"
	# kube-proxy's shape: a service each (address, port, comment) in
	# KUBE-SERVICES, a chain each; a service in and out
	f=$WORK/kube
	rules kube INPUT "$CHAINS" iptables > "$f"
	svc="-d 10.97.0.1/32 -p tcp -m comment --comment new -m tcp --dport 80 -j KUBE-SVC-00001"
	upd bpf-iptables kube-restore "$CHAINS" nsx "$U" "$BIN/bpf-iptables-restore" "$f"
	upd bpf-iptables kube-append "$CHAINS" nsx "$U" "$BIN/bpf-iptables" -A KUBE-SERVICES $svc
	upd bpf-iptables kube-delete "$CHAINS" nsx "$U" "$BIN/bpf-iptables" -D KUBE-SERVICES $svc
	fw_clear "$U"
	upd iptables-legacy kube-restore "$CHAINS" x iptables-legacy-restore "$f"
	upd iptables-legacy kube-append "$CHAINS" x iptables-legacy -A KUBE-SERVICES $svc
	upd iptables-legacy kube-delete "$CHAINS" x iptables-legacy -D KUBE-SERVICES $svc
	fw_clear "$U"
	footer "$OUT/update.csv"
	footer "$OUT/memory.csv"
	footer "$OUT/verifier.csv"
fi

# ---------------------------------------------------------------- report
if [[ " $ONLY " == *" report "* ]]; then
	python3 "$HERE/report.py" "$OUT" > "$OUT/summary.md" || log "report FAILED"
	log "summary: $OUT/summary.md"
fi
# every section asked for left its file, with data
for s in $ONLY; do
	case $s in
	pktcost) files="pktcost.csv pktcost_nogroup.csv pktcost_slots.csv" ;;
	veth) files="veth.csv" ;;
	tcp) files="tcp.csv" ;;
	drop) files="drop.csv" ;;
	update) files="update.csv memory.csv verifier.csv" ;;
	report) files="summary.md pktcost.png veth_input.png veth_forward.png veth_output.png tcp.png update.png" ;;
	*) log "unknown section $s FAILED"; files= ;;
	esac
	for f in $files; do
		if [ ! -s "$OUT/$f" ] || { [[ $f == *.csv ]] && [ "$(grep -vc '^#' "$OUT/$f")" -lt 2 ]; }; then
			[[ $f == *.png ]] && [[ " $ONLY " != *" ${f%%_*} "* ]] && [[ " $ONLY " != *" ${f%.png} "* ]] &&
				continue	# a plot of a section not run
			log "$f missing or empty: FAILED"
		fi
	done
done
log "results in $OUT ($FAILS failures)"
[ "$FAILS" = 0 ]
