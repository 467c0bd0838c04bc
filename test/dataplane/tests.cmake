# SPDX-License-Identifier: GPL-2.0
# The data plane on the real kernel: needs root and BPF, and fails without them
# (it never skips). It runs in network namespaces of its own.
add_executable(test_dataplane ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_dataplane.c)
target_link_libraries(test_dataplane PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_dataplane COMMAND test_dataplane)
set_tests_properties(dataplane.test_dataplane PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 1800)

# The connection table from userspace (conntrack/ct.c) on an instance's map.
add_executable(test_ct_table ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_ct_table.c)
target_link_libraries(test_ct_table PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_ct_table COMMAND test_ct_table)
set_tests_properties(dataplane.test_ct_table PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 300)

# IPv6: crafted packets, the IPv6 differential, both families in one instance.
add_executable(test_ipv6 ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_ipv6.c)
target_link_libraries(test_ipv6 PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_ipv6 COMMAND test_ipv6)
set_tests_properties(dataplane.test_ipv6 PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 900)

# IPv6 conntrack, REJECT and LOG through the programs (conntrack/, reject.bpf.h,
# log.bpf.h, logfmt.c) with crafted packets.
add_executable(test_ct6 ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_ct6.c)
target_link_libraries(test_ct6 PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_ct6 COMMAND test_ct6)
set_tests_properties(dataplane.test_ct6 PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 300)

# logfmt.c's line for a packet given in hex (test/e2e/log6_kernel.py)
add_executable(lf_line ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/lf_line.c)
target_link_libraries(lf_line PRIVATE bpfipt)

# Grace periods (controlplane/grace.c) against program runs made to last
# (grace_hold.bpf.c) at tc egress, XDP and tc ingress; the fallback in a cpuset.
bpf_skeleton(grace_hold ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/grace_hold.bpf.c
             ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/grace_hold.h)
add_executable(test_grace ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_grace.c
               ${GEN}/grace_hold.skel.h)
target_include_directories(test_grace PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane)
target_link_libraries(test_grace PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_grace COMMAND test_grace)
set_tests_properties(dataplane.test_grace PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 120)
