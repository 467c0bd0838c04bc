// SPDX-License-Identifier: GPL-2.0
/* bpf-iptables, bpf-iptables-save, bpf-iptables-restore, bpf-conntrack: chosen by
 * the name run. */
#include "cli.h"

#include <string.h>

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	name = name ? name + 1 : argv[0];
	if (strstr(name, "conntrack"))
		return ct_cli_conntrack(argc, argv);
	if (strstr(name, "-save"))
		return ipt_cli_save(argc, argv);
	if (strstr(name, "-restore"))
		return ipt_cli_restore(argc, argv);
	return ipt_cli_iptables(argc, argv);
}
