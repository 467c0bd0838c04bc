#!/usr/bin/env bash
# Installs every dependency from Debian's packages, builds, and runs the demo.
# Idempotent: run it again any time. Needs root (apt-get, namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."

# What building needs: debian/control's Build-Depends lists the same packages
# (the install.deb test checks it).
BUILD_PKGS=(build-essential cmake ninja-build pkg-config clang llvm libbpf-dev bpftool
            libelf-dev zlib1g-dev bison flex libnl-3-dev libnl-route-3-dev check python3)
# What the tests use besides: iptables-legacy and the kernel's conntrack as
# oracles, traffic tools, fail2ban; man (groff), bash-completion, systemd-analyze
# and debhelper for the install tests (man pages, completion, units, the .deb);
# the sanitizer and libFuzzer runtimes of clang for the fuzz target (scripts/fuzz.sh);
# gnuplot-nox (the plots), util-linux (taskset) and ethtool (GRO for the XDP-frame
# drop flood) for the benchmark suite (bench/).
TEST_PKGS=(iptables ipset nftables iproute2 iputils-ping iperf3 hping3 tcpdump netbase
           conntrack fail2ban man-db groff-base bash-completion systemd debhelper dpkg-dev
           libclang-rt-14-dev gnuplot-nox util-linux ethtool)
PKGS=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}")

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
	# fail2ban is here for its end-to-end test, which runs a server of its own in
	# a namespace; the system-wide service the package enables would ban on the host
	if [[ " ${missing[*]} " == *" fail2ban "* ]]; then
		invoke-rc.d fail2ban stop >/dev/null 2>&1 || true
		systemctl disable fail2ban >/dev/null 2>&1 || true
		update-rc.d fail2ban disable >/dev/null 2>&1 || true
	fi
fi

cmake -S . -B build -G Ninja >/dev/null
cmake --build build

if [ "${1:-}" != "--no-demo" ]; then
	bash scripts/demo.sh
fi
