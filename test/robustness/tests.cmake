# SPDX-License-Identifier: GPL-2.0
# Robustness (issue 6, part B): bad input, hostile packets, isolation and
# privilege, resource limits. Root and BPF; they fail (never skip) without.
set(RB ${CMAKE_CURRENT_SOURCE_DIR}/test/robustness)

# every bad command line / restore file of a table against iptables-legacy:
# exit status, message, nothing changed (save -c, state bytes, generation).
# Beside other tests: namespaces, state and iptables-legacy's lock file of its own
add_test(NAME robustness.bad_input
         COMMAND ${Python3_EXECUTABLE} ${RB}/bad_input.py --bin ${CMAKE_BINARY_DIR})
set_tests_properties(robustness.bad_input PROPERTIES TIMEOUT 300)

# two namespaces: rules, counters, conntrack and programs of one are invisible
# to and unchangeable from the other; state 0700/0600; a non-root user gets
# iptables' permission error and changes nothing; unsafe state dirs refused
add_test(NAME robustness.isolation
         COMMAND bash ${RB}/test_isolation.sh ${CMAKE_BINARY_DIR})
set_tests_properties(robustness.isolation PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)

# every documented limit exceeded (clear error at load time, the old ruleset
# still running whole) and huge inputs (1M-line restore, 64 KiB arguments,
# 1 000 nested chains) with their peak RSS
add_test(NAME robustness.limits
         COMMAND ${Python3_EXECUTABLE} ${RB}/limits.py --bin ${CMAKE_BINARY_DIR})
set_tests_properties(robustness.limits PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)

# hostile packets on the wire, iptables-legacy and bpf-iptables side by side
# (AF_PACKET frames: bad IHL/checksums/lengths, TCP data offsets, overlapping
# fragments, ICMP errors quoting garbage), XDP and tc ingress
add_test(NAME robustness.hostile_wire
         COMMAND ${Python3_EXECUTABLE} ${RB}/hostile_wire.py --bin ${CMAKE_BINARY_DIR})
set_tests_properties(robustness.hostile_wire PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# libFuzzer smoke (clang, ASan/UBSan, its own build directory): 20 s over the
# conformance seeds; the 30-minute run is scripts/fuzz.sh 1800
add_test(NAME robustness.fuzz_smoke
         COMMAND env FUZZ_BUILD_DIR=${CMAKE_BINARY_DIR}/fuzz
                 CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR}
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fuzz.sh 20)
set_tests_properties(robustness.fuzz_smoke PROPERTIES TIMEOUT 600)
