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
 *   flood xdp IFNAME DSTMAC SRC DST PORT SECS
 *                                    the same frames made by the kernel's XDP
 *                                    traffic generator (bpf_prog_test_run with
 *                                    BPF_F_TEST_XDP_LIVE_FRAMES) and redirected
 *                                    into IFNAME, a veth: they reach the peer's
 *                                    NAPI as XDP frames, without an skb, as a
 *                                    NIC's would; the peer needs NAPI (an XDP
 *                                    program or GRO on). Several times the
 *                                    rate of raw, so the receiver's drop path is
 *                                    what the measurement sees
 *   flood inject IFNAME DSTMAC SRC DST PORT SECS [PROG_ID|drop]
 *                                    the same frames made by the XDP traffic
 *                                    generator as if IFNAME had received them:
 *                                    each runs the XDP program PROG_ID (the one
 *                                    attached to IFNAME), one that drops every
 *                                    frame (drop: the generator's own cost; it
 *                                    is attached to IFNAME for the run) or,
 *                                    without either, one that passes every
 *                                    frame to the stack, in
 *                                    this process, on this CPU. The sender and
 *                                    the receiver are one loop, so the rate is
 *                                    what one CPU's receive path (driver work
 *                                    aside) can drop: the veth and the other
 *                                    CPU's scheduling are out of it
 *   flood hold IFNAME SECS           attaches a program that drops every frame
 *                                    ("return XDP_DROP") to IFNAME for SECS
 *                                    seconds; prints "attached" once it is: the
 *                                    receiver's own cost under the xdp sender
 *                                    (the veth counts the frames it drops)
 *   flood sink PORT SECS             counts the datagrams a UDP socket receives
 *                                    for SECS seconds from the first one; prints
 *                                    "recv N SECS"
 * Every mode stops after SECS seconds (sink: after 2 s without a datagram).
 * xdp and inject keep the generator's program in the kernel's XDP dispatcher
 * (xdp_hold.h; PROG_ID's and drop's are attached): each run of 65 536 frames
 * would otherwise wait two RCU grace periods with no frame sent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/bpf.h>
#include "csum.h"
#include "xdp_hold.h"

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
		"SECS | flood xdp IFNAME DSTMAC SRC DST PORT SECS | flood inject IFNAME DSTMAC SRC DST "
		"PORT SECS [PROG_ID|drop] | flood hold IFNAME SECS | flood sink PORT SECS\n");
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

/* Ethernet to DSTMAC, IPv4 SRC -> DST, UDP 40000 -> PORT, the payload: 0 or -1. */
static int make_frame(__u8 *frame, size_t len, const char *dstmac, const char *src,
		      const char *dst, int port, const char *payload)
{
	struct ethhdr *eth = (void *)frame;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	unsigned int mac[6];

	if (sscanf(dstmac, "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5]) != 6 ||
	    inet_pton(AF_INET, src, &ip->saddr) != 1 || inet_pton(AF_INET, dst, &ip->daddr) != 1)
		return -1;
	for (int i = 0; i < 6; i++)
		eth->h_dest[i] = mac[i];
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(len - ETH_HLEN);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->check = ipt_csum(ip, sizeof(*ip));
	udp->source = htons(40000);
	udp->dest = htons(port);
	udp->len = htons(sizeof(*udp) + PAYLOAD);
	memcpy(udp + 1, payload, PAYLOAD);
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* The XDP traffic generator: program fd run in live-frame mode, each repetition
 * a real XDP frame: redirected (flood xdp) or received on ifindex (flood inject).
 * hold: fd is attached nowhere; xdp_hold() it for the runs. */
static int live_loop(int fd, int ifindex, const void *frame, __u32 len, double secs, bool hold)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	union bpf_attr a;
	unsigned long long sent = 0;
	struct xdp_hold h = { -1, -1 };
	double t0, t;

	if (hold)
		xdp_hold(fd, &h);
	t0 = t = now();
	while (t - t0 < secs) {
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = fd;
		a.test.data_in = (unsigned long)frame;
		a.test.data_size_in = len;
		if (ifindex) {
			a.test.ctx_in = (unsigned long)&ctx;
			a.test.ctx_size_in = sizeof(ctx);
		}
		a.test.repeat = 1 << 16;
		a.test.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
		a.test.batch_size = BATCH;
		if (sys_bpf(BPF_PROG_TEST_RUN, &a)) {
			perror("flood: BPF_PROG_TEST_RUN (live frames)");
			return 1;
		}
		sent += 1 << 16;
		t = now();
	}
	printf("sent %llu err 0 %.3f\n", sent, t - t0);
	xdp_unhold(&h);
	return 0;
}

static int load_xdp(const struct bpf_insn *prog, unsigned int n)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (unsigned long)prog;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		perror("flood: BPF_PROG_LOAD");
	return fd;
}

