# SPDX-License-Identifier: GPL-2.0
# Run by `cmake --install` (CMakeLists.txt sets the BPFIPT_* variables): writes the
# units and their helper with the paths of this installation, then installs them,
# so that `cmake --install build --prefix P` gives units that run P's commands.

set(units bpf-iptables.service bpf-iptables-save.service bpf-iptables-log.service)
foreach(f ${units} rules-file)
  configure_file("${BPFIPT_SRC}/${f}.in" "${BPFIPT_OUT}/${f}" @ONLY)
endforeach()
list(TRANSFORM units PREPEND "${BPFIPT_OUT}/")
file(INSTALL DESTINATION "${BPFIPT_UNITDIR}" TYPE FILE FILES ${units})
file(INSTALL DESTINATION "${BPFIPT_HELPERDIR}" TYPE PROGRAM FILES "${BPFIPT_OUT}/rules-file")
