# SPDX-License-Identifier: GPL-2.0
# Every test of the project, registered with CTest.

set(BPFIPT_CONFORMANCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/../shared/conformance"
    CACHE PATH "upstream iptables conformance data (iptables-t/*.t, dumps/)")

# ---- Check unit tests: one executable per suite ----
file(GLOB UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test/unit/test_*.c)
foreach(src ${UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE bpfipt PkgConfig::CHECK)
  add_test(NAME unit.${name} COMMAND ${name})
  set_tests_properties(unit.${name} PROPERTIES
    ENVIRONMENT "CK_FORK=yes;IPT_CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR}")
endforeach()

# ---- data plane on the real kernel ----
include(${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/tests.cmake)

find_package(Python3 COMPONENTS Interpreter REQUIRED)

# ---- install: `cmake --install` into a fresh prefix: self-contained commands,
# man pages that render without a warning and document the parsers' options,
# bash completion, systemd units that `systemd-analyze verify` accepts; the
# Debian package ----
set(INSTALL_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/test/install)
add_test(NAME install.prefix COMMAND bash ${INSTALL_TESTS}/test_install.sh ${CMAKE_BINARY_DIR})
add_test(NAME install.man
         COMMAND ${Python3_EXECUTABLE} ${INSTALL_TESTS}/test_man.py ${CMAKE_BINARY_DIR}
                 ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME install.completion
         COMMAND bash ${INSTALL_TESTS}/test_completion.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME install.systemd COMMAND bash ${INSTALL_TESTS}/test_systemd.sh ${CMAKE_BINARY_DIR})
# the Debian package: dpkg-buildpackage in a copy of the tree (beside other tests:
# it changes nothing on the machine; -j2, about 35 s on 2 cores alone), then
# dpkg -i, -r, --purge of it (alone: the package's files are the machine's)
add_test(NAME install.deb.build COMMAND bash ${INSTALL_TESTS}/test_deb.sh
         ${CMAKE_CURRENT_SOURCE_DIR} --build ${CMAKE_BINARY_DIR}/test-deb)
set_tests_properties(install.deb.build PROPERTIES TIMEOUT 900 FIXTURES_SETUP deb
  ENVIRONMENT "CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR}")
add_test(NAME install.deb COMMAND bash ${INSTALL_TESTS}/test_deb.sh
         ${CMAKE_CURRENT_SOURCE_DIR} --install ${CMAKE_BINARY_DIR}/test-deb)
set_tests_properties(install.deb PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED deb)

# ---- compatibility with iptables-legacy (root; oracle in scratch namespaces) ----
foreach(h conformance differential dumps)
  add_test(NAME compat.${h}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/compat/${h}.py
                   --bin ${CMAKE_BINARY_DIR})
  set_tests_properties(compat.${h} PROPERTIES
    ENVIRONMENT "CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR};BPF_IPTABLES_DATAPLANE=off"
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()

# IPv6: bpf-ip6tables against ip6tables-legacy live (the .t cases, ip6tables.t,
# restore/save round trips). The live oracle is their only reference: without it
# they fail (no skip return code).
foreach(h conformance6 roundtrip6)
  add_test(NAME compat.${h}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/compat/${h}.py
                   --bin ${CMAKE_BINARY_DIR})
  set_tests_properties(compat.${h} PROPERTIES
    ENVIRONMENT "CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR};BPF_IPTABLES_DATAPLANE=off"
    TIMEOUT 900)
endforeach()
add_test(NAME compat.differential6
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/compat/differential.py
                 --family 6 --bin ${CMAKE_BINARY_DIR})
set_tests_properties(compat.differential6 PROPERTIES
  ENVIRONMENT "BPF_IPTABLES_DATAPLANE=off" TIMEOUT 900)

# ---- end to end: real traffic through namespaces (root, BPF) ----
add_test(NAME e2e.filter COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_filter.sh
                                 ${CMAKE_BINARY_DIR})
add_test(NAME e2e.filter.tc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_filter.sh
                                    ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.filter.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
add_test(NAME e2e.scale COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_scale.sh
                                ${CMAKE_BINARY_DIR} 100000)
add_test(NAME e2e.chains COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_chains.sh
                                 ${CMAKE_BINARY_DIR} 9000)
add_test(NAME e2e.kernel_diff
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff.py
                 --bin ${CMAKE_BINARY_DIR})
add_test(NAME e2e.kernel_diff6
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff6.py
                 --bin ${CMAKE_BINARY_DIR} --rulesets 150 --input-fragments)
# the same against the kernel in windowed pools: 4 200 more rules make the vectors
# two chunks long, BPF_IPTABLES_POOL=windows windows them
add_test(NAME e2e.kernel_diff.windows
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff.py
                 --bin ${CMAKE_BINARY_DIR} --seed 7070 --rulesets 30 --pad 4200)
add_test(NAME e2e.kernel_diff6.windows
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff6.py
                 --bin ${CMAKE_BINARY_DIR} --seed 7171 --rulesets 15 --pad 4200)
set_tests_properties(e2e.kernel_diff.windows e2e.kernel_diff6.windows PROPERTIES
                     ENVIRONMENT "BPF_IPTABLES_POOL=windows" TIMEOUT 600)
# the same against the kernel with the walk's loops as open-coded iterators (the
# programs a kernel without may_goto, Linux < 6.9, loads)
add_test(NAME e2e.kernel_diff.iterators
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff.py
                 --bin ${CMAKE_BINARY_DIR} --seed 7272 --rulesets 20 --pad 4200)
set_tests_properties(e2e.kernel_diff.iterators PROPERTIES
                     ENVIRONMENT "BPF_IPTABLES_MAY_GOTO=0" TIMEOUT 600)
# runs of -j/-g rules to a chain each (verdict maps) and of rules without a
# target, grouped where their prefixes are disjoint
add_test(NAME e2e.kernel_diff.vmaps
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff.py
                 --bin ${CMAKE_BINARY_DIR} --seed 8181 --rulesets 60 --runs 0.3 --vmaps)
add_test(NAME e2e.kernel_diff6.vmaps
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/kernel_diff6.py
                 --bin ${CMAKE_BINARY_DIR} --seed 8282 --rulesets 60 --runs 0.3 --vmaps)
add_test(NAME e2e.filter6 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_filter6.sh
                                  ${CMAKE_BINARY_DIR} xdp)
add_test(NAME e2e.filter6.tc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_filter6.sh
                                     ${CMAKE_BINARY_DIR} tc)
add_test(NAME e2e.conntrack COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_conntrack.sh
                                    ${CMAKE_BINARY_DIR})
add_test(NAME e2e.conntrack.tc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_conntrack.sh
                                       ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.conntrack.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
add_test(NAME e2e.ct_diff
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/ct_diff.py
                 --bin ${CMAKE_BINARY_DIR})
add_test(NAME e2e.reject COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_reject.sh
                                 ${CMAKE_BINARY_DIR})
add_test(NAME e2e.reject.tc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_reject.sh
                                    ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.reject.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
add_test(NAME e2e.limit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_limit.sh
                                ${CMAKE_BINARY_DIR})
# -j LOG: line by line against the kernel's LOG target (XDP and tc ingress)
add_test(NAME e2e.log
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/log_diff.py
                 --bin ${CMAKE_BINARY_DIR} --ingress xdp)
add_test(NAME e2e.log.tc
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/log_diff.py
                 --bin ${CMAKE_BINARY_DIR} --ingress tc)
# IPv6 LOG lines: logfmt.c's text against the kernel's LOG target (ip6tables-legacy)
add_test(NAME e2e.log6
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/log6_kernel.py
                 --bin ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.log6 PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# the link watcher: interfaces created later are filtered within a second
add_test(NAME e2e.watch COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_watch.sh
                                ${CMAKE_BINARY_DIR})
add_test(NAME e2e.watch.tc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_watch.sh
                                   ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.watch.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
# -m recent: datagram for datagram against iptables-legacy's xt_recent
add_test(NAME e2e.recent
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/recent_diff.py
                 --bin ${CMAKE_BINARY_DIR} --ingress xdp)
add_test(NAME e2e.recent.tc
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/recent_diff.py
                 --bin ${CMAKE_BINARY_DIR} --ingress tc)
# the chain selector's route memo against address, route, rule and forwarding changes
add_test(NAME e2e.route_memo COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_route_memo.sh
                                     ${CMAKE_BINARY_DIR})
add_test(NAME e2e.route_memo.tc
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_route_memo.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.route_memo.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
# the programs' optional parts (conntrack, recent, windows): loaded when a ruleset
# first needs them, in place of the running ones on every interface, XDP's too
add_test(NAME e2e.parts COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_parts.sh
                                ${CMAKE_BINARY_DIR})
# The XDP twins of the .tc tests ask for XDP: the default (auto) judges veth's
# ingress at tc (controlplane/loader.c xdp_auto_wanted); e2e.ingress tests the choice.
set_tests_properties(e2e.filter e2e.conntrack e2e.reject e2e.watch e2e.route_memo e2e.parts
                     PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=xdp")
add_test(NAME e2e.ingress COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_ingress.sh
                                  ${CMAKE_BINARY_DIR})
# Each test builds its own namespaces (names with its pid) and gives iptables-legacy
# a lock file of its own: these run beside other tests (scripts/test.sh: ctest -j3).
set_tests_properties(e2e.filter e2e.filter.tc e2e.scale e2e.chains e2e.kernel_diff
                     e2e.kernel_diff6 e2e.kernel_diff.vmaps e2e.kernel_diff6.vmaps
                     e2e.filter6 e2e.filter6.tc
                     e2e.conntrack e2e.conntrack.tc e2e.ct_diff e2e.reject e2e.reject.tc
                     e2e.route_memo e2e.route_memo.tc e2e.ingress e2e.parts
                     PROPERTIES TIMEOUT 600)
# Alone: the kernel log is the machine's (LOG), and rates, ages and "within a
# second" are measured against the clock (limit, recent, the link watcher).
set_tests_properties(e2e.log e2e.log.tc e2e.watch e2e.watch.tc e2e.recent e2e.recent.tc
                     e2e.limit
                     PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)

# ---- fail2ban: Debian's fail2ban with its stock iptables actions, bpf-iptables -w
# as their command; .oracle runs the same scenario with iptables-legacy ----
set(F2B_TEST ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_fail2ban.sh)
add_test(NAME e2e.fail2ban COMMAND bash ${F2B_TEST} ${CMAKE_BINARY_DIR})
add_test(NAME e2e.fail2ban.tc COMMAND bash ${F2B_TEST} ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.fail2ban PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=xdp")
set_tests_properties(e2e.fail2ban.tc PROPERTIES ENVIRONMENT "BPF_IPTABLES_INGRESS=tc")
add_test(NAME e2e.fail2ban.oracle COMMAND bash ${F2B_TEST} ${CMAKE_BINARY_DIR} --oracle)
set_tests_properties(e2e.fail2ban e2e.fail2ban.tc e2e.fail2ban.oracle
                     PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
# ---- real-world rulesets (conformance dumps, ufw, Docker) against iptables-legacy ----
add_test(NAME e2e.rulesets
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/rulesets_diff.py
                 --bin ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.rulesets PROPERTIES
  ENVIRONMENT "CONFORMANCE_DIR=${BPFIPT_CONFORMANCE_DIR}" TIMEOUT 300)

# ---- bpf-conntrack: settings, and the listing against the kernel's conntrack ----
add_test(NAME e2e.ct_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/e2e/test_ct_cli.sh
                                ${CMAKE_BINARY_DIR})
set_tests_properties(e2e.ct_cli PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# ---- reliability: atomic updates under load, the writer lock, crashes ----
include(${CMAKE_CURRENT_SOURCE_DIR}/test/reliability/tests.cmake)

# ---- robustness: bad input, hostile packets, isolation, resource limits ----
include(${CMAKE_CURRENT_SOURCE_DIR}/test/robustness/tests.cmake)

# ---- benchmarks: the quick suite runs (timing is never asserted) ----
include(${CMAKE_CURRENT_SOURCE_DIR}/bench/bench.cmake)
