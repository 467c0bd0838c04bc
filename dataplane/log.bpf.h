/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -j LOG in the data plane (bpfipt.h, "-j LOG"). Included by bpfipt.bpf.c.
 *
 * The walk (bpfipt_step, a global function) cannot read the packet: it has no
 * context. It only notes the LOG slots it passes, in order; the program, once
 * the chain is decided and before a REJECT rewrites the packet, turns each note
 * into a ring-buffer event with the packet's headers. LOG does not change the
 * verdict, so writing the events after the walk shows the reader exactly what
 * the kernel's LOG would have seen at that rule (the data plane never modifies
 * a packet it judges). The line itself is formatted in userspace
 * (controlplane/logfmt.c): the kernel's format, the interfaces' names, no
 * string work in the data path.
 */
#ifndef BPFIPT_LOG_BPF_H
#define BPFIPT_LOG_BPF_H

/* The ring buffer sits in slot 0 of bpfipt_log_slot: the loader makes it
 * (bpfipt_log, BPFIPT_LOG_RING bytes) with the first ruleset that logs, so a
 * namespace whose rules never do holds none; until then log_emit() finds none
 * and has nothing to write. */
LAZY(bpfipt_log_slot, struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BPFIPT_LOG_RING);	/* a ring's size is its own */
});

#ifndef BPFIPT_MAPS_ONLY	/* the maps' object (bpfipt.bpf.c) ends here */

/* --log-uid: the kernel prints the credentials of the file of the packet's
 * socket (nf_log_dump_sk_uid_gid: sk->sk_socket->file->f_cred, fsuid/fsgid),
 * and nothing for sockets without a file (the kernel's own, e.g. the one that
 * answers pings). No helper gives them: the skb's kernel view
 * (bpf_cast_to_kern_ctx) and CO-RE reads of these few fields do. Only the
 * fields read are declared; libbpf relocates their offsets against the running
 * kernel's BTF. */
struct kuid___log { __u32 val; } __attribute__((preserve_access_index));
struct cred___log {
	struct kuid___log fsuid, fsgid;
} __attribute__((preserve_access_index));
struct file___log {
	const struct cred___log *f_cred;
} __attribute__((preserve_access_index));
struct socket___log {
	struct file___log *file;
} __attribute__((preserve_access_index));
struct sock___log {
	struct socket___log *sk_socket;
} __attribute__((preserve_access_index));
struct sk_buff___log {
	struct sock___log *sk;
} __attribute__((preserve_access_index));

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* id = { uid, gid } of a full socket's file: 0, or -1 without a file. */
static __always_inline int log_sock_ids(struct __sk_buff *skb, __u32 id[2])
{
	struct sk_buff___log *k = bpf_cast_to_kern_ctx(skb);
	struct socket___log *so;
	struct file___log *f;
	const struct cred___log *c;
	struct sock___log *sk;

	sk = k->sk;
	if (!sk)
		return -1;
	so = sk->sk_socket;
	if (!so)
		return -1;
	f = so->file;
	if (!f)
		return -1;
	c = f->f_cred;
	if (!c)
		return -1;
	id[0] = c->fsuid.val;
	id[1] = c->fsgid.val;
	return 0;
}

/* In the walk: remember LOG slot sl for the program to report. */
static __always_inline void log_note(struct scratch *sc, const struct bpfipt_slot *sl)
{
	__u32 n = sc->nlog;

	if (n >= BPFIPT_LOG_PENDING || sl->extra == BPFIPT_NO_EXTRA) {
		stat_inc(BPFIPT_ST_LOG_LOST);
		return;
	}
	sc->log_extra[n & (BPFIPT_LOG_PENDING - 1)] = sl->extra;
	sc->nlog = n + 1;
}

/* The packet's bytes into an event: the helper of the program type. `xdp` is
 * a constant at every call site, so each program keeps only its own helper
 * (the verifier refuses the other one even in dead code). */
#define LOG_LOAD(xdp, ctx, off, to, len)					\
	((xdp) ? bpf_xdp_load_bytes((ctx), (off), (to), (len))			\
	       : bpf_skb_load_bytes((ctx), (off), (to), (len)))

/* After the walk: one event per noted LOG slot. l2: bytes before the IP
 * header; plen: bytes from the IP header to the end; maclen: link-layer header
 * bytes to show (14 for an Ethernet-like input device, 0 otherwise). */
static __always_inline void log_emit(void *ctx, struct scratch *sc, bool xdp, __u32 l2,
				     __u32 plen, __u32 maclen, __u32 mark, __u32 uid,
				     __u32 gid, bool has_uid)
{
	__u32 i, n = sc->nlog, cur = sc->cur, caplen, zero = 0;
	__u64 c;
	struct bpfipt_log_event *ev;
	struct bpfipt_extra *e;
	void *extras, *ring;

	if (!FEAT(BPFIPT_FEAT_LOG) || !n)
		return;
	extras = bpf_map_lookup_elem(&bpfipt_extras, &cur);
	if (!extras)
		return;
	caplen = plen < BPFIPT_LOG_CAP ? plen : BPFIPT_LOG_CAP - 1;
	for (i = 0; i < BPFIPT_LOG_PENDING; i++) {
		if (i >= n)
			break;
		e = bpf_map_lookup_elem(extras, &sc->log_extra[i]);
		if (!e)
			break;
		/* looked up here, not kept across the loop: fewer states */
		ring = bpf_map_lookup_elem(&bpfipt_log_slot, &zero);
		if (!ring)
			break;
		ev = bpf_ringbuf_reserve(ring, sizeof(*ev), 0);
		if (!ev) {
			stat_inc(BPFIPT_ST_LOG_LOST);
			continue;
		}
		ev->ts = bpf_ktime_get_boot_ns();
		ev->iif = sc->p.iif;
		ev->oif = sc->p.oif;
		ev->mark = mark;
		ev->uid = uid;
		ev->gid = gid;
		ev->has_uid = has_uid;
		ev->pad = 0;
		ev->len = plen;
		ev->chain = sc->chain;
		ev->level = e->log_level;
		ev->flags = e->log_flags;
		__builtin_memcpy(ev->prefix, e->log_prefix, sizeof(ev->prefix));
		ev->maclen = 0;
		if (maclen == sizeof(ev->mac) &&
		    !LOG_LOAD(xdp, ctx, 0, ev->mac, sizeof(ev->mac)))
			ev->maclen = sizeof(ev->mac);
		/* the verifier wants the length's bounds in the register passed to
		 * the helper: the mask is done in asm, where clang cannot move it
		 * away from the call (caplen <= BPFIPT_LOG_CAP - 1 already) */
		c = caplen;
		asm volatile("%[c] &= %[m]" : [c] "+r"(c) : [m] "i"(BPFIPT_LOG_CAP - 1));
		ev->caplen = 0;
		if (c > 0 && !LOG_LOAD(xdp, ctx, l2, ev->pkt, c))
			ev->caplen = c;
		bpf_ringbuf_submit(ev, 0);
		stat_inc(BPFIPT_ST_LOG_SENT);
	}
}

#endif /* BPFIPT_MAPS_ONLY */

#endif
