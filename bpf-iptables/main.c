// SPDX-License-Identifier: GPL-2.0
/* bpf-iptables, bpf-iptables-save, bpf-iptables-restore, bpf-conntrack and the
 * IPv6 commands bpf-ip6tables, bpf-ip6tables-save, bpf-ip6tables-restore: chosen
 * by the name run. */
#include "cli.h"
#include "model.h"

#include <string.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	name = name ? name + 1 : argv[0];
	/* the family first, before anything reads it (iptables' afinfo) */
	if (!strncmp(name, "bpf-ip6tables", strlen("bpf-ip6tables")))
		ipt_af = AF_INET6;
	if (strstr(name, "conntrack"))
		return ct_cli_conntrack(argc, argv);
	if (strstr(name, "-save"))
		return ipt_cli_save(argc, argv);
	if (strstr(name, "-restore"))
		return ipt_cli_restore(argc, argv);
	return ipt_cli_iptables(argc, argv);
}
