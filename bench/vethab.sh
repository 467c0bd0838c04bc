#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Side by side: builds of bpf-iptables on the veth floods of bench/run.sh, at one
# ruleset size, rounds alternating no firewall and each build, so that the
# machine's drift (10-30% within minutes) weighs on every build alike.
#   bench/vethab.sh [--rounds R] [--secs S] [--rules N] [--chains "INPUT ..."] [--tc-floor]
#                   BUILD_DIR...
# Each build's own bpf-iptables-restore loads the ruleset on rtr (tc ingress, the
# default on veth) and --unload removes it after its flood. The rulesets are those
# of the veth section (bench/rules.py: mixed for INPUT and FORWARD, the egress deny
# list for OUTPUT), the flood is bench/flood.c (sender on CPU 0, sink on CPU 1).
# Output: one line per round and chain (packets/s received), then per chain and
# build the mean and the best, and the best against no firewall's best.
set -uo pipefail
usage() {
	echo "usage: bench/vethab.sh [--rounds R] [--secs S] [--rules N] [--chains LIST]" \
	     "[--tc-floor] BUILD_DIR..." >&2
	exit 2
}
ROUNDS=4 SECS=2 N=10000 CHAINS="INPUT FORWARD OUTPUT" TCFLOOR=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--rules) N=$2; shift 2 ;;
	--chains) CHAINS=$2; shift 2 ;;
	--tc-floor) TCFLOOR=1; shift ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
BUILDS=()
for b in "$@"; do
	d=$(cd "$b" && pwd) || usage
	[ -x "$d/bpf-iptables-restore" ] || { echo "vethab: no bpf-iptables-restore in $b" >&2; exit 2; }
	BUILDS+=("$d")
done
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BUILDS[0]}		# test/e2e/lib.sh and flood
[ -x "$BIN/flood" ] || { echo "vethab: no flood in $BIN" >&2; exit 2; }
FLOOR_OBJ=$BIN/bpf/tcfloor.bpf.o
[ "$TCFLOOR" = 0 ] || [ -f "$FLOOR_OBJ" ] || { echo "vethab: no $FLOOR_OBJ" >&2; exit 2; }
. "$HERE/../test/e2e/lib.sh"
topo_up

for c in $CHAINS; do
	kind=mixed
	[ "$c" = OUTPUT ] && kind=deny
	python3 "$HERE/rules.py" "$kind" "$c" "$N" iptables > "$STATE_ROOT/$c.rules" || exit 1
done

WORK=$STATE_ROOT
. "$HERE/flood.sh"
# flood CHAIN: packets/s the sink received
flood() { flood_run "$1" "$SECS" | cut -d' ' -f1; }

RES=$STATE_ROOT/results
: > "$RES"
for r in $(seq "$ROUNDS"); do
	for c in $CHAINS; do
		line="round $r $c none $(flood "$c")"
		echo "$c none $(echo "$line" | awk '{ print $NF }')" >> "$RES"
		if [ "$TCFLOOR" = 1 ]; then
			tc_floor_load "$RTR" || { echo "vethab: cannot attach $FLOOR_OBJ" >&2; exit 1; }
			p=$(flood "$c")
			tc_floor_clear "$RTR"
			line="$line floor $p"
			echo "$c floor $p" >> "$RES"
		fi
		for i in "${!BUILDS[@]}"; do
			b=${BUILDS[$i]}
			if ! BPF_IPTABLES_INGRESS=tc nsx "$RTR" "$b/bpf-iptables-restore" \
				< "$STATE_ROOT/$c.rules"; then
				echo "vethab: $b could not load the $c ruleset" >&2
				exit 1
			fi
			p=$(flood "$c")
			nsx "$RTR" "$b/bpf-iptables" --unload
			line="$line build$i $p"
			echo "$c build$i $p" >> "$RES"
		done
		echo "$line"
	done
done
for i in "${!BUILDS[@]}"; do echo "build$i: ${BUILDS[$i]}"; done
awk '{ k = $1 " " $2; n[k]++; s[k] += $3; if ($3 > m[k]) m[k] = $3; if ($2 == "none") nb[$1] = m[k] }
     END { for (k in n) { split(k, a, " ");
		printf "%-8s %-7s mean %8d best %8d  x no firewall (best) %.3f\n", a[1], a[2],
		       s[k] / n[k], m[k], nb[a[1]] ? m[k] / nb[a[1]] : 0 } }' "$RES" | sort
