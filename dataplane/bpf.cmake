# SPDX-License-Identifier: GPL-2.0
# The BPF programs and their loader.
#   dataplane/bpfipt.bpf.c --clang -target bpf--> build/bpf/bpfipt.bpf.o
#                          --bpftool gen skeleton--> build/gen/bpfipt.skel.h
#   the same with -DBPFIPT_MAPS_ONLY --> bpfipt_maps.bpf.o, bpfipt_maps.skel.h:
#                          the maps alone, which a first command creates
# controlplane/loader.c includes the skeleton; everything generated stays in the
# build directory. Included from the top CMakeLists.txt after the bpfipt library.

find_program(BPF_CLANG NAMES clang clang-14 clang-15 clang-16 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin /usr/local/sbin REQUIRED)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.0)

set(BPF_DIR ${CMAKE_CURRENT_BINARY_DIR}/bpf)
set(BPF_OBJ ${BPF_DIR}/bpfipt.bpf.o)
set(BPF_SKEL ${GEN}/bpfipt.skel.h)
set(BPF_MAPS_OBJ ${BPF_DIR}/bpfipt_maps.bpf.o)
set(BPF_MAPS_SKEL ${GEN}/bpfipt_maps.skel.h)
set(BPF_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.bpf.c
    ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/log.bpf.h
    ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.h
    ${CMAKE_CURRENT_SOURCE_DIR}/conntrack/ct.bpf.h
    ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/reject.bpf.h
    ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/ival.bpf.h)
file(MAKE_DIRECTORY ${BPF_DIR})

# uapi headers include <asm/types.h>, which lives in the multiarch directory
set(BPF_CFLAGS -g -O2 -target bpf -Wall -Werror
    -I${CMAKE_CURRENT_SOURCE_DIR}/dataplane)
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(APPEND BPF_CFLAGS -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()

# bpf_skeleton(NAME SOURCE [DEPENDS...]): a benchmark's or a test's own BPF object
# ${BPF_DIR}/NAME.bpf.o and its skeleton ${GEN}/NAME.skel.h (object NAME_bpf).
function(bpf_skeleton name src)
  set(obj ${BPF_DIR}/${name}.bpf.o)
  set(skel ${GEN}/${name}.skel.h)
  get_filename_component(dir ${src} DIRECTORY)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${BPF_CLANG} ${BPF_CFLAGS} -I${dir} -c ${src} -o ${obj}
    DEPENDS ${src} ${ARGN}
    COMMENT "Building BPF object ${name}.bpf.o"
    VERBATIM)
  add_custom_command(OUTPUT ${skel}
    COMMAND sh -c "${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp"
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "Generating BPF skeleton ${name}.skel.h"
    VERBATIM)
endfunction()

# bpf_object(OBJ SKEL NAME [clang flags...])
function(bpf_object obj skel name)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${BPF_CLANG} ${BPF_CFLAGS} ${ARGN} -I${CMAKE_CURRENT_SOURCE_DIR}/conntrack
            -c ${CMAKE_CURRENT_SOURCE_DIR}/dataplane/bpfipt.bpf.c -o ${obj}
    DEPENDS ${BPF_SOURCES}
    COMMENT "Building BPF object ${name}"
    VERBATIM)
  add_custom_command(OUTPUT ${skel}
    COMMAND sh -c "${BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}.tmp"
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "Generating BPF skeleton of ${name}"
    VERBATIM)
endfunction()
bpf_object(${BPF_OBJ} ${BPF_SKEL} bpfipt_bpf)
bpf_object(${BPF_MAPS_OBJ} ${BPF_MAPS_SKEL} bpfipt_maps_bpf -DBPFIPT_MAPS_ONLY)
add_custom_target(bpfipt_skel DEPENDS ${BPF_SKEL} ${BPF_MAPS_SKEL})

target_sources(bpfipt PRIVATE controlplane/loader.c ${BPF_SKEL} ${BPF_MAPS_SKEL})
add_dependencies(bpfipt bpfipt_skel)
target_include_directories(bpfipt PUBLIC dataplane)
find_package(Threads REQUIRED)

# libbpf, libnl and what they need are linked in from their archives where the
# -dev packages installed them: a command that runs for 5 ms spent a tenth of
# it loading five shared libraries and binding their symbols, and libnl-route
# registering all its cache and link types (docs/performance.md, "One-rule
# commands"). -DBPFIPT_STATIC_DEPS=OFF, or an archive missing: the shared ones.
option(BPFIPT_STATIC_DEPS "Link libbpf, libnl and their dependencies statically" ON)
set(BPFIPT_DEPS PkgConfig::LIBBPF PkgConfig::NLROUTE)
if(BPFIPT_STATIC_DEPS)
  set(deps_a "")
  foreach(lib IN LISTS LIBBPF_STATIC_LIBRARIES NLROUTE_STATIC_LIBRARIES)
    if(lib STREQUAL "pthread" OR lib IN_LIST deps_seen)
      continue()
    endif()
    list(APPEND deps_seen ${lib})
    find_library(BPFIPT_ARCHIVE_${lib} NAMES lib${lib}.a)
    if(NOT BPFIPT_ARCHIVE_${lib})
      message(STATUS "lib${lib}.a not found: libbpf and libnl linked as shared libraries")
      set(deps_a "")
      break()
    endif()
    list(APPEND deps_a ${BPFIPT_ARCHIVE_${lib}})
  endforeach()
  if(deps_a)
    add_library(bpfipt_deps INTERFACE)
    target_include_directories(bpfipt_deps INTERFACE ${LIBBPF_INCLUDE_DIRS} ${NLROUTE_INCLUDE_DIRS})
    target_link_libraries(bpfipt_deps INTERFACE ${deps_a})
    set(BPFIPT_DEPS bpfipt_deps)
  endif()
endif()
target_link_libraries(bpfipt PUBLIC ${BPFIPT_DEPS} Threads::Threads)
