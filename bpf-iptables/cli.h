/* SPDX-License-Identifier: GPL-2.0 */
/* Entry points of the three commands (argv[0] included). */
#ifndef BPFIPT_CLI_H
#define BPFIPT_CLI_H

int ipt_cli_iptables(int argc, char **argv);
int ipt_cli_save(int argc, char **argv);
int ipt_cli_restore(int argc, char **argv);

#endif
