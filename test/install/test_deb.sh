#!/usr/bin/env bash
# The Debian package: built with dpkg-buildpackage from a copy of the source
# tree (debhelper, cmake on ninja, -j2), installed with dpkg -i: the commands in
# /usr/sbin run, the man pages, completion and units are where Debian wants
# them, the units are neither enabled nor started; then removed and purged with
# nothing left behind. The package is purged on exit whatever happens.
#   test_deb.sh SOURCE_DIR               both parts
#   test_deb.sh SOURCE_DIR --build DIR   the build and what the package holds,
#                                        the .deb left in DIR (changes nothing
#                                        on the machine: runs beside other tests)
#   test_deb.sh SOURCE_DIR --install DIR the install, of DIR's .deb (alone)
# Needs root; the install refuses to run where bpf-iptables is installed already.
set -euo pipefail
src=${1:?usage: test_deb.sh SOURCE_DIR [--build DIR | --install DIR]}
part=${2:-both}
case $part in
both) work=$(mktemp -d) ;;
--build|--install) work=${3:?usage: test_deb.sh SOURCE_DIR [--build DIR | --install DIR]}
	[ "$part" = --install ] || rm -rf "$work"
	mkdir -p "$work" ;;
*) echo "usage: test_deb.sh SOURCE_DIR [--build DIR | --install DIR]" >&2; exit 2 ;;
esac
pkg=bpf-iptables
state=$(mktemp -d)
ours=
cleanup() {
	[ -n "$ours" ] && dpkg --purge "$pkg" >/dev/null 2>&1
	[ "$part" = both ] && rm -rf "$work"
	rm -rf "$state"
}
trap cleanup EXIT

fails=0 passed=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { passed=$((passed + 1)); }
installed() { dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed; }

# this machine's own bpf-iptables (a package or `cmake --install --prefix /usr`)
# is not ours to replace and purge
if [ "$part" != --build ] && { installed || [ -e /usr/sbin/bpf-iptables ]; }; then
	echo "SKIP: bpf-iptables is installed on this machine already"
	exit 77
fi

if [ "$part" != --install ]; then
	# debian/control's Build-Depends are setup.sh's build packages
	deps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$src/debian/control" |
		sed '$d; s/^Build-Depends://; s/([^)]*)//g' | tr ', ' '\n\n' | sed '/^$/d' |
		grep -v '^debhelper-compat$' | sort)
	setup=$(sed -n '/^BUILD_PKGS=(/,/)/p' "$src/scripts/setup.sh" |
		sed 's/^BUILD_PKGS=(//; s/)//' | tr ' \t' '\n\n' | sed '/^$/d' |
		grep -v '^build-essential$' | sort)
	[ "$deps" = "$setup" ] && ok ||
		fail "Build-Depends [$(echo $deps)] != setup.sh BUILD_PKGS [$(echo $setup)]"

	# build in a copy: the files git knows, and new ones it does not ignore
	mkdir "$work/src"
	if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$src" ls-files -z --cached --others --exclude-standard |
			tar -C "$src" --null -T - -cf - | tar -C "$work/src" -xf -
	else
		tar -C "$src" --exclude='./build*' -cf - . | tar -C "$work/src" -xf -
	fi
	t0=$(date +%s)
	# the copy has no ../shared beside it: the unit tests read the conformance data
	# from where the source tree's tests do
	conf=${CONFORMANCE_DIR:-$src/../shared/conformance}
	[ -d "$conf" ] && export BPFIPT_CONFORMANCE_DIR=$(cd "$conf" && pwd)
	if ! (cd "$work/src" && dpkg-buildpackage -us -uc -b -j2) >"$work/build.log" 2>&1; then
		tail -40 "$work/build.log"
		echo "FAIL: dpkg-buildpackage (log above)"
		exit 1
	fi
	echo "dpkg-buildpackage -b -j2: $(($(date +%s) - t0)) s"
	deb=$(ls "$work"/${pkg}_*.deb)

	# what the package holds
	contents=$(dpkg-deb -c "$deb" | awk '{ print $6 ($7 ? " " $7 " " $8 : "") }')
	for f in ./usr/sbin/bpf-iptables \
		 "./usr/sbin/bpf-iptables-save -> bpf-iptables" \
		 "./usr/sbin/bpf-iptables-restore -> bpf-iptables" \
		 "./usr/sbin/bpf-conntrack -> bpf-iptables" \
		 "./usr/sbin/bpf-ip6tables -> bpf-iptables" \
		 "./usr/sbin/bpf-ip6tables-save -> bpf-iptables" \
		 "./usr/sbin/bpf-ip6tables-restore -> bpf-iptables" \
		 ./usr/share/man/man8/bpf-iptables.8.gz ./usr/share/man/man8/bpf-iptables-save.8.gz \
		 ./usr/share/man/man8/bpf-iptables-restore.8.gz ./usr/share/man/man8/bpf-conntrack.8.gz \
		 ./lib/systemd/system/bpf-iptables.service ./lib/systemd/system/bpf-iptables-save.service \
		 ./lib/systemd/system/bpf-iptables-log.service ./usr/libexec/bpf-iptables/rules-file \
		 ./usr/share/bash-completion/completions/bpf-iptables \
		 "./usr/share/bash-completion/completions/bpf-conntrack -> bpf-iptables" \
		 ./usr/share/doc/bpf-iptables/copyright ./usr/share/doc/bpf-iptables/README.Debian; do
		grep -qxF -- "$f" <<<"$contents" && ok || fail "the package lacks $f"
	done

	# installing must not enable or start anything
	dpkg-deb -e "$deb" "$work/control"
	if grep -hE 'deb-systemd-invoke +(start|restart|try-restart)|systemctl +(start|restart)' \
		"$work"/control/{preinst,postinst} 2>/dev/null; then
		fail "the maintainer scripts start a unit"
	else
		ok
	fi
	# an enable only under "was-enabled" (the administrator's choice, kept on upgrade)
	if grep -B3 'deb-systemd-helper enable' "$work/control/postinst" | grep -q was-enabled &&
		[ "$(grep -c 'deb-systemd-helper enable' "$work/control/postinst")" = \
		  "$(grep -c 'was-enabled' "$work/control/postinst")" ]; then
		ok
	else
		fail "postinst enables a unit"
	fi
