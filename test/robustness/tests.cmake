# SPDX-License-Identifier: GPL-2.0
# Robustness (issue 6, part B): bad input, hostile packets, isolation and
# privilege, resource limits. Root and BPF; they fail (never skip) without.
set(RB ${CMAKE_CURRENT_SOURCE_DIR}/test/robustness)

# every bad command line / restore file of a table against iptables-legacy:
# exit status, message, nothing changed (save -c, state bytes, generation)
add_test(NAME robustness.bad_input
         COMMAND ${Python3_EXECUTABLE} ${RB}/bad_input.py --bin ${CMAKE_BINARY_DIR})
set_tests_properties(robustness.bad_input PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
