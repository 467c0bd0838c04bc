// SPDX-License-Identifier: GPL-2.0
/*
 * flood: the traffic of the veth benchmarks (bench/run.sh), with no dependency
 * but libc.
 *   flood send DST PORT SECS         UDP datagrams of 18 bytes (64-byte frames)
 *                                    through a socket, sendmmsg by 64, as fast
 *                                    as the CPU goes; prints "sent N err E SECS"
 *   flood raw IFNAME DSTMAC SRC DST PORT SECS
 *                                    the same datagrams as ready frames on an
 *                                    AF_PACKET socket (qdisc bypassed): the
 *                                    sender's own stack costs nothing, so the
 *                                    receiver's path is what limits the rate
 *   flood sink PORT SECS             counts the datagrams a UDP socket receives
 *                                    for SECS seconds from the first one; prints
 *                                    "recv N SECS"
 * Every mode stops after SECS seconds (sink: after 2 s without a datagram).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include "csum.h"

#define BATCH 64
#define PAYLOAD 18

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: flood send DST PORT SECS | flood raw IFNAME DSTMAC SRC DST PORT "
		"SECS | flood sink PORT SECS\n");
	return 2;
}

static int send_loop(int fd, struct mmsghdr *m, double secs)
{
	unsigned long long sent = 0, err = 0;
	double t0 = now(), t = t0;

	for (unsigned int i = 0; t - t0 < secs; i++) {
		int r = sendmmsg(fd, m, BATCH, 0);

		if (r > 0)
			sent += r;
		else
			err++;		/* EPERM (an OUTPUT drop), ENOBUFS: counted, go on */
		if ((i & 15) == 0)
			t = now();
	}
	printf("sent %llu err %llu %.3f\n", sent, err, t - t0);
	return 0;
}

int main(int argc, char **argv)
{
	static char payload[PAYLOAD] = "bpf-iptables-bench";
	static struct mmsghdr m[BATCH];
	static struct iovec iov[BATCH];

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "send") && argc == 5) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[3])) };
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		if (fd < 0 || inet_pton(AF_INET, argv[2], &a.sin_addr) != 1 ||
		    connect(fd, (void *)&a, sizeof(a))) {
			perror("flood send");
			return 1;
		}
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ payload, PAYLOAD };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		return send_loop(fd, m, atof(argv[4]));
	}
	if (!strcmp(argv[1], "raw") && argc == 8) {
		static __u8 frame[ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + PAYLOAD];
		struct ethhdr *eth = (void *)frame;
		struct iphdr *ip = (void *)(eth + 1);
		struct udphdr *udp = (void *)(ip + 1);
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
					  .sll_ifindex = if_nametoindex(argv[2]), .sll_halen = 6 };
		int fd = socket(AF_PACKET, SOCK_RAW, 0), one = 1;
		unsigned int mac[6];

		if (fd < 0 || !ll.sll_ifindex ||
		    sscanf(argv[3], "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3],
			   &mac[4], &mac[5]) != 6 ||
		    inet_pton(AF_INET, argv[4], &ip->saddr) != 1 ||
		    inet_pton(AF_INET, argv[5], &ip->daddr) != 1) {
			perror("flood raw");
			return 1;
		}
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
		for (int i = 0; i < 6; i++)
			eth->h_dest[i] = ll.sll_addr[i] = mac[i];
		memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", 6);
		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(frame) - ETH_HLEN);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->check = ipt_csum(ip, sizeof(*ip));
		udp->source = htons(40000);
		udp->dest = htons(atoi(argv[6]));
		udp->len = htons(sizeof(*udp) + PAYLOAD);
		memcpy(udp + 1, payload, PAYLOAD);
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ frame, sizeof(frame) };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &ll, .msg_namelen = sizeof(ll),
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		return send_loop(fd, m, atof(argv[7]));
	}
	if (!strcmp(argv[1], "sink") && argc == 4) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
		struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
		static char bufs[BATCH][64];
		double secs = atof(argv[3]), t0 = 0, t, idle = now();
		unsigned long long n = 0;
		int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 4 << 20;

		if (fd < 0 || bind(fd, (void *)&a, sizeof(a))) {
			perror("flood sink");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		for (;;) {
			int r = recvmmsg(fd, m, BATCH, 0, NULL);

			t = now();
			if (r > 0) {
				if (!t0)
					t0 = t;
				n += r;
				idle = t;
			}
			if ((t0 && t - t0 >= secs) || t - idle > 2 + (t0 ? 0 : secs + 3))
				break;
		}
		printf("recv %llu %.3f\n", n, t0 ? t - t0 : 0.0);
		return 0;
	}
	return usage();
}
