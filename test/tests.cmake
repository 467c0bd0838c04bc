# SPDX-License-Identifier: GPL-2.0
# Every test of the project, registered with CTest.

# ---- Check unit tests: one executable per suite ----
file(GLOB UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test/unit/test_*.c)
foreach(src ${UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE bpfipt PkgConfig::CHECK)
  add_test(NAME unit.${name} COMMAND ${name})
  set_tests_properties(unit.${name} PROPERTIES ENVIRONMENT "CK_FORK=yes")
endforeach()