fi
if [ "$part" = --build ]; then
	rm -rf "$work/src"	# the .deb and the build's log stay
	echo "$passed passed, $fails failed"
	[ "$fails" -eq 0 ]
	exit
fi
deb=$(ls "$work"/${pkg}_*.deb) || { echo "FAIL: no package in $work"; exit 1; }

ours=1
dpkg -i "$deb" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i"; exit 1; }
installed && ok || fail "not installed after dpkg -i"
files=$(dpkg -L "$pkg")

# the installed commands run, from anywhere, by their names
cd /
/usr/sbin/bpf-iptables -V | grep -qx 'bpf-iptables v[0-9.]* (bpf)' && ok || fail "-V"
/usr/sbin/bpf-iptables -h | grep -q -- '--log-follow' && ok || fail "-h"
/usr/sbin/bpf-conntrack -V | grep -q '^bpf-conntrack v' && ok || fail "bpf-conntrack -V"
# the rule language only, in a state of our own: nothing touches this host
export BPF_IPTABLES_STATE_DIR=$state BPF_IPTABLES_DATAPLANE=off
/usr/sbin/bpf-iptables -A INPUT -p tcp --dport 22 -j ACCEPT
/usr/sbin/bpf-iptables-save | grep -qx -- '-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT' && ok ||
	fail "the rule typed is not saved"
printf '*filter\n:INPUT DROP [0:0]\nCOMMIT\n' | /usr/sbin/bpf-iptables-restore
[ "$(/usr/sbin/bpf-iptables -S INPUT)" = "-P INPUT DROP" ] && ok || fail "restore"
/usr/sbin/bpf-ip6tables -A INPUT -s 2001:db8::/32 -p ipv6-icmp -j ACCEPT
/usr/sbin/bpf-ip6tables-save | grep -qx -- '-A INPUT -s 2001:db8::/32 -p ipv6-icmp -j ACCEPT' && ok ||
	fail "the IPv6 rule typed is not saved"
[ "$(/usr/sbin/bpf-iptables -S INPUT)" = "-P INPUT DROP" ] && ok || fail "bpf-ip6tables changed IPv4"
for p in bpf-ip6tables bpf-ip6tables-save bpf-ip6tables-restore; do
	[ -n "$(man -w 8 "$p" 2>/dev/null)" ] && ok || fail "man -w $p: $(man -w 8 "$p" 2>&1)"
done

# man finds the pages; the units verify with the installed paths
for p in bpf-iptables bpf-iptables-save bpf-iptables-restore bpf-conntrack; do
	[ "$(man -w 8 "$p" 2>/dev/null)" = "/usr/share/man/man8/$p.8.gz" ] && ok ||
		fail "man -w $p: $(man -w 8 "$p" 2>&1)"
done
if out=$(cd "$work" && systemd-analyze verify /lib/systemd/system/bpf-iptables.service \
	/lib/systemd/system/bpf-iptables-save.service \
	/lib/systemd/system/bpf-iptables-log.service 2>&1) && [ -z "$out" ]; then
	ok
else
	fail "systemd-analyze verify of the installed units: $out"
fi
grep -qx 'ExecStart=/usr/sbin/bpf-iptables --watch' /lib/systemd/system/bpf-iptables.service &&
	ok || fail "bpf-iptables.service does not run /usr/sbin/bpf-iptables --watch"
# not enabled: no link to them anywhere in /etc/systemd
links=$(find /etc/systemd -lname '*bpf-iptables*' 2>/dev/null)
[ -z "$links" ] && ok || fail "units enabled: $links"

# remove, purge: nothing of the package is left
dpkg -r "$pkg" >/dev/null
[ ! -e /usr/sbin/bpf-iptables ] && ok || fail "/usr/sbin/bpf-iptables left after dpkg -r"
dpkg --purge "$pkg" >/dev/null
ours=
if dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qv not-installed; then
	fail "dpkg still knows $pkg: $(dpkg-query -W -f='${db:Status-Status}' "$pkg")"
else
	ok
fi
left=
while read -r f; do
	[ -d "$f" ] && continue	# /usr/sbin, /lib and the like are shared
	[ -e "$f" ] || [ -L "$f" ] && left+=" $f"
done <<<"$files"
for d in /usr/libexec/bpf-iptables /usr/share/doc/bpf-iptables; do
	[ -e "$d" ] && left+=" $d"
done
ls /var/lib/systemd/deb-systemd-helper-*/*bpf-iptables* >/dev/null 2>&1 &&
	left+=" $(ls -d /var/lib/systemd/deb-systemd-helper-*/*bpf-iptables*)"
[ -z "$left" ] && ok || fail "left after purge:$left"

echo "$passed passed, $fails failed"
[ "$fails" -eq 0 ]
