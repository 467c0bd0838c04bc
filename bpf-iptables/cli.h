/* SPDX-License-Identifier: GPL-2.0 */
/* Entry points of the four commands (argv[0] included). */
#ifndef BPFIPT_CLI_H
#define BPFIPT_CLI_H

int ipt_cli_iptables(int argc, char **argv);
int ipt_cli_save(int argc, char **argv);
int ipt_cli_restore(int argc, char **argv);
/* bpf-iptables --log-follow: bpf-iptables/log_cli.c */
int ipt_cli_log_follow(int argc, char **argv);
/* bpf-iptables --watch: bpf-iptables/watch_cli.c */
int ipt_cli_watch(int argc, char **argv);
/* -V of bpf-iptables: bpf-iptables/version.c */
void ipt_print_version_report(const char *prog);
/* bpf-conntrack: bpf-iptables/ct_cli.c */
int ct_cli_conntrack(int argc, char **argv);

#endif
