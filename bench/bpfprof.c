// SPDX-License-Identifier: GPL-2.0
/*
 * bpfprof: where a BPF program spends its time, by source line (issue 7). It
 * reads perf samples of JITed programs and maps each one to the line of C it
 * came from. It uses the kernel's jited line info of a loaded program
 * (bpf_prog_info: jited_ksyms, jited_func_lens, jited_line_info, line_info, BTF).
 * No PMU and no disassembler is needed: the timer-driven cpu-clock event
 * samples JITed code too, and perf names a sample "bpf_prog_TAG_FUNC+0xOFF".
 *
 *   perf record -e cpu-clock -a -o perf.data -- build/pktcost --sizes 2048 ...
 *   perf script -G -F ip,sym,symoff -i perf.data | build/bpfprof [-n 40] [PROG_ID]
 *
 * The offsets are taken in a loaded program with the same code: PROG_ID, or a
 * loaded program whose tag and name are those of a sampled main program (keep
 * one instance of the same build loaded in some namespace while this runs: a
 * program with the same tag has the same instructions, JITed the same way).
 * Output: samples per function, then the hottest lines (file line, share of the
 * program's samples, the source). A sample falls on the instruction after the
 * one that was running, so a line's cost can show on the line after it. A
 * subprogram shared by several programs (bpfipt_step in the XDP and tc
 * programs) is counted with the samples of all its copies.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#define MAX_FUNCS 64

struct sample {
	char tag[17];		/* of the symbol: the main program's or a subprogram's */
	char func[128];
	unsigned long off;
	long n;
};

struct line {
	const char *func;
	__u32 line;
	const char *src;
	long n;
};

struct prog {
	int fd;
	struct bpf_prog_info info;
	struct bpf_line_info *li;
	__u64 *jl, *ksyms;
	__u32 *flen;
	struct bpf_func_info *fi;
	const char *fname[MAX_FUNCS];
	struct btf *btf;
};

static struct sample *smp;
static size_t nsmp, capsmp;

