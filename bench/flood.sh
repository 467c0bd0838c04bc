# SPDX-License-Identifier: GPL-2.0
# The veth flood of the benchmarks (bench/run.sh, bench/vethab.sh), sourced after
# test/e2e/lib.sh's topo_up: BIN holds bench/flood.c's binary, WORK a directory for
# the sink's output.

busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# flood_run CHAIN SECS: packets/s received and CPU ns per packet ("pps cpu_ns"):
# the busy time of all CPUs while the sender ran (the firewall's work is done
# on the sender's CPU, in softirq, and on the sink's), divided by the packets
# received: other processes' work counts too, so it is as noisy as the machine
flood_run() {
	local chain=$1 secs=$2 sink_ns dst snd_ns res b0 b1
	case $chain in
	INPUT) snd_ns=$CLI sink_ns=$RTR dst=$RTR_IP1 ;;
	FORWARD) snd_ns=$CLI sink_ns=$SRV dst=$SRV_IP ;;
	OUTPUT) snd_ns=$RTR sink_ns=$SRV dst=$SRV_IP ;;
	esac
	ip netns exec "$sink_ns" taskset -c 1 "$BIN/flood" sink 9000 "$secs" > "$WORK/sink" &
	local pid=$!
	sleep 0.2
	b0=$(busy_jiffies)
	ip netns exec "$snd_ns" taskset -c 0 "$BIN/flood" send "$dst" 9000 "$(awk -v s="$secs" \
		'BEGIN { print s + 0.3 }')" > "$WORK/send"
	wait $pid
	b1=$(busy_jiffies)
	awk -v b="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" '
		{ n = $2; t = $3 }
		END { if (t > 0 && n > 0) printf "%d %d\n", n / t, b * 1e9 / hz / (n / t * t)
		      else print "0 0" }' "$WORK/sink"
}

# tc-floor: bench/tcfloor.bpf.c (it passes every packet) where bpf-iptables
# attaches on the router (eth0 ingress, eth1 egress), clsact and direct action:
# what tc's hooks cost a flood alone. tc_floor_load NS; tc_floor_clear NS.
tc_floor_load() {
	local ns=$1 hook
	for hook in eth0/ingress eth1/egress; do
		ip netns exec "$ns" tc qdisc add dev "${hook%/*}" clsact 2>/dev/null
		ip netns exec "$ns" tc filter add dev "${hook%/*}" "${hook#*/}" bpf da \
			obj "$BIN/bpf/tcfloor.bpf.o" sec tc || return 1
	done
}
tc_floor_clear() {
	local d
	for d in eth0 eth1; do ip netns exec "$1" tc qdisc del dev $d clsact 2>/dev/null; done
	return 0
}
