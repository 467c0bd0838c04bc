/* SPDX-License-Identifier: GPL-2.0 */
/* Word classes of the command line, as getopt_long tells them apart (cmd.c). */
#ifndef BPFIPT_CMDWORD_H
#define BPFIPT_CMDWORD_H

enum cmd_word {
	W_EMPTY = 1,	/* "" */
	W_BANG,		/* "!" */
	W_DASHDASH,	/* "--": end of options */
	W_LONG,		/* "--name" */
	W_LONG_EQ,	/* "--name=value" */
	W_SHORT,	/* "-x..." (a cluster of short options) */
	W_WORD,		/* anything else, "-" included */
};

enum cmd_word cmd_word_class(const char *w);

#endif
