# SPDX-License-Identifier: GPL-2.0
# Reliability (issue 6, part A): atomic updates under load, the writer lock,
# crashes. Root, BPF, namespaces; about 3 minutes together on 2 cores. Longer
# runs: REL_SWAPS (per mode), REL_RATE, REL_PROCS, REL_CMDS, REL_CRASH_RANDOM,
# REL_CRASH_SINGLE, REL_CRASH_RULES, REL_SEED (docs/reliability.md).
set(REL_DIR ${CMAKE_CURRENT_SOURCE_DIR}/test/reliability)
# swap.tc: every switch drops the generation it leaves (--spare-keep 1), as a
# large ruleset's do; swap.xdp keeps it, as a small one's do
add_test(NAME reliability.swap.xdp
         COMMAND ${Python3_EXECUTABLE} ${REL_DIR}/swap.py --bin ${CMAKE_BINARY_DIR}
                 --ingress xdp)
add_test(NAME reliability.swap.tc
         COMMAND ${Python3_EXECUTABLE} ${REL_DIR}/swap.py --bin ${CMAKE_BINARY_DIR}
                 --ingress tc --spare-keep 1)
add_test(NAME reliability.concurrency
         COMMAND ${Python3_EXECUTABLE} ${REL_DIR}/concurrency.py --bin ${CMAKE_BINARY_DIR})
add_test(NAME reliability.crash
         COMMAND ${Python3_EXECUTABLE} ${REL_DIR}/crash.py --bin ${CMAKE_BINARY_DIR})
set_tests_properties(reliability.swap.xdp reliability.swap.tc reliability.concurrency
                     reliability.crash PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
