// SPDX-License-Identifier: GPL-2.0
/* Connection tracking settings: defaults, names, conntrack.conf (see ct.h). */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CT_CONF_FILE "conntrack.conf"

/* Linux's defaults (net.netfilter.nf_conntrack_*), seconds. */
static const __u64 default_s[BPFIPT_CTT_MAX] = {
	[BPFIPT_CTT_TCP_UNACK] = 300,
	[BPFIPT_TCP_SYN_SENT] = 120,
	[BPFIPT_TCP_SYN_RECV] = 60,
	[BPFIPT_TCP_ESTABLISHED] = 432000,
	[BPFIPT_TCP_FIN_WAIT] = 120,
	[BPFIPT_TCP_CLOSE_WAIT] = 60,
	[BPFIPT_TCP_LAST_ACK] = 30,
	[BPFIPT_TCP_TIME_WAIT] = 120,
	[BPFIPT_TCP_CLOSE] = 10,
	[BPFIPT_TCP_SYN_SENT2] = 120,
	[BPFIPT_CTT_UDP] = 30,
	[BPFIPT_CTT_UDP_STREAM] = 120,
	[BPFIPT_CTT_ICMP] = 30,
	[BPFIPT_CTT_GENERIC] = 600,
	[BPFIPT_CTT_GRE] = 30,
	[BPFIPT_CTT_GRE_STREAM] = 180,
	[BPFIPT_CTT_ICMPV6] = 30,
};

static const char *const names[BPFIPT_CTT_MAX] = {
	[BPFIPT_CTT_TCP_UNACK] = "tcp_timeout_unacknowledged",
	[BPFIPT_TCP_SYN_SENT] = "tcp_timeout_syn_sent",
	[BPFIPT_TCP_SYN_RECV] = "tcp_timeout_syn_recv",
	[BPFIPT_TCP_ESTABLISHED] = "tcp_timeout_established",
	[BPFIPT_TCP_FIN_WAIT] = "tcp_timeout_fin_wait",
	[BPFIPT_TCP_CLOSE_WAIT] = "tcp_timeout_close_wait",
	[BPFIPT_TCP_LAST_ACK] = "tcp_timeout_last_ack",
	[BPFIPT_TCP_TIME_WAIT] = "tcp_timeout_time_wait",
	[BPFIPT_TCP_CLOSE] = "tcp_timeout_close",
	[BPFIPT_TCP_SYN_SENT2] = "tcp_timeout_syn_sent2",
	[BPFIPT_CTT_UDP] = "udp_timeout",
	[BPFIPT_CTT_UDP_STREAM] = "udp_timeout_stream",
	[BPFIPT_CTT_ICMP] = "icmp_timeout",
	[BPFIPT_CTT_GENERIC] = "generic_timeout",
	[BPFIPT_CTT_GRE] = "gre_timeout",
	[BPFIPT_CTT_GRE_STREAM] = "gre_timeout_stream",
	[BPFIPT_CTT_ICMPV6] = "icmpv6_timeout",
};

_Static_assert(BPFIPT_CTT_MAX == 17, "default_s and names cover every timeout");

void ct_settings_default(struct ct_settings *s)
{
	memcpy(s->timeout_s, default_s, sizeof(s->timeout_s));
	s->max = BPFIPT_CT_MAX_DEFAULT;
}

const char *ct_timeout_name(enum bpfipt_ct_timeout t)
{
	return (unsigned int)t < BPFIPT_CTT_MAX ? names[t] : NULL;
}

void ct_conf_from_settings(const struct ct_settings *s, struct bpfipt_ct_conf *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < BPFIPT_CTT_MAX; i++)
		c->timeout_ns[i] = (s->timeout_s[i] ? s->timeout_s[i] : 1) * 1000000000ull;
}

int ct_settings_load(const char *state_dir, struct ct_settings *s, struct ipt_err *err)
{
	char path[600], line[256], name[128];
	unsigned long long v;
	unsigned int lineno = 0;
	FILE *f;

	ct_settings_default(s);
	snprintf(path, sizeof(path), "%s/%s", state_dir, CT_CONF_FILE);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 :
		       ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot read %s: %s", path,
				   strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		int i;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%127s %llu", name, &v) != 2 || v == 0 || v > 0xffffffffull)
			goto bad;
		if (!strcmp(name, "max")) {
			s->max = (__u32)v;
			continue;
		}
		for (i = 0; i < BPFIPT_CTT_MAX && strcmp(names[i], name); i++)
			;
		if (i == BPFIPT_CTT_MAX)
			goto bad;
		s->timeout_s[i] = v;
	}
	fclose(f);
	return 0;
bad:
	fclose(f);
	return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "%s line %u: bad setting", path,
			   lineno);
}

int ct_settings_store(const char *state_dir, const struct ct_settings *s, struct ipt_err *err)
{
	char path[600], tmp[640];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", state_dir, CT_CONF_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot write %s: %s", tmp,
				   strerror(errno));
	}
	fprintf(f, "# bpf-conntrack settings (bpf-conntrack -T)\nmax %u\n", s->max);
	for (int i = 0; i < BPFIPT_CTT_MAX; i++)
		fprintf(f, "%s %llu\n", names[i], (unsigned long long)s->timeout_s[i]);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path)) {
		int e = errno;

		unlink(tmp);
		return ipt_err_set(err, IPT_EXIT_OTHER, IPT_ES_IPTC, "cannot write %s: %s", path,
				   strerror(e));
	}
	return 0;
}
