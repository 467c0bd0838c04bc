# IPv6 cases for conformance6.py, in the format of the upstream .t files
# (RULE;SAVED;RESULT): what ip6tables-legacy 1.8.9 does with them, checked
# against it live at every run, and bpf-ip6tables compared with it.
# Addresses and prefixes, masks in address form, lists, -p with the IPv6 names
# and the extension-header protocols, -f (refused by ip6tables), icmp6,
# REJECT's icmp6 types, and the extensions with IPv6 addresses.
:INPUT
-s 2001:db8::1 -j ACCEPT;-s 2001:db8::1/128 -j ACCEPT;OK
-s 2001:db8::1/64 -j ACCEPT;-s 2001:db8::/64 -j ACCEPT;OK
-d 2001:db8::/32 -j DROP;=;OK
! -s ::1 -j DROP;! -s ::1/128 -j DROP;OK
! -d fe80::/10 -j DROP;=;OK
-s ::/0 -j ACCEPT;-j ACCEPT;OK
! -s ::/0 -j ACCEPT;=;OK
-s 2001:db8::/ffff:ffff:: -j ACCEPT;-s 2001:db8::/32 -j ACCEPT;OK
-s 2001:db8::/ffff:0:ffff:: -j ACCEPT;-s 2001::/ffff:0:ffff:: -j ACCEPT;OK
-s ::1/0x40 -j ACCEPT;-s ::/64 -j ACCEPT;OK
-s ::1/129 -j ACCEPT;;FAIL
-s ::1/ -j ACCEPT;;FAIL
-s 1.2.3.4 -j ACCEPT;;FAIL
-s ::ffff:1.2.3.4 -j ACCEPT;-s ::ffff:1.2.3.4/128 -j ACCEPT;OK
-s ::ffff:1.2.3.0/120 -j ACCEPT;=;OK
-s 2001:DB8::A -j ACCEPT;-s 2001:db8::a/128 -j ACCEPT;OK
-s 2001:db8::1,2001:db8::2 -d ::3,::4 -j ACCEPT;;NOMATCH
! -s 2001:db8::1,2001:db8::2 -j ACCEPT;;FAIL
-s 2001:db8::1 -d 2001:db8::2 -i eth0 -p tcp --dport 22 -j ACCEPT;-s 2001:db8::1/128 -d 2001:db8::2/128 -i eth0 -p tcp -m tcp --dport 22 -j ACCEPT;OK
-p ipv6-icmp -j ACCEPT;=;OK
-p icmpv6 -j ACCEPT;-p ipv6-icmp -j ACCEPT;OK
-p 58 -j ACCEPT;-p ipv6-icmp -j ACCEPT;OK
! -p ipv6-icmp -j ACCEPT;=;OK
-p all -j ACCEPT;-j ACCEPT;OK
-p 0 -j ACCEPT;-j ACCEPT;OK
! -p all -j ACCEPT;;FAIL
-p icmp -j ACCEPT;=;OK
-p ipv6-frag -j ACCEPT;=;OK
-p ipv6-route -j ACCEPT;=;OK
-p ipv6-opts -j ACCEPT;=;OK
-p ipv6-nonxt -j ACCEPT;=;OK
-p 0 -j DROP;-j DROP;OK
-p hopopt -j DROP;-j DROP;OK
-p 43 -j DROP;-p ipv6-route -j DROP;OK
-p 44 -j DROP;-p ipv6-frag -j DROP;OK
-p 60 -j DROP;-p ipv6-opts -j DROP;OK
-p 59 -j DROP;-p ipv6-nonxt -j DROP;OK
-p esp -j DROP;=;OK
-p ah -j DROP;=;OK
-p ipv6-mh -j DROP;-p mobility-header -j DROP;OK
-p sctp -j DROP;=;OK
-f -j DROP;;FAIL
! -f -j DROP;;FAIL
-p ipv6-icmp -m icmp6 --icmpv6-type echo-request -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT;=;OK
-p ipv6-icmp -m icmp6 --icmpv6-type 1/4 -j ACCEPT;=;OK
-p ipv6-icmp -m icmp6 --icmpv6-type port-unreachable -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 1/4 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 ! --icmpv6-type neighbour-solicitation -j ACCEPT;-p ipv6-icmp -m icmp6 ! --icmpv6-type 135 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type neighbor-advertisement -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 136 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type router-advertisement -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 134 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type 255/0:255 -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 255 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type 256 -j ACCEPT;;FAIL
-p ipv6-icmp -m icmp6 --icmpv6-type n -j ACCEPT;;FAIL
-p ipv6-icmp -m icmp6 --icmpv6-type any -j ACCEPT;;FAIL
-p ipv6-icmp -m icmp6 --icmpv6-type 1:2 -j ACCEPT;;FAIL
-p ipv6-icmp -m icmp6 --icmpv6-type 1/300 -j ACCEPT;;FAIL
-p icmpv6 --icmpv6-type echo-reply -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 129 -j ACCEPT;OK
-p 58 --icmpv6-type ping -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT;OK
-p tcp -m icmp6 --icmpv6-type 1 -j ACCEPT;;FAIL
-m icmp6 --icmpv6-type 1 -j ACCEPT;;FAIL
-p ipv6-icmp -m icmpv6 --icmpv6-type 2 -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 2 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type 1 --icmpv6-type 2 -j ACCEPT;;FAIL
-p icmp -m icmp --icmp-type 8 -j ACCEPT;;FAIL
-j REJECT;-j REJECT --reject-with icmp6-port-unreachable;OK
-j REJECT --reject-with icmp6-no-route;=;OK
-j REJECT --reject-with no-route;-j REJECT --reject-with icmp6-no-route;OK
-j REJECT --reject-with icmp6-adm-prohibited;=;OK
-j REJECT --reject-with adm-prohibited;-j REJECT --reject-with icmp6-adm-prohibited;OK
-j REJECT --reject-with icmp6-addr-unreachable;=;OK
-j REJECT --reject-with addr-unreach;-j REJECT --reject-with icmp6-addr-unreachable;OK
-j REJECT --reject-with icmp6-port-unreachable;=;OK
-j REJECT --reject-with port-unreach;-j REJECT --reject-with icmp6-port-unreachable;OK
-j REJECT --reject-with icmp6-policy-fail;=;OK
-j REJECT --reject-with policy-fail;-j REJECT --reject-with icmp6-policy-fail;OK
-j REJECT --reject-with icmp6-reject-route;=;OK
-j REJECT --reject-with reject-route;-j REJECT --reject-with icmp6-reject-route;OK
-p tcp -j REJECT --reject-with tcp-reset;=;OK
-j REJECT --reject-with tcp-reset;;FAIL
! -p tcp -j REJECT --reject-with tcp-reset;;FAIL
-j REJECT --reject-with icmp-port-unreachable;;FAIL
-j REJECT --reject-with icmp-host-prohibited;;FAIL
-j REJECT --reject-with tcp-rst;;FAIL
-j REJECT --reject-with p;-j REJECT --reject-with icmp6-port-unreachable;OK
-m iprange --src-range 2001:db8::1-2001:db8::ff -j ACCEPT;=;OK
-m iprange ! --dst-range ::1 -j ACCEPT;-m iprange ! --dst-range ::1-::1 -j ACCEPT;OK
-m iprange --src-range 1.2.3.4-1.2.3.5 -j ACCEPT;;FAIL
-m iprange --src-range ::1- -j ACCEPT;;FAIL
-m conntrack --ctorigsrc 2001:db8::1 -j ACCEPT;=;OK
-m conntrack --ctorigsrc 2001:db8::1/64 -j ACCEPT;=;OK
-m conntrack ! --ctorigdst ::1/ffff:: -j ACCEPT;-m conntrack ! --ctorigdst ::1/16 -j ACCEPT;OK
-m conntrack --ctreplsrc 2001:db8::/0 --ctrepldst ::/128 -j ACCEPT;-m conntrack --ctreplsrc 2001:db8::/0 --ctrepldst :: -j ACCEPT;OK
-m conntrack --ctorigsrc 1.2.3.4 -j ACCEPT;;FAIL
-m conntrack --ctorigsrc ::1/129 -j ACCEPT;;FAIL
-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT;-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT;OK
-m state --state INVALID -j DROP;=;OK
-j LOG --log-prefix "v6 " --log-level 6 --log-tcp-sequence --log-tcp-options --log-ip-options --log-uid --log-macdecode;=;OK
-j LOG;=;OK
-m length --length 40:1280 -j DROP;=;OK
-p tcp -m multiport --dports 22,80,443 -j ACCEPT;=;OK
-p udp -m udp --sport 53 -j ACCEPT;=;OK
-p tcp -m tcp --tcp-flags SYN,ACK SYN -j ACCEPT;=;OK
-m comment --comment "ipv6 rule" -j ACCEPT;=;OK
-m limit --limit 10/min --limit-burst 3 -j ACCEPT;=;OK
-m mark --mark 0x10/0xf0 -j ACCEPT;=;OK
-m mac --mac-source 00:11:22:33:44:55 -j ACCEPT;=;OK
-m recent --name v6 --rcheck --seconds 60 -j DROP;-m recent --rcheck --seconds 60 --name v6 --mask ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff --rsource -j DROP;OK
-m recent --set --mask ffff:ffff:ffff:ffff:: -j ACCEPT;-m recent --set --name DEFAULT --mask ffff:ffff:ffff:ffff:: --rsource -j ACCEPT;OK
-m addrtype --dst-type MULTICAST -j DROP;=;OK
-j NFLOG --nflog-group 5 --nflog-prefix v6;-j NFLOG --nflog-prefix v6 --nflog-group 5;OK
-p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1220;=;OK
-m ttl --ttl-eq 1 -j DROP;;FAIL
-j TTL --ttl-set 1;;FAIL
:FORWARD,OUTPUT
-s 2001:db8::1/64 -d 2001:db8:1::/48 -j ACCEPT;-s 2001:db8::/64 -d 2001:db8:1::/48 -j ACCEPT;OK
-p ipv6-icmp -m icmp6 --icmpv6-type packet-too-big -j ACCEPT;-p ipv6-icmp -m icmp6 --icmpv6-type 2 -j ACCEPT;OK
-p tcp -j REJECT --reject-with tcp-reset;=;OK
-j REJECT --reject-with icmp6-adm-prohibited;=;OK
-f -j DROP;;FAIL