static void die(const char *what)
{
	fprintf(stderr, "bpfprof: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "bpf_prog_<16 hex>_<func>+0x<off>", anywhere in the line */
static void read_samples(FILE *in)
{
	char buf[1024];

	while (fgets(buf, sizeof(buf), in)) {
		char *p = strstr(buf, "bpf_prog_"), *plus, *us;
		struct sample s = { .n = 1 };
		size_t i;

		if (!p || !(plus = strchr(p, '+')) || strlen(p) < 9 + 17)
			continue;
		p += 9;
		us = p + 16;
		if (*us != '_')
			continue;
		memcpy(s.tag, p, 16);
		*plus = 0;
		snprintf(s.func, sizeof(s.func), "%s", us + 1);
		s.off = strtoul(plus + 1, NULL, 16);
		for (i = 0; i < nsmp; i++)
			if (smp[i].off == s.off && !strcmp(smp[i].func, s.func) &&
			    !strcmp(smp[i].tag, s.tag))
				break;
		if (i < nsmp) {
			smp[i].n++;
			continue;
		}
		if (nsmp == capsmp) {
			capsmp = capsmp ? 2 * capsmp : 1024;
			smp = realloc(smp, capsmp * sizeof(*smp));
			if (!smp)
				die("realloc");
		}
		smp[nsmp++] = s;
	}
}

static void tag_hex(const __u8 *tag, char *out)
{
	for (int i = 0; i < 8; i++)
		sprintf(out + 2 * i, "%02x", tag[i]);
}

/* The info of program fd with its line info, function lengths and names. */
static int prog_load(int fd, struct prog *pg)
{
	struct bpf_prog_info in = { 0 };
	__u32 len = sizeof(in);

	memset(pg, 0, sizeof(*pg));
	pg->fd = fd;
	if (bpf_obj_get_info_by_fd(fd, &in, &len))
		return -1;
	if (!in.nr_jited_line_info || in.nr_jited_ksyms > MAX_FUNCS || !in.btf_id)
		return -1;
	pg->li = calloc(in.nr_line_info, sizeof(*pg->li));
	pg->jl = calloc(in.nr_jited_line_info, sizeof(*pg->jl));
	pg->ksyms = calloc(in.nr_jited_ksyms, sizeof(*pg->ksyms));
	pg->flen = calloc(in.nr_jited_func_lens, sizeof(*pg->flen));
	pg->fi = calloc(in.nr_func_info, sizeof(*pg->fi));
	if (!pg->li || !pg->jl || !pg->ksyms || !pg->flen || !pg->fi)
		die("calloc");
	pg->info = (struct bpf_prog_info){
		.nr_line_info = in.nr_line_info, .line_info_rec_size = sizeof(*pg->li),
		.line_info = (__u64)(unsigned long)pg->li,
		.nr_jited_line_info = in.nr_jited_line_info, .jited_line_info_rec_size = 8,
		.jited_line_info = (__u64)(unsigned long)pg->jl,
		.nr_jited_ksyms = in.nr_jited_ksyms, .jited_ksyms = (__u64)(unsigned long)pg->ksyms,
		.nr_jited_func_lens = in.nr_jited_func_lens,
		.jited_func_lens = (__u64)(unsigned long)pg->flen,
		.nr_func_info = in.nr_func_info, .func_info_rec_size = sizeof(*pg->fi),
		.func_info = (__u64)(unsigned long)pg->fi,
	};
	len = sizeof(pg->info);
	if (bpf_obj_get_info_by_fd(fd, &pg->info, &len))
		return -1;
	pg->info.id = in.id;
	memcpy(pg->info.tag, in.tag, sizeof(in.tag));
	memcpy(pg->info.name, in.name, sizeof(in.name));
	pg->info.btf_id = in.btf_id;
	pg->btf = btf__load_from_kernel_by_id(in.btf_id);
	if (!pg->btf)
		return -1;
	for (__u32 i = 0; i < pg->info.nr_func_info && i < MAX_FUNCS; i++) {
		const struct btf_type *t = btf__type_by_id(pg->btf, pg->fi[i].type_id);

		pg->fname[i] = t ? btf__name_by_offset(pg->btf, t->name_off) : "?";
	}
	return 0;
}

/* A loaded program whose tag and name are those of the most sampled symbol
 * that names a main program. The kernel names it with the whole program's tag
 * (/proc/kallsyms), perf with its main function's (bpf_prog_info.prog_tags[0])
 * when the program was loaded before the recording began: either matches. */
static int find_prog(void)
{
	long best = 0;
	int fd = -1;

	for (__u32 id = 0; !bpf_prog_get_next_id(id, &id);) {
		struct bpf_prog_info in = { 0 };
		__u8 ftags[MAX_FUNCS][BPF_TAG_SIZE];
		__u32 len = sizeof(in);
		char tag[17], ftag[17] = "";
		long n = 0;
		int f = bpf_prog_get_fd_by_id(id);

		if (f < 0)
			continue;
		if (bpf_obj_get_info_by_fd(f, &in, &len)) {
			close(f);
			continue;
		}
		tag_hex(in.tag, tag);
		if (in.nr_prog_tags && in.nr_prog_tags <= MAX_FUNCS) {
			struct bpf_prog_info t = { .nr_prog_tags = in.nr_prog_tags,
						   .prog_tags = (__u64)(unsigned long)ftags };

			len = sizeof(t);
			if (!bpf_obj_get_info_by_fd(f, &t, &len))
				tag_hex(ftags[0], ftag);
		}
		for (size_t i = 0; i < nsmp; i++)
			if ((!strcmp(smp[i].tag, tag) || !strcmp(smp[i].tag, ftag)) &&
			    !strncmp(smp[i].func, in.name, sizeof(in.name) - 1))
				n += smp[i].n;
		if (n > best) {
			if (fd >= 0)
				close(fd);
			fd = f;
			best = n;
		} else {
			close(f);
		}
	}
	return fd;
}

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return (y->n > x->n) - (y->n < x->n);
}

int main(int argc, char **argv)
{
	struct line *lines = NULL;
	size_t nlines = 0;
	long total = 0, nf[MAX_FUNCS] = { 0 }, unmapped = 0;
	unsigned int top = 40;
	struct prog pg;
	int c, fd;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			fprintf(stderr, "usage: perf script -G -F ip,sym,symoff | bpfprof [-n LINES] "
				"[PROG_ID]\n");
			return 2;
		}
		top = strtoul(optarg, NULL, 10);
	}
	read_samples(stdin);
	fd = optind < argc ? bpf_prog_get_fd_by_id(strtoul(argv[optind], NULL, 10)) : find_prog();
	if (fd < 0) {
		fprintf(stderr, "bpfprof: no loaded program with the samples' tag and name "
			"(load one of the same build, or name one: bpfprof PROG_ID)\n");
		return 1;
	}
	if (prog_load(fd, &pg))
		die("the program's line info");
	lines = calloc(pg.info.nr_jited_line_info, sizeof(*lines));
	if (!lines)
		die("calloc");
	for (size_t i = 0; i < nsmp; i++) {
		const struct sample *s = &smp[i];
		__u32 f, k, best = ~0u;
		__u64 a;

		for (f = 0; f < pg.info.nr_func_info && f < MAX_FUNCS; f++)
			if (!strcmp(pg.fname[f], s->func))
				break;
		if (f == pg.info.nr_func_info || f == MAX_FUNCS)
			continue;	/* another program's, or a helper's */
		total += s->n;
		nf[f] += s->n;
		a = pg.ksyms[f] + s->off;
		for (k = 0; k < pg.info.nr_jited_line_info; k++)
			if (pg.jl[k] >= pg.ksyms[f] && pg.jl[k] <= a &&
			    pg.jl[k] < pg.ksyms[f] + pg.flen[f] &&
			    (best == ~0u || pg.jl[k] >= pg.jl[best]))
				best = k;
		if (best == ~0u) {
			unmapped += s->n;
			continue;
		}
		for (k = 0; k < nlines; k++)
			if (lines[k].func == pg.fname[f] &&
			    lines[k].line == BPF_LINE_INFO_LINE_NUM(pg.li[best].line_col))
				break;
		if (k == nlines) {
			const char *src = btf__name_by_offset(pg.btf, pg.li[best].line_off);

			while (src && (*src == ' ' || *src == '\t'))
				src++;
			lines[nlines++] = (struct line){ pg.fname[f],
				BPF_LINE_INFO_LINE_NUM(pg.li[best].line_col), src ? src : "", 0 };
		}
		lines[k].n += s->n;
	}
	if (!total) {
		fprintf(stderr, "bpfprof: no sample in %s's functions\n", pg.info.name);
		return 1;
	}
	printf("program %s (id %u): %ld samples in its functions\n", pg.info.name, pg.info.id,
	       total);
	for (__u32 f = 0; f < pg.info.nr_func_info && f < MAX_FUNCS; f++)
		if (nf[f])
			printf("  %6.1f%%  %s\n", 100.0 * nf[f] / total, pg.fname[f]);
	qsort(lines, nlines, sizeof(*lines), line_cmp);
	printf("hottest lines:\n");
	for (size_t k = 0; k < nlines && k < top; k++)
		printf("  %6.1f%%  %-18.18s %5u  %.110s\n", 100.0 * lines[k].n / total,
		       lines[k].func, lines[k].line, lines[k].src);
	if (unmapped)
		printf("  %6.1f%%  (no line)\n", 100.0 * unmapped / total);
	return 0;
}
