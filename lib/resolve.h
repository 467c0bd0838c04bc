/* SPDX-License-Identifier: GPL-2.0 */
/* Host-name resolution for -s/-d and --ctorigsrc..., switchable off (fuzzing). */
#ifndef BPFIPT_RESOLVE_H
#define BPFIPT_RESOLVE_H

#include <stdbool.h>
#include <netdb.h>

/* When false, names never resolve (numeric addresses still parse). */
extern bool ipt_resolve_names;

/* getaddrinfo() honouring ipt_resolve_names. */
int ipt_getaddrinfo(const char *node, const struct addrinfo *hints, struct addrinfo **res);

#endif
