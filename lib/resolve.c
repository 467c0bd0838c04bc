// SPDX-License-Identifier: GPL-2.0
#include "resolve.h"

#include <stddef.h>

bool ipt_resolve_names = true;

int ipt_getaddrinfo(const char *node, const struct addrinfo *hints, struct addrinfo **res)
{
	if (!ipt_resolve_names)
		return EAI_NONAME;
	return getaddrinfo(node, NULL, hints, res);
}
