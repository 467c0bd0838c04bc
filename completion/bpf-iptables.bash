# SPDX-License-Identifier: GPL-2.0
# bash completion for bpf-iptables, bpf-iptables-save, bpf-iptables-restore,
# bpf-conntrack and the IPv6 commands bpf-ip6tables, bpf-ip6tables-save,
# bpf-ip6tables-restore (the same lists with ip6tables' icmp6, protocols and
# REJECT types). Installed once per command name: bash-completion loads
# completions/NAME the first time NAME is completed. Needs nothing from
# bash-completion itself.
#
# The option lists are those of the parser (parser/cmd.c, parser/ext/*.c,
# bpf-iptables/cli.c, bpf-iptables/ct_cli.c); test/install/test_completion.sh
# checks that they are complete and that the commands accept every one.

_bpfipt_matches='addrtype comment conntrack icmp iprange length limit mac mark multiport recent state tcp udp'
_bpfipt_targets='ACCEPT DROP RETURN REJECT LOG NFLOG TCPMSS'
_bpfipt_protocols='tcp udp udplite icmp sctp dccp gre esp ah all'
_bpfipt_matches6='addrtype comment conntrack icmp6 iprange length limit mac mark multiport recent state tcp udp'
_bpfipt_protocols6='tcp udp udplite ipv6-icmp icmpv6 sctp dccp esp ah ipv6-frag ipv6-route ipv6-opts ipv6-nonxt all'

# The options of each match and target (-m NAME, -j NAME)
_bpfipt_ext_opts() {
	case $1 in
	tcp) echo --source-port --sport --destination-port --dport --syn --tcp-flags \
		--tcp-option ;;
	udp) echo --source-port --sport --destination-port --dport ;;
	icmp) echo --icmp-type ;;
	icmp6|icmpv6|ipv6-icmp) echo --icmpv6-type ;;
	multiport) echo --source-ports --sports --destination-ports --dports --ports ;;
	conntrack) echo --ctstate --ctproto --ctorigsrc --ctorigdst --ctreplsrc --ctrepldst \
		--ctorigsrcport --ctorigdstport --ctreplsrcport --ctrepldstport --ctstatus \
		--ctexpire --ctdir ;;
	state) echo --state ;;
	iprange) echo --src-range --dst-range ;;
	comment) echo --comment ;;
	limit) echo --limit --limit-burst ;;
	mark) echo --mark ;;
	length) echo --length ;;
	mac) echo --mac-source ;;
	addrtype) echo --src-type --dst-type --limit-iface-in --limit-iface-out ;;
	recent) echo --set --rcheck --update --remove --seconds --reap --hitcount --rttl --name \
		--rsource --rdest --mask ;;
	LOG) echo --log-level --log-prefix --log-tcp-sequence --log-tcp-options \
		--log-ip-options --log-uid --log-macdecode ;;
	NFLOG) echo --nflog-group --nflog-prefix --nflog-range --nflog-size \
		--nflog-threshold ;;
	REJECT) echo --reject-with ;;
	TCPMSS) echo --set-mss --clamp-mss-to-pmtu ;;
	esac
}

