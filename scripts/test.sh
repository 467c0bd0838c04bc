#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite through CTest.
# Needs root: the compatibility tests ask the kernel's iptables-legacy, in
# throw-away network namespaces, what the right answer is.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build
cd build
# -j2: the tests that may run beside another one do (test/tests.cmake: RUN_SERIAL
# marks the ones that must run alone)
ctest --output-on-failure -j2 "$@"