/* flood xdp: a 4-instruction program, "return bpf_redirect(ifindex, 0)": each
 * frame is transmitted into ifindex. */
static int xdp_loop(int ifindex, const void *frame, __u32 len, double secs)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = ifindex },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = load_xdp(prog, sizeof(prog) / sizeof(prog[0])), r;

	if (fd < 0)
		return 1;
	r = live_loop(fd, 0, frame, len, secs, true);
	close(fd);
	return r;
}

/* "return XDP_DROP" attached to ifindex by a link (detached when it is closed,
 * at the latest when the process exits): the link's fd, its program's in *prog;
 * -1 on a failure. Attached as a firewall's program is, the kernel calls it
 * directly (the XDP dispatcher), not through a retpoline. */
static int attach_drop(int ifindex, int *prog)
{
	struct bpf_insn ret[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int link;

	*prog = load_xdp(ret, 2);
	if (*prog < 0)
		return -1;
	link = xdp_link(*prog, ifindex);
	if (link < 0) {
		perror("flood: attaching the drop program");
		close(*prog);
		*prog = -1;
	}
	return link;
}

/* flood inject: the frames received on ifindex, judged by the XDP program
 * prog (an id; "drop": "return XDP_DROP"; NULL: "return XDP_PASS", the stack gets
 * every frame as an skb). */
static int inject_loop(int ifindex, const char *prog, const void *frame, __u32 len,
		       double secs)
{
	struct bpf_insn ret[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned int prog_id = prog ? strtoul(prog, NULL, 10) : 0;
	union bpf_attr a;
	int fd, r, link = -1;

	if (prog && !strcmp(prog, "drop")) {
		/* attached to ifindex for the run, as a firewall's program is */
		link = attach_drop(ifindex, &fd);
		if (link < 0)
			return 1;
	} else if (prog_id) {
		memset(&a, 0, sizeof(a));
		a.prog_id = prog_id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			perror("flood inject: BPF_PROG_GET_FD_BY_ID");
	} else {
		fd = load_xdp(ret, 2);
	}
	if (fd < 0)
		return 1;
	r = live_loop(fd, ifindex, frame, len, secs, !prog);
	if (link >= 0)
		close(link);
	close(fd);
	return r;
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
	if ((!strcmp(argv[1], "raw") || !strcmp(argv[1], "xdp") || !strcmp(argv[1], "inject")) &&
	    (argc == 8 || (argc == 9 && !strcmp(argv[1], "inject")))) {
		static __u8 frame[ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + PAYLOAD];
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
					  .sll_ifindex = if_nametoindex(argv[2]), .sll_halen = 6 };
		int fd, one = 1;

		if (!ll.sll_ifindex || make_frame(frame, sizeof(frame), argv[3], argv[4], argv[5],
						  atoi(argv[6]), payload)) {
			fprintf(stderr, "flood %s: bad interface or address\n", argv[1]);
			return 1;
		}
		if (!strcmp(argv[1], "inject"))
			return inject_loop(ll.sll_ifindex, argc == 9 ? argv[8] : NULL, frame,
					   sizeof(frame), atof(argv[7]));
		if (!strcmp(argv[1], "xdp"))
			return xdp_loop(ll.sll_ifindex, frame, sizeof(frame), atof(argv[7]));
		fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (fd < 0) {
			perror("flood raw");
			return 1;
		}
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
		memcpy(ll.sll_addr, frame, 6);
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ frame, sizeof(frame) };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &ll, .msg_namelen = sizeof(ll),
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		return send_loop(fd, m, atof(argv[7]));
	}
	if (!strcmp(argv[1], "hold") && argc == 4) {
		int ifindex = if_nametoindex(argv[2]), prog, link;
		double secs = atof(argv[3]);
		struct timespec ts = { .tv_sec = (time_t)secs,
				       .tv_nsec = (long)((secs - (time_t)secs) * 1e9) };

		if (!ifindex) {
			fprintf(stderr, "flood hold: no interface %s\n", argv[2]);
			return 1;
		}
		link = attach_drop(ifindex, &prog);
		if (link < 0)
			return 1;
		printf("attached\n");
		fflush(stdout);
		nanosleep(&ts, NULL);
		close(link);
		close(prog);
		return 0;
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
