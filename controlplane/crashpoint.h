/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named points where a test may kill a command, to check that a crash at any
 * moment leaves the old ruleset or the new one (test/reliability/crash.py).
 *
 *   BPF_IPTABLES_CRASH_AT=NAME[:N]  SIGKILL the process the N-th time (default:
 *                                   the first) it reaches point NAME
 *   BPF_IPTABLES_CRASH_TRACE=1      print "crash point NAME N" on stderr at every
 *                                   point reached (how many there are)
 *   BPF_IPTABLES_CRASH_TRACE=time   the same with " at SECONDS" (CLOCK_MONOTONIC):
 *                                   where a command's time goes (bench/timeline.py)
 *
 * SIGKILL is what `kill -9` sends: no handler, no atexit, no cleanup runs. The
 * variables only ever stop the command that reads them, as kill -9 could.
 * Points: see the cp_crash_point() calls (git grep -n cp_crash_point).
 */
#ifndef BPFIPT_CRASHPOINT_H
#define BPFIPT_CRASHPOINT_H

void cp_crash_point(const char *name);

/* A test's own code, run at every point by the process itself (NULL: none):
 * test/dataplane/test_chunks.c counts what a program run still under way at the
 * switch counts. */
extern void (*cp_point_hook)(const char *name);

#endif
