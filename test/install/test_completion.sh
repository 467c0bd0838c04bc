#!/usr/bin/env bash
# The bash completion as installed by `cmake --install`: bash-completion finds it
# under each of the four command names, and a completion request (COMP_WORDS,
# COMP_CWORD) gives the expected COMPREPLY: commands, options, the chains of the
# namespace's ruleset (from `bpf-iptables -S`), targets, matches, protocols, the
# options of a match or target, --reject-with values. Every option the parser
# defines is offered somewhere, and every option offered after -m/-j NAME is
# accepted by the command.
set -euo pipefail
build=${1:?usage: test_completion.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: test_completion.sh BUILD_DIR SOURCE_DIR}
prefix=$(mktemp -d)
state=$(mktemp -d)
trap 'rm -rf "$prefix" "$state"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
comp=$prefix/share/bash-completion/completions
sbin=$prefix/sbin
# the rule language only, in a state of its own: a chain of our own to complete
export BPF_IPTABLES_STATE_DIR=$state BPF_IPTABLES_DATAPLANE=off
"$sbin/bpf-iptables" -N web

fails=0 passed=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# bash-completion's loader finds the file under each command name
if [ ! -r /usr/share/bash-completion/bash_completion ]; then
	echo "FAIL: bash-completion is not installed (scripts/setup.sh installs it)"
	exit 1
fi
for cmd in bpf-iptables bpf-iptables-save bpf-iptables-restore bpf-conntrack \
	   bpf-ip6tables bpf-ip6tables-save bpf-ip6tables-restore; do
	got=$(XDG_DATA_DIRS=$prefix/share bash -c '
		source /usr/share/bash-completion/bash_completion
		__load_completion "$1" && complete -p "$1"' _ "$cmd" 2>&1) || true
	case $got in
	"complete -F _bpf"*" $cmd") passed=$((passed + 1)) ;;
	*) fail "bash-completion does not load $comp/$cmd: $got" ;;
	esac
done