# COMPREPLY = the words of $1 that start with $cur
_bpfipt_words() {
	local IFS=$' \t\n'
	COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

# The same for a comma-separated list: complete the element after the last comma
_bpfipt_list() {
	local IFS=$' \t\n' head= last=$cur
	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		last=${cur##*,}
	fi
	COMPREPLY=($(compgen -P "$head" -W "$1" -- "$last"))
}

_bpfipt_interfaces() {
	local d names=
	for d in /sys/class/net/*; do
		[ -e "$d" ] && names+=" ${d##*/}"
	done
	_bpfipt_words "$names"
}

# The chains of this network namespace from `CMD -S` (-P and -N lines); the
# builtin chains when the command cannot run (not root, no state).
# $2 = user: the user-defined chains only.
_bpfipt_chains() {
	local out
	out=$("$1" -S 2>/dev/null) || out=$'-P INPUT\n-P FORWARD\n-P OUTPUT'
	if [ "${2-}" = user ]; then
		awk '$1 == "-N" { print $2 }' <<<"$out"
	else
		awk '$1 == "-P" || $1 == "-N" { print $2 }' <<<"$out"
	fi
}

_bpf_iptables() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prev2= i w have_cmd= exts= target=
	local matches=$_bpfipt_matches protocols=$_bpfipt_protocols v6=
	case ${1##*/} in
	bpf-ip6tables*) v6=1 matches=$_bpfipt_matches6 protocols=$_bpfipt_protocols6 ;;
	esac
	[ "$COMP_CWORD" -ge 2 ] && prev2=${COMP_WORDS[COMP_CWORD-2]}
	COMPREPLY=()

	# not an iptables option: the LOG reader takes its own options
	if [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[1]}" = --log-follow ]; then
		case $prev in
		--count|--timeout) return ;;
		esac
		_bpfipt_words '--syslog --count --timeout'
		return
	fi

	# what the words before say: the command, the matches (-m, and the one -p
	# loads by itself, as iptables does), the target
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-[ACDIRLSFZNXEP]*|--append|--check|--delete|--insert|--replace|--list|\
		--list-rules|--flush|--zero|--new-chain|--delete-chain|--rename-chain|--policy)
			have_cmd=1 ;;
		-m|--match) exts+=" ${COMP_WORDS[i+1]}" ;;
		-p|--protocol) exts+=" ${COMP_WORDS[i+1]}" ;;
		-j|--jump) target=${COMP_WORDS[i+1]} ;;
		esac
	done

	case $prev in
	# a chain, optional after -L, -S, -F, -Z, -X: an option may come instead
	-A|--append|-C|--check|-D|--delete|-I|--insert|-R|--replace|-L|--list|\
	-S|--list-rules|-F|--flush|-Z|--zero|-P|--policy)
		if [[ $cur != -* ]]; then
			_bpfipt_words "$(_bpfipt_chains "$1")"
			return
		fi ;;
	-X|--delete-chain|-E|--rename-chain|-g|--goto)
		if [[ $cur != -* ]]; then
			_bpfipt_words "$(_bpfipt_chains "$1" user)"
			return
		fi ;;
	-j|--jump)
		_bpfipt_words "$_bpfipt_targets $(_bpfipt_chains "$1" user)"
		return ;;
	-m|--match) _bpfipt_words "$matches"; return ;;
	-p|--protocol|--ctproto) _bpfipt_words "$protocols"; return ;;
	-t|--table) _bpfipt_words filter; return ;;
	-i|--in-interface|-o|--out-interface) _bpfipt_interfaces; return ;;
	--reject-with)
		if [ -n "$v6" ]; then
			_bpfipt_words 'icmp6-no-route icmp6-adm-prohibited icmp6-addr-unreachable
				icmp6-port-unreachable icmp6-policy-fail icmp6-reject-route tcp-reset'
			return
		fi
		_bpfipt_words 'icmp-net-unreachable icmp-host-unreachable
			icmp-port-unreachable icmp-proto-unreachable icmp-net-prohibited
			icmp-host-prohibited icmp-admin-prohibited tcp-reset'
		return ;;
	--icmpv6-type)
		_bpfipt_words 'destination-unreachable no-route communication-prohibited
			beyond-scope address-unreachable port-unreachable failed-policy reject-route
			packet-too-big time-exceeded ttl-zero-during-transit
			ttl-zero-during-reassembly parameter-problem bad-header unknown-header-type
			unknown-option echo-request echo-reply router-solicitation
			router-advertisement neighbour-solicitation neighbour-advertisement redirect'
		return ;;
	--log-level)
		_bpfipt_words 'emerg alert crit error warning notice info debug'
		return ;;
	--ctstate) _bpfipt_list 'INVALID NEW ESTABLISHED RELATED UNTRACKED SNAT DNAT'; return ;;
	--state) _bpfipt_list 'INVALID NEW ESTABLISHED RELATED UNTRACKED'; return ;;
	--src-type|--dst-type) _bpfipt_list 'UNSPEC UNICAST LOCAL BROADCAST ANYCAST MULTICAST
		BLACKHOLE UNREACHABLE PROHIBIT THROW NAT XRESOLVE'; return ;;
	--ctstatus) _bpfipt_list 'NONE EXPECTED SEEN_REPLY ASSURED CONFIRMED'; return ;;
	--ctdir) _bpfipt_words 'ORIGINAL REPLY'; return ;;
	--tcp-flags) _bpfipt_list 'SYN ACK FIN RST URG PSH ALL NONE'; return ;;
	--icmp-type)
		_bpfipt_words 'any echo-reply destination-unreachable network-unreachable
			host-unreachable protocol-unreachable port-unreachable
			fragmentation-needed source-route-failed network-unknown host-unknown
			network-prohibited host-prohibited TOS-network-unreachable
			TOS-host-unreachable communication-prohibited host-precedence-violation
			precedence-cutoff source-quench redirect network-redirect host-redirect
			TOS-network-redirect TOS-host-redirect echo-request router-advertisement
			router-solicitation time-exceeded ttl-zero-during-transit
			ttl-zero-during-reassembly parameter-problem ip-header-bad
			required-option-missing timestamp-request timestamp-reply
			address-mask-request address-mask-reply'
		return ;;
	# options whose argument is a value to type
	-s|--source|--src|-d|--destination|--dst|-c|--set-counters|-w|--wait|\
	-W|--wait-interval|-M|--modprobe|--sport|--source-port|--dport|\
	--destination-port|--sports|--source-ports|--dports|--destination-ports|--ports|\
	--tcp-option|--ctorig*|--ctrepl*|--ctexpire|--src-range|--dst-range|--comment|\
	--limit|--limit-burst|--mark|--length|--mac-source|--log-prefix|--nflog-*|\
	--seconds|--hitcount|--name|--mask|\
	--set-mss)
		return ;;
	esac
	# -P CHAIN TARGET, --tcp-flags MASK COMP
	case $prev2 in
	-P|--policy) _bpfipt_words 'ACCEPT DROP'; return ;;
	--tcp-flags) _bpfipt_list 'SYN ACK FIN RST URG PSH ALL NONE'; return ;;
	esac

	local opts
	if [ -z "$have_cmd" ]; then
		opts='-A --append -C --check -D --delete -I --insert -R --replace -L --list
			-S --list-rules -F --flush -Z --zero -N --new-chain -X --delete-chain
			-E --rename-chain -P --policy -h --help -V --version
			--log-follow --unload --watch'
	fi
	# the family's own: -4 (IPv4, which has -f) or -6 (IPv6, no -f)
	if [ -n "$v6" ]; then
		opts+=' -6 --ipv6'
	else
		opts+=' -4 --ipv4 -f --fragment'
	fi
	opts+=' -s --source --src -d --destination --dst -p --protocol
		-i --in-interface -o --out-interface -j --jump -g --goto
		-m --match -c --set-counters -t --table -n --numeric -v --verbose -x --exact
		--line-numbers -w --wait -W --wait-interval -M --modprobe'
	for w in $exts $target; do
		opts+=" $(_bpfipt_ext_opts "$w")"
	done
	_bpfipt_words "$opts"
}

