# SPDX-License-Identifier: GPL-2.0
# The benchmark suite (issue 7): its programs and the smoke test that the
# suite runs and writes its files (it never asserts a timing). The whole suite:
#   bench/run.sh BUILD_DIR [--quick]
# Included from test/tests.cmake.
add_executable(pktcost ${CMAKE_CURRENT_SOURCE_DIR}/bench/pktcost.c)
target_link_libraries(pktcost PRIVATE bpfipt)
add_executable(flood ${CMAKE_CURRENT_SOURCE_DIR}/bench/flood.c)
target_include_directories(flood PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib)
# bpfprof: perf samples of the JITed programs -> their source lines
add_executable(bpfprof ${CMAKE_CURRENT_SOURCE_DIR}/bench/bpfprof.c)
target_link_libraries(bpfprof PRIVATE PkgConfig::LIBBPF)

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
# the same with the walk's loops as open-coded iterators, as kernels without
# may_goto (Linux < 6.9) run them: every may_goto patched out before the load
add_test(NAME dataplane.test_chunks.iterators COMMAND test_chunks)
set_tests_properties(dataplane.test_chunks.iterators PROPERTIES
                     ENVIRONMENT "CK_FORK=yes;BPF_IPTABLES_MAY_GOTO=0" TIMEOUT 600)

# tcfloor: the program of the veth floods' tc-floor (bench/run.sh, bench/vethab.sh
# --tc-floor; bench/flood.sh attaches it): it passes every packet
set(TCFLOOR_OBJ ${BPF_DIR}/tcfloor.bpf.o)
add_custom_command(OUTPUT ${TCFLOOR_OBJ}
  COMMAND ${BPF_CLANG} ${BPF_CFLAGS} -c ${CMAKE_CURRENT_SOURCE_DIR}/bench/tcfloor.bpf.c
          -o ${TCFLOOR_OBJ}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bench/tcfloor.bpf.c
  COMMENT "Building BPF object tcfloor.bpf.o"
  VERBATIM)
add_custom_target(tcfloor ALL DEPENDS ${TCFLOOR_OBJ})

# addrsearch: an address field's LPM trie against a binary search over sorted
# intervals (the experiment of docs/performance.md); its own BPF object and
# skeleton (bpf_skeleton(), dataplane/bpf.cmake).
set(AS_SKEL ${GEN}/addrsearch.skel.h)
bpf_skeleton(addrsearch ${CMAKE_CURRENT_SOURCE_DIR}/bench/addrsearch.bpf.c
             ${CMAKE_CURRENT_SOURCE_DIR}/bench/addrsearch.h ${BPF_SOURCES})
add_executable(addrsearch ${CMAKE_CURRENT_SOURCE_DIR}/bench/addrsearch.c ${AS_SKEL})
target_include_directories(addrsearch PRIVATE ${GEN} ${CMAKE_CURRENT_SOURCE_DIR}/bench)
target_link_libraries(addrsearch PRIVATE bpfipt PkgConfig::LIBBPF)
# The test: both structures give every checked address the same value.
add_test(NAME bench.addrsearch
         COMMAND addrsearch --sizes 10,1000,20000 --repeat 1000 --check 10000)
set_tests_properties(bench.addrsearch PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
