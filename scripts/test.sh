#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite through CTest.
# Needs root: the compatibility tests ask the kernel's iptables-legacy, in
# throw-away network namespaces, what the right answer is.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build
cd build
# -j3: the tests that may run beside others do, three at a time on the 2 CPUs
# (most of an end-to-end test's time is waiting: replies, timeouts; its CPU is a
# third of it); test/tests.cmake's RUN_SERIAL marks the ones that must run alone
ctest --output-on-failure -j3 "$@"
