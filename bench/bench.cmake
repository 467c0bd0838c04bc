# SPDX-License-Identifier: GPL-2.0
# The benchmark suite (issue 7): its two programs and the smoke test that the
# suite runs and writes its files (it never asserts a timing). The whole suite:
#   bench/run.sh BUILD_DIR [--quick]
# Included from test/tests.cmake.
add_executable(pktcost ${CMAKE_CURRENT_SOURCE_DIR}/bench/pktcost.c)
target_link_libraries(pktcost PRIVATE bpfipt)
add_executable(flood ${CMAKE_CURRENT_SOURCE_DIR}/bench/flood.c)
target_include_directories(flood PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib)

add_test(NAME bench.smoke
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench/run.sh ${CMAKE_BINARY_DIR} --quick
                 --out ${CMAKE_BINARY_DIR}/bench-smoke)
set_tests_properties(bench.smoke PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# The classifier's summary levels on chains of several chunks (the optimisation
# the per-packet targets asked for), against the reference evaluator.
add_executable(test_chunks ${CMAKE_CURRENT_SOURCE_DIR}/test/dataplane/test_chunks.c)
target_link_libraries(test_chunks PRIVATE bpfipt PkgConfig::CHECK)
add_test(NAME dataplane.test_chunks COMMAND test_chunks)
set_tests_properties(dataplane.test_chunks PROPERTIES ENVIRONMENT "CK_FORK=yes" TIMEOUT 600)