_bpf_iptables_save() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	case $prev in
	-t|--table) _bpfipt_words filter; return ;;
	-M|--modprobe) return ;;
	esac
	_bpfipt_words '-c --counters -t --table -M --modprobe -V --version -h --help'
}

_bpf_iptables_restore() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local IFS=$'\n'
	COMPREPLY=()
	case $prev in
	-T|--table) _bpfipt_words filter; return ;;
	-w|--wait|-W|--wait-interval|-M|--modprobe) return ;;
	esac
	if [[ $cur == -* ]]; then
		_bpfipt_words '-c --counters -v --verbose -t --test -n --noflush -w --wait
			-W --wait-interval -T --table -M --modprobe -V --version -h --help'
		return
	fi
	# the file to restore
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$cur"))
}

_bpf_conntrack() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local i w cmd=
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-T|--tunables) cmd=T ;;
		esac
	done
	case $prev in
	-p|--proto|--protonum) _bpfipt_words "$_bpfipt_protocols"; return ;;
	--state)
		_bpfipt_words 'NONE SYN_SENT SYN_RECV ESTABLISHED FIN_WAIT CLOSE_WAIT LAST_ACK
			TIME_WAIT CLOSE SYN_SENT2'
		return ;;
	-s|--src|--orig-src|-d|--dst|--orig-dst|-r|--reply-src|-q|--reply-dst|--sport|\
	--orig-port-src|--dport|--orig-port-dst|--reply-port-src|--reply-port-dst)
		return ;;
	-L|--dump|-C|--count|-F|--flush|-D|--delete)
		if [[ $cur != -* ]]; then
			_bpfipt_words conntrack
			return
		fi ;;
	esac
	if [ "$cmd" = T ] && [[ $cur != -* ]]; then
		# the settings, as name=value
		compopt -o nospace 2>/dev/null
		local IFS=$' \t\n'
		COMPREPLY=($(compgen -S = -W 'max tcp_timeout_unacknowledged
			tcp_timeout_syn_sent tcp_timeout_syn_recv tcp_timeout_established
			tcp_timeout_fin_wait tcp_timeout_close_wait tcp_timeout_last_ack
			tcp_timeout_time_wait tcp_timeout_close tcp_timeout_syn_sent2
			udp_timeout udp_timeout_stream icmp_timeout icmpv6_timeout generic_timeout gre_timeout
			gre_timeout_stream' -- "$cur"))
		return
	fi
	_bpfipt_words '-L --dump -C --count -F --flush -D --delete -T --tunables --sweep
		-h --help -V --version -s --src --orig-src -d --dst --orig-dst -r --reply-src
		-q --reply-dst -p --protonum --proto --sport --orig-port-src --dport
		--orig-port-dst --reply-port-src --reply-port-dst --state'
}

complete -F _bpf_iptables bpf-iptables bpf-ip6tables
complete -F _bpf_iptables_save bpf-iptables-save bpf-ip6tables-save
complete -F _bpf_iptables_restore bpf-iptables-restore bpf-ip6tables-restore
complete -F _bpf_conntrack bpf-conntrack
