# SPDX-License-Identifier: GPL-2.0
# The BPF programs and their loader.
#   dataplane/bpfipt.bpf.c --clang -target bpf--> build/bpf/bpfipt.bpf.o
#                          --bpftool gen skeleton--> build/gen/bpfipt.skel.h
# controlplane/loader.c includes the skeleton; everything generated stays in the
# build directory. Included from the top CMakeLists.txt after the bpfipt library.

find_program(BPF_CLANG NAMES clang clang-14 clang-15 clang-16 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin /usr/local/sbin REQUIRED)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.0)

set(BPF_DIR ${CMAKE_CURRENT_BINARY_DIR}/bpf)
set(BPF_OBJ ${BPF_DIR}/bpfipt.bpf.o)
set(BPF_SKEL ${GEN}/bpfipt.skel.h)
file(MAKE_DIRECTORY ${BPF_DIR})

# uapi headers include <asm/types.h>, which lives in the multiarch directory
set(BPF_CFLAGS -g -O2 -target bpf -Wall -Werror
    -I${CMAKE_CURRENT_SOURCE_DIR}/dataplane)
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(APPEND BPF_CFLAGS -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()

add_custom_command(OUTPUT ${BPF_OBJ}
  COMMAND ${BPF_CLANG} ${BPF_CFLAGS} -I${CMAKE_CURRENT_SOURCE_DIR}/conntrack
          -c ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.bpf.c -o ${BPF_OBJ}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.bpf.c
          ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/log.bpf.h
          ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.h
          ${CMAKE_CURRENT_SOURCE_DIR}/conntrack/ct.bpf.h
          ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/reject.bpf.h
  COMMENT "Building BPF object bpfipt.bpf.o"
  VERBATIM)

add_custom_command(OUTPUT ${BPF_SKEL}
  COMMAND sh -c "${BPFTOOL} gen skeleton ${BPF_OBJ} name bpfipt_bpf > ${BPF_SKEL}.tmp"
  COMMAND ${CMAKE_COMMAND} -E rename ${BPF_SKEL}.tmp ${BPF_SKEL}
  DEPENDS ${BPF_OBJ}
  COMMENT "Generating BPF skeleton bpfipt.skel.h"
  VERBATIM)
add_custom_target(bpfipt_skel DEPENDS ${BPF_SKEL})

target_sources(bpfipt PRIVATE controlplane/loader.c ${BPF_SKEL})
add_dependencies(bpfipt bpfipt_skel)
target_include_directories(bpfipt PUBLIC dataplane)
find_package(Threads REQUIRED)
target_link_libraries(bpfipt PUBLIC PkgConfig::LIBBPF PkgConfig::NLROUTE Threads::Threads)
