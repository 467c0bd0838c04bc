/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iptables command line. Tokens are option occurrences (the driver in
 * cmd.c applies getopt_long's argument rules); the grammar gives commands
 * their positional words (-I chain [rulenum], -L [chain [rulenum]], ...),
 * options their values, '!' its option, and rejects stray words.
 */
%define api.pure full
%define api.prefix {cmdgram_}
%define parse.error verbose
%locations
%parse-param { struct cmd_parse *ps }
%lex-param { struct cmd_parse *ps }

%code requires {
#include "cmd_internal.h"
}
%define api.value.type {struct cmd_tok}
%expect 3

%code {
static int cmdgram_lex(CMDGRAM_STYPE *lval, CMDGRAM_LTYPE *lloc, struct cmd_parse *ps)
{
	int t = cmd_lex(lval, ps);

	lloc->first_line = lloc->last_line = 1;
	lloc->first_column = lloc->last_column = lval->argi;
	return t;
}

static void cmdgram_error(CMDGRAM_LTYPE *lloc, struct cmd_parse *ps, const char *msg)
{
	(void)lloc;
	(void)msg;
	/* Every syntax error of this grammar is a word where none may stand. */
	if (!ps->err->code)
		ipt_err_set(ps->err, IPT_EXIT_PARAM, IPT_ES_XT, "syntax error");
}

#define MAXPOS 2
}

%token TOK_CMD		"command"
%token TOK_CMD_POS	"command taking positional words"
%token TOK_OPT		"option"
%token TOK_OPT_POS	"option taking positional words"
%token TOK_EXT		"extension option"
%token TOK_BANG		"!"
%token TOK_WORD		"word"
%token TOK_STRAY	"stray word"
%token TOK_FAIL		"invalid option"

%%

line
	: items
	;

items
	: %empty
	| items item
	;

item
	: TOK_CMD
		{ if (cmd_command(ps, &$1, NULL, 0)) YYABORT; }
	| TOK_CMD_POS
		{ if (cmd_command(ps, &$1, NULL, 0)) YYABORT; }
	| TOK_CMD_POS TOK_WORD
		{ struct cmd_tok p[1] = { $2 };
		  if (cmd_command(ps, &$1, p, 1)) YYABORT; }
	| TOK_CMD_POS TOK_WORD TOK_WORD
		{ struct cmd_tok p[2] = { $2, $3 };
		  if (cmd_command(ps, &$1, p, 2)) YYABORT; }
	| TOK_OPT
		{ if (cmd_option(ps, &$1, NULL, 0)) YYABORT; }
	| TOK_OPT_POS
		{ if (cmd_option(ps, &$1, NULL, 0)) YYABORT; }
	| TOK_OPT_POS TOK_WORD
		{ struct cmd_tok p[1] = { $2 };
		  if (cmd_option(ps, &$1, p, 1)) YYABORT; }
	| TOK_EXT
		{ if (cmd_ext_option(ps, &$1)) YYABORT; }
	| TOK_BANG
		{ if (cmd_bang(ps, &$1)) YYABORT; }
	| TOK_WORD
		{ if (cmd_bad_argument(ps, &$1)) YYABORT; }
	| TOK_STRAY
		{ if (cmd_bad_argument(ps, &$1)) YYABORT; }
	| TOK_FAIL
		{ YYABORT; }
	;
%%