# complete WORDS...: the last word is the one being completed; prints COMPREPLY
# sorted, one per line. The command word is the installed command's path.
complete_words() {
	bash -c '
		source "$1"; shift
		name=${1##*/}
		fn=$(complete -p "$name" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$comp/bpf-iptables" "$@"
}

# expect "EXPECTED WORDS" WORDS...: COMPREPLY is exactly EXPECTED (any order)
expect() {
	local want got
	want=$(tr -s ' \t\n' '\n' <<<"$1" | sed '/^$/d' | sort)
	shift
	got=$(complete_words "$@")
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
	else
		fail "complete '$*': got [$(echo $got)], want [$(echo $want)]"
	fi
}

ipt=$sbin/bpf-iptables
expect "INPUT FORWARD OUTPUT web" "$ipt" -A ""
expect "INPUT" "$ipt" --insert IN
expect "web" "$ipt" -X ""
expect "--line-numbers" "$ipt" -L --li
expect "ACCEPT DROP RETURN REJECT LOG NFLOG TCPMSS web" "$ipt" -A INPUT -j ""
expect "ACCEPT DROP" "$ipt" -P INPUT ""
expect "addrtype comment conntrack icmp iprange length limit mac mark multiport recent state tcp udp" \
	"$ipt" -A INPUT -m ""
expect "udp udplite" "$ipt" -A INPUT -p ud
expect "--destination --dst --destination-port --dport" "$ipt" -A INPUT -p tcp --d
expect "--destination --dst --dports --destination-ports" \
	"$ipt" -A INPUT -m multiport --d
# -p udp loads the udp match by itself: its options come too
expect "--destination --dst --dports --destination-ports --dport --destination-port" \
	"$ipt" -A INPUT -p udp -m multiport --d
expect "--log-level --log-prefix --log-tcp-sequence --log-tcp-options --log-ip-options
	--log-uid --log-macdecode" "$ipt" -A INPUT -j LOG --log-
expect "icmp-net-unreachable icmp-host-unreachable icmp-port-unreachable
	icmp-proto-unreachable icmp-net-prohibited icmp-host-prohibited
	icmp-admin-prohibited tcp-reset" "$ipt" -A INPUT -j REJECT --reject-with ""
expect "NEW,ESTABLISHED" "$ipt" -A INPUT -m conntrack --ctstate NEW,EST
expect "--syslog --count --timeout" "$ipt" --log-follow --
expect "--log-follow" "$ipt" --log-f
expect "--unload" "$ipt" --unl
expect "echo-reply echo-request" "$ipt" -A INPUT -p icmp --icmp-type echo
expect "lo" "$ipt" -A INPUT -i lo
expect "--counters" "$sbin/bpf-iptables-save" --c
expect "tcp_timeout_established=" "$sbin/bpf-conntrack" -T tcp_timeout_es
expect "ESTABLISHED" "$sbin/bpf-conntrack" -L -p tcp --state EST
mkdir "$state/dir" && touch "$state/dir/rules.v4"
expect "$state/dir/rules.v4" "$sbin/bpf-iptables-restore" "$state/dir/ru"
# bpf-ip6tables: ip6tables' matches, protocols, REJECT types, ICMPv6 names
ip6t=$sbin/bpf-ip6tables
"$ip6t" -N web6
expect "INPUT FORWARD OUTPUT web6" "$ip6t" -A ""
expect "addrtype comment conntrack icmp6 iprange length limit mac mark multiport recent state tcp udp" \
	"$ip6t" -A INPUT -m ""
expect "ipv6-icmp ipv6-frag ipv6-route ipv6-opts ipv6-nonxt" "$ip6t" -A INPUT -p ipv6-
expect "icmp6-no-route icmp6-adm-prohibited icmp6-addr-unreachable icmp6-port-unreachable
	icmp6-policy-fail icmp6-reject-route tcp-reset" "$ip6t" -A INPUT -j REJECT --reject-with ""
expect "--icmpv6-type" "$ip6t" -A INPUT -p ipv6-icmp --icmpv6
expect "neighbour-solicitation neighbour-advertisement" "$ip6t" -A INPUT -p ipv6-icmp \
	--icmpv6-type neighbour-
# a command that cannot list its rules: the builtin chains
expect "INPUT FORWARD OUTPUT" /nonexistent/bpf-iptables -D ""

# the settings -T completes are the ones bpf-conntrack -T prints
want=$("$sbin/bpf-conntrack" -T | awk '{ print $1 "=" }' | sort)
got=$(complete_words "$sbin/bpf-conntrack" -T "")
[ "$got" = "$want" ] && passed=$((passed + 1)) ||
	fail "-T settings: got [$(echo $got)], want [$(echo $want)]"

# every long option of the parser is offered in some context
offered=$( {
	complete_words "$ipt" ""
	complete_words "$ipt" -A INPUT ""
	complete_words "$ipt" --log-follow ""
	for m in addrtype comment conntrack icmp iprange length limit mac mark multiport recent state tcp udp; do
		complete_words "$ipt" -A INPUT -m "$m" ""
	done
	complete_words "$sbin/bpf-ip6tables" -A INPUT -m icmp6 ""
	for t in LOG NFLOG REJECT TCPMSS; do
		complete_words "$ipt" -A INPUT -j "$t" ""
	done
} | sort -u)
# the option tables: parser/cmd.c's, and each extension's (parser/ext/*.c)
defined=$( {
	sed -n 's/^\t{ "\([a-z0-9-]*\)",.*TOK_.*/\1/p' "$src/parser/cmd.c"
	sed -n 's/^\t{ \(\.name = \)\?"\([a-z0-9-]*\)", *\(\.has_arg = \)\?\(true\|false\).*/\2/p' \
		"$src"/parser/ext/*.c
} | sort -u)
[ "$(wc -l <<<"$defined")" -gt 60 ] || fail "could not read the parser's option tables"
for o in $defined; do
	case $o in ipv6) continue ;; esac	# refused: IPv4 only
	grep -qx -- "--$o" <<<"$offered" || fail "--$o (parser) is never offered"
done
passed=$((passed + 1))

# every option offered after -m NAME / -j NAME is one the command accepts there
for ext in addrtype comment conntrack icmp iprange length limit mac mark multiport recent state tcp udp \
	   LOG NFLOG REJECT TCPMSS; do
	case $ext in
	[A-Z]*) ctx=(-j "$ext") ;;
	tcp|udp|icmp) ctx=(-p "$ext" -m "$ext") ;;
	multiport) ctx=(-p tcp -m multiport) ;;
	*) ctx=(-m "$ext") ;;
	esac
	for o in $(complete_words "$ipt" -A INPUT "${ctx[@]}" --); do
		msg=$("$ipt" -A INPUT "${ctx[@]}" "$o" 2>&1 >/dev/null) || true
		case $msg in
		*"unknown option \"$o\""*) fail "$o offered after ${ctx[*]} is refused: $msg" ;;
		esac
	done
done
passed=$((passed + 1))

# the same for bpf-ip6tables' own match
for o in $(complete_words "$ip6t" -A INPUT -p ipv6-icmp -m icmp6 --); do
	msg=$("$ip6t" -A INPUT -p ipv6-icmp -m icmp6 "$o" 2>&1 >/dev/null) || true
	case $msg in
	*"unknown option \"$o\""*) fail "$o offered after -m icmp6 is refused: $msg" ;;
	esac
done
passed=$((passed + 1))

echo "$passed passed, $fails failed"
[ "$fails" -eq 0 ]
